"""The Trio MCP client: ``open_client`` and ``ClientSession``.

Theory of operation
-------------------
``open_client`` builds a transport (a subprocess speaking stdio, or any
``MessageStream`` the caller passes, e.g. one end of ``memory_stream_pair``),
starts a ``SessionDriver`` reader task, and runs the handshake under a connect
deadline.  ``ClientSession`` is a thin typed veneer: each helper sends one
method through the driver and converts the result with the schema converter;
list helpers follow ``nextCursor`` with a page cap and refuse a cursor the
server already gave (a server that loops would otherwise hang us).

Server-to-client requests (sampling, elicitation, roots) are answered by the
handlers given to ``open_client``, at most ``max_concurrent_requests`` at once;
the client advertises exactly the capabilities for which it has a handler.
The logging and notification handlers run in the session's callback task, in
order, at most ``max_pending_callbacks`` queued (see ``driver.py``).

Eras.  With ``revision=None`` the client is dual-era (spec: basic/versioning,
transports/stdio "Backward Compatibility"): it probes with ``server/discover``
under ``probe_timeout``; a DiscoverResult makes a stateless (2026-07-28)
session, an ordinary error or silence a handshake-era one (``initialize``
follows, offering the revision the server named if it named one), and a
modern refusal with no revision in common fails the connect.  Pinning a
stateless revision probes with no fallback; pinning a handshake revision only
runs ``initialize``.  In the stateless era the same handlers answer the
server's ``inputRequests`` (``mrtr.py``, handed to the driver as its
``answer_input``), list results are cached as their
``ttlMs`` allows (``cache.py``), notifications are subscribed to with
``listen`` (``listen.py``; the session's ``NotificationRouter`` is one of the
driver's notification taps), and the handshake-only methods (ping,
``logging/setLevel``, resource subscriptions) are refused locally with a
pointer to what replaced them.
"""

from __future__ import annotations

import logging
import shlex
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence, TypeVar, Union

import trio


from ..._errors import (
    ConnectError, LocalProtocolError, McpError, PaginationError, RemoteProtocolError,
    TransportClosed,
)
from ..._sansio import events as ev
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from ..._sansio.connection.lifecycle import Role
from ..._sansio.revisions import ALL_VERSIONS, Era, get_revision
from ..._sansio.connection.core import LOG_LEVELS, Connection
from .._groups import collapse
from .cache import ListCache
from ..callbacks import DEFAULT_MAX_PENDING_CALLBACKS
from ..driver import (
    USE_DEFAULT, NotificationHandler, ProgressCallback, RequestContext, RequestHandler, SessionDriver,
    UseDefault,
)
from ..request_slots import DEFAULT_MAX_CONCURRENT_REQUESTS
from ..transports.stdio import StdioProcessStream, open_stdio_process
from ..stream import MessageStream
from .listen import NotificationRouter, Subscription, open_subscription
from .mrtr import answer_input_requests

logger = logging.getLogger("trimcp")

T = TypeVar("T")
Timeout = Union[float, None, UseDefault]

#: Default ``clientInfo``.
CLIENT_INFO: dict[str, Any] = {"name": "trimcp", "version": "0.1.0"}

SamplingHandler = Callable[[s.CreateMessageRequestParams], Awaitable[Any]]
ElicitationHandler = Callable[[s.ElicitRequestParams], Awaitable[Any]]
RootsProvider = Union[Sequence[s.Root], Callable[[], Awaitable[Sequence[s.Root]]]]
LoggingHandler = Callable[[s.LoggingMessageNotificationParams], Awaitable[None] | None]


def _parse(cls: type[T], data: Mapping[str, Any], method: str) -> T:
    try:
        return s.from_wire(cls, data)
    except s.SchemaError as exc:
        raise RemoteProtocolError(f"invalid {method} result: {exc}") from exc


def _params(cls: Any, ctx: RequestContext) -> Any:
    # Params that do not fit the schema are the peer's mistake: answer -32602, not -32603.
    try:
        return s.from_wire(cls, ctx.params)
    except s.SchemaError as exc:
        raise McpError(rpc.INVALID_PARAMS, f"invalid {ctx.method} params: {exc}") from exc


def _to_wire(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else s.to_wire(value)


#: Handshake-era methods gone from the stateless era, and what replaced each.
_GONE_IN_STATELESS_ERA = {
    "ping": "there is no ping from 2026-07-28 on; any request shows whether the server is alive",
    "logging/setLevel": "set ClientSession.log_level instead: it travels in every request's _meta",
    "resources/subscribe": "use ClientSession.listen(resource_uris=[...]) instead",
    "resources/unsubscribe": "leave the ClientSession.listen(...) block instead",
}


class ClientSession:
    """A live client session; obtain one from ``open_client``."""

    def __init__(
        self,
        driver: SessionDriver,
        handshake: ev.Initialized | ev.Discovered,
        max_pages: int,
        router: NotificationRouter | None = None,
    ) -> None:
        self.driver = driver
        self.connection = driver.connection
        #: ``"handshake"`` (initialize was run) or ``"stateless"`` (2026-07-28, server/discover).
        self.era = "stateless" if isinstance(handshake, ev.Discovered) else "handshake"
        self.protocol_version = handshake.protocol_version
        self.server_info = handshake.peer_info
        self.server_capabilities = handshake.peer_capabilities
        self.instructions = handshake.instructions
        #: Stateless era: the revisions the server listed in its DiscoverResult.
        self.supported_versions: tuple[str, ...] | None = None
        #: Stateless era: the raw DiscoverResult.
        self.discover_result: dict[str, Any] | None = None
        if isinstance(handshake, ev.Discovered):
            self.supported_versions = tuple(handshake.supported_versions)
            self.discover_result = handshake.result
        self.max_pages = max_pages
        #: The transport, e.g. a ``StdioProcessStream`` with ``stderr_tail()``.
        self.stream = driver.stream
        #: Routes notifications to the cache and to open ``listen`` streams (in the reader task).
        self.router = router or NotificationRouter()
        if self.router not in driver.notification_taps:
            driver.notification_taps.append(self.router)
        #: List pages kept as their ``ttlMs`` allows, dropped by ``list_changed``.
        self.cache: ListCache[Any] = ListCache()
        self.router.taps.append(self.cache.on_notification)

    @property
    def log_level(self) -> str | None:
        """Stateless era: the minimum log level asked of the server in every request."""
        return self.connection.request_log_level

    @log_level.setter
    def log_level(self, level: str | None) -> None:
        if self.era != "stateless":
            raise LocalProtocolError(
                "log_level travels in the requests of the stateless era; in the handshake era "
                "call set_logging_level()"
            )
        if level is not None and level not in LOG_LEVELS:
            raise LocalProtocolError(f"unknown log level {level!r} (one of {', '.join(LOG_LEVELS)})")
        self.connection.request_log_level = level

    # -------------------------------------------------------------- plumbing

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: Timeout = USE_DEFAULT,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Send any request and return the raw result object (stateless era: the
        complete one, after any rounds of input the server asked for)."""
        hint = _GONE_IN_STATELESS_ERA.get(method)
        if hint is not None and self.era == "stateless":
            raise LocalProtocolError(
                f"{method} does not exist in the stateless era (revision {self.protocol_version}): {hint}"
            )
        return await self.driver.request(method, params, timeout=timeout, on_progress=on_progress)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.driver.notify(method, params)

    async def _paginate(self, method: str, cls: type[Any], key: str, refresh: bool) -> list[Any]:
        items: list[Any] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(self.max_pages):
            page = None if refresh else self.cache.get(method, cursor)
            if page is None:
                generation = self.cache.generation(method)
                raw = await self.request(method, None if cursor is None else {"cursor": cursor})
                page = _parse(cls, raw, method)
                self.cache.put(method, cursor, page, raw, generation)
            items.extend(getattr(page, key))
            cursor = page.next_cursor
            if cursor is None:
                return items
            if cursor in seen:
                raise PaginationError(method, f"{method}: the server repeated cursor {cursor!r} (pagination loop)")
            seen.add(cursor)
        raise PaginationError(
            method, f"{method}: more than {self.max_pages} pages; raise max_pages to read them all"
        )

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_uris: Sequence[str] = (),
        max_buffer: int = 256,
        ack_timeout: Timeout = USE_DEFAULT,
    ) -> AsyncIterator[Subscription]:
        """Stateless era: open a ``subscriptions/listen`` stream and iterate over its
        notifications as ``(method, params)``; leaving the block cancels it.

        ``resource_uris`` asks for ``notifications/resources/updated`` of those
        resources.  The block starts once the server acknowledged (within
        ``ack_timeout``, default the request timeout); ``Subscription.acknowledged``
        says which of the requested kinds it will send."""
        if self.era != "stateless":
            raise LocalProtocolError(
                "subscriptions/listen belongs to the stateless era; in the handshake era use "
                "subscribe_resource() and the notification_handler"
            )
        wanted: dict[str, Any] = {}
        for field, flag in (
            ("toolsListChanged", tools_list_changed), ("promptsListChanged", prompts_list_changed),
            ("resourcesListChanged", resources_list_changed),
        ):
            if flag:
                wanted[field] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        if not wanted:
            raise LocalProtocolError("listen() needs at least one kind of notification to subscribe to")
        async with open_subscription(
            self.driver, self.router, wanted, max_buffer=max_buffer, ack_timeout=ack_timeout
        ) as sub:
            yield sub

    # -------------------------------------------------------------- methods

    async def ping(self, *, timeout: Timeout = USE_DEFAULT) -> None:
        await self.request("ping", timeout=timeout)

    async def list_tools(self, *, refresh: bool = False) -> list[s.Tool]:
        """Every page; pages still fresh per their ``ttlMs`` come from the cache unless ``refresh``."""
        return await self._paginate("tools/list", s.ListToolsResult, "tools", refresh)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: Timeout = USE_DEFAULT,
        on_progress: ProgressCallback | None = None,
    ) -> s.CallToolResult:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        result = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        return _parse(s.CallToolResult, result, "tools/call")

    async def list_resources(self, *, refresh: bool = False) -> list[s.Resource]:
        """Every page; pages still fresh per their ``ttlMs`` come from the cache unless ``refresh``."""
        return await self._paginate("resources/list", s.ListResourcesResult, "resources", refresh)

    async def list_resource_templates(self, *, refresh: bool = False) -> list[s.ResourceTemplate]:
        return await self._paginate(
            "resources/templates/list", s.ListResourceTemplatesResult, "resource_templates", refresh
        )

    async def read_resource(self, uri: str, *, timeout: Timeout = USE_DEFAULT) -> s.ReadResourceResult:
        result = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        return _parse(s.ReadResourceResult, result, "resources/read")

    async def subscribe_resource(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self, *, refresh: bool = False) -> list[s.Prompt]:
        """Every page; pages still fresh per their ``ttlMs`` come from the cache unless ``refresh``."""
        return await self._paginate("prompts/list", s.ListPromptsResult, "prompts", refresh)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout: Timeout = USE_DEFAULT
    ) -> s.GetPromptResult:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return _parse(s.GetPromptResult, await self.request("prompts/get", params, timeout=timeout), "prompts/get")

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument_name: str,
        argument_value: str,
        *,
        context_arguments: Mapping[str, str] | None = None,
    ) -> s.CompleteResult:
        """``ref`` is ``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument_name, "value": argument_value}}
        if context_arguments is not None:
            params["context"] = {"arguments": dict(context_arguments)}
        return _parse(s.CompleteResult, await self.request("completion/complete", params), "completion/complete")

    async def set_logging_level(self, level: str) -> None:
        await self.request("logging/setLevel", {"level": level})

    async def notify_roots_changed(self) -> None:
        await self.notify("notifications/roots/list_changed")


def _client_capabilities(
    sampling: SamplingHandler | None,
    elicitation: ElicitationHandler | None,
    elicitation_modes: Sequence[str],
    roots: RootsProvider | None,
) -> dict[str, Any]:
    caps: dict[str, Any] = {}
    if roots is not None:
        caps["roots"] = {"listChanged": True}
    if sampling is not None:
        caps["sampling"] = {}
    if elicitation is not None:
        caps["elicitation"] = {mode: {} for mode in elicitation_modes}
    return caps


def _request_handlers(
    sampling: SamplingHandler | None,
    elicitation: ElicitationHandler | None,
    roots: RootsProvider | None,
) -> dict[str, RequestHandler]:
    handlers: dict[str, RequestHandler] = {}
    if sampling is not None:
        sample = sampling

        async def on_sampling(ctx: RequestContext) -> dict[str, Any]:
            return _to_wire(await sample(_params(s.CreateMessageRequestParams, ctx)))

        handlers["sampling/createMessage"] = on_sampling
    if elicitation is not None:
        elicit = elicitation

        async def on_elicitation(ctx: RequestContext) -> dict[str, Any]:
            return _to_wire(await elicit(_params(s.ElicitRequestParams, ctx)))

        handlers["elicitation/create"] = on_elicitation
    if roots is not None:
        provider = roots

        async def on_roots(ctx: RequestContext) -> dict[str, Any]:
            listed = await provider() if callable(provider) else provider
            return {"roots": [_to_wire(r) for r in listed]}

        handlers["roots/list"] = on_roots
    return handlers


def _notification_handler(
    logging_handler: LoggingHandler | None, notification_handler: NotificationHandler | None
) -> NotificationHandler | None:
    """The application's handlers as one; runs in the session's callback task."""
    if logging_handler is None and notification_handler is None:
        return None  # nothing to queue

    async def handle(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message" and logging_handler is not None:
            try:
                typed = s.from_wire(s.LoggingMessageNotificationParams, params)
            except s.SchemaError as exc:
                # Still reaches the generic handler below, raw.
                logger.warning("malformed log notification from the server: %s", exc)
            else:
                result = logging_handler(typed)
                if result is not None:
                    await result
        if notification_handler is not None:
            result = notification_handler(method, params)
            if result is not None:
                await result

    return handle


@asynccontextmanager
async def open_client(
    target: Sequence[str] | str | MessageStream,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    revision: str | None = None,
    client_info: Mapping[str, Any] | None = None,
    connect_timeout: float = 30.0,
    probe_timeout: float = 5.0,
    request_timeout: float | None = 60.0,
    sampling_handler: SamplingHandler | None = None,
    elicitation_handler: ElicitationHandler | None = None,
    elicitation_modes: Sequence[str] = ("form",),
    roots: RootsProvider | None = None,
    logging_handler: LoggingHandler | None = None,
    notification_handler: NotificationHandler | None = None,
    max_pages: int = 100,
    max_input_rounds: int = 8,
    on_stderr: Callable[[str], None] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    headers: Mapping[str, str] | None = None,
    headers_helper: Any = None,
    http_client: Any = None,
    auth: Any = None,
    max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
    max_pending_callbacks: int = DEFAULT_MAX_PENDING_CALLBACKS,
) -> AsyncIterator[ClientSession]:
    """Connect to an MCP server and yield an operating ``ClientSession``.

    ``target`` is a command line (a list of arguments, or a string split like a
    shell would) for a server speaking stdio, an ``http://``/``https://`` URL
    (Streamable HTTP, falling back to 2024-11-05 HTTP+SSE; ``headers``,
    ``headers_helper``, ``http_client`` and ``auth`` -- an ``OAuthProvider`` -- are
    for it, see ``open_http_stream``),
    a ``ws://``/``wss://`` URL (WebSocket, subprotocol ``mcp``; ``headers`` apply),
    or a ready ``MessageStream``.
    ``revision=None`` speaks either era: a ``server/discover`` probe answered
    within ``probe_timeout`` (at most ``connect_timeout``) makes a stateless
    session, otherwise ``initialize`` follows.  A stateless ``revision`` (e.g.
    ``"2026-07-28"``) refuses handshake-era servers; a handshake one only runs
    ``initialize``.  ``connect_timeout`` bounds the whole connect.
    ``max_input_rounds`` bounds the InputRequiredResults one request may get.
    ``max_message_size`` caps one incoming message in bytes (the stdio line cap
    too); a bigger one breaks the connection and fails every pending request.
    ``max_concurrent_requests`` bounds the server's requests (sampling, ...)
    handled at once; ``max_pending_callbacks`` the notifications waiting for the
    logging and notification handlers (which never run in the reader task: see
    the module docstring).
    """
    versions: tuple[str, ...] = ALL_VERSIONS
    if revision is not None:
        if revision not in versions:
            raise LocalProtocolError(f"revision {revision!r} is not one this client speaks ({', '.join(versions)})")
        versions = (revision,)
    connection = Connection(
        Role.CLIENT,
        info=dict(client_info or CLIENT_INFO),
        capabilities=_client_capabilities(sampling_handler, elicitation_handler, elicitation_modes, roots),
        supported_versions=versions,
        max_message_size=max_message_size,
    )
    with collapse():
        async with AsyncExitStack() as stack:
            stream: MessageStream
            if isinstance(target, MessageStream):
                stream = target
            elif isinstance(target, str) and target.startswith(("ws://", "wss://")):
                from ..transports.websocket import open_websocket_stream  # trio-websocket only when used

                stream = await stack.enter_async_context(open_websocket_stream(
                    target, headers=headers, max_message_size=max_message_size,
                    connect_timeout=connect_timeout,
                ))
            elif isinstance(target, str) and target.startswith(("http://", "https://")):
                from ..transports.http.connect import open_http_stream  # h11 is imported only when HTTP is used

                stream = await stack.enter_async_context(open_http_stream(
                    target, headers=headers, headers_helper=headers_helper,
                    http_client=http_client, max_message_size=max_message_size, auth=auth,
                ))
            else:
                argv = shlex.split(target) if isinstance(target, str) else list(target)
                if not argv:
                    raise LocalProtocolError("empty server command")
                stream = await stack.enter_async_context(
                    open_stdio_process(
                        argv, env=env, cwd=cwd, on_stderr=on_stderr, max_line=max_message_size
                    )
                )
            driver = SessionDriver(
                connection,
                stream,
                request_handlers=_request_handlers(sampling_handler, elicitation_handler, roots),
                notification_handler=_notification_handler(logging_handler, notification_handler),
                request_timeout=request_timeout,
                max_input_rounds=max_input_rounds,
                answer_input=answer_input_requests,
                max_concurrent_requests=max_concurrent_requests,
                max_pending_callbacks=max_pending_callbacks,
            )
            async with trio.open_nursery() as nursery:
                await nursery.start(driver.run)
                # The stream is ours to close on every way out, a failed handshake included.
                try:
                    handshake = await _negotiate(driver, revision, connect_timeout, probe_timeout)
                    yield ClientSession(driver, handshake, max_pages)
                finally:
                    await driver.aclose()
                    nursery.cancel_scope.cancel()


async def _negotiate(
    driver: SessionDriver, revision: str | None, connect_timeout: float, probe_timeout: float
) -> ev.Initialized | ev.Discovered:
    """Agree on a revision: probe and/or initialize, all within ``connect_timeout``."""
    pinned = None if revision is None else get_revision(revision).era
    phase = "server/discover"
    try:
        with trio.fail_after(connect_timeout):
            legacy_version: str | None = revision
            if pinned is not Era.HANDSHAKE:
                limit = None if pinned is Era.STATELESS else min(probe_timeout, connect_timeout)
                outcome = await driver.discover(protocol_version=revision, timeout=limit)
                if isinstance(outcome, ev.Discovered):
                    return outcome
                if isinstance(outcome, ev.HandshakeFailed):
                    raise ConnectError(f"server/discover failed: {outcome.reason}")
                if pinned is Era.STATELESS:
                    raise ConnectError(
                        f"the server speaks only the handshake era ({outcome.reason}), but revision "
                        f"{revision} was pinned; pass revision=None to fall back to initialize"
                    )
                legacy_version = outcome.version
            phase = "initialize"
            return await driver.initialize(protocol_version=legacy_version)
    except trio.TooSlowError:
        raise ConnectError(
            _explain(driver.stream, f"no answer to {phase} within {connect_timeout} s")
        ) from None
    except TransportClosed as exc:
        raise ConnectError(f"the server went away during {phase}: {exc}") from exc
    except (McpError, RemoteProtocolError) as exc:
        # A refused or unusable handshake is a failure to connect, whatever its cause;
        # the peer's error (with its code and data) stays reachable as __cause__.
        raise ConnectError(f"{phase} failed: {exc}") from exc


def _explain(stream: MessageStream, message: str) -> str:
    if isinstance(stream, StdioProcessStream):
        tail = stream.stderr_tail()
        if tail:
            return f"{message}\n--- last stderr lines ---\n{tail}"
    return message
