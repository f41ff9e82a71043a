"""Streamable HTTP and legacy HTTP+SSE, client side: what came back (sans-IO).

Theory of operation
-------------------
A ``ResponseReader`` interprets one HTTP response the client got: to a POST
of a JSON-RPC message, to the standalone GET stream, to a GET that resumes a
request's stream (``Last-Event-ID``), or to the 2024-11-05 SSE GET (spec
2025-11-25 basic/transports "Sending Messages to the Server", "Listening for
Messages from the Server", "Resumability and Redelivery"; 2024-11-05
basic/transports "HTTP with SSE").  The driver feeds it the status and
headers (``head``), the body bytes split anywhere (``data``), and how the
body ended (``end`` for a clean end, ``broken`` for a connection lost
mid-body).  Each call returns *events*, facts for the driver and its policy
(``policy.py``) to act on; the reader decides nothing beyond what the bytes say:

* ``MessageReceived`` - one JSON text for the session (an ``application/json``
  body, or the ``data`` of one SSE ``message`` event; the empty data of a
  "priming" event is skipped), parsed here, once, by the one strict parser
  (``jsonrpc.parse_payload``: no NaN, no 1e400, UTF-8 only); the driver hands
  ``payload`` to the session as it is.  ``answers`` lists the ids it answers:
  those of its responses, and those an unusable answer still shows (an
  ``InvalidMessage`` whose id was recovered and which has ``result`` or
  ``error``), since the session fails that waiter at once;
* ``SessionAssigned`` (an ``Mcp-Session-Id`` on the InitializeResult's
  response), ``Accepted`` (a notification or response was taken),
  ``AnswerElsewhere`` (a request got 202: its answer will come on another
  stream, as on the 2024-11-05 transport), ``RetryAfter`` (an SSE ``retry``
  field), ``EndpointAnnounced`` (2024-11-05), ``TransportIssue`` (for logs);
* how the response ended (``Terminal``): ``StreamEnded``; ``StreamBroken``
  (ended or cut before the request's answer, or mid-event: resumable with
  ``last_event_id``, or re-issuable); ``StreamFailed`` (no answer will come
  from this exchange: an error status without a JSON-RPC answer, a body that
  answers nothing, an oversize message, a bad endpoint; ``status`` when HTTP
  gave one); ``StreamRefused`` (a GET answered with an error status or
  something that is not an event stream); ``SessionExpired`` (404 to a request
  that carried a session id, or a JSON-RPC error meaning the same, see
  ``session_gone``); ``FallBackToLegacy`` (``initialize`` refused with
  400/404/405 and no modern JSON-RPC error in the body).

The reader never makes up an answer.  It adds one thing to what the server
said: a JSON-RPC error with a ``null`` id on our request's own response is
about that request (the server could not tell its id), so its payload names
our id (``data`` stays the bytes the server sent).  Nothing here does I/O or
reads a clock.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Final, TypeAlias

import attrs

from ...._errors import RemoteProtocolError
from ... import jsonrpc as rpc
from ...connection.stateless import MODERN_ERROR_CODES
from ...framing import FramingOverflow
from ...framing.sse import ServerSentEvent, SSEDecoder
from ..header_names import SESSION_HEADER, lower
from .plan import resolve_endpoint

__all__ = [
    "Accepted",
    "AnswerElsewhere",
    "EndpointAnnounced",
    "FallBackToLegacy",
    "MessageReceived",
    "Purpose",
    "ResponseReader",
    "RetryAfter",
    "SessionAssigned",
    "SessionExpired",
    "StreamBroken",
    "StreamEnded",
    "StreamFailed",
    "StreamRefused",
    "Terminal",
    "TransportIssue",
    "answer_ids",
    "session_gone",
]

#: How much of an error body is kept (for the message and to look for JSON-RPC in it).
MAX_ERROR_BODY: Final = 64 * 1024
#: JSON-RPC error codes servers use for "no such session" (the TS SDK's -32001; the Python
#: SDK client's 32600/-32600 "Session terminated", which proxies relay).
SESSION_GONE_CODES: Final = frozenset({-32001, -32600, 32600})


class Purpose(enum.Enum):
    POST = "post"
    STANDALONE = "standalone-get"
    RESUME = "resume-get"
    LEGACY_SSE = "legacy-sse-get"


@attrs.frozen
class MessageReceived:
    #: The JSON text as it arrived (what a recorder keeps).
    data: bytes
    #: ``data`` parsed by ``jsonrpc.parse_payload``: what the session gets.
    payload: rpc.ParsedPayload
    #: The request ids this text answers (see the module docstring).
    answers: tuple[rpc.RequestId, ...] = ()


@attrs.frozen
class SessionAssigned:
    session_id: str


@attrs.frozen
class SessionExpired:
    detail: str


@attrs.frozen
class FallBackToLegacy:
    status: int
    detail: str


@attrs.frozen
class Accepted:
    status: int


@attrs.frozen
class AnswerElsewhere:
    status: int


@attrs.frozen
class RetryAfter:
    ms: int


@attrs.frozen
class EndpointAnnounced:
    url: str


@attrs.frozen
class StreamEnded:
    last_event_id: str | None = None
    retry_ms: int | None = None


@attrs.frozen
class StreamBroken:
    last_event_id: str | None
    retry_ms: int | None
    detail: str


@attrs.frozen
class StreamFailed:
    detail: str
    #: The HTTP status, when an error status is why.
    status: int | None = None


@attrs.frozen
class StreamRefused:
    status: int
    detail: str


@attrs.frozen
class TransportIssue:
    detail: str


#: How a response ended: the last event the reader gives for it.
Terminal: TypeAlias = StreamEnded | StreamBroken | StreamFailed | StreamRefused | SessionExpired | FallBackToLegacy
HttpEvent: TypeAlias = (
    MessageReceived
    | SessionAssigned
    | Accepted
    | AnswerElsewhere
    | RetryAfter
    | EndpointAnnounced
    | TransportIssue
    | Terminal
)
TERMINAL: Final = (StreamEnded, StreamBroken, StreamFailed, StreamRefused, SessionExpired, FallBackToLegacy)


def answer_ids(payload: rpc.ParsedPayload) -> tuple[rpc.RequestId, ...]:
    """The ids ``payload`` answers: its responses', and those unusable answers still show."""
    ids = [m.id for m in payload.messages if isinstance(m, (rpc.Response, rpc.ErrorResponse)) and m.id is not None]
    ids += [
        bad.id
        for bad in payload.invalid
        if bad.id is not None and isinstance(bad.raw, dict) and ("result" in bad.raw or "error" in bad.raw)
    ]
    return tuple(ids)


def _error_fields(payload: rpc.ParsedPayload | None) -> tuple[object, object] | None:
    """``(code, message)`` of the one error a body holds (leniently: a malformed error
    object counts too, as session-gone codes come from all sorts of servers)."""
    if payload is None or payload.is_batch:
        return None
    for message in payload.messages:
        if isinstance(message, rpc.ErrorResponse):
            return message.error.code, message.error.message
    for bad in payload.invalid:
        error = bad.raw.get("error") if isinstance(bad.raw, dict) else None
        if isinstance(error, dict):
            return error.get("code"), error.get("message")
    return None


def session_gone(status: int, error: tuple[object, object] | None) -> bool:
    """Whether a failed answer to a request that carried a session id means the
    session is gone: HTTP 404 (unless the JSON-RPC error says "method not
    found", as a 2026-07-28 server does), or a JSON-RPC error ``(code, message)``
    with a code from ``SESSION_GONE_CODES`` (for -32600/32600, only when its
    message mentions a session)."""
    code, message = error if error is not None else (None, None)
    if status == 404:
        return code != rpc.METHOD_NOT_FOUND
    if code == -32001:
        return True
    return code in SESSION_GONE_CODES and isinstance(message, str) and "session" in message.lower()


def _is_modern(error: tuple[object, object] | None) -> bool:
    code = error[0] if error is not None else None
    return code in MODERN_ERROR_CODES or code == rpc.METHOD_NOT_FOUND


def _media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


def _clip(body: bytes, limit: int = 300) -> str:
    text = body[:limit].decode("utf-8", "replace").strip()
    return text + ("..." if len(body) > limit else "")


def _null_id_error(raw: object) -> bool:
    """A JSON-RPC error object naming a null id (however malformed otherwise)."""
    return (
        isinstance(raw, dict)
        and raw.get("jsonrpc") == rpc.JSONRPC_VERSION
        and "error" in raw
        and "id" in raw
        and raw["id"] is None
    )


def _is_unparsable(payload: rpc.ParsedPayload) -> bool:
    return not payload.messages and all(bad.error.code == rpc.PARSE_ERROR for bad in payload.invalid)


class _Body(enum.Enum):
    JSON = "json"
    SSE = "sse"
    DISCARD = "discard"
    OTHER = "other"
    ERROR = "error"


class ResponseReader:
    """Interprets one HTTP response (see the module docstring)."""

    def __init__(
        self,
        purpose: Purpose,
        *,
        answer_id: rpc.RequestId | None = None,
        expects_answer: bool = False,
        sent_session: bool = False,
        is_initialize: bool = False,
        legacy_fallback: bool = False,
        legacy_mode: bool = False,
        max_message_size: int = rpc.DEFAULT_MAX_MESSAGE_SIZE,
        last_event_id: str | None = None,
        retry_ms: int | None = None,
        url: str = "",
    ) -> None:
        self.purpose = purpose
        self.answer_id = answer_id
        self.expects_answer = expects_answer and answer_id is not None
        self.sent_session = sent_session
        self.is_initialize = is_initialize
        self.legacy_fallback = legacy_fallback
        self.legacy_mode = legacy_mode
        self.max_message_size = max_message_size
        self.url = url
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        #: Whether the answer to ``answer_id`` went out in a ``MessageReceived``.
        self.answered = False
        #: How many ``MessageReceived`` went out.
        self.messages = 0
        #: Whether the body ended (cleanly or not); no more input is accepted.
        self.finished = False
        self._body = _Body.DISCARD
        self._buffer = bytearray()
        self._overflow = False
        #: The event stream's decoder, made when the first bytes of one arrive (``_sse``).
        self._decoder: SSEDecoder | None = None
        self._seed = (last_event_id, retry_ms)
        self._retry_seen = retry_ms
        self._endpoint_seen = False
        #: (last event id, retry) as of the event that ended the stream: what the decoder
        #: read after it in the same chunk was never delivered, so it must not count.
        self._frozen: tuple[str | None, int | None] | None = None

    # -- input ---------------------------------------------------------------------

    @property
    def last_event_id(self) -> str | None:
        if self._frozen is not None:
            return self._frozen[0]
        return self._seed[0] if self._decoder is None else self._decoder.last_event_id

    @property
    def retry_ms(self) -> int | None:
        if self._frozen is not None:
            return self._frozen[1]
        return self._seed[1] if self._decoder is None else self._decoder.retry_ms

    def head(self, status: int, headers: Sequence[tuple[str, str]]) -> list[HttpEvent]:
        """The status line and headers (names in any case)."""
        self.status = status
        for name, value in headers:
            self.headers.setdefault(name.lower(), value)
        media = _media_type(self.headers.get("content-type"))
        out: list[HttpEvent] = []
        if not 200 <= status < 300:
            if self.purpose is Purpose.POST:
                self._body = _Body.ERROR
            elif status == 404 and self.sent_session:
                out.append(self._finish(SessionExpired(f"HTTP 404 on GET {self.url} with a session id")))
            else:
                out.append(self._finish(StreamRefused(status, f"HTTP {status} {self._reason()}".strip())))
            return out
        if self.purpose is not Purpose.POST:
            if media == "text/event-stream":
                self._body = _Body.SSE
            else:
                refused = StreamRefused(status, f"expected text/event-stream, got {media or 'no content type'!r}")
                out.append(self._finish(refused))
            return out
        if self.is_initialize and not self.legacy_mode:
            session = self.headers.get(lower(SESSION_HEADER))
            if session is not None:
                if session and all("!" <= c <= "~" for c in session):
                    out.append(SessionAssigned(session))
                else:
                    out.append(TransportIssue(f"ignored an invalid Mcp-Session-Id {session!r}"))
        if not self.expects_answer:
            out.append(Accepted(status))
        elif media == "application/json" or media.endswith("+json"):
            self._body = _Body.JSON
        elif media == "text/event-stream":
            self._body = _Body.SSE
        elif status in (202, 204) or self.legacy_mode:
            out.append(AnswerElsewhere(status))
        else:
            self._body = _Body.OTHER
        return out

    def data(self, chunk: bytes) -> list[HttpEvent]:
        """Body bytes, split anywhere."""
        if self.finished or not chunk:
            return []
        body = self._body
        if body is _Body.SSE:
            return self._feed_sse(chunk)
        if body is _Body.JSON:
            if len(self._buffer) + len(chunk) > self.max_message_size:
                return [self._finish(StreamFailed(f"the JSON body exceeds {self.max_message_size} bytes"))]
            self._buffer += chunk
        elif body is not _Body.DISCARD:
            room = MAX_ERROR_BODY - len(self._buffer)
            self._buffer += chunk[: max(room, 0)]
            self._overflow = self._overflow or len(chunk) > room
        return []

    def end(self) -> list[HttpEvent]:
        """The body ended cleanly."""
        if self.finished:
            return []
        self.finished = True
        body = self._body
        if body is _Body.SSE:
            decoder = self._sse()
            decoder.close()
            if decoder.truncated:
                return [self._broken("the event stream ended in the middle of an event")]
            if (self.expects_answer or self.purpose is Purpose.RESUME) and not self.answered:
                return [self._broken("the event stream ended before the answer")]
            return [StreamEnded(self.last_event_id, self.retry_ms)]
        if body is _Body.JSON:
            raw = bytes(self._buffer)  # within the cap: data() saw to it
            return self._end_json(raw, self._parse(raw))
        if body is _Body.ERROR:
            return self._end_error()
        if body is _Body.OTHER:
            return self._end_other()
        return [StreamEnded()]

    def broken(self, detail: str) -> list[HttpEvent]:
        """The connection failed mid-body (``detail`` says how)."""
        if self.finished:
            return []
        self.finished = True
        if self._body is _Body.SSE:
            return [self._broken(f"the connection broke mid-stream ({detail})")]
        if self._body is _Body.JSON:
            return [StreamBroken(None, None, f"the connection broke mid-body ({detail})")]
        if self.expects_answer and self._body is not _Body.DISCARD:
            return [StreamFailed(f"the connection broke before the answer ({detail})", self.status)]
        return [StreamEnded()]

    # -- internals -------------------------------------------------------------------

    def _sse(self) -> SSEDecoder:
        """The event stream's decoder (made on first use: most answers are plain JSON)."""
        decoder = self._decoder
        if decoder is None:
            # One SSE event may hold a whole message plus its "data: " framing.
            last_event_id, retry_ms = self._seed
            decoder = self._decoder = SSEDecoder(
                self.max_message_size + 4096, last_event_id=last_event_id, retry_ms=retry_ms
            )
        return decoder

    def _reason(self) -> str:
        return f"from {self.url}" if self.url else ""

    def _finish(self, event: Terminal) -> Terminal:
        self.finished = True
        return event

    def _broken(self, detail: str) -> StreamBroken:
        return StreamBroken(self.last_event_id, self.retry_ms, detail)

    def _parse(self, data: bytes) -> rpc.ParsedPayload:
        """The one parse of a JSON text (``RemoteProtocolError`` when over the size cap)."""
        return rpc.parse_payload(data, max_size=self.max_message_size)

    def _message(self, data: bytes, payload: rpc.ParsedPayload) -> MessageReceived:
        answers = answer_ids(payload)
        rid = self.answer_id
        if rid is not None and not self.answered and not answers and not payload.is_batch:
            # A null-id error on our request's own response is about our request (usable
            # or not: an unusable one then fails its waiter at once).
            only = payload.messages[0] if len(payload.messages) == 1 and not payload.invalid else None
            bad = payload.invalid[0] if len(payload.invalid) == 1 and not payload.messages else None
            if isinstance(only, rpc.ErrorResponse) and only.id is None:
                payload = rpc.ParsedPayload([rpc.ErrorResponse(rid, only.error)], [])
                answers = (rid,)
            elif bad is not None and _null_id_error(bad.raw):
                payload = rpc.ParsedPayload([], [attrs.evolve(bad, id=rid)])
                answers = (rid,)
        if rid is not None and rid in answers:
            self.answered = True
        self.messages += 1
        return MessageReceived(data, payload, answers)

    def _feed_sse(self, chunk: bytes) -> list[HttpEvent]:
        try:
            return self._sse_events(self._sse().feed(chunk))
        except FramingOverflow as exc:
            # What the chunk completed before the overflow goes out first, then the
            # retry in effect (the decoder applies one as soon as it is read), so the
            # events and the final state do not depend on where the body was cut.
            out = self._sse_events(exc.completed)
            if not self.finished:
                out.append(self._finish(StreamFailed(str(exc))))
            return out

    def _sse_events(self, events: list[ServerSentEvent]) -> list[HttpEvent]:
        out: list[HttpEvent] = []
        for event in events:
            if event.event == "endpoint":
                out += self._endpoint(event.data)
            elif event.event == "message":
                if event.data.strip():
                    data = event.data.encode("utf-8")
                    try:
                        out.append(self._message(data, self._parse(data)))
                    except RemoteProtocolError as exc:
                        out.append(self._finish(StreamFailed(str(exc))))
            else:
                out.append(TransportIssue(f"ignored an SSE event of type {event.event!r}"))
            if self.finished:
                # The state stops at this event, as it would had the body been cut here.
                self._frozen = (event.id, event.reconnection_ms)
                return out
        retry = self._sse().retry_ms
        if retry is not None and retry != self._retry_seen:
            self._retry_seen = retry
            out.append(RetryAfter(retry))
        return out

    def _endpoint(self, data: str) -> list[HttpEvent]:
        if self.purpose is not Purpose.LEGACY_SSE:
            return [TransportIssue("ignored an 'endpoint' event outside the 2024-11-05 transport")]
        if self._endpoint_seen:
            return [TransportIssue("ignored a second 'endpoint' event")]
        try:
            url = resolve_endpoint(self.url, data)
        except RemoteProtocolError as exc:
            return [self._finish(StreamFailed(str(exc)))]
        self._endpoint_seen = True
        return [EndpointAnnounced(url)]

    def _end_json(self, raw: bytes, payload: rpc.ParsedPayload) -> list[HttpEvent]:
        if self.sent_session and self.status is not None:
            error = _error_fields(payload)
            if error is not None and session_gone(self.status, error):
                return [SessionExpired(f"the server answered {error[0]}: {error[1]}")]
        out: list[HttpEvent] = [self._message(raw, payload)]
        if self.expects_answer and not self.answered:
            if _is_unparsable(payload):
                detail = f"the server's JSON body is not JSON: {_clip(raw)!r}"
            else:
                detail = f"the JSON body does not answer request {self.answer_id!r}"
            out.append(StreamFailed(detail, self.status))
            return out
        out.append(StreamEnded())
        return out

    def _end_other(self) -> list[HttpEvent]:
        raw = bytes(self._buffer)
        media = self.headers.get("content-type")
        if not raw.strip():
            issue = TransportIssue(f"HTTP {self.status} with an empty body for a request")
            return [issue, AnswerElsewhere(self.status or 200), StreamEnded()]
        if not self._overflow and len(raw) <= self.max_message_size:
            payload = self._parse(raw)
            if not _is_unparsable(payload):
                self._body = _Body.JSON
                return [TransportIssue(f"a JSON body labelled {media!r}"), *self._end_json(raw, payload)]
        return [StreamFailed(f"unexpected content type {media!r} from {self.url}: {_clip(raw)!r}", self.status)]

    def _end_error(self) -> list[HttpEvent]:
        status = self.status or 0
        raw = bytes(self._buffer)
        too_big = self._overflow or len(raw) > self.max_message_size
        payload = None if too_big or not raw.strip() else self._parse(raw)
        error = _error_fields(payload)
        if self.sent_session and session_gone(status, error):
            return [SessionExpired(f"HTTP {status} on a request with a session id")]
        if self.is_initialize and self.legacy_fallback and status in (400, 404, 405) and not _is_modern(error):
            # (the failed request is named by whoever reports it: "initialize failed: HTTP 404")
            return [FallBackToLegacy(status, f"HTTP {status}")]
        reason = f"HTTP {status} {self._reason()}".strip()
        body = _clip(raw)
        failed = StreamFailed(f"{reason}: {body}" if body else reason, status)
        if not self.expects_answer or payload is None:
            return [failed]
        message = self._message(raw, payload)
        if not self.answered:
            # JSON-RPC, but not our answer: the server's words still reach the session.
            return [message, failed] if message.payload.messages or message.answers else [failed]
        code, text = error if error is not None else (None, None)
        return [TransportIssue(f"{reason}: [{code}] {text}"), message, StreamEnded()]
