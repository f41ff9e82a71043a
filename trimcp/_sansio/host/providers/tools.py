"""A pool's tools as one provider's ``tools`` list: each tool converted, or left out with the reason.

Theory of operation
-------------------
``provider_tools(tools, provider)`` takes the host's tools (anything with ``name``,
``description`` and ``tool``: ``trimcp.host.HostTool``) and converts each one on its own,
so one schema a provider refuses never breaks the list:

1. the name must match the provider's pattern (the pool's names always do:
   ``mcp__server__tool``, ``naming.py``);
2. the input schema is inlined (``inline.py``) and shaped for the provider's dialect
   (``shape.py``); top-level property names the provider refuses are renamed;
3. strict mode's documented size limits are checked on the result;
4. the description is the tool's (already capped by the host), then the notes of what the
   model lost (``notes.py``), cut to the provider's cap with the notes kept whenever the
   cap leaves room for them.

A tool that fails a step is a ``LeftOut`` (its name and a sentence a host can log); the
others are ``ToolSpec``s: the entry sent to the provider, the notes, and the ``Repair``
that maps the model's arguments back (``repair.py``).  ``ProviderTools`` holds both, and
``tools`` is the request's ``tools`` field, ready to send.  The same tools always give the
same list: no clock, no randomness, walk order only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, Literal, Protocol, get_args

import attrs

from ...schema import Tool
from ..naming import cap_description
from . import anthropic, gemini, openai
from .base import ProviderFormat
from .inline import inline_schema
from .notes import Notes
from .repair import Repair
from .shape import shape_arguments

__all__ = [
    "FORMATS",
    "PROVIDERS",
    "LeftOut",
    "Provider",
    "ProviderTools",
    "ToolSpec",
    "convert_tool",
    "provider_format",
    "provider_tools",
]

#: The providers a tool list can be shaped for.
Provider = Literal["anthropic", "openai", "openai-strict", "gemini"]
PROVIDERS: Final[tuple[Provider, ...]] = get_args(Provider)

#: One row per provider: its facts and shapes.
FORMATS: Final[Mapping[str, ProviderFormat]] = {
    "anthropic": anthropic.FORMAT,
    "openai": openai.FORMAT,
    "openai-strict": openai.STRICT_FORMAT,
    "gemini": gemini.FORMAT,
}

#: Marker ending a description cut to a provider's cap.
CUT_MARKER: Final = "… [truncated]"


def provider_format(provider: str) -> ProviderFormat:
    """The format of ``provider`` (``ValueError`` naming the known ones otherwise)."""
    try:
        return FORMATS[provider]
    except KeyError:
        raise ValueError(f"unknown provider {provider!r} (known: {', '.join(PROVIDERS)})") from None


class ToolLike(Protocol):
    """What ``provider_tools`` reads of a tool (``trimcp.host.HostTool`` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    @property
    def tool(self) -> Tool: ...


@attrs.frozen
class ToolSpec:
    """One tool as the provider is shown it."""

    name: str
    #: The tool's entry in the provider's shape (a Gemini function declaration, ...).
    entry: dict[str, Any]
    #: What the model loses (also at the end of the entry's description).
    notes: tuple[str, ...]
    repair: Repair


@attrs.frozen
class LeftOut:
    """A tool the provider cannot be shown, and why (a sentence for a log)."""

    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


@attrs.frozen
class ProviderTools:
    """A tool list for one provider: ``tools`` goes in the request; ``left_out`` is for the log."""

    provider: str
    #: The request's ``tools`` field, ready to send.
    tools: list[dict[str, Any]]
    specs: Mapping[str, ToolSpec]
    left_out: tuple[LeftOut, ...] = ()

    def __len__(self) -> int:
        return len(self.specs)

    def __contains__(self, name: object) -> bool:
        return name in self.specs

    def __iter__(self) -> Iterator[str]:
        return iter(self.specs)

    def arguments(self, name: str, arguments: Any) -> Any:
        """The model's ``arguments`` for tool ``name`` as the server expects them (the
        ``null`` values strict mode added removed, renamed keys back); as they are for a name not listed."""
        spec = self.specs.get(name)
        return spec.repair.apply(arguments) if spec is not None and spec.repair else arguments


def provider_tools(tools: Iterable[ToolLike], provider: Provider | str) -> ProviderTools:
    """``tools`` in the shape of ``provider``; see the module docstring."""
    fmt = provider_format(provider)
    specs: dict[str, ToolSpec] = {}
    left: list[LeftOut] = []
    for tool in tools:
        converted = convert_tool(fmt, tool.name, tool.description, tool.tool.input_schema)
        if isinstance(converted, LeftOut):
            left.append(converted)
        elif converted.name in specs:
            left.append(LeftOut(converted.name, "another tool of the list has the same name"))
        else:
            specs[converted.name] = converted
    entries = [spec.entry for spec in specs.values()]
    return ProviderTools(fmt.name, fmt.tools_field(entries), specs, tuple(left))


def convert_tool(
    fmt: ProviderFormat, name: str, description: str | None, input_schema: Mapping[str, Any]
) -> ToolSpec | LeftOut:
    """One tool for one provider, or why it cannot be offered."""
    if not fmt.name_pattern.fullmatch(name):
        return LeftOut(name, f"the name does not match {fmt.name_pattern.pattern}")
    if not isinstance(input_schema, Mapping):
        return LeftOut(name, "the input schema is not an object")
    inlined = inline_schema(input_schema)
    if inlined.problem is not None:
        return LeftOut(name, inlined.problem)
    shaped = shape_arguments(inlined.schema, fmt.dialect, inlined.notes)
    if shaped.problem is not None or shaped.schema is None:
        return LeftOut(name, shaped.problem or "the input schema cannot be described")
    parameters, renamed = _renamed(shaped.schema, fmt.property_key)
    if fmt.dialect.strict and (over := _over_strict_limits(parameters)) is not None:
        return LeftOut(name, over)
    notes = shaped.notes
    text = _description(description, notes, fmt.description_cap)
    entry = fmt.entry(name, text, parameters)
    return ToolSpec(name, entry, tuple(notes), Repair(shaped.nulls, renamed))


def _description(description: str | None, notes: Notes, cap: int | None) -> str | None:
    """The description, then the notes; cut to ``cap`` keeping the notes while they fit."""
    extra = notes.text(limit=min(cap // 2, 600) if cap else 600)
    if not extra:
        return cap_description(description, cap=cap, marker=CUT_MARKER) if cap and description else description
    if not description:
        return cap_description(extra, cap=cap, marker=CUT_MARKER) if cap else extra
    whole = f"{description}\n\n{extra}"
    if cap is None or len(whole) <= cap:
        return whole
    room = cap - len(extra) - 2
    head = cap_description(description, cap=room, marker=CUT_MARKER) or ""
    return f"{head}\n\n{extra}"


_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_]")


def _renamed(schema: dict[str, Any], pattern: re.Pattern[str] | None) -> tuple[dict[str, Any], dict[str, str]]:
    """``schema`` with its top-level property names valid for ``pattern``; new -> old names."""
    props = schema.get("properties") or {}
    if pattern is None or all(pattern.fullmatch(k) for k in props):
        return schema, {}
    taken = {k for k in props if pattern.fullmatch(k)}
    new_names: dict[str, str] = {}
    for key in props:
        if key in taken:
            new_names[key] = key
            continue
        base = _UNSAFE.sub("_", key)
        if not base or not pattern.fullmatch(base):
            base = f"p_{base}"
        base = base[:56]
        candidate, n = base, 1
        while candidate in taken or not pattern.fullmatch(candidate):
            n += 1
            candidate = f"{base}_{n}"
        taken.add(candidate)
        new_names[key] = candidate
    out = dict(schema)
    out["properties"] = {new_names[k]: v for k, v in props.items()}
    if "required" in schema:
        out["required"] = [new_names.get(k, k) for k in schema["required"]]
    return out, {new: old for old, new in new_names.items() if new != old}


def _over_strict_limits(schema: dict[str, Any]) -> str | None:
    counts = {"properties": 0, "enum": 0, "characters": 0}

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        for name, sub in (node.get("properties") or {}).items():
            counts["properties"] += 1
            counts["characters"] += len(name)
            walk(sub)
        for value in node.get("enum") or ():
            counts["enum"] += 1
            counts["characters"] += len(value) if isinstance(value, str) else 0
        walk(node.get("items"))
        for branch in node.get("anyOf") or ():
            walk(branch)

    walk(schema)
    if counts["properties"] > openai.STRICT_MAX_PROPERTIES:
        return f"strict mode takes at most {openai.STRICT_MAX_PROPERTIES} properties, not {counts['properties']}"
    if counts["enum"] > openai.STRICT_MAX_ENUM_VALUES:
        return f"strict mode takes at most {openai.STRICT_MAX_ENUM_VALUES} enum values, not {counts['enum']}"
    if counts["characters"] > openai.STRICT_MAX_CHARACTERS:
        return f"strict mode takes at most {openai.STRICT_MAX_CHARACTERS} characters of names and values"
    return None
