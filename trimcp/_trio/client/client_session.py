"""The Trio MCP client session: ``ClientSession`` (``open_client`` is in ``connect.py``).

Theory of operation
-------------------
``ClientSession`` is a thin typed veneer over a running ``SessionDriver``:
each helper sends one method through the driver and converts the result with
the schema converter; list helpers follow ``nextCursor`` with a page cap and
refuse a cursor the server already gave (a server that loops would otherwise
hang us).  ``era`` says how the session was negotiated: ``Era.HANDSHAKE``
(``initialize``) or ``Era.STATELESS`` (2026-07-28, ``server/discover``).

In the stateless era list results are cached as their ``ttlMs`` allows
(``cache.py``), notifications are subscribed to with ``listen``
(``listen.py``; the session's ``NotificationRouter`` is one of the driver's
notification taps), and the handshake-only methods (ping,
``logging/setLevel``, resource subscriptions) are refused locally with a
pointer to what replaced them.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar

from ..._errors import LocalProtocolError, McpError, PaginationError, RemoteProtocolError
from ..._sansio import apps, extensions
from ..._sansio import events as ev
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.connection.core import LOG_LEVELS
from ..._sansio.http.headers import ToolHeaderBook
from ..._sansio.revisions import Era
from ..driver import USE_DEFAULT, ProgressCallback, SessionDriver, UseDefault
from ..stream import mirrors_tool_headers
from ..waiters import Deadline
from .cache import ListCache
from .listen import NotificationRouter, Subscription, open_subscription
from .task_follower import ToolTask, created_task, follow_to_result

logger = logging.getLogger("trimcp")

T = TypeVar("T")
Timeout = float | None | UseDefault


def _parse(cls: type[T], data: Mapping[str, Any], method: str) -> T:
    try:
        return s.from_wire(cls, data)
    except s.SchemaError as exc:
        raise RemoteProtocolError(f"invalid {method} result: {exc}") from exc


#: Handshake-era methods gone from the stateless era, and what replaced each.
_GONE_IN_STATELESS_ERA = {
    "ping": "there is no ping from 2026-07-28 on; any request shows whether the server is alive",
    "logging/setLevel": "set ClientSession.log_level instead: it travels in every request's _meta",
    "resources/subscribe": "use ClientSession.listen(resource_uris=[...]) instead",
    "resources/unsubscribe": "leave the ClientSession.listen(...) block instead",
}


class UrlElicitation(Protocol):
    """URL-mode elicitation (2025-11-25) beyond answering ``elicitation/create``.

    ``completed`` is told each ``notifications/elicitation/complete`` (synchronously,
    in the reader: it must not block); ``required`` is awaited when a ``tools/call``
    is refused with -32042 and returns whether the call should be sent again (every
    listed elicitation was accepted and, within its bound, completed).
    ``trimcp.host.Elicitation`` provides one per server."""

    def completed(self, elicitation_id: str) -> None: ...

    async def required(self, elicitations: Sequence[s.ElicitRequestURLParams]) -> bool: ...


class ClientSession:
    """A live client session; obtain one from ``open_client``."""

    def __init__(
        self,
        driver: SessionDriver,
        handshake: ev.Initialized | ev.Discovered,
        max_pages: int,
        *,
        router: NotificationRouter,
        cache: ListCache[Any],
        url_elicitation: UrlElicitation | None = None,
    ) -> None:
        """``router`` is among the driver's notification taps and ``cache`` among the
        router's: ``open_client`` wires them when it builds the driver."""
        self.driver = driver
        self.connection = driver.connection
        #: ``Era.HANDSHAKE`` (initialize was run) or ``Era.STATELESS`` (2026-07-28, server/discover).
        self.era: Era = Era.STATELESS if isinstance(handshake, ev.Discovered) else Era.HANDSHAKE
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
        self.router = router
        #: List pages kept as their ``ttlMs`` allows, dropped by ``list_changed``.
        self.cache = cache
        #: The listed tools' ``x-mcp-header`` parameters; a transport that mirrors them
        #: (Streamable HTTP) needs tools with invalid annotations left out.
        self.tool_headers = ToolHeaderBook(reject_invalid=mirrors_tool_headers(self.stream))
        #: Elicits the URLs of a -32042 refusal before ``call_tool`` tries once more (opt-in).
        self.url_elicitation = url_elicitation

    @property
    def is_closed(self) -> bool:
        """Whether the session has ended (the server went away, or it was closed)."""
        return self.driver.is_closed

    @property
    def closed_error(self) -> BaseException | None:
        """Why the session ended (a ``TransportError`` naming the cause), or None while open."""
        return self.driver.closed_error

    async def wait_closed(self) -> BaseException:
        """Wait until the session ends; return why (as ``closed_error``)."""
        return await self.driver.wait_closed()

    @property
    def log_level(self) -> str | None:
        """Stateless era: the minimum log level asked of the server in every request."""
        return self.connection.request_log_level

    @log_level.setter
    def log_level(self, level: str | None) -> None:
        if self.era is not Era.STATELESS:
            raise LocalProtocolError(
                "log_level travels in the requests of the stateless era; in the handshake era call set_logging_level()"
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
        reset_timeout_on_progress: bool | None = None,
        max_total_timeout: float | None | UseDefault = USE_DEFAULT,
    ) -> dict[str, Any]:
        """Send any request and return the raw result object (stateless era: the
        complete one, after any rounds of input the server asked for).
        ``reset_timeout_on_progress`` / ``max_total_timeout`` override the session's
        (``open_client``): progress pushes the deadline, within a total bound."""
        hint = _GONE_IN_STATELESS_ERA.get(method)
        if hint is not None and self.era is Era.STATELESS:
            raise LocalProtocolError(
                f"{method} does not exist in the stateless era (revision {self.protocol_version}): {hint}"
            )
        return await self.driver.request(
            method,
            params,
            timeout=timeout,
            on_progress=on_progress,
            reset_timeout_on_progress=reset_timeout_on_progress,
            max_total_timeout=max_total_timeout,
        )

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
        raise PaginationError(method, f"{method}: more than {self.max_pages} pages; raise max_pages to read them all")

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
        if self.era is not Era.STATELESS:
            raise LocalProtocolError(
                "subscriptions/listen belongs to the stateless era; in the handshake era use "
                "subscribe_resource() and the notification_handler"
            )
        wanted: dict[str, Any] = {}
        for field, flag in (
            ("toolsListChanged", tools_list_changed),
            ("promptsListChanged", prompts_list_changed),
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
        """Every page; pages still fresh per their ``ttlMs`` come from the cache unless ``refresh``.

        Over Streamable HTTP, tools whose ``x-mcp-header`` annotations are invalid are
        left out (spec 2026-07-28 basic/transports/streamable-http), with a warning."""
        tools = self.tool_headers.learn(await self._paginate("tools/list", s.ListToolsResult, "tools", refresh))
        for name, reason in self.tool_headers.rejected:
            logger.warning("left tool %r out of tools/list: %s", name, reason)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: Timeout = USE_DEFAULT,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_total_timeout: float | None | UseDefault = USE_DEFAULT,
    ) -> s.CallToolResult:
        """Call a tool.  While progress resets the timeout (``reset_timeout_on_progress``,
        default the session's), the call always carries a progress token, so a tool
        that reports progress is kept alive without an ``on_progress``; the
        deadline never passes the start + ``max_total_timeout`` (``None``: 10 x the timeout).
        A refusal with -32042 (URL elicitation required) is elicited and the call sent
        once more when ``open_client`` was given a ``Handlers(url_elicitation=...)``.
        When the client declared the tasks extension (``open_client(extensions=
        {"io.modelcontextprotocol/tasks": {}})``) and the server answers with a task,
        the task is polled to its end within the same deadline (``task_follower.py``): its
        result, ``McpError`` if it failed, ``TaskCancelled`` if it was cancelled;
        cancelling the call, or its timing out, sends ``tasks/cancel``."""
        deadline = Deadline(
            self.driver.request_timeout if isinstance(timeout, UseDefault) else timeout,
            self.driver.reset_timeout_on_progress if reset_timeout_on_progress is None else reset_timeout_on_progress,
            self.driver.max_total_timeout if isinstance(max_total_timeout, UseDefault) else max_total_timeout,
        )
        result = await self._send_tool_call(
            name,
            arguments,
            timeout=timeout,
            on_progress=on_progress,
            reset_timeout_on_progress=reset_timeout_on_progress,
            max_total_timeout=max_total_timeout,
        )
        if result.get("resultType") == s.ResultType.TASK:
            return await follow_to_result(self.driver, result, deadline)
        return _parse(s.CallToolResult, result, "tools/call")

    async def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: Timeout = USE_DEFAULT,
    ) -> ToolTask | s.CallToolResult:
        """Call a tool and hand over the task, if the server made one: a ``ToolTask``
        (``status()``, ``wait()``, ``result()``, ``cancel()``), else the result it
        answered with at once (ext-tasks: the server alone decides).  ``timeout`` bounds
        the ``tools/call`` only.  Needs the tasks extension declared (``open_client``)."""
        if not extensions.declares(self.connection.capabilities, extensions.TASKS.id):
            raise LocalProtocolError(
                f"call_tool_as_task needs the {extensions.TASKS.id} extension declared: "
                f"open_client(..., extensions={{{extensions.TASKS.id!r}: {{}}}})"
            )
        result = await self._send_tool_call(name, arguments, timeout=timeout)
        if result.get("resultType") == s.ResultType.TASK:
            return ToolTask(self.driver, created_task(result))
        return _parse(s.CallToolResult, result, "tools/call")

    async def _send_tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout: Timeout = USE_DEFAULT,
        on_progress: ProgressCallback | None = None,
        reset_timeout_on_progress: bool | None = None,
        max_total_timeout: float | None | UseDefault = USE_DEFAULT,
    ) -> dict[str, Any]:
        """``tools/call`` (and its -32042 retry): the raw result."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)

        async def send() -> dict[str, Any]:
            return await self.driver.request(
                "tools/call",
                params,
                timeout=timeout,
                on_progress=on_progress,
                header_params=self.tool_headers.params_for(name),
                progress_token=True,
                reset_timeout_on_progress=reset_timeout_on_progress,
                max_total_timeout=max_total_timeout,
            )

        try:
            result = await send()
        except McpError as exc:
            if exc.code != rpc.URL_ELICITATION_REQUIRED or self.url_elicitation is None:
                raise
            # 2025-11-25 client/elicitation "URL Elicitation Required Error": complete the
            # listed elicitations, then retry once; a second refusal is the caller's.
            try:
                data = s.parse_error_data(exc.code, exc.data)
            except s.SchemaError as bad:
                raise RemoteProtocolError(f"tools/call: unusable -32042 data: {bad}") from exc
            if not await self.url_elicitation.required(list(data.elicitations)):
                raise
            result = await send()
        return result

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

    async def read_view(self, tool: str | s.Tool, *, timeout: Timeout = USE_DEFAULT) -> apps.View:
        """The MCP Apps view (``io.modelcontextprotocol/ui``) a tool links in
        ``_meta.ui.resourceUri``, read with ``resources/read`` and checked: a ``ui://``
        URI, ``text/html;profile=mcp-app``, HTML in text or blob, well-formed ``_meta.ui``
        (``View.content_security_policy`` is the policy to serve it under).  A server
        links views only for a client that declared the extension
        (``open_client(extensions=apps.client_extension())``).  ``ValueError`` for a tool
        that is unknown or links no view; ``RemoteProtocolError`` for a view that breaks
        the extension's rules."""
        if isinstance(tool, str):
            found = next((t for t in await self.list_tools() if t.name == tool), None)
            if found is None:
                raise ValueError(f"the server has no tool {tool!r}")
            tool = found
        link = apps.tool_link(s.to_wire(tool))
        if link is None or link.resource_uri is None or link.problems:
            why = "; ".join(link.problems) if link is not None and link.problems else "it has no _meta.ui.resourceUri"
            raise ValueError(f"tool {tool.name!r} links no usable view: {why}")
        result = await self.request("resources/read", {"uri": link.resource_uri}, timeout=timeout)
        try:
            return apps.view_from_contents(link.resource_uri, result)
        except ValueError as exc:
            raise RemoteProtocolError(f"the view {link.resource_uri} of tool {tool.name!r}: {exc}") from None

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
