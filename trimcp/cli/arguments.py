"""Tool and prompt arguments from the command line, converted by the tool's ``inputSchema``.

Theory of operation
-------------------
``--tool-arg K=V`` gives one argument as text; the tool's ``inputSchema`` (from
``tools/list``) says what the text means, as the MCP Inspector and fastmcp do:

* ``string``: the text as it is (``42`` stays ``"42"``, a git short SHA stays a string);
* ``integer``, ``number``: a JSON number (an integer rejects ``1.5``; NaN and infinities
  are refused: JSON has none); ``boolean``: ``true`` or ``false``, in any case;
* ``object``, ``array``: JSON text of that shape; ``null``: ``null``;
* a list of types (``["integer", "null"]``) or ``anyOf``/``oneOf`` branches: the first of
  null, boolean, integer, number, object, array, string that accepts the text;
* no declared type (or a property the schema does not name and ``additionalProperties``
  does not type): JSON if the text parses as JSON, else the text.

``--args-json '{...}'`` gives all arguments at once as one JSON object; ``--tool-arg``
values are merged over it.  Prompt arguments are strings by the spec (``GetPromptRequest``
``arguments: {[key: string]: string}``), so ``--prompt-arg`` values stay text, and an
``--args-json`` value that is not a string is refused.

A value that cannot be converted is a :class:`~trimcp.cli.command_line.UsageError` naming the
parameter and its type (``--tool-arg count=abc: "count" is an integer``); values quoted
back in messages are shown as JSON (``true``), never as Python (``True``).

An argument the tool's schema does not name is refused before the call
(``refuse_unknown``), with the closest name it does: a typo would otherwise be sent, and
most servers ignore what they do not know.  A schema that names no properties, or lets
others in (``additionalProperties`` other than ``false``, ``patternProperties``), takes
any name; a prompt takes the arguments it declares.  ``--force`` sends them anyway.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .command_line import UsageError
from .parser import closest

#: The order in which a property allowing several types tries them: the most specific
#: reading first, the string (which accepts anything) last.
_ORDER = ("null", "boolean", "integer", "number", "object", "array", "string")
_NAMES = {
    "null": "null",
    "boolean": "a boolean (true or false)",
    "integer": "an integer",
    "number": "a number",
    "object": "a JSON object",
    "array": "a JSON array",
    "string": "a string",
}


class _Rejected(Exception):
    """A reader's verdict that the text is not of its type; the message says why."""


def parse_pairs(pairs: Sequence[str], option: str) -> dict[str, str]:
    """``["k=v", ...]`` -> ``{"k": "v"}``, split at the first ``=``; checked before connecting."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} expects K=V, got {pair!r}")
        out[key] = value
    return out


def parse_args_json(text: str | None) -> dict[str, Any]:
    """The ``--args-json`` object (``{}`` when not given)."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--args-json is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"--args-json must be a JSON object, got {_show(value)}")
    return value


def tool_arguments(
    base: Mapping[str, Any], raw: Mapping[str, str], input_schema: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``base`` (from ``--args-json``) with each ``--tool-arg`` converted and merged over it."""
    out = dict(base)
    for name, text in raw.items():
        out[name] = convert(name, text, property_schema(input_schema, name))
    return out


def declared_names(input_schema: Mapping[str, Any] | None) -> list[str] | None:
    """The argument names a tool's ``inputSchema`` allows, or ``None`` when it allows any."""
    if not isinstance(input_schema, Mapping):
        return None
    properties = input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    extra = input_schema.get("additionalProperties", False)
    if extra is not False or "patternProperties" in input_schema:
        return None
    return [str(name) for name in properties]


def refuse_unknown(what: str, given: Sequence[str], known: Sequence[str] | None) -> None:
    """A usage error for the first of ``given`` that ``known`` (``None``: anything goes)
    does not hold, naming the closest and the ones there are; ``what`` is ``tool "echo"``."""
    if known is None:
        return
    for name in given:
        if name not in known:
            if not known:
                raise UsageError(f'{what} takes no arguments, got "{name}"; --force sends it anyway')
            near = closest(name, known)
            hint = f' (did you mean "{near}"?)' if near is not None else ""
            listed = ", ".join(known) if len(known) <= 12 else ", ".join(known[:12]) + ", ..."
            raise UsageError(f'{what} has no argument "{name}"{hint}; its arguments: {listed}; --force sends it anyway')


def prompt_arguments(base: Mapping[str, Any], raw: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in base.items():
        if not isinstance(value, str):
            raise UsageError(f'--args-json: prompt argument "{name}" is a string, got {_show(value)}')
        out[name] = value
    out.update(raw)
    return out


def property_schema(input_schema: Mapping[str, Any] | None, name: str) -> Mapping[str, Any]:
    """The schema of one property; ``{}`` (anything) when the tool's schema does not say."""
    if not isinstance(input_schema, Mapping):
        return {}
    properties = input_schema.get("properties")
    if isinstance(properties, Mapping) and isinstance(properties.get(name), Mapping):
        found: Mapping[str, Any] = properties[name]
        return found
    extra = input_schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else {}


def declared_types(schema: Mapping[str, Any]) -> list[str] | None:
    """The JSON types a schema allows, or ``None`` when it allows anything (or does not say)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        kinds = [kind]
    elif isinstance(kind, list):
        kinds = [k for k in kind if isinstance(k, str)]
    else:
        kinds = []
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if not isinstance(branches, list):
                continue
            for branch in branches:
                sub = declared_types(branch) if isinstance(branch, Mapping) else None
                if sub is None:
                    return None  # one branch takes anything: so does the property
                kinds.extend(sub)
    known = [k for k in _ORDER if k in kinds]
    return known or None


def convert(name: str, text: str, schema: Mapping[str, Any], option: str = "--tool-arg") -> Any:
    """One ``K=V`` value, read as the property's schema says (see the module docstring)."""
    kinds = declared_types(schema)
    if kinds is None:
        try:
            return json.loads(text)
        except ValueError:
            return text
    reason = ""
    for kind in kinds:
        try:
            return _READERS[kind](text)
        except _Rejected as exc:
            reason = str(exc)
    wanted = " or ".join(_NAMES[k] for k in kinds)
    detail = f" ({reason})" if reason and len(kinds) == 1 and kinds[0] in ("object", "array") else ""
    raise UsageError(f'{option} {name}={text}: "{name}" is {wanted}{detail}')


def _show(value: Any) -> str:
    """A value as the user would write it: JSON, never Python's repr."""
    return json.dumps(value, ensure_ascii=False)


def _number(text: str, *, integer: bool) -> int | float:
    try:
        value = json.loads(text)
    except ValueError:
        raise _Rejected("not a number") from None
    # bool is an int in Python; a non-finite float is no JSON number.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Rejected(f"got {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise _Rejected("not a finite number")
    if integer and not isinstance(value, int):
        raise _Rejected(f"got {_show(value)}")
    return value


def _boolean(text: str) -> bool:
    folded = text.strip().lower()
    if folded in ("true", "false"):
        return folded == "true"
    raise _Rejected("not true or false")


def _null(text: str) -> None:
    if text.strip() != "null":
        raise _Rejected("not null")


def _json_of(kind: type[Any], label: str) -> Callable[[str], Any]:
    def read(text: str) -> Any:
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise _Rejected(f"invalid JSON: {exc}") from None
        if not isinstance(value, kind):
            raise _Rejected(f"expected a JSON {label}, got {_show(value)}")
        return value

    return read


_READERS: dict[str, Callable[[str], Any]] = {
    "null": _null,
    "boolean": _boolean,
    "integer": lambda text: _number(text, integer=True),
    "number": lambda text: _number(text, integer=False),
    "object": _json_of(dict, "object"),
    "array": _json_of(list, "array"),
    "string": lambda text: text,
}

__all__ = [
    "convert",
    "declared_names",
    "declared_types",
    "parse_args_json",
    "parse_pairs",
    "prompt_arguments",
    "property_schema",
    "refuse_unknown",
    "tool_arguments",
]
