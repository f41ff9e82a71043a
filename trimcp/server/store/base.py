"""The interface every store of a server's shared state implements.

Theory of operation
-------------------
A server that outgrows one process runs as replicas behind a load balancer
that is not sticky: any request may reach any replica.  What they must agree
on lives in one ``Store``; what only a process can hold - HTTP connections,
running tool calls, the server's requests waiting for the client - stays in
the process, and replicas tell one another about it over the store's
publish/subscribe bus.  The state, by kind:

* handshake-era sessions (spec 2025-11-25, basic/transports "Session
  Management"): the record every replica needs to continue a session
  (``trimcp._sansio.store.records``), the session cap and the idle timeout
  (``_sansio.store.sessions``), decided by the store so that every replica
  gets the same answer;
* SSE event logs, one per resumable stream, with their replay cursor
  ("Resumability and Redelivery"; ``_sansio.store.stream_log``);
* the ext-tasks task table (``_sansio.task_table``): every status move is
  one atomic read-modify-write (``change_task``), whichever replica makes it;
* replica leases: each replica renews its own (``running``) so the others
  can tell when it died - its tasks are then ``failed`` and its streams
  taken over;
* the bus (``_sansio.store.bus``).

Every method that decides something over time reads ``clock`` (sessions,
leases) or is given ``now`` (tasks, whose times are wall-clock by the
extension).  The in-memory store is one process's (``shared`` is False: the
HTTP app then keeps streams in its own buffers only, as it always did); the
SQLite and Redis stores are ``shared``.  ``open_store`` makes one from its
URL (``_sansio.store.location``).
"""

from __future__ import annotations

import abc
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final, TypeVar

import attrs
import trio

from ..._errors import TrimcpError
from ..._sansio.http.server.replay import DEFAULT_REPLAY_BYTES, DEFAULT_REPLAY_EVENTS
from ..._sansio.store.bus import BusMessage
from ..._sansio.store.location import DEFAULT_LEASE, StoreLocation
from ..._sansio.store.records import SessionRecord
from ..._sansio.store.sessions import Admission
from ..._sansio.store.stream_log import LogSlice, StreamMeta
from ..._sansio.task_table import TaskRecord
from ..._trio._groups import collapse

__all__ = ["BusHandler", "EventBatch", "Store", "StoreError"]

logger = logging.getLogger("trimcp.server.store")

T = TypeVar("T")
#: Called with every bus message and the replica that published it; must not block.
BusHandler = Callable[[BusMessage, str], None]

#: Default cap on the tasks a store keeps (the table's own default).
DEFAULT_MAX_TASKS: Final = 1000


class StoreError(TrimcpError):
    """The store could not be reached or refused an operation (not a protocol error)."""


@attrs.frozen
class EventBatch:
    """Events for one stream's log: ``seq`` ``None`` lets the store number the event."""

    session_id: str
    key: str
    meta: StreamMeta
    events: tuple[tuple[int | None, bytes], ...]
    finished: bool = False


class Store(abc.ABC):
    """A server's shared state (see the module docstring)."""

    #: Whether other processes may share this state.
    shared: bool = False

    def __init__(
        self,
        *,
        location: StoreLocation,
        clock: Callable[[], float],
        replica_id: str | None = None,
        replay_events: int = DEFAULT_REPLAY_EVENTS,
        replay_bytes: int = DEFAULT_REPLAY_BYTES,
        max_tasks: int = DEFAULT_MAX_TASKS,
    ) -> None:
        if replay_events < 1 or replay_bytes < 1 or max_tasks < 1:
            raise ValueError("replay_events, replay_bytes and max_tasks must be at least 1")
        self.location = location
        self.clock = clock
        #: This process's name among the replicas: lowercase letters and digits, so that it
        #: can begin a stream key (``replay.parse_event_id``).
        self.replica_id = replica_id or "r" + secrets.token_hex(5)
        if not (self.replica_id.isascii() and self.replica_id.isalnum()):
            raise ValueError("a replica id is ASCII letters and digits")
        self.replay_events = replay_events
        self.replay_bytes = replay_bytes
        self.max_tasks = max_tasks
        self._handlers: list[BusHandler] = []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.location.describe()} replica={self.replica_id}>"

    @property
    def lease(self) -> float:
        """Seconds a replica's lease lasts without renewal."""
        return self.location.lease if self.location.lease > 0 else DEFAULT_LEASE

    # ------------------------------------------------------------ running

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Connect, and keep this replica's lease and bus subscription up, for the block."""
        with collapse():  # a store that cannot open is a StoreError, not a group of one
            async with self._nursery():
                yield

    @contextlib.asynccontextmanager
    async def _nursery(self) -> AsyncIterator[trio.Nursery]:
        async with trio.open_nursery() as nursery:
            await self._open(nursery)
            try:
                yield nursery
            finally:
                # Stopped in order (the background work first, then the connection), and
                # only then cancelled: a client library's own clean-up needs its connection.
                with trio.CancelScope(shield=True), trio.move_on_after(5):
                    await self._close()
                nursery.cancel_scope.cancel()

    @abc.abstractmethod
    async def _open(self, nursery: trio.Nursery) -> None:
        """Connect and start the background work (lease renewal, bus) in ``nursery``."""

    @abc.abstractmethod
    async def _close(self) -> None:
        """Stop the background work and release what ``_open`` took (shielded, bounded in time)."""

    @abc.abstractmethod
    async def replica_alive(self, replica_id: str) -> bool:
        """Whether ``replica_id``'s lease is current."""

    async def _beat(self) -> None:
        """Write this replica's lease anew (a store that processes share implements it)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no lease")

    async def _renew_lease(self) -> None:
        """Renew the lease three times per lease, for as long as the store runs.  A failed
        renewal is logged, not fatal: the lease lapses only if renewals fail for a whole lease."""
        while True:
            await trio.sleep(self.lease / 3)
            try:
                await self._beat()
            except StoreError as exc:
                logger.warning("could not renew the lease of %s: %s", self.replica_id, exc)

    # ------------------------------------------------------------ sessions

    @abc.abstractmethod
    async def add_session(
        self, record: SessionRecord, *, max_sessions: int | None, busy: Callable[[str], bool]
    ) -> Admission:
        """Keep a new session, ending the least recently active idle one at the cap."""

    @abc.abstractmethod
    async def load_session(self, session_id: str) -> SessionRecord | None:
        """The session's record, or ``None`` once it ended."""

    @abc.abstractmethod
    async def save_session(self, record: SessionRecord) -> bool:
        """Replace the record's negotiated fields (not its activity); False once it ended."""

    @abc.abstractmethod
    def note_activity(self, session_id: str) -> None:
        """A request named the session (the store may write it later; never blocks)."""

    @abc.abstractmethod
    async def end_session(self, session_id: str) -> bool:
        """End the session and drop its streams; whether it was there."""

    @abc.abstractmethod
    async def expire_sessions(self, timeout: float, busy: Callable[[str], bool]) -> list[str]:
        """End the sessions idle longer than ``timeout`` seconds (busy ones count as active)."""

    @abc.abstractmethod
    async def session_ids(self, *, subscribed_to: str | None = None) -> list[str]:
        """The operating sessions (those subscribed to the URI ``subscribed_to``)."""

    @abc.abstractmethod
    async def count_sessions(self) -> int: ...

    # ------------------------------------------------------------ stream logs

    @abc.abstractmethod
    async def append_events(self, batches: Sequence[EventBatch]) -> list[int]:
        """Add events to stream logs (made on first use, with the batch's meta); the
        last number of each stream.  A finished stream takes nothing more."""

    @abc.abstractmethod
    async def read_stream(self, session_id: str, key: str, after: int) -> LogSlice | None:
        """What the stream's log holds after event ``after``; ``None``: no such log."""

    @abc.abstractmethod
    async def take_over_stream(self, session_id: str, key: str, cursor: int) -> bool:
        """A dead owner's stream: append the error answers for its unanswered requests,
        numbered after ``cursor`` and the log, and finish it (``stream_log``).  Whether
        this call finished it (False: it had finished already, or there is no log)."""

    @abc.abstractmethod
    async def hold_stream(self, session_id: str, key: str, holder: str, *, force: bool) -> bool:
        """Mark ``holder`` (one client connection) as the reader of the stream for one
        lease; False when another holder's mark is current and ``force`` is not set."""

    @abc.abstractmethod
    async def stream_holder(self, session_id: str, key: str) -> str | None:
        """The holder whose mark is current, if any."""

    # ------------------------------------------------------------ tasks

    @abc.abstractmethod
    async def create_task(self, record: TaskRecord, now: float) -> None:
        """Keep a new task (``TaskStateError``: its id is taken, or the table is full
        of tasks that are not terminal); once this returns, ``get_task`` finds it."""

    @abc.abstractmethod
    async def get_task(self, task_id: str, now: float) -> TaskRecord | None:
        """The task, or ``None`` (never created, or terminal and past its TTL)."""

    @abc.abstractmethod
    async def change_task(
        self, task_id: str, now: float, change: Callable[[TaskRecord], T]
    ) -> tuple[TaskRecord, T] | None:
        """Apply ``change`` to the task atomically (an exception from it writes nothing);
        the record after it and what ``change`` returned, or ``None`` for no such task."""

    # ------------------------------------------------------------ bus

    @abc.abstractmethod
    async def publish(self, message: BusMessage) -> None:
        """Send ``message`` to every replica, this one included."""

    def subscribe(self, handler: BusHandler) -> Callable[[], None]:
        """Call ``handler`` with every bus message; the returned function stops that."""
        self._handlers.append(handler)
        return lambda: self._handlers.remove(handler) if handler in self._handlers else None

    def _dispatch(self, message: BusMessage, origin: str) -> None:
        for handler in list(self._handlers):
            try:
                handler(message, origin)
            except Exception:
                logger.exception("bus handler %r failed on %r", handler, message)
