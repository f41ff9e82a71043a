"""Hypothesis strategies for tool input schemas as servers write them, and worse.

``schema_strategies.py`` draws *instances* of the MCP schema; this module draws *schemas*:
the ``inputSchema`` of a tool, to feed the provider converters.  A draw is an object schema
built from the JSON Schema vocabulary servers use (every type, type lists, ``enum`` and
``const`` of mixed types, formats, bounds, ``anyOf``/``oneOf``/``allOf``, boolean schemas,
free-form objects, arrays without ``items``, tuples) and what they should not send
(``$ref`` into ``$defs`` that refer to themselves or to each other, references that do not
resolve or point to a URL, ``not``/``if``/``then``, ``x-`` extensions, property names with
spaces, brackets or a leading digit, nesting past every provider's limit).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_NAMES = st.one_of(
    st.text(alphabet="abcdefgh_", min_size=1, max_size=6),
    st.sampled_from(["filter[id]", "first name", "2fa", "a.b", "x-y", "$top", "ok", "名前", "a" * 70]),
)
_FORMATS = st.sampled_from(["uri", "email", "date-time", "date", "uuid", "int32", "float", "byte", "regex"])
_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4), st.floats(-2, 2, allow_nan=False)
)
_DEF_NAMES = ("a", "b", "node")


def _leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["string", "integer", "number", "boolean", "null"])},
            optional={
                "description": st.text(max_size=20),
                "format": _FORMATS,
                "pattern": st.sampled_from(["^[a-z]+$", "(a+)+$", "\\d{3}"]),
                "minLength": st.integers(0, 3),
                "maxLength": st.integers(3, 9),
                "minimum": st.integers(-3, 0),
                "maximum": st.integers(1, 9),
                "exclusiveMinimum": st.integers(-3, 0),
                "multipleOf": st.sampled_from([1, 2, 0.5]),
                "default": _SCALAR,
                "examples": st.lists(_SCALAR, max_size=2),
                "x-extension": st.text(max_size=3),
            },
        ),
        st.fixed_dictionaries({"enum": st.lists(_SCALAR, min_size=1, max_size=4)}),
        st.fixed_dictionaries(
            {"type": st.just("string"), "enum": st.lists(st.text(max_size=5), min_size=1, max_size=4)}
        ),
        st.fixed_dictionaries({"const": _SCALAR}),
        st.fixed_dictionaries(
            {"type": st.lists(st.sampled_from(["string", "integer", "null", "boolean"]), min_size=1, max_size=3)}
        ),
        st.sampled_from([{}, True, False, {"$ref": "#/$defs/a"}, {"$ref": "#/$defs/node"}, {"$ref": "#"}]),
        st.sampled_from([{"$ref": "#/$defs/missing"}, {"$ref": "https://example.com/s.json"}, {"$ref": "#anchorA"}]),
        st.just({"type": "object"}),
        st.just({"type": "object", "additionalProperties": {"type": "string"}}),
        st.just({"type": "array"}),
        st.just({"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}),
        st.just({"not": {"type": "string"}}),
    )


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    props = st.dictionaries(_NAMES, children, max_size=4)
    return st.one_of(
        st.builds(
            _object,
            props,
            st.lists(_NAMES, max_size=3),
            st.sampled_from([None, False, True, {"type": "integer"}]),
            st.booleans(),
        ),
        st.fixed_dictionaries(
            {"type": st.just("array"), "items": children},
            optional={"minItems": st.integers(0, 2), "maxItems": st.integers(2, 5), "uniqueItems": st.booleans()},
        ),
        st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"oneOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"allOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries(
            {
                "anyOf": st.lists(
                    st.fixed_dictionaries({"required": st.lists(_NAMES, max_size=2)}), min_size=1, max_size=3
                )
            }
        ),
        st.fixed_dictionaries({"$ref": st.just("#/$defs/b"), "description": st.text(max_size=10)}),
        st.fixed_dictionaries(
            {"type": st.just("object"), "properties": props, "if": st.just({"required": ["x"]}), "then": st.just({})}
        ),
    )


def _object(props: dict[str, Any], required: list[str], extra: Any, pattern: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    picked = [r for r in required if r in props] + required[:1]
    if picked:
        out["required"] = list(dict.fromkeys(picked))
    if extra is not None:
        out["additionalProperties"] = extra
    if pattern:
        out["patternProperties"] = {"^x_": {"type": "string"}}
    return out


schema_nodes: st.SearchStrategy[Any] = st.recursive(_leaf(), _extend, max_leaves=12)


@st.composite
def tool_input_schemas(draw: Any) -> dict[str, Any]:
    """An ``inputSchema``: an object (rarely a root union) with ``$defs`` its references may use."""
    root_kind = draw(st.sampled_from(["object", "object", "object", "object", "union", "ref"]))
    props = draw(st.dictionaries(_NAMES, schema_nodes, max_size=5))
    defs = {name: draw(schema_nodes) for name in _DEF_NAMES}
    defs["node"] = {
        "$anchor": "anchorA",
        "type": "object",
        "properties": {"value": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
    }
    if root_kind == "union":
        root: dict[str, Any] = {
            "anyOf": [
                {"type": "object", "properties": props},
                {"type": "object", "properties": {"alt": {"type": "string"}}, "required": ["alt"]},
            ]
        }
    elif root_kind == "ref":
        root = {"$ref": "#/$defs/obj"}
        defs["obj"] = {"type": "object", "properties": props}
    else:
        root = {"type": "object", "properties": props}
        required = draw(st.lists(st.sampled_from(sorted(props) or ["q"]), max_size=3, unique=True))
        if required:
            root["required"] = required
    root["$defs"] = defs
    if draw(st.booleans()):
        root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return root


def deep_schema(levels: int) -> dict[str, Any]:
    """An object nested ``levels`` objects deep, a string at the bottom."""
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"inner": node}, "required": ["inner"]}
    return node


def fan_out_schema(levels: int) -> dict[str, Any]:
    """Each level refers to the one below twice: 2**levels nodes once inlined."""
    defs: dict[str, Any] = {"l0": {"type": "string"}}
    for i in range(1, levels + 1):
        below = {"$ref": f"#/$defs/l{i - 1}"}
        defs[f"l{i}"] = {"type": "object", "properties": {"x": below, "y": below}}
    return {"type": "object", "properties": {"top": {"$ref": f"#/$defs/l{levels}"}}, "$defs": defs}
