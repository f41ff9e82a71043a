"""One HTTP/1.1 server connection: h11 over a Trio stream, and the loop that serves it.

Theory of operation
-------------------
Every HTTP server in trimcp - Streamable HTTP and the legacy HTTP+SSE
endpoints (``trimcp.server.transports.http``) and the OAuth loopback redirect
(``trimcp._trio.oauth.callback``) - serves its TCP connections with
``serve_connection(stream, handler)``.  RFC 9112 is h11's business; this module
only moves its events over Trio:

* ``H11Stream`` drives an ``h11.Connection`` in the server role over one
  accepted ``trio.abc.Stream``.  ``read_request`` returns the next request
  head and its whole body (bounded by ``max_body``, with a deadline for the
  body), ``respond`` sends a complete response with a ``Content-Length``,
  and ``start``/``write``/``end`` send a streamed one (h11 picks chunked
  encoding for HTTP/1.1 and close-delimited for HTTP/1.0).  After each
  exchange ``next_cycle`` says whether the connection can carry another
  request (keep-alive); pipelining is not served, but bytes a client sends
  early are kept by h11 and read in order.  A handler that answers with
  ``Connection: close`` ends the connection after that response.
* ``serve_connection`` is the loop: read a request, hand it to
  ``handler(http, head, body)``, repeat while keep-alive allows.  What the
  loop answers itself is HTTP-level: 400 for malformed HTTP, 408 for a body
  that takes too long, 413 for one over ``max_body`` (then it closes), and
  500 when the handler raises (logged: a bug costs one connection, never the
  listener).  ``error_code`` is the JSON-RPC code those answers carry in a
  JSON-RPC error body (an MCP endpoint), ``None`` for a plain-text body.

While a response is being produced the server does not read requests, yet it
must notice a client that hung up: on a stateless-era MCP request that is the
cancellation signal, and a standalone SSE stream may otherwise wait forever.
``watch_eof`` reads in the background and returns when the peer closes (what
it reads meanwhile goes to h11's buffer, up to a cap).  Trio allows one task
to receive while another sends on the same stream.

Every network failure surfaces as ``ClientGone``; an h11 protocol violation
by the peer as ``h11.RemoteProtocolError`` (the loop answers 400 and
closes).  Only the HTTP servers import this module, so ``import trimcp`` does
not load h11.
"""

from __future__ import annotations

import http
import logging
from collections.abc import Awaitable, Callable, Iterable

import h11
import trio

from .._sansio import jsonrpc as rpc
from .._sansio.http.routing import HttpError, RequestHead

__all__ = ["ClientGone", "H11Stream", "RequestHandler", "serve_connection"]

logger = logging.getLogger("trimcp.http.server")

_RECV_SIZE = 65536
#: How much a client may send while its response is produced (then we stop reading).
_EARLY_DATA_CAP = 256 * 1024
#: Longest request head (request line and headers) accepted: h11's default.
MAX_HEAD = 16 * 1024
SERVER_HEADER = ("server", "trimcp")


class ClientGone(Exception):
    """The client closed or reset the connection."""


def _reason(status: int) -> bytes:
    try:
        return http.HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


class H11Stream:
    """One server-side HTTP/1.1 connection (see the module docstring)."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        max_body: int,
        body_timeout: float = 30.0,
        max_head: int = MAX_HEAD,
        error_code: int | None = rpc.INVALID_REQUEST,
    ) -> None:
        self.stream = stream
        self.conn = h11.Connection(h11.SERVER, max_incomplete_event_size=max_head)
        self.max_body = max_body
        self.body_timeout = body_timeout
        #: The JSON-RPC code of the errors this layer answers by itself (None: plain text).
        self.error_code = error_code
        self.peer_closed = False

    # ------------------------------------------------------------ reading

    async def _receive(self) -> bytes:
        try:
            return bytes(await self.stream.receive_some(_RECV_SIZE))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""

    async def _next_event(self) -> object:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            if self.conn.they_are_waiting_for_100_continue:
                await self._send(
                    h11.InformationalResponse(status_code=100, headers=[SERVER_HEADER])
                )
            data = await self._receive()
            if not data:
                self.peer_closed = True
            self.conn.receive_data(data)

    async def read_request(
        self, idle_timeout: float | None
    ) -> tuple[RequestHead, bytes] | HttpError | None:
        """The next request and its body; ``None`` when the client closed or stayed idle too long.

        An oversize or too slow body gives the ``HttpError`` to answer (the
        connection is then closed).  Raises ``h11.RemoteProtocolError`` for
        malformed HTTP.
        """
        with trio.move_on_after(idle_timeout if idle_timeout is not None else float("inf")):
            event = await self._next_event()
            if not isinstance(event, h11.Request):
                return None
            head = RequestHead.build(
                event.method.decode("ascii", "replace"),
                event.target.decode("ascii", "replace"),
                [(k.decode("ascii", "replace"), v.decode("latin-1")) for k, v in event.headers],
            )
            body = bytearray()
            with trio.move_on_after(self.body_timeout):
                while True:
                    part = await self._next_event()
                    if isinstance(part, h11.Data):
                        body += part.data
                        if len(body) > self.max_body:
                            return self.error(
                                413, f"Payload Too Large: more than {self.max_body} bytes"
                            )
                    elif isinstance(part, h11.EndOfMessage):
                        return head, bytes(body)
                    else:
                        return None
            return self.error(408, "Request Timeout: the body took too long")
        return None

    def error(self, status: int, message: str) -> HttpError:
        """An answer of this layer's own, in the body format the server speaks."""
        return HttpError(status, message, code=self.error_code)

    async def watch_eof(self) -> None:
        """Return when the client closes the connection (run next to a response)."""
        taken = 0
        while True:
            data = await self._receive()
            if not data:
                self.peer_closed = True
                return
            taken += len(data)
            if self.conn.their_state is not h11.ERROR:
                self.conn.receive_data(data)
            if taken > _EARLY_DATA_CAP:
                await trio.sleep_forever()

    # ------------------------------------------------------------ writing

    async def _send(self, event: h11.Event) -> None:
        data = self.conn.send(event)
        if data:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise ClientGone(str(exc)) from None

    @staticmethod
    def _headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        return [SERVER_HEADER, *headers]

    async def respond(
        self, status: int, headers: Iterable[tuple[str, str]] = (), body: bytes = b""
    ) -> None:
        """A complete response."""
        hdrs = self._headers(headers)
        if status not in (204, 304):
            hdrs.append(("content-length", str(len(body))))
        await self._send(h11.Response(status_code=status, headers=hdrs, reason=_reason(status)))
        if body and status not in (204, 304):
            await self._send(h11.Data(data=body))
        await self._send(h11.EndOfMessage())

    async def respond_error(self, error: HttpError, extra: Iterable[tuple[str, str]] = ()) -> None:
        headers = [("content-type", error.content_type), *error.headers, *extra]
        await self.respond(error.status, headers, error.body())

    async def start(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """Begin a streamed response (no length)."""
        await self._send(
            h11.Response(status_code=status, headers=self._headers(headers), reason=_reason(status))
        )

    async def write(self, data: bytes) -> None:
        await self._send(h11.Data(data=data))

    async def end(self) -> None:
        await self._send(h11.EndOfMessage())

    @property
    def can_respond(self) -> bool:
        """Whether a response may still be started (none was begun for this request)."""
        return self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE)

    def next_cycle(self) -> bool:
        """Get ready for the next request on this connection; False when it must close."""
        if self.peer_closed:
            return False
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
            return True
        return False

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(self.stream)


#: What serves one request: it must answer it (``respond``/``start``...) before returning.
RequestHandler = Callable[[H11Stream, RequestHead, bytes], Awaitable[None]]


async def serve_connection(
    stream: trio.abc.Stream,
    handler: RequestHandler,
    *,
    max_body: int,
    idle_timeout: float | None,
    body_timeout: float = 30.0,
    max_head: int = MAX_HEAD,
    error_code: int | None = rpc.INVALID_REQUEST,
) -> None:
    """Serve every request of one connection with ``handler``, then close it.

    ``idle_timeout`` bounds the wait for a request (the first one and each
    keep-alive one), ``body_timeout`` the reading of its body.
    """
    http = H11Stream(
        stream,
        max_body=max_body,
        body_timeout=body_timeout,
        max_head=max_head,
        error_code=error_code,
    )
    try:
        while True:
            try:
                got = await http.read_request(idle_timeout)
            except h11.RemoteProtocolError as exc:
                if http.can_respond:
                    await http.respond_error(HttpError(400, f"Bad Request: {exc}", code=None))
                return
            if got is None:
                return
            if isinstance(got, HttpError):
                await http.respond_error(got, [("connection", "close")])
                return
            head, body = got
            await handler(http, head, body)
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
        await http.aclose()
