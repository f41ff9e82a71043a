"""Serve a ``Server`` over Streamable HTTP (both eras) and the legacy HTTP+SSE transport.

Theory of operation
-------------------
``serve_http`` listens with ``trio.serve_tcp`` (on 127.0.0.1 unless told
otherwise, as the spec advises for local servers) and speaks HTTP/1.1 with
trimcp's codec (``_trio/http1/server.py``), one task per TCP connection, keep-alive included.  ``HttpApp`` is an
executor, as the client's exchange is: for each request it asks the sans-IO
server policy (``trimcp._sansio.http.server.policy``: ``ServerPolicy.decide``,
over a read-only ``LiveView`` of the sessions) what to do, and does it -
answer, open a session, submit to one, serve a stateless request, attach a
GET to a stream, end a session, or the legacy endpoints' two.  When doing it
leaves the request unanswered (no room for a session, a stream cut short) it
reports the fact and answers what ``policy.answer`` says; it chooses no status
itself.  The rules, by era:

* **Handshake era** (2025-03-26 .. 2025-11-25).  A POSTed ``initialize``
  without a session id opens an ``HttpSession`` (id from ``secrets``, its own
  server Connection and driver via ``serve_stream``); the answer carries
  ``Mcp-Session-Id``.  Later requests must name the session (400 when they do
  not, 404 once it is gone).  A POSTed notification or response is queued and
  answered 202; a POSTed request is answered with one JSON body when its
  answer comes first, within ``JSON_ANSWER_WINDOW``, and the client takes
  JSON, otherwise with an SSE stream carrying what relates to it and then its
  answer (``json_response=True``: JSON always).  The body is parsed once (``routing.parse_post``) and the session
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
``trimcp._trio.http1.server``; across connections, ``max_connections`` (503
``Connection: close`` at once) and ``max_body_budget`` (default 4 x
``max_body_size``, at least 3 x: each body counts what parsing it takes, from
3 times its size for ASCII text up, ``jsonrpc.parse_cost``; a body waits for
room within its deadline, then 503, and one that would take more than the
whole budget is 413) in ``trimcp._trio.http_limits``; sessions,
``session_idle_timeout`` and ``max_sessions`` (the least recently active
session with no request in flight is evicted; none: 503), kept by the store.

State: the sessions' records and limits, resumable streams' events (with a
shared store), the ext-tasks table and change notifications across processes
go through the server's store (``store=``: ``trimcp.server.store``; in
memory by default), by way of ``replicas.Replicas``: with a SQLite or Redis
store, several processes serve the same sessions, streams and tasks.  What
this module keeps of its own is this process's copies (``SessionTable``).
"""

from __future__ import annotations

import logging
import secrets

import trio

from ...._errors import TransportClosed
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.header_names import SESSION_HEADER
from ...._sansio.http.server import policy as sp
from ...._sansio.http.server import routing as hs
from ...._sansio.http.server.replay import (
    DEFAULT_REPLAY_BYTES,
    DEFAULT_REPLAY_EVENTS,
    STANDALONE_KEY,
    format_event_id,
)
from ...._sansio.http.server.routing import RequestHead
from ...._sansio.revisions import Era, get_revision
from ...._trio.http1.server import BODY_COPIES, H1ServerConnection, serve_connection
from ...._trio.http_limits import BodyBudget, ConnectionLimit
from ...._trio.stream import Received
from ...definition import Server
from ...serve import serve_stream
from ...server_session import ServerSession
from ...store import open_store
from ...store.base import Store, StoreError
from ...store.memory import MemoryStore
from .bound import BoundHttpServer
from .legacy_sse import LegacyEndpoints
from .replicas import Replicas
from .session_table import SessionTable
from .sessions import HttpSession, RequestStream, close_sse_stream
from .streams import Outcome, OutStream, ResponseMode, write_response
from .view import LiveView

logger = logging.getLogger("trimcp.server.transports.http.app")

#: The Connection answers initialize itself: this only guards against a wedged session.
_INITIALIZE_TIMEOUT = 30.0
#: How long a handshake-era answer may take to go as one JSON body (``Reply.json_when_ready``).
JSON_ANSWER_WINDOW = 0.05


class HttpApp:
    """The request handling of ``serve_http``; one per listening server."""

    def __init__(
        self,
        server: Server,
        *,
        origins: hs.OriginPolicy,
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
        store: Store | None = None,
    ) -> None:
        if max_sessions is not None and max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        budget = 4 * max_body_size if max_body_budget is None else max_body_budget
        if budget < BODY_COPIES * max_body_size:
            raise ValueError(
                f"max_body_budget ({budget}) must hold one body of max_body_size "
                f"({max_body_size}) as it is parsed: {BODY_COPIES} times its size"
            )
        self.server = server
        self.mcp_path = mcp_path
        self.sse_path = sse_path
        self.messages_path = messages_path if sse_path else None
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
        handshake = tuple(v for v in versions if get_revision(v).era is Era.HANDSHAKE)
        #: What every request gets is decided there; this class carries it out.
        self.policy = sp.ServerPolicy(
            origins,
            mcp_path=mcp_path,
            sse_path=sse_path,
            messages_path=self.messages_path,
            json_response=json_response,
            get_stream=get_stream,
            max_body_size=max_body_size,
            handshake_versions=handshake,
        )
        #: This process's handshake-era sessions by id (their records: in ``store``).
        self.sessions = SessionTable()
        self.max_sessions = max_sessions
        #: The server's shared state (sessions, stream logs, tasks, the bus); ``run`` runs it.
        self.store = store if store is not None else MemoryStore(replay_events=replay_events, replay_bytes=replay_bytes)
        self.replicas = Replicas(self.store, server, self.sessions, retry_ms=retry_ms, keepalive=keepalive)
        self.legacy = LegacyEndpoints(server, messages_path or "/messages", keepalive=keepalive)
        self.view = LiveView(self.sessions, self.legacy.sessions, server.tools)
        self._nursery: trio.Nursery | None = None

    # ------------------------------------------------------------ connections

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the sessions' tasks (and the idle reaper) until cancelled."""
        # The tasks host (ext-tasks) lives as long as the app: a task outlives its request.
        async with (
            self.store.running(),
            # (A shared store holds the tasks too; with memory the runner keeps its own table.)
            self.server.tasks.hosting(self.store if self.store.shared else None),
            trio.open_nursery() as nursery,
            self.replicas.running(nursery, self._start_session),
        ):
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
        slot = self.connections.admit()
        if slot is None:
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
                on_close=slot.release,
            )
        finally:
            slot.release()  # (done already, unless serve_connection failed before closing)

    async def _serve_request(self, http: H1ServerConnection, head: RequestHead, body: bytes) -> None:
        try:
            await self.handle(http, head, body)
        except TransportClosed:
            if http.can_respond:
                await self._respond(http, sp.answer(sp.SessionGone()))

    async def handle(self, http: H1ServerConnection, head: RequestHead, body: bytes) -> None:
        """Ask the policy what to do with the request, and do it."""
        await self.replicas.prepare(head)  # a shared store: the session it names, adopted here
        action = self.policy.decide(head, body, self.view)
        if isinstance(action, sp.Respond):
            await self._respond(http, action)
        elif isinstance(action, sp.SubmitToSession):
            await self._submit(http, action)
        elif isinstance(action, sp.ServeStateless):
            await self._serve_stateless(http, action)
        elif isinstance(action, sp.OpenSession):
            await self._open_session(http, action)
        elif isinstance(action, sp.AttachStream):
            await self._attach(http, action)
        elif isinstance(action, sp.EndSession):
            self._session(action.session_id)
            await self.replicas.end(action.session_id)
            await self._respond(http, action.then)
        elif isinstance(action, sp.OpenLegacyStream):
            await self.legacy.open_stream(http)
        else:
            legacy = self.legacy.sessions[action.session_id]
            await legacy.submit(Received(action.post.data, action.post.payload))
            await self._respond(http, action.then)

    async def _respond(self, http: H1ServerConnection, action: sp.Respond) -> None:
        if action.session_id is not None:
            self._session(action.session_id)  # the request counts as the session's activity
        await http.respond(action.status, action.headers, action.body)

    def _session(self, session_id: str) -> HttpSession:
        """The live session the policy just saw (no await since): now the most recently active."""
        session = self.sessions[session_id]
        self.store.note_activity(session_id)
        return session

    # ------------------------------------------------------------ sessions

    async def _submit(self, http: H1ServerConnection, action: sp.SubmitToSession) -> None:
        session = self._session(action.session_id)
        post, reply = action.post, action.reply
        if isinstance(reply, sp.Respond):
            mine = await self.replicas.forward(session, post)  # answers another replica waits for go there
            if mine is not None:
                await session.submit(Received(mine.data, mine.payload))
            self._cancel(session, action.cancelled)
            await self.replicas.accepted(session, post)
            await self._respond(http, reply)
            return
        stream = session.open_exchange(post.requests, sse=reply.sse, batch=post.is_batch)
        await self.replicas.before_submit(session, post)
        await session.submit(Received(post.data, post.payload, related_request=reply.related))
        self._cancel(session, action.cancelled)
        mode = ResponseMode.LAZY if reply.json_when_ready else ResponseMode.SSE if reply.sse else ResponseMode.JSON
        await self._answer(http, session, stream, mode=mode, json_ok=reply.json_ok, priming=reply.priming)

    @staticmethod
    def _cancel(session: HttpSession, request_ids: tuple[rpc.RequestId, ...]) -> None:
        for request_id in request_ids:
            session.cancelled(request_id)

    async def _attach(self, http: H1ServerConnection, action: sp.AttachStream) -> None:
        session = self._session(action.session_id)
        stream = session.streams.get(action.key) if session.log is None or action.key != STANDALONE_KEY else None
        if stream is None:
            # A shared store: the stream is another replica's, or the standalone one.
            fact = await self.replicas.streams.replay(http, session, action.key, action.cursor, priming=action.priming)
            if fact is not None and http.can_respond:
                await self._respond(http, sp.answer(fact))
            return
        cursor = stream.delivered if action.cursor is None else action.cursor
        if action.cursor is not None and stream.buffer.has_gap(cursor):
            logger.warning(
                "%s: events after %s were dropped before the client resumed",
                session.describe(),
                format_event_id(action.key, cursor),
            )
        await self._answer(
            http,
            session,
            stream,
            mode=ResponseMode.SSE,
            json_ok=False,
            priming=action.priming,
            cursor=cursor,
        )

    async def _answer(
        self,
        http: H1ServerConnection,
        session: HttpSession,
        stream: OutStream,
        *,
        mode: ResponseMode,
        json_ok: bool,
        priming: bool,
        cursor: int = 0,
    ) -> None:
        sse = mode is not ResponseMode.JSON
        outcome = await write_response(
            http,
            stream,
            mode=mode,
            cursor=cursor,
            event_ids=sse,
            priming=priming,
            retry_ms=self.retry_ms,
            keepalive=self.keepalive,
            json_ok=json_ok,
            lazy_window=JSON_ANSWER_WINDOW,
        )
        if outcome is Outcome.COMPLETE:
            session.stream_done(stream)
        elif outcome is Outcome.ABORTED and http.can_respond:
            aborted = sp.StreamAborted(stream.final_id, cancelled=stream.cancelled)
            await self._respond(http, sp.answer(aborted))

    async def _open_session(self, http: H1ServerConnection, action: sp.OpenSession) -> None:
        request = action.request
        session = HttpSession(
            secrets.token_urlsafe(32),
            replay_events=self.replay_events,
            replay_bytes=self.replay_bytes,
            **self.replicas.session_options(),
        )
        # The store decides (the in-memory one with no await: concurrent initializes
        # cannot overshoot the cap).
        if not (await self.replicas.admit(session, self.max_sessions)).admitted:
            full = sp.SessionsFull(request.id, open_sessions=await self.store.count_sessions())
            await self._respond(http, sp.answer(full))
            return
        self.sessions.add(session)
        await self._start_session(session)
        stream = session.open_exchange([request], sse=False)
        post = action.post
        await session.submit(Received(post.data, post.payload, related_request=request.id))
        with trio.move_on_after(_INITIALIZE_TIMEOUT):
            while not stream.finished:
                await stream.wait(stream.buffer.last_seq)
        answer = stream.final_message
        if not isinstance(answer, rpc.Response):
            # Refused (or unanswered): no session comes of it.
            await self.replicas.end(session.id)
        else:
            await self.replicas.negotiated(session)
        if answer is None:
            await self._respond(http, sp.answer(sp.InitializeUnanswered(request.id)))
            return
        headers = ((SESSION_HEADER, session.id),) if isinstance(answer, rpc.Response) else ()
        await write_response(
            http,
            stream,
            mode=ResponseMode.JSON if action.json_ok else ResponseMode.SSE,
            headers=headers,
            json_ok=action.json_ok,
        )

    async def _start_session(self, session: HttpSession) -> ServerSession:
        session.server_session = await self.nursery.start(self._run_session, session)
        return session.server_session

    async def _run_session(self, session: HttpSession, *, task_status: trio.TaskStatus[ServerSession]) -> None:
        try:
            # With a shared store, change notifications reach the session through the store.
            await serve_stream(self.server, session, broadcast=not self.store.shared, task_status=task_status)
        finally:
            self.sessions.discard(session)
            self.replicas.forget(session)
            await session.aclose()

    async def _reap(self) -> None:
        timeout = self.session_idle_timeout
        assert timeout is not None
        while True:
            await trio.sleep(max(1.0, min(60.0, timeout / 4)))
            try:
                await self.replicas.expire(timeout)
            except StoreError as exc:
                logger.warning("could not expire idle sessions: %s", exc)

    # ------------------------------------------------------------ stateless POST

    async def _serve_stateless(self, http: H1ServerConnection, action: sp.ServeStateless) -> None:
        request, post = action.request, action.post
        received = Received(post.data, post.payload, related_request=request.id)
        one = RequestStream(received, request.id, max_events=self.replay_events)
        async with trio.open_nursery() as nursery:
            await nursery.start(serve_stream, self.server, one)
            try:
                outcome = await write_response(
                    http,
                    one.out,
                    mode=ResponseMode.LAZY if action.sse_ok else ResponseMode.JSON,
                    json_ok=action.json_ok,
                    keepalive=self.keepalive,
                    status_of=action.status_of,
                )
            finally:
                # Done, or the client hung up (which cancels the request): end the Connection.
                await one.aclose()
        if outcome is Outcome.ABORTED and http.can_respond:
            await self._respond(http, sp.answer(sp.StatelessUnanswered(request.id)))


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
    store: Store | str | None = None,
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

    ``store`` is where the server's shared state lives (``trimcp.server.store``):
    ``None``/``"memory"`` (this process), ``"sqlite:///PATH"`` or
    ``"redis://HOST:PORT/DB"`` (replicas, restarts), or a ``Store``; it runs for as
    long as the server serves.
    """
    if path is None and sse_path is None:
        raise ValueError("serve_http needs path and/or sse_path")
    state = open_store(store, replay_events=replay_events)
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound_port = int(listeners[0].socket.getsockname()[1])
    app = HttpApp(
        server,
        origins=hs.default_policy(host, bound_port, allowed_origins, allowed_hosts),
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
        store=state,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(app.run)
        await nursery.start(trio.serve_listeners, app.handle_connection, listeners)
        task_status.started(BoundHttpServer(host, bound_port, path, sse_path, app))
        await trio.sleep_forever()


__all__ = ["BoundHttpServer", "HttpApp", "close_sse_stream", "serve_http"]
