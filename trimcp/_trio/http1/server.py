"""One HTTP/1.1 server connection: trimcp's codec over a Trio stream, and the loop that serves it.

Theory of operation
-------------------
Every HTTP server in trimcp - Streamable HTTP and the legacy HTTP+SSE
endpoints (``trimcp.server.transports.http``) and the OAuth loopback redirect
(``trimcp._trio.oauth.callback``) - serves its TCP connections with
``serve_connection(stream, handler)``.  RFC 9112 is the sans-IO codec's
business (``trimcp._sansio.http.server.h1``); this module only moves its bytes
over Trio:

* ``H1ServerConnection`` drives an ``H1Server`` over one accepted
  ``trio.abc.Stream``.  ``read_request`` returns the next request head and its
  whole body (bounded by ``max_body``, with a deadline for the body),
  ``respond`` sends a complete response with a ``Content-Length``, and
  ``start``/``write``/``end`` send a streamed one (chunked for HTTP/1.1,
  close-delimited for HTTP/1.0).  After each exchange ``next_cycle`` says
  whether the connection can carry another request (keep-alive); pipelining
  is not served, but bytes a client sends early are kept by the codec and
  read in order.  A handler that answers with ``Connection: close`` ends the
  connection after that response.
* Deadlines (RFC 9112 section 9.5 lets a server close idle connections): a
  fresh connection has ``header_timeout`` for its whole request head, from
  accept, never renewed per byte (a client dripping its head is dropped when
  it passes); a keep-alive connection may wait ``idle_timeout`` for its next
  request to begin, then has ``header_timeout`` for the head; the body has
  ``body_timeout``.  The wait for a head is one cancel scope whose deadline
  moves from the idle one to the head's when the first byte comes; a head and
  body that have arrived whole (the common small request) are read with no
  timer at all.  A slow head that began gets 408 (RFC 9110 section 15.5.9);
  a connection that sent nothing is closed silently.
* ``serve_connection`` is the loop: read a request, hand it to
  ``handler(http, head, body)``, repeat while keep-alive allows.  What the
  loop answers itself is HTTP-level: the codec's status for malformed HTTP
  (400, 431 for a head over ``max_head``, 501 for a transfer coding it does
  not serve, 505 for another HTTP version), 408 for a head or body that takes
  too long, 413 for a body over ``max_body`` (on its ``Content-Length`` before
  reading any of it; a chunked one when it passes the cap; also a body whose
  ``body_cost`` - what parsing it takes - is more than the whole shared
  ``BodyBudget``), 503 when the bodies of all connections use up that budget
  (``http_limits``) for longer than the body may take (each of these then
  closes), and 500 when the handler raises (logged: a bug costs one
  connection, never the listener).  ``error_code`` is the JSON-RPC code those
  answers carry in a JSON-RPC error body (an MCP endpoint), ``None`` for a
  plain-text body.

While a response is being produced the server does not read requests, yet it
must notice a client that hung up: on a stateless-era MCP request that is the
cancellation signal, and a standalone SSE stream may otherwise wait forever.
``watch_eof`` reads and returns when the peer closes (what it reads meanwhile
goes to the codec's buffer, up to a cap per request).  The response writer runs it
as its own wait between writes, cancelled when there is more to write
(``streams.OutStream.wait``): no task per request.  It may also run in a task
of its own (Trio allows one task to receive while another sends).

Writes are grouped: ``respond`` sends head, body and end in one ``send_all``
(a body over 64 KiB goes on its own), and between ``cork`` and ``flush`` the
pieces of a streamed response wait to leave together (the SSE writer flushes
before it waits for more).  Each write saved is a system call and, on a plain
TCP connection (taken over by ``FastTcpStream``, ``_trio/tcp.py``, which
yields only when the socket would block), often a scheduler pass.

Every network failure surfaces as ``ClientGone``; a request the codec refuses
as ``H1RemoteError`` (the loop answers its status and closes).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Awaitable, Callable, Iterable
from http import HTTPStatus
from typing import TypeAlias

import trio

from ..._errors import TransportError
from ..._sansio import jsonrpc as rpc
from ..._sansio.http.server.h1 import NEED_DATA, Data, EndOfMessage, Event, H1RemoteError, H1Server, Request
from ..._sansio.http.server.routing import HttpError, RequestHead
from ..http_limits import BodyBudget, linger
from ..tcp import fast_stream

__all__ = ["ClientGone", "H1ServerConnection", "RequestHandler", "serve_connection"]

logger = logging.getLogger("trimcp.http.server")

_RECV_SIZE = 65536
#: How much a client may send while its response is produced (then we stop reading).
_EARLY_DATA_CAP = 256 * 1024
#: Longest request head (request line and headers) accepted.
MAX_HEAD = 16 * 1024
SERVER_HEADER = ("server", "trimcp")


#: What a body reserves of the shared budget before a byte of it is read, in copies of
#: its length: what parsing the cheapest JSON text of that length takes (its bytes, the
#: decoded text, the parsed strings; ``jsonrpc.PARSE_COPIES``).  Once it is read, the
#: body's ``body_cost`` settles what it holds (``_settle``).
BODY_COPIES = rpc.PARSE_COPIES
#: Largest body ``respond`` copies into the write of its head (larger: a write of its own).
_COALESCE_MAX = 64 * 1024
#: How long a client that does not read may hold up an answer to a refused request.
_REFUSAL_SEND_TIMEOUT = 1.0

#: What a body read in full costs the budget while its request is served (bytes).
BodyCost: TypeAlias = Callable[[bytes], int]


def _seconds(timeout: float | None) -> float:
    return float("inf") if timeout is None else timeout


def _copies(body: bytes) -> int:
    return BODY_COPIES * len(body)


class _TooSlow(Exception):
    """A deadline of ``read_request`` passed while it waited for bytes."""


class ClientGone(TransportError):
    """The client closed or reset the connection."""


class H1ServerConnection:
    """One server-side HTTP/1.1 connection (see the module docstring)."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        max_body: int,
        body_timeout: float = 30.0,
        max_head: int = MAX_HEAD,
        error_code: int | None = rpc.INVALID_REQUEST,
        header_timeout: float | None = None,
        budget: BodyBudget | None = None,
        body_cost: BodyCost | None = None,
    ) -> None:
        self.stream = stream
        self.codec = H1Server(max_head=max_head)
        self.max_body = max_body
        self.body_timeout = body_timeout
        #: The whole request head must arrive within this (None: ``idle_timeout`` does).
        self.header_timeout = header_timeout
        #: The memory budget request bodies share across connections (None: no budget).
        self.budget = budget
        #: What a body read in full costs ``budget`` (default: ``BODY_COPIES`` times its size).
        self.body_cost = body_cost or _copies
        #: Bytes of ``budget`` the current request's body holds.
        self.held = 0
        #: Whether a request was read on this connection (the next one is keep-alive).
        self.served = False
        #: The JSON-RPC code of the errors this layer answers by itself (None: plain text).
        self.error_code = error_code
        self.peer_closed = False
        #: Bytes the client sent while its response was produced (``watch_eof``; per request).
        self._early = 0
        #: While corked, the bytes of a streamed response are kept here and leave in one write at ``flush``.
        self._corked = False
        self._out: list[bytes] = []

    # ------------------------------------------------------------ reading

    async def _receive(self) -> bytes:
        try:
            return bytes(await self.stream.receive_some(_RECV_SIZE))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    async def _fill(self) -> None:
        data = await self._receive()
        if not data:
            self.peer_closed = True
        self.codec.receive_data(data)

    async def _next_event(self, deadline: float) -> Event:
        """The next codec event; ``_TooSlow`` when ``deadline`` passes waiting for bytes.

        The timer is armed only around the I/O: a body the codec already holds
        (the common small request) costs no cancel scope."""
        codec = self.codec
        while True:
            event = codec.next_event()
            if event is not NEED_DATA:
                return event
            with trio.move_on_at(deadline) as scope:
                if codec.they_are_waiting_for_100_continue:
                    await self._send_bytes(codec.informational(100, [SERVER_HEADER]))
                await self._fill()
            if scope.cancelled_caught:
                raise _TooSlow

    async def _read_head(self, idle_timeout: float | None) -> Event:
        """The next event at the start of a request: the head, ``CLOSED``, or ``_TooSlow``.

        One cancel scope covers the wait: on a keep-alive connection its
        deadline is the idle one until the first byte of the request comes,
        then the head's (``header_timeout`` from then); on a fresh one the head's
        from the start (from accept)."""
        codec = self.codec
        event = codec.next_event()
        if event is not NEED_DATA:
            return event  # (pipelined: it is here already)
        head_limit = _seconds(self.header_timeout if self.header_timeout is not None else idle_timeout)
        idle = self.served and not codec.buffered
        now = trio.current_time()
        with trio.CancelScope(deadline=now + (_seconds(idle_timeout) if idle else head_limit)) as scope:
            while True:
                await self._fill()
                if idle and codec.buffered:
                    idle = False  # the request began: its head has header_timeout from now
                    scope.deadline = trio.current_time() + head_limit
                event = codec.next_event()
                if event is not NEED_DATA:
                    return event
        raise _TooSlow

    async def read_request(self, idle_timeout: float | None) -> tuple[RequestHead, bytes] | HttpError | None:
        """The next request and its body; ``None`` when the client closed or stayed idle too long.

        A fresh connection must deliver the whole head within
        ``header_timeout``; a keep-alive one may first wait ``idle_timeout``
        for the next request to begin, and then has ``header_timeout`` for the
        head (without ``header_timeout``, ``idle_timeout`` bounds each wait).
        The deadline is not renewed per byte, so dripping a head does not keep
        a connection.  A head that is too slow, an oversize or too slow body,
        and a body the shared budget has no room for give the ``HttpError`` to
        answer (the connection is then closed).  Raises ``H1RemoteError`` for
        malformed HTTP.
        """
        try:
            event = await self._read_head(idle_timeout)
        except _TooSlow:
            # RFC 9110 15.5.9: 408 for a request that began; a silent connection just closes.
            if self.codec.buffered:
                return self.error(408, "Request Timeout: the request head took too long")
            return None
        if not isinstance(event, Request):
            return None
        self.served = True
        head = RequestHead(event.method.upper(), event.target, tuple(event.headers))
        length = self.codec.body_length()
        if length is not None and length > self.max_body:
            # Refused on the head: not a byte of the body is read (nor 100-continue sent).
            return self._too_large()
        return await self._read_body(head, length)

    async def _read_body(self, head: RequestHead, length: int | None) -> tuple[RequestHead, bytes] | HttpError | None:
        if length == 0:
            part = self.codec.next_event()  # (the codec has it: a head without a body ends there)
            return (head, b"") if isinstance(part, EndOfMessage) else None
        # BytesIO, not a list to join: getvalue() hands over its buffer without a copy,
        # so a body costs about its size once, not twice at the end.
        buffer = io.BytesIO()
        size = 0
        deadline = trio.current_time() + self.body_timeout
        if self.budget is not None:
            # A chunked body may grow to the cap: reserve that, settle on the truth after.
            want = BODY_COPIES * (self.max_body if length is None else length)
            if length is not None and want > self.budget.capacity:
                return self._too_costly()  # on the head: no byte of it read
            want = min(want, self.budget.capacity)
            if not await self._reserve(want, deadline):
                return self._no_room()
        try:
            while True:
                part = await self._next_event(deadline)
                if isinstance(part, Data):
                    buffer.write(part.data)
                    size += len(part.data)
                    if size > self.max_body:
                        return self._too_large()
                elif isinstance(part, EndOfMessage):
                    body = buffer.getvalue()
                    del buffer
                    problem = await self._settle(body, deadline)
                    return problem or (head, body)
                else:
                    return None
        except _TooSlow:
            return self.error(408, "Request Timeout: the body took too long")

    async def _reserve(self, amount: int, deadline: float) -> bool:
        """Add ``amount`` to what this body holds, waiting until ``deadline`` for room."""
        assert self.budget is not None
        if not self.budget.try_reserve(amount):  # the common case takes no pass
            with trio.move_on_at(deadline):
                await self.budget.reserve(amount)
                self.held += amount
                return True
            return False
        self.held += amount
        return True

    async def _settle(self, body: bytes, deadline: float) -> HttpError | None:
        """Hold what the body read costs (``body_cost``): give back what the reservation
        counted too much, or take the rest (``BodyBudget.top_up``) within the body's
        deadline (503 without room; 413 when it is more than the whole budget)."""
        if self.budget is None or not body:
            return None
        need = self.body_cost(body)
        if need > self.budget.capacity:
            return self._too_costly()
        if need < self.held:
            self.budget.release(self.held - need)
            self.held = need
        elif need > self.held:
            # (A small body's parse costs more than its reservation: the rest is taken at
            # once when it fits, with no timer and no scheduler pass.)
            granted = self.budget.try_top_up(need - self.held)
            if not granted:
                with trio.move_on_at(deadline):
                    granted = await self.budget.top_up(need - self.held)
            if not granted:
                return self._no_room()
            self.held = need
        return None

    def _no_room(self) -> HttpError:
        return HttpError(
            503,
            "Service Unavailable: request bodies use up the server's memory budget",
            code=self.error_code,
            headers=(("retry-after", "1"),),
        )

    def _too_costly(self) -> HttpError:
        assert self.budget is not None
        return self.error(
            413,
            "Payload Too Large: parsing it would take more than the server's body budget "
            f"({self.budget.capacity} bytes)",
        )

    def _too_large(self) -> HttpError:
        return self.error(413, f"Payload Too Large: more than {self.max_body} bytes")

    def release_body(self) -> None:
        """Give the current body's bytes back to the shared budget (its request is served)."""
        if self.budget is not None and self.held:
            self.budget.release(self.held)
        self.held = 0

    def error(self, status: int, message: str) -> HttpError:
        """An answer of this layer's own, in the body format the server speaks."""
        return HttpError(status, message, code=self.error_code)

    async def watch_eof(self) -> None:
        """Return when the client closes the connection (while a response is produced).

        What the client sends meanwhile (a pipelined request) goes to the codec's
        buffer and is served next; past ``_EARLY_DATA_CAP`` per request this
        stops reading and waits to be cancelled.  It may be cancelled at any
        point without losing a byte (a receive either happened or did not), so
        the writer of a response can run it as its own wait for more to write
        (``streams.OutStream.wait``) instead of in a task of its own.
        """
        while True:
            if self._early > _EARLY_DATA_CAP:
                await trio.sleep_forever()
            data = await self._receive()
            if not data:
                self.peer_closed = True
                return
            self._early += len(data)
            self.codec.receive_data(data)

    # ------------------------------------------------------------ writing

    async def _emit(self, data: bytes) -> None:
        if self._corked:
            self._out.append(data)
        elif data:
            await self._send_bytes(data)

    async def _send_bytes(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise ClientGone(str(exc)) from None

    def cork(self) -> None:
        """Hold the bytes of ``start``/``write``/``end`` until ``flush``/``uncork``.

        A streamed answer that is ready at once (head, an event or two, the last
        chunk) then costs one write, not one per piece: each write is a system
        call, and on a stream that waits, a pass through the scheduler.  The
        bytes are the codec's either way; only their grouping changes.
        """
        self._corked = True

    async def flush(self) -> None:
        """Write what the cork holds (call it before waiting for more to write)."""
        if self._out:
            data = b"".join(self._out)
            self._out.clear()
            if data:
                await self._send_bytes(data)

    async def uncork(self) -> None:
        await self.flush()
        self._corked = False

    async def respond(self, status: int, headers: Iterable[tuple[str, str]] = (), body: bytes = b"") -> None:
        """A complete response, in one write (head, body; a body over 64 KiB in a write of its own)."""
        codec = self.codec
        if len(body) > _COALESCE_MAX and status not in (204, 304):
            # A large body goes on its own (no copy of it just to save a write).
            head = codec.start_response(status, [SERVER_HEADER, *headers, ("content-length", str(len(body)))])
            await self._send_bytes(head)
            await self._send_bytes(codec.data(body))
            codec.end()
            return
        await self._send_bytes(codec.respond(status, [SERVER_HEADER, *headers], body))

    async def respond_error(self, error: HttpError, extra: Iterable[tuple[str, str]] = ()) -> None:
        headers = [("content-type", error.content_type), *error.headers, *extra]
        if self.codec.request is None:
            # No request head was read (a 408 for a slow head, a head refused): the client
            # may not read, so the answer gets a deadline; the connection closes after it.
            self.peer_closed = True
            with trio.move_on_after(_REFUSAL_SEND_TIMEOUT):
                await self.respond(error.status, headers, error.body())
            return
        await self.respond(error.status, headers, error.body())

    async def start(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """Begin a streamed response (no length)."""
        await self._emit(self.codec.start_response(status, [SERVER_HEADER, *headers]))

    async def write(self, data: bytes) -> None:
        await self._emit(self.codec.data(data))

    async def end(self) -> None:
        await self._emit(self.codec.end())

    @property
    def can_respond(self) -> bool:
        """Whether a response may still be started (none was begun for this request)."""
        return self.codec.can_respond

    def next_cycle(self) -> bool:
        """Get ready for the next request on this connection; False when it must close."""
        if self.peer_closed:
            return False
        self._corked = False
        self._out.clear()
        self._early = 0
        return self.codec.start_next_cycle()

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(self.stream)


#: What serves one request: it must answer it (``respond``/``start``...) before returning.
RequestHandler = Callable[[H1ServerConnection, RequestHead, bytes], Awaitable[None]]


async def serve_connection(
    stream: trio.abc.Stream,
    handler: RequestHandler,
    *,
    max_body: int,
    idle_timeout: float | None,
    body_timeout: float = 30.0,
    max_head: int = MAX_HEAD,
    error_code: int | None = rpc.INVALID_REQUEST,
    header_timeout: float | None = None,
    budget: BodyBudget | None = None,
    body_cost: BodyCost | None = None,
    on_close: Callable[[], object] | None = None,
) -> None:
    """Serve every request of one connection with ``handler``, then close it.

    ``header_timeout`` bounds the arrival of each request head (see
    ``H1ServerConnection.read_request``), ``idle_timeout`` the wait for a keep-alive
    request to begin (and, without ``header_timeout``, each head),
    ``body_timeout`` the reading of a body; ``budget`` is shared by the bodies
    of every connection, each holding its ``body_cost`` of it while it is served.
    ``on_close`` runs just before the connection closes (a connection cap's slot is given
    back then, so a client that sees the close can connect again at once).
    """
    if isinstance(stream, trio.SocketStream):
        # Plain TCP: no scheduler pass per send/receive that need not wait (tcp.py).
        stream = fast_stream(stream)
    http = H1ServerConnection(
        stream,
        max_body=max_body,
        body_timeout=body_timeout,
        max_head=max_head,
        error_code=error_code,
        header_timeout=header_timeout,
        budget=budget,
        body_cost=body_cost,
    )
    try:
        while True:
            try:
                got = await http.read_request(idle_timeout)
            except H1RemoteError as exc:
                if http.can_respond:
                    await http.respond_error(
                        HttpError(exc.status, f"{HTTPStatus(exc.status).phrase}: {exc}", code=None)
                    )
                    await linger(http.stream)
                return
            if got is None:
                return
            if isinstance(got, HttpError):
                http.release_body()
                await http.respond_error(got, [("connection", "close")])
                # The body may be unread (413 on its length): closing now would reset the
                # connection and could destroy the answer before the client reads it.
                await linger(http.stream)
                return
            head, body = got
            del got  # an idle keep-alive connection must not keep its last body alive
            try:
                await handler(http, head, body)
            finally:
                del body
                http.release_body()
            if not http.next_cycle():
                return
    except ClientGone:
        pass
    except Exception:
        # A bug must cost one connection, never the listener.
        logger.exception("HTTP connection failed")
        if http.can_respond:
            with trio.move_on_after(1):
                await http.respond_error(HttpError(500, "Internal Server Error", code=None))
    finally:
        http.release_body()
        if on_close is not None:
            on_close()
        await http.aclose()
