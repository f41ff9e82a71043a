"""The deprecated HTTP+SSE transport of 2024-11-05, server side.

Theory of operation
-------------------
Spec 2024-11-05, basic/transports, "HTTP with SSE": the client opens a
long-lived GET on the SSE endpoint; the server's first event is ``endpoint``,
whose data is the URI to POST messages to, and every later event is a
``message`` holding one JSON-RPC message.  The client POSTs each of its
messages to that URI; the server answers 202 and sends any reply on the SSE
stream.  There is one session per SSE connection: ``LegacySession`` is its
``MessageStream`` (POST bodies in, the SSE stream out), served by
``serve_stream`` for exactly as long as the GET stays open.  A POSTed
JSON-RPC batch is accepted when the session negotiated a revision that has
batches (2025-03-26; ``routing.check_batch``), and its answers arrive as
separate ``message`` events.  The POST URI
names the session in a ``session_id`` query parameter (a ``secrets`` token),
so a POST for a session that is gone, or never was, is 404.

What each request gets is decided by the server's policy
(``_sansio/http/server/policy.py``), with the same DNS-rebinding checks as
Streamable HTTP; ``LegacyEndpoints`` holds the sessions and serves the SSE
stream of each, and gets the server and the options it needs from ``HttpApp``
and knows nothing else of it.  Events carry no ids: this transport has no
resumption.
"""

from __future__ import annotations

import secrets

import trio

from ...._errors import TransportClosed
from ...._sansio import jsonrpc as rpc
from ...._sansio.framing.sse import encode_event
from ...._sansio.http.server import routing as hs
from ...._sansio.http.server.replay import DEFAULT_REPLAY_BYTES, DEFAULT_REPLAY_EVENTS, ReplayBuffer
from ...._trio.http1.server import H1ServerConnection
from ...._trio.stream import NO_META, Received, SendMeta
from ...definition import Server
from ...serve import serve_stream
from ...server_session import ServerSession
from .streams import OutStream, ResponseMode, write_response


class LegacySession:
    """One HTTP+SSE session, as a MessageStream for ``serve_stream``."""

    def __init__(self, session_id: str, *, inbox_size: int = 64) -> None:
        self.id = session_id
        self._inbox_send, self._inbox_recv = trio.open_memory_channel[Received](inbox_size)
        self.out = OutStream("L", ReplayBuffer(DEFAULT_REPLAY_EVENTS, DEFAULT_REPLAY_BYTES), event_type="message")
        self.closed = False
        #: Set once ``serve_stream`` runs.
        self.server_session: ServerSession | None = None

    def describe(self) -> str:
        return f"HTTP+SSE session {self.id[:8]}..."

    @property
    def protocol_version(self) -> str | None:
        return self.server_session.connection.protocol_version if self.server_session else None

    async def receive(self) -> Received:
        try:
            return await self._inbox_recv.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed(f"{self.describe()} ended") from None

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if self.closed:
            raise TransportClosed(f"{self.describe()} ended")
        self.out.push(message)

    async def submit(self, received: Received) -> None:
        try:
            await self._inbox_send.send(received)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise TransportClosed(f"{self.describe()} ended") from None

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self._inbox_send.close()
            self._inbox_recv.close()
            self.out.finish()
        await trio.lowlevel.checkpoint()


class LegacyEndpoints:
    """The legacy sessions, and the SSE stream of each (``HttpApp`` carries out the
    policy's ``OpenLegacyStream`` and ``SubmitToLegacySession`` with them)."""

    def __init__(self, server: Server, messages_path: str, *, keepalive: float | None) -> None:
        self.server = server
        self.messages_path = messages_path
        self.keepalive = keepalive
        self.sessions: dict[str, LegacySession] = {}

    async def open_stream(self, http: H1ServerConnection) -> None:
        """A new session, served for as long as the client keeps this SSE GET open."""
        session = LegacySession(secrets.token_urlsafe(32))
        self.sessions[session.id] = session
        endpoint = encode_event(hs.legacy_endpoint_url(self.messages_path, session.id), event="endpoint")
        try:
            async with trio.open_nursery() as nursery:
                session.server_session = await nursery.start(serve_stream, self.server, session)
                try:
                    await write_response(
                        http,
                        session.out,
                        mode=ResponseMode.SSE,
                        preamble=endpoint,
                        keepalive=self.keepalive,
                    )
                finally:
                    # The client left (or the server stops): the session ends.
                    await session.aclose()
        finally:
            self.sessions.pop(session.id, None)


__all__ = ["LegacyEndpoints", "LegacySession"]
