"""Checking tool arguments (and structured output) against a JSON Schema.

Theory of operation
-------------------
A tool declares ``inputSchema`` (and, from 2025-06-18, ``outputSchema``); the
server checks what arrives before calling the tool and what the tool returns
before sending it.  ``jsonschema`` is only a test dependency of trimcp, so the
runtime must not need it: when it is importable we let it do the full job
(every keyword, every draft, chosen by ``$schema``; 2020-12 by default as
2025-11-25 asks), otherwise ``mini_validate`` checks the subset that covers
almost every real tool schema: ``type`` (string or list), ``properties``,
``required``, ``additionalProperties: false``, ``items``, ``enum``, ``const``.
Unknown keywords are ignored there, never failed on.

Both return a list of human-readable problems; an empty list means valid.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

_JSON_TYPES: Final[Mapping[str, Callable[[Any], bool]]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    # bool is an int subclass in Python, never a JSON number.
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}

_MAX_PROBLEMS: Final = 10

logger = logging.getLogger("trimcp.server")


def _where(path: str) -> str:
    return path or "arguments"


def mini_validate(value: Any, schema: Any, path: str = "") -> list[str]:
    """Check ``value`` against the common subset of JSON Schema; return the problems."""
    if not isinstance(schema, dict):
        return []  # ``true``/``{}``-like schemas accept anything
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        known = [n for n in names if n in _JSON_TYPES]
        if known and not any(_JSON_TYPES[n](value) for n in known):
            return [f"{_where(path)}: expected {' or '.join(known)}, got {_json_type(value)}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{_where(path)}: must equal {schema['const']!r}")
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        problems.append(f"{_where(path)}: {value!r} is not one of {enum!r}")
    if isinstance(value, dict):
        problems.extend(_check_object(value, schema, path))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                problems.extend(mini_validate(item, items, f"{path}[{i}]"))
    return problems[:_MAX_PROBLEMS]


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    problems: list[str] = []
    required = schema.get("required")
    if isinstance(required, list):
        for name in required:
            if isinstance(name, str) and name not in value:
                problems.append(f"{_where(path)}: missing required property {name!r}")
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    for name, item in value.items():
        sub = f"{path}.{name}" if path else name
        if name in props:
            problems.extend(mini_validate(item, props[name], sub))
        elif schema.get("additionalProperties") is False:
            problems.append(f"{_where(path)}: unexpected property {name!r}")
        elif isinstance(schema.get("additionalProperties"), dict):
            problems.extend(mini_validate(item, schema["additionalProperties"], sub))
    return problems


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _JSON_TYPES[name](value):
            return name
    return type(value).__name__


def _jsonschema_validate(value: Any, schema: dict[str, Any]) -> list[str]:
    # Imported by name: an optional dependency, untyped for mypy.
    jsonschema: Any = importlib.import_module("jsonschema")

    # No $schema: MCP 2025-11-25 makes JSON Schema 2020-12 the default dialect.
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    problems: list[str] = []
    for error in cls(schema).iter_errors(value):
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        problems.append(f"{_where(where.lstrip('.'))}: {error.message}")
        if len(problems) >= _MAX_PROBLEMS:
            break
    return problems


def _have_jsonschema() -> bool:
    return importlib.util.find_spec("jsonschema") is not None


#: Whether the full validator is used; tests flip it to exercise ``mini_validate``.
USE_JSONSCHEMA: bool = _have_jsonschema()


def validate(value: Any, schema: Any) -> list[str]:
    """Problems with ``value`` under ``schema`` (empty when valid)."""
    if USE_JSONSCHEMA and isinstance(schema, dict):
        try:
            return _jsonschema_validate(value, schema)
        except Exception as exc:  # noqa: BLE001 - a schema jsonschema rejects must not fail the call
            logger.debug("jsonschema could not use %r (%s); using the built-in checks", schema, exc)
    return mini_validate(value, schema)
