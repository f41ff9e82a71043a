"""Hypothesis strategies drawn from the official MCP ``schema.json`` of each revision.

Theory of operation
-------------------
The specification publishes one JSON Schema per revision (draft-07 with
``#/definitions`` for 2024-11-05 to 2025-06-18, 2020-12 with ``#/$defs`` from
2025-11-25 on).  ``strategy_for(revision, name)`` interprets the definition
``name`` directly: each draw walks the schema node by node and picks a value
that satisfies it, so instances follow the schema of *that* revision, not
trimcp's idea of it.

Why not ``hypothesis-jsonschema``: its last release (0.23.1, 2024-02) fails on
every object schema under the hypothesis this project pins (it calls a private
``many.more`` that hypothesis has since removed), so 74 of the 79 2024-11-05
definitions raised.  The schemas use a small subset of JSON Schema —
``type`` (one or a list), ``properties``/``required``,
``additionalProperties`` (boolean or a schema), ``items``, ``anyOf``,
``allOf``, ``const``, ``enum``, ``minimum``/``maximum``, ``maxItems``,
``format`` (``uri``, ``uri-template``, ``byte``) and ``$ref`` — and that is
all this interpreter knows; an unknown keyword raises, so a new schema
construct is noticed rather than silently ignored.

Optional members are included at random; where ``additionalProperties``
allows it an object also gets unknown members (named ``x-…``, so they never
collide with a declared member of any revision).  Nesting is capped by depth:
below ``MAX_DEPTH`` an object keeps only its required members and an array is
empty, which ends recursive definitions such as ``JSONValue``.

Tests must not depend on the shared spec folder at run time: ``load_schema``
returns ``None`` when it is absent, and callers skip.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
MAX_DEPTH = 4

#: Keywords that describe but do not constrain.
_ANNOTATIONS = frozenset({"description", "title", "$schema", "$comment", "default", "examples"})
_KNOWN = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "allOf",
    "const",
    "enum",
    "minimum",
    "maximum",
    "maxItems",
    "format",
    "$ref",
}

_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)
_JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_NAME, inner, max_size=2),
    max_leaves=4,
)


@cache
def load_schema(revision: str) -> dict[str, Any] | None:
    """The decoded ``schema.json`` of ``revision``, or ``None`` when the spec folder is absent."""
    path = SPEC / revision / "schema.json"
    if not path.is_file():
        return None
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _defs_key(doc: dict[str, Any]) -> str:
    return "$defs" if "$defs" in doc else "definitions"


def definitions(revision: str) -> dict[str, Any]:
    doc = load_schema(revision)
    if doc is None:
        raise FileNotFoundError(SPEC / revision / "schema.json")
    defs: dict[str, Any] = doc[_defs_key(doc)]
    return defs


def method_of(definition: dict[str, Any]) -> str | None:
    """The ``method`` const of a request or notification definition."""
    const = definition.get("properties", {}).get("method", {}).get("const")
    return const if isinstance(const, str) else None


def definition_kinds(revision: str) -> dict[str, str]:
    """``{definition name: "request" | "notification" | "result"}`` for ``revision``.

    A request or notification is a definition with a ``method`` const (told apart
    by its name); a result is a definition named ``…Result``.
    """
    out: dict[str, str] = {}
    for name, d in definitions(revision).items():
        if method_of(d) is not None:
            out[name] = "request" if name.endswith("Request") else "notification"
        elif name.endswith("Result"):
            out[name] = "result"
    return out


def validator(revision: str, name: str) -> Any:
    """A ``jsonschema`` validator for definition ``name`` (formats checked where it can)."""
    import jsonschema

    doc = load_schema(revision)
    assert doc is not None
    key = _defs_key(doc)
    schema = {"$ref": f"#/{key}/{name}", key: doc[key]}
    cls = jsonschema.Draft202012Validator if key == "$defs" else jsonschema.Draft7Validator
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


class _Interpreter:
    """Draws a value for a schema node of one revision's schema."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def resolve(self, node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            rest = {k: v for k, v in node.items() if k != "$ref" and k not in _ANNOTATIONS}
            if rest:
                raise ValueError(f"$ref with siblings is not supported: {sorted(rest)}")
            node = self.defs[node["$ref"].rsplit("/", 1)[1]]
        return node

    def merge_all_of(self, node: dict[str, Any]) -> dict[str, Any]:
        """One object schema equal to ``allOf`` here (every part is an object schema)."""
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        props: dict[str, Any] = dict(merged.pop("properties", {}))
        required: list[str] = list(merged.pop("required", []))
        closed = merged.get("additionalProperties") is False
        for part in node["allOf"]:
            part = self.resolve(part)
            if "allOf" in part:
                part = self.merge_all_of(part)
            for key in part:
                if key not in _KNOWN:
                    raise ValueError(f"unsupported keyword {key!r} in allOf")
            if part.get("type", "object") != "object" or "anyOf" in part:
                raise ValueError("allOf of a non-object schema is not supported")
            for member, sub in part.get("properties", {}).items():
                # Two parts constraining one member: both must hold; the narrower
                # side (not the catch-all ``{}``, a const or enum) wins.
                if member in props and sub in ({}, True):
                    continue
                narrower = props.get(member, {}) not in ({}, True)
                if member in props and narrower and not {"const", "enum"} & set(sub):
                    continue
                props[member] = sub
            required += part.get("required", [])
            closed = closed or part.get("additionalProperties") is False
        merged["type"] = "object"
        merged["properties"] = props
        merged["required"] = sorted(set(required))
        if closed:
            merged["additionalProperties"] = False
        return merged

    def value(self, draw: Any, node: Any, depth: int) -> Any:
        node = self.resolve(node)
        if node is True or node == {}:
            return draw(_JSON_VALUES) if depth < MAX_DEPTH else None
        if not isinstance(node, dict):
            raise TypeError(f"unsupported schema node {node!r}")
        unknown = set(node) - _KNOWN
        if unknown:
            raise ValueError(f"unsupported keywords {sorted(unknown)}")
        if "allOf" in node:
            return self.value(draw, self.merge_all_of(node), depth)
        if "anyOf" in node:
            branches = node["anyOf"]
            return self.value(draw, branches[draw(st.integers(0, len(branches) - 1))], depth)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return draw(st.sampled_from(node["enum"]))
        kind = node.get("type")
        if isinstance(kind, list):
            kind = draw(st.sampled_from(kind))
        if kind is None:
            kind = "object" if "properties" in node else None
        if kind is None:
            return draw(_JSON_VALUES)
        return self.typed(draw, node, kind, depth)

    def typed(self, draw: Any, node: dict[str, Any], kind: str, depth: int) -> Any:
        if kind == "object":
            return self.object(draw, node, depth)
        if kind == "array":
            limit = min(node.get("maxItems", 3), 3 if depth < MAX_DEPTH else 0)
            size = draw(st.integers(0, limit))
            return [self.value(draw, node.get("items", {}), depth + 1) for _ in range(size)]
        if kind == "string":
            return draw(_string(node.get("format")))
        if kind == "integer":
            return draw(st.integers(node.get("minimum", -(2**53)), node.get("maximum", 2**53)))
        if kind == "number":
            low, high = node.get("minimum"), node.get("maximum")
            ints = st.integers(
                -(2**53) if low is None else int(-(-low // 1)),
                2**53 if high is None else int(high // 1),
            )
            floats = st.floats(low, high, allow_nan=False, allow_infinity=False)
            return draw(ints | floats)
        if kind == "boolean":
            return draw(st.booleans())
        if kind == "null":
            return None
        raise ValueError(f"unsupported type {kind!r}")

    def object(self, draw: Any, node: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = node.get("properties", {})
        required = set(node.get("required", []))
        out: dict[str, Any] = {}
        for member in sorted(set(props) | required):
            if member in required or (depth < MAX_DEPTH and draw(st.booleans())):
                out[member] = self.value(draw, props.get(member, {}), depth + 1)
        extra_schema = node.get("additionalProperties", {})
        if extra_schema is not False and depth < MAX_DEPTH:
            names = draw(st.lists(_NAME, max_size=2, unique=True))
            for name in names:
                out[f"x-{name}"] = self.value(draw, extra_schema, depth + 1)
        return out


def _string(fmt: str | None) -> st.SearchStrategy[str]:
    if fmt == "uri":
        return st.builds(
            "{}{}".format,
            st.sampled_from(["https://example.com/", "file:///tmp/", "urn:x:"]),
            st.text(alphabet="abcxyz019-._~", max_size=6),
        )
    if fmt == "uri-template":
        return st.sampled_from(["file:///{path}", "https://example.com/{id}/x", "db://{t}{?q}"])
    if fmt == "byte":
        return st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode("ascii"))
    if fmt is not None:
        raise ValueError(f"unsupported format {fmt!r}")
    return st.text(max_size=8)


@cache
def strategy_for(revision: str, name: str) -> st.SearchStrategy[Any]:
    """Valid instances of definition ``name`` of ``revision``'s schema."""
    interpreter = _Interpreter(definitions(revision))
    node = interpreter.defs[name]

    @st.composite
    def draw_instance(draw: Any) -> Any:
        return interpreter.value(draw, node, 0)

    return draw_instance()


def message_strategies(revision: str) -> dict[str, st.SearchStrategy[Any]]:
    """A strategy for every request, notification and result definition of ``revision``
    (see ``definition_kinds``), keyed by definition name."""
    return {name: strategy_for(revision, name) for name in definition_kinds(revision)}
