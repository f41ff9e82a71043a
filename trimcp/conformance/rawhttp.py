"""One raw HTTP/1.1 exchange per call, for the transport checks.

The HTTP transport checks (``checks/http.py``) must send what a correct
client never sends (a foreign ``Origin``, a session id nobody issued, a wrong
``MCP-Protocol-Version``), so they cannot go through the trimcp client.
``request`` opens a TCP (or TLS) connection, writes one request on an
``H11ClientConnection`` (``h11_probe.py``: h11, not the client pool's codec) and reads
the answer's status and headers; the body is read only as far as the
caller needs it: all of a JSON answer, or the events of an event stream up to
the first JSON-RPC response (``read_body=True``), or nothing at all
(``read_body=False``, for the GET stream that would never end).  The whole
exchange runs under the caller's deadline; ``ProbeError`` says what broke.
A ``RawClient`` carries what a run's requests share (the deadline, and the
headers it adds to each, such as the OAuth ``Authorization``), explicitly:
the runner builds it and hands it to the checks.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, cast
from urllib.parse import urlsplit

import attrs
import trio

from .._errors import ConnectError, TransportError
from .._sansio.framing.sse import ServerSentEvent, SSEDecoder
from .._trio.http1.client import ConnectionLost
from .._trio.tcp import connect_tcp
from .h11_probe import H11ClientConnection
from .timeouts import note_timeout

#: The most of a body a probe reads.
MAX_BODY = 1 << 20


class ProbeError(TransportError):
    """The exchange could not be completed (refused, cut, timed out, not HTTP)."""


@attrs.frozen
class RawResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    #: The JSON-RPC messages of the body (one for JSON, the data of each event for SSE).
    messages: tuple[Any, ...] = ()

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()

    def error_code(self) -> int | None:
        """The ``error.code`` of the first JSON-RPC error in the body, if any."""
        for msg in self.messages:
            if isinstance(msg, dict) and isinstance(msg.get("error"), dict):
                code = msg["error"].get("code")
                return code if isinstance(code, int) else None
        return None


@attrs.frozen
class RawClient:
    """What every raw request of one check run shares: the deadline of each exchange, and
    headers added to every request that does not set them itself (once the harness holds
    an OAuth token, its ``Authorization``, so the transport checks get past the 401)."""

    timeout: float
    extra_headers: tuple[tuple[str, str], ...] = ()

    async def request(
        self,
        url: str,
        method: str,
        headers: Mapping[str, str],
        body: Any = None,
        *,
        read_body: bool = True,
    ) -> RawResponse:
        return await request(
            url,
            method,
            headers,
            body,
            timeout=self.timeout,
            read_body=read_body,
            extra_headers=self.extra_headers,
        )

    def stream(
        self, url: str, method: str, headers: Mapping[str, str], body: Any = None
    ) -> AbstractAsyncContextManager[OpenStream]:
        """Send one request and keep its answer open (see ``open_stream``)."""
        return open_stream(url, method, headers, body, timeout=self.timeout, extra_headers=self.extra_headers)


@attrs.define
class OpenStream:
    """An answer whose body is read event by event while the connection stays open."""

    status: int
    headers: Mapping[str, str]
    _conn: H11ClientConnection
    timeout: float
    _sse: SSEDecoder = attrs.field(factory=SSEDecoder)
    _pending: list[ServerSentEvent] = attrs.field(factory=list)
    #: Event ids set by blocks without data (priming events), in order of arrival.
    bare_ids: list[str] = attrs.field(factory=list)
    #: Every event read so far.
    events: list[ServerSentEvent] = attrs.field(factory=list)
    #: What the stream carried, in order: ``(id in effect, event)``, the event ``None`` for
    #: an id-only block.
    order: list[tuple[str | None, ServerSentEvent | None]] = attrs.field(factory=list)
    ended: bool = False

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def content_type(self) -> str:
        return _content_type(self.headers)

    async def next_event(self, timeout: float | None = None) -> ServerSentEvent | None:
        """The next event; ``None`` when the stream ended or ``timeout`` (default: the
        client's) passed without one."""
        with trio.move_on_after(self.timeout if timeout is None else timeout):
            while not self._pending and not self.ended:
                try:
                    chunk = await self._conn.read_some()
                except ConnectionLost:
                    chunk = b""
                if not chunk:
                    self.ended = True
                    self._pending.extend(self._sse.feed(b""))
                    break
                self._feed(chunk)
        if not self._pending:
            return None
        event = self._pending.pop(0)
        self.events.append(event)
        return event

    def _feed(self, chunk: bytes) -> None:
        # Line by line, so that an id-only block is told apart from the events around it.
        for line in chunk.splitlines(keepends=True):
            before = self._sse.dataless_blocks
            events = self._sse.feed(line)
            if self._sse.dataless_blocks > before and self._sse.last_event_id is not None:
                self.bare_ids.append(self._sse.last_event_id)
                self.order.append((self._sse.last_event_id, None))
            self.order.extend((e.id, e) for e in events)
            self._pending.extend(events)

    async def read_body(self) -> bytes:
        """The rest of a (non-stream) body, up to ``MAX_BODY``, under the client's timeout."""
        body = bytearray()
        with trio.move_on_after(self.timeout):
            try:
                while len(body) <= MAX_BODY and (chunk := await self._conn.read_some()):
                    body += chunk
            except ConnectionLost:
                pass
        self.ended = True
        return bytes(body)

    async def next_message(self, timeout: float | None = None) -> Any:
        """The JSON value of the next event that holds one; ``None`` at the end or timeout."""
        while (event := await self.next_event(timeout)) is not None:
            msg = _json(event.data)
            if msg is not None:
                return msg
        return None


@asynccontextmanager
async def open_stream(
    url: str,
    method: str,
    headers: Mapping[str, str],
    body: Any = None,
    *,
    timeout: float,
    extra_headers: Sequence[tuple[str, str]] = (),
) -> AsyncIterator[OpenStream]:
    """Send one request; yield its answer with the body unread, closing the connection after.

    Connecting and reading the head run under ``timeout``; each ``next_event`` has its own."""
    tls, host, port, target, hdrs, data = _prepare(url, method, headers, body, extra_headers)
    with _as_probe_error(method, target, timeout), trio.fail_after(timeout):
        conn = await _connect(tls, host, port)
        await conn.send_request(method, target, hdrs, data)
        response = await conn.read_head()
    head = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
    try:
        yield OpenStream(response.status_code, head, conn, timeout)
    finally:
        with trio.CancelScope(shield=True):
            await conn.aclose()


def _prepare(
    url: str, method: str, headers: Mapping[str, str], body: Any, extra_headers: Sequence[tuple[str, str]]
) -> tuple[bool, str, int, str, list[tuple[str, str]], bytes]:
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    host = parts.hostname or "localhost"
    port = parts.port or (443 if tls else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    # A body given as bytes goes as is (a malformed message, checks/malformed.py).
    data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    given = {k.lower() for k in headers}
    hdrs = [("Host", parts.netloc), ("Connection", "close")] if "host" not in given else [("Connection", "close")]
    hdrs += list(headers.items())
    hdrs += [(k, v) for k, v in extra_headers if k.lower() not in given]
    if body is not None:
        hdrs.append(("Content-Length", str(len(data))))
    # As bytes, the way they came: a malformed value the server handed out (a session id
    # with non-ASCII characters, say) goes back unchanged, where h11 would refuse a str.
    wire = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in hdrs]
    return tls, host, port, target, cast("list[tuple[str, str]]", wire), data


async def request(
    url: str,
    method: str,
    headers: Mapping[str, str],
    body: Any = None,
    *,
    timeout: float,
    read_body: bool = True,
    extra_headers: Sequence[tuple[str, str]] = (),
) -> RawResponse:
    """Send one request to ``url`` (``body``: a JSON value, raw bytes, or None) and return the answer.

    ``extra_headers`` are added where ``headers`` does not set the same name; a ``Host``
    in ``headers`` replaces the URL's."""
    tls, host, port, target, hdrs, data = _prepare(url, method, headers, body, extra_headers)
    with _as_probe_error(method, target, timeout), trio.fail_after(timeout):
        conn = await _connect(tls, host, port)
        try:
            return await _exchange(conn, method, target, hdrs, data, read_body)
        finally:
            await conn.aclose()


async def _connect(tls: bool, host: str, port: int) -> H11ClientConnection:
    context = ssl.create_default_context() if tls else None
    stream, _ = await connect_tcp(host, port, ssl_context=context)
    return H11ClientConnection(stream, f"{host}:{port}")


@contextmanager
def _as_probe_error(method: str, target: str, timeout: float) -> Iterator[None]:
    """The one place a failed exchange becomes a ``ProbeError`` naming the request."""
    try:
        yield
    except trio.TooSlowError:
        note_timeout(timeout)  # (results.timed: what it left unjudged is "not reached")
        raise ProbeError(f"{method} {target}: no answer within {timeout:g}s") from None
    except (ConnectError, ConnectionLost) as exc:
        raise ProbeError(f"{method} {target}: {type(exc).__name__}: {exc}") from None


async def _exchange(
    conn: H11ClientConnection,
    method: str,
    target: str,
    hdrs: list[tuple[str, str]],
    data: bytes,
    read_body: bool,
) -> RawResponse:
    await conn.send_request(method, target, hdrs, data)
    response = await conn.read_head()
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
    if not read_body or method == "HEAD":
        return RawResponse(response.status_code, headers)
    sse = SSEDecoder() if _content_type(headers) == "text/event-stream" else None
    body = bytearray()
    messages: list[Any] = []
    try:
        while chunk := await conn.read_some():
            if sse is None:
                body += chunk
                if len(body) > MAX_BODY:
                    break
            elif _read_events(sse, chunk, messages):
                break
    except ConnectionLost:
        pass  # a body cut short: the checks judge what did arrive
    if sse is None and body:
        msg = _json(body.decode("utf-8", "replace"))
        if msg is not None:
            messages.append(msg)
    return RawResponse(response.status_code, headers, bytes(body), tuple(messages))


def _read_events(sse: SSEDecoder, chunk: bytes, messages: list[Any]) -> bool:
    """Add the JSON data of the events in ``chunk``; True once a JSON-RPC response came."""
    for event in sse.feed(chunk):
        msg = _json(event.data)
        if msg is not None:
            messages.append(msg)
        if isinstance(msg, dict) and ("result" in msg or "error" in msg):
            return True
    return False


def _content_type(headers: Mapping[str, str]) -> str:
    return headers.get("content-type", "").split(";")[0].strip().lower()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
