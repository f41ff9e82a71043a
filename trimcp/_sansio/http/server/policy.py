"""What the HTTP server does with a request: its policy, as data (sans-IO).

Theory of operation
-------------------
The Trio app (``trimcp/server/transports/http/app.py``) reads one request and
executes what this module decides; every status it answers with is chosen
here.  It is the server's mirror of the client's ``client/policy.py``: the
app reports what it has (the request head and body, then, after acting, what
happened), the policy answers with an *action*, and nothing here does I/O,
reads a clock or draws randomness (session ids are the app's).

``ServerPolicy.decide(head, body, view)`` applies, in order, the checks that
``routing`` documents (DNS rebinding, routing, content types, the body parsed
once, the era) and then the rules of each endpoint (spec 2025-11-25
basic/transports "Session Management", "Resumability and Redelivery";
2026-07-28 basic/transports/streamable-http; 2024-11-05 "HTTP with SSE").
``view`` is what the policy may see of the live state, read-only: a session
by id (is it closed, its revision, which request ids are in flight, whether
its standalone stream is attached, which streams it can resume), a legacy
session by id, a tool's input schema.

==========================================  =====================================================
request                                     action
==========================================  =====================================================
foreign ``Origin`` / ``Host``; other path   ``Respond`` 403 / 421; 404; 405 (``Allow``)
or method
POST: bad ``Content-Type``, too large,      ``Respond`` 415, 413, 400 (-32700 / -32600)
unparsable
POST, stateless era (``_meta`` envelope,    ``ServeStateless``; a batch or a response: 400; a
or a 2026-07-28 version header, or no       notification: 202; headers that disagree with the
handshake-era revision served)              body: 400 (``metadata``); Accept neither: 406
POST ``initialize`` without a session id    ``OpenSession`` (Accept neither: 406)
POST, other, without a session id           ``Respond`` 400 (a batch: its own 400)
POST naming a session                       malformed id 400, unknown 404, bad version 400,
                                            batch the revision lacks 400; notifications and
                                            responses: ``SubmitToSession`` (202); requests:
                                            406 for Accept, 409 for an id in flight, else
                                            ``SubmitToSession`` with a ``Reply`` (SSE or JSON)
GET                                         405 without sessions or ``get_stream``; 406 without
                                            SSE; the session as above; ``Last-Event-ID`` of a
                                            stream kept: ``AttachStream`` there (of one gone: 200,
                                            an empty stream); else 409 when the standalone
                                            stream is attached, or ``AttachStream`` to it
DELETE                                      405 without sessions; ``EndSession``
legacy SSE GET / legacy POST                ``OpenLegacyStream`` (406 without SSE) /
                                            ``SubmitToLegacySession`` (400, 404, 415, 413, 400)
==========================================  =====================================================

After acting, the app reports a *fact* when it still owes an answer, and
``answer(fact)`` gives it: ``SessionsFull`` (the session table had no room:
503 with ``Retry-After``), ``InitializeUnanswered`` (500),
``StreamAborted`` (the session ended before the answer: 404; the client
cancelled the request in JSON mode: 200 with an error), ``StatelessUnanswered``
(500), ``SessionGone`` (a session ended under a request: 404), and, for a
server run as replicas (its streams in a shared store), ``StreamGone`` (the
store keeps nothing of the stream a ``Last-Event-ID`` names: the same empty
stream as above) and ``StreamHeld`` (another replica's connection reads the
standalone stream: 409).

What the app must not read from a payload travels in the action: the ids a
``notifications/cancelled`` names (``SubmitToSession.cancelled``), the request
an answer stream relates to, whether a stream starts with a priming event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, TypeAlias

import attrs

from ... import jsonrpc as rpc
from ...revisions import REVISIONS
from ..header_names import LAST_EVENT_ID_HEADER, SESSION_HEADER, VERSION_HEADER
from .metadata import check_stateless_request
from .replay import STANDALONE_KEY, parse_event_id
from .routing import (
    MISSING_SESSION,
    NOT_ACCEPTABLE,
    SSE_TYPE,
    Endpoint,
    HttpError,
    OriginPolicy,
    PostBody,
    RequestHead,
    accepts,
    check_batch,
    check_content_type,
    check_session_version,
    is_stateless_post,
    is_stateless_version,
    legacy_session_of,
    method_not_allowed,
    parse_post,
    route,
    session_id_of,
    stateless_status,
    unknown_session,
)

__all__ = [
    "ACCEPTED",
    "ENDED",
    "LEGACY_ACCEPTED",
    "Action",
    "AttachStream",
    "EndSession",
    "Fact",
    "InitializeUnanswered",
    "OpenLegacyStream",
    "OpenSession",
    "Reply",
    "Respond",
    "ServeStateless",
    "ServerPolicy",
    "SessionFacts",
    "SessionGone",
    "SessionView",
    "SessionsFull",
    "StatelessUnanswered",
    "StreamAborted",
    "StreamGone",
    "StreamHeld",
    "SubmitToLegacySession",
    "SubmitToSession",
    "answer",
    "primes_streams",
]

_SESSION_TERMINATED: Final = HttpError(404, "Not Found: the session ended before the request was answered")


def primes_streams(version: str | None) -> bool:
    """Whether an SSE stream of a session under ``version`` starts with a priming event
    (``Revision.primes_sse``; no for a version nobody knows)."""
    row = REVISIONS.get(version) if version is not None else None
    return row is not None and row.primes_sse


# ---------------------------------------------------------------- what the policy sees


class LegacyFacts(Protocol):
    """A 2024-11-05 HTTP+SSE session, as the policy sees it."""

    @property
    def closed(self) -> bool: ...
    @property
    def protocol_version(self) -> str | None: ...


class SessionFacts(LegacyFacts, Protocol):
    """A handshake-era Streamable HTTP session, as the policy sees it."""

    def in_flight(self, request_id: rpc.RequestId) -> bool: ...
    @property
    def standalone_attached(self) -> bool: ...
    def has_stream(self, key: str) -> bool: ...


class SessionView(Protocol):
    """The live state the policy reads (and never changes)."""

    def session(self, session_id: str) -> SessionFacts | None: ...
    def legacy_session(self, session_id: str) -> LegacyFacts | None: ...
    def tool_schema(self, name: str) -> Mapping[str, Any] | None: ...


# ---------------------------------------------------------------- actions


@attrs.frozen
class Respond:
    """Answer with this and nothing else."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    #: A live session the request named: the request counts as its activity.
    session_id: str | None = None

    @classmethod
    def error(cls, error: HttpError, *, session_id: str | None = None) -> Respond:
        headers = (("content-type", error.content_type), *error.headers)
        return cls(error.status, headers, error.body(), session_id)


@attrs.frozen
class OpenSession:
    """``initialize`` without a session id: open a session (room permitting) and answer it there."""

    request: rpc.Request
    post: PostBody
    #: Answer as JSON (the client takes it), else as an SSE stream.
    json_ok: bool


@attrs.frozen
class Reply:
    """How the answers to the requests of a POST leave."""

    sse: bool
    #: The client takes ``application/json`` (a stream that ends unanswered may say so as JSON).
    json_ok: bool
    priming: bool
    #: An answer that comes before anything else, within a short wait, goes as one JSON body;
    #: the SSE stream (primed) starts when something else comes first or the wait ends
    #: (the client takes both: the 2025-11-25 transport lets the server pick either).
    json_when_ready: bool
    #: The request the body's messages relate to (one request; ``None`` for a batch).
    related: rpc.RequestId | None


#: What a POST of notifications and responses only gets once they are queued.
ACCEPTED: Final = Respond(202)
#: The legacy message endpoint's answer to a queued POST (2024-11-05).
LEGACY_ACCEPTED: Final = Respond(202, (("content-type", "text/plain; charset=utf-8"),), b"Accepted")
ENDED: Final = Respond(200)


@attrs.frozen
class SubmitToSession:
    """Queue the body for the session; then ``reply``: how the answers to its requests
    leave, or (no requests) what to answer at once."""

    session_id: str
    post: PostBody
    reply: Reply | Respond
    #: The requests the body's ``notifications/cancelled`` name: their streams end unanswered.
    cancelled: tuple[rpc.RequestId, ...] = ()


@attrs.frozen
class ServeStateless:
    """A 2026-07-28 request: serve it on a Connection of its own."""

    request: rpc.Request
    post: PostBody
    json_ok: bool
    #: SSE allowed: JSON when the answer is all there is, SSE when notifications come first.
    sse_ok: bool
    #: The HTTP status of an answer sent as JSON.
    status_of: Callable[[rpc.Message], int] = stateless_status


@attrs.frozen
class AttachStream:
    """A GET: write the session's stream ``key`` as SSE from event ``cursor`` on
    (``None``: from where delivery stopped, the standalone stream)."""

    session_id: str
    key: str
    cursor: int | None
    priming: bool


@attrs.frozen
class EndSession:
    """DELETE: close the session, then answer ``then``."""

    session_id: str
    then: Respond = ENDED


@attrs.frozen
class OpenLegacyStream:
    """GET on the 2024-11-05 SSE endpoint: a new session for as long as the stream is open."""


@attrs.frozen
class SubmitToLegacySession:
    """POST to the 2024-11-05 message endpoint: queue the body, then answer ``then``."""

    session_id: str
    post: PostBody
    then: Respond = LEGACY_ACCEPTED


Action: TypeAlias = (
    Respond
    | OpenSession
    | SubmitToSession
    | ServeStateless
    | AttachStream
    | EndSession
    | OpenLegacyStream
    | SubmitToLegacySession
)


# ---------------------------------------------------------------- facts after acting


@attrs.frozen
class SessionsFull:
    """``OpenSession``: every session is busy and the table is at its cap."""

    request_id: rpc.RequestId
    open_sessions: int


@attrs.frozen
class InitializeUnanswered:
    """``OpenSession``: the session's Connection gave ``initialize`` no answer in time."""

    request_id: rpc.RequestId


@attrs.frozen
class StreamAborted:
    """A session's answer stream ended without its final answer."""

    final_id: rpc.RequestId | None
    #: The client cancelled the request (JSON mode still has to answer something).
    cancelled: bool


@attrs.frozen
class StatelessUnanswered:
    """``ServeStateless``: the request's Connection ended without an answer."""

    request_id: rpc.RequestId


@attrs.frozen
class SessionGone:
    """The session closed under a request that was being served."""


@attrs.frozen
class StreamGone:
    """A ``Last-Event-ID`` named a stream nothing is kept of (a replica looked in the store)."""

    session_id: str


@attrs.frozen
class StreamHeld:
    """Another connection reads the session's standalone stream (on another replica)."""

    session_id: str


Fact: TypeAlias = (
    SessionsFull | InitializeUnanswered | StreamAborted | StatelessUnanswered | SessionGone | StreamGone | StreamHeld
)


def _nothing_to_resume(session_id: str) -> Respond:
    # Nothing left to replay on that stream: an empty stream that ends at once.
    headers = (("content-type", SSE_TYPE), ("cache-control", "no-cache"))
    return Respond(200, headers, b": nothing to resume\n\n", session_id=session_id)


_STREAM_HELD: Final = HttpError(409, "Conflict: this session already has a GET stream open")


def answer(fact: Fact) -> Respond:
    """What to answer once acting left the request without one."""
    if isinstance(fact, SessionsFull):
        return Respond.error(
            HttpError(
                503,
                f"Service Unavailable: {fact.open_sessions} sessions are open and busy",
                code=rpc.INTERNAL_ERROR,
                request_id=fact.request_id,
                headers=(("retry-after", "1"),),
            )
        )
    if isinstance(fact, InitializeUnanswered):
        return Respond.error(
            HttpError(500, "initialize got no answer", code=rpc.INTERNAL_ERROR, request_id=fact.request_id)
        )
    if isinstance(fact, StreamAborted) and fact.cancelled:
        return Respond.error(HttpError(200, "request cancelled", code=rpc.INTERNAL_ERROR, request_id=fact.final_id))
    if isinstance(fact, StreamGone):
        return _nothing_to_resume(fact.session_id)
    if isinstance(fact, StreamHeld):
        return Respond.error(_STREAM_HELD, session_id=fact.session_id)
    if isinstance(fact, StatelessUnanswered):
        return Respond.error(
            HttpError(
                500,
                "the request ended without an answer",
                code=rpc.INTERNAL_ERROR,
                request_id=fact.request_id,
            )
        )
    return Respond.error(_SESSION_TERMINATED)  # StreamAborted, SessionGone


# ---------------------------------------------------------------- the policy


def _cancelled(post: PostBody) -> tuple[rpc.RequestId, ...]:
    found: list[rpc.RequestId] = []
    for message in post.messages:
        if isinstance(message, rpc.Notification) and message.method == "notifications/cancelled":
            rid = (message.params or {}).get("requestId")
            if isinstance(rid, (int, str)) and rpc.is_valid_id(rid):
                found.append(rid)
    return tuple(found)


@attrs.frozen
class ServerPolicy:
    """The server's options that shape its answers; ``decide`` is the whole policy."""

    origins: OriginPolicy
    mcp_path: str | None = "/mcp"
    sse_path: str | None = None
    #: The legacy message endpoint (only with ``sse_path``).
    messages_path: str | None = None
    json_response: bool = False
    get_stream: bool = True
    max_body_size: int = rpc.DEFAULT_MAX_MESSAGE_SIZE
    #: The handshake-era revisions the server speaks (none: every POST is stateless).
    handshake_versions: tuple[str, ...] = ()

    def decide(self, head: RequestHead, body: bytes, view: SessionView) -> Action:
        """What to do with one request (see the module docstring)."""
        problem = self.origins.check(head)
        if problem is not None:
            return Respond.error(problem)
        endpoint = route(head, mcp_path=self.mcp_path, sse_path=self.sse_path, messages_path=self.messages_path)
        if isinstance(endpoint, HttpError):
            return Respond.error(endpoint)
        if endpoint is Endpoint.LEGACY_SSE:
            return self._legacy_get(head)
        if endpoint is Endpoint.LEGACY_MESSAGES:
            return self._legacy_post(head, body, view)
        if head.method == "POST":
            return self._post(head, body, view)
        if head.method == "GET":
            return self._get(head, view)
        return self._delete(head, view)

    # ------------------------------------------------------------ POST

    def _post(self, head: RequestHead, body: bytes, view: SessionView) -> Action:
        post = check_content_type(head) or parse_post(body, max_size=self.max_body_size)
        if isinstance(post, HttpError):
            return Respond.error(post)
        if not self.handshake_versions or is_stateless_post(head, post):
            return self._stateless(head, post, view)
        rid = post.error_id
        if not head.values(SESSION_HEADER):
            if post.is_request("initialize"):
                return self._initialize(head, post)
            return Respond.error((check_batch(post, None) or MISSING_SESSION).with_id(rid))
        found = self._session(head, rid, view)
        if isinstance(found, Respond):
            return found
        sid, session = found
        problem = check_batch(post, session.protocol_version)
        if problem is not None:
            return Respond.error(problem, session_id=sid)
        requests = post.requests
        if not requests:
            # Notifications and responses only (one, or a batch of them): 202, no body.
            return SubmitToSession(sid, post, ACCEPTED, _cancelled(post))
        json_ok, sse_ok = accepts(head)
        if not (json_ok or sse_ok):
            return Respond.error(NOT_ACCEPTABLE.with_id(rid), session_id=sid)
        busy = [r.id for r in requests if session.in_flight(r.id)]
        if busy:
            conflict = HttpError(409, f"Conflict: request id {busy[0]!r} is already in flight", request_id=rid)
            return Respond.error(conflict, session_id=sid)
        sse = sse_ok and not (self.json_response and json_ok)
        reply = Reply(
            sse=sse,
            json_ok=json_ok,
            priming=sse and primes_streams(session.protocol_version),
            json_when_ready=sse and json_ok,
            related=None if post.is_batch else requests[0].id,
        )
        return SubmitToSession(sid, post, reply, _cancelled(post))

    def _initialize(self, head: RequestHead, post: PostBody) -> Action:
        request = post.message
        assert isinstance(request, rpc.Request)
        json_ok, sse_ok = accepts(head)
        if not (json_ok or sse_ok):
            return Respond.error(NOT_ACCEPTABLE.with_id(request.id))
        return OpenSession(request, post, json_ok)

    def _session(
        self, head: RequestHead, rid: rpc.RequestId | None, view: SessionView
    ) -> tuple[str, SessionFacts] | Respond:
        """The live session a request names, or the 400/404 to answer."""
        sid = session_id_of(head)
        if isinstance(sid, HttpError):
            return Respond.error(sid.with_id(rid))
        session = view.session(sid)
        if session is None or session.closed:
            return Respond.error(unknown_session(sid).with_id(rid))
        problem = check_session_version(head, self.handshake_versions)
        if problem is not None:
            return Respond.error(problem.with_id(rid))
        return sid, session

    def _stateless(self, head: RequestHead, post: PostBody, view: SessionView) -> Action:
        # No stateless-era revision has batches; a batch is refused in the revision it names.
        version = head.get(VERSION_HEADER)
        problem = check_batch(post, version if is_stateless_version(version) else None)
        if problem is not None:
            return Respond.error(problem)
        message = post.message
        if isinstance(message, rpc.Notification):
            return ACCEPTED  # 2026-07-28 defines no client notifications over HTTP
        if not isinstance(message, rpc.Request):
            return Respond.error(HttpError(400, "Bad Request: clients send no responses in this revision"))
        schema = None
        if message.method == "tools/call":
            name = (message.params or {}).get("name")
            schema = view.tool_schema(name) if isinstance(name, str) else None
        problem = check_stateless_request(head, message, tool_schema=schema)
        if problem is not None:
            return Respond.error(problem)
        json_ok, sse_ok = accepts(head)
        if not (json_ok or sse_ok):
            return Respond.error(NOT_ACCEPTABLE.with_id(message.id))
        return ServeStateless(message, post, json_ok=json_ok, sse_ok=sse_ok)

    # ------------------------------------------------------------ GET and DELETE

    def _no_sessions(self, head: RequestHead) -> bool:
        return not self.handshake_versions or is_stateless_version(head.get(VERSION_HEADER))

    def _get(self, head: RequestHead, view: SessionView) -> Action:
        if self._no_sessions(head):
            return Respond.error(method_not_allowed(head, "POST"))
        if not self.get_stream:
            return Respond.error(method_not_allowed(head, "POST, DELETE"))
        _, sse_ok = accepts(head)
        if not sse_ok:
            return Respond.error(HttpError(406, f"Not Acceptable: a GET must accept {SSE_TYPE}"))
        found = self._session(head, None, view)
        if isinstance(found, Respond):
            return found
        sid, session = found
        priming = primes_streams(session.protocol_version)
        last = head.get(LAST_EVENT_ID_HEADER)
        parsed = parse_event_id(last) if last else None
        if parsed is None:
            if session.standalone_attached:
                return Respond.error(_STREAM_HELD, session_id=sid)
            return AttachStream(sid, STANDALONE_KEY, None, priming)
        key, seq = parsed
        if not session.has_stream(key):
            return _nothing_to_resume(sid)
        return AttachStream(sid, key, seq, priming)

    def _delete(self, head: RequestHead, view: SessionView) -> Action:
        if self._no_sessions(head):
            return Respond.error(method_not_allowed(head, "POST"))
        found = self._session(head, None, view)
        if isinstance(found, Respond):
            return found
        return EndSession(found[0])

    # ------------------------------------------------------------ legacy HTTP+SSE

    def _legacy_get(self, head: RequestHead) -> Action:
        _, sse_ok = accepts(head)
        if not sse_ok:
            return Respond.error(HttpError(406, f"Not Acceptable: the SSE endpoint answers {SSE_TYPE}"))
        return OpenLegacyStream()

    def _legacy_post(self, head: RequestHead, body: bytes, view: SessionView) -> Action:
        sid = legacy_session_of(head)
        if isinstance(sid, HttpError):
            return Respond.error(sid)
        session = view.legacy_session(sid)
        if session is None or session.closed:
            return Respond.error(unknown_session(sid))
        post = check_content_type(head) or parse_post(body, max_size=self.max_body_size)
        if not isinstance(post, HttpError):
            # A batch only where the negotiated revision has them; each answer is an event.
            post = check_batch(post, session.protocol_version) or post
        if isinstance(post, HttpError):
            return Respond.error(post)
        return SubmitToLegacySession(sid, post)
