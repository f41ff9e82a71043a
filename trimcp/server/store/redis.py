"""The Redis store: a server's shared state for replicas on many machines (``trimcp[redis]``).

Theory of operation
-------------------
The store interface (``base``) over one Redis server (not a cluster: the
scripts touch keys they compute), through ``coredis``, an asynchronous
Redis client built on anyio and so at home under Trio (redis-py's client
runs on asyncio only).  Every decision that reads and then writes - the
session cap, an event appended within the log's caps, a stream taken over, a
task's status move - is one Lua script, which Redis runs atomically: however
many replicas ask at once, each sees the state the previous one left.  A
task's move is decided in Python (``task_table``'s functions) and written by
a compare-and-set script that fails, and is retried, if the record changed
since it was read.

Keys, under the ``prefix`` option (``trimcp``), spelled in ``_Keys`` and in
the scripts' ``key()``:

=================================  ==============================================
``P:sessions``                     sorted set: session id by last activity
``P:session:ID``                   the session record (JSON)
``P:subs:URI``                     set: the sessions subscribed to a resource
``P:streams:ID``                   set: the session's stream keys
``P:meta:ID:KEY``                  hash: the stream's meta, numbering, caps state
``P:log:ID:KEY``                   sorted set: the events by number ("N:payload")
``P:hold:ID:KEY``                  the connection reading the stream, until when
``P:task:ID``                      a task record (JSON)
``P:tasks``, ``P:tasks:done``,     sorted sets: every task, the terminal ones (by
``P:tasks:exp``                    last update), their expiry times
``P:replica:ID``                   a replica's lease: the time it runs out
``P:bus``                          the publish/subscribe channel
=================================  ==============================================

Times are read from ``clock`` (wall-clock by default) and compared by the
scripts; Redis's own key expiry only collects garbage (a lease key lives
three leases, a finished stream ``finished_ttl`` seconds).  Activity is
written every ``activity_interval`` seconds, one ``ZADD ... GT`` for all
sessions noted meanwhile.  The bus is Redis publish/subscribe on ``P:bus``:
one subscription per replica, delivered at most once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs
import trio

from ..._sansio.store import bus
from ..._sansio.store.location import StoreLocation
from ..._sansio.store.records import SessionRecord
from ..._sansio.store.sessions import EVICTION_SCAN, Admission, choose_eviction
from ..._sansio.store.stream_log import LogSlice, StreamMeta, orphan_answers, takeover_seq
from ..._sansio.task_table import TaskRecord, TaskStateError
from .base import EventBatch, Store, StoreError, logger

if TYPE_CHECKING:
    import coredis

__all__ = ["RedisStore"]

T = TypeVar("T")
#: Attempts of a task move before giving up (each lost only to a concurrent move).
_CAS_ATTEMPTS: Final = 32

# Lua helpers every script shares: key names, and dropping a session whole.
_LUA_COMMON: Final = """
local P = ARGV[1]
local function key(...) return P .. ':' .. table.concat({...}, ':') end
local function drop_session(sid)
  local rec = redis.call('GET', key('session', sid))
  if rec then
    for _, uri in ipairs(cjson.decode(rec)['subs']) do redis.call('SREM', key('subs', uri), sid) end
  end
  redis.call('DEL', key('session', sid))
  local gone = redis.call('ZREM', key('sessions'), sid)
  for _, k in ipairs(redis.call('SMEMBERS', key('streams', sid))) do
    redis.call('DEL', key('meta', sid, k), key('log', sid, k), key('hold', sid, k))
  end
  redis.call('DEL', key('streams', sid))
  return gone
end
local function put_subs(sid, rec)
  for _, uri in ipairs(cjson.decode(rec)['subs']) do redis.call('SADD', key('subs', uri), sid) end
end
"""

# ARGV: prefix, max (-1: none), victim ('' none), now, sid, record
_ADD_SESSION: Final = (
    _LUA_COMMON
    + """
local max, victim, now, sid, rec = tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local evicted = ''
if max >= 0 and redis.call('ZCARD', key('sessions')) >= max then
  if victim == '' or drop_session(victim) == 0 then return {0, ''} end
  evicted = victim
end
redis.call('ZADD', key('sessions'), now, sid)
redis.call('SET', key('session', sid), rec)
put_subs(sid, rec)
return {1, evicted}
"""
)

# ARGV: prefix, sid, record
_SAVE_SESSION: Final = (
    _LUA_COMMON
    + """
local sid, rec = ARGV[2], ARGV[3]
local old = redis.call('GET', key('session', sid))
if not old then return 0 end
for _, uri in ipairs(cjson.decode(old)['subs']) do redis.call('SREM', key('subs', uri), sid) end
redis.call('SET', key('session', sid), rec)
put_subs(sid, rec)
return 1
"""
)

# ARGV: prefix, sid
_END_SESSION: Final = _LUA_COMMON + "return drop_session(ARGV[2])\n"

# ARGV: prefix, cutoff, now, n_busy, busy..., candidates...
_EXPIRE: Final = (
    _LUA_COMMON
    + """
local cutoff, now, nbusy = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
for i = 5, 4 + nbusy do redis.call('ZADD', key('sessions'), 'XX', now, ARGV[i]) end
local gone = {}
for i = 5 + nbusy, #ARGV do
  local score = redis.call('ZSCORE', key('sessions'), ARGV[i])
  if score and tonumber(score) < cutoff then
    drop_session(ARGV[i])
    table.insert(gone, ARGV[i])
  end
end
return gone
"""
)

# ARGV: prefix, sid, key, meta, finished, max_events, max_bytes, finished_ttl_ms, expect_last ('' any),
#       then seq ('' next), payload pairs.  Returns {last, watched}; last -1: expect_last differed.
_APPEND: Final = (
    _LUA_COMMON
    + """
local sid, k, finished = ARGV[2], ARGV[3], ARGV[5] == '1'
local max_events, max_bytes, ttl = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local mk, lk = key('meta', sid, k), key('log', sid, k)
if redis.call('EXISTS', mk) == 0 then
  redis.call('HSET', mk, 'meta', ARGV[4], 'last', 0, 'lost', 0, 'bytes', 0, 'count', 0)
  redis.call('SADD', key('streams', sid), k)
end
local m = redis.call('HGET', mk, 'meta')
local meta = cjson.decode(m)
local last = tonumber(redis.call('HGET', mk, 'last'))
local watched = redis.call('EXISTS', key('hold', sid, k))
if ARGV[9] ~= '' and tonumber(ARGV[9]) ~= last then return {-1, watched} end
if meta['done'] then return {last, watched} end
local lost = tonumber(redis.call('HGET', mk, 'lost'))
local size = tonumber(redis.call('HGET', mk, 'bytes'))
local count = tonumber(redis.call('HGET', mk, 'count'))
for i = 10, #ARGV, 2 do
  local seq = ARGV[i]
  local take = true
  if seq == '' then seq = last + 1 else
    seq = tonumber(seq)
    if seq <= last then take = false elseif seq > last + 1 then lost = math.max(lost, seq - 1) end
  end
  if take then
    last = seq
    redis.call('ZADD', lk, seq, seq .. ':' .. ARGV[i + 1])
    size = size + #ARGV[i + 1]
    count = count + 1
  end
end
while count > 1 and (count > max_events or size > max_bytes) do
  local popped = redis.call('ZPOPMIN', lk)
  local member, seq = popped[1], tonumber(popped[2])
  lost = math.max(lost, seq)
  size = size - (#member - #tostring(seq) - 1)
  count = count - 1
end
if finished then
  meta['done'] = true
  m = cjson.encode(meta)
  redis.call('PEXPIRE', mk, ttl)
  redis.call('PEXPIRE', lk, ttl)
end
redis.call('HSET', mk, 'meta', m, 'last', last, 'lost', lost, 'bytes', size, 'count', count)
return {last, watched}
"""
)

# ARGV: prefix, sid, key, holder, now, until, force
_HOLD: Final = (
    _LUA_COMMON
    + """
local hk = key('hold', ARGV[2], ARGV[3])
local cur = redis.call('GET', hk)
if cur and ARGV[7] ~= '1' then
  local sep = string.find(cur, '|', 1, true)
  local who, till = string.sub(cur, 1, sep - 1), tonumber(string.sub(cur, sep + 1))
  if who ~= ARGV[4] and till > tonumber(ARGV[5]) then return 0 end
end
redis.call('SET', hk, ARGV[4] .. '|' .. ARGV[6], 'PX', math.max(1000, math.floor((tonumber(ARGV[6]) - tonumber(ARGV[5])) * 3000)))
redis.call('SADD', key('streams', ARGV[2]), ARGV[3])
return 1
"""
)

# ARGV: prefix, id, record, now, max, updated, terminal, expires ('' none)
_CREATE_TASK: Final = (
    _LUA_COMMON
    + """
local id, rec, now, max = ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
if redis.call('EXISTS', key('task', id)) == 1 then return 'taken' end
for _, old in ipairs(redis.call('ZRANGEBYSCORE', key('tasks:exp'), '-inf', '(' .. now)) do
  redis.call('DEL', key('task', old))
  redis.call('ZREM', key('tasks'), old)
  redis.call('ZREM', key('tasks:done'), old)
  redis.call('ZREM', key('tasks:exp'), old)
end
if redis.call('ZCARD', key('tasks')) >= max then
  local oldest = redis.call('ZRANGE', key('tasks:done'), 0, 0)[1]
  if not oldest then return 'full' end
  redis.call('DEL', key('task', oldest))
  redis.call('ZREM', key('tasks'), oldest)
  redis.call('ZREM', key('tasks:done'), oldest)
  redis.call('ZREM', key('tasks:exp'), oldest)
end
redis.call('SET', key('task', id), rec)
redis.call('ZADD', key('tasks'), ARGV[6], id)
if ARGV[7] == '1' then redis.call('ZADD', key('tasks:done'), ARGV[6], id) end
if ARGV[8] ~= '' then redis.call('ZADD', key('tasks:exp'), ARGV[8], id) end
return 'ok'
"""
)

# ARGV: prefix, id, old record, new record, updated, terminal, expires ('' none)
_PUT_TASK: Final = (
    _LUA_COMMON
    + """
local id = ARGV[2]
if redis.call('GET', key('task', id)) ~= ARGV[3] then return 0 end
redis.call('SET', key('task', id), ARGV[4])
redis.call('ZADD', key('tasks'), ARGV[5], id)
if ARGV[6] == '1' then redis.call('ZADD', key('tasks:done'), ARGV[5], id) end
if ARGV[7] ~= '' then redis.call('ZADD', key('tasks:exp'), ARGV[7], id) end
return 1
"""
)

# ARGV: prefix, id (an expired task: gone)
_DROP_TASK: Final = (
    _LUA_COMMON
    + """
local id = ARGV[2]
redis.call('DEL', key('task', id))
redis.call('ZREM', key('tasks'), id)
redis.call('ZREM', key('tasks:done'), id)
redis.call('ZREM', key('tasks:exp'), id)
return 1
"""
)


@attrs.frozen
class _Keys:
    """Key names the Python side reads directly (the scripts spell them with ``key()``)."""

    prefix: str

    def sessions(self) -> str:
        return f"{self.prefix}:sessions"

    def session(self, session_id: str) -> str:
        return f"{self.prefix}:session:{session_id}"

    def meta(self, session_id: str, key: str) -> str:
        return f"{self.prefix}:meta:{session_id}:{key}"

    def log(self, session_id: str, key: str) -> str:
        return f"{self.prefix}:log:{session_id}:{key}"

    def hold(self, session_id: str, key: str) -> str:
        return f"{self.prefix}:hold:{session_id}:{key}"

    def subs(self, uri: str) -> str:
        return f"{self.prefix}:subs:{uri}"

    def task(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    def replica(self, replica_id: str) -> str:
        return f"{self.prefix}:replica:{replica_id}"

    def bus(self) -> str:
        return f"{self.prefix}:bus"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisStore(Store):
    """A server's shared state in Redis."""

    shared = True

    def __init__(
        self,
        location: StoreLocation,
        *,
        clock: Callable[[], float] | None = None,
        replica_id: str | None = None,
        activity_interval: float = 1.0,
        finished_ttl: float = 300.0,
        **limits: int,
    ) -> None:
        super().__init__(location=location, clock=clock or time.time, replica_id=replica_id, **limits)
        self.keys = _Keys(location.prefix)
        self.activity_interval = activity_interval
        self.finished_ttl = finished_ttl
        self._client: coredis.Redis[bytes] | None = None
        self._activity: dict[str, float] = {}
        self._scripts: dict[str, Any] = {}
        self._background: trio.CancelScope | None = None
        self._connection_scope: trio.CancelScope | None = None
        self._stopped = trio.Event()
        #: ``coredis.PureToken`` (the module is imported when the store opens: an optional extra).
        self._token: Any = None

    # ------------------------------------------------------------ connecting

    @property
    def client(self) -> coredis.Redis[bytes]:
        if self._client is None:
            raise StoreError(f"{self!r} is not running (use `async with store.running():`)")
        return self._client

    async def _open(self, nursery: trio.Nursery) -> None:
        try:
            import coredis
        except ImportError:
            raise StoreError("the Redis store needs coredis: pip install 'trimcp[redis]'") from None
        self._token = coredis.PureToken
        loc = self.location
        client: coredis.Redis[bytes] = coredis.Redis(
            host=loc.host,
            port=loc.port,
            db=loc.db,
            username=loc.username,
            password=loc.password,
            decode_responses=False,
            connect_timeout=5.0,
        )
        self._scripts = {
            name: client.register_script(source)
            for name, source in (
                ("add_session", _ADD_SESSION),
                ("save_session", _SAVE_SESSION),
                ("end_session", _END_SESSION),
                ("expire", _EXPIRE),
                ("append", _APPEND),
                ("hold", _HOLD),
                ("create_task", _CREATE_TASK),
                ("put_task", _PUT_TASK),
                ("drop_task", _DROP_TASK),
            )
        }
        try:
            await nursery.start(self._run_connected, client)
        except Exception as exc:
            leaf: BaseException = exc
            while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
                leaf = leaf.exceptions[0]
            raise StoreError(f"Redis store {loc.describe()}: {type(leaf).__name__}: {leaf}") from exc

    async def _run_connected(
        self, client: coredis.Redis[bytes], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        # coredis clients and subscriptions are async context managers owning tasks of their
        # own: held open here, nested, so that they close in order when the store stops.
        # Shielded: the store stops it in order (``_close``), never by an outer cancellation
        # (coredis's subscription cleans up over its connection, which must still be there).
        try:
            with trio.CancelScope(shield=True) as self._connection_scope:
                await self._connected(client, task_status)
        finally:
            self._client = None
            self._stopped.set()

    async def _connected(self, client: coredis.Redis[bytes], task_status: trio.TaskStatus[None]) -> None:
        async with client:
            await client.ping()
            self._client = client
            await self._beat()
            channel = self.keys.bus()
            async with client.pubsub(channels=[channel], ignore_subscribe_messages=True) as pubsub:
                async with trio.open_nursery() as nursery:
                    self._background = nursery.cancel_scope
                    nursery.start_soon(self._renew_lease)
                    nursery.start_soon(self._flush_activity_loop)
                    nursery.start_soon(self._listen, pubsub)
                    task_status.started()
            try:
                await self._flush_activity()
                # A clean stop ends the lease at once: this process runs nothing any more.
                await self._do(self.client.delete([self.keys.replica(self.replica_id)]))
            except StoreError as exc:
                logger.warning("could not record session activity: %s", exc)

    async def _close(self) -> None:
        if self._background is not None:
            self._background.cancel()
        with trio.move_on_after(3):
            await self._stopped.wait()
        if not self._stopped.is_set() and self._connection_scope is not None:
            self._connection_scope.cancel()

    async def _call(self, name: str, args: Sequence[Any]) -> Any:
        try:
            return await self._scripts[name](keys=[], args=[self.keys.prefix, *args], client=self.client)
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"Redis store {self.location.describe()}: {type(exc).__name__}: {exc}") from exc

    async def _do(self, command: Any) -> Any:
        try:
            return await command
        except Exception as exc:
            raise StoreError(f"Redis store {self.location.describe()}: {type(exc).__name__}: {exc}") from exc

    # ------------------------------------------------------------ leases

    async def _beat(self) -> None:
        until = self.clock() + self.lease
        px = int(self.lease * 3000)
        await self._do(self.client.set(self.keys.replica(self.replica_id), repr(until), px=px))

    async def replica_alive(self, replica_id: str) -> bool:
        value = await self._do(self.client.get(self.keys.replica(replica_id)))
        return value is not None and float(value) > self.clock()

    # ------------------------------------------------------------ sessions

    async def add_session(
        self, record: SessionRecord, *, max_sessions: int | None, busy: Callable[[str], bool]
    ) -> Admission:
        await self._flush_activity()  # the cap reads activity: what was noted counts
        victim = ""
        passed: tuple[str, ...] = ()
        if max_sessions is not None and await self.count_sessions() >= max_sessions:
            oldest = await self._do(self.client.zrange(self.keys.sessions(), 0, EVICTION_SCAN - 1))
            choice = choose_eviction([_text(s) for s in oldest], busy)
            victim, passed = choice.victim or "", choice.passed_over
        now = self.clock()
        for session_id in passed:
            self._activity[session_id] = now
        limit = -1 if max_sessions is None else max_sessions
        admitted, evicted = await self._call(
            "add_session", [limit, victim, repr(now), record.session_id, record.to_json()]
        )
        return Admission(bool(admitted), _text(evicted) or None)

    async def load_session(self, session_id: str) -> SessionRecord | None:
        async with self.client.pipeline(transaction=False) as pipe:
            got = pipe.get(self.keys.session(session_id))
            score = pipe.zscore(self.keys.sessions(), session_id)
        text, active = await self._do(got), await self._do(score)
        if text is None:
            return None
        record = SessionRecord.from_json(text)
        last = max(float(active or 0.0), self._activity.get(session_id, 0.0))
        return attrs.evolve(record, last_active=last)

    async def save_session(self, record: SessionRecord) -> bool:
        return bool(await self._call("save_session", [record.session_id, record.to_json()]))

    def note_activity(self, session_id: str) -> None:
        self._activity[session_id] = self.clock()

    async def _flush_activity(self) -> None:
        pending, self._activity = self._activity, {}
        if pending:
            scores: dict[str | bytes, int | float] = {k: v for k, v in pending.items()}
            await self._do(
                self.client.zadd(self.keys.sessions(), scores, condition=self._token.XX, comparison=self._token.GT)
            )

    async def _flush_activity_loop(self) -> None:
        while True:
            await trio.sleep(self.activity_interval)
            try:
                await self._flush_activity()
            except StoreError as exc:
                logger.warning("could not record session activity: %s", exc)

    async def end_session(self, session_id: str) -> bool:
        self._activity.pop(session_id, None)
        return bool(await self._call("end_session", [session_id]))

    async def expire_sessions(self, timeout: float, busy: Callable[[str], bool]) -> list[str]:
        await self._flush_activity()
        cutoff = self.clock() - timeout
        rows = await self._do(
            self.client.zrange(
                self.keys.sessions(), "-inf", f"({cutoff!r}", sortby=self._token.BYSCORE, offset=0, count=1000
            )
        )
        candidates = [_text(s) for s in rows]
        busy_ones = [s for s in candidates if busy(s)]
        idle_ones = [s for s in candidates if s not in busy_ones]
        if not candidates:
            return []
        gone = await self._call("expire", [repr(cutoff), repr(self.clock()), len(busy_ones), *busy_ones, *idle_ones])
        return [_text(s) for s in gone]

    async def session_ids(self, *, subscribed_to: str | None = None) -> list[str]:
        if subscribed_to is None:
            ids = [_text(s) for s in await self._do(self.client.zrange(self.keys.sessions(), 0, -1))]
        else:
            ids = sorted(_text(s) for s in await self._do(self.client.smembers(self.keys.subs(subscribed_to))))
        if not ids:
            return []
        records = await self._do(self.client.mget([self.keys.session(s) for s in ids]))
        return [s for s, r in zip(ids, records) if r is not None and SessionRecord.from_json(r).operating]

    async def count_sessions(self) -> int:
        return int(await self._do(self.client.zcard(self.keys.sessions())))

    # ------------------------------------------------------------ stream logs

    def _append_args(self, batch: EventBatch, expect: int | None = None) -> list[Any]:
        args: list[Any] = [
            batch.session_id,
            batch.key,
            batch.meta.to_json(),
            "1" if batch.finished else "0",
            self.replay_events,
            self.replay_bytes,
            int(self.finished_ttl * 1000),
            "" if expect is None else expect,
        ]
        for seq, payload in batch.events:
            args += ["" if seq is None else seq, payload]
        return args

    async def append_events(self, batches: Sequence[EventBatch]) -> list[int]:
        if not batches:
            return []
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                pending = [
                    self._scripts["append"](keys=[], args=[self.keys.prefix, *self._append_args(b)], client=pipe)
                    for b in batches
                ]
            results = [await p for p in pending]
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"Redis store {self.location.describe()}: {type(exc).__name__}: {exc}") from exc
        lasts = []
        for batch, (last, watched) in zip(batches, results):
            lasts.append(int(last))
            if watched:
                await self.publish(bus.StreamAppended(batch.session_id, batch.key, int(last)))
        return lasts

    async def read_stream(self, session_id: str, key: str, after: int) -> LogSlice | None:
        async with self.client.pipeline(transaction=True) as pipe:
            meta = pipe.hmget(self.keys.meta(session_id, key), ["meta", "last", "lost"])
            events = pipe.zrange(self.keys.log(session_id, key), f"({after}", "+inf", sortby=self._token.BYSCORE)
        fields, members = await self._do(meta), await self._do(events)
        if fields[0] is None:
            return None
        held = []
        for member in members:
            seq, _, payload = bytes(member).partition(b":")
            held.append((int(seq), payload))
        return LogSlice(StreamMeta.from_json(fields[0]), tuple(held), int(fields[1]), after < int(fields[2]))

    async def take_over_stream(self, session_id: str, key: str, cursor: int) -> bool:
        for _ in range(_CAS_ATTEMPTS):
            log = await self.read_stream(session_id, key, 0)
            if log is None or log.meta.finished:
                return False
            answers = orphan_answers(log.meta.final_ids, (p for _, p in log.events))
            first = takeover_seq(log.last_seq, cursor)
            batch = EventBatch(
                session_id, key, log.meta, tuple((first + n, p) for n, p in enumerate(answers)), finished=True
            )
            last, _ = await self._call("append", self._append_args(batch, expect=log.last_seq))
            if int(last) != -1:
                await self.publish(bus.StreamAppended(session_id, key, int(last)))
                return True
        raise StoreError(f"stream {key} of session {session_id[:8]}... kept changing while being taken over")

    async def hold_stream(self, session_id: str, key: str, holder: str, *, force: bool) -> bool:
        now = self.clock()
        args = [session_id, key, holder, repr(now), repr(now + self.lease), "1" if force else "0"]
        return bool(await self._call("hold", args))

    async def stream_holder(self, session_id: str, key: str) -> str | None:
        value = await self._do(self.client.get(self.keys.hold(session_id, key)))
        if value is None:
            return None
        who, _, until = _text(value).partition("|")
        return who if float(until) > self.clock() else None

    # ------------------------------------------------------------ tasks

    @staticmethod
    def _task_args(record: TaskRecord) -> list[Any]:
        expires = record.expires_at()
        return [repr(record.updated_at), "1" if record.terminal else "0", "" if expires is None else repr(expires)]

    async def create_task(self, record: TaskRecord, now: float) -> None:
        text = json.dumps(record.to_store())
        outcome = _text(
            await self._call("create_task", [record.task_id, text, repr(now), self.max_tasks, *self._task_args(record)])
        )
        if outcome == "taken":
            raise TaskStateError(f"task id {record.task_id!r} is already in use")
        if outcome == "full":
            raise TaskStateError(f"too many tasks at once (at most {self.max_tasks})")

    async def _read_task(self, task_id: str, now: float) -> tuple[TaskRecord, bytes] | None:
        text = await self._do(self.client.get(self.keys.task(task_id)))
        if text is None:
            return None
        record = TaskRecord.from_store(json.loads(text))
        expires = record.expires_at()
        if expires is not None and expires < now:
            await self._call("drop_task", [task_id])
            return None
        return record, bytes(text)

    async def get_task(self, task_id: str, now: float) -> TaskRecord | None:
        found = await self._read_task(task_id, now)
        return found[0] if found is not None else None

    async def change_task(
        self, task_id: str, now: float, change: Callable[[TaskRecord], T]
    ) -> tuple[TaskRecord, T] | None:
        for _ in range(_CAS_ATTEMPTS):
            found = await self._read_task(task_id, now)
            if found is None:
                return None
            record, old = found
            value = change(record)
            new = json.dumps(record.to_store())
            if await self._call("put_task", [task_id, old, new, *self._task_args(record)]):
                return record, value
        raise StoreError(f"task {task_id} kept changing under {_CAS_ATTEMPTS} attempts to move it")

    # ------------------------------------------------------------ bus

    async def publish(self, message: bus.BusMessage) -> None:
        await self._do(self.client.publish(self.keys.bus(), bus.encode(message, self.replica_id)))

    async def _listen(self, pubsub: Any) -> None:
        async for message in pubsub:
            data = message.get("data")
            if isinstance(data, (bytes, str)):
                decoded = bus.decode(data)
                if decoded is not None:
                    self._dispatch(*decoded)
