"""The HTTP transports of an MCP client: Streamable HTTP (both eras) and HTTP+SSE.

Theory of operation
-------------------
``open_http_stream(url)`` gives a ``MessageStream`` (see ``stream.py``) whose
``send`` POSTs each JSON-RPC message and whose ``receive`` yields every
message the server sent back, on whatever HTTP response it came.  What to send
and how to read the answers is decided by the sans-IO planner
(``_sansio/http/plan.py``, ``_sansio/http/response.py``); this module only runs the
exchanges, one Trio task each, through an executor (``executor.py``: h11 with
a keep-alive pool, or the caller's ``httpx.AsyncClient``).

* ``send`` returns once the request has been handed to the network, not when
  the answer arrives, so messages leave in order while answers stream back
  concurrently.  Every request gets an answer: the server's, or, when the
  exchange fails for good (error status, broken stream, deadline), a
  synthesized JSON-RPC error (code -32603, HTTP details in ``data``), so the
  session's waiter never hangs and the session itself survives.
* Each POST exchange runs under ``post_timeout`` (from the send until the
  answer); the standalone GET stream and ``subscriptions/listen`` have none.
* Handshake era: the session id of the InitializeResult's response and the
  negotiated revision are picked up as the answer passes by (so the very next
  message, ``notifications/initialized``, carries them); after that
  notification is accepted the standalone GET stream opens (405 means the
  server offers none).  A broken stream is resumed with GET and
  ``Last-Event-ID`` after the server's ``retry`` delay (``ReconnectPolicy``).
  A 404 to a request that carried the session id means the server forgot the
  session: the transport repeats the client's ``initialize`` (its answer is
  kept from the session), sends ``notifications/initialized``, and retries
  the request once; requests sent meanwhile wait for the new session.
* 2026-07-28 (a request whose ``_meta`` names its revision): no session and no
  GET.  ``notifications/cancelled`` is not posted; the request's stream is
  closed instead, which is how this revision cancels.  A stream that breaks
  before the answer re-issues the request with a new id (the answer is
  renamed back).  ``tools/list`` answers are read for ``x-mcp-header``
  annotations (tools with invalid ones are removed, as the spec requires).
* Legacy: when ``initialize`` is refused with 400, 404 or 405 the transport
  tries the 2024-11-05 HTTP+SSE transport (GET, wait for the ``endpoint``
  event, then POST everything there and read answers from that one stream,
  whose end is the end of the transport).

A failure to reach the server before it ever answered is fatal (``receive``
raises ``TransportClosed`` naming the reason); later connection failures only
fail the requests they hit, as the server may come back.  ``aclose`` sends
DELETE for a live session (bounded, errors ignored) and cancels every task.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import trio

from ...._errors import ConnectError, TransportClosed, TransportError
from ...._sansio.http import response as hr
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.plan import HttpPlanner, MessageKind, Mode, PostPlan, ReconnectPolicy
from ...._sansio.http.headers import filter_tools
from ...._sansio.revisions import Era, get_revision
from .executor import ConnectionLost, Executor, HttpResponse
from .headers_helper import HeadersHelper, run_headers_helper
from .tasks import Exchange, PumpResult, StreamTasks, rename_subscription
from ...oauth.hook import AuthTasks
from ...stream import NO_META, Inbound, SendMeta, parse_received

if TYPE_CHECKING:

    from ...oauth.provider import OAuthProvider

__all__ = ["HttpClientStream"]

logger = logging.getLogger("trimcp.http")

#: After the answer arrived on an event stream, how long to wait for the server to end it
#: (so the connection can be reused) before closing it.
ANSWER_LINGER: Final = 1.0
#: Bound on the DELETE sent when closing.
DELETE_TIMEOUT: Final = 2.0
_private_ids = itertools.count(1)


class HttpClientStream(StreamTasks, AuthTasks):
    """A ``MessageStream`` to an MCP server over HTTP; make one with ``connect.open_http_stream``."""

    def __init__(
        self,
        planner: HttpPlanner,
        executor: Executor,
        nursery: trio.Nursery,
        *,
        post_timeout: float | None,
        max_message_size: int,
        legacy_fallback: bool,
        standalone_stream: bool,
        reconnect: ReconnectPolicy,
        headers_helper: HeadersHelper | None,
        auth: OAuthProvider | None = None,
    ) -> None:
        self.planner = planner
        self.executor = executor
        self.post_timeout = post_timeout
        self.max_message_size = max_message_size
        self.legacy_fallback = legacy_fallback
        self.standalone_stream = standalone_stream
        self.reconnect = reconnect
        self.headers_helper = headers_helper
        self.auth = auth
        self._helper_headers: list[tuple[str, str]] = []
        self._auth_headers: list[tuple[str, str]] = []
        #: What went wrong on the way (kept for the harness; also logged), newest last.
        self.issues: deque[str] = deque(maxlen=200)
        #: Where the transport's own tasks run; cancelling ``_tasks_scope`` stops them all
        #: (and never the caller's code, which runs in the enclosing nursery's body).
        self._nursery = nursery
        self._tasks_scope = trio.CancelScope()
        self._to_session, self._from_server = trio.open_memory_channel[Inbound](64)
        self._by_wire: dict[rpc.RequestId, Exchange] = {}
        self._by_session_id: dict[rpc.RequestId, Exchange] = {}
        self._private: dict[rpc.RequestId, list[Any]] = {}
        self._session_ready = trio.Event()
        self._session_ready.set()
        self._reinit_lock = trio.Lock()
        self._legacy_lock = trio.Lock()
        self._standalone_scope: trio.CancelScope | None = None
        self._reached_server = False
        self._fatal: str | None = None
        self._closing = False
        self._closed = trio.Event()

    # ------------------------------------------------------------------ the seam

    def describe(self) -> str:
        mode = self.planner.mode.value
        return f"MCP server at {self.planner.url} ({mode})"

    def __repr__(self) -> str:
        return f"<HttpClientStream {self.describe()} session={self.planner.session_id!r}>"

    @property
    def session_id(self) -> str | None:
        return self.planner.session_id

    @property
    def mode(self) -> Mode:
        return self.planner.mode

    def _learn_version(self, protocol_version: str | None) -> None:
        """The session sends under ``protocol_version`` (from the message's ``SendMeta``)."""
        if protocol_version is None:
            return
        try:
            era = get_revision(protocol_version).era
        except ValueError:
            return
        if era is Era.STATELESS:
            self.planner.stateless_version = protocol_version
        elif self.planner.mode is Mode.STREAMABLE and self.planner.protocol_version != protocol_version:
            self.planner.initialized(protocol_version)

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if self._closing or self._fatal is not None:
            await trio.lowlevel.checkpoint()
            raise TransportClosed(f"{self.describe()}: {self._fatal or 'transport is closed'}")
        if not isinstance(message, rpc.Request) or message.method != "initialize":
            self._learn_version(meta.protocol_version)
        target: Exchange | None = None
        if isinstance(message, rpc.Notification) and message.method == "notifications/cancelled":
            params = message.params or {}
            target = self._by_session_id.get(params.get("requestId"))  # type: ignore[arg-type]
            if self._stateless(target):
                # 2026-07-28: closing the request's stream *is* the cancellation.
                self._close_exchange(target)
                await trio.lowlevel.checkpoint()
                return
        body = rpc.serialize(message)
        await self._nursery.start(self._post_task, message, body)
        # Handshake era: the server was told; its answer would be dropped anyway, so
        # free the connection that was waiting for it.
        self._close_exchange(target)

    async def receive(self) -> Inbound:
        try:
            return await self._from_server.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed(f"{self.describe()}: {self._fatal or 'transport is closed'}") from None

    async def aclose(self) -> None:
        """DELETE the session (bounded), stop every exchange; idempotent."""
        if self._closing:
            # Shielded: this may run inside the nursery aclose just cancelled, where an
            # unshielded checkpoint would raise Cancelled over the caller's own exception.
            with trio.CancelScope(shield=True):
                await self._closed.wait()
            return
        self._closing = True
        try:
            with trio.CancelScope(shield=True):
                request = self.planner.plan_delete() if self._fatal is None else None
                if request is not None:
                    with trio.move_on_after(DELETE_TIMEOUT):
                        try:
                            response = await self.executor.open(request)
                            await response.aclose()
                        except TransportError as exc:
                            self._issue(f"DELETE of the session failed: {exc}")
                self._tasks_scope.cancel()
                self._to_session.close()
                self._from_server.close()
                await self.executor.aclose()
        finally:
            self._closed.set()

    # ------------------------------------------------------------------ plumbing

    async def host_tasks(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the nursery every exchange and stream task lives in, until ``aclose``."""
        with self._tasks_scope:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await trio.sleep_forever()

    def _issue(self, detail: str, level: int = logging.WARNING) -> None:
        self.issues.append(detail)
        logger.log(level, "%s: %s", self.describe(), detail)

    def _die(self, reason: str) -> None:
        if self._fatal is None:
            self._fatal = reason
            self._to_session.close()

    async def _to_session_send(self, data: bytes) -> None:
        try:
            await self._to_session.send(parse_received(data, max_size=self.max_message_size))
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass

    def _stateless(self, ex: Exchange | None) -> bool:
        if ex is None:
            return self.planner.stateless_version is not None
        return ex.plan.stateless_version is not None

    @staticmethod
    def _close_exchange(ex: Exchange | None) -> None:
        if ex is not None:
            ex.cancelled = True
            if ex.scope is not None:
                ex.scope.cancel()

    async def deliver(self, event: hr.MessageReceived, origin: Exchange | None = None) -> None:
        """Hand one message to the session, after the bookkeeping its answers need.

        ``origin``: the exchange whose stream it came on; when that request was
        re-issued, a notification naming its wire id (a ``subscriptions/listen``
        stream's ``subscriptionId``) is renamed back to the id the session knows."""
        data, obj = event.data, event.obj
        private = False
        answered: list[Exchange] = []
        if origin is not None and origin.session_id != origin.wire_id and not event.answers:
            data = rename_subscription(obj, origin, data)
        for answer_id in event.answers:
            holder = self._private.get(answer_id)
            if holder is not None:
                holder.append(obj)
                private = True
                continue
            ex = self._by_wire.get(answer_id)
            if ex is None or ex.answered.is_set():
                continue
            data = self._on_answer(ex, obj, data)
            answered.append(ex)
        if not private:
            # Only once it is handed over does an answer count (a cancelled hand-over
            # leaves the exchange to fail the request instead).
            await self._to_session_send(data)
        for ex in answered:
            ex.answered.set()

    def _on_answer(self, ex: Exchange, obj: Any, data: bytes) -> bytes:
        result = obj.get("result") if isinstance(obj, dict) else None
        if isinstance(result, dict):
            if ex.method == "initialize" and isinstance(result.get("protocolVersion"), str):
                if ex.plan.mode is Mode.STREAMABLE:
                    self.planner.initialized(result["protocolVersion"])
            elif ex.method == "server/discover" and ex.plan.stateless_version is not None:
                self.planner.stateless_version = ex.plan.stateless_version
            elif ex.method == "tools/list" and b"x-mcp-header" in data:
                kept, by_name, rejected = filter_tools(result.get("tools"))
                self.planner.learn_tools(by_name)
                if rejected:
                    for name, reason in rejected:
                        self._issue(f"left tool {name!r} out of tools/list: {reason}")
                    obj = {**obj, "result": {**result, "tools": kept}}
                    data = rpc.dumps(obj)
        if ex.session_id != ex.wire_id and isinstance(obj, dict):
            data = rpc.dumps({**obj, "id": ex.session_id})
        return data

    async def fail_request(self, ex: Exchange, detail: str) -> None:
        """Give up on ``ex``: the session gets an error answer (requests) or a log line."""
        if not ex.expects_answer:
            self._issue(f"{ex.method or 'response'} was not delivered: {detail}")
            return
        if ex.answered.is_set() or ex.cancelled:
            return
        quiet = ex.method == "server/discover"
        self._issue(f"{ex.method} failed: {detail}", logging.DEBUG if quiet else logging.WARNING)
        await self._to_session_send(
            hr.error_answer(ex.session_id, f"{detail} ({self.planner.url})", {"transport": "http"})
        )
        ex.answered.set()  # after the hand-over, as in deliver()

    async def pump(
        self,
        reader: hr.ResponseReader,
        response: HttpResponse,
        *,
        linger: bool = False,
        on_endpoint: Callable[[str], None] | None = None,
        level: int = logging.WARNING,
        origin: Exchange | None = None,
    ) -> PumpResult:
        """Read one response to its end (or to a verdict), acting on its events.

        ``level``: how loudly to log what went wrong (the era probe's refusal is expected)."""
        result = PumpResult()
        events = reader.head(response.status, response.headers)
        deadline = math.inf
        while True:
            for event in events:
                if isinstance(event, hr.MessageReceived):
                    result.messages += 1
                    await self.deliver(event, origin)
                elif isinstance(event, hr.SessionAssigned):
                    self.planner.session_assigned(event.session_id)
                elif isinstance(event, (hr.HttpFailed, hr.TransportIssue)):
                    self._issue(event.detail, level)
                elif isinstance(event, hr.AnswerElsewhere):
                    result.elsewhere = True
                elif isinstance(event, hr.Accepted):
                    result.accepted = True
                elif isinstance(event, hr.EndpointAnnounced):
                    if on_endpoint is not None:
                        on_endpoint(event.url)
                elif not isinstance(event, hr.RetryAfter):
                    result.terminal = event
                    return result
            if reader.finished:
                return result
            if linger and reader.answered and deadline == math.inf:
                deadline = trio.current_time() + ANSWER_LINGER
            try:
                if deadline == math.inf:
                    chunk = await response.read()
                else:
                    chunk = b""
                    with trio.move_on_at(deadline) as scope:
                        chunk = await response.read()
                    if scope.cancelled_caught:
                        # The answer is in; the server kept the stream open: close it.
                        result.terminal = hr.StreamEnded()
                        return result
            except ConnectionLost as exc:
                events = reader.broken(str(exc))
                continue
            events = reader.data(chunk) if chunk else reader.end()

    def reader_for(self, plan: PostPlan) -> hr.ResponseReader:
        return hr.ResponseReader(
            hr.Purpose.POST,
            answer_id=plan.wire_id,
            expects_answer=plan.kind is MessageKind.REQUEST,
            sent_session=plan.sent_session,
            is_initialize=plan.is_initialize,
            legacy_fallback=self.legacy_fallback and plan.mode is Mode.STREAMABLE,
            legacy_mode=plan.mode is Mode.LEGACY_SSE,
            max_message_size=self.max_message_size,
            url=plan.request.url,
        )

    async def refresh_headers(self) -> None:
        if self.headers_helper is not None:
            self._helper_headers = await run_headers_helper(self.headers_helper)
        if self.auth is not None:
            self._auth_headers = await self.auth.headers()
        if self.headers_helper is not None or self.auth is not None:
            self.planner.set_dynamic_headers([*self._helper_headers, *self._auth_headers])

    # ------------------------------------------------------------------ POST exchanges

    def _register(self, ex: Exchange) -> None:
        if ex.wire_id is not None:
            self._by_wire[ex.wire_id] = ex
        if ex.session_id is not None:
            self._by_session_id[ex.session_id] = ex

    def _unregister(self, ex: Exchange) -> None:
        if ex.wire_id is not None and self._by_wire.get(ex.wire_id) is ex:
            del self._by_wire[ex.wire_id]
        if ex.session_id is not None and self._by_session_id.get(ex.session_id) is ex:
            del self._by_session_id[ex.session_id]

    def _reissue(self, ex: Exchange) -> None:
        """2026-07-28: send the request again under a new id."""
        assert isinstance(ex.message, rpc.Request)
        self._unregister(ex)
        ex.reissues += 1
        ex.message = rpc.Request(f"trimcp-reissue-{next(_private_ids)}", ex.message.method, ex.message.params)
        ex.body = rpc.serialize(ex.message)
        ex.plan = self.planner.plan_post(ex.message, ex.body)
        self._register(ex)

    async def _post_task(
        self, message: rpc.Message, body: bytes, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        started = False

        def mark_sent() -> None:
            nonlocal started
            if not started:
                started = True
                task_status.started()

        ex: Exchange | None = None
        try:
            if not self._session_ready.is_set() and not (
                isinstance(message, rpc.Request) and message.method == "initialize"
            ):
                await self._session_ready.wait()
            plan = self.planner.plan_post(message, body)
            session_id = message.id if isinstance(message, rpc.Request) else None
            ex = Exchange(message, body, plan, session_id)
            self._register(ex)
            unlimited = self.post_timeout is None or plan.method == "subscriptions/listen"
            deadline = math.inf if unlimited else trio.current_time() + float(self.post_timeout or 0)
            with trio.CancelScope(deadline=deadline) as ex.scope:
                await self._run_post(ex, mark_sent)
            if ex.scope.cancelled_caught and not ex.cancelled:
                await self.fail_request(ex, f"no answer to {ex.method} within {self.post_timeout} s")
            elif ex.expects_answer and not ex.answered.is_set():
                await self.fail_request(ex, f"the exchange for {ex.method} ended without an answer")
        except TransportError as exc:
            if ex is not None:
                await self.fail_request(ex, str(exc))
        finally:
            mark_sent()
            if ex is not None:
                self._unregister(ex)

    async def _run_post(self, ex: Exchange, mark_sent: Callable[[], None]) -> None:
        while True:
            plan = ex.plan
            generation = 0
            if self.auth is not None:
                plan, generation = await self._authorized(plan)
            try:
                response = await self.executor.open(plan.request, sent=mark_sent)
            except ConnectError as exc:
                mark_sent()
                if not self._reached_server:
                    self._die(f"cannot reach the server: {exc}")
                    ex.cancelled = True
                    return
                await self.fail_request(ex, str(exc))
                return
            except ConnectionLost as exc:
                if ex.expects_answer and plan.stateless_version is not None and ex.reissues < self.reconnect.max_reissues:
                    self._reissue(ex)
                    continue
                await self.fail_request(ex, str(exc))
                return
            self._reached_server = True
            if (
                self.auth is not None and response.status in (401, 403)
                and ex.auth_attempts < self.auth.max_attempts
                and self.auth.wants([v for n, v in response.headers if n == "www-authenticate"], response.status)
            ):
                if not await self._auth_challenge(ex, response, generation):
                    return
                continue
            if response.status == 401 and self.headers_helper is not None and not ex.auth_retried:
                await response.aclose()
                ex.auth_retried = True
                await self.refresh_headers()
                ex.plan = self.planner.plan_post(ex.message, ex.body)
                continue
            reader = self.reader_for(plan)
            try:
                quiet = plan.method == "server/discover"
                result = await self.pump(
                    reader, response, linger=True, level=logging.DEBUG if quiet else logging.WARNING,
                    origin=ex,
                )
            finally:
                await response.aclose()
            if not await self._after_post(ex, reader, result):
                return

    async def _after_post(self, ex: Exchange, reader: hr.ResponseReader, result: PumpResult) -> bool:
        """Act on how a POST ended; ``True`` means post it again (ex.plan is ready)."""
        plan, term = ex.plan, result.terminal
        if isinstance(term, hr.SessionExpired):
            if ex.reinitialized or plan.is_initialize:
                await self.fail_request(ex, f"the server dropped the session again ({term.detail})")
                return False
            ex.reinitialized = True
            if not await self.reinitialize(plan.generation):
                await self.fail_request(ex, f"the session expired ({term.detail}) and re-initializing failed")
                return False
            ex.plan = self.planner.plan_post(ex.message, ex.body)
            return True
        if isinstance(term, hr.FallBackToLegacy):
            if await self.fall_back_to_legacy():
                ex.plan = self.planner.plan_post(ex.message, ex.body)
                return True
            await self.fail_request(
                ex, f"{term.detail}, and the 2024-11-05 HTTP+SSE transport is not offered either"
            )
            return False
        if isinstance(term, hr.StreamBroken) and ex.expects_answer and not ex.answered.is_set():
            if plan.stateless_version is not None:
                if plan.method == "subscriptions/listen":
                    # A long-lived stream: count only breaks in a row, and pause before each.
                    if result.messages:
                        ex.reissues = 0
                    await trio.sleep(self.reconnect.delay(ex.reissues + 1, None))
                if ex.reissues < self.reconnect.max_reissues:
                    self._reissue(ex)
                    return True
                await self.fail_request(ex, f"{term.detail}; gave up after {ex.reissues} re-issues")
            elif plan.mode is Mode.STREAMABLE and term.last_event_id:
                await self.resume(ex, term)
            else:
                await self.fail_request(ex, f"{term.detail}, and the server offered no way to resume it")
            return False
        if result.elsewhere and ex.expects_answer:
            await ex.answered.wait()
            return False
        if (
            ex.method == "notifications/initialized" and result.accepted
            and plan.mode is Mode.STREAMABLE and plan.stateless_version is None
        ):
            self.start_standalone()
        return False
