"""Edge cases of trimcp._sansio.schema that the wire samples in test_schema.py do not reach:
direct use of ``from_wire`` on primitive, container and union types, values built by hand
(subclasses of JSON types, non-JSON values), the fallbacks of the generated class functions
(``__init__`` instead of slot filling, recursive classes, classes without ``extra``), and the
small convenience properties of the typed objects."""

from __future__ import annotations

import collections
import copy
import enum
from typing import Any, Literal, Optional, Union

import attrs
import pytest

from trimcp._sansio import schema as S
from trimcp._sansio.schema import SchemaError, from_wire, to_wire
from trimcp._sansio.schema._rules import describe, json_type


def error(tp: Any, data: Any) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        from_wire(tp, data)
    return info.value


# --------------------------------------------------------------------------- test-only classes


@attrs.frozen(kw_only=True)
class Node:
    """A recursive class: its hook refers to itself while it is being built."""

    name: str
    children: list[Node] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Checked:
    """A class with a post-init hook: structuring must run ``__init__``."""

    name: str
    extra: dict[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if not self.name:
            raise ValueError("name must not be empty")


@attrs.frozen(kw_only=True)
class Validated:
    code: str = attrs.field(validator=attrs.validators.max_len(3))
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Converted:
    count: int = attrs.field(converter=abs)
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, slots=False)
class Unslotted:
    name: str
    size: int | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class NoExtra:
    name: str
    icon: S.Icon | None = None


@attrs.frozen(kw_only=True)
class BadDefault:
    limit: int | None = 10
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Mixed:
    """Containers and unions of classes that no MCP object declares."""

    icons_by_theme: dict[str, S.Icon] | None = None
    icon_or_url: S.Icon | str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


class Name(str):
    pass


class Count(int):
    pass


class Colour(enum.Enum):
    RED = "red"


# --------------------------------------------------------------------------- primitives and None


def test_from_wire_on_primitive_types() -> None:
    assert from_wire(int, 5) == 5
    assert from_wire(str, "x") == "x"
    assert from_wire(float, 2) == 2 and type(from_wire(float, 2)) is int  # JSON type kept
    assert from_wire(bool, False) is False
    assert str(error(int, True)) == "expected integer, got boolean"
    assert str(error(float, False)) == "expected number, got boolean"
    assert str(error(bool, 1)) == "expected boolean, got integer"
    assert str(error(str, None)) == "expected string, got null"


def test_subclasses_of_json_types_are_accepted_as_given() -> None:
    name = Name("calc")
    tool = from_wire(S.Tool, {"name": name, "inputSchema": {"type": "object"}})
    assert tool.name is name
    assert to_wire(tool) == {"name": "calc", "inputSchema": {"type": "object"}}
    count = Count(3)
    assert from_wire(int, count) is count
    # ...but a bool is never a JSON number, although Python makes it an int.
    err = error(
        S.Task,
        {
            "taskId": "t",
            "status": "working",
            "createdAt": "a",
            "lastUpdatedAt": "b",
            "ttl": None,
            "pollInterval": True,
        },
    )
    assert str(err) == "pollInterval: expected integer, got boolean"


def test_json_type_names_subclasses_and_foreign_values() -> None:
    assert json_type(Name("x")) == "string"
    assert json_type(Count(1)) == "integer"
    assert json_type(collections.OrderedDict()) == "object"
    assert json_type(b"x") == "bytes"
    assert json_type(Colour.RED) == "Colour"
    err = error(S.Tool, {"name": b"calc", "inputSchema": {}})
    assert err.path == ["name"]
    assert str(err) == "name: expected string, got bytes"
    err = error(S.Tool, {"name": Count(1), "inputSchema": {}})
    assert str(err) == "name: expected string, got integer"


def test_any_and_none() -> None:
    value: Any = {"anything": [1, None]}
    assert from_wire(Any, value) is value
    assert from_wire(type(None), None) is None
    assert str(error(type(None), 0)) == "expected null, got integer"
    assert str(error(type(None), {})) == "expected null, got object"


# --------------------------------------------------------------------------- literals


def test_literal_rejects_non_strings_by_json_type() -> None:
    err = error(S.Task, {"taskId": "t", "status": 1, "createdAt": "a", "lastUpdatedAt": "b", "ttl": 1})
    assert err.path == ["status"]
    assert err.problem == (
        'expected one of "working", "input_required", "completed", "failed", "cancelled", got integer'
    )
    assert str(error(S.ElicitResult, {"action": None})) == (
        'action: expected one of "accept", "decline", "cancel", got null'
    )


def test_non_string_literal_is_refused() -> None:
    with pytest.raises(TypeError, match="only string literals are supported on the wire"):
        S.converter.get_structure_hook(Literal[1, 2])


# --------------------------------------------------------------------------- arrays and maps


def test_list_of_any_is_shared_and_checked() -> None:
    items = [1, "a", None, {"b": []}]
    assert from_wire(list[Any], items) is items
    assert str(error(list[Any], {"0": 1})) == "expected array, got object"
    assert str(error(list[Any], "abc")) == "expected array, got string"


def test_list_of_primitives_must_be_an_array() -> None:
    err = error(S.Icon, {"src": "i.png", "sizes": "48x48"})
    assert err.path == ["sizes"]
    assert str(err) == "sizes: expected array, got string"
    err = error(S.Icon, {"src": "i.png", "sizes": ["48x48", 48]})
    assert err.path == ["sizes", 1]
    assert str(err) == "sizes[1]: expected string, got integer"


def test_opaque_object_subclass_is_shared() -> None:
    schema = collections.OrderedDict(type="object")
    tool = from_wire(S.Tool, {"name": "t", "inputSchema": schema})
    assert tool.input_schema is schema
    err = error(S.Tool, {"name": "t", "inputSchema": ["object"]})
    assert str(err) == "inputSchema: expected object, got array"


def test_map_of_primitives() -> None:
    counts = {"a": 1, "b": 2}
    assert from_wire(dict[str, int], counts) is counts
    assert str(error(dict[str, int], [1, 2])) == "expected object, got array"
    err = error(dict[str, int], {"a": 1, "not an id": "2"})
    assert err.path == ["not an id"]
    assert str(err) == '["not an id"]: expected integer, got string'


def test_map_of_objects() -> None:
    data = {"light": {"src": "l.png"}, "dark": {"src": "d.png", "theme": "dark"}}
    icons = from_wire(dict[str, S.Icon], data)
    assert icons == {"light": S.Icon(src="l.png"), "dark": S.Icon(src="d.png", theme="dark")}
    assert str(error(dict[str, S.Icon], [data])) == "expected object, got array"
    err = error(dict[str, S.Icon], {"light": {"src": "l.png"}, "high contrast": {"src": 1}})
    assert err.path == ["high contrast", "src"]
    assert str(err) == '["high contrast"].src: expected string, got integer'


def test_map_and_union_of_objects_round_trip_in_a_class() -> None:
    data = {
        "iconsByTheme": {"dark": {"src": "d.png", "theme": "dark"}},
        "iconOrUrl": {"src": "x.png", "sizes": ["any"]},
    }
    before = copy.deepcopy(data)
    obj = from_wire(Mixed, data)
    assert obj.icons_by_theme == {"dark": S.Icon(src="d.png", theme="dark")}
    assert obj.icon_or_url == S.Icon(src="x.png", sizes=["any"])
    assert to_wire(obj) == before
    # The string member of the union is written as it is.
    obj = from_wire(Mixed, {"iconOrUrl": "https://x/i.png"})
    assert obj.icon_or_url == "https://x/i.png"
    assert to_wire(obj) == {"iconOrUrl": "https://x/i.png"}
    err = error(Mixed, {"iconsByTheme": {"dark": {"src": "d.png", "theme": "dim"}}})
    assert str(err) == 'iconsByTheme.dark.theme: expected one of "light", "dark", got "dim"'
    err = error(Mixed, {"iconOrUrl": 3})
    assert str(err) == "iconOrUrl: expected object or string, got integer"


# --------------------------------------------------------------------------- unions by JSON type


def test_union_with_any_accepts_everything() -> None:
    value = [1, {"x": None}]
    assert from_wire(Union[int, Any], value) is value  # noqa: UP007
    assert from_wire(Union[int, Any], None) is None  # noqa: UP007


def test_union_with_string_literals() -> None:
    tp = Union[Literal["auto", "none"], int, None]  # noqa: UP007
    assert from_wire(tp, "auto") == "auto"
    assert from_wire(tp, 3) == 3
    assert from_wire(tp, None) is None
    err = error(tp, "sometimes")
    assert err.path == []
    assert str(err) == 'expected one of "auto", "none" or integer or null, got string'
    assert str(error(tp, True)) == 'expected one of "auto", "none" or integer or null, got boolean'


def test_union_with_one_object_type() -> None:
    tp = Union[S.Icon, str]  # noqa: UP007
    assert from_wire(tp, {"src": "i.png"}) == S.Icon(src="i.png")
    assert from_wire(tp, "i.png") == "i.png"
    err = error(tp, {"src": 1})
    assert err.path == ["src"]
    assert str(err) == "src: expected string, got integer"
    assert str(error(tp, [])) == "expected object or string, got array"


def test_union_with_a_type_that_is_not_json() -> None:
    # describe() falls back to the type's name for members it does not know.
    assert describe(Colour) == "Colour"
    assert describe(Optional[Colour]) == "Colour or null"  # noqa: UP045
    assert describe(list[Colour]) == "array"


def test_ambiguous_unions_are_refused() -> None:
    with pytest.raises(TypeError, match=r"ambiguous union \(two array members\)"):
        S.converter.get_structure_hook(Union[list[int], list[str]])  # noqa: UP007
    with pytest.raises(TypeError, match="a union of object types needs a registered discriminator"):
        S.converter.get_structure_hook(Union[S.Icon, S.Annotations])  # noqa: UP007


# --------------------------------------------------------------------------- generated class functions


def test_recursive_class_round_trips() -> None:
    data = {
        "name": "root",
        "children": [{"name": "a", "children": [{"name": "a1", "x-note": 1}]}, {"name": "b"}],
    }
    before = copy.deepcopy(data)
    node = from_wire(Node, data)
    assert node == Node(
        name="root",
        children=[
            Node(name="a", children=[Node(name="a1", extra={"x-note": 1})]),
            Node(name="b"),
        ],
    )
    assert to_wire(node) == before
    err = error(Node, {"name": "root", "children": [{"name": "a", "children": [{}]}]})
    assert err.path == ["children", 0, "children", 0, "name"]
    assert str(err) == "children[0].children[0].name: required member missing"


def test_post_init_runs() -> None:
    obj = from_wire(Checked, {"name": "ok", "more": True})
    assert obj == Checked(name="ok", extra={"more": True})
    assert to_wire(obj) == {"name": "ok", "more": True}
    with pytest.raises(ValueError, match="name must not be empty"):
        from_wire(Checked, {"name": ""})


def test_validators_and_converters_run() -> None:
    assert from_wire(Validated, {"code": "abc"}) == Validated(code="abc")
    with pytest.raises(ValueError, match="Length of 'code' must be <= 3"):
        from_wire(Validated, {"code": "abcd"})
    obj = from_wire(Converted, {"count": -3})
    assert obj.count == 3
    assert to_wire(obj) == {"count": 3}
    # The JSON type is still checked before the converter sees the value.
    assert str(error(Converted, {"count": "-3"})) == "count: expected integer, got string"


def test_class_without_slots() -> None:
    data = {"name": "n", "size": 2, "other": [1]}
    obj = from_wire(Unslotted, data)
    assert obj == Unslotted(name="n", size=2, extra={"other": [1]})
    assert to_wire(obj) == data
    assert to_wire(from_wire(Unslotted, {"name": "n"})) == {"name": "n"}
    assert str(error(Unslotted, {"name": "n", "size": 2.5})) == "size: expected integer, got number"


def test_class_without_extra_can_be_written_but_not_read() -> None:
    obj = NoExtra(name="n", icon=S.Icon(src="i.png", extra={"x": 1}))
    assert to_wire(obj) == {"name": "n", "icon": {"src": "i.png", "x": 1}}
    assert to_wire(NoExtra(name="n")) == {"name": "n"}
    with pytest.raises(TypeError, match="NoExtra has no 'extra' field to keep unknown members in"):
        from_wire(NoExtra, {"name": "n"})


def test_optional_field_must_default_to_none() -> None:
    with pytest.raises(TypeError, match="BadDefault.limit: optional wire fields must default to None"):
        from_wire(BadDefault, {})
    with pytest.raises(TypeError, match="BadDefault.limit: optional wire fields must default to None"):
        to_wire(BadDefault())


# --------------------------------------------------------------------------- content


def test_unknown_content_and_resource_contents_need_objects() -> None:
    assert str(error(S.UnknownContent, "x")) == "expected object, got string"
    raw = {"type": "hologram", "data": 1}
    assert from_wire(S.UnknownContent, raw) == S.UnknownContent(raw=raw)
    err = error(S.EmbeddedResource, {"type": "resource", "resource": {"uri": "file:///a"}})
    assert err.path == ["resource"]
    assert str(err) == 'resource: resource contents need a "text" or a "blob" member'
    err = error(S.EmbeddedResource, {"type": "resource", "resource": "file:///a"})
    assert str(err) == "resource: expected object, got string"


# --------------------------------------------------------------------------- convenience properties


def test_progress_token() -> None:
    assert S.RequestParams().progress_token is None
    assert S.RequestParams(meta={}).progress_token is None
    assert S.RequestParams(meta={"progressToken": "p"}).progress_token == "p"
    assert S.RequestParams(meta={"progressToken": 0}).progress_token == 0
    assert S.RequestParams(meta={"progressToken": True}).progress_token is None
    assert S.RequestParams(meta={"progressToken": 1.5}).progress_token is None
    assert S.RequestParams(meta={"progressToken": None}).progress_token is None
    params = from_wire(S.CallToolRequestParams, {"name": "t", "_meta": {"progressToken": 7}})
    assert params.progress_token == 7


def test_tool_display_name_precedence() -> None:
    base = {"name": "calc", "inputSchema": {"type": "object"}}
    assert from_wire(S.Tool, base).display_name == "calc"
    assert from_wire(S.Tool, {**base, "title": "Calculator"}).display_name == "Calculator"
    annotated = {**base, "annotations": {"title": "Calc (annotated)"}}
    assert from_wire(S.Tool, annotated).display_name == "Calc (annotated)"
    both = {**annotated, "title": "Calculator"}
    assert from_wire(S.Tool, both).display_name == "Calculator"
    # Empty titles do not count.
    empty = {**base, "title": "", "annotations": {"title": ""}}
    assert from_wire(S.Tool, empty).display_name == "calc"
    assert from_wire(S.Tool, {**base, "annotations": {"readOnlyHint": True}}).display_name == "calc"


def test_sampling_result_blocks_and_task_terminal_states() -> None:
    single = from_wire(
        S.CreateMessageResult,
        {"role": "assistant", "model": "m", "content": {"type": "text", "text": "hi"}},
    )
    assert single.blocks == [S.TextContent(text="hi")]
    many = from_wire(
        S.CreateMessageResult,
        {"role": "assistant", "model": "m", "content": [{"type": "text", "text": "a"}]},
    )
    assert many.blocks == [S.TextContent(text="a")]
    task = {"taskId": "t", "createdAt": "a", "lastUpdatedAt": "b", "ttl": None}
    for status in ("completed", "failed", "cancelled"):
        assert from_wire(S.Task, {**task, "status": status}).is_terminal
    for status in ("working", "input_required"):
        assert not from_wire(S.Task, {**task, "status": status}).is_terminal
