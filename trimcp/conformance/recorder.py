"""A transparent MessageStream wrapper that remembers the whole conversation.

The harness validates *everything* the server sent, not only what the typed
client helpers happened to parse.  Wrapping the transport (rather than hooking
the Connection) keeps the recorder independent of transport and era: it sees
the raw JSON texts as they arrived and the messages as they left.

``sent_at`` orders the two directions: a request sent when ``n`` texts had
been received was sent after ``received[n - 1]`` and before ``received[n]``
(the stateless checks use it to follow a multi-round-trip request from its
InputRequiredResult to the retry).  ``transcript()`` is both directions in the
order they crossed, in the ``spec/`` corpus format (``transcript.py`` writes it).

``HttpCapture`` wraps an HTTP ``Executor`` and keeps each exchange's method, URL,
status and the headers the transport rules speak of (``RULE_HEADERS``;
basic/transports Streamable HTTP and HTTP+SSE), so an HTTP recording can carry
them beside the messages (the ``"http"`` member, ``http_evidence.py``; ``trimcp
check --record`` and ``spec/record.py``).

``recording_connector`` records every connection a connector opens (the run's probe
connections), so the checks of sentences about *every* message the server sends read the
probes' answers too, not only the tour's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import attrs

from .._errors import RemoteProtocolError
from .._sansio import jsonrpc as rpc
from .._sansio.http import header_names as hn
from .._sansio.http.client.plan import HttpRequest
from .._trio.stream import NO_META, Inbound, MessageStream, Received, SendMeta
from .._trio.transports.http.executor import Executor, HttpResponse


class RecordingStream:
    """``capture`` (the ``HttpCapture`` under an HTTP stream) makes the recorder note, for
    each text received, the exchange read last when it arrived (``http_tags``), the
    evidence ``http_evidence.annotate`` turns into each entry's ``"http"`` member."""

    def __init__(self, inner: MessageStream, *, capture: HttpCapture | None = None) -> None:
        self.inner = inner
        self.capture = capture
        self.http_tags: list[Exchange | None] = []
        #: Every JSON text received, in order.
        self.received: list[bytes] = []
        #: Method of every request we sent, by id (to type the answers).
        self.sent_methods: dict[rpc.RequestId, str] = {}
        self.sent: list[rpc.Message] = []
        #: Every request sent, by id.
        self.requests: dict[rpc.RequestId, rpc.Request] = {}
        #: How many texts had been received when each request was sent.
        self.sent_at: dict[rpc.RequestId, int] = {}
        self._parsed: list[tuple[int, rpc.Message]] = []
        self._parsed_upto = 0
        #: Both directions in order: ("send", index into ``sent``) or ("recv", index into ``received``).
        self._order: list[tuple[str, int]] = []
        #: Malformed texts a probe wrote past ``send`` (``note_raw``): how many texts had been
        #: received when each went out, and whether its id could be read.
        self.raw_sent: list[tuple[int, bool]] = []

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if isinstance(message, rpc.Request):
            self.sent_methods[message.id] = message.method
            self.requests[message.id] = message
            self.sent_at[message.id] = len(self.received)
        self._order.append(("send", len(self.sent)))
        self.sent.append(message)
        await self.inner.send(message, meta)

    async def receive(self) -> Inbound:
        item = await self.inner.receive()
        if isinstance(item, Received):
            self._order.append(("recv", len(self.received)))
            self.received.append(item.data)
            if self.capture is not None:
                self.http_tags.append(self.capture.last_read)
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()

    def note_raw(self, id_readable: bool) -> None:
        """A probe wrote a malformed text on this connection itself (``send_raw``, a raw POST);
        ``id_readable``: a JSON-RPC error to it must carry its id, not null."""
        self.raw_sent.append((len(self.received), id_readable))

    def order(self) -> list[tuple[str, int]]:
        """Both directions in crossing order (see ``_order``)."""
        return list(self._order)

    def messages(self) -> list[tuple[int, rpc.Message]]:
        """Every well-formed message received so far, with the index of its text."""
        while self._parsed_upto < len(self.received):
            index = self._parsed_upto
            self._parsed_upto += 1
            try:
                parsed = rpc.parse_payload(self.received[index])
            except RemoteProtocolError:
                continue
            self._parsed.extend((index, msg) for msg in parsed.messages)
        return self._parsed

    def answers(self) -> dict[rpc.RequestId, tuple[int, rpc.Response | rpc.ErrorResponse]]:
        """The first answer to each request id, with the index of its text."""
        out: dict[rpc.RequestId, tuple[int, rpc.Response | rpc.ErrorResponse]] = {}
        for index, msg in self.messages():
            if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id is not None:
                out.setdefault(msg.id, (index, msg))
        return out

    def sends_before(self) -> list[int]:
        """For each text received (by index), how many messages had been sent before it arrived."""
        out: list[int] = []
        sent = 0
        for direction, _ in self._order:
            if direction == "send":
                sent += 1
            else:
                out.append(sent)
        return out

    def transcript(self) -> list[dict[str, Any]]:
        """``[{"dir": "send"|"recv", "message": obj}]`` in crossing order; a received text that
        is not JSON is kept as ``{"dir": "recv", "raw": text}``."""
        out: list[dict[str, Any]] = []
        for direction, index in self._order:
            if direction == "send":
                out.append({"dir": "send", "message": rpc.message_to_obj(self.sent[index])})
                continue
            data = self.received[index]
            try:
                out.append({"dir": "recv", "message": json.loads(data)})
            except ValueError:
                out.append({"dir": "recv", "raw": data.decode("utf-8", "replace")})
        return out

    def __getattr__(self, name: str) -> Any:
        # Expose the wrapped transport's extras (stderr_tail, returncode, ...).
        return getattr(self.inner, name)


# ---------------------------------------------------------------- HTTP exchanges

#: The headers the transport rules speak of (basic/transports: Streamable HTTP, HTTP+SSE;
#: basic/authorization): what a recording keeps of each HTTP exchange.
RULE_HEADERS = frozenset(
    {
        "accept",
        "allow",
        "content-type",
        "location",
        "retry-after",
        "www-authenticate",
        *map(
            hn.lower, (hn.LAST_EVENT_ID_HEADER, hn.METHOD_HEADER, hn.NAME_HEADER, hn.VERSION_HEADER, hn.SESSION_HEADER)
        ),
    }
)


def rule_headers(headers: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The headers of ``headers`` that matter to the rules (``Mcp-Param-*`` too), names lowercased."""
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        if key in RULE_HEADERS or key.startswith(hn.lower(hn.PARAM_HEADER_PREFIX)):
            out[key] = value if key not in out else f"{out[key]}, {value}"
    return out


@attrs.define
class Exchange:
    """One HTTP request made by the client transport, and the head of its response."""

    method: str
    url: str
    request_headers: dict[str, str]
    #: The JSON body of a POST (``None`` for a GET, a DELETE, or a body that is not JSON).
    body: Any = None
    status: int | None = None
    response_headers: dict[str, str] = attrs.field(factory=dict)
    error: str | None = None

    def as_obj(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "url": self.url, "request_headers": self.request_headers}
        if self.status is not None:
            out["status"] = self.status
            out["response_headers"] = self.response_headers
        if self.error is not None:
            out["error"] = self.error
        return out


class _CapturedResponse:
    def __init__(self, inner: HttpResponse, exchange: Exchange, capture: HttpCapture) -> None:
        self.inner = inner
        self.exchange = exchange
        self.capture = capture
        self.status = inner.status
        self.headers = inner.headers

    async def read(self) -> bytes:
        data = await self.inner.read()
        # Only a JSON or SSE body can carry a message: the "Accepted" text of an HTTP+SSE
        # POST, read while a message is on its way down the GET stream, must not claim it.
        if data and self.carries_messages:
            self.capture.last_read = self.exchange
        return data

    @property
    def carries_messages(self) -> bool:
        kind = self.exchange.response_headers.get("content-type", "").split(";")[0].strip().lower()
        return kind in ("application/json", "text/event-stream")

    async def aclose(self) -> None:
        await self.inner.aclose()


class HttpCapture:
    """An ``Executor`` wrapper that remembers every exchange (``open_http_stream(executor=...)``).

    ``exchanges`` are in the order the requests were opened; ``last_read`` is the exchange
    whose JSON or SSE body gave the latest bytes, the best guess of where a message that is no answer
    (a notification, a server request) arrived.
    """

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.exchanges: list[Exchange] = []
        self.last_read: Exchange | None = None

    async def open(self, request: HttpRequest, *, sent: Callable[[], None] | None = None) -> HttpResponse:
        body: Any = None
        if request.body:
            try:
                body = json.loads(request.body)
            except ValueError:
                body = None
        exchange = Exchange(request.method, request.url, rule_headers(request.headers), body)
        self.exchanges.append(exchange)
        try:
            response = await (self.inner.open(request) if sent is None else self.inner.open(request, sent=sent))
        except Exception as exc:
            exchange.error = f"{type(exc).__name__}: {exc}"
            raise
        exchange.status = response.status
        exchange.response_headers = rule_headers(response.headers)
        return _CapturedResponse(response, exchange, self)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def carrying(self, message: Mapping[str, Any], taken: set[int]) -> Exchange | None:
        """The first exchange not in ``taken`` (indexes) whose body is ``message``."""
        for index, exchange in enumerate(self.exchanges):
            if index not in taken and exchange.body == message:
                taken.add(index)
                return exchange
        return None

    def request_post(self, request_id: Any) -> Exchange | None:
        """The POST that carried the request ``request_id`` (its answer comes on that POST)."""
        for exchange in self.exchanges:
            body = exchange.body
            if isinstance(body, dict) and "method" in body and body.get("id") == request_id:
                return exchange
        return None


def recording_connector(
    connect: Callable[[], AbstractAsyncContextManager[MessageStream]],
    sink: list[RecordingStream],
) -> Callable[[], AbstractAsyncContextManager[MessageStream]]:
    """``connect``, each connection it opens recorded into ``sink``."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[MessageStream]:
        async with connect() as stream:
            recording = RecordingStream(stream)
            sink.append(recording)
            yield recording

    return opened
