"""Invent arguments that satisfy a tool's input schema, for the calls of ``trimcp check``.

Theory of operation
-------------------
Spec: ``server/tools`` (``inputSchema`` is a JSON Schema; "Servers MUST validate
all tool inputs").  The harness calls tools with arguments it makes up, so what
it sends must be valid, or a refusal would be blamed on the server.

``example_arguments`` is the minimal set: only required properties, each with
the simplest value of its type (an enum's first member, a declared default or
const, the lower bound of a number, a string of the declared length or format).
``example_argument_sets`` gives up to N distinct valid sets (``--probe-tools
N``): the minimal one first, then one filling the optional properties too, then
one per other value worth trying (other enum members, the other bound of a
number, the longest string allowed, ``true``, a non-empty array, a formatted
string: date-time, uri, email, ...).  Every set is validated against the schema
(``jsonschema`` with its format checker, bounded as ``trimcp._sansio.bounded.schemas``
says: the server wrote the schema) and dropped if it fails or touches a constraint
that could not be checked (a pattern RE2 cannot run): a ``pattern`` or a combinator
we cannot satisfy makes fewer sets, never invalid ones.  When
the schema is beyond this (``oneOf``, ``$ref``, nested required objects we
cannot build) there is no set and the caller skips the tool.

``invalid_arguments`` is the opposite, for ``tools.input-validation``: the
minimal set with one required property of the wrong JSON type.
"""

from __future__ import annotations

import math
from typing import Any

from .._sansio.bounded.budget import WorkBudget

_SIMPLE: dict[str, Any] = {"string": "test", "integer": 1, "number": 1, "boolean": False, "array": [], "null": None}

#: A valid example of each string format a schema may declare (JSON Schema 2020-12, "format").
FORMATS: dict[str, str] = {
    "date-time": "2025-01-01T12:00:00Z",
    "date": "2025-01-01",
    "time": "12:00:00Z",
    "duration": "P1D",
    "email": "test@example.com",
    "idn-email": "test@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri": "https://example.com/",
    "iri-reference": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "regex": "^t",
    "json-pointer": "/test",
    "relative-json-pointer": "0",
    "uri-template": "https://example.com/{id}",
}
_MAX_LENGTH = 1000  # longer maxLength bounds are not worth a string of that size


def _kind(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    low, high = schema.get("minLength"), schema.get("maxLength")
    length = low if isinstance(low, int) and low > 4 else 4
    if isinstance(high, int) and 0 <= high < length:
        length = high
    return "test"[:length] if length <= 4 else "t" * length


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(schema: dict[str, Any], kind: str) -> Any:
    """The lower bound when there is one (a boundary worth a call), else 1 (or the upper bound)."""
    low: Any = schema.get("minimum")
    high: Any = schema.get("maximum")
    low_x: Any = schema.get("exclusiveMinimum")
    if _is_number(low):
        return low
    if _is_number(low_x):
        return math.floor(low_x) + 1 if kind == "integer" else low_x + 0.5
    if _is_number(high) and high < 1:
        return high
    return _SIMPLE[kind]


def example_value(schema: Any, depth: int = 0) -> tuple[bool, Any]:
    if not isinstance(schema, dict) or depth > 4:
        return False, None
    for key in ("const", "default"):
        if key in schema:
            return True, schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return True, schema["enum"][0]
    kind = _kind(schema)
    if kind == "object":
        value = example_arguments(schema, depth + 1)
        return value is not None, value
    if kind == "string":
        return True, _string(schema)
    if kind in ("integer", "number"):
        return True, _number(schema, kind)
    if kind == "array" and isinstance(schema.get("minItems"), int) and schema["minItems"] > 0:
        ok, item = example_value(schema.get("items"), depth + 1)
        return (True, [item] * schema["minItems"]) if ok else (False, None)
    if isinstance(kind, str) and kind in _SIMPLE:
        return True, _SIMPLE[kind]
    return False, None


def example_arguments(schema: Any, depth: int = 0) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        ok, value = example_value(props.get(name), depth)
        if not ok:
            return None
        out[name] = value
    return out


def _variants(schema: Any, depth: int = 0) -> list[tuple[int, Any]]:
    """Values of ``schema`` worth trying besides its example, each with its rank (lower first:
    another enum member or boolean changes what a tool does more than another string does).
    Some may be invalid (bounds, patterns): the caller validates."""
    if not isinstance(schema, dict) or depth > 4 or "const" in schema:
        return []
    if isinstance(schema.get("enum"), list):
        return [(0, v) for v in schema["enum"][1:] + ([] if "default" not in schema else schema["enum"][:1])]
    kind, out = _kind(schema), list[tuple[int, Any]]()
    if kind == "boolean":
        out = [(0, True), (0, False)]
    elif kind in ("integer", "number"):
        out = [(1, schema[k]) for k in ("maximum", "minimum") if _is_number(schema.get(k))]
        out += [(2, v) for v in ([0, 2, 0.5] if kind == "number" else [0, 2])]
    elif kind == "string":
        fmt, high = schema.get("format"), schema.get("maxLength")
        if fmt is not None:
            # Only the format's own example: the format checker may not know it, nothing else is safe.
            out = [(1, FORMATS[fmt])] if isinstance(fmt, str) and fmt in FORMATS else []
        else:
            out = [(3, "t" * high)] if isinstance(high, int) and 0 < high <= _MAX_LENGTH else []
            out.append((4, "trimcp check"))
    elif kind == "array":
        ok, item = example_value(schema.get("items"), depth + 1)
        if ok:
            out = [(2, [item]), (3, [item, item])]
    elif kind == "object":
        full = filled_arguments(schema, depth + 1)
        out = [(2, full)] if full is not None else []
    if isinstance(schema.get("type"), list) and "null" in schema["type"]:
        out.append((3, None))
    return out


def filled_arguments(schema: Any, depth: int = 0) -> dict[str, Any] | None:
    """The minimal arguments plus every optional property we can give a value."""
    out = example_arguments(schema, depth)
    if out is None or not isinstance(schema, dict):
        return out
    for name, prop in (schema.get("properties") or {}).items():
        if name not in out:
            ok, value = example_value(prop, depth)
            if ok:
                out[name] = value
    return out


#: Work units for validating every candidate set of one tool (about 0.2 s): the
#: server wrote the schema, so its cost is bounded (``trimcp._sansio.bounded``).
VALIDATION_UNITS = 200_000


def _validator(schema: dict[str, Any]) -> Any:
    from .._sansio.bounded.schemas import BoundedSchema

    validator = BoundedSchema(schema, formats=True)
    return validator if validator.problem is None else None


def example_argument_sets(schema: Any, count: int) -> list[dict[str, Any]]:
    """Up to ``count`` distinct argument sets valid against ``schema``, the minimal one first."""
    minimal = example_arguments(schema)
    if minimal is None or count < 1 or not isinstance(schema, dict):
        return []
    candidates = [minimal]
    full = filled_arguments(schema)
    if full is not None:
        candidates.append(full)
        ranked = [
            (rank, {**full, name: value})
            for name, prop in (schema.get("properties") or {}).items()
            for rank, value in _variants(prop)
        ]
        candidates.extend(args for _, args in sorted(ranked, key=lambda pair: pair[0]))
    validator = _validator(schema)
    budget = WorkBudget(VALIDATION_UNITS)
    out: list[dict[str, Any]] = []
    for args in candidates:
        if args in out:
            continue
        if validator is not None:
            verdict = validator.validate(args, budget, max_errors=1)
            if verdict.exhausted:
                break  # what is not validated is not sent
            if verdict.errors or verdict.unchecked:
                continue  # invalid, or it touched a constraint we could not check
        out.append(args)
        if len(out) == count:
            break
    return out


#: A value of another JSON type than each schema type names (for the validation probe).
_WRONG: dict[str, Any] = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "not a boolean",
    "array": "not an array",
    "object": "not an object",
    "null": "not null",
}


def invalid_arguments(schema: Any) -> dict[str, Any] | None:
    """Arguments a tool must refuse: valid ones with one required property of the wrong type.

    ``None`` when no required property has a plain ``type`` to contradict (nothing to probe
    without guessing what the schema forbids)."""
    valid = example_arguments(schema)
    if valid is None or not isinstance(schema, dict):
        return None
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        prop = props.get(name)
        if not isinstance(prop, dict) or "enum" in prop or "const" in prop:
            continue
        kind = prop.get("type")
        if isinstance(kind, str) and kind in _WRONG:
            return {**valid, name: _WRONG[kind]}
    return None
