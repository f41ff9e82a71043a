"""The wire rules every MCP object follows: names, JSON types, and the error for breaking them.

Theory of operation
-------------------
All MCP revisions (2024-11-05 onwards) write objects as JSON with camelCase
member names; ``_meta`` is the one member with a leading underscore.  Attributes
of our classes are snake_case; ``wire_name`` maps one to the other and a field
can override it with ``metadata={WIRE_NAME: "..."}``.  A field with a default is
optional on the wire (absent = ``None``) unless its metadata sets
``WIRE_REQUIRED`` (discriminators such as ``type: Literal["text"] = "text"``).

``SchemaError`` carries the JSON path of a problem as a list that the hooks
fill in from the inside out while the exception unwinds (``path.insert(0, …)``),
so the happy path pays nothing for error reporting.

The type helpers below classify the annotations our classes use: JSON
primitives (``str``, ``int``, ``float``, ``bool``), ``Any``, string
``Literal``s, ``list[X]``, ``dict[str, X]``, unions, and attrs classes.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, Union, get_args, get_origin

import attrs

from ..._errors import TrimcpError

__all__ = [
    "EXTRA",
    "NONE_TYPE",
    "PRIMITIVE_OK",
    "WIRE_NAME",
    "WIRE_REQUIRED",
    "Path",
    "SchemaError",
    "StructureHook",
    "UnstructureHook",
    "bad",
    "describe",
    "fast_types",
    "is_dict",
    "is_list",
    "is_literal",
    "is_union",
    "json_type",
    "needs_unstructure",
    "strip_none",
    "wire_name",
]

#: Field metadata key: the member name on the wire, when camelCase of the attribute is wrong.
WIRE_NAME: Final = "trimcp.wire_name"
#: Field metadata key: required on the wire although the attribute has a default.
WIRE_REQUIRED: Final = "trimcp.wire_required"
#: The attribute that collects unknown members.
EXTRA: Final = "extra"

#: Attribute names whose wire name is not their camelCase.
_SPECIAL_NAMES: Final[Mapping[str, str]] = {"meta": "_meta"}

Path = list[str | int]
StructureHook = Callable[[Any, Any], Any]
UnstructureHook = Callable[[Any], Any]


class SchemaError(TrimcpError, ValueError):
    """A wire value does not match the MCP schema.

    ``problem`` says what is wrong, ``path`` where (member names and array
    indices from the top of the value given to ``from_wire``).  ``str(error)``
    reads like ``tools[2].inputSchema: expected object, got string``.
    """

    def __init__(self, problem: str, path: Path | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.path: Path = path if path is not None else []

    @property
    def location(self) -> str:
        """The JSON path of the problem, e.g. ``tools[2].inputSchema`` ('' for the top)."""
        out: list[str] = []
        for seg in self.path:
            if isinstance(seg, int):
                out.append(f"[{seg}]")
            elif seg.isidentifier() or (seg[:1] == "_" and seg[1:].isidentifier()):
                out.append(f".{seg}" if out else seg)
            else:
                out.append(f"[{json.dumps(seg, ensure_ascii=False)}]")
        return "".join(out)

    def __str__(self) -> str:
        loc = self.location
        return f"{loc}: {self.problem}" if loc else self.problem


_JSON_TYPE_NAMES: Final[Mapping[type, str]] = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def json_type(value: object) -> str:
    """The JSON name of a Python value's type (``null``, ``string``, ``object`` …)."""
    name = _JSON_TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    for py, js in _JSON_TYPE_NAMES.items():
        if isinstance(value, py):
            return js
    return type(value).__name__


def bad(expected: str, value: object) -> SchemaError:
    return SchemaError(f"expected {expected}, got {json_type(value)}")


def wire_name(attribute: str) -> str:
    """The default wire name of an attribute: camelCase, and ``meta`` -> ``_meta``."""
    special = _SPECIAL_NAMES.get(attribute)
    if special is not None:
        return special
    head, *rest = attribute.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# --------------------------------------------------------------------------- annotations

NONE_TYPE: Final = type(None)
_UNION_ORIGINS: Final = (Union, types.UnionType)

#: Declared primitive type -> exact runtime types accepted as they are.
PRIMITIVE_OK: Final[Mapping[Any, frozenset[type]]] = {
    str: frozenset({str}),
    int: frozenset({int}),
    float: frozenset({int, float}),
    bool: frozenset({bool}),
}
_PRIMITIVE_NAMES: Final[Mapping[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    NONE_TYPE: "null",
}


def is_union(tp: Any) -> bool:
    return get_origin(tp) in _UNION_ORIGINS


def is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def is_list(tp: Any) -> bool:
    return get_origin(tp) is list


def is_dict(tp: Any) -> bool:
    return get_origin(tp) is dict


def strip_none(tp: Any) -> Any:
    """``X | None`` -> ``X`` (a union of the rest when there are several)."""
    if not is_union(tp):
        return tp
    args = tuple(a for a in get_args(tp) if a is not NONE_TYPE)
    if len(args) == len(get_args(tp)):
        return tp
    return args[0] if len(args) == 1 else Union[args]  # noqa: UP007 - built at run time


def _is_opaque_object(tp: Any) -> bool:
    """``dict[str, Any]``: an object we check but never look inside."""
    return is_dict(tp) and get_args(tp)[1:] == (Any,)


def describe(tp: Any) -> str:
    """What a value of declared type ``tp`` looks like in JSON, for error messages.

    Never called with ``Any``: hooks for ``Any``, ``list[Any]``, ``dict[str, Any]``
    and unions with an ``Any`` member accept every value and describe nothing.
    """
    if tp in _PRIMITIVE_NAMES:
        return _PRIMITIVE_NAMES[tp]
    if is_literal(tp):
        return "one of " + ", ".join(json.dumps(a) for a in get_args(tp))
    if is_list(tp):
        return "array"
    if is_dict(tp) or attrs.has(tp):
        return "object"
    if is_union(tp):
        seen: list[str] = []
        for arg in get_args(tp):
            d = describe(arg)
            if d not in seen:
                seen.append(d)
        return " or ".join(seen)
    return getattr(tp, "__name__", repr(tp))


def fast_types(tp: Any) -> frozenset[type]:
    """Exact runtime types a value declared as ``tp`` may have to be taken as is, unchecked."""
    ok = PRIMITIVE_OK.get(tp)
    if ok is not None:
        return ok
    if _is_opaque_object(tp):
        return frozenset({dict})
    return frozenset()


def needs_unstructure(tp: Any) -> bool:
    """Whether a value declared as ``tp`` can hold attrs objects (so is not JSON as it is)."""
    if attrs.has(tp):
        return True
    if is_list(tp) or is_dict(tp) or is_union(tp):
        return any(needs_unstructure(a) for a in get_args(tp))
    return False
