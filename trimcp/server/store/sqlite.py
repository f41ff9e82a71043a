"""The SQLite store: one file, shared by the replicas of one machine, kept across restarts.

Theory of operation
-------------------
The store interface (``base``) over one SQLite database file (Python's
``sqlite3``), for a server that must survive a restart or runs as a few
processes on one machine.  SQLite calls block, so every one runs in a worker
thread (``trio.to_thread.run_sync``), one at a time per process (a
``CapacityLimiter`` of one guards the connection); the Trio loop never waits
on the disk.  The file is in WAL mode (readers do not block the writer) with
a busy timeout, and every decision that reads and then writes - the session
cap, an appended event and the log's caps, a task's status move - is one
``BEGIN IMMEDIATE`` transaction, so processes sharing the file agree.

Tables: ``sessions`` (the record, its activity, whether operating) and
``subscriptions`` (for ``resources/updated`` fan-out), ``streams`` and
``events`` (each stream's meta, numbering, caps and events), ``tasks``,
``replicas`` (leases: the time each runs out), and ``bus``: the
publish/subscribe channel is a table each process polls every
``bus_interval`` seconds for rows newer than the last it read (rows older
than a minute are pruned).

What a restart means, by kind: session records come back (a client's next
request continues its session on the new process), stream logs come back
(``Last-Event-ID`` replays them; a POST stream whose request was running in
the old process is taken over once that process's lease has lapsed, and
answered with an error), tasks come back (finished ones with their results;
running ones are ``failed`` once the old process's lease lapsed).
Activity is written every ``activity_interval`` seconds, not per request; a
finished stream's log is kept ``finished_ttl`` seconds (as Redis does).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs
import trio

from ..._sansio.store import bus
from ..._sansio.store.location import StoreLocation
from ..._sansio.store.records import SessionRecord
from ..._sansio.store.sessions import EVICTION_SCAN, Admission, choose_eviction
from ..._sansio.store.stream_log import LogSlice, StreamMeta, orphan_answers, takeover_seq
from ..._sansio.task_table import TaskRecord, TaskStateError
from .base import EventBatch, Store, StoreError, logger

__all__ = ["SqliteStore"]

T = TypeVar("T")

#: The layout below (``PRAGMA user_version``): a file of another layout is refused, not misread.
SCHEMA_VERSION: Final = 1
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS sessions(
    id TEXT PRIMARY KEY, record TEXT NOT NULL, active REAL NOT NULL, operating INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions(active);
CREATE TABLE IF NOT EXISTS subscriptions(session TEXT NOT NULL, uri TEXT NOT NULL, PRIMARY KEY(session, uri));
CREATE INDEX IF NOT EXISTS subscriptions_by_uri ON subscriptions(uri);
CREATE TABLE IF NOT EXISTS streams(
    session TEXT NOT NULL, key TEXT NOT NULL, meta TEXT NOT NULL, last INTEGER NOT NULL,
    lost INTEGER NOT NULL, bytes INTEGER NOT NULL, count INTEGER NOT NULL,
    holder TEXT, held_until REAL, done REAL, PRIMARY KEY(session, key));
CREATE TABLE IF NOT EXISTS events(
    session TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL, payload BLOB NOT NULL,
    PRIMARY KEY(session, key, seq));
CREATE TABLE IF NOT EXISTS tasks(
    id TEXT PRIMARY KEY, record TEXT NOT NULL, updated REAL NOT NULL, terminal INTEGER NOT NULL, expires REAL);
CREATE TABLE IF NOT EXISTS replicas(id TEXT PRIMARY KEY, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS bus(id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, data BLOB NOT NULL);
"""
#: Bus rows older than this (seconds) are pruned.
_BUS_KEEP: Final = 60.0


class SqliteStore(Store):
    """A server's shared state in one SQLite file."""

    shared = True

    def __init__(
        self,
        path: str | Path,
        *,
        location: StoreLocation | None = None,
        clock: Callable[[], float] | None = None,
        replica_id: str | None = None,
        bus_interval: float = 0.05,
        activity_interval: float = 1.0,
        finished_ttl: float = 300.0,
        **limits: int,
    ) -> None:
        super().__init__(
            location=location or StoreLocation("sqlite", path=str(path)),
            clock=clock or time.time,
            replica_id=replica_id,
            **limits,
        )
        self.path = Path(path)
        self.bus_interval = bus_interval
        self.activity_interval = activity_interval
        #: Seconds a finished stream's log is kept (a client may still resume it meanwhile).
        self.finished_ttl = finished_ttl
        self._db: sqlite3.Connection | None = None
        self._limiter = trio.CapacityLimiter(1)
        self._activity: dict[str, float] = {}
        self._bus_cursor = 0
        self._background: trio.CancelScope | None = None
        self._stopped = trio.Event()

    # ------------------------------------------------------------ the worker thread

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        db = self._db
        if db is None:
            raise StoreError(f"{self!r} is not running (use `async with store.running():`)")

        def call() -> T:
            try:
                return fn(db)
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path}: {exc}") from exc

        return await trio.to_thread.run_sync(call, limiter=self._limiter)

    @staticmethod
    def _write(db: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn`` in one ``BEGIN IMMEDIATE`` transaction (rolled back if it raises)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            value = fn(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return value

    async def _open(self, nursery: trio.Nursery) -> None:
        def connect() -> sqlite3.Connection:
            if self.path.parent and not self.path.parent.exists():
                raise StoreError(f"SQLite store: the folder {self.path.parent} does not exist")
            try:
                db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10.0)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                (version,) = db.execute("PRAGMA user_version").fetchone()
                if version not in (0, SCHEMA_VERSION):
                    db.close()
                    raise StoreError(
                        f"SQLite store {self.path}: made by another trimcp (schema {version}, "
                        f"this one reads {SCHEMA_VERSION}); use a new file"
                    )
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                (last,) = db.execute("SELECT coalesce(max(id), 0) FROM bus").fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store {self.path}: {exc}") from exc
            self._bus_cursor = int(last)
            return db

        self._db = await trio.to_thread.run_sync(connect, limiter=self._limiter)
        await self._beat()
        await nursery.start(self._run_background)

    async def _run_background(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._background = nursery.cancel_scope
                nursery.start_soon(self._renew_lease)
                nursery.start_soon(self._poll_bus)
                nursery.start_soon(self._flush_activity_loop)
                task_status.started()
        finally:
            self._stopped.set()

    async def _close(self) -> None:
        if self._background is not None:
            self._background.cancel()
            await self._stopped.wait()
        db, self._db = self._db, None
        if db is None:
            return
        pending, self._activity = self._activity, {}
        until = self.clock()

        def finish() -> None:
            try:
                self._write_activity(db, pending)
                # A clean stop ends the lease at once: this process runs nothing any more.
                db.execute("UPDATE replicas SET until = ? WHERE id = ?", (until, self.replica_id))
            finally:
                db.close()

        await trio.to_thread.run_sync(finish, limiter=self._limiter)

    async def _beat(self) -> None:
        until = self.clock() + self.lease
        await self._run(
            lambda db: db.execute(
                "INSERT INTO replicas(id, until) VALUES(?, ?) ON CONFLICT(id) DO UPDATE SET until = excluded.until",
                (self.replica_id, until),
            )
        )

    async def replica_alive(self, replica_id: str) -> bool:
        now = self.clock()
        row = await self._run(
            lambda db: db.execute("SELECT until FROM replicas WHERE id = ?", (replica_id,)).fetchone()
        )
        return row is not None and float(row[0]) > now

    # ------------------------------------------------------------ sessions

    async def add_session(
        self, record: SessionRecord, *, max_sessions: int | None, busy: Callable[[str], bool]
    ) -> Admission:
        await self._flush_activity()  # the cap reads activity: what was noted counts

        def candidates(db: sqlite3.Connection) -> list[str] | None:
            (count,) = db.execute("SELECT count(*) FROM sessions").fetchone()
            if max_sessions is None or count < max_sessions:
                return None
            rows = db.execute("SELECT id FROM sessions ORDER BY active LIMIT ?", (EVICTION_SCAN,)).fetchall()
            return [r[0] for r in rows]

        oldest = await self._run(candidates)
        choice = choose_eviction(oldest, busy) if oldest is not None else None
        now = self.clock()

        def admit(db: sqlite3.Connection) -> Admission:
            (count,) = db.execute("SELECT count(*) FROM sessions").fetchone()
            evicted = None
            if max_sessions is not None and count >= max_sessions:
                if choice is None or choice.victim is None or not self._delete_session(db, choice.victim):
                    return Admission(False)
                evicted = choice.victim
            for session_id in choice.passed_over if choice is not None else ():
                db.execute("UPDATE sessions SET active = ? WHERE id = ?", (now, session_id))
            self._insert_session(db, record, now)
            return Admission(True, evicted)

        return await self._run(lambda db: self._write(db, admit))

    @staticmethod
    def _insert_session(db: sqlite3.Connection, record: SessionRecord, now: float) -> None:
        db.execute(
            "INSERT OR REPLACE INTO sessions(id, record, active, operating) VALUES(?, ?, ?, ?)",
            (record.session_id, record.to_json(), now, int(record.operating)),
        )
        db.execute("DELETE FROM subscriptions WHERE session = ?", (record.session_id,))
        db.executemany(
            "INSERT INTO subscriptions(session, uri) VALUES(?, ?)",
            [(record.session_id, u) for u in record.subscriptions],
        )

    @staticmethod
    def _delete_session(db: sqlite3.Connection, session_id: str) -> bool:
        gone = db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
        for table in ("subscriptions", "streams", "events"):
            db.execute(f"DELETE FROM {table} WHERE session = ?", (session_id,))
        return bool(gone)

    async def load_session(self, session_id: str) -> SessionRecord | None:
        row = await self._run(
            lambda db: db.execute("SELECT record, active FROM sessions WHERE id = ?", (session_id,)).fetchone()
        )
        if row is None:
            return None
        record = SessionRecord.from_json(row[0])
        active = max(float(row[1]), self._activity.get(session_id, 0.0))
        return attrs.evolve(record, last_active=active)

    async def save_session(self, record: SessionRecord) -> bool:
        def save(db: sqlite3.Connection) -> bool:
            row = db.execute("SELECT active FROM sessions WHERE id = ?", (record.session_id,)).fetchone()
            if row is None:
                return False
            self._insert_session(db, record, float(row[0]))
            return True

        return await self._run(lambda db: self._write(db, save))

    def note_activity(self, session_id: str) -> None:
        self._activity[session_id] = self.clock()

    @staticmethod
    def _write_activity(db: sqlite3.Connection, pending: dict[str, float]) -> None:
        if pending:
            db.executemany(
                "UPDATE sessions SET active = max(active, ?) WHERE id = ?", [(t, s) for s, t in pending.items()]
            )

    async def _flush_activity(self) -> None:
        pending, self._activity = self._activity, {}
        if pending:
            await self._run(lambda db: self._write(db, lambda d: self._write_activity(d, pending)))

    async def _flush_activity_loop(self) -> None:
        turns = 0
        while True:
            await trio.sleep(self.activity_interval)
            turns += 1
            try:
                await self._flush_activity()
                if turns % 30 == 0:
                    await self._prune_finished()
            except StoreError as exc:
                logger.warning("could not record session activity: %s", exc)

    async def _prune_finished(self) -> None:
        """Forget streams finished ``finished_ttl`` seconds ago (their answers were read)."""
        cutoff = self.clock() - self.finished_ttl

        def prune(db: sqlite3.Connection) -> None:
            rows = db.execute("SELECT session, key FROM streams WHERE done IS NOT NULL AND done < ?", (cutoff,))
            gone = rows.fetchall()
            for session_id, key in gone:
                db.execute("DELETE FROM events WHERE session = ? AND key = ?", (session_id, key))
            db.execute("DELETE FROM streams WHERE done IS NOT NULL AND done < ?", (cutoff,))

        await self._run(lambda db: self._write(db, prune))

    async def end_session(self, session_id: str) -> bool:
        self._activity.pop(session_id, None)
        return await self._run(lambda db: self._write(db, lambda d: self._delete_session(d, session_id)))

    async def expire_sessions(self, timeout: float, busy: Callable[[str], bool]) -> list[str]:
        await self._flush_activity()
        cutoff = self.clock() - timeout
        rows = await self._run(
            lambda db: db.execute(
                "SELECT id FROM sessions WHERE active < ? ORDER BY active LIMIT 1000", (cutoff,)
            ).fetchall()
        )
        now = self.clock()
        ended: list[str] = []
        touched: list[str] = []
        for (session_id,) in rows:
            (touched if busy(session_id) else ended).append(session_id)

        def expire(db: sqlite3.Connection) -> list[str]:
            for session_id in touched:
                db.execute("UPDATE sessions SET active = ? WHERE id = ?", (now, session_id))
            gone = []
            for session_id in ended:
                # Still idle (another replica may have noted activity meanwhile)?
                row = db.execute("SELECT active FROM sessions WHERE id = ?", (session_id,)).fetchone()
                if row is not None and float(row[0]) < cutoff and self._delete_session(db, session_id):
                    gone.append(session_id)
            return gone

        return await self._run(lambda db: self._write(db, expire))

    async def session_ids(self, *, subscribed_to: str | None = None) -> list[str]:
        def select(db: sqlite3.Connection) -> list[str]:
            if subscribed_to is None:
                rows = db.execute("SELECT id FROM sessions WHERE operating = 1").fetchall()
            else:
                rows = db.execute(
                    "SELECT s.id FROM sessions s JOIN subscriptions u ON u.session = s.id "
                    "WHERE s.operating = 1 AND u.uri = ?",
                    (subscribed_to,),
                ).fetchall()
            return [r[0] for r in rows]

        return await self._run(select)

    async def count_sessions(self) -> int:
        return int((await self._run(lambda db: db.execute("SELECT count(*) FROM sessions").fetchone()))[0])

    # ------------------------------------------------------------ stream logs

    def _append(self, db: sqlite3.Connection, batch: EventBatch) -> int:
        row = db.execute(
            "SELECT meta, last, lost, bytes, count FROM streams WHERE session = ? AND key = ?",
            (batch.session_id, batch.key),
        ).fetchone()
        if row is None:
            meta, last, lost, size, count = batch.meta, 0, 0, 0, 0
            db.execute(
                "INSERT INTO streams(session, key, meta, last, lost, bytes, count) VALUES(?, ?, ?, 0, 0, 0, 0)",
                (batch.session_id, batch.key, meta.to_json()),
            )
        else:
            meta, last, lost, size, count = StreamMeta.from_json(row[0]), row[1], row[2], row[3], row[4]
        if meta.finished:
            return int(last)
        # The ReplayBuffer's rules (replay.py), in SQL: a repeat is ignored, a skip is lost,
        # the oldest events go past the caps (the newest always stays).
        for seq, payload in batch.events:
            if seq is None:
                seq = last + 1
            elif seq <= last:
                continue
            elif seq > last + 1:
                lost = max(lost, seq - 1)
            last = seq
            db.execute(
                "INSERT OR REPLACE INTO events(session, key, seq, payload) VALUES(?, ?, ?, ?)",
                (batch.session_id, batch.key, seq, payload),
            )
            size += len(payload)
            count += 1
        while count > 1 and (count > self.replay_events or size > self.replay_bytes):
            oldest = db.execute(
                "SELECT seq, length(payload) FROM events WHERE session = ? AND key = ? ORDER BY seq LIMIT 1",
                (batch.session_id, batch.key),
            ).fetchone()
            db.execute(
                "DELETE FROM events WHERE session = ? AND key = ? AND seq = ?", (batch.session_id, batch.key, oldest[0])
            )
            lost = max(lost, oldest[0])
            size -= oldest[1]
            count -= 1
        done = None
        if batch.finished:
            meta = StreamMeta(meta.owner, meta.final_ids, True)
            done = self.clock()
        db.execute(
            "UPDATE streams SET meta = ?, last = ?, lost = ?, bytes = ?, count = ?, done = ? "
            "WHERE session = ? AND key = ?",
            (meta.to_json(), last, lost, size, count, done, batch.session_id, batch.key),
        )
        return int(last)

    async def append_events(self, batches: Sequence[EventBatch]) -> list[int]:
        return await self._run(lambda db: self._write(db, lambda d: [self._append(d, b) for b in batches]))

    @staticmethod
    def _read(db: sqlite3.Connection, session_id: str, key: str, after: int) -> LogSlice | None:
        row = db.execute(
            "SELECT meta, last, lost FROM streams WHERE session = ? AND key = ?", (session_id, key)
        ).fetchone()
        if row is None:
            return None
        events = db.execute(
            "SELECT seq, payload FROM events WHERE session = ? AND key = ? AND seq > ? ORDER BY seq",
            (session_id, key, after),
        ).fetchall()
        return LogSlice(
            StreamMeta.from_json(row[0]), tuple((int(s), bytes(p)) for s, p in events), int(row[1]), after < row[2]
        )

    async def read_stream(self, session_id: str, key: str, after: int) -> LogSlice | None:
        return await self._run(lambda db: self._read(db, session_id, key, after))

    async def take_over_stream(self, session_id: str, key: str, cursor: int) -> bool:
        def take(db: sqlite3.Connection) -> bool:
            log = self._read(db, session_id, key, 0)
            if log is None or log.meta.finished:
                return False
            answers = orphan_answers(log.meta.final_ids, (p for _, p in log.events))
            first = takeover_seq(log.last_seq, cursor)
            events = tuple((first + n, p) for n, p in enumerate(answers))
            self._append(db, EventBatch(session_id, key, log.meta, events, finished=True))
            return True

        return await self._run(lambda db: self._write(db, take))

    async def hold_stream(self, session_id: str, key: str, holder: str, *, force: bool) -> bool:
        now = self.clock()

        def hold(db: sqlite3.Connection) -> bool:
            row = db.execute(
                "SELECT holder, held_until FROM streams WHERE session = ? AND key = ?", (session_id, key)
            ).fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO streams(session, key, meta, last, lost, bytes, count) VALUES(?, ?, ?, 0, 0, 0, 0)",
                    (session_id, key, StreamMeta("").to_json()),
                )
            elif row[0] not in (None, holder) and row[1] is not None and row[1] > now and not force:
                return False
            db.execute(
                "UPDATE streams SET holder = ?, held_until = ? WHERE session = ? AND key = ?",
                (holder, now + self.lease, session_id, key),
            )
            return True

        return await self._run(lambda db: self._write(db, hold))

    async def stream_holder(self, session_id: str, key: str) -> str | None:
        now = self.clock()
        row = await self._run(
            lambda db: db.execute(
                "SELECT holder, held_until FROM streams WHERE session = ? AND key = ?", (session_id, key)
            ).fetchone()
        )
        return row[0] if row is not None and row[1] is not None and row[1] > now else None

    # ------------------------------------------------------------ tasks

    @staticmethod
    def _put_task(db: sqlite3.Connection, record: TaskRecord) -> None:
        db.execute(
            "INSERT OR REPLACE INTO tasks(id, record, updated, terminal, expires) VALUES(?, ?, ?, ?, ?)",
            (
                record.task_id,
                json.dumps(record.to_store()),
                record.updated_at,
                int(record.terminal),
                record.expires_at(),
            ),
        )

    @staticmethod
    def _get_task(db: sqlite3.Connection, task_id: str, now: float) -> TaskRecord | None:
        row = db.execute("SELECT record, expires FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if row is None:
            return None
        if row[1] is not None and row[1] < now:
            db.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
            return None
        return TaskRecord.from_store(json.loads(row[0]))

    async def create_task(self, record: TaskRecord, now: float) -> None:
        def create(db: sqlite3.Connection) -> None:
            if db.execute("SELECT 1 FROM tasks WHERE id = ?", (record.task_id,)).fetchone():
                raise TaskStateError(f"task id {record.task_id!r} is already in use")
            db.execute("DELETE FROM tasks WHERE expires IS NOT NULL AND expires < ?", (now,))
            (count,) = db.execute("SELECT count(*) FROM tasks").fetchone()
            if count >= self.max_tasks:
                oldest = db.execute("SELECT id FROM tasks WHERE terminal = 1 ORDER BY updated LIMIT 1").fetchone()
                if oldest is None:
                    raise TaskStateError(f"too many tasks at once (at most {self.max_tasks})")
                db.execute("DELETE FROM tasks WHERE id = ?", (oldest[0],))
            self._put_task(db, record)

        await self._run(lambda db: self._write(db, create))

    async def get_task(self, task_id: str, now: float) -> TaskRecord | None:
        return await self._run(lambda db: self._get_task(db, task_id, now))

    async def change_task(
        self, task_id: str, now: float, change: Callable[[TaskRecord], T]
    ) -> tuple[TaskRecord, T] | None:
        def apply(db: sqlite3.Connection) -> tuple[TaskRecord, T] | None:
            record = self._get_task(db, task_id, now)
            if record is None:
                return None
            value = change(record)
            self._put_task(db, record)
            return record, value

        return await self._run(lambda db: self._write(db, apply))

    # ------------------------------------------------------------ bus

    async def publish(self, message: bus.BusMessage) -> None:
        data = bus.encode(message, self.replica_id)
        now = self.clock()
        await self._run(lambda db: db.execute("INSERT INTO bus(at, data) VALUES(?, ?)", (now, data)))

    @staticmethod
    def _read_bus(db: sqlite3.Connection, *, cursor: int, prune: float | None) -> list[Any]:
        if prune is not None:
            db.execute("DELETE FROM bus WHERE at < ?", (prune,))
        return db.execute("SELECT id, data FROM bus WHERE id > ? ORDER BY id", (cursor,)).fetchall()

    async def _poll_bus(self) -> None:
        polls = 0
        while True:
            await trio.sleep(self.bus_interval)
            cursor = self._bus_cursor
            prune = self.clock() - _BUS_KEEP if polls % 200 == 0 else None
            polls += 1

            try:
                rows = await self._run(partial(self._read_bus, cursor=cursor, prune=prune))
            except StoreError as exc:
                logger.warning("could not read the bus: %s", exc)
                continue
            for row_id, data in rows:
                self._bus_cursor = max(self._bus_cursor, int(row_id))
                decoded = bus.decode(bytes(data))
                if decoded is not None:
                    self._dispatch(*decoded)
