"""The server side of each MCP method: params in, result dict (or ``McpError``) out.

Theory of operation
-------------------
``request_handlers(session)`` returns the map the ``SessionDriver`` dispatches
on.  Each handler validates the params the spec requires (a missing or
mistyped one is -32602), finds the registered entry, calls the user function
with a ``Context``, completes the result (``content``), and finally trims it
to the negotiated revision (``_compat``).  The rules that differ from "raise
and let the driver answer with an error":

* ``tools/call``: an unknown tool is a protocol error (-32602), but anything
  that goes wrong *in* the tool (bad arguments, an exception, structured
  output that breaks its ``outputSchema``) is a result with ``isError: true``
  so that the model sees it (spec: Tools / Error Handling; 2025-11-25 also
  moved argument validation errors there).  ``trio.Cancelled`` is not an
  ``Exception`` and propagates: that is how a cancelled call stops;
* ``resources/read`` of an unknown URI (or ``ResourceNotFound`` from a reader)
  is -32002 in the handshake era and -32602 from 2026-07-28, with the URI in
  ``data``; a URI that fits a resource template but whose variable decodes to
  a path, ``..`` or a control character (``_uritemplate``) is -32602 before
  any handler runs, unless a later template takes it safely;
* ``completion/complete`` caps ``values`` at 100 and reports ``total`` and
  ``hasMore``; an argument with no registered completer completes to nothing.

Stateless era (a request with a ``_meta`` envelope): before the handler of a
``tools/call``, ``prompts/get`` or ``resources/read`` runs, its
``inputResponses`` and ``requestState`` are read into an ``InputLedger``
(a bad state is -32602 at once); a handler stopped for input
(``inputs._Suspend``, possibly inside a nursery's exception group) is
answered with an ``InputRequiredResult`` or a -32021 error.  Complete
results of the list methods and ``resources/read`` get the cache hints
``ttlMs``/``cacheScope`` configured on the ``Server`` (spec:
server/utilities/caching), ``ttlMs`` 0 for an MRTR retry.
``subscriptions/listen`` is in ``subscriptions.py``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from .._errors import McpError
from .._sansio import apps, extensions
from .._sansio import jsonrpc as rpc
from .._sansio.connection import stateless as sl
from .._sansio.revisions import Era, get_revision
from .._trio.driver import RequestContext
from . import _compat as compat
from . import content
from ._errors import ResourceNotFound
from ._pagination import paginate
from ._registry import Handler, call
from ._uritemplate import UnsafeVariable
from ._validate import validate
from .context import Context
from .definition import Server
from .inputs import InputLedger, find_suspension
from .server_session import ServerSession
from .subscriptions import listen

logger = logging.getLogger("trimcp.server")

#: Spec: a CompleteResult carries at most 100 values.
MAX_COMPLETION_VALUES: Final = 100

Method = Callable[[Server, Context, dict[str, Any]], Awaitable[dict[str, Any]]]


def _invalid(message: str, data: Any = None) -> McpError:
    return McpError(rpc.INVALID_PARAMS, message, data)


def _string_param(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise _invalid(f"params.{key} must be a string")
    return value


def _page(kind: str, key: str, items: list[dict[str, Any]], params: dict[str, Any], size: int | None) -> dict[str, Any]:
    page, next_cursor = paginate(kind, items, params, size)
    result: dict[str, Any] = {key: list(page)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


# ---------------------------------------------------------------- tools


async def list_tools(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    rev = ctx.protocol_version
    views = apps.declared(ctx.client_capabilities)
    items = [
        compat.tool(_with_view(t.definition, t.ui) if views and t.ui else t.definition, rev)
        for t in server.tools.values()
    ]
    return _page("tools", "tools", items, params, server.page_size)


def _with_view(definition: dict[str, Any], ui: dict[str, Any]) -> dict[str, Any]:
    """A tool's definition with its MCP Apps link, for a client that declared the extension."""
    return {**definition, "_meta": {**(definition.get("_meta") or {}), "ui": ui}}


async def call_tool(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = _string_param(params, "name")
    tool = server.tools.get(name)
    if tool is None:
        raise _invalid(f"Unknown tool: {name}", {"name": name})
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _invalid("params.arguments must be an object")
    if tool.task != "never" and ctx.is_stateless:
        if extensions.declares(ctx.client_capabilities, extensions.TASKS.id):

            async def as_task() -> dict[str, Any]:
                result = await _run_tool(
                    ctx, name, tool.fn, arguments, tool.input_schema, tool.output_schema, protocol_errors=True
                )
                return compat.call_tool_result(result, ctx.protocol_version)

            return await server.tasks.call(ctx.attach_task, as_task, at_once=tool.task_start == "at_once")
        if tool.task == "required":
            refused = extensions.missing_extension(extensions.TASKS.id)
            raise McpError(refused.code, refused.message, refused.data)
    result = await _run_tool(ctx, name, tool.fn, arguments, tool.input_schema, tool.output_schema)
    return compat.call_tool_result(result, ctx.protocol_version)


async def _run_tool(
    ctx: Context,
    name: str,
    fn: Handler,
    arguments: dict[str, Any],
    input_schema: dict[str, Any],
    output_schema: dict[str, Any] | None,
    *,
    protocol_errors: bool = False,
) -> dict[str, Any]:
    """The tool's result; what goes wrong in the tool is an ``isError`` result, except an
    ``McpError`` when ``protocol_errors`` (a task: it fails with that JSON-RPC error)."""
    problems = await validate(arguments, input_schema)
    if problems:
        return content.error_result(f"Invalid arguments for tool {name}: " + "; ".join(problems))
    try:
        value = await call(fn, ctx, **arguments)
        result = content.tool_result(value, structured=output_schema is not None)
    except Exception as exc:
        if protocol_errors and isinstance(exc, McpError):
            raise
        logger.info("tool %s failed", name, exc_info=True)
        return content.error_result(_describe(exc))
    if output_schema is not None and not result.get("isError"):
        if "structuredContent" not in result:
            return content.error_result(f"tool {name} declares an outputSchema but returned no structured content")
        problems = await validate(result["structuredContent"], output_schema, trusted=True)
        if problems:
            return content.error_result(
                f"tool {name} returned output that breaks its outputSchema: " + "; ".join(problems)
            )
    return result


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# ---------------------------------------------------------------- tasks (ext-tasks)


async def get_task(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return await server.tasks.get(params)


async def update_task(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return await server.tasks.update(params)


async def cancel_task(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return await server.tasks.cancel(params)


# ---------------------------------------------------------------- resources


async def list_resources(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    rev = ctx.protocol_version
    items = [compat.resource(r.definition, rev) for r in server.resources.values() if r.listed]
    return _page("resources", "resources", items, params, server.page_size)


async def list_resource_templates(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    rev = ctx.protocol_version
    items = [compat.resource_template(t.definition, rev) for t in server.resource_templates.values()]
    return _page("templates", "resourceTemplates", items, params, server.page_size)


def _not_found(ctx: Context, uri: str, message: str = "Resource not found") -> McpError:
    stateless = get_revision(ctx.protocol_version).era is Era.STATELESS
    code = rpc.INVALID_PARAMS if stateless else rpc.RESOURCE_NOT_FOUND_LEGACY
    return McpError(code, message, {"uri": uri})


async def read_resource(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    uri = _string_param(params, "uri")
    try:
        contents = await _read(server, ctx, uri)
    except ResourceNotFound as exc:
        raise _not_found(ctx, exc.uri, exc.message) from None
    if not contents:
        # An empty ``contents`` is not a way to say "not found" (SEP-2164).
        raise _not_found(ctx, uri)
    return {"contents": compat.read_result(contents, ctx.protocol_version)}


async def _read(server: Server, ctx: Context, uri: str) -> list[dict[str, Any]]:
    static = server.resources.get(uri)
    if static is not None:
        return content.resource_contents(uri, await call(static.fn, ctx), static.mime_type)
    refused: UnsafeVariable | None = None
    for template in server.resource_templates.values():
        try:
            variables = template.template.match(uri)
        except UnsafeVariable as exc:
            refused = refused or exc  # a later template may still take the URI safely
            continue
        if variables is not None:
            value = await call(template.fn, ctx, **variables)
            return content.resource_contents(uri, value, template.mime_type)
    if refused is not None:
        raise _invalid(f"Refused resource URI: {refused}", {"variable": refused.variable})
    raise ResourceNotFound(uri)


async def subscribe(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    await ctx.session.subscribe(_string_param(params, "uri"))
    return {}


async def unsubscribe(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    await ctx.session.unsubscribe(_string_param(params, "uri"))
    return {}


# ---------------------------------------------------------------- prompts


async def list_prompts(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    rev = ctx.protocol_version
    items = [compat.prompt(p.definition, rev) for p in server.prompts.values()]
    return _page("prompts", "prompts", items, params, server.page_size)


def _accepts_any_keyword(fn: Handler) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())


async def get_prompt(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = _string_param(params, "name")
    prompt = server.prompts.get(name)
    if prompt is None:
        raise _invalid(f"Unknown prompt: {name}", {"name": name})
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise _invalid("params.arguments must map argument names to strings")
    missing = [a["name"] for a in prompt.arguments if a.get("required") and a["name"] not in arguments]
    if missing:
        raise _invalid(f"prompt {name} is missing required arguments: {', '.join(missing)}")
    if not _accepts_any_keyword(prompt.fn):
        # Extra arguments a client sends are ignored rather than crashing the prompt function.
        accepted = set(inspect.signature(prompt.fn).parameters)
        arguments = {k: v for k, v in arguments.items() if k in accepted}
    value = await call(prompt.fn, ctx, **arguments)
    result = content.prompt_result(value, prompt.definition.get("description"))
    result["messages"] = compat.prompt_messages(result["messages"], ctx.protocol_version)
    return result


# ---------------------------------------------------------------- completion


def _completion_key(server: Server, params: dict[str, Any]) -> tuple[str, str, str]:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise _invalid("completion/complete needs params.ref and params.argument objects")
    arg_name = argument.get("name")
    if not isinstance(arg_name, str) or not isinstance(argument.get("value"), str):
        raise _invalid("params.argument needs string name and value")
    kind = ref.get("type")
    if kind == "ref/prompt":
        target = ref.get("name")
        if not isinstance(target, str) or target not in server.prompts:
            raise _invalid(f"Unknown prompt: {target}")
    elif kind == "ref/resource":
        target = ref.get("uri")
        known = target in server.resource_templates or target in server.resources
        if not isinstance(target, str) or not known:
            raise _invalid(f"Unknown resource or template: {target}")
    else:
        raise _invalid(f"unknown ref.type {kind!r}")
    return kind, target, arg_name


async def complete(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    key = _completion_key(server, params)
    completer = server.completions.get(key)
    if completer is None:
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    context = params.get("context")
    resolved = context.get("arguments") if isinstance(context, dict) else None
    value = await call(completer, ctx, params["argument"]["value"], dict(resolved or {}))
    if isinstance(value, dict):
        return {"completion": value}
    values = [str(v) for v in value]
    return {
        "completion": {
            "values": values[:MAX_COMPLETION_VALUES],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETION_VALUES,
        }
    }


# ---------------------------------------------------------------- wiring


async def subscriptions_listen(server: Server, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """``subscriptions/listen``: held open by ``subscriptions.listen`` in the server's ``listeners``."""
    wanted = params.get("notifications")
    if (
        isinstance(wanted, dict)
        and "taskIds" in wanted
        and not extensions.declares(ctx.client_capabilities, extensions.TASKS.id)
    ):
        # ext-tasks: asking for task status notifications needs the extension declared (MUST).
        # (Declared, the taskIds are not agreed to: trimcp sends no notifications/tasks.)
        refused = extensions.missing_extension(extensions.TASKS.id)
        raise McpError(refused.code, refused.message, refused.data)
    return await listen(server.listeners, ctx.session.driver, ctx.request_id, params)


METHODS: Final[dict[str, Method]] = {
    "tools/list": list_tools,
    "tools/call": call_tool,
    "resources/list": list_resources,
    "resources/templates/list": list_resource_templates,
    "resources/read": read_resource,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
    "prompts/list": list_prompts,
    "prompts/get": get_prompt,
    "completion/complete": complete,
    "subscriptions/listen": subscriptions_listen,
    # ext-tasks: admitted only where we advertise the extension (``_sansio.extensions``)
    "tasks/get": get_task,
    "tasks/update": update_task,
    "tasks/cancel": cancel_task,
}
_CACHEABLE_LISTS: Final = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})


def _add_cache_hints(server: Server, method: str, result: dict[str, Any], ledger: InputLedger | None) -> None:
    if method in _CACHEABLE_LISTS:
        ttl, scope = server.list_ttl_ms, server.list_cache_scope
    elif method == "resources/read":
        ttl, scope = server.read_ttl_ms, server.read_cache_scope
        if ledger is not None and ledger.is_retry:
            ttl = 0  # spec (caching): an MRTR retry's result depends on inputs outside the cache key
    else:
        return
    result.setdefault("ttlMs", ttl)
    result.setdefault("cacheScope", scope)


def request_handlers(session: ServerSession) -> dict[str, Callable[[RequestContext], Awaitable[dict[str, Any]]]]:
    """The driver's handler map for one session."""
    server = session.server

    def bind(name: str, method: Method) -> Callable[[RequestContext], Awaitable[dict[str, Any]]]:
        async def handle(request: RequestContext) -> dict[str, Any]:
            ledger = None
            if request.envelope is not None and name in sl.MRTR_METHODS:
                hook = server.request_state_principal
                principal = hook(Context(session, request)) if hook is not None else None
                ledger = InputLedger(server.request_state, name, request.params, principal)
            ctx = Context(session, request, ledger)
            if request.envelope is not None:
                refused = extensions.refuse_method(name, ctx.protocol_version, ctx.client_capabilities)
                if refused is not None:
                    raise McpError(refused.code, refused.message, refused.data)
            try:
                result = await method(server, ctx, request.params)
            except BaseException as exc:
                suspended = find_suspension(exc)
                if suspended is None:
                    raise
                raise suspended.answer from None
            if request.envelope is not None:
                _add_cache_hints(server, name, result, ledger)
            return result

        return handle

    return {name: bind(name, method) for name, method in METHODS.items()}
