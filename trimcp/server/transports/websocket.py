"""Serving a ``Server`` over WebSocket.

Theory of operation
-------------------
No MCP revision specifies WebSocket; the framing is that of the official SDKs'
WebSocket transports (subprotocol ``"mcp"``, one JSON-RPC message per text
frame), implemented by ``trimcp._trio.transports.websocket``.  This module is the server
half.  It runs the listeners itself (``trio.serve_listeners``) and hands each
TCP connection to trio-websocket's ``wrap_server_stream``, rather than using
trio-websocket's ``serve_websocket``, because the connection cap must act at
the TCP accept, before any handshake.  Each upgrade request is vetted before
it is accepted:

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
connection's task would stop the whole server, so a failing session (or
connection) is logged and only its connection closed.

Limits.  Every peer is a stranger; the defaults are the HTTP server's for the
same things (``serve_http``), and ``trimcp serve --ws`` sets them with the
same flags:

* connections (``max_connections``, 1000; ``--max-connections``): counted from
  the TCP accept by the HTTP server's ``ConnectionLimit``, so a connection still
  in its handshake holds a slot too.  One over the cap is answered with the
  ready-made ``503 Service Unavailable`` (``Retry-After: 1``,
  ``Connection: close``) without its request being read, and closed;
* the opening handshake (``handshake_timeout``, 10 s; ``--header-timeout``):
  from the accept until the 101 (or the refusal) is written, TLS included.
  A client that has not sent a whole upgrade request by then is dropped
  without an answer, as trio-websocket's own server does.  A rejected client
  (403, 400) gets a second to read the answer and hang up, then is dropped:
  trio-websocket would otherwise wait for it to close the socket forever;
* one message (``max_message_size``, 64 MiB; ``--max-message``): counted by
  trio-websocket while the message arrives, which closes the connection with
  1009 "message too big" once it passes the cap (``WebSocketStream`` checks
  the encoded bytes again).  The head of the upgrade request is bounded by
  h11 inside wsproto (16 KiB);
* idleness (``session_idle_timeout``, 3600 s; ``--idle-timeout``): here a
  connection *is* its session, so the session timeout applies, not the HTTP
  keep-alive one (closing a WebSocket ends its session; a client may sit
  quietly for minutes).  A connection is idle while no message goes either
  way (``WebSocketStream.last_activity``) *and* no request is outstanding
  (``SessionDriver.busy``: a tool still running, or a request to the client
  awaiting its answer); a request ends with a message (its answer or a
  cancellation), which restarts the clock.  Ping and pong frames do not
  count (trio-websocket answers them below us): a client keeps a quiet
  session alive with MCP's own ``ping``.  An idle connection is closed with
  1001 "going away" and reason ``"idle timeout"``: 1000 would say the
  connection's purpose was fulfilled, which is the client's call; 1001 says
  this end is leaving, as at shutdown, and a client may reconnect.

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
from ..._trio.driver import SessionDriver
from ..._trio.http_limits import ConnectionLimit, SlotStream
from ..._trio.transports.websocket import (
    DEFAULT_MAX_MESSAGE_SIZE,
    GOING_AWAY,
    SUBPROTOCOL,
    WebSocketStream,
    map_websocket_errors,
)
from ..definition import Server
from ..serve import serve_stream
from ..server_session import ServerSession

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
#: The defaults of the limits, those of the HTTP server (``serve_http``) for the same things.
DEFAULT_MAX_CONNECTIONS: Final = 1000
DEFAULT_HANDSHAKE_TIMEOUT: Final = 10.0
DEFAULT_SESSION_IDLE_TIMEOUT: Final = 3600.0
#: The close reason sent with 1001 to a connection that stayed idle too long.
IDLE_REASON: Final = "idle timeout"
#: How long a rejected upgrade may wait for the client to hang up after reading the answer.
_REJECT_LINGER: Final = 1.0


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


def _peer_address(stream: trio.abc.Stream) -> str:
    """``address:port`` of the client at the other end of ``stream`` (TCP or TLS over TCP)."""
    inner = stream.transport_stream if isinstance(stream, trio.SSLStream) else stream
    if isinstance(inner, trio.SocketStream):
        try:
            address, port = inner.socket.getpeername()[:2]
        except OSError:  # already gone
            return "unknown"
        return f"[{address}]:{port}" if ":" in str(address) else f"{address}:{port}"
    return repr(stream)


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
        await request.reject(400, body=f"MCP over WebSocket needs Sec-WebSocket-Protocol: {SUBPROTOCOL}\n".encode())
        return None
    return await request.accept(subprotocol=SUBPROTOCOL)


async def serve_websocket_streams(
    handler: Callable[[WebSocketStream], Awaitable[object]],
    host: str | None = "127.0.0.1",
    port: int = 0,
    *,
    allowed_origins: Collection[str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    ssl_context: ssl.SSLContext | None = None,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    disconnect_timeout: float = 5.0,
    task_status: trio.TaskStatus[WebSocketListener] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Accept MCP WebSocket connections and run ``handler(stream)`` for each, until cancelled.

    The general form of ``serve_websocket``: the stream is closed when the
    handler returns, and an exception from the handler is logged.  Idleness is
    the handler's business (``serve_websocket`` times sessions out).
    """
    limit = ConnectionLimit(max_connections)
    live: set[WebSocketStream] = set()
    shelter = trio.CancelScope(shield=True)  # see the module docstring

    async def host_connections(*, task_status: trio.TaskStatus[trio.Nursery]) -> None:
        with shelter:
            async with trio.open_nursery() as connections:
                task_status.started(connections)
                await trio.sleep_forever()

    async def upgrade(
        reader: trio.Nursery, tcp: trio.abc.Stream, peer: str
    ) -> tuple[trio_websocket.WebSocketConnection, str] | None:
        """The opening handshake, all of it within ``handshake_timeout``; ``None``: not accepted
        (and ``reader``, where trio-websocket's reader task runs, told when to stop)."""
        with trio.move_on_after(handshake_timeout):
            request = await trio_websocket.wrap_server_stream(reader, tcp, max_message_size=max_message_size)
            name = f"client {peer}{request.path}"
            try:
                with map_websocket_errors(f"WebSocket {name}"):
                    ws = await _vet(request, name, allowed_origins)
            except ConnectError as exc:
                logger.debug("WebSocket %s went away during the handshake: %s", name, exc)
                reader.cancel_scope.cancel()
                return None
            if ws is None:  # rejected: give the client a moment to read the answer and hang up
                reader.cancel_scope.deadline = trio.current_time() + _REJECT_LINGER
                return None
            return ws, name
        logger.info("WebSocket: no upgrade request within %g s; connection dropped", handshake_timeout)
        reader.cancel_scope.cancel()
        return None

    async def serve_connection(tcp: trio.abc.Stream, peer: str) -> None:
        try:
            async with trio.open_nursery() as reader:
                accepted = await upgrade(reader, tcp, peer)
                if accepted is None:
                    return
                ws, name = accepted
                stream = WebSocketStream(
                    ws,
                    name=name,
                    max_message_size=max_message_size,
                    disconnect_timeout=disconnect_timeout,
                )
                live.add(stream)
                try:
                    await handler(stream)
                except Exception:
                    logger.exception("WebSocket session with %s failed", stream.name)
                finally:
                    live.discard(stream)
                    await stream.aclose()  # the closing handshake is over (or timed out)
                    reader.cancel_scope.cancel()
        finally:
            await trio.aclose_forcefully(tcp)

    async def on_connection(tcp: trio.abc.Stream) -> None:
        # Counted from the TCP accept, as the HTTP server does: a connection still in its
        # handshake holds a slot too, and one over the cap costs no parsing at all.
        slot = limit.admit()
        if slot is None:
            logger.debug("WebSocket: %d connections open; one more refused (503)", limit.open)
            await limit.refuse(tcp)
            return
        try:
            # The slot goes back as the socket closes, whoever closes it (trio-websocket does
            # after a closing handshake), so a client that sees the end finds the slot free.
            await serve_connection(SlotStream(tcp, slot), _peer_address(tcp))
        except Exception:  # e.g. trio-websocket's reader failing: end this connection only
            logger.exception("WebSocket connection failed")
        finally:
            slot.release()

    listeners: list[trio.SocketListener | trio.SSLListener[trio.SocketStream]] = []
    if ssl_context is None:
        listeners.extend(await trio.open_tcp_listeners(port, host=host))
    else:
        listeners.extend(await trio.open_ssl_over_tcp_listeners(port, ssl_context, host=host, https_compatible=True))
    async with trio.open_nursery() as nursery:
        connections = await nursery.start(host_connections)
        try:
            await nursery.start(partial(trio.serve_listeners, on_connection, listeners, handler_nursery=connections))
            addresses = tuple(_bound(listener) for listener in listeners)
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


def _bound(listener: trio.SocketListener | trio.SSLListener[trio.SocketStream]) -> tuple[str, int]:
    inner = listener.transport_listener if isinstance(listener, trio.SSLListener) else listener
    assert isinstance(inner, trio.SocketListener)
    address, port = inner.socket.getsockname()[:2]
    return str(address), int(port)


async def _close_when_idle(stream: WebSocketStream, driver: SessionDriver, timeout: float) -> None:
    """Close ``stream`` with 1001 once no message went either way for ``timeout`` seconds
    while no request was outstanding (see the module docstring)."""
    deadline = stream.last_activity + timeout
    while True:
        await trio.sleep_until(deadline)
        now = trio.current_time()
        if driver.busy:
            # A request ends with a message (its answer, or a cancellation), which restarts the clock.
            deadline = now + timeout
            continue
        deadline = stream.last_activity + timeout
        if deadline <= now:
            break
    logger.info("WebSocket %s: idle for %g s; closing it", stream.name, timeout)
    await stream.close(GOING_AWAY, IDLE_REASON)


async def serve_websocket(
    server: Server,
    host: str | None = "127.0.0.1",
    port: int = 0,
    *,
    allowed_origins: Collection[str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    max_connections: int | None = DEFAULT_MAX_CONNECTIONS,
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
    disconnect_timeout: float = 5.0,
    task_status: trio.TaskStatus[WebSocketListener] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Serve ``server`` to WebSocket clients on ``host``:``port`` (0: any free port) until cancelled.

    ``allowed_origins`` lists the browser origins allowed to connect
    (``None``: localhost origins only; ``["*"]``: any); requests without an
    ``Origin`` header (non-browser clients) are always allowed.
    ``max_message_size`` caps one incoming message in bytes (over it: close
    1009); ``max_connections`` caps the open connections (more get HTTP 503;
    ``None``: no cap); ``session_idle_timeout`` closes (1001) a connection
    with no message either way and no request outstanding for that many
    seconds (``None``: never); ``ssl_context`` (a server context with its
    certificate loaded) makes it ``wss://``; ``handshake_timeout`` bounds a
    client's whole upgrade, from the TCP accept, and ``disconnect_timeout`` a
    closing handshake.
    """
    if session_idle_timeout is not None and not session_idle_timeout > 0:
        raise ValueError("session_idle_timeout must be positive (or None)")

    async def session(stream: WebSocketStream) -> None:
        if session_idle_timeout is None:
            await serve_stream(server, stream)
            return
        async with trio.open_nursery() as nursery:

            async def run(*, task_status: trio.TaskStatus[ServerSession]) -> None:
                try:
                    await serve_stream(server, stream, task_status=task_status)
                finally:
                    nursery.cancel_scope.cancel()  # the session is over: so is its idle timer

            served = await nursery.start(run)
            await _close_when_idle(stream, served.driver, session_idle_timeout)

    async with server.tasks.hosting():  # ext-tasks runs outlive the connection that started them
        await serve_websocket_streams(
            session,
            host,
            port,
            allowed_origins=allowed_origins,
            max_message_size=max_message_size,
            max_connections=max_connections,
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
