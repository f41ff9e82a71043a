"""The pure pieces of trimcp.server: validation, URI templates, cursors, schemas, results."""

from __future__ import annotations

import base64
from typing import Any, Literal

import pytest

from trimcp._errors import McpError
from trimcp.server import Context, Server, _compat, content
from trimcp.server import _validate as v
from trimcp.server._pagination import decode_cursor, encode_cursor, paginate
from trimcp.server._registry import schema_from_signature, type_schema
from trimcp.server._uritemplate import UnsafeVariable, UriTemplate
from trimcp.server.handlers import _not_found

# ---------------------------------------------------------------- validation

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "n": {"type": "integer"},
        "ratio": {"type": ["number", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": ["a", "b"]},
        "flag": {"type": "boolean"},
    },
    "required": ["name"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"name": "x", "n": 3, "ratio": None, "tags": ["a"], "mode": "a", "flag": True}, None),
        ({"name": "x", "n": 3.0}, None),
        ({}, "'name' is a required property"),
        ({"name": 1}, "name: 1 is not of type 'string'"),
        ({"name": "x", "n": True}, "n: True is not of type 'integer'"),
        ({"name": "x", "n": 1.5}, "n: 1.5 is not of type 'integer'"),
        ({"name": "x", "tags": ["a", 2]}, "tags[1]: 2 is not of type 'string'"),
        ({"name": "x", "mode": "c"}, "'c' is not one of"),
        ({"name": "x", "other": 1}, "('other' was unexpected)"),
        ([], "arguments: [] is not of type 'object'"),
    ],
)
async def test_validate(value: Any, problem: str | None) -> None:
    problems = await v.validate(value, SCHEMA)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


async def test_validate_uses_full_json_schema() -> None:
    minimum = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}}
    assert await v.validate({"n": 2}, minimum) == ["n: 2 is less than the minimum of 5"]


async def test_a_schema_jsonschema_rejects_accepts_anything() -> None:
    assert await v.validate({"a": 1}, {"type": "object", "properties": {"a": {"type": 12}}}) == []


# ---------------------------------------------------------------- URI templates


def test_uri_template_matching() -> None:
    t = UriTemplate("test://template/{id}/data")
    assert t.variables == ("id",)
    assert t.match("test://template/123/data") == {"id": "123"}
    with pytest.raises(UnsafeVariable, match="'id'"):  # an encoded '/' would leave the segment
        t.match("test://template/a%2Fb/data")
    assert t.match("test://template/a/b/data") is None
    assert t.match("test://template//data") is None
    assert t.match("test://template/1/data/x") is None
    two = UriTemplate("db://{table}/{row}.json")
    assert two.match("db://users/7.json") == {"table": "users", "row": "7"}
    assert two.expand(table="a b", row="1/2") == "db://a%20b/1%2F2.json"
    assert two.match("db://a%20b/%C3%BC.json") == {"table": "a b", "row": "ü"}
    assert UriTemplate("x://{a}").match(UriTemplate("x://{a}").expand(a="ü?&")) == {"a": "ü?&"}


@pytest.mark.parametrize(
    "bad", ["x://{+path}", "x://{?q}", "x://{a}/{a}", "x://{a", "x://a}", "x://{{a}", "x://a}{b}", "x://}{a}/{b}"]
)
def test_uri_template_rejects_what_level_1_lacks(bad: str) -> None:
    with pytest.raises(ValueError, match="URI template"):
        UriTemplate(bad)


# ---------------------------------------------------------------- pagination


def test_cursor_round_trip_and_rejection() -> None:
    items = list(range(12))
    page, cursor = paginate("tools", items, {}, 5)
    assert list(page) == [0, 1, 2, 3, 4] and cursor == encode_cursor("tools", 5)
    page, cursor = paginate("tools", items, {"cursor": cursor}, 5)
    assert list(page) == [5, 6, 7, 8, 9]
    page, cursor = paginate("tools", items, {"cursor": cursor}, 5)
    assert list(page) == [10, 11] and cursor is None
    assert paginate("tools", items, {}, None) == (items, None)
    for bad in (
        "!!",
        "",
        3,
        encode_cursor("prompts", 1),
        base64.urlsafe_b64encode(b"tools:-1").decode(),
        base64.urlsafe_b64encode(b"tools:x").decode(),
        base64.urlsafe_b64encode(b"\xff").decode(),
    ):
        with pytest.raises(McpError) as info:
            decode_cursor("tools", bad)
        assert info.value.code == -32602


# ---------------------------------------------------------------- schemas from signatures


def test_schema_from_signature() -> None:
    async def tool(
        ctx: Context,
        text: str,
        count: int,
        ratio: float = 0.5,
        on: bool = False,
        tags: list[str] | None = None,
        extra: dict[str, Any] | None = None,
        mode: Literal["a", "b"] = "a",
        anything: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> None: ...

    schema = schema_from_signature(tool)
    assert schema["required"] == ["text", "count"]
    props = schema["properties"]
    assert props["text"] == {"type": "string"}
    assert props["count"] == {"type": "integer"}
    assert props["ratio"] == {"type": "number", "default": 0.5}
    assert props["on"] == {"type": "boolean", "default": False}
    assert props["tags"] == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
        "default": None,
    }
    assert props["extra"] == {"type": ["object", "null"], "default": None}
    assert props["mode"] == {"enum": ["a", "b"], "default": "a"}
    assert props["anything"] == {"default": None}
    assert set(props) == {"text", "count", "ratio", "on", "tags", "extra", "mode", "anything"}
    assert type_schema("int") == {"type": "integer"}


def test_registration_rules() -> None:
    server = Server("t", "1")

    @server.tool
    async def plain(ctx: Context, x: int) -> int:
        """First paragraph.

        Not in the description."""
        return x

    assert server.tools["plain"].definition["description"] == "First paragraph."
    with pytest.raises(ValueError, match="inputSchema"):
        server.add_tool(plain, "bad", input_schema={"type": "array"})
    with pytest.raises(ValueError, match="outputSchema"):
        server.add_tool(plain, "bad", output_schema={"type": "string"})
    with pytest.raises(ValueError, match="ref_type"):
        server.completion("ref/tool", "x", "y")

    @server.prompt
    async def p(ctx: Context, who: str, how: str = "kindly") -> str:
        return who

    assert server.prompts["p"].arguments == [{"name": "who", "required": True}, {"name": "how", "required": False}]
    with pytest.raises(TypeError, match="'name'"):
        server.add_prompt(p, "q", arguments=[{"description": "no name"}])
    assert Server("t", "1", title="T").info == {"name": "t", "version": "1", "title": "T"}
    with pytest.raises(ValueError, match="page_size"):
        Server("t", "1", page_size=0)


def test_resource_not_found_code_follows_the_era() -> None:
    class Stub:
        protocol_version = "2025-11-25"

    ctx: Any = Stub()
    assert (_not_found(ctx, "u").code, _not_found(ctx, "u").data) == (-32002, {"uri": "u"})
    Stub.protocol_version = "2026-07-28"
    assert _not_found(ctx, "u").code == -32602


# ---------------------------------------------------------------- results


def test_tool_result_shapes() -> None:
    assert content.tool_result("hi", structured=False) == {"content": [{"type": "text", "text": "hi"}]}
    assert content.tool_result(None, structured=False) == {"content": []}
    assert content.tool_result(3, structured=False) == {"content": [{"type": "text", "text": "3"}]}
    assert content.tool_result(["a", content.image(b"\x00", "image/png")], structured=False)["content"][1] == {
        "type": "image",
        "data": "AA==",
        "mimeType": "image/png",
    }
    assert content.tool_result({"a": 1}, structured=True) == {
        "content": [{"type": "text", "text": '{"a": 1}'}],
        "structuredContent": {"a": 1},
    }
    assert content.tool_result({"a": 1}, structured=False) == {"content": [{"type": "text", "text": '{"a": 1}'}]}
    full = {"content": ["x"], "isError": True}
    assert content.tool_result(full, structured=True) == {"content": [{"type": "text", "text": "x"}], "isError": True}
    with pytest.raises(TypeError):
        content.tool_result(object(), structured=False)
    with pytest.raises(TypeError):
        content.tool_result([object()], structured=False)


def test_resource_and_prompt_result_shapes() -> None:
    assert content.resource_contents("u", b"\x01", "x/y") == [{"uri": "u", "blob": "AQ==", "mimeType": "x/y"}]
    assert content.resource_contents("u", "t", None) == [{"uri": "u", "text": "t"}]
    assert content.resource_contents("u", {"contents": [{"uri": "u", "text": "t"}]}, None) == [
        {"uri": "u", "text": "t"}
    ]
    with pytest.raises(TypeError):
        content.resource_contents("u", 3, None)
    assert content.prompt_result("hi", "d") == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "description": "d",
    }
    assert content.prompt_result({"messages": ["a"]}, None)["messages"][0]["role"] == "user"
    with pytest.raises(TypeError):
        content.prompt_result([{"role": "user"}], None)


def test_compat_trims_by_revision() -> None:
    tool = {
        "name": "t",
        "title": "T",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
        "icons": [],
        "_meta": {},
    }
    assert set(_compat.tool(tool, "2024-11-05")) == {"name", "inputSchema"}
    assert set(_compat.tool(tool, "2025-03-26")) == {"name", "inputSchema", "annotations"}
    assert set(_compat.tool(tool, "2025-06-18")) == set(tool) - {"icons"}
    assert _compat.tool(tool, "2025-11-25") == tool
    resource = {"uri": "u", "name": "n", "title": "T", "annotations": {"priority": 1, "lastModified": "x"}}
    assert _compat.resource(resource, "2025-03-26") == {"uri": "u", "name": "n", "annotations": {"priority": 1}}
    block = {"type": "resource", "resource": {"uri": "u", "text": "t", "_meta": {}}, "_meta": {}}
    assert _compat.content(block, "2025-03-26") == {"type": "resource", "resource": {"uri": "u", "text": "t"}}
    prompt = {"name": "p", "title": "P", "arguments": [{"name": "a", "title": "A"}]}
    assert _compat.prompt(prompt, "2024-11-05") == {"name": "p", "arguments": [{"name": "a"}]}
    messages = [{"role": "user", "content": {"type": "audio", "data": "", "mimeType": "audio/wav"}}]
    assert _compat.prompt_messages(messages, "2024-11-05")[0]["content"]["type"] == "text"
