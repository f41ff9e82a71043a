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
handlers given to ``open_client``; the client advertises exactly the
capabilities for which it has a handler.
"""

from __future__ import annotations

import logging
import shlex
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence, TypeVar, Union

import trio


from .._errors import ConnectError, LocalProtocolError, McpError, RemoteProtocolError, TransportClosed
from .._sansio import events as ev
from .._sansio import jsonrpc as rpc
from .._sansio import schema as s
from .._sansio.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from .._sansio.lifecycle import Role
from .._sansio.revisions import HANDSHAKE_VERSIONS
from .._sansio.session import Connection
from ._groups import collapse
from .session import (
    USE_DEFAULT, NotificationHandler, ProgressCallback, RequestContext, SessionDriver, UseDefault,
)
from .stdio import StdioProcessStream, open_stdio_process
from .stream import MessageStream

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


class ClientSession:
    """A live client session; obtain one from ``open_client``."""

    def __init__(self, driver: SessionDriver, handshake: ev.Initialized, max_pages: int) -> None:
        self.driver = driver
        self.connection = driver.connection
        self.protocol_version = handshake.protocol_version
        self.server_info = handshake.peer_info
        self.server_capabilities = handshake.peer_capabilities
        self.instructions = handshake.instructions
        self.max_pages = max_pages
        #: The transport, e.g. a ``StdioProcessStream`` with ``stderr_tail()``.
        self.stream = driver.stream

    # -------------------------------------------------------------- plumbing

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: Timeout = USE_DEFAULT,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Send any request and return the raw result object."""
        return await self.driver.request(method, params, timeout=timeout, on_progress=on_progress)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.driver.notify(method, params)

    async def _paginate(self, method: str, cls: type[Any], key: str, params: dict[str, Any] | None) -> list[Any]:
        items: list[Any] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(self.max_pages):
            page_params = dict(params or {})
            if cursor is not None:
                page_params["cursor"] = cursor
            page = _parse(cls, await self.request(method, page_params or None), method)
            items.extend(getattr(page, key))
            cursor = page.next_cursor
            if cursor is None:
                return items
            if cursor in seen:
                raise RemoteProtocolError(f"{method}: the server repeated cursor {cursor!r} (pagination loop)")
            seen.add(cursor)
        raise RemoteProtocolError(f"{method}: more than {self.max_pages} pages; raise max_pages to read them all")

    # -------------------------------------------------------------- methods

    async def ping(self, *, timeout: Timeout = USE_DEFAULT) -> None:
        await self.request("ping", timeout=timeout)

    async def list_tools(self) -> list[s.Tool]:
        return await self._paginate("tools/list", s.ListToolsResult, "tools", None)

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

    async def list_resources(self) -> list[s.Resource]:
        return await self._paginate("resources/list", s.ListResourcesResult, "resources", None)

    async def list_resource_templates(self) -> list[s.ResourceTemplate]:
        return await self._paginate(
            "resources/templates/list", s.ListResourceTemplatesResult, "resource_templates", None
        )

    async def read_resource(self, uri: str, *, timeout: Timeout = USE_DEFAULT) -> s.ReadResourceResult:
        result = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        return _parse(s.ReadResourceResult, result, "resources/read")

    async def subscribe_resource(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self) -> list[s.Prompt]:
        return await self._paginate("prompts/list", s.ListPromptsResult, "prompts", None)

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
) -> dict[str, Callable[[RequestContext], Awaitable[dict[str, Any]]]]:
    handlers: dict[str, Callable[[RequestContext], Awaitable[dict[str, Any]]]] = {}
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
) -> NotificationHandler:
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
    request_timeout: float | None = 60.0,
    sampling_handler: SamplingHandler | None = None,
    elicitation_handler: ElicitationHandler | None = None,
    elicitation_modes: Sequence[str] = ("form",),
    roots: RootsProvider | None = None,
    logging_handler: LoggingHandler | None = None,
    notification_handler: NotificationHandler | None = None,
    max_pages: int = 100,
    on_stderr: Callable[[str], None] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[ClientSession]:
    """Connect to an MCP server and yield an initialized ``ClientSession``.

    ``target`` is a command line (a list of arguments, or a string split like a
    shell would) for a server speaking stdio, or a ready ``MessageStream``.
    ``revision`` pins the protocol revision offered (default: the newest).
    ``max_message_size`` caps one incoming message in bytes (the stdio line cap
    too); a bigger one breaks the connection and fails every pending request.
    """
    versions = HANDSHAKE_VERSIONS
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
            )
            async with trio.open_nursery() as nursery:
                await nursery.start(driver.run)
                # The stream is ours to close on every way out, a failed handshake included.
                try:
                    try:
                        with trio.fail_after(connect_timeout):
                            handshake = await driver.initialize(protocol_version=revision)
                    except trio.TooSlowError:
                        raise ConnectError(
                            _explain(stream, f"no answer to initialize within {connect_timeout} s")
                        ) from None
                    except TransportClosed as exc:
                        raise ConnectError(f"the server went away during initialize: {exc}") from exc
                    yield ClientSession(driver, handshake, max_pages)
                finally:
                    await driver.aclose()
                    nursery.cancel_scope.cancel()


def _explain(stream: MessageStream, message: str) -> str:
    if isinstance(stream, StdioProcessStream):
        tail = stream.stderr_tail()
        if tail:
            return f"{message}\n--- last stderr lines ---\n{tail}"
    return message
