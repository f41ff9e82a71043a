"""Serve a ``Server`` over Streamable HTTP (both eras) and the legacy HTTP+SSE transport.

Theory of operation
-------------------
``serve_http`` listens with ``trio.serve_tcp`` (on 127.0.0.1 unless told
otherwise, as the spec advises for local servers) and speaks HTTP/1.1 with
h11, one task per TCP connection, keep-alive included.  Each request is
first checked by the sans-IO rules of ``trimcp._sansio.http.server.routing``
(DNS-rebinding defence on ``Origin``/``Host``, routing, content types, the
body) and then served by era:

* **Handshake era** (2025-03-26 .. 2025-11-25).  A POSTed ``initialize``
  without a session id opens an ``HttpSession`` (id from ``secrets``, its own
  server Connection and driver via ``serve_stream``); the answer carries
  ``Mcp-Session-Id``.  Later requests must name the session (400 when they do
  not, 404 once it is gone).  A POSTed notification or response is queued and
  answered 202; a POSTed request is answered with an SSE stream carrying
  what relates to it and then its answer (``json_response=True``: one JSON
  body).  The body is parsed once (``routing.parse_post``) and the session
  gets that parse.  A JSON-RPC batch is served where the session's revision
  has batches (``Revision.batches``: 2025-03-26, whose receivers MUST accept
  them): notifications and responses only is 202, with requests the answers
  come as one JSON array (JSON mode) or as events of one SSE stream that
  ends after the last; elsewhere a batch is 400 with -32600.  SSE streams start with a priming event (id, empty data, ``retry``)
  for 2025-11-25 sessions and can be resumed: GET with ``Last-Event-ID``.
  A GET without it opens the session's standalone stream (one at a time: 409
  for a second; 405 when ``get_stream=False``); DELETE ends the session.
* **Stateless era** (2026-07-28).  A POST whose body carries the ``_meta``
  envelope, or whose ``MCP-Protocol-Version`` names that era, is checked
  against the mirrored headers (``_sansio.http.server.metadata``) and served on a
  Connection of its own (``RequestStream``): JSON when the answer is all
  there is (JSON-RPC errors then map to 400/404 as the spec says), SSE when
  notifications come first (``subscriptions/listen``, progress, logs).  The
  client closing the connection cancels the request.  GET and DELETE are 405
  for such clients, and for every client when the server speaks no
  handshake-era revision.
* **Legacy HTTP+SSE** (2024-11-05; ``sse_path``/``messages_path``), served
  by ``legacy_sse``.

``task_status.started`` hands back a ``BoundHttpServer`` (address, URLs, the
live sessions).

Limits that hold under abuse (each settable on ``serve_http``; ``None`` turns
one off): per connection, ``header_timeout`` (the whole head, from accept;
408), ``idle_timeout`` (keep-alive wait), ``body_timeout`` and
``max_body_size`` (413 on the ``Content-Length``, before the body) in
``trimcp._trio.h11_server``; across connections, ``max_connections`` (503
``Connection: close`` at once) and ``max_body_budget`` (default 4 x
``max_body_size``, at least 3 x: each body counts what parsing it takes, from
3 times its size for ASCII text up, ``jsonrpc.parse_cost``; a body waits for
room within its deadline, then 503, and one that would take more than the
whole budget is 413) in ``trimcp._trio.http_limits``; sessions,
``session_idle_timeout`` and ``max_sessions`` (the least recently active
session with no request in flight is evicted; none: 503) in ``session_table``.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import trio

from ...._errors import TransportClosed
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.server import routing as hs
from ...._sansio.http.server.replay import DEFAULT_REPLAY_BYTES, DEFAULT_REPLAY_EVENTS, parse_event_id
from ...._sansio.http.server.routing import HttpError, RequestHead
from ...._sansio.http.server.metadata import check_stateless_request
from ...._sansio.revisions import Era, get_revision
from ...._trio.h11_server import BODY_COPIES, H11Stream, serve_connection
from ...._trio.http_limits import BodyBudget, ConnectionLimit
from ...._trio.stream import Received
from ...definition import Server
from ...serve import serve_stream
from ...server_session import ServerSession
from .bound import BoundHttpServer
from .legacy_sse import LegacyEndpoints
from .session_table import SessionTable
from .sessions import HttpSession, RequestStream, close_sse_stream
from .streams import Outcome, OutStream, ResponseMode, write_response

logger = logging.getLogger("trimcp.server.transports.http.app")

#: The first revision whose SSE streams start with a priming event (SEP-1699).
_PRIMING_FROM = "2025-11-25"
_SESSION_TERMINATED = HttpError(404, "Not Found: the session ended before the request was answered")
#: The Connection answers initialize itself: this only guards against a wedged session.
_INITIALIZE_TIMEOUT = 30.0


class HttpApp:
    """The request handling of ``serve_http``; one per listening server."""

    def __init__(
        self,
        server: Server,
        *,
        policy: hs.OriginPolicy,
        mcp_path: str | None = "/mcp",
        sse_path: str | None = None,
        messages_path: str | None = "/messages",
        json_response: bool = False,
        get_stream: bool = True,
        retry_ms: int = 1000,
        keepalive: float | None = 15.0,
        replay_events: int = DEFAULT_REPLAY_EVENTS,
        replay_bytes: int = DEFAULT_REPLAY_BYTES,
        max_body_size: int = 16 * 1024 * 1024,
        idle_timeout: float | None = 60.0,
        session_idle_timeout: float | None = 3600.0,
        header_timeout: float | None = 10.0,
        body_timeout: float = 30.0,
        max_connections: int | None = 1000,
        max_sessions: int | None = 10_000,
        max_body_budget: int | None = None,
    ) -> None:
        budget = 4 * max_body_size if max_body_budget is None else max_body_budget
        if budget < BODY_COPIES * max_body_size:
            raise ValueError(
                f"max_body_budget ({budget}) must hold one body of max_body_size "
                f"({max_body_size}) as it is parsed: {BODY_COPIES} times its size"
            )
        self.server = server
        self.policy = policy
        self.mcp_path = mcp_path
        self.sse_path = sse_path
        self.messages_path = messages_path if sse_path else None
        self.json_response = json_response
        self.get_stream = get_stream
        self.retry_ms = retry_ms
        self.keepalive = keepalive
        self.replay_events = replay_events
        self.replay_bytes = replay_bytes
        self.max_body_size = max_body_size
        self.idle_timeout = idle_timeout
        self.session_idle_timeout = session_idle_timeout
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.connections = ConnectionLimit(max_connections)
        self.body_budget = BodyBudget(budget)
        versions = server.supported_versions
        self.handshake_versions = tuple(v for v in versions if get_revision(v).era is Era.HANDSHAKE)
        #: Live handshake-era sessions by id, least recently active first.
        self.sessions = SessionTable(max_sessions)
        self.legacy = LegacyEndpoints(
            server, messages_path or "/messages", keepalive=keepalive, max_body_size=max_body_size
        )
        self._nursery: trio.Nursery | None = None

    # ------------------------------------------------------------ connections

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the sessions' tasks (and the idle reaper) until cancelled."""
        # The tasks host (ext-tasks) lives as long as the app: a task outlives its request.
        async with self.server.tasks.hosting(), trio.open_nursery() as nursery:
            self._nursery = nursery
            if self.session_idle_timeout is not None:
                nursery.start_soon(self._reap)
            task_status.started()
            await trio.sleep_forever()

    @property
    def nursery(self) -> trio.Nursery:
        assert self._nursery is not None, "HttpApp.run is not running"
        return self._nursery

    async def handle_connection(self, stream: trio.abc.Stream) -> None:
        """Serve every request of one TCP connection (or refuse it, over the cap)."""
        if not self.connections.try_enter():
            await self.connections.refuse(stream)
            return
        try:
            await serve_connection(
                stream,
                self._serve_request,
                max_body=self.max_body_size,
                idle_timeout=self.idle_timeout,
                header_timeout=self.header_timeout,
                body_timeout=self.body_timeout,
                budget=self.body_budget,
                body_cost=rpc.parse_cost,
            )
        finally:
            self.connections.leave()

    async def _serve_request(self, http: H11Stream, head: RequestHead, body: bytes) -> None:
        try:
            await self.handle(http, head, body)
        except TransportClosed:
            if http.can_respond:
                await http.respond_error(_SESSION_TERMINATED)

    async def handle(self, http: H11Stream, head: RequestHead, body: bytes) -> None:
        problem = self.policy.check(head)
        if problem is not None:
            await http.respond_error(problem)
            return
        endpoint = hs.route(
            head, mcp_path=self.mcp_path, sse_path=self.sse_path, messages_path=self.messages_path
        )
        if isinstance(endpoint, HttpError):
            await http.respond_error(endpoint)
        elif endpoint is hs.Endpoint.LEGACY_SSE:
            await self.legacy.get(http, head)
        elif endpoint is hs.Endpoint.LEGACY_MESSAGES:
            await self.legacy.post(http, head, body)
        elif head.method == "POST":
            await self._post(http, head, body)
        elif head.method == "GET":
            await self._get(http, head)
        else:
            await self._delete(http, head)

    # ------------------------------------------------------------ POST

    async def _post(self, http: H11Stream, head: RequestHead, body: bytes) -> None:
        problem = hs.check_content_type(head)
        post = problem or hs.parse_post(body, max_size=self.max_body_size)
        if isinstance(post, HttpError):
            await http.respond_error(post)
            return
        if not self.handshake_versions or hs.is_stateless_post(head, post):
            await self._post_stateless(http, head, post)
            return
        rid = post.error_id
        if not head.values(hs.SESSION_HEADER):
            if post.is_request("initialize"):
                assert isinstance(post.message, rpc.Request)
                await self._initialize(http, head, post.message, post)
            else:
                problem = hs.check_batch(post, None) or hs.MISSING_SESSION
                await http.respond_error(problem.with_id(rid))
            return
        session = await self._session_of(http, head, rid)
        if session is None:
            return
        problem = hs.check_batch(post, session.protocol_version)
        if problem is not None:
            await http.respond_error(problem)
            return
        requests = post.requests
        if not requests:
            # Notifications and responses only (one, or a batch of them): 202, no body.
            await session.submit(Received(post.data, post.payload))
            self._note_cancellations(session, post)
            await http.respond(202)
            return
        json_ok, sse_ok = hs.accepts(head)
        if not (json_ok or sse_ok):
            await http.respond_error(hs.NOT_ACCEPTABLE.with_id(rid))
            return
        busy = [r.id for r in requests if r.id in session.exchanges]
        if busy:
            await http.respond_error(
                HttpError(
                    409, f"Conflict: request id {busy[0]!r} is already in flight", request_id=rid
                )
            )
            return
        sse = sse_ok and not (self.json_response and json_ok)
        stream = session.open_exchange(requests, sse=sse, batch=post.is_batch)
        related = None if post.is_batch else requests[0].id
        await session.submit(Received(post.data, post.payload, related_request=related))
        self._note_cancellations(session, post)
        mode = ResponseMode.SSE if sse else ResponseMode.JSON
        await self._answer(http, session, stream, mode=mode, json_ok=json_ok)

    @staticmethod
    def _note_cancellations(session: HttpSession, post: hs.PostBody) -> None:
        for message in post.messages:
            if (
                isinstance(message, rpc.Notification)
                and message.method == "notifications/cancelled"
            ):
                session.cancelled((message.params or {}).get("requestId"))

    async def _session_of(
        self, http: H11Stream, head: RequestHead, rid: rpc.RequestId | None
    ) -> HttpSession | None:
        """The session a request names (answering 400/404 and returning None when there is none)."""
        sid = hs.session_id_of(head)
        if isinstance(sid, HttpError):
            await http.respond_error(sid.with_id(rid))
            return None
        session = self.sessions.get(sid)
        if session is None or session.closed:
            await http.respond_error(hs.unknown_session(sid).with_id(rid))
            return None
        problem = hs.check_session_version(head, self.handshake_versions)
        if problem is not None:
            await http.respond_error(problem.with_id(rid))
            return None
        self.sessions.active(session)
        return session

    def _priming(self, session: HttpSession) -> bool:
        version = session.protocol_version
        return version is not None and version >= _PRIMING_FROM

    async def _answer(
        self,
        http: H11Stream,
        session: HttpSession,
        stream: OutStream,
        *,
        mode: ResponseMode,
        json_ok: bool,
        cursor: int = 0,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        sse = mode is not ResponseMode.JSON
        outcome = await write_response(
            http,
            stream,
            mode=mode,
            cursor=cursor,
            event_ids=sse,
            priming=sse and self._priming(session),
            retry_ms=self.retry_ms,
            keepalive=self.keepalive,
            headers=headers,
            json_ok=json_ok,
        )
        if outcome is Outcome.COMPLETE:
            session.stream_done(stream)
        elif outcome is Outcome.ABORTED and http.can_respond:
            if stream.cancelled:
                # JSON mode has to answer something; the client stopped listening anyway.
                cancelled = HttpError(
                    200, "request cancelled", code=rpc.INTERNAL_ERROR, request_id=stream.final_id
                )
                await http.respond_error(cancelled)
            else:
                await http.respond_error(_SESSION_TERMINATED)

    async def _initialize(
        self, http: H11Stream, head: RequestHead, request: rpc.Request, post: hs.PostBody
    ) -> None:
        json_ok, sse_ok = hs.accepts(head)
        if not (json_ok or sse_ok):
            await http.respond_error(hs.NOT_ACCEPTABLE.with_id(request.id))
            return
        admitted, evicted = self.sessions.make_room()
        if not admitted:
            await http.respond_error(
                HttpError(
                    503,
                    f"Service Unavailable: {len(self.sessions)} sessions are open and busy",
                    code=rpc.INTERNAL_ERROR,
                    request_id=request.id,
                    headers=(("retry-after", "1"),),
                )
            )
            return
        session = HttpSession(
            secrets.token_urlsafe(32),
            replay_events=self.replay_events,
            replay_bytes=self.replay_bytes,
        )
        # Inserted before any await, so concurrent initializes cannot overshoot the cap.
        self.sessions.add(session)
        if evicted is not None:
            logger.info("session cap reached: closing %s", evicted.describe())
            await evicted.aclose()
        session.server_session = await self.nursery.start(self._run_session, session)
        stream = session.open_exchange([request], sse=False)
        await session.submit(Received(post.data, post.payload, related_request=request.id))
        with trio.move_on_after(_INITIALIZE_TIMEOUT):
            while not stream.finished:
                await stream.wait(stream.buffer.last_seq)
        answer = stream.final_message
        if not isinstance(answer, rpc.Response):
            # Refused (or unanswered): no session comes of it.
            self.sessions.discard(session)
            await session.aclose()
        if answer is None:
            await http.respond_error(
                HttpError(
                    500, "initialize got no answer", code=rpc.INTERNAL_ERROR, request_id=request.id
                )
            )
            return
        headers = ((hs.SESSION_HEADER, session.id),) if isinstance(answer, rpc.Response) else ()
        await write_response(
            http,
            stream,
            mode=ResponseMode.JSON if json_ok else ResponseMode.SSE,
            headers=headers,
            json_ok=json_ok,
        )

    async def _run_session(
        self, session: HttpSession, *, task_status: trio.TaskStatus[ServerSession]
    ) -> None:
        try:
            await serve_stream(self.server, session, task_status=task_status)
        finally:
            self.sessions.discard(session)
            await session.aclose()

    async def _reap(self) -> None:
        timeout = self.session_idle_timeout
        assert timeout is not None
        while True:
            await trio.sleep(max(1.0, min(60.0, timeout / 4)))
            await self.sessions.reap(timeout)

    # ------------------------------------------------------------ stateless POST

    def _tool_schema(self, request: rpc.Request) -> dict[str, Any] | None:
        if request.method != "tools/call":
            return None
        name = (request.params or {}).get("name")
        entry = self.server.tools.get(name) if isinstance(name, str) else None
        return entry.input_schema if entry is not None else None

    async def _post_stateless(self, http: H11Stream, head: RequestHead, post: hs.PostBody) -> None:
        # No stateless-era revision has batches; a batch is refused in the revision it names.
        version = head.get(hs.VERSION_HEADER)
        problem = hs.check_batch(post, version if hs.is_stateless_version(version) else None)
        if problem is not None:
            await http.respond_error(problem)
            return
        message = post.message
        if isinstance(message, rpc.Notification):
            await http.respond(202)  # 2026-07-28 defines no client notifications over HTTP
            return
        if not isinstance(message, rpc.Request):
            await http.respond_error(
                HttpError(400, "Bad Request: clients send no responses in this revision")
            )
            return
        problem = check_stateless_request(head, message, tool_schema=self._tool_schema(message))
        if problem is not None:
            await http.respond_error(problem)
            return
        json_ok, sse_ok = hs.accepts(head)
        if not (json_ok or sse_ok):
            await http.respond_error(hs.NOT_ACCEPTABLE.with_id(message.id))
            return
        received = Received(post.data, post.payload, related_request=message.id)
        one = RequestStream(received, message.id, max_events=self.replay_events)
        async with trio.open_nursery() as nursery:
            await nursery.start(serve_stream, self.server, one)
            try:
                outcome = await write_response(
                    http,
                    one.out,
                    mode=ResponseMode.LAZY if sse_ok else ResponseMode.JSON,
                    json_ok=json_ok,
                    keepalive=self.keepalive,
                    status_of=hs.stateless_status,
                )
            finally:
                # Done, or the client hung up (which cancels the request): end the Connection.
                await one.aclose()
        if outcome is Outcome.ABORTED and http.can_respond:
            await http.respond_error(
                HttpError(
                    500,
                    "the request ended without an answer",
                    code=rpc.INTERNAL_ERROR,
                    request_id=message.id,
                )
            )

    # ------------------------------------------------------------ GET and DELETE

    def _no_sessions(self, head: RequestHead) -> bool:
        return not self.handshake_versions or hs.is_stateless_version(head.get(hs.VERSION_HEADER))

    async def _get(self, http: H11Stream, head: RequestHead) -> None:
        if self._no_sessions(head):
            await http.respond_error(hs.method_not_allowed(head, "POST"))
            return
        if not self.get_stream:
            await http.respond_error(hs.method_not_allowed(head, "POST, DELETE"))
            return
        _, sse_ok = hs.accepts(head)
        if not sse_ok:
            await http.respond_error(
                HttpError(406, f"Not Acceptable: a GET must accept {hs.SSE_TYPE}")
            )
            return
        session = await self._session_of(http, head, None)
        if session is None:
            return
        last = head.get(hs.LAST_EVENT_ID_HEADER)
        parsed = parse_event_id(last) if last else None
        if parsed is None:
            if session.standalone.attached:
                await http.respond_error(
                    HttpError(409, "Conflict: this session already has a GET stream open")
                )
                return
            await self._answer(
                http,
                session,
                session.standalone,
                mode=ResponseMode.SSE,
                json_ok=False,
                cursor=session.standalone.delivered,
            )
            return
        key, seq = parsed
        stream = session.streams.get(key)
        if stream is None:
            # Nothing left to replay on that stream: an empty stream that ends at once.
            await http.respond(
                200,
                [("content-type", hs.SSE_TYPE), ("cache-control", "no-cache")],
                b": nothing to resume\n\n",
            )
            return
        if stream.buffer.has_gap(seq):
            logger.warning(
                "%s: events after %s were dropped before the client resumed",
                session.describe(),
                last,
            )
        await self._answer(http, session, stream, mode=ResponseMode.SSE, json_ok=False, cursor=seq)

    async def _delete(self, http: H11Stream, head: RequestHead) -> None:
        if self._no_sessions(head):
            await http.respond_error(hs.method_not_allowed(head, "POST"))
            return
        session = await self._session_of(http, head, None)
        if session is None:
            return
        self.sessions.discard(session)
        await session.aclose()
        await http.respond(200)


async def serve_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    path: str | None = "/mcp",
    sse_path: str | None = None,
    messages_path: str = "/messages",
    allowed_origins: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    json_response: bool = False,
    get_stream: bool = True,
    retry_ms: int = 1000,
    keepalive: float | None = 15.0,
    replay_events: int = DEFAULT_REPLAY_EVENTS,
    max_body_size: int = 16 * 1024 * 1024,
    session_idle_timeout: float | None = 3600.0,
    header_timeout: float | None = 10.0,
    connection_idle_timeout: float | None = 60.0,
    body_timeout: float = 30.0,
    max_connections: int | None = 1000,
    max_sessions: int | None = 10_000,
    max_body_budget: int | None = None,
    task_status: trio.TaskStatus[BoundHttpServer] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over HTTP until cancelled (see the module docstring).

    ``path`` is the Streamable HTTP endpoint (``None``: none); ``sse_path``
    enables the legacy HTTP+SSE transport there, with ``messages_path`` for its
    POSTs.  ``allowed_origins``/``allowed_hosts`` replace the loopback defaults
    (``["*"]``: anything).  ``await nursery.start(serve_http, server)`` returns
    a ``BoundHttpServer`` with the address and URLs.  The limits (timeouts in
    seconds, sizes in bytes; ``None`` turns one off) are described in the
    module docstring; ``max_body_budget`` defaults to 4 x ``max_body_size``.
    """
    if path is None and sse_path is None:
        raise ValueError("serve_http needs path and/or sse_path")
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound_port = int(listeners[0].socket.getsockname()[1])
    app = HttpApp(
        server,
        policy=hs.default_policy(host, bound_port, allowed_origins, allowed_hosts),
        mcp_path=path,
        sse_path=sse_path,
        messages_path=messages_path,
        json_response=json_response,
        get_stream=get_stream,
        retry_ms=retry_ms,
        keepalive=keepalive,
        replay_events=replay_events,
        max_body_size=max_body_size,
        session_idle_timeout=session_idle_timeout,
        header_timeout=header_timeout,
        idle_timeout=connection_idle_timeout,
        body_timeout=body_timeout,
        max_connections=max_connections,
        max_sessions=max_sessions,
        max_body_budget=max_body_budget,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        await nursery.start(trio.serve_listeners, app.handle_connection, listeners)
        task_status.started(BoundHttpServer(host, bound_port, path, sse_path, app))
        await trio.sleep_forever()


__all__ = ["BoundHttpServer", "HttpApp", "close_sse_stream", "serve_http"]
