"""Does a tool list stay within what a provider documents?  A checker written from the docs alone.

Theory of operation
-------------------
The converter (``tools.py``) is one reading of each provider's rules; this module is a
second one, written straight from the same sources (cited in ``anthropic.py``,
``openai.py``, ``gemini.py``) as a list of *allowed* things, without any of the
converter's code: the tests run every converted list through it and through the
provider SDK's own types, and the scripted model (``trimcp.testing.ScriptedModel``) runs
every list an agent hands it through it, as the real API would refuse it.

``check_tools(provider, tools)`` returns the problems, each with the JSON path where it
is (``tools[3].function.parameters.properties.q``); an empty list means the list is
within the documented subset:

* Anthropic: ``name`` matches ``^[a-zA-Z0-9_-]{1,64}$``; ``input_schema`` is a JSON Schema
  (the 2020-12 metaschema) whose root is ``"type": "object"`` with no ``anyOf``/``oneOf``/
  ``allOf`` and whose property names match ``^[a-zA-Z0-9_.-]{1,64}$``;
* OpenAI: ``{"type": "function", "function": {...}}``; the name as Anthropic's; the
  description at most 1024 characters; ``parameters`` a JSON Schema whose root is an
  object with ``properties``, every array with ``items``;
* OpenAI strict mode, in addition: ``"strict": true``; only the documented keywords, per
  type; every node typed (or an ``anyOf``); every object closed with every property
  required; the documented formats; no root ``anyOf``; at most 10 levels of objects, 5000
  properties, 1000 enum values;
* Gemini: ``[{"functionDeclarations": [...]}]``; the name pattern; ``parameters`` a Schema
  of the documented fields only, every node typed (upper case) or an ``anyOf``, ``enum``
  of strings on ``STRING`` only, the documented formats, ``items`` on (and only on)
  ``ARRAY``, non-empty ``properties`` on (and only on) ``OBJECT``, ``required`` among the
  properties, parameter names matching ``^[a-zA-Z_][a-zA-Z0-9_]{0,63}$``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["check_tools"]

_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ANTHROPIC_KEY: Final = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
_GEMINI_NAME: Final = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
_GEMINI_KEY: Final = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,63}$")
_JSON_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})

_STRICT_COMMON: Final = frozenset({"type", "description", "title", "enum", "const", "anyOf"})
_STRICT_BY_TYPE: Final[Mapping[str, frozenset[str]]] = {
    "string": frozenset({"pattern", "format"}),
    "number": frozenset({"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}),
    "integer": frozenset({"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}),
    "boolean": frozenset(),
    "null": frozenset(),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "object": frozenset({"properties", "required", "additionalProperties"}),
}
_STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

_GEMINI_FIELDS: Final = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
_GEMINI_TYPES: Final = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
_GEMINI_FORMATS: Final[Mapping[str, frozenset[str]]] = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"float", "double"}),
    "INTEGER": frozenset({"int32", "int64"}),
}
_GEMINI_ONLY_ON: Final[Mapping[str, str]] = {
    "items": "ARRAY",
    "minItems": "ARRAY",
    "maxItems": "ARRAY",
    "properties": "OBJECT",
    "required": "OBJECT",
    "minProperties": "OBJECT",
    "maxProperties": "OBJECT",
    "minLength": "STRING",
    "maxLength": "STRING",
    "pattern": "STRING",
}


def check_tools(provider: str, tools: Any) -> list[str]:
    """The ways ``tools`` (a request's ``tools`` field) leaves ``provider``'s documented subset."""
    problems: list[str] = []
    if not isinstance(tools, list):
        return [f"tools: a list is expected, not {type(tools).__name__}"]
    checker = _CHECKERS.get(provider)
    if checker is None:
        raise ValueError(f"unknown provider {provider!r}")
    checker(tools, problems)
    return problems


def _json_schema_problems(schema: Any, where: str, problems: list[str]) -> None:
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        problems.append(f"{where}: not a valid JSON Schema ({exc.message[:120]})")


def _anthropic(tools: list[Any], problems: list[str]) -> None:
    for i, tool in enumerate(tools):
        at = f"tools[{i}]"
        if not isinstance(tool, dict):
            problems.append(f"{at}: an object is expected")
            continue
        extra = set(tool) - {"name", "description", "input_schema", "type", "cache_control"}
        if extra:
            problems.append(f"{at}: unknown members {sorted(extra)}")
        if not isinstance(tool.get("name"), str) or not _NAME.fullmatch(tool["name"]):
            problems.append(f"{at}.name: must match {_NAME.pattern}")
        if "description" in tool and not isinstance(tool["description"], str):
            problems.append(f"{at}.description: must be a string")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append(f"{at}.input_schema: must be an object schema with type 'object'")
            continue
        for combinator in ("anyOf", "oneOf", "allOf"):
            if combinator in schema:
                problems.append(f"{at}.input_schema: {combinator} at the top level is refused")
        for key in schema.get("properties") or {}:
            if not _ANTHROPIC_KEY.fullmatch(key):
                problems.append(f"{at}.input_schema.properties: key {key!r} must match {_ANTHROPIC_KEY.pattern}")
        _json_schema_problems(schema, f"{at}.input_schema", problems)


def _openai(tools: list[Any], problems: list[str], strict: bool = False) -> None:
    for i, tool in enumerate(tools):
        at = f"tools[{i}]"
        if not isinstance(tool, dict) or tool.get("type") != "function" or set(tool) != {"type", "function"}:
            problems.append(f"{at}: must be {{'type': 'function', 'function': {{...}}}}")
            continue
        function = tool["function"]
        at += ".function"
        if not isinstance(function, dict):
            problems.append(f"{at}: an object is expected")
            continue
        extra = set(function) - {"name", "description", "parameters", "strict"}
        if extra:
            problems.append(f"{at}: unknown members {sorted(extra)}")
        if not isinstance(function.get("name"), str) or not _NAME.fullmatch(function["name"]):
            problems.append(f"{at}.name: must match {_NAME.pattern}")
        description = function.get("description")
        if description is not None and (not isinstance(description, str) or len(description) > 1024):
            problems.append(f"{at}.description: a string of at most 1024 characters")
        params = function.get("parameters")
        if (
            not isinstance(params, dict)
            or params.get("type") != "object"
            or not isinstance(params.get("properties"), dict)
        ):
            problems.append(f"{at}.parameters: the root must be an object schema with properties")
            continue
        _json_schema_problems(params, f"{at}.parameters", problems)
        _arrays_have_items(params, f"{at}.parameters", problems)
        if strict:
            if function.get("strict") is not True:
                problems.append(f"{at}.strict: must be true")
            if "anyOf" in params:
                problems.append(f"{at}.parameters: the root must not be an anyOf")
            counts = {"properties": 0, "enum": 0}
            _strict_node(params, f"{at}.parameters", 0, counts, problems)
            if counts["properties"] > 5000:
                problems.append(f"{at}.parameters: more than 5000 properties")
            if counts["enum"] > 1000:
                problems.append(f"{at}.parameters: more than 1000 enum values")


def _subschemas(node: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for name, sub in (node.get("properties") or {}).items():
        out.append((f".properties.{name}", sub))
    if isinstance(node.get("items"), dict):
        out.append((".items", node["items"]))
    for i, sub in enumerate(node.get("anyOf") or ()):
        out.append((f".anyOf[{i}]", sub))
    if isinstance(node.get("additionalProperties"), dict):
        out.append((".additionalProperties", node["additionalProperties"]))
    return out


def _arrays_have_items(node: Any, at: str, problems: list[str]) -> None:
    if not isinstance(node, dict):
        return
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or []
    if "array" in kinds and "items" not in node:
        problems.append(f"{at}: an array schema needs items")
    for suffix, sub in _subschemas(node):
        _arrays_have_items(sub, at + suffix, problems)


def _strict_node(node: Any, at: str, objects: int, counts: dict[str, int], problems: list[str]) -> None:
    if not isinstance(node, dict):
        problems.append(f"{at}: a schema object is expected")
        return
    if "anyOf" in node:
        for i, sub in enumerate(node["anyOf"]):
            if sub == {"type": "null"}:  # Optional[X] as pydantic writes it, which strict mode takes
                continue
            _strict_node(sub, f"{at}.anyOf[{i}]", objects, counts, problems)
        unknown = set(node) - {"anyOf", "description", "title"}
        if unknown:
            problems.append(f"{at}: {sorted(unknown)} beside anyOf")
        return
    kinds = node.get("type")
    if kinds is None:
        problems.append(f"{at}: every schema needs a type")
        return
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if not set(kinds) <= _JSON_TYPES or len([k for k in kinds if k != "null"]) != 1:
        problems.append(f"{at}: type must be one JSON type, optionally with null ({kinds})")
        return
    allowed = set(_STRICT_COMMON)
    for kind in kinds:
        allowed |= _STRICT_BY_TYPE[kind]
    unknown = set(node) - allowed
    if unknown:
        problems.append(f"{at}: keywords strict mode does not support: {sorted(unknown)}")
    if "format" in node and node["format"] not in _STRICT_FORMATS:
        problems.append(f"{at}: format {node['format']!r} is not supported")
    if "enum" in node:
        counts["enum"] += len(node["enum"])
    if "object" in kinds:
        if objects >= 10:
            problems.append(f"{at}: more than 10 levels of nested objects")
        props = node.get("properties")
        if not isinstance(props, dict):
            problems.append(f"{at}: an object needs properties")
            props = {}
        counts["properties"] += len(props)
        if node.get("additionalProperties") is not False:
            problems.append(f"{at}: additionalProperties must be false")
        if set(node.get("required") or ()) != set(props) or len(node.get("required") or ()) != len(props):
            problems.append(f"{at}: required must list every property")
        for name, sub in props.items():
            _strict_node(sub, f"{at}.properties.{name}", objects + 1, counts, problems)
    if "array" in kinds:
        _strict_node(node.get("items"), f"{at}.items", objects, counts, problems)


def _gemini(tools: list[Any], problems: list[str]) -> None:
    for i, tool in enumerate(tools):
        at = f"tools[{i}]"
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        if not isinstance(declarations, list) or set(tool) != {"functionDeclarations"}:
            problems.append(f"{at}: must be {{'functionDeclarations': [...]}}")
            continue
        for j, decl in enumerate(declarations):
            where = f"{at}.functionDeclarations[{j}]"
            if not isinstance(decl, dict):
                problems.append(f"{where}: an object is expected")
                continue
            extra = set(decl) - {"name", "description", "parameters"}
            if extra:
                problems.append(f"{where}: unknown members {sorted(extra)}")
            if not isinstance(decl.get("name"), str) or not _GEMINI_NAME.fullmatch(decl["name"]):
                problems.append(f"{where}.name: must match {_GEMINI_NAME.pattern}")
            if "parameters" not in decl:
                continue
            params = decl["parameters"]
            if not isinstance(params, dict) or params.get("type") != "OBJECT":
                problems.append(f"{where}.parameters: must be an OBJECT schema")
                continue
            for key in params.get("properties") or {}:
                if not _GEMINI_KEY.fullmatch(key):
                    problems.append(f"{where}.parameters.properties: name {key!r} must match {_GEMINI_KEY.pattern}")
            _gemini_node(params, f"{where}.parameters", problems)


def _gemini_node(node: Any, at: str, problems: list[str]) -> None:
    if not isinstance(node, dict):
        problems.append(f"{at}: a Schema object is expected")
        return
    unknown = set(node) - _GEMINI_FIELDS
    if unknown:
        problems.append(f"{at}: fields outside the Schema subset: {sorted(unknown)}")
    kind = node.get("type")
    if "anyOf" in node:
        branches = node["anyOf"]
        if not isinstance(branches, list) or not branches:
            problems.append(f"{at}.anyOf: a non-empty list is expected")
        else:
            for i, sub in enumerate(branches):
                _gemini_node(sub, f"{at}.anyOf[{i}]", problems)
    elif kind is None:
        problems.append(f"{at}: the schema type field is missing")
        return
    if kind is not None and kind not in _GEMINI_TYPES:
        problems.append(f"{at}.type: {kind!r} is not one of {sorted(_GEMINI_TYPES)}")
        return
    for field, only in _GEMINI_ONLY_ON.items():
        if field in node and kind != only:
            problems.append(f"{at}.{field}: only allowed for {only} type")
    if "enum" in node:
        if kind != "STRING":
            problems.append(f"{at}.enum: only allowed for STRING type")
        elif not all(isinstance(v, str) for v in node["enum"]):
            problems.append(f"{at}.enum: values must be strings")
    if "format" in node and node["format"] not in _GEMINI_FORMATS.get(str(kind), frozenset()):
        problems.append(f"{at}.format: {node['format']!r} is not supported for {kind}")
    if "nullable" in node and not isinstance(node["nullable"], bool):
        problems.append(f"{at}.nullable: a boolean is expected")
    if kind == "ARRAY":
        if "items" not in node:
            problems.append(f"{at}: an ARRAY needs items")
        else:
            _gemini_node(node["items"], f"{at}.items", problems)
    if kind == "OBJECT":
        props = node.get("properties")
        if not isinstance(props, dict) or not props:
            problems.append(f"{at}.properties: should be non-empty for OBJECT type")
            props = {}
        for name in node.get("required") or ():
            if name not in props:
                problems.append(f"{at}.required: {name!r} is not a property")
        for name, sub in props.items():
            _gemini_node(sub, f"{at}.properties.{name}", problems)


_CHECKERS: Final = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-strict": lambda tools, problems: _openai(tools, problems, strict=True),
    "gemini": _gemini,
}
