"""The HTTP transports of an MCP client: Streamable HTTP (both eras) and HTTP+SSE.

Theory of operation
-------------------
``open_http_stream(url)`` (``connect.py``) gives an ``HttpClientStream``, a
``MessageStream`` (see ``stream.py``) whose ``send`` POSTs each JSON-RPC
message and whose ``receive`` yields every message the server sent back, on
whatever HTTP response it came (spec 2025-11-25 basic/transports,
2026-07-28 basic/transports/streamable-http, 2024-11-05 basic/transports).

The work is split between sans-IO decisions and the Trio objects this stream
owns, each of which only carries decisions out:

* ``HttpPlanner`` (``_sansio/http/client/plan.py``) plans each request; the
  ``ResponseReader`` (``_sansio/http/client/response.py``) reads each response,
  parsing every JSON text once; ``ExchangePolicy`` and ``FollowPolicy``
  (``_sansio/http/client/policy.py``) decide what follows each outcome;
* ``PostRunner`` (``exchange.py``) runs each POST exchange, as its own task
  (``send``) or in the task of the caller that waits for the request's answer
  (``begin_request``: the session's own requests, see ``stream.py``);
  ``StreamFollower`` (``follower.py``) the standalone GET stream and the
  resumption of broken request streams; ``SessionKeeper`` (``keeper.py``)
  re-initialization and the 2024-11-05 fallback; ``Pump`` (``pump.py``) reads
  one response; ``Inbox`` (``inbox.py``) hands messages and typed failures to
  the session; ``AuthHook`` (``oauth/hook.py``) consults an OAuth provider;
  the executor (``executor.py``: a keep-alive pool on trimcp's HTTP/1.1 codec, or the caller's
  ``httpx.AsyncClient``) moves the bytes.

What crosses the seam: each outgoing message comes with its ``SendMeta`` - the
revision it is sent under (for ``MCP-Protocol-Version``), the ``x-mcp-header``
parameters of a called tool (for ``Mcp-Param-*``), the request a cancellation
cancels, whether it opens a session (``initialize``) and, for a re-issued
request, the id it replaces.  Each incoming JSON text goes to the session as
``Received`` with the payload the reader parsed; a request whose exchange
failed for good becomes a ``RequestFailed`` carrying a ``TransportError``
(``ConnectError``, ``TransportClosed``, ``SessionExpired``) or ``AuthError``,
so its waiter fails at once and the session survives.  The transport never
reads or rewrites a payload (the sans-IO planner reads what the 2026-07-28
headers must mirror: method, name, the ``_meta`` revision): a 2026-07-28 request whose stream broke is
offered back to the session to re-issue under a new id
(``RequestFailed.may_reissue``), and tools with invalid ``x-mcp-header``
annotations are left out by the client session, which this stream tells it
must (``mirrors_tool_headers``).

2026-07-28 cancellation: ``notifications/cancelled`` is not posted; the
request's stream is closed instead, which is how that revision cancels.  A
failure to reach the server before it ever answered is fatal (``receive``
raises ``TransportClosed`` naming the reason); later failures fail only the
requests they hit.  ``aclose`` sends DELETE for a live session (bounded,
errors ignored) and cancels every task.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Final

import trio

from ...._errors import TransportClosed, TransportError
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.client.plan import HttpPlanner, HttpRequest, Mode
from ...._sansio.http.client.policy import ReconnectPolicy
from ...._sansio.revisions import Era, get_revision
from ...oauth.hook import AuthHook, AuthProvider
from ...stream import NO_META, Inbound, Received, SendMeta
from .exchange import PostRunner
from .executor import Executor
from .follower import StreamFollower
from .headers_helper import DynamicHeaders, HeadersHelper
from .inbox import Inbox, IssueLog
from .keeper import SessionKeeper
from .pump import Pump

__all__ = ["HttpClientStream"]

#: Bound on the DELETE sent when closing.
DELETE_TIMEOUT: Final = 2.0


class InlinePost:
    """One request's POST exchange, to run in the task of the caller that waits for its answer."""

    __slots__ = ("_after", "_message", "_meta", "_posts", "_sent")

    def __init__(
        self, posts: PostRunner, message: rpc.Request, meta: SendMeta, after: trio.Event | None, sent: trio.Event
    ) -> None:
        self._posts = posts
        self._message = message
        self._meta = meta
        self._after = after
        self._sent = sent

    async def run(self) -> Received | None:
        """POST the request (after the message sent before it) and read the response;
        return its answer when the caller is to hand it to the session (else it went
        through ``receive``)."""
        message = self._message
        return await self._posts.carry(
            message, self._meta, rpc.serialize(message), after=self._after, on_sent=self._sent.set, inline=True
        )

    def abandon(self) -> None:
        """Never to be run: the messages sent after it go on without it."""
        self._sent.set()


class HttpClientStream:
    """A ``MessageStream`` to an MCP server over HTTP; make one with ``connect.open_http_stream``.

    ``nursery`` is where the transport's own tasks run; ``aclose`` cancels it.
    """

    #: Sends ``SendMeta.header_params`` as ``Mcp-Param-*`` headers (see ``stream.py``).
    mirrors_tool_headers: Final = True

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
        auth: AuthProvider | None = None,
    ) -> None:
        self.planner = planner
        self.executor = executor
        self._nursery = nursery
        self._log = IssueLog(self.describe)
        self.inbox = Inbox(self._log)
        self.headers = DynamicHeaders(planner, headers_helper)
        self.auth = None if auth is None else AuthHook(auth, self.headers.set_auth)
        if self.auth is not None:
            self.headers.auth_headers = self.auth.headers
        #: Adds a DPoP proof to a request that carries no other auth step (GET, DELETE).
        self._stamp: Callable[[HttpRequest], HttpRequest] = (lambda r: r) if self.auth is None else self.auth.stamp
        pump = Pump(self.inbox, planner, self._log)
        self.follower = StreamFollower(
            planner,
            executor,
            pump,
            self._log,
            nursery,
            self.inbox,
            reconnect=reconnect,
            max_message_size=max_message_size,
            standalone=standalone_stream,
            stamp=self._stamp,
        )
        self.keeper = SessionKeeper(
            planner,
            executor,
            pump,
            self.inbox,
            self.follower,
            self.headers,
            self._log,
            nursery,
            post_timeout=post_timeout,
            max_message_size=max_message_size,
        )
        self.posts = PostRunner(
            planner,
            executor,
            pump,
            self.inbox,
            self.keeper,
            self.follower,
            self.headers,
            self.auth,
            self._log,
            nursery,
            post_timeout=post_timeout,
            reconnect=reconnect,
            legacy_fallback=legacy_fallback,
            max_message_size=max_message_size,
        )
        self._closing = False
        self._closed = trio.Event()
        #: Set once the last message sent is on the network (the next one waits for it).
        self._last_sent: trio.Event | None = None

    # ------------------------------------------------------------------ what it is

    def describe(self) -> str:
        return f"MCP server at {self.planner.url} ({self.planner.mode.value})"

    def __repr__(self) -> str:
        return f"<HttpClientStream {self.describe()} session={self.planner.session_id!r}>"

    def _closed_error(self) -> TransportClosed:
        """Why the transport is unusable, naming the server once: a reason that already
        names its URL ("cannot connect to URL: Connection refused") is not prefixed again."""
        reason = self.inbox.fatal or "transport is closed"
        return TransportClosed(reason if self.planner.url in reason else f"{self.describe()}: {reason}")

    @property
    def issues(self) -> deque[str]:
        """What went wrong on the way (kept for the harness; also logged), newest last."""
        return self._log.entries

    @property
    def session_id(self) -> str | None:
        return self.planner.session_id

    @property
    def mode(self) -> Mode:
        return self.planner.mode

    # ------------------------------------------------------------------ the seam

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if self._closing or self.inbox.fatal is not None:
            await trio.lowlevel.checkpoint()
            raise self._closed_error()
        if meta.protocol_version is not None and not meta.opens_session:
            self._learn_version(meta.protocol_version)
        target = None
        if meta.cancels is not None:
            previous = self._last_sent
            if previous is not None and not previous.is_set():
                await previous.wait()  # the request's exchange registers before it is sent
            target = self.inbox.exchange(meta.cancels)
            if target is not None and target.plan.stateless_version is not None:
                # 2026-07-28: closing the request's stream *is* the cancellation.
                target.close()
                await trio.lowlevel.checkpoint()
                return
            if target is None and self.inbox.was_closed_by_caller(meta.cancels):
                await trio.lowlevel.checkpoint()  # (its inline exchange closed it already)
                return
        else:
            # Not a scheduler pass per call: only a cancelled caller stops here.
            await trio.lowlevel.checkpoint_if_cancelled()
        sent = trio.Event()
        after, self._last_sent = self._last_sent, sent

        def on_sent() -> None:
            sent.set()
            if target is not None:
                # Handshake era: the server was told; its answer would be dropped anyway,
                # so free the connection that was waiting for it.
                target.close()

        # The exchange runs as a task of the transport; it goes out after the message
        # sent before it (``after``), so no caller waits for its own POST to leave.
        self._nursery.start_soon(
            partial(self.posts.carry, message, meta, rpc.serialize(message), after=after, on_sent=on_sent)
        )

    def begin_request(self, message: rpc.Request, meta: SendMeta) -> InlinePost:
        """Take ``request`` as ``send`` would, for its exchange to run in the caller's task
        (``InlinePost.run``); see ``stream.py``."""
        if self._closing or self.inbox.fatal is not None:
            raise TransportClosed(f"{self.describe()}: {self.inbox.fatal or 'transport is closed'}")
        if meta.protocol_version is not None and not meta.opens_session:
            self._learn_version(meta.protocol_version)
        sent = trio.Event()
        after, self._last_sent = self._last_sent, sent
        return InlinePost(self.posts, message, meta, after, sent)

    async def receive(self) -> Inbound:
        try:
            return await self.inbox.take()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise self._closed_error() from None

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
                request = self.planner.plan_delete() if self.inbox.fatal is None else None
                if request is not None:
                    with trio.move_on_after(DELETE_TIMEOUT):
                        try:
                            response = await self.executor.open(self._stamp(request))
                            await response.aclose()
                        except TransportError as exc:
                            self._log(f"DELETE of the session failed: {exc}")
                self._nursery.cancel_scope.cancel()
                self.inbox.close()
                await self.executor.aclose()
        finally:
            self._closed.set()

    async def refresh_headers(self) -> None:
        """Compute the run-time headers (helper, OAuth) afresh."""
        await self.headers.refresh()

    def _learn_version(self, protocol_version: str) -> None:
        """The session sends under ``protocol_version`` (its ``SendMeta``'s): the revision
        for the header of messages that do not name their own."""
        try:
            era = get_revision(protocol_version).era
        except ValueError:
            return
        self.planner.sending_under(protocol_version, stateless=era is Era.STATELESS)
