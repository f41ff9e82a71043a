"""Streamable HTTP sessions kept in the server's store, so that replicas can share them (issue 30).

Theory of operation
-------------------
Spec 2025-11-25, basic/transports: a handshake-era session is named by
``Mcp-Session-Id`` on every request, its SSE streams may be resumed with
``Last-Event-ID`` ("Resumability and Redelivery"), and the server MAY end
it at any time.  ``Replicas`` is how ``HttpApp`` keeps its sessions in a
``Store`` (``trimcp.server.store``) so that any replica behind a load
balancer that is not sticky can serve any request.  With every store:

* the session's record (``_sansio.store.records``) is written when
  ``initialize`` is answered and again when the client changes it
  (``notifications/initialized``, ``logging/setLevel``,
  ``resources/subscribe``); the cap, the idle timeout and DELETE are the
  store's (``admit``, ``expire``, ``end``), so every replica gets the same
  answer; which sessions are busy (a request in flight, a stream attached)
  only this process knows, and the store asks (``busy``).

With a shared store (SQLite, Redis) this process is one replica of many:

* a request naming a session this replica has no copy of loads its record
  and *adopts* it (``prepare``): a fresh ``HttpSession`` and server
  Connection that continue the negotiated session (``Connection.adopt``);
  the copies learn of each other's changes over the store's bus
  (``SessionChanged``, ``SessionEnded``: a change is written, and published,
  before the client is answered) and read the record again at least every
  ``FRESH`` seconds of use.  This is eventual, not strict: a request that
  reaches another replica before the announcement does (the bus delivers in
  about a millisecond; a lost message is late by ``FRESH`` at most) sees the
  session as it was - reading the record on every request would cost a store
  round trip per call (1.7x the in-memory time per call on Redis, measured);
* every event of a resumable stream is written to the store, and a GET for
  a stream this replica does not hold is served from there - taken over
  when its owner died before answering (``stream_relay``);
* a client's answer to a server request, or its ``notifications/cancelled``,
  that reaches a replica not waiting for it is published
  (``ClientMessage``) for the replica that is (``forward``,
  ``_sansio.http.server.forwarding``);
* change notifications reach every session through the store: the server
  calls ``_fan_out`` (``Server.fan_outs``), which appends the notification
  to the standalone stream of each session it concerns and publishes it
  (``Notify``) for the ``subscriptions/listen`` streams of other replicas.

What does not cross replicas: a request being served runs where it
arrived, with its answer stream there (a client that resumes it elsewhere
is served from the store), and the server's own requests wait where they
were sent; if that process dies, they are lost - the resumed stream says
so with its error answer.  A tool's own in-process state is the tool's.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

import attrs
import trio

from ...._sansio import events as ev
from ...._sansio import jsonrpc as rpc
from ...._sansio.connection.core import LOG_LEVELS
from ...._sansio.connection.lifecycle import OPERATING
from ...._sansio.http.header_names import LAST_EVENT_ID_HEADER
from ...._sansio.http.server.forwarding import split
from ...._sansio.http.server.replay import STANDALONE_KEY
from ...._sansio.http.server.routing import HttpError, PostBody, RequestHead, session_id_of
from ...._sansio.store import bus
from ...._sansio.store.records import SessionRecord
from ...._sansio.store.sessions import Admission
from ...._trio.stream import Received
from ...definition import Server
from ...server_session import ServerSession
from ...store.base import Store, StoreError
from .session_table import SessionTable
from .sessions import STANDALONE_META, HttpSession
from .stream_relay import EventWriter, StreamRelay

__all__ = ["FRESH", "Replicas"]

logger = logging.getLogger("trimcp.server.transports.http.app")

#: Seconds a copy of a session is trusted without reading its record again: changes made on
#: other replicas arrive sooner over the bus; this bounds how late a lost bus message makes them.
FRESH: Final = 1.0
#: Scheduler turns a request gives the bus before it trusts this replica's copy of its session.
BUS_TURNS: Final = 3


def _waits_for(server_session: ServerSession) -> Callable[[rpc.RequestId], bool]:
    """Whether this copy of the session sent request ``id`` and waits for its answer."""
    pending = server_session.connection.pending
    return lambda request_id: request_id in pending


class Replicas:
    """The sessions of one ``HttpApp`` in its store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        server: Server,
        sessions: SessionTable,
        *,
        retry_ms: int,
        keepalive: float | None,
    ) -> None:
        self.store = store
        self.server = server
        #: This process's copies of the sessions.
        self.sessions = sessions
        self.shared = store.shared
        self.retry_ms = retry_ms
        self.keepalive = keepalive
        self.writer = EventWriter(store) if store.shared else None
        #: GETs for streams this replica does not hold, served from the store.
        self.streams = StreamRelay(store, retry_ms=retry_ms, keepalive=keepalive)
        self._records: dict[str, SessionRecord] = {}
        #: When each copy must be read from the store again (``trio.current_time()``).
        self._fresh_until: dict[str, float] = {}
        self._saving: dict[str, bool] = {}  # session id -> saved again once the save running ends
        self._adopting: dict[str, trio.Event] = {}
        self._nursery: trio.Nursery | None = None
        self._start: Callable[[HttpSession], Awaitable[ServerSession]] | None = None

    @contextlib.asynccontextmanager
    async def running(
        self, nursery: trio.Nursery, start_session: Callable[[HttpSession], Awaitable[ServerSession]]
    ) -> AsyncIterator[None]:
        """For as long as the app runs: ``start_session`` runs a session's driver."""
        self._nursery, self._start = nursery, start_session
        stop = self.store.subscribe(self._on_message)
        if self.writer is not None:
            nursery.start_soon(self.writer.run)
            self.server.fan_outs.append(self._fan_out)
        try:
            yield
        finally:
            stop()
            if self._fan_out in self.server.fan_outs:
                self.server.fan_outs.remove(self._fan_out)

    @property
    def nursery(self) -> trio.Nursery:
        assert self._nursery is not None, "Replicas.running is not active"
        return self._nursery

    def session_options(self) -> dict[str, Any]:
        """What an ``HttpSession`` of this app is made with."""
        return {"replica_id": self.store.replica_id if self.shared else "", "log": self.writer}

    # ------------------------------------------------------------ records

    def busy(self, session_id: str) -> bool:
        """A request in flight or a stream attached here: not idle (the idle timeout)."""
        session = self.sessions.get(session_id)
        return session is not None and session.busy

    def serving(self, session_id: str) -> bool:
        """A request in flight here: not to be evicted at the cap (an open GET stream does not
        protect a session: a stream is cheap to reopen, and the cap must hold against clients
        that open one and walk away)."""
        session = self.sessions.get(session_id)
        return session is not None and bool(session.exchanges) and not session.closed

    def _record_of(self, session: HttpSession) -> SessionRecord:
        base = self._records.get(session.id) or SessionRecord(session.id, self.store.clock(), self.store.clock())
        server_session = session.server_session
        if server_session is None:
            return base
        connection = server_session.connection
        return attrs.evolve(
            base,
            protocol_version=connection.protocol_version,
            client_info=connection.peer_info,
            client_capabilities=connection.peer_capabilities,
            operating=base.operating or connection.state is OPERATING,
            log_level=connection.log_level,
            subscriptions=tuple(server_session.subscriptions),
        )

    async def admit(self, session: HttpSession, max_sessions: int | None) -> Admission:
        """Room for a new session (at the cap, the least recently active idle one goes)."""
        record = SessionRecord(session.id, self.store.clock(), self.store.clock())
        admission = await self.store.add_session(record, max_sessions=max_sessions, busy=self.serving)
        if admission.admitted:
            self._records[session.id] = record
        if admission.evicted is not None:
            await self.ended_elsewhere(admission.evicted, "the session cap was reached")
        return admission

    async def negotiated(self, session: HttpSession) -> None:
        """``initialize`` was answered: write what was negotiated, and watch for changes."""
        self._watch(session)
        await self.save(session)

    def _watch(self, session: HttpSession) -> None:
        server_session = session.server_session
        assert server_session is not None

        def observe(event: ev.Event) -> None:
            if isinstance(event, (ev.LogLevelChanged, ev.Initialized)):
                self._save_soon(session)

        server_session.driver.event_observers.append(observe)

        async def changed() -> None:
            await self.save(session)

        server_session.on_change = changed

    def _save_soon(self, session: HttpSession) -> None:
        if session.id in self._saving:
            self._saving[session.id] = True
        else:
            self._saving[session.id] = False
            self.nursery.start_soon(self._save_loop, session)

    async def _save_loop(self, session: HttpSession) -> None:
        try:
            again = True
            while again and not session.closed:
                self._saving[session.id] = False
                await self.save(session)
                again = self._saving.get(session.id, False)
        finally:
            self._saving.pop(session.id, None)

    async def save(self, session: HttpSession, *, operating: bool = False, log_level: str | None = None) -> None:
        """Write the session's record as it stands (``operating``, ``log_level``: what the
        client just said, before the Connection took it up)."""
        record = self._record_of(session)
        if operating:
            record = attrs.evolve(record, operating=True)
        if log_level is not None:
            record = attrs.evolve(record, log_level=log_level)
        self._records[session.id] = record
        try:
            kept = await self.store.save_session(record)
            if kept and self.shared:
                await self.store.publish(bus.SessionChanged(session.id))
        except StoreError as exc:
            logger.warning("%s: could not write its record: %s", session.describe(), exc)

    async def end(self, session_id: str) -> None:
        """DELETE: the session ends on every replica."""
        await self.store.end_session(session_id)
        await self.ended_elsewhere(session_id, None)

    async def ended_elsewhere(self, session_id: str, why: str | None) -> None:
        """The store no longer has the session: close the copies (here, and elsewhere)."""
        session = self.sessions.get(session_id)
        if session is not None:
            if why is not None:
                logger.info("%s: %s; closing it", session.describe(), why)
            self.sessions.discard(session)
            await session.aclose()
        if self.shared:
            with contextlib.suppress(StoreError):
                await self.store.publish(bus.SessionEnded(session_id))

    async def expire(self, timeout: float) -> None:
        """End the sessions idle for longer than ``timeout`` seconds, on every replica."""
        for session in self.sessions.values():
            if session.busy:
                self.store.note_activity(session.id)  # busy here is activity for all
        for session_id in await self.store.expire_sessions(timeout, self.busy):
            await self.ended_elsewhere(session_id, "idle for too long")

    def forget(self, session: HttpSession) -> None:
        """This copy of the session stopped running."""
        self._records.pop(session.id, None)
        self._fresh_until.pop(session.id, None)

    # ------------------------------------------------------------ shared store: adopting

    async def prepare(self, head: RequestHead) -> None:
        """Before the policy looks: the session a request names is here if the store has it."""
        if not self.shared:
            return
        session_id = session_id_of(head)
        if isinstance(session_id, HttpError):
            return
        session = self.sessions.get(session_id)
        if session is not None:
            # Bus messages already on their way (a change or an end announced by the replica
            # that answered the client's previous request) are taken in first.
            for _ in range(BUS_TURNS):
                await trio.lowlevel.checkpoint()
            session = self.sessions.get(session_id)
        if session is None:
            session = await self._adopt(session_id)
        elif trio.current_time() >= self._fresh_until.get(session_id, 0.0):
            # The copy is read again from the store once ``FRESH`` seconds have passed (or a
            # bus message said it changed): whether the session still lives (a DELETE, the
            # cap or the idle timeout on another replica) and what it is now (log level, ...).
            session = await self._refresh(session)
        if session is not None and head.method == "GET" and head.get(LAST_EVENT_ID_HEADER) is None:
            held = await self.store.stream_holder(session_id, STANDALONE_KEY)
            session.standalone_held = held is not None

    async def _adopt(self, session_id: str) -> HttpSession | None:
        waiting = self._adopting.get(session_id)
        if waiting is not None:
            await waiting.wait()
            return self.sessions.get(session_id)
        done = self._adopting[session_id] = trio.Event()
        try:
            record = await self.store.load_session(session_id)
            if record is None or record.protocol_version is None:
                return None  # unknown, or its initialize not answered yet
            session = HttpSession(session_id, **self.session_options())
            self.sessions.add(session)
            assert self._start is not None
            server_session = await self._start(session)
            try:
                server_session.connection.adopt(
                    protocol_version=record.protocol_version,
                    peer_info=record.client_info,
                    peer_capabilities=record.client_capabilities,
                    log_level=record.log_level,
                    operating=record.operating,
                )
            except Exception:
                logger.warning("%s: could not adopt its record", session.describe(), exc_info=True)
                self.sessions.discard(session)
                await session.aclose()
                return None
            server_session.subscriptions = set(record.subscriptions)
            self._records[session_id] = record
            self._fresh_until[session_id] = trio.current_time() + FRESH
            self._watch(session)
            return session
        finally:
            done.set()
            del self._adopting[session_id]

    async def _refresh(self, session: HttpSession) -> HttpSession | None:
        """Take up what the store says of the session now (``None``: it ended)."""
        record = await self.store.load_session(session.id)
        server_session = session.server_session
        if record is None:
            await self.ended_elsewhere(session.id, "it ended on another replica")
            return None
        if server_session is None:
            return session
        self._records[session.id] = record
        self._fresh_until[session.id] = trio.current_time() + FRESH
        connection = server_session.connection
        connection.log_level = record.log_level
        server_session.subscriptions = set(record.subscriptions)
        if record.operating:
            connection.adopt_initialized()
        return session

    async def _refresh_quietly(self, session: HttpSession) -> None:
        try:
            await self._refresh(session)
        except StoreError as exc:
            logger.warning("%s: could not read its record: %s", session.describe(), exc)

    # ------------------------------------------------------------ shared store: client messages

    async def forward(self, session: HttpSession, post: PostBody) -> PostBody | None:
        """The part of a POST (answers and notifications only) that is this replica's; the
        rest goes to the others over the bus.  ``None``: nothing is this replica's."""
        server_session = session.server_session
        if not self.shared or server_session is None:
            return post
        here, elsewhere = split(post.messages, awaiting=_waits_for(server_session), in_flight=session.in_flight)
        for message in elsewhere:
            await self.store.publish(bus.ClientMessage(session.id, rpc.serialize(message).decode()))
        if not elsewhere:
            return post
        if not here:
            return None
        data = rpc.serialize(here if post.is_batch else here[0])
        return PostBody(data, rpc.parse_payload(data))

    async def before_submit(self, session: HttpSession, post: PostBody) -> None:
        """A ``logging/setLevel`` is written before the session's Connection answers it: the
        client's next request may reach another replica at once."""
        if not self.shared:
            return
        for request in post.requests:
            level = (request.params or {}).get("level")
            if request.method == "logging/setLevel" and level in LOG_LEVELS:
                self._records[session.id] = attrs.evolve(self._record_of(session), log_level=level)
                await self.save(session, log_level=level)

    async def accepted(self, session: HttpSession, post: PostBody) -> None:
        """The client's ``notifications/initialized`` is written before it is answered: its
        next request may reach another replica at once."""
        if self.shared and any(
            isinstance(m, rpc.Notification) and m.method == "notifications/initialized" for m in post.messages
        ):
            await self.save(session, operating=True)

    async def _take(self, session: HttpSession, data: str) -> None:
        server_session = session.server_session
        if server_session is None or session.closed:
            return
        raw = data.encode()
        payload = rpc.parse_payload(raw)
        here, _ = split(payload.messages, awaiting=_waits_for(server_session), in_flight=session.in_flight)
        if not here:
            return
        for message in here:
            if isinstance(message, rpc.Notification) and message.method == "notifications/cancelled":
                session.cancelled((message.params or {}).get("requestId"))
        with contextlib.suppress(Exception):
            await session.submit(Received(raw, payload))

    # ------------------------------------------------------------ shared store: the bus

    def _on_message(self, message: bus.BusMessage, origin: str) -> None:
        if isinstance(message, bus.StreamAppended):
            self.streams.wake(message.session_id, message.key)
            return
        if origin == self.store.replica_id or self._nursery is None:
            return
        if isinstance(message, bus.Notify):
            self.nursery.start_soon(self.server.notify_listeners, message.method, message.params)
            return
        if isinstance(message, bus.TaskChanged):
            return
        session = self.sessions.get(message.session_id)
        if session is None:
            return
        if isinstance(message, bus.SessionEnded):
            self.sessions.discard(session)  # now: the next request naming it asks the store
            self.nursery.start_soon(self.ended_elsewhere, message.session_id, "it ended on another replica")
            self.nursery.start_soon(session.aclose)
        elif isinstance(message, bus.SessionChanged):
            self._fresh_until.pop(session.id, None)  # now: the next request reads it again
            self.nursery.start_soon(self._refresh_quietly, session)
        elif isinstance(message, bus.ClientMessage):
            self.nursery.start_soon(self._take, session, message.data)

    async def _fan_out(self, method: str, params: dict[str, Any] | None) -> None:
        """A change notification, to the sessions and listen streams of every replica."""
        assert self.writer is not None
        try:
            if method == "notifications/resources/updated":
                uri = (params or {}).get("uri")
                targets = await self.store.session_ids(subscribed_to=uri) if isinstance(uri, str) else []
            else:
                targets = await self.store.session_ids()
            payload = rpc.serialize(rpc.Notification(method, params))
            for session_id in targets:
                self.writer.write(session_id, STANDALONE_KEY, STANDALONE_META, None, payload, False)
            await self.store.publish(bus.Notify(method, params))
        except StoreError as exc:
            logger.warning("could not fan %s out to the other replicas: %s", method, exc)
