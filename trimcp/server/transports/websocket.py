"""Serving a ``Server`` over WebSocket.

Theory of operation
-------------------
No MCP revision specifies WebSocket; the framing is that of the official SDKs'
WebSocket transports (subprotocol ``"mcp"``, one JSON-RPC message per text
frame), implemented by ``trimcp._trio.transports.websocket``.  This module is the server
half: trio-websocket's ``serve_websocket`` runs the listeners, and each
upgrade request is vetted before it is accepted:

* the ``Origin`` header, when present (browsers always send one, other
  clients need not), must be allowed - by default only ``http(s)://`` origins
  on ``localhost``, ``127.0.0.1`` or ``[::1]`` - or the answer is HTTP 403:
  the DNS-rebinding defence the Streamable HTTP transport prescribes;
* a request that does not offer subprotocol ``"mcp"`` gets HTTP 400.

An accepted connection becomes a ``WebSocketStream`` and gets its own session
through ``serve_stream``, exactly as stdio gets one per process: a fresh
server-role ``Connection`` and ``ServerSession``, so broadcasts reach every
client and one client leaving (or misbehaving) ends only its own session.
Both eras are served: a handshake-era client runs ``initialize``, a
2026-07-28 client probes with ``server/discover``.  An exception escaping a
trio-websocket handler would stop the whole server, so a failing session is
logged and only its connection closed.

Shutdown (cancellation): the listeners close first, then every open
connection is closed with 1001 "going away", then what is left of the
sessions is cancelled.  The connections live in a nursery shielded from our
cancellation until then, because a closing handshake needs the connection's
reader task to see the client's answer; without the shield every shutdown
would wait out ``disconnect_timeout``.

Trio's ``serve_*`` convention: ``listener = await nursery.start(
serve_websocket, server)`` returns a ``WebSocketListener`` (``.url``,
``.port``) once connections are accepted; it runs until cancelled.
``run_websocket`` is the blocking entry point for a script.  ``trimcp.server``
does not import this module (it imports trio-websocket):
``from trimcp.server.transports.websocket import serve_websocket``.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable, Collection
from functools import partial
from typing import Final, NoReturn
from urllib.parse import urlsplit

import attrs
import trio
import trio_websocket

from ..._errors import ConnectError
from ..._trio.transports.websocket import (
    DEFAULT_MAX_MESSAGE_SIZE, GOING_AWAY, SUBPROTOCOL, WebSocketStream, map_websocket_errors,
)
from ..definition import Server
from ..serve import serve_stream

__all__ = [
    "WebSocketListener",
    "origin_allowed",
    "run_websocket",
    "serve_websocket",
    "serve_websocket_streams",
]

logger = logging.getLogger("trimcp.websocket")

#: Host names whose origins are allowed by default.
LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})


@attrs.frozen
class WebSocketListener:
    """Where the server listens (what ``nursery.start(serve_websocket, ...)`` returns)."""

    #: ``(address, port)`` of each listening socket.
    addresses: tuple[tuple[str, int], ...]
    secure: bool = False

    @property
    def port(self) -> int:
        return self.addresses[0][1]

    @property
    def urls(self) -> tuple[str, ...]:
        scheme = "wss" if self.secure else "ws"
        return tuple(f"{scheme}://{f'[{a}]' if ':' in a else a}:{p}/" for a, p in self.addresses)

    @property
    def url(self) -> str:
        return self.urls[0]


def origin_allowed(origin: str | None, allowed: Collection[str] | None = None) -> bool:
    """Whether an upgrade request with this ``Origin`` header may proceed.

    No header: yes (not a browser).  ``allowed=None``: only ``http(s)://``
    origins on ``localhost``, ``127.0.0.1`` or ``[::1]``, any port.  Otherwise
    ``origin`` must equal one of ``allowed`` (case-insensitive, without a
    trailing slash), or ``allowed`` contains ``"*"``.
    """
    if origin is None:
        return True
    if allowed is None:
        try:
            parts = urlsplit(origin)
            hostname = parts.hostname or ""
        except ValueError:  # e.g. an unclosed IPv6 bracket
            return False
        return parts.scheme in ("http", "https") and hostname in LOCAL_HOSTS
    if "*" in allowed:
        return True
    return origin.rstrip("/").lower() in {a.rstrip("/").lower() for a in allowed}


def _peer_name(request: trio_websocket.WebSocketRequest) -> str:
    remote = request.remote
    if isinstance(remote, trio_websocket.Endpoint):
        address = str(remote.address)
        address = f"[{address}]" if ":" in address else address
        return f"client {address}:{remote.port}{request.path}"
    return f"client {remote}{request.path}"


async def _vet(
    request: trio_websocket.WebSocketRequest, name: str, allowed_origins: Collection[str] | None
) -> trio_websocket.WebSocketConnection | None:
    """Accept an upgrade request that passes the Origin and subprotocol checks; reject others."""
    origins = [v.decode("latin-1") for k, v in request.headers if k.lower() == b"origin"]
    if len(origins) > 1 or not origin_allowed(origins[0] if origins else None, allowed_origins):
        logger.info("WebSocket %s: origin %s not allowed", name, origins)
        await request.reject(403, body=b"Origin not allowed\n")
        return None
    if SUBPROTOCOL not in request.proposed_subprotocols:
        logger.info("WebSocket %s: no subprotocol %r offered", name, SUBPROTOCOL)
        await request.reject(
            400, body=f"MCP over WebSocket needs Sec-WebSocket-Protocol: {SUBPROTOCOL}\n".encode()
        )
        return None
    return await request.accept(subprotocol=SUBPROTOCOL)


async def serve_websocket_streams(
    handler: Callable[[WebSocketStream], Awaitable[object]],
    host: str | None = "127.0.0.1",
    port: int = 0,
    *,
    allowed_origins: Collection[str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ssl_context: ssl.SSLContext | None = None,
    handshake_timeout: float = 10.0,
    disconnect_timeout: float = 5.0,
    task_status: trio.TaskStatus[WebSocketListener] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Accept MCP WebSocket connections and run ``handler(stream)`` for each, until cancelled.

    The general form of ``serve_websocket``: the stream is closed when the
    handler returns, and an exception from the handler is logged.
    """
    live: set[WebSocketStream] = set()
    shelter = trio.CancelScope(shield=True)  # see the module docstring

    async def host_connections(*, task_status: trio.TaskStatus[trio.Nursery]) -> None:
        with shelter:
            async with trio.open_nursery() as connections:
                task_status.started(connections)
                await trio.sleep_forever()

    async def on_request(request: trio_websocket.WebSocketRequest) -> None:
        name = _peer_name(request)
        try:
            with map_websocket_errors(f"WebSocket {name}"):
                ws = await _vet(request, name, allowed_origins)
        except ConnectError as exc:
            logger.debug("WebSocket %s went away during the handshake: %s", name, exc)
            return
        if ws is None:
            return
        stream = WebSocketStream(
            ws, name=name, max_message_size=max_message_size, disconnect_timeout=disconnect_timeout
        )
        live.add(stream)
        try:
            await handler(stream)
        except Exception:
            logger.exception("WebSocket session with %s failed", name)
        finally:
            live.discard(stream)
            await stream.aclose()

    async with trio.open_nursery() as nursery:
        connections = await nursery.start(host_connections)
        try:
            server = await nursery.start(
                partial(
                    trio_websocket.serve_websocket,
                    on_request,
                    host,
                    port,
                    ssl_context,
                    handler_nursery=connections,
                    max_message_size=max_message_size,
                    connect_timeout=handshake_timeout,
                    disconnect_timeout=disconnect_timeout,
                )
            )
            addresses = tuple(
                (str(e.address), e.port)
                for e in server.listeners
                if isinstance(e, trio_websocket.Endpoint)
            )
            task_status.started(WebSocketListener(addresses, secure=ssl_context is not None))
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                with trio.move_on_after(disconnect_timeout):
                    async with trio.open_nursery() as closers:
                        for stream in list(live):
                            closers.start_soon(stream.close, GOING_AWAY, "server shutting down")
                shelter.cancel()
    raise AssertionError("unreachable")  # pragma: no cover


async def serve_websocket(
    server: Server,
    host: str | None = "127.0.0.1",
    port: int = 0,
    *,
    allowed_origins: Collection[str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ssl_context: ssl.SSLContext | None = None,
    handshake_timeout: float = 10.0,
    disconnect_timeout: float = 5.0,
    task_status: trio.TaskStatus[WebSocketListener] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Serve ``server`` to WebSocket clients on ``host``:``port`` (0: any free port) until cancelled.

    ``allowed_origins`` lists the browser origins allowed to connect
    (``None``: localhost origins only; ``["*"]``: any); requests without an
    ``Origin`` header (non-browser clients) are always allowed.
    ``max_message_size`` caps one incoming message in bytes; ``ssl_context``
    (a server context with its certificate loaded) makes it ``wss://``;
    ``handshake_timeout`` bounds a client's upgrade request and
    ``disconnect_timeout`` a closing handshake.
    """

    async def session(stream: WebSocketStream) -> None:
        await serve_stream(server, stream)

    async with server.tasks.hosting():  # ext-tasks runs outlive the connection that started them
        await serve_websocket_streams(
            session,
            host,
            port,
            allowed_origins=allowed_origins,
            max_message_size=max_message_size,
            ssl_context=ssl_context,
            handshake_timeout=handshake_timeout,
            disconnect_timeout=disconnect_timeout,
            task_status=task_status,
        )


def run_websocket(
    server: Server,
    host: str | None = "127.0.0.1",
    port: int = 0,
    *,
    on_listening: Callable[[WebSocketListener], object] | None = None,
    allowed_origins: Collection[str] | None = None,
) -> None:
    """Blocking entry point: serve until interrupted (Ctrl-C).  ``on_listening`` is called
    with the ``WebSocketListener`` once clients can connect (e.g. to print its ``url``)."""

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            serve = partial(serve_websocket, server, host, port, allowed_origins=allowed_origins)
            listener = await nursery.start(serve)
            if on_listening is not None:
                on_listening(listener)

    try:
        trio.run(main)
    except KeyboardInterrupt:
        pass
