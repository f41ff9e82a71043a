"""The MessageStreams behind Streamable HTTP: one per session, one per stateless request.

Theory of operation
-------------------
The server framework serves any ``MessageStream`` with ``serve_stream``: one
server ``Connection`` and ``SessionDriver`` per stream.  HTTP has no single
stream, so this module makes one.

``HttpSession`` is a handshake-era session (spec 2025-11-25, transports,
"Session Management"), created by a POSTed ``initialize``.  Every later POST
body is queued to the driver's reader through a bounded channel
(``submit``), as the ``Received`` the HTTP side made of it (the body is
parsed once, by ``routing.parse_post``); everything the driver sends comes
back through ``send`` and is *routed* to the right ``OutStream``:

* an answer to request *N* goes to the stream of the POST that carried *N*
  (a 2025-03-26 batch: one stream for all of its requests);
* ``notifications/progress`` goes to the stream of the request that owns its
  progress token;
* change notifications (``list_changed``, ``resources/updated``) concern the
  session, not a request: they go to the standalone (GET) stream;
* anything else - server requests (sampling, elicitation, roots), log
  messages, cancellations - goes to the stream of the client request whose
  handler sent it, and to the standalone stream when there is none (or the
  request is answered as plain JSON, which cannot carry them).

"Whose handler sent it" comes with the message: the driver hands every
message over with its ``SendMeta``, whose ``related_request`` names the
client request being handled (a handler's progress, logs and nested requests
carry it).  ``send`` never blocks (it only appends to a buffer).

The standalone stream is always there; messages for it wait in its bounded
buffer until a GET attaches, and a GET with ``Last-Event-ID`` re-attaches to
whichever stream the id names and replays what followed.  Finished POST
streams are kept (a bounded number) until their answer was written, so that
a client that lost the connection can still fetch it.

A server run as replicas keeps its sessions in a shared store (issue 30);
the session then has a ``log`` (``replicas.EventWriter``): every event of a
resumable stream is also written there, numbered as it was sent, so that a
client may resume it on any replica; the standalone stream, which any
replica may write and any may serve, lives only there (a GET reads it from
the store: ``replicas.Replicas.replay``).  Stream keys then begin with the
replica's id, so that keys stay unique in the session whichever replica
opened them.

``RequestStream`` serves one 2026-07-28 stateless request: ``receive``
hands over the parsed POST body once and then waits for the end; every message the
driver sends belongs to that request.  Each stateless request gets its own
Connection (the ``_meta`` envelope carries all it needs), so request ids
and progress tokens of different clients never meet.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final, Protocol

import trio

from ...._errors import TransportClosed
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.server.replay import (
    DEFAULT_REPLAY_BYTES,
    DEFAULT_REPLAY_EVENTS,
    STANDALONE_KEY,
    ReplayBuffer,
)
from ...._sansio.store.stream_log import StreamMeta
from ...._trio.stream import NO_META, Received, SendMeta
from ...server_session import ServerSession
from .streams import OutStream

#: The standalone stream's meta in a shared store: every replica writes it.
STANDALONE_META: Final = StreamMeta("")


class StreamLogWriter(Protocol):
    """Where a session's resumable streams are also written, in a shared store."""

    def write(
        self,
        session_id: str,
        key: str,
        meta: StreamMeta,
        seq: int | None,
        payload: bytes | None,
        finished: bool,
        stream: OutStream | None = None,
    ) -> None: ...


logger = logging.getLogger("trimcp.server.transports.http.app")

SESSION_WIDE: Final = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)
#: Finished-but-unwritten POST streams a session keeps for resumption.
RETAINED_STREAMS: Final = 64


def _progress_token(message: rpc.Message) -> str | int | None:
    params = message.params if isinstance(message, (rpc.Request, rpc.Notification)) else None
    if isinstance(message, rpc.Notification):
        token = (params or {}).get("progressToken")
    else:
        meta = (params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if rpc.is_valid_id(token) else None


class HttpSession:
    """A handshake-era Streamable HTTP session, as a MessageStream for ``serve_stream``."""

    def __init__(
        self,
        session_id: str,
        *,
        replay_events: int = DEFAULT_REPLAY_EVENTS,
        replay_bytes: int = DEFAULT_REPLAY_BYTES,
        inbox_size: int = 64,
        replica_id: str = "",
        log: StreamLogWriter | None = None,
    ) -> None:
        self.id = session_id
        #: The replica this copy of the session lives in (``""``: the only one): it begins
        #: the keys of the streams opened here.
        self.replica_id = replica_id
        #: Shared store: where resumable streams are written too (see the module docstring).
        self.log = log
        #: GETs replaying this session's streams from the store, here.
        self.replays = 0
        #: Shared store: another connection reads the standalone stream (the app asks the
        #: store before the policy looks).
        self.standalone_held = False
        self.replay_events = replay_events
        self.replay_bytes = replay_bytes
        self._inbox_send, self._inbox_recv = trio.open_memory_channel[Received](inbox_size)
        #: Client requests awaiting their answer -> their stream.
        self.exchanges: dict[rpc.RequestId, OutStream] = {}
        #: Streams a GET with ``Last-Event-ID`` may resume, by key.
        self.streams: OrderedDict[str, OutStream] = OrderedDict()
        self.standalone = OutStream(STANDALONE_KEY, self._buffer(), resumable=True)
        self.streams[STANDALONE_KEY] = self.standalone
        self._progress: dict[str | int, rpc.RequestId] = {}
        self._next_key = 1
        self.closed = False
        #: Set by the HTTP server once ``serve_stream`` runs.
        self.server_session: ServerSession | None = None
        self.last_active = trio.current_time()

    def __repr__(self) -> str:
        return f"<HttpSession {self.id[:8]}... exchanges={len(self.exchanges)}>"

    def describe(self) -> str:
        return f"Streamable HTTP session {self.id[:8]}..."

    def _buffer(self) -> ReplayBuffer:
        return ReplayBuffer(self.replay_events, self.replay_bytes)

    @property
    def protocol_version(self) -> str | None:
        return self.server_session.connection.protocol_version if self.server_session else None

    def touch(self) -> None:
        self.last_active = trio.current_time()

    @property
    def busy(self) -> bool:
        """Whether a request is in flight or a connection is attached."""
        return bool(self.exchanges) or self.replays > 0 or any(s.attached for s in self.streams.values())

    # ------------------------------------------------------------ what the policy sees

    def in_flight(self, request_id: rpc.RequestId) -> bool:
        return request_id in self.exchanges

    @property
    def standalone_attached(self) -> bool:
        return self.standalone.attached or self.standalone_held

    def has_stream(self, key: str) -> bool:
        """Whether a GET with ``Last-Event-ID`` can resume stream ``key`` (with a shared
        store, the store is asked when it is not here)."""
        return key in self.streams or self.log is not None

    # ------------------------------------------------------------ MessageStream

    async def receive(self) -> Received:
        try:
            return await self._inbox_recv.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed(f"{self.describe()} ended") from None

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        # Never blocks (see the module docstring).
        if self.closed:
            raise TransportClosed(f"{self.describe()} ended")
        self._route(message, meta.related_request)

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self._inbox_send.close()
            self._inbox_recv.close()
            for stream in self.streams.values():
                stream.finish()
            for stream in self.exchanges.values():
                stream.finish()
            self.exchanges.clear()
        await trio.lowlevel.checkpoint()

    # ------------------------------------------------------------ HTTP side

    def open_exchange(self, requests: Sequence[rpc.Request], *, sse: bool, batch: bool = False) -> OutStream:
        """The stream that will carry the answers to the ``requests`` of one POST (one, or
        those of a batch); register it before submitting them."""
        key = f"{self.replica_id}{self._next_key}"
        self._next_key += 1
        stream = OutStream(
            key,
            self._buffer(),
            final_ids=[r.id for r in requests],
            batch=batch,
            resumable=sse,
            accepts_related=sse,
        )
        for request in requests:
            self.exchanges[request.id] = stream
            token = _progress_token(request)
            if token is not None:
                self._progress[token] = request.id
        if sse:
            self.streams[key] = stream
            self._trim()
        return stream

    async def submit(self, received: Received) -> None:
        """Queue a POST body, as the HTTP side parsed it, for the session's reader."""
        self.touch()
        try:
            try:
                # Room in the inbox (the common case): no scheduler pass for queueing it.
                self._inbox_send.send_nowait(received)
            except trio.WouldBlock:
                await self._inbox_send.send(received)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TransportClosed(f"{self.describe()} ended") from None

    def stream_done(self, stream: OutStream) -> None:
        """Its final answer was written: nobody will resume it."""
        if stream.key != STANDALONE_KEY:
            self.streams.pop(stream.key, None)

    def cancelled(self, request_id: object) -> None:
        """The client cancelled its request ``request_id`` (``notifications/cancelled``).

        The Connection will suppress the answer (spec: Cancellation), so the
        request's stream ends here, unanswered, and is not kept for resumption
        (the stream of a batch ends once its other requests are answered).
        """
        if not isinstance(request_id, (int, str)) or not rpc.is_valid_id(request_id):
            return
        stream = self.exchanges.pop(request_id, None)
        if stream is None:
            return
        for token in [t for t, rid in self._progress.items() if rid == request_id]:
            del self._progress[token]
        stream.drop_final(request_id)
        if stream.finished and self.log is not None and stream.resumable:
            self.log.write(self.id, stream.key, self._meta(stream), None, None, True)
        if stream.cancelled:
            self.streams.pop(stream.key, None)

    def hang_up(self, request_id: rpc.RequestId) -> bool:
        """Close the connection carrying request ``request_id``'s stream; the client
        resumes with ``Last-Event-ID`` (SSE polling, 2025-11-25)."""
        stream = self.exchanges.get(request_id)
        return stream is not None and stream.hang_up()

    def _trim(self) -> None:
        extra = len(self.streams) - RETAINED_STREAMS - 1
        if extra <= 0:
            return
        for key, stream in list(self.streams.items()):
            if extra <= 0:
                break
            if key != STANDALONE_KEY and stream.finished and not stream.attached:
                del self.streams[key]
                extra -= 1

    # ------------------------------------------------------------ routing

    def _route(self, message: rpc.Message, related: rpc.RequestId | None) -> None:
        target = self._target(message, related)
        if target is None:
            logger.debug("%s: no stream for %r; dropped", self.describe(), message)
            return
        if self.log is not None and target is self.standalone:
            # Every replica writes it and any may serve it: numbered by the store.
            self.log.write(self.id, STANDALONE_KEY, STANDALONE_META, None, rpc.serialize(message), False)
            return
        seq, payload = target.push(message)
        if self.log is not None and target.resumable:
            self.log.write(self.id, target.key, self._meta(target), seq, payload, target.finished, target)
        if isinstance(message, (rpc.Response, rpc.ErrorResponse)) and message.id is not None:
            self.exchanges.pop(message.id, None)
            for token in [t for t, rid in self._progress.items() if rid == message.id]:
                del self._progress[token]

    def _meta(self, stream: OutStream) -> StreamMeta:
        return StreamMeta(self.replica_id, stream.final_ids)

    def _target(self, message: rpc.Message, related: rpc.RequestId | None) -> OutStream | None:
        if isinstance(message, (rpc.Response, rpc.ErrorResponse)):
            if message.id is not None and message.id in self.exchanges:
                return self.exchanges[message.id]
            # An answer nobody waits for (e.g. to unparsable input) may not go on
            # the standalone stream (spec: it never carries responses).
            return None
        if isinstance(message, rpc.Notification):
            if message.method in SESSION_WIDE:
                return self.standalone
            if message.method == "notifications/progress":
                token = _progress_token(message)
                owner = self.exchanges.get(self._progress[token]) if token in self._progress else None
                if owner is not None and owner.accepts_related:
                    return owner
        if related is not None:
            owner = self.exchanges.get(related)
            if owner is not None and owner.accepts_related:
                return owner
        return self.standalone


class RequestStream:
    """One stateless-era request, as a MessageStream for ``serve_stream``."""

    def __init__(
        self,
        received: Received,
        request_id: rpc.RequestId,
        *,
        max_events: int = DEFAULT_REPLAY_EVENTS,
    ) -> None:
        self._received: Received | None = received
        self.out = OutStream("r", ReplayBuffer(max_events, DEFAULT_REPLAY_BYTES), final_ids=[request_id])
        self._closed = trio.Event()

    def describe(self) -> str:
        return f"stateless HTTP request {self.out.final_id!r}"

    async def receive(self) -> Received:
        if self._received is not None and not self._closed.is_set():
            received, self._received = self._received, None
            await trio.lowlevel.checkpoint()
            return received
        await self._closed.wait()
        raise TransportClosed(f"{self.describe()} ended")

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if self._closed.is_set():
            raise TransportClosed(f"{self.describe()} ended")
        self.out.push(message)

    async def aclose(self) -> None:
        self._closed.set()
        self.out.finish()
        await trio.lowlevel.checkpoint()


def close_sse_stream(session: ServerSession, request_id: rpc.RequestId) -> bool:
    """Close the HTTP connection carrying request ``request_id``'s SSE stream,
    without ending the stream: the client reconnects after ``retry`` ms with
    ``Last-Event-ID`` and gets the rest (SSE polling, spec 2025-11-25).  A tool
    calls it as ``close_sse_stream(ctx.session, ctx.request_id)``; False when the
    request is not on a resumable HTTP stream."""
    transport = session.driver.stream
    return isinstance(transport, HttpSession) and transport.hang_up(request_id)


__all__ = ["SESSION_WIDE", "STANDALONE_META", "HttpSession", "RequestStream", "StreamLogWriter", "close_sse_stream"]
