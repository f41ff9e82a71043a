"""``Server``: declare tools, resources, prompts and completions, then serve them.

Theory of operation
-------------------
A ``Server`` is a registry plus the live sessions and subscriptions.
Registration is by decorator (``@server.tool()``, ``@server.resource(uri)``,
``@server.resource_template(template)``, ``@server.prompt()``,
``@server.completion(...)``) or by the matching ``add_*``/``remove_*``
methods, which may be called while clients are connected.

One server speaks both eras (``supported_versions`` defaults to every
revision trimcp knows): a client that opens with ``initialize`` gets a
handshake-era session; a client whose requests carry the 2026-07-28 ``_meta``
envelope is served statelessly, request by request (spec: basic/versioning,
"dual-era server"); different connections may do either at the same time.

The capabilities a connection advertises (``initialize`` result or
``server/discover``) are derived from what is registered when it starts
(spec 2025-11-25, Lifecycle / Capability Negotiation): ``tools``,
``resources`` (with ``subscribe``), ``prompts`` (each with ``listChanged``),
``completions`` once a completion is registered, and ``logging`` unless
disabled.  Each connection gets its own sans-IO ``Connection`` built by
``make_connection``; the Connection answers ``initialize``, ``ping``,
``logging/setLevel`` and ``server/discover`` itself and refuses methods whose
capability was not advertised.

``notify_*`` deliver concurrently to every operating handshake session and to
every open ``subscriptions/listen`` request whose filter asks for it
(``subscriptions.ListenStream``): ``list_changed`` after the registry changed,
``resources/updated`` to the sessions and listen streams watching that URI.
Changing the registry does not notify by itself, so a batch of changes can be
announced once.

The server is what the per-connection objects refer back to
(``ServerSession.server``, ``Context.server``), so this module imports none
of them: ``serve_stream`` registers each ``ServerSession`` in ``sessions``,
which this module knows only as a ``BroadcastSession`` (the two members a
broadcast uses), and ``request_state_principal`` is typed without naming
``Context``.

Stateless-era settings: ``state_secret`` keys the HMAC of MRTR
``requestState`` tokens (random per ``Server`` by default: pass the same
secret to every instance behind a load balancer), ``request_state_ttl`` is
their lifetime in seconds, ``request_state_principal`` may name the
authenticated principal a token is bound to.  Cache hints (spec:
server/utilities/caching): ``ttlMs`` defaults to 0 ("immediately stale") on
list results and ``resources/read``, because tools, resources and readers may
change at any moment; a server whose registry is fixed can raise
``list_ttl_ms``.  Lists are ``public`` (one registry serves every client),
reads ``private`` (a reader may depend on the caller); ``server/discover``
is cacheable for ``discover_ttl_ms`` (5 minutes).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal, Protocol, TypeVar, overload

import trio

from .._sansio import extensions
from .._sansio.connection.core import Connection
from .._sansio.connection.lifecycle import Role
from .._sansio.revisions import ALL_VERSIONS
from .._trio.callbacks import DEFAULT_MAX_PENDING_CALLBACKS
from .._trio.request_slots import DEFAULT_MAX_CONCURRENT_REQUESTS
from ._registry import (
    Handler,
    PromptEntry,
    ResourceEntry,
    TaskStart,
    TaskSupport,
    TemplateEntry,
    ToolEntry,
    make_prompt,
    make_resource,
    make_template,
    make_tool,
)
from ._request_state import StateSealer
from .subscriptions import ListenStream
from .task_runner import TaskRunner

F = TypeVar("F", bound=Callable[..., Any])
CacheScope = Literal["public", "private"]
#: Called with a stateless request's ``Context``; names the principal its ``requestState`` is
#: bound to.  (``Any``: ``context`` imports this module, so this one cannot name ``Context``.)
PrincipalHook = Callable[[Any], str | None]


#: A change notification's extra destination (``Server.fan_outs``).
FanOut = Callable[[str, dict[str, Any] | None], Awaitable[None]]


class BroadcastSession(Protocol):
    """A connected session as a broadcast sees it (``server_session.ServerSession`` is one)."""

    #: Resource URIs the client subscribed to (``resources/subscribe``).
    subscriptions: set[str]

    async def notify_quietly(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification if the session is operating; a vanished client is not an error."""
        ...


#: ``ref.type`` values of ``completion/complete`` (a short form is accepted when registering).
_REF_TYPES = {
    "prompt": "ref/prompt",
    "resource": "ref/resource",
    "ref/prompt": "ref/prompt",
    "ref/resource": "ref/resource",
}


class Server:
    """An MCP server definition; serve it with ``serve_stream`` or ``serve_stdio``."""

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int | None = None,
        logging: bool = True,
        supported_versions: Sequence[str] = ALL_VERSIONS,
        request_timeout: float | None = 60.0,
        state_secret: bytes | None = None,
        request_state_ttl: float = 600.0,
        request_state_principal: PrincipalHook | None = None,
        list_ttl_ms: int = 0,
        list_cache_scope: CacheScope = "public",
        read_ttl_ms: int = 0,
        read_cache_scope: CacheScope = "private",
        discover_ttl_ms: int = 300_000,
        max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
        max_pending_callbacks: int = DEFAULT_MAX_PENDING_CALLBACKS,
    ) -> None:
        if min(max_concurrent_requests, max_pending_callbacks) < 1:
            raise ValueError("max_concurrent_requests and max_pending_callbacks must be at least 1")
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be positive (or None for a single page)")
        if min(list_ttl_ms, read_ttl_ms, discover_ttl_ms) < 0:
            raise ValueError("ttlMs values must be >= 0 (spec: caching)")
        if {list_cache_scope, read_cache_scope} - {"public", "private"}:
            raise ValueError("cacheScope must be 'public' or 'private'")
        self.info: dict[str, Any] = {"name": name, "version": version}
        if title is not None:
            self.info["title"] = title
        self.instructions = instructions
        #: Items per page of every ``*/list`` answer; ``None``: everything at once.
        self.page_size = page_size
        self.logging = logging
        self.supported_versions = tuple(supported_versions)
        #: Default deadline of the requests this server sends (``roots/list``, ...).
        self.request_timeout = request_timeout
        self.tools: dict[str, ToolEntry] = {}
        self.resources: dict[str, ResourceEntry] = {}
        self.resource_templates: dict[str, TemplateEntry] = {}
        self.prompts: dict[str, PromptEntry] = {}
        self.completions: dict[tuple[str, str, str], Handler] = {}
        self.roots_changed_handlers: list[Handler] = []
        #: The sessions currently connected (``serve_stream`` adds and removes them).
        self.sessions: set[BroadcastSession] = set()
        #: Open ``subscriptions/listen`` requests (stateless era).
        self.listeners: set[ListenStream] = set()
        #: Called with every change notification too (``method``, ``params``): how an HTTP
        #: server run as replicas reaches the sessions and listen streams other processes hold.
        self.fan_outs: list[FanOut] = []
        #: Mints and verifies MRTR ``requestState`` tokens.
        self.request_state = StateSealer(state_secret, ttl=request_state_ttl)
        self.request_state_principal: PrincipalHook | None = request_state_principal
        self.list_ttl_ms = list_ttl_ms
        self.list_cache_scope: CacheScope = list_cache_scope
        self.read_ttl_ms = read_ttl_ms
        self.read_cache_scope: CacheScope = read_cache_scope
        self.discover_ttl_ms = discover_ttl_ms
        #: Per session, over every transport: the client requests handled at once (more
        #: wait, in order: back-pressure) and the notifications that may wait for the
        #: roots-changed hooks (see ``trimcp._trio.driver``).
        self.max_concurrent_requests = max_concurrent_requests
        self.max_pending_callbacks = max_pending_callbacks
        #: ext-tasks: the tasks of task-capable tools, and the background runs behind them.
        self.tasks = TaskRunner()

    def __repr__(self) -> str:
        return f"<Server {self.info['name']} {self.info['version']}>"

    # ------------------------------------------------------------ tools

    @overload
    def tool(self, name: F, /) -> F: ...
    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        ui: str | dict[str, Any] | None = None,
        task: TaskSupport = "never",
        task_start: TaskStart = "at_once",
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        ui: str | dict[str, Any] | None = None,
        task: TaskSupport = "never",
        task_start: TaskStart = "at_once",
    ) -> F | Callable[[F], F]:
        """Register ``async def f(ctx, **arguments)`` as a tool (``@server.tool`` or ``@server.tool(...)``).

        Without ``input_schema`` the schema is derived from ``f``'s signature;
        without ``description``, from the first paragraph of its docstring.
        ``ui`` links an MCP Apps view: its ``ui://`` URI, or the whole ``_meta.ui``
        object (``resourceUri``, ``visibility``); it is listed only to clients that
        declared the ``io.modelcontextprotocol/ui`` extension (SEP-1865: a server
        SHOULD check before linking views), the tool itself to every client.
        ``task`` (``"optional"``/``"required"``) lets a call run as an ext-tasks task
        (``trimcp.server.task_runner``); ``task_start="explicit"`` waits for ``ctx.start_task()``.
        """
        if callable(name):
            self.add_tool(name)
            return name
        tool_name = name

        def register(fn: F) -> F:
            self.add_tool(
                fn,
                tool_name,
                title=title,
                description=description,
                input_schema=input_schema,
                output_schema=output_schema,
                annotations=annotations,
                icons=icons,
                ui=ui,
                task=task,
                task_start=task_start,
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Handler,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        ui: str | dict[str, Any] | None = None,
        task: TaskSupport = "never",
        task_start: TaskStart = "at_once",
    ) -> ToolEntry:
        entry = make_tool(
            fn,
            name,
            title=title,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=annotations,
            icons=icons,
            ui=ui,
            task=task,
            task_start=task_start,
        )
        self.tools[entry.name] = entry
        return entry

    def remove_tool(self, name: str) -> None:
        del self.tools[name]

    # ------------------------------------------------------------ resources

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        listed: bool = True,
    ) -> Callable[[F], F]:
        """Register ``async def f(ctx)`` returning ``str`` (text) or ``bytes`` (blob) as resource ``uri``.

        ``listed=False`` leaves it out of ``resources/list`` while ``resources/read``
        serves it (an MCP Apps view, found through the tool that links it)."""

        def register(fn: F) -> F:
            self.add_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                listed=listed,
            )
            return fn

        return register

    def add_resource(
        self,
        fn: Handler,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        listed: bool = True,
    ) -> ResourceEntry:
        entry = make_resource(
            fn,
            uri,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            size=size,
            annotations=annotations,
        )
        entry.listed = listed
        self.resources[uri] = entry
        return entry

    def remove_resource(self, uri: str) -> None:
        del self.resources[uri]

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register ``async def f(ctx, **variables)`` for URIs matching a level-1 RFC 6570 template.

        The reader may raise ``ResourceNotFound`` for variable values it does not know.
        """

        def register(fn: F) -> F:
            entry = make_template(
                fn,
                uri_template,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                annotations=annotations,
            )
            self.resource_templates[uri_template] = entry
            return fn

        return register

    def remove_resource_template(self, uri_template: str) -> None:
        del self.resource_templates[uri_template]

    # ------------------------------------------------------------ prompts

    @overload
    def prompt(self, name: F, /) -> F: ...
    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: Iterable[dict[str, Any]] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: Iterable[dict[str, Any]] | None = None,
    ) -> F | Callable[[F], F]:
        """Register ``async def f(ctx, **arguments)`` returning messages as a prompt.

        ``arguments`` are ``PromptArgument`` dicts (``name``, ``description``,
        ``required``); omitted, they are derived from ``f``'s signature.
        """
        if callable(name):
            self.add_prompt(name)
            return name
        prompt_name = name

        def register(fn: F) -> F:
            self.add_prompt(fn, prompt_name, title=title, description=description, arguments=arguments)
            return fn

        return register

    def add_prompt(
        self,
        fn: Handler,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: Iterable[dict[str, Any]] | None = None,
    ) -> PromptEntry:
        entry = make_prompt(
            fn,
            name,
            title=title,
            description=description,
            arguments=[dict(a) for a in arguments] if arguments is not None else None,
        )
        self.prompts[entry.name] = entry
        return entry

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]

    # ------------------------------------------------------------ completions, roots

    def completion(self, ref_type: str, ref: str, argument_name: str) -> Callable[[F], F]:
        """Register ``async def f(ctx, value, context_arguments) -> list[str]`` completing one argument.

        ``ref_type`` is ``"ref/prompt"`` (``ref`` = prompt name) or ``"ref/resource"``
        (``ref`` = resource template URI); ``"prompt"``/``"resource"`` also work.
        ``context_arguments`` holds arguments the client already resolved.
        """
        kind = _REF_TYPES.get(ref_type)
        if kind is None:
            raise ValueError(f"ref_type must be 'ref/prompt' or 'ref/resource', not {ref_type!r}")

        def register(fn: F) -> F:
            self.completions[(kind, ref, argument_name)] = fn
            return fn

        return register

    def on_roots_changed(self, fn: F) -> F:
        """Register ``async def f(session)`` called on ``notifications/roots/list_changed``."""
        self.roots_changed_handlers.append(fn)
        return fn

    # ------------------------------------------------------------ sessions

    def capabilities(self) -> dict[str, Any]:
        """The ``ServerCapabilities`` derived from what is registered now."""
        caps: dict[str, Any] = {}
        if self.logging:
            caps["logging"] = {}
        if self.completions:
            caps["completions"] = {}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.resources or self.resource_templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if any(t.task != "never" for t in self.tools.values()):
            # (left out of revisions that don't know the extension: ``_sansio.extensions``)
            caps["extensions"] = {extensions.TASKS.id: {}}
        return caps

    def make_connection(self) -> Connection:
        """A fresh sans-IO Connection in the server role for one session."""
        connection = Connection(
            Role.SERVER,
            info=dict(self.info),
            capabilities=self.capabilities(),
            supported_versions=self.supported_versions,
            instructions=self.instructions,
        )
        connection.discover_ttl_ms = self.discover_ttl_ms
        return connection

    async def _broadcast(
        self, method: str, params: dict[str, Any] | None, sessions: Iterable[BroadcastSession]
    ) -> None:
        async with trio.open_nursery() as nursery:
            for session in sessions:
                nursery.start_soon(session.notify_quietly, method, params)
            self._deliver_to_listeners(nursery, method, params)
            for fan_out in list(self.fan_outs):
                nursery.start_soon(fan_out, method, params)

    def _deliver_to_listeners(self, nursery: trio.Nursery, method: str, params: dict[str, Any] | None) -> None:
        for sub in [sub for sub in list(self.listeners) if sub.wants(method, params)]:
            nursery.start_soon(sub.deliver, method, params)

    async def notify_listeners(self, method: str, params: dict[str, Any] | None) -> None:
        """Deliver a change notification to this process's open ``subscriptions/listen``
        requests only (another replica published it; its sessions were reached there)."""
        async with trio.open_nursery() as nursery:
            self._deliver_to_listeners(nursery, method, params)

    async def notify_tools_list_changed(self) -> None:
        await self._broadcast("notifications/tools/list_changed", None, list(self.sessions))

    async def notify_resources_list_changed(self) -> None:
        await self._broadcast("notifications/resources/list_changed", None, list(self.sessions))

    async def notify_prompts_list_changed(self) -> None:
        await self._broadcast("notifications/prompts/list_changed", None, list(self.sessions))

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to ``uri`` that it changed."""
        subscribed = [s for s in list(self.sessions) if uri in s.subscriptions]
        await self._broadcast("notifications/resources/updated", {"uri": uri}, subscribed)

    def end_subscriptions(self) -> None:
        """End every open ``subscriptions/listen`` gracefully (e.g. before shutting down):
        each listen request is answered with its closing result."""
        for sub in list(self.listeners):
            sub.end()
