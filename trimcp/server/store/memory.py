"""The in-memory store: one process's state, as fast as plain tables (the default).

Theory of operation
-------------------
The store interface (``base``) over Python tables, for a server that runs as
one process: nothing is shared (``shared`` is False) and nothing survives a
restart.  Sessions are kept in an ``OrderedDict`` ordered by last activity:
``note_activity`` moves one to the end in O(1), so the least recently active
are at the front and neither the cap (``add_session``) nor the idle timeout
(``expire_sessions``) walks the whole table.  Stream logs are
``stream_log.StreamLog``s, the task table is ``task_table.TaskTable``, and
the bus calls this process's handlers directly.  Time is ``trio.current_time``
by default, so a test's virtual clock drives the idle timeout.

Every method returns without a checkpoint or any await: what the HTTP app
decides on the state holds until it awaits something else (an ``initialize``
at the cap never overshoots it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TypeVar

import attrs
import trio

from ..._sansio.store.bus import BusMessage
from ..._sansio.store.location import StoreLocation
from ..._sansio.store.records import SessionRecord
from ..._sansio.store.sessions import Admission, choose_eviction, idle
from ..._sansio.store.stream_log import LogSlice, StreamLog, orphan_answers, takeover_seq
from ..._sansio.task_table import TaskRecord, TaskTable
from .base import EventBatch, Store

__all__ = ["MemoryStore"]

T = TypeVar("T")


class MemoryStore(Store):
    """This process's state in its own memory."""

    shared = False

    def __init__(
        self,
        *,
        location: StoreLocation | None = None,
        clock: Callable[[], float] = trio.current_time,
        replica_id: str | None = None,
        **limits: int,
    ) -> None:
        super().__init__(location=location or StoreLocation("memory"), clock=clock, replica_id=replica_id, **limits)
        #: Session records by id, least recently active first, and their activity.
        self._sessions: OrderedDict[str, SessionRecord] = OrderedDict()
        self._active: dict[str, float] = {}
        self._streams: dict[tuple[str, str], StreamLog] = {}
        self._stream_keys: dict[str, set[str]] = {}
        self._holders: dict[tuple[str, str], tuple[str, float]] = {}
        self._tasks = TaskTable(max_tasks=self.max_tasks)
        #: Sessions closed to make room for new ones.
        self.evicted = 0

    async def _open(self, nursery: trio.Nursery) -> None:
        pass

    async def _close(self) -> None:
        pass

    async def replica_alive(self, replica_id: str) -> bool:
        # One process, one replica: no other can have a lease here.
        return replica_id == self.replica_id

    # ------------------------------------------------------------ sessions

    async def add_session(
        self, record: SessionRecord, *, max_sessions: int | None, busy: Callable[[str], bool]
    ) -> Admission:
        evicted = None
        if max_sessions is not None and len(self._sessions) >= max_sessions:
            choice = choose_eviction(self._sessions, busy)
            for session_id in choice.passed_over:
                self.note_activity(session_id)  # a request in flight is activity
            if choice.victim is None:
                return Admission(False)
            self._drop(choice.victim)
            self.evicted += 1
            evicted = choice.victim
        self._sessions[record.session_id] = record
        self._active[record.session_id] = self.clock()
        return Admission(True, evicted)

    async def load_session(self, session_id: str) -> SessionRecord | None:
        record = self._sessions.get(session_id)
        if record is None:
            return None
        return attrs.evolve(record, last_active=self._active[session_id])

    async def save_session(self, record: SessionRecord) -> bool:
        if record.session_id not in self._sessions:
            return False
        self._sessions[record.session_id] = record
        return True

    def note_activity(self, session_id: str) -> None:
        if session_id in self._sessions:
            self._active[session_id] = self.clock()
            self._sessions.move_to_end(session_id)

    def _drop(self, session_id: str) -> None:
        del self._sessions[session_id]
        del self._active[session_id]
        for key in self._stream_keys.pop(session_id, ()):
            self._streams.pop((session_id, key), None)
            self._holders.pop((session_id, key), None)

    async def end_session(self, session_id: str) -> bool:
        if session_id not in self._sessions:
            return False
        self._drop(session_id)
        return True

    async def expire_sessions(self, timeout: float, busy: Callable[[str], bool]) -> list[str]:
        now = self.clock()
        ended: list[str] = []
        for _ in range(len(self._sessions)):
            session_id = next(iter(self._sessions), None)
            if session_id is None:
                break
            if busy(session_id):
                self.note_activity(session_id)
                continue
            if not idle(self._active[session_id], now, timeout):
                break
            self._drop(session_id)
            ended.append(session_id)
        return ended

    async def session_ids(self, *, subscribed_to: str | None = None) -> list[str]:
        return [
            r.session_id
            for r in self._sessions.values()
            if r.operating and (subscribed_to is None or subscribed_to in r.subscriptions)
        ]

    async def count_sessions(self) -> int:
        return len(self._sessions)

    # ------------------------------------------------------------ stream logs

    async def append_events(self, batches: Sequence[EventBatch]) -> list[int]:
        out: list[int] = []
        for batch in batches:
            log = self._streams.get((batch.session_id, batch.key))
            if log is None:
                log = StreamLog(batch.meta, self.replay_events, self.replay_bytes)
                self._streams[batch.session_id, batch.key] = log
                self._stream_keys.setdefault(batch.session_id, set()).add(batch.key)
            out.append(log.append(batch.events))
            if batch.finished:
                log.finish()
        return out

    async def read_stream(self, session_id: str, key: str, after: int) -> LogSlice | None:
        log = self._streams.get((session_id, key))
        return log.after(after) if log is not None else None

    async def take_over_stream(self, session_id: str, key: str, cursor: int) -> bool:
        log = self._streams.get((session_id, key))
        if log is None or log.meta.finished:
            return False
        answers = orphan_answers(log.meta.final_ids, (p for _, p in log.buffer.since(0)))
        first = takeover_seq(log.buffer.last_seq, cursor)
        log.append((first + n, payload) for n, payload in enumerate(answers))
        log.finish()
        return True

    async def hold_stream(self, session_id: str, key: str, holder: str, *, force: bool) -> bool:
        now = self.clock()
        current = self._holders.get((session_id, key))
        if current is not None and current[0] != holder and current[1] > now and not force:
            return False
        self._holders[session_id, key] = (holder, now + self.lease)
        return True

    async def stream_holder(self, session_id: str, key: str) -> str | None:
        current = self._holders.get((session_id, key))
        return current[0] if current is not None and current[1] > self.clock() else None

    # ------------------------------------------------------------ tasks

    async def create_task(self, record: TaskRecord, now: float) -> None:
        self._tasks.insert(TaskRecord.from_store(record.to_store()), now)

    async def get_task(self, task_id: str, now: float) -> TaskRecord | None:
        record = self._tasks.get(task_id, now)
        # A copy: what the caller does to it is not a move of the table's record.
        return TaskRecord.from_store(record.to_store()) if record is not None else None

    async def change_task(
        self, task_id: str, now: float, change: Callable[[TaskRecord], T]
    ) -> tuple[TaskRecord, T] | None:
        record = self._tasks.get(task_id, now)
        if record is None:
            return None
        # Applied to a copy and then kept: a change that raises leaves the table as it was.
        draft = TaskRecord.from_store(record.to_store())
        value = change(draft)
        self._tasks.replace(draft)
        return draft, value

    # ------------------------------------------------------------ bus

    async def publish(self, message: BusMessage) -> None:
        self._dispatch(message, self.replica_id)
