"""Streamable HTTP and legacy HTTP+SSE, client side: what came back (sans-IO).

Theory of operation
-------------------
A ``ResponseReader`` interprets one HTTP response the client got: to a POST
of a JSON-RPC message, to the standalone GET stream, to a GET that resumes a
request's stream (``Last-Event-ID``), or to the 2024-11-05 SSE GET.  The
driver feeds it the status and headers (``head``), the body bytes split
anywhere (``data``), and how the body ended (``end`` for a clean end,
``broken`` for a connection lost mid-body).  Each call returns *events*:

* ``MessageReceived`` - one JSON text for the session (an ``application/json``
  body, or the ``data`` of one SSE ``message`` event; an SSE event with empty
  data, the "priming" event, is skipped).  ``answers`` lists the ids of the
  JSON-RPC responses in it, so the driver can match them to waiting requests;
* ``SessionAssigned`` (an ``Mcp-Session-Id`` on the InitializeResult's
  response), ``SessionExpired`` (404 to a request that carried a session id,
  or a JSON-RPC error meaning the same, see ``session_gone``),
  ``FallBackToLegacy`` (``initialize`` refused with 400/404/405 and no modern
  JSON-RPC error in the body: try the 2024-11-05 transport);
* ``Accepted`` (a notification or response was taken), ``AnswerElsewhere`` (a
  request got 202: its answer will arrive on another stream, as on the
  2024-11-05 transport), ``RetryAfter`` (an SSE ``retry`` field),
  ``EndpointAnnounced`` (2024-11-05);
* how the body ended: ``StreamEnded``, ``StreamBroken`` (ended or cut before
  the request's answer, or in the middle of an event: the driver may resume
  with ``last_event_id`` or re-issue the request), ``StreamFailed`` (nothing
  to resume: oversize event, bad endpoint), ``StreamRefused`` (a GET answered
  with 405 or something that is not an event stream);
* ``HttpFailed`` and ``TransportIssue`` - what went wrong, for logs and the
  harness.

A request must never be left without an answer: when the HTTP exchange
fails for good (an error status, a body that is not JSON, a JSON body without
the answer, an oversize message) the reader emits a *synthesized* JSON-RPC
error answer for the request (``synthesized=True``, code -32603 with the HTTP
status in ``data``), or the server's own JSON-RPC error with its id repaired.
Resumable breaks are the driver's call: ``error_answer`` builds the error it
delivers when it gives up.  Nothing here does I/O or reads a clock.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ..._errors import RemoteProtocolError
from .. import jsonrpc as rpc
from .plan import resolve_endpoint
from ..framing.sse import SSEDecoder
from ..connection.stateless import MODERN_ERROR_CODES

__all__ = [
    "Accepted", "AnswerElsewhere", "EndpointAnnounced", "FallBackToLegacy", "HttpFailed",
    "MessageReceived", "Purpose", "ResponseReader", "RetryAfter", "SessionAssigned",
    "SessionExpired", "StreamBroken", "StreamEnded", "StreamFailed", "StreamRefused",
    "TransportIssue", "error_answer", "session_gone",
]

#: The code of a synthesized error answer (the HTTP details are in its ``data``).
TRANSPORT_ERROR_CODE: Final = rpc.INTERNAL_ERROR
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
    data: bytes
    #: The decoded JSON, or ``None`` when it is not JSON (the session reports that).
    obj: Any
    answers: tuple[rpc.RequestId, ...] = ()
    synthesized: bool = False


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


@attrs.frozen
class StreamRefused:
    status: int
    detail: str


@attrs.frozen
class HttpFailed:
    status: int
    detail: str


@attrs.frozen
class TransportIssue:
    detail: str


HttpEvent = (
    MessageReceived | SessionAssigned | SessionExpired | FallBackToLegacy | Accepted
    | AnswerElsewhere | RetryAfter | EndpointAnnounced | StreamEnded | StreamBroken
    | StreamFailed | StreamRefused | HttpFailed | TransportIssue
)


def error_answer(request_id: rpc.RequestId | None, message: str, data: Any = None) -> bytes:
    """A synthesized JSON-RPC error answer (code ``TRANSPORT_ERROR_CODE``)."""
    err = rpc.ErrorObject(TRANSPORT_ERROR_CODE, message, data)
    return rpc.serialize(rpc.ErrorResponse(request_id, err))


def session_gone(status: int, error: Mapping[str, Any] | None) -> bool:
    """Whether a failed answer to a request that carried a session id means the
    session is gone: HTTP 404 (unless the JSON-RPC error says "method not
    found", as a 2026-07-28 server does), or a JSON-RPC error with a code from
    ``SESSION_GONE_CODES`` (for -32600/32600, only when its message mentions a session)."""
    code = error.get("code") if error is not None else None
    message = error.get("message") if error is not None else None
    if status == 404:
        return code != rpc.METHOD_NOT_FOUND
    if code == -32001:
        return True
    return code in SESSION_GONE_CODES and isinstance(message, str) and "session" in message.lower()


def _is_modern(error: Mapping[str, Any] | None) -> bool:
    code = error.get("code") if error is not None else None
    return code in MODERN_ERROR_CODES or code == rpc.METHOD_NOT_FOUND


def _media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


def _loads(data: bytes | str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _answer_ids(obj: Any) -> tuple[rpc.RequestId, ...]:
    items = obj if isinstance(obj, list) else [obj]
    return tuple(
        item["id"] for item in items
        if isinstance(item, dict) and ("result" in item or "error" in item) and rpc.is_valid_id(item.get("id"))
    )


def _error_of(obj: Any) -> dict[str, Any] | None:
    error = obj.get("error") if isinstance(obj, dict) else None
    return error if isinstance(error, dict) else None


def _clip(body: bytes, limit: int = 300) -> str:
    text = body[:limit].decode("utf-8", "replace").strip()
    return text + ("..." if len(body) > limit else "")


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
        #: Whether the body ended (cleanly or not); no more input is accepted.
        self.finished = False
        self._body = _Body.DISCARD
        self._buffer = bytearray()
        self._overflow = False
        # One SSE event may hold a whole message plus its "data: " framing.
        self._decoder = SSEDecoder(
            max_message_size + 4096, last_event_id=last_event_id, retry_ms=retry_ms
        )
        self._retry_seen = retry_ms
        self._endpoint_seen = False

    # -- input ---------------------------------------------------------------------

    @property
    def last_event_id(self) -> str | None:
        return self._decoder.last_event_id

    @property
    def retry_ms(self) -> int | None:
        return self._decoder.retry_ms

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
                out.append(SessionExpired(f"HTTP 404 on GET {self.url} with a session id"))
            else:
                out.append(StreamRefused(status, f"HTTP {status} {self._reason()}"))
            return out
        if self.purpose is not Purpose.POST:
            if media == "text/event-stream":
                self._body = _Body.SSE
            else:
                out.append(StreamRefused(status, f"expected text/event-stream, got {media or 'no content type'!r}"))
            return out
        if self.is_initialize and not self.legacy_mode:
            session = self.headers.get("mcp-session-id")
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
                return self._fail(f"the JSON body exceeds {self.max_message_size} bytes")
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
            self._decoder.close()
            if self._decoder.truncated:
                return [self._broken("the event stream ended in the middle of an event")]
            if self.expects_answer and not self.answered or self.purpose is Purpose.RESUME and not self.answered:
                return [self._broken("the event stream ended before the answer")]
            return [StreamEnded(self.last_event_id, self.retry_ms)]
        if body is _Body.JSON:
            return self._end_json()
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
            return self._synth(None, f"the connection broke before the answer ({detail})")
        return [StreamEnded()]

    # -- internals -------------------------------------------------------------------

    def _reason(self) -> str:
        return f"from {self.url}" if self.url else ""

    def _broken(self, detail: str) -> StreamBroken:
        return StreamBroken(self.last_event_id, self.retry_ms, detail)

    def _message(self, data: bytes, obj: Any) -> MessageReceived:
        answers = _answer_ids(obj)
        if (
            self.answer_id is not None and not self.answered and not answers
            and isinstance(obj, dict) and _error_of(obj) is not None and obj.get("id") is None
        ):
            # An error with a null id on our request's own stream is about our request.
            obj = {**obj, "id": self.answer_id}
            data = rpc.dumps(obj)
            answers = (self.answer_id,)
        if self.answer_id is not None and self.answer_id in answers:
            self.answered = True
        return MessageReceived(data, obj, answers)

    def _synth(self, status: int | None, detail: str, extra: Any = None) -> list[HttpEvent]:
        """Fail the request for good with a synthesized error answer."""
        self.finished = True
        out: list[HttpEvent] = []
        if status is not None:
            out.append(HttpFailed(status, detail))
        else:
            out.append(TransportIssue(detail))
        answer = self.failure_answer(detail, extra)
        if answer is not None:
            out.append(answer)
        out.append(StreamEnded())
        return out

    def _fail(self, detail: str) -> list[HttpEvent]:
        out = self._synth(None, detail)
        out[-1] = StreamFailed(detail)
        return out

    def _feed_sse(self, chunk: bytes) -> list[HttpEvent]:
        try:
            events = self._decoder.feed(chunk)
        except RemoteProtocolError as exc:
            return self._fail(str(exc))
        out: list[HttpEvent] = []
        for event in events:
            if event.event == "endpoint":
                out += self._endpoint(event.data)
            elif event.event == "message":
                if event.data.strip():
                    out.append(self._message(event.data.encode("utf-8"), _loads(event.data)))
            else:
                out.append(TransportIssue(f"ignored an SSE event of type {event.event!r}"))
            if self.finished:
                return out
        retry = self._decoder.retry_ms
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
            return self._fail(str(exc))
        self._endpoint_seen = True
        return [EndpointAnnounced(url)]

    def _end_json(self) -> list[HttpEvent]:
        raw = bytes(self._buffer)
        obj = _loads(raw)
        if obj is None:
            return self._synth(self.status, f"the server's JSON body is not JSON: {_clip(raw)!r}")
        error = _error_of(obj)
        if self.sent_session and error is not None and self.status is not None and session_gone(self.status, error):
            return [SessionExpired(f"the server answered {error.get('code')}: {error.get('message')}")]
        out: list[HttpEvent] = [self._message(raw, obj)]
        if self.expects_answer and not self.answered:
            out += self._synth(None, f"the JSON body does not answer request {self.answer_id!r}")
            return out
        out.append(StreamEnded())
        return out

    def _end_other(self) -> list[HttpEvent]:
        raw = bytes(self._buffer)
        if not raw.strip():
            return [TransportIssue(f"HTTP {self.status} with an empty body for a request"), AnswerElsewhere(self.status or 200)]
        obj = _loads(raw)
        media = self.headers.get("content-type")
        if obj is not None and not self._overflow:
            issue = TransportIssue(f"a JSON body labelled {media!r}")
            self._body = _Body.JSON
            return [issue, *self._end_json()]
        return self._synth(self.status, f"unexpected content type {media!r} from {self.url}: {_clip(raw)!r}")

    def _end_error(self) -> list[HttpEvent]:
        status = self.status or 0
        raw = bytes(self._buffer)
        obj = None if self._overflow else _loads(raw)
        error = _error_of(obj)
        if self.sent_session and session_gone(status, error):
            return [SessionExpired(f"HTTP {status} on a request with a session id")]
        if self.is_initialize and self.legacy_fallback and status in (400, 404, 405) and not _is_modern(error):
            return [FallBackToLegacy(status, f"initialize got HTTP {status}")]
        reason = f"HTTP {status} {self._reason()}".strip()
        if not self.expects_answer:
            return [HttpFailed(status, f"{reason}: {_clip(raw)!r}"), StreamEnded()]
        rid = self.answer_id
        if (
            rid is not None and isinstance(obj, dict) and error is not None
            and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
        ):
            repaired = {**obj, "id": rid, "jsonrpc": "2.0"}
            self.answered = True
            return [
                HttpFailed(status, f"{reason}: [{error['code']}] {error['message']}"),
                MessageReceived(rpc.dumps(repaired), repaired, (rid,)),
                StreamEnded(),
            ]
        body = _clip(raw)
        return self._synth(status, f"{reason}" + (f": {body}" if body else ""), body or None)

    def failure_answer(self, detail: str, body: str | None = None) -> MessageReceived | None:
        """The error answer that fails this request for good (``None`` if answered)."""
        rid = self.answer_id
        if not self.expects_answer or self.answered or rid is None:
            return None
        self.answered = True
        data: dict[str, Any] = {"transport": "http"}
        if self.status is not None:
            data["status"] = self.status
        if body:
            data["body"] = body
        answer = error_answer(rid, detail, data)
        return MessageReceived(answer, json.loads(answer), (rid,), synthesized=True)
