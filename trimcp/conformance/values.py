"""Invent arguments that satisfy a tool's input schema, for read-only calls.

Only required properties are filled, with the simplest value of their type
(an enum's first member, a declared default or const when there is one).  When
the schema is beyond this (``oneOf``, ``$ref``, nested required objects we
cannot build) the answer is ``None`` and the caller skips the tool rather than
send something invalid and blame the server.
"""

from __future__ import annotations

from typing import Any

_SIMPLE: dict[str, Any] = {"string": "test", "integer": 1, "number": 1, "boolean": False, "array": [], "null": None}


def example_value(schema: Any, depth: int = 0) -> tuple[bool, Any]:
    if not isinstance(schema, dict) or depth > 4:
        return False, None
    for key in ("const", "default"):
        if key in schema:
            return True, schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return True, schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object":
        value = example_arguments(schema, depth + 1)
        return value is not None, value
    if kind == "string" and isinstance(schema.get("minLength"), int) and schema["minLength"] > 4:
        return True, "t" * schema["minLength"]
    if kind in ("integer", "number") and isinstance(schema.get("minimum"), (int, float)):
        return True, schema["minimum"]
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


#: A value of another JSON type than each schema type names (for the validation probe).
_WRONG: dict[str, Any] = {
    "string": 12345, "integer": "not a number", "number": "not a number", "boolean": "not a boolean",
    "array": "not an array", "object": "not an object", "null": "not null",
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
