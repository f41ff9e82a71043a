"""A session's resumable streams in a shared store: written by their replica, read by any (issue 30).

Theory of operation
-------------------
Spec 2025-11-25, basic/transports, "Resumability and Redelivery": a client
resumes a broken SSE stream with a GET carrying ``Last-Event-ID``, and the
server replays what that stream sent after the event.  When the server runs
as replicas (``replicas``), the GET may reach any of them, so the streams
live in the store (``Store.append_events``, ``_sansio.store.stream_log``):

* ``EventWriter`` writes the events of this replica's resumable streams, in
  order, in batches, behind the write to the client (the client never waits
  for the store): it waits ``COALESCE`` seconds, so that a stream answered
  and written to its client meanwhile is not stored at all - nobody can
  resume it, as with one process, where a finished stream is forgotten - and
  what concurrent streams wrote goes in one batch.  The standalone stream,
  which any replica may write, is numbered by the store.  While the store is
  unreachable the events wait, up to ``WRITE_BACKLOG``.
* ``StreamRelay.replay`` serves a GET from the store's log and follows it:
  one connection holds the stream at a time (``Store.hold_stream``: a plain
  GET for a held standalone stream is 409, a resume takes it over), news
  comes as a bus message (``wake``, on ``StreamAppended``) or is looked for
  every ``POLL`` seconds.  When the stream's owner died before answering (its
  lease lapsed), the relay takes the stream over (``Store.take_over_stream``):
  the request is answered with an error numbered after the last event the
  client has, so no event is lost or repeated and the client may send it again.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Final

import attrs
import trio

from ...._sansio.framing.sse import encode_comment, encode_event
from ...._sansio.http.server import policy as sp
from ...._sansio.http.server.replay import STANDALONE_KEY, format_event_id
from ...._sansio.store.stream_log import LogSlice, StreamMeta
from ...._trio.http1.server import ClientGone, H1ServerConnection
from ...store.base import EventBatch, Store, StoreError
from .sessions import HttpSession
from .streams import SSE_HEADERS, OutStream

__all__ = ["COALESCE", "POLL", "WRITE_BACKLOG", "EventWriter", "StreamRelay"]

logger = logging.getLogger("trimcp.server.transports.http.app")

#: Seconds between a replay's own looks at the store (a bus message may be lost).
POLL: Final = 1.0
#: Seconds an event may wait before the EventWriter writes it to the store (with the others).
COALESCE: Final = 0.01
#: Events a replica may hold for the store while it cannot write them (the oldest go first).
WRITE_BACKLOG: Final = 100_000


@attrs.define
class _Pending:
    meta: StreamMeta
    events: list[tuple[int | None, bytes]] = attrs.field(factory=list)
    finished: bool = False
    #: This replica's stream the events are of (a POST stream), if it still holds it.
    stream: OutStream | None = None

    @property
    def delivered(self) -> bool:
        """Every event was written to the client's connection and the stream answered:
        nobody can resume it (as with one process: a finished stream is forgotten)."""
        stream = self.stream
        return stream is not None and stream.finished and stream.delivered >= stream.buffer.last_seq


class EventWriter:
    """Writes the events of this replica's resumable streams to the store, in order, in
    batches: ``write`` never blocks; ``run`` writes what came meanwhile, then waits."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pending: dict[tuple[str, str], _Pending] = {}
        self._count = 0
        self._ready = trio.Event()
        #: Events dropped because the store could not take them (for logs and tests).
        self.dropped = 0

    def write(
        self,
        session_id: str,
        key: str,
        meta: StreamMeta,
        seq: int | None,
        payload: bytes | None,
        finished: bool,
        stream: OutStream | None = None,
    ) -> None:
        pending = self._pending.get((session_id, key))
        if pending is None:
            pending = self._pending[session_id, key] = _Pending(meta, stream=stream)
        if payload is not None:
            pending.events.append((seq, payload))
            self._count += 1
        pending.finished = pending.finished or finished
        self._ready.set()
        if self._count > WRITE_BACKLOG:
            self._shed()

    def _shed(self) -> None:
        # The store has been unreachable for long: keep the newest, say how many went.
        oldest = next(iter(self._pending))
        self.dropped += len(self._pending.pop(oldest).events)
        self._count = sum(len(p.events) for p in self._pending.values())
        logger.error("the store is not keeping up: %d stream events dropped so far", self.dropped)

    async def run(self) -> None:
        while True:
            await self._ready.wait()
            # ``COALESCE`` seconds first: the connections these events are for write them
            # meanwhile, a stream answered and written by then needs no copy in the store, and
            # what the others wrote goes in one batch.
            await trio.sleep(COALESCE)
            self._ready = trio.Event()
            batch, self._pending, self._count = self._pending, {}, 0
            batch = {where: p for where, p in batch.items() if not p.delivered}
            if not batch:
                continue
            batches = [EventBatch(sid, key, p.meta, tuple(p.events), p.finished) for (sid, key), p in batch.items()]
            try:
                await self.store.append_events(batches)
            except StoreError as exc:
                logger.warning("could not write %d streams' events to the store (will retry): %s", len(batches), exc)
                for (sid, key), p in batch.items():  # back in front, in order
                    later = self._pending.pop((sid, key), None)
                    if later is not None:
                        p.events += later.events
                        p.finished = p.finished or later.finished
                    self._pending[sid, key] = p
                    self._count += len(p.events)
                self._ready.set()
                await trio.sleep(0.5)


def _news(waker: trio.Event, scope: trio.CancelScope) -> Callable[[], Awaitable[None]]:
    async def wait() -> None:
        await waker.wait()
        scope.cancel()

    return wait


class StreamRelay:
    """Serves GETs for streams this replica does not hold, from the store (module docstring)."""

    def __init__(self, store: Store, *, retry_ms: int, keepalive: float | None) -> None:
        self.store = store
        self.retry_ms = retry_ms
        self.keepalive = keepalive
        self._wakers: dict[tuple[str, str], trio.Event] = {}

    def wake(self, session_id: str, key: str) -> None:
        """Events were added to the stream's log (a bus message said so)."""
        waker = self._wakers.pop((session_id, key), None)
        if waker is not None:
            waker.set()

    def _waker(self, session_id: str, key: str) -> trio.Event:
        waker = self._wakers.get((session_id, key))
        if waker is None:
            waker = self._wakers[session_id, key] = trio.Event()
        return waker

    async def _wait(self, http: H1ServerConnection, session_id: str, key: str) -> bool:
        """Until the stream has news, or ``POLL`` (or ``keepalive``) seconds; False for the
        keep-alive.  ``ClientGone`` when the client closes the connection."""
        keepalive = self.keepalive if self.keepalive is not None else float("inf")
        with trio.move_on_after(min(POLL, keepalive)) as idle:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_news(self._waker(session_id, key), nursery.cancel_scope))
                await http.watch_eof()
                raise ClientGone("the client closed the connection")
        return not idle.cancelled_caught

    async def replay(
        self, http: H1ServerConnection, session: HttpSession, key: str, cursor: int | None, *, priming: bool
    ) -> sp.Fact | None:
        """Serve a GET from the store's log of stream ``key`` (``cursor``: the client's
        ``Last-Event-ID``), and follow it; what to answer instead when it cannot."""
        session_id = session.id
        holder = secrets.token_hex(8)
        if not await self.store.hold_stream(session_id, key, holder, force=cursor is not None):
            return sp.StreamHeld(session_id)
        sent = cursor or 0
        log = await self.store.read_stream(session_id, key, sent)
        if log is None and key != STANDALONE_KEY:
            return sp.StreamGone(session_id)
        if log is not None and log.gap and cursor is not None:
            logger.warning(
                "%s: events after %s were dropped before the client resumed",
                session.describe(),
                format_event_id(key, sent),
            )
        session.replays += 1
        try:
            await self._follow(http, session, key, holder, sent, log, priming=priming)
        except ClientGone:
            http.peer_closed = True
        finally:
            session.replays -= 1
        return None

    async def _follow(
        self,
        http: H1ServerConnection,
        session: HttpSession,
        key: str,
        holder: str,
        sent: int,
        log: LogSlice | None,
        *,
        priming: bool,
    ) -> None:
        session_id = session.id
        http.cork()
        await http.start(200, SSE_HEADERS)
        if priming:
            await http.write(encode_event("", id=format_event_id(key, sent), retry=self.retry_ms))
        renewed = trio.current_time()
        since_news = 0.0
        while not session.closed:
            if log is not None:
                for seq, payload in log.events:
                    if seq > sent:
                        await http.write(encode_event(payload.decode("utf-8"), id=format_event_id(key, seq)))
                        sent = seq
                        since_news = 0.0
                if log.meta.finished and sent >= log.last_seq:
                    break
            await http.flush()
            news = await self._wait(http, session_id, key)
            since_news += POLL
            now = trio.current_time()
            if now - renewed > self.store.lease / 3:
                renewed = now
                if not await self.store.hold_stream(session_id, key, holder, force=False):
                    await http.write(f"retry: {self.retry_ms}\n\n".encode("ascii"))  # a newer GET took it
                    break
            if not news and self.keepalive is not None and since_news >= self.keepalive:
                await http.write(encode_comment())
                since_news = 0.0
            log = await self.store.read_stream(session_id, key, sent)
            if log is None and key != STANDALONE_KEY:
                break  # the session ended (its streams went with it)
            if (
                log is not None
                and key != STANDALONE_KEY
                and not log.events
                and not log.meta.finished
                and log.meta.owner != self.store.replica_id
                and not await self.store.replica_alive(log.meta.owner)
            ):
                logger.warning("%s: stream %s's replica is gone; answering its requests", session.describe(), key)
                await self.store.take_over_stream(session_id, key, sent)
                log = await self.store.read_stream(session_id, key, sent)
        await http.end()
        await http.uncork()
