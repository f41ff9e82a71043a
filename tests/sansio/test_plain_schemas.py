"""The plain-schema check (``trimcp._sansio.bounded.plain``) held to jsonschema.

Its ``True`` must mean valid: whatever plain schema and JSON value hypothesis draws, the
check never accepts what jsonschema (the full validator of ``BoundedSchema``) refuses.
For values without floats (an integral float is an integer to 2020-12, which the check
leaves to jsonschema) and within ``MAX_NODES`` it is exact: it accepts all that jsonschema
accepts, so arguments of a plain schema never pay for the validator.  Schemas outside the
subset compile to ``None``; a large value costs at most ``MAX_NODES`` visits.
"""

from __future__ import annotations

import time
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp._sansio.bounded.plain import MAX_NODES, compile_plain
from trimcp._sansio.bounded.schemas import BoundedSchema

_NAMES = st.sampled_from(["a", "b", "text", "n", "x y", ""])
_TYPE_NAMES = ["string", "integer", "number", "boolean", "null", "object", "array"]


def _schemas(depth: int = 2) -> st.SearchStrategy[Any]:
    leaf: st.SearchStrategy[Any] = st.one_of(
        st.booleans(),
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.one_of(
                    st.sampled_from(_TYPE_NAMES),
                    st.lists(st.sampled_from(_TYPE_NAMES), min_size=1, max_size=3, unique=True),
                ),
                "enum": st.lists(st.text(max_size=3), min_size=1, max_size=3),
                "description": st.text(max_size=5),
                "format": st.sampled_from(["date", "uri"]),
            },
        ),
    )
    if depth == 0:
        return leaf
    inner = _schemas(depth - 1)
    return st.one_of(
        leaf,
        st.builds(
            lambda t, props, req, extra, items: {
                k: v
                for k, v in {
                    "type": t,
                    "properties": props,
                    "required": req,
                    "additionalProperties": extra,
                    "items": items,
                }.items()
                if v is not None
            },
            st.none() | st.sampled_from(["object", "array", ["object", "null"]]),
            st.none() | st.dictionaries(_NAMES, inner, max_size=3),
            st.none() | st.lists(_NAMES, max_size=2, unique=True),
            st.none() | st.booleans() | inner,
            st.none() | inner,
        ),
    )


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_NAMES, kids, max_size=4),
    max_leaves=12,
)


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    return False


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas(), _JSON)
def test_the_check_accepts_exactly_what_jsonschema_accepts(schema: Any, instance: Any) -> None:
    check = compile_plain(schema)
    assert check is not None, schema
    valid = jsonschema.Draft202012Validator(schema).is_valid(instance)
    if check(instance):
        assert valid, (schema, instance)
    elif not _has_float(instance):
        assert not valid, (schema, instance)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a"},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
        {"anyOf": [{"type": "string"}]},
        {"type": "string", "minLength": 1},
        {"type": "integer", "minimum": 0},
        {"enum": [1, 2]},
        {"type": "strange"},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "string"},
        {"items": [{"type": "string"}]},
        {"required": "a"},
        {"required": ["a", "a"]},
        17,
    ],
)
def test_schemas_outside_the_subset_are_not_plain(schema: Any) -> None:
    assert compile_plain(schema) is None


def test_format_is_plain_only_as_an_annotation() -> None:
    assert compile_plain({"type": "string", "format": "date"}) is not None
    assert compile_plain({"type": "string", "format": "date"}, formats=True) is None


def test_a_large_value_is_left_to_the_bounded_validator_after_max_nodes() -> None:
    check = compile_plain({"type": "array", "items": {"type": "integer"}})
    assert check is not None
    assert check(list(range(MAX_NODES)))
    huge = list(range(1_000_000))
    start = time.perf_counter()
    assert not check(huge)  # "not known valid": the caller validates in full, bounded
    assert time.perf_counter() - start < 0.05


def test_a_bounded_schema_carries_its_plain_check() -> None:
    plain = BoundedSchema({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    assert plain.plain is not None and plain.plain({"text": "hi"}) and not plain.plain({})
    assert BoundedSchema({"type": "string", "pattern": "a+"}).plain is None
    assert BoundedSchema({"type": 5}).plain is None  # (not a schema at all: a problem, no check)
