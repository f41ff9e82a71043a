"""Plain JSON Schemas checked without jsonschema: a fast acceptance, never a refusal.

Theory of operation
-------------------
Most tools declare a plain ``inputSchema`` (spec "Server features / Tools"): an object
whose properties each have a ``type``, some of them ``required``, perhaps no others
allowed.  Validating such arguments with jsonschema (``schemas.BoundedSchema``) costs tens
of microseconds of validator objects per call.  ``compile_plain(schema)`` turns a schema
made only of the keywords below into a Python function, once; anything else gives
``None`` and the caller validates as before.

The function answers one question: is this instance *certainly* valid?  ``True`` only
when it is valid under every JSON Schema draft jsonschema picks (for these keywords they
agree: a number is an int or a float and a bool is neither, an integer is an int); a
float where an integer is asked, a missing property, a wrong type or an instance too
large to walk answer ``False``, which means "not known valid": the caller then runs the
full, bounded validation, which finds the errors and words them.  So the messages, the
budget, the RE2 patterns and every other guarantee of ``schemas.BoundedSchema`` stay
where they were; this only skips it for what it would accept anyway.  The walk visits at
most ``MAX_NODES`` instance values (then ``False``): its cost is bounded whatever a peer
sends.

The keywords: ``type`` (a name or a list of names), ``properties``, ``required``,
``additionalProperties`` (a boolean or a plain schema), ``items`` (one plain schema),
``enum`` of strings, and the annotations ``title``, ``description``, ``default``,
``examples``, ``$comment``, ``deprecated``, ``readOnly``, ``writeOnly``; ``format`` too
when formats are annotations (the default of 2020-12).  ``$schema`` may name a draft
from 6 on (which all read these keywords alike).  Boolean schemas are plain.
``tests/sansio/test_plain_schemas.py`` holds the function to jsonschema on generated
schemas and instances.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["MAX_NODES", "PlainCheck", "compile_plain"]

#: Instance values one check visits at most (past it: "not known valid").
MAX_NODES: Final = 1000

#: A compiled check: instance -> whether it is certainly valid.
PlainCheck = Callable[[Any], bool]
#: The same inside the walk, with the count of values visited so far (one cell).
_Check = Callable[[Any, list[int]], bool]

_ANNOTATIONS: Final = frozenset(
    {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
)
_DRAFTS: Final = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-06/schema",
    }
)
_KEYWORDS: Final = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum"})


def _is_string(value: Any) -> bool:
    return type(value) is str


def _is_integer(value: Any) -> bool:
    return type(value) is int  # (a float with no fraction is one too: left to jsonschema)


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def _is_boolean(value: Any) -> bool:
    return type(value) is bool


def _is_null(value: Any) -> bool:
    return value is None


def _is_object(value: Any) -> bool:
    return type(value) is dict


def _is_array(value: Any) -> bool:
    return type(value) is list


_TYPES: Final[dict[str, Callable[[Any], bool]]] = {
    "string": _is_string,
    "integer": _is_integer,
    "number": _is_number,
    "boolean": _is_boolean,
    "null": _is_null,
    "object": _is_object,
    "array": _is_array,
}


def compile_plain(schema: Any, *, formats: bool = False) -> PlainCheck | None:
    """The check of a plain ``schema`` (see the module docstring), or ``None``.

    ``formats``: ``format`` is asserted, so a schema with one is not plain."""
    if isinstance(schema, dict):
        declared = schema.get("$schema")
        if declared is not None and declared not in _DRAFTS:
            return None
        schema = {k: v for k, v in schema.items() if k != "$schema"}
    check = _compile(schema, formats, depth=0)
    if check is None:
        return None

    def plain(instance: Any) -> bool:
        return check(instance, [0])

    return plain


def _compile(schema: Any, formats: bool, depth: int) -> _Check | None:
    if depth > 32:
        return None
    if schema is True:
        return _accept
    if schema is False:
        return _refuse
    if not isinstance(schema, dict):
        return None
    keywords = set(schema) - _ANNOTATIONS
    if not formats:
        keywords.discard("format")
    if not keywords <= _KEYWORDS:
        return None
    parts: list[_Check] = []
    if "type" in schema:
        typed = _type_check(schema["type"])
        if typed is None:
            return None
        parts.append(typed)
    if "enum" in schema:
        allowed = schema["enum"]
        if not isinstance(allowed, list) or not allowed or not all(type(v) is str for v in allowed):
            return None
        choices = frozenset(allowed)
        parts.append(lambda value, _seen: type(value) is str and value in choices)
    if keywords & {"properties", "required", "additionalProperties"}:
        members = _object_check(schema, formats, depth)
        if members is None:
            return None
        parts.append(members)
    if "items" in schema:
        item = _compile(schema["items"], formats, depth + 1)
        if item is None:
            return None
        parts.append(_array_check(item))
    return _all(parts)


def _accept(value: Any, seen: list[int]) -> bool:
    return True


def _refuse(value: Any, seen: list[int]) -> bool:
    return False


def _all(parts: list[_Check]) -> _Check:
    if not parts:
        return _accept
    if len(parts) == 1:
        return parts[0]

    def every(value: Any, seen: list[int]) -> bool:
        return all(part(value, seen) for part in parts)

    return every


def _type_check(declared: Any) -> _Check | None:
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in _TYPES for n in names):
        return None
    tests = tuple(_TYPES[n] for n in names)
    if len(tests) == 1:
        test = tests[0]
        return lambda value, _seen: test(value)
    return lambda value, _seen: any(t(value) for t in tests)


def _object_check(schema: dict[str, Any], formats: bool, depth: int) -> _Check | None:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list):
        return None
    if not all(isinstance(name, str) for name in required) or len(set(required)) != len(required):
        return None
    known: dict[str, _Check] = {}
    for name, sub in properties.items():
        check = _compile(sub, formats, depth + 1)
        if check is None:
            return None
        known[name] = check
    other = _compile(extra, formats, depth + 1)
    if other is None:
        return None
    needed = tuple(required)

    def members(value: Any, seen: list[int]) -> bool:
        if type(value) is not dict:
            return True  # (these keywords apply to objects only)
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            seen[0] += 1
            if seen[0] > MAX_NODES:
                return False
            check = known.get(name, other)
            if not check(item, seen):
                return False
        return True

    return members


def _array_check(item: _Check) -> _Check:
    def items(value: Any, seen: list[int]) -> bool:
        if type(value) is not list:
            return True  # (``items`` applies to arrays only)
        for element in value:
            seen[0] += 1
            if seen[0] > MAX_NODES:
                return False
            if not item(element, seen):
                return False
        return True

    return items
