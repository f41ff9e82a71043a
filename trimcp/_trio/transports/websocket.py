"""The WebSocket transport over trio-websocket: the stream (both sides) and the client.

Theory of operation
-------------------
No MCP revision specifies WebSocket; this follows the official SDKs (the
TypeScript ``WebSocketClientTransport``, the Python ``websocket_client``): the
client asks for subprotocol ``"mcp"`` and each JSON-RPC message travels as one
*text* frame.  A binary frame is not MCP: the receiver raises
``RemoteProtocolError`` and closes with 1003.  The rest is plain RFC 6455,
done by trio-websocket (wsproto underneath).

``WebSocketStream`` is the ``MessageStream`` for either side.  ``send``
serializes with ``jsonrpc.serialize`` and sends one text message, one writer at
a time (``trio.StrictFIFOLock``).  A send cancelled inside trio-websocket may
have written part of a frame, and the peer could never find the next frame
boundary, so the stream is then failed and its TCP connection dropped (later
calls raise ``TransportClosed``).  ``receive`` returns one text message as
UTF-8 bytes.  The size cap is enforced twice: trio-websocket counts characters
while a message arrives and closes with 1009 past ``max_message_size``; the
encoded bytes are checked again (a character may take four).  Either way the
caller gets ``RemoteProtocolError`` once, then ``TransportClosed``.  A close
by the peer (or a lost connection, 1006) raises ``WebSocketClosed``, a
``TransportClosed`` carrying the close code and reason.  ``aclose`` runs the
closing handshake (1000), shielded and bounded by ``disconnect_timeout``.  A
closing handshake needs trio-websocket's reader task to see the peer's answer,
so on both sides that task lives in a nursery shielded from outer
cancellation and stopped only after the connections in it are closed;
otherwise every cancelled client, and every server shutdown, would wait out
``disconnect_timeout``.

trio-websocket's exceptions are translated in exactly one place, ``map_websocket_errors``
(as httpcore's ``map_exceptions``); nothing above this module sees them.

Client (``open_websocket_stream``).  trio-websocket's own ``open_websocket_url``
is not used: in 0.12 it waits forever for its reader task after a connect
timeout, and a server that closes the TCP connection during the handshake
leaves it waiting until that timeout.  So this module opens TCP (and TLS,
handshaking eagerly so that a certificate error says so) itself, watches the
stream for EOF (``_Transport``), and races trio-websocket's
``wrap_client_stream`` against that EOF, all under ``connect_timeout``.  Its
reader task lives in the nursery of a ``_ReaderHost``: a crash of the reader
is recorded and surfaces from ``receive``; it never cancels the caller's code.
A server that does not select ``"mcp"`` is refused with ``ConnectError``, as
is an HTTP answer other than 101 (status and body quoted).

The server side (listeners, Origin and subprotocol checks, one session per
connection) is ``trimcp.server.transports.websocket``.  ``trimcp`` imports this module
only when a WebSocket is asked for, so trio-websocket stays optional.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Final, cast
from urllib.parse import urlsplit

import attrs
import trio

try:
    import h11
    import trio_websocket
    import wsproto.utilities
except ImportError as _exc:  # pragma: no cover - depends on the environment
    raise ImportError("the WebSocket transport needs trio-websocket>=0.12: pip install trio-websocket") from _exc

from ..._errors import ConnectError, RemoteProtocolError, TransportClosed, TrimcpError
from ..._sansio import jsonrpc
from ..._sansio.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from .._groups import collapse
from .._locks import held
from ..stream import NO_META, Received, SendMeta, parse_received
from ..tcp import connect_failure

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "GOING_AWAY",
    "SUBPROTOCOL",
    "WebSocketClosed",
    "WebSocketStream",
    "map_websocket_errors",
    "open_websocket_stream",
]

logger = logging.getLogger("trimcp.websocket")

#: The subprotocol both sides insist on (``Sec-WebSocket-Protocol: mcp``).
SUBPROTOCOL: Final = "mcp"
#: Close codes (RFC 6455 section 7.4.1).
NORMAL_CLOSURE: Final = 1000
GOING_AWAY: Final = 1001
PROTOCOL_ERROR: Final = 1002
UNSUPPORTED_DATA: Final = 1003
MESSAGE_TOO_BIG: Final = 1009
#: Handshake headers trio-websocket/wsproto write themselves; a caller may not set them.
_RESERVED_HEADERS: Final = frozenset({"host", "upgrade", "connection"}) | {
    f"sec-websocket-{name}" for name in ("key", "version", "protocol", "extensions")
}


class WebSocketClosed(TransportClosed):
    """The WebSocket closed: ``code`` and ``reason`` are the peer's close frame (1006: none came)."""

    def __init__(self, message: str, *, code: int, reason: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


def _oversize_reason(limit: int) -> str:
    # trio-websocket's own reason when *it* closes with 1009; a peer's 1009 has another text.
    return f"Exceeded maximum message size: {limit} bytes"


def _close_text(reason: trio_websocket.CloseReason) -> str:
    text = f"{reason.code} {reason.name}"
    return f"{text}: {reason.reason}" if reason.reason else text


# --------------------------------------------------------------------------- the stream


class WebSocketStream:
    """A ``MessageStream`` over one WebSocket connection (either side).

    Made by ``open_websocket_stream`` (client) or by ``trimcp.server.transports.websocket``
    for each accepted connection.  One task may ``receive`` at a time; any
    number may ``send``.
    """

    def __init__(
        self,
        ws: trio_websocket.WebSocketConnection,
        *,
        name: str,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        disconnect_timeout: float = 5.0,
        reader_crash: Callable[[], BaseException | None] = lambda: None,
    ) -> None:
        self._ws = ws
        self.name = name
        self.max_message_size = max_message_size
        self._disconnect_timeout = disconnect_timeout
        self._reader_crash = reader_crash
        self._write_lock = trio.StrictFIFOLock()
        self._closing = False
        self._closed = trio.Event()
        #: Why this side gave up on the connection (a protocol error, a torn frame), if it did.
        self._failure: TrimcpError | None = None
        #: When a message last went either way (``trio.current_time()``; the server's idle timer).
        self.last_activity = trio.current_time()

    def describe(self) -> str:
        return f"WebSocket {self.name}"

    def __repr__(self) -> str:
        return f"<WebSocketStream {self.name} {'closed' if self.closed else 'open'}>"

    @property
    def subprotocol(self) -> str | None:
        return self._ws.subprotocol

    @property
    def closed(self) -> tuple[int, str | None] | None:
        """``(code, reason)`` once the connection is closed or closing, else ``None``."""
        reason = self._ws.closed
        return None if reason is None else (reason.code, reason.reason)

    @property
    def handshake_headers(self) -> tuple[tuple[bytes, bytes], ...]:
        """The peer's handshake headers (client side: the server's 101 response)."""
        return self._ws.handshake_headers

    # ------------------------------------------------------------ MessageStream

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        await self.send_raw(jsonrpc.serialize(message))

    async def send_raw(self, data: bytes) -> None:
        """Send ``data`` as one text frame, as is (a conformance probe's malformed message)."""
        text = data.decode("utf-8", "replace")
        async with held(self._write_lock):
            if self._failure is not None:
                await trio.lowlevel.checkpoint()
                raise self._dead()
            # No cancellation may be pending once trio-websocket starts writing: a Cancelled
            # from inside it then means a frame may be torn (see the module docstring).
            await trio.lowlevel.checkpoint_if_cancelled()
            self.last_activity = trio.current_time()  # and again once sent: a slow write is not idle
            try:
                with map_websocket_errors(self.describe(), stream=self):
                    await self._ws.send_message(text)
                self.last_activity = trio.current_time()
            except trio.Cancelled:
                self._failure = TransportClosed(
                    f"{self.describe()}: a send was cancelled part-way through its frame; "
                    "the connection cannot carry more messages"
                )
                with trio.CancelScope(shield=True):
                    await self._abort()
                raise

    async def receive(self) -> Received:
        if self._failure is not None:
            await trio.lowlevel.checkpoint()
            raise self._dead()
        with map_websocket_errors(self.describe(), stream=self):
            message = await self._ws.get_message()
        self.last_activity = trio.current_time()
        if isinstance(message, bytes):
            raise await self._fail(
                RemoteProtocolError(
                    f"{self.describe()}: the peer sent a binary frame ({len(message)} bytes); "
                    "MCP messages travel in text frames"
                ),
                UNSUPPORTED_DATA,
                "MCP messages are text frames",
            )
        data = message.encode("utf-8")
        if len(data) > self.max_message_size:
            raise await self._fail(self._oversize(len(data)), MESSAGE_TOO_BIG, "message too big")
        return parse_received(data, max_size=len(data))  # capped just above

    async def aclose(self) -> None:
        """Run the closing handshake (1000), bounded by ``disconnect_timeout``; idempotent."""
        await self.close()

    async def close(self, code: int = NORMAL_CLOSURE, reason: str | None = None) -> None:
        """Close with ``code`` and ``reason``; later calls wait for the first one to finish."""
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        try:
            with trio.CancelScope(shield=True):
                # When the time is up trio-websocket drops the TCP connection itself.
                with trio.move_on_after(self._disconnect_timeout):
                    await self._ws.aclose(code, reason)
        finally:
            self._closed.set()

    # ------------------------------------------------------------ failures

    def _oversize(self, size: int | None) -> RemoteProtocolError:
        got = "a larger one" if size is None else f"one of {size} bytes"
        return RemoteProtocolError(
            f"{self.describe()}: message size limit is {self.max_message_size} bytes, the peer "
            f"sent {got}; the connection was closed ({MESSAGE_TOO_BIG})"
        )

    async def _fail(self, error: TrimcpError, code: int, reason: str) -> TrimcpError:
        """Give up on the connection because of ``error``: close with ``code``, return ``error``."""
        self._failure = error
        await self.close(code, reason)
        return error

    async def _abort(self) -> None:
        """Drop the TCP connection without a closing handshake (a frame may be torn)."""
        self._closing = True
        try:
            with trio.CancelScope() as scope:
                # trio's AsyncResource contract: a cancelled aclose still closes, abruptly.
                scope.cancel()
                await self._ws.aclose()
        finally:
            self._closed.set()

    def _dead(self) -> TransportClosed:
        return TransportClosed(f"{self.describe()} was closed: {self._failure}")

    def _closed_error(self, reason: trio_websocket.CloseReason | None) -> TrimcpError:
        """What a ``ConnectionClosed`` from trio-websocket means for our caller."""
        if self._failure is not None:
            return self._dead()
        crash = self._reader_crash()
        if crash is not None:
            self._failure = RemoteProtocolError(f"{self.describe()}: the WebSocket connection failed: {crash!r}")
            return self._failure
        if self._closing:
            return TransportClosed(f"{self.describe()} is closed")
        if reason is None:
            return WebSocketClosed(f"{self.describe()}: the connection was lost", code=1006, reason=None)
        if reason.code == MESSAGE_TOO_BIG and reason.reason == _oversize_reason(self.max_message_size):
            self._failure = self._oversize(None)  # trio-websocket closed it for us
            return self._failure
        if reason.code == 1006:
            what = "the connection was lost without a closing handshake"
        else:
            what = "the peer closed the connection"
        return WebSocketClosed(
            f"{self.describe()}: {what} ({_close_text(reason)})",
            code=reason.code,
            reason=reason.reason,
        )


# --------------------------------------------------------------------------- the boundary


def _root_violation(exc: Exception) -> Exception:
    """The peer's violation behind ``exc``, if any: when wsproto flags one, trio-websocket
    tries to answer it and may fail with an unrelated error whose ``__context__`` it is."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            break
        if isinstance(seen, wsproto.utilities.RemoteProtocolError):
            return seen
        seen = seen.__context__
    return exc


@contextmanager
def map_websocket_errors(
    where: str, *, stream: WebSocketStream | None = None, timeout: float | None = None
) -> Iterator[None]:
    """The one place trio-websocket's exceptions (and, while connecting, the network's) become
    trimcp's.  ``stream`` is ``None`` while connecting: every failure is then a ``ConnectError``."""
    try:
        with collapse():
            yield
    except trio_websocket.ConnectionClosed as exc:
        if stream is not None:
            raise stream._closed_error(exc.reason) from None
        detail = "no reason" if exc.reason is None else _close_text(exc.reason)
        raise ConnectError(f"{where}: the connection closed during the handshake ({detail})") from None
    except trio_websocket.ConnectionRejected as exc:
        body = (exc.body or b"").decode("utf-8", "replace").strip()[:300]
        raise ConnectError(
            f"{where} refused the WebSocket upgrade with HTTP {exc.status_code}"
            + (f": {body}" if body else "")
            + " (is this an MCP WebSocket endpoint?)"
        ) from None
    except (
        trio_websocket.HandshakeError,
        wsproto.utilities.ProtocolError,
        h11.ProtocolError,
    ) as exc:
        root = _root_violation(exc)
        if stream is not None:
            raise RemoteProtocolError(f"{where}: WebSocket protocol error: {root}") from exc
        raise ConnectError(f"{where}: the WebSocket handshake failed: {root or type(root).__name__}") from exc
    except trio.TooSlowError:
        if stream is not None or timeout is None:
            raise
        raise ConnectError(f"{where}: no WebSocket connection within {timeout} s") from None
    except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
        cause = exc.__cause__ or exc  # trio's TLS stream wraps the ssl.SSLError
        if stream is not None:
            raise TransportClosed(f"{where}: {cause}") from exc
        reason = connect_failure(exc) if isinstance(exc, OSError) else cause
        raise ConnectError(f"cannot connect to {where}: {reason}") from exc


# --------------------------------------------------------------------------- client


@attrs.frozen
class _Target:
    host: str
    port: int
    resource: str  # path and query, as sent in the request line
    tls: bool

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else f"{host}:{self.port}"

    @property
    def display(self) -> str:
        # No query string in messages: it may carry a token.
        path = self.resource.split("?", 1)[0]
        return f"{'wss' if self.tls else 'ws'}://{self.host_header}{path}"


def _parse_url(url: str) -> _Target:
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"a WebSocket URL starts with ws:// or wss://, not {url!r}")
    if not parts.hostname:
        raise ValueError(f"no host in WebSocket URL {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"bad port in WebSocket URL {url!r}") from None
    tls = parts.scheme == "wss"
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return _Target(parts.hostname, port or (443 if tls else 80), resource, tls)


def _header_list(
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None,
) -> list[tuple[bytes, bytes]]:
    items = headers.items() if isinstance(headers, Mapping) else (headers or ())
    out: list[tuple[bytes, bytes]] = []
    for name, value in items:
        if name.lower() in _RESERVED_HEADERS:
            raise ValueError(f"header {name!r} is part of the WebSocket handshake; it cannot be set")
        out.append((name.encode("latin-1"), value.encode("latin-1")))
    return out


class _Transport(trio.abc.Stream):
    """The TCP (or TLS) stream under trio-websocket, watched: ``ended`` is set once
    reading it hits EOF or fails, which trio-websocket does not report during the handshake."""

    def __init__(self, inner: trio.SocketStream | trio.SSLStream[trio.SocketStream], ended: trio.Event):
        self.inner = inner
        self.ended = ended

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        try:
            data = await self.inner.receive_some(max_bytes)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.ended.set()
            raise
        if not data:
            self.ended.set()
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()


class _ReaderHost:
    """Owns the nursery trio-websocket's reader task runs in, shielded from outer
    cancellation until ``stop()`` (see the module docstring).  A crash of the reader is kept
    in ``crash`` (and sets ``ended``) instead of cancelling the code that uses the stream."""

    def __init__(self, ended: trio.Event) -> None:
        self.ended = ended
        self.crash: BaseException | None = None
        self._scope = trio.CancelScope(shield=True)

    def stop(self) -> None:
        self._scope.cancel()

    async def run(self, *, task_status: trio.TaskStatus[trio.Nursery] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            with self._scope:
                async with trio.open_nursery() as nursery:
                    task_status.started(nursery)
                    await trio.sleep_forever()
        except BaseExceptionGroup as group:
            crashes, others = group.split(Exception)
            if crashes is None or others is not None:
                raise  # Cancelled, KeyboardInterrupt...: not ours to keep
            leaf: BaseException = crashes
            while isinstance(leaf, BaseExceptionGroup):
                leaf = leaf.exceptions[0]
            logger.debug("WebSocket reader task failed", exc_info=leaf)
            self.crash = leaf
            self.ended.set()


async def _open_transport(
    target: _Target, ssl_context: ssl.SSLContext | None
) -> trio.SocketStream | trio.SSLStream[trio.SocketStream]:
    if not target.tls:
        return await trio.open_tcp_stream(target.host, target.port)
    context = ssl_context or ssl.create_default_context()
    tls = await trio.open_ssl_over_tcp_stream(target.host, target.port, ssl_context=context, https_compatible=True)
    try:
        await tls.do_handshake()  # now, so that a certificate error is reported as one
    except BaseException:
        await trio.aclose_forcefully(tls)
        raise
    return tls


async def _handshake(
    reader_nursery: trio.Nursery,
    transport: _Transport,
    target: _Target,
    host: _ReaderHost,
    headers: list[tuple[bytes, bytes]],
    max_message_size: int,
) -> trio_websocket.WebSocketConnection:
    """trio-websocket's client handshake, raced against the server hanging up."""
    done: list[trio_websocket.WebSocketConnection] = []

    async def upgrade() -> None:
        done.append(
            await trio_websocket.wrap_client_stream(
                reader_nursery,
                # trio-websocket works on any trio.abc.Stream; its annotation is narrower.
                cast(trio.SocketStream, transport),
                target.host_header,
                target.resource,
                subprotocols=[SUBPROTOCOL],
                extra_headers=headers,
                max_message_size=max_message_size,
            )
        )
        race.cancel_scope.cancel()

    async with trio.open_nursery() as race:
        race.start_soon(upgrade)
        await host.ended.wait()
        race.cancel_scope.cancel()
    if done:
        return done[0]
    if host.crash is not None:
        raise host.crash  # e.g. ConnectionRejected: translated by the boundary
    raise ConnectError(f"{target.display}: the server closed the connection during the handshake")


@asynccontextmanager
async def open_websocket_stream(
    url: str,
    *,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = 30.0,
    disconnect_timeout: float = 5.0,
    ssl_context: ssl.SSLContext | None = None,
) -> AsyncIterator[WebSocketStream]:
    """Connect to an MCP server's WebSocket endpoint and yield a stream to it.

    ``url`` is ``ws://`` or ``wss://`` (TLS with ``ssl_context``, default: the
    system's trust store).  ``headers`` go into the upgrade request (e.g.
    ``Authorization``); the handshake's own headers cannot be set.
    ``max_message_size`` caps one incoming message in bytes.
    ``connect_timeout`` bounds TCP, TLS and the WebSocket handshake together;
    ``disconnect_timeout`` bounds the closing handshake on exit.

    Raises ``ConnectError`` if the server is unreachable, answers with anything
    but an upgrade, or does not select subprotocol ``"mcp"``; ``ValueError``
    for a malformed URL or a reserved header.
    """
    target = _parse_url(url)
    if ssl_context is not None and not target.tls:
        raise ValueError("ssl_context is for wss:// URLs")
    extra_headers = _header_list(headers)
    ended = trio.Event()
    host = _ReaderHost(ended)
    raw: trio.SocketStream | trio.SSLStream[trio.SocketStream] | None = None
    stream: WebSocketStream | None = None
    with collapse():
        async with trio.open_nursery() as nursery:
            try:
                reader_nursery = await nursery.start(host.run)
                with map_websocket_errors(target.display, timeout=connect_timeout):
                    with trio.fail_after(connect_timeout):
                        raw = await _open_transport(target, ssl_context)
                        ws = await _handshake(
                            reader_nursery,
                            _Transport(raw, ended),
                            target,
                            host,
                            extra_headers,
                            max_message_size,
                        )
                stream = WebSocketStream(
                    ws,
                    name=target.display,
                    max_message_size=max_message_size,
                    disconnect_timeout=disconnect_timeout,
                    reader_crash=lambda: host.crash,
                )
                if ws.subprotocol != SUBPROTOCOL:
                    await stream.close(PROTOCOL_ERROR, f"subprotocol {SUBPROTOCOL!r} required")
                    chose = "none" if ws.subprotocol is None else repr(ws.subprotocol)
                    raise ConnectError(
                        f"{target.display} accepted the WebSocket but selected subprotocol {chose}, "
                        f"not {SUBPROTOCOL!r}: it does not speak MCP over WebSocket"
                    )
                yield stream
            finally:
                with trio.CancelScope(shield=True):
                    if stream is not None:
                        await stream.aclose()
                    if raw is not None:
                        await trio.aclose_forcefully(raw)
                host.stop()
