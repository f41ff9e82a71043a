"""What a server offers: registered tools, resources, templates, prompts, completions.

Theory of operation
-------------------
Each registration becomes an entry holding the user's function and the
object's *definition*: its newest wire shape (what ``tools/list`` etc. send to
a 2025-11-25 client; ``_compat`` trims it for older ones).  Entries live in
insertion-ordered dicts, so list order, and therefore pagination, is stable.

When a tool gives no ``input_schema`` we derive a plain JSON Schema from the
function's signature: every parameter after the context becomes a property
typed from its annotation (``str``, ``int``, ``float``, ``bool``, ``list[X]``,
``dict``, ``Literal[...]``, ``X | None``), and parameters without a default
are ``required``.  Prompt arguments are derived the same way (prompt
arguments are always strings on the wire).  Functions may be ``async`` or
plain; ``call`` awaits the result only when it is awaitable.
"""

from __future__ import annotations

import collections.abc as cabc
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

import attrs

from .._sansio import apps
from ._uritemplate import UriTemplate

Handler = Callable[..., Any]

_SIMPLE_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
    type(None): "null",
}
_NAMES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}


async def call(fn: Handler, *args: Any, **kwargs: Any) -> Any:
    result = fn(*args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result


def _parameters(fn: Handler) -> list[inspect.Parameter]:
    """The parameters that carry arguments: all but the leading context, no */**."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _hints(fn: Handler) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:
        return {}


def type_schema(annotation: Any) -> dict[str, Any]:
    """A JSON Schema for one Python annotation (``{}`` when it can't say)."""
    if isinstance(annotation, str):
        annotation = _NAMES.get(annotation, inspect.Parameter.empty)
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation in _SIMPLE_TYPES:
        return {"type": _SIMPLE_TYPES[annotation]}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        members = [type_schema(a) for a in args]
        if all(set(m) == {"type"} for m in members):
            return {"type": [m["type"] for m in members]}
        return {"anyOf": members}
    if origin in (list, tuple, set, frozenset, cabc.Sequence):
        item = type_schema(args[0]) if args else {}
        return {"type": "array", **({"items": item} if item else {})}
    if origin in (dict, cabc.Mapping):
        return {"type": "object"}
    return {}


def schema_from_signature(fn: Handler) -> dict[str, Any]:
    hints = _hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in _parameters(fn):
        prop = type_schema(hints.get(p.name, p.annotation))
        if p.default is p.empty:
            required.append(p.name)
        elif p.default is None or isinstance(p.default, (str, int, float, bool)):
            prop["default"] = p.default
        properties[p.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def prompt_arguments_from_signature(fn: Handler) -> list[dict[str, Any]]:
    return [{"name": p.name, "required": p.default is p.empty} for p in _parameters(fn)]


def docstring_summary(fn: Handler) -> str | None:
    doc = inspect.getdoc(fn)
    return doc.split("\n\n", 1)[0].strip() or None if doc else None


def _optional(out: dict[str, Any], **fields: Any) -> dict[str, Any]:
    out.update({k: v for k, v in fields.items() if v is not None})
    return out


#: How a tool takes part in ext-tasks: never as a task, as one when the request declared the
#: extension, or only as one (-32021 to a request that did not declare it).
TaskSupport = Literal["never", "optional", "required"]
#: When a task-capable tool becomes a task: before it runs, or when it calls
#: ``ctx.start_task()`` (questions asked before that go through multi-round-trip requests).
TaskStart = Literal["at_once", "explicit"]


@attrs.define
class ToolEntry:
    name: str
    fn: Handler
    definition: dict[str, Any]
    #: The MCP Apps ``_meta.ui`` link, listed only to clients that declared the extension.
    ui: dict[str, Any] | None = None
    task: TaskSupport = "never"
    task_start: TaskStart = "at_once"

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self.definition["inputSchema"]
        return schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.definition.get("outputSchema")


@attrs.define
class ResourceEntry:
    uri: str
    fn: Handler
    definition: dict[str, Any]
    #: False: served by resources/read, left out of resources/list.
    listed: bool = True

    @property
    def mime_type(self) -> str | None:
        return self.definition.get("mimeType")


@attrs.define
class TemplateEntry:
    template: UriTemplate
    fn: Handler
    definition: dict[str, Any]

    @property
    def mime_type(self) -> str | None:
        return self.definition.get("mimeType")


@attrs.define
class PromptEntry:
    name: str
    fn: Handler
    definition: dict[str, Any]

    @property
    def arguments(self) -> list[dict[str, Any]]:
        args: list[dict[str, Any]] = self.definition.get("arguments", [])
        return args


def make_tool(
    fn: Handler,
    name: str | None,
    *,
    title: str | None,
    description: str | None,
    input_schema: dict[str, Any] | None,
    output_schema: dict[str, Any] | None,
    annotations: dict[str, Any] | None,
    icons: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    ui: str | dict[str, Any] | None = None,
    task: TaskSupport = "never",
    task_start: TaskStart = "at_once",
) -> ToolEntry:
    name = name or fn.__name__
    if task not in ("never", "optional", "required") or task_start not in ("at_once", "explicit"):
        raise ValueError(f"tool {name!r}: task must be never/optional/required, task_start at_once/explicit")
    schema = input_schema if input_schema is not None else schema_from_signature(fn)
    if schema.get("type") != "object":
        raise ValueError(f"tool {name!r}: inputSchema must have type 'object' (spec: Tool.inputSchema)")
    if output_schema is not None and output_schema.get("type") != "object":
        raise ValueError(f"tool {name!r}: outputSchema must have type 'object' (spec: Tool.outputSchema)")
    definition = _optional(
        {"name": name},
        title=title,
        description=description or docstring_summary(fn),
    )
    definition["inputSchema"] = schema
    _optional(definition, outputSchema=output_schema, annotations=annotations, icons=icons, _meta=meta)
    link = {"resourceUri": ui} if isinstance(ui, str) else ui
    if link is not None:
        checked = apps.tool_link({"_meta": {"ui": link}})
        if checked is None or checked.problems or checked.resource_uri is None:
            why = "; ".join(checked.problems) if checked is not None else ""
            raise ValueError(f"tool {name!r}: ui must be a ui:// URI or a _meta.ui object ({why or 'no resourceUri'})")
    return ToolEntry(name, fn, definition, ui=None if link is None else dict(link), task=task, task_start=task_start)


def make_resource(
    fn: Handler,
    uri: str,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    size: int | None,
    annotations: dict[str, Any] | None,
) -> ResourceEntry:
    definition = _optional(
        {"uri": uri, "name": name or fn.__name__},
        title=title,
        description=description or docstring_summary(fn),
        mimeType=mime_type,
        size=size,
        annotations=annotations,
    )
    return ResourceEntry(uri, fn, definition)


def make_template(
    fn: Handler,
    uri_template: str,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    annotations: dict[str, Any] | None,
) -> TemplateEntry:
    template = UriTemplate(uri_template)
    definition = _optional(
        {"uriTemplate": uri_template, "name": name or fn.__name__},
        title=title,
        description=description or docstring_summary(fn),
        mimeType=mime_type,
        annotations=annotations,
    )
    return TemplateEntry(template, fn, definition)


def make_prompt(
    fn: Handler,
    name: str | None,
    *,
    title: str | None,
    description: str | None,
    arguments: list[dict[str, Any]] | None,
) -> PromptEntry:
    args = arguments if arguments is not None else prompt_arguments_from_signature(fn)
    for arg in args:
        if not isinstance(arg.get("name"), str):
            raise TypeError(f"prompt {name or fn.__name__!r}: every argument needs a string 'name'")
    definition = _optional(
        {"name": name or fn.__name__},
        title=title,
        description=description or docstring_summary(fn),
    )
    if args:
        definition["arguments"] = args
    return PromptEntry(definition["name"], fn, definition)
