"""Tool calls read from replies (SDK objects and dicts) and results written in each provider's shape.

Replies are built with the SDKs' own response models; results are read back by the SDKs' own
request types (``helpers/provider_sdks.py``).  No request leaves the machine.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from provider_sdks import check_reply, check_result_messages

from trimcp._sansio import schema as s
from trimcp._sansio.host.providers import (
    PROVIDERS,
    ToolCall,
    ToolOutcome,
    assistant_message,
    reply_text,
    tool_calls,
    tool_results,
)
from trimcp.testing import ScriptedModel, call

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
PDF = base64.b64encode(b"%PDF-1.4\n%%EOF").decode()


def rich_result(**extra: Any) -> s.CallToolResult:
    return s.CallToolResult(
        content=[
            s.TextContent(text="first"),
            s.TextContent(text=""),
            s.ImageContent(data=PNG, mime_type="image/png"),
            s.ImageContent(data=PNG, mime_type="image/svg+xml"),
            s.AudioContent(data=PNG, mime_type="audio/wav"),
            s.EmbeddedResource(resource=s.TextResourceContents(uri="file:///a.txt", text="file text")),
            s.EmbeddedResource(
                resource=s.BlobResourceContents(uri="file:///a.pdf", blob=PDF, mime_type="application/pdf")
            ),
            s.EmbeddedResource(
                resource=s.BlobResourceContents(uri="file:///a.bin", blob=PDF, mime_type="application/zip")
            ),
            s.ResourceLink(uri="file:///b.md", name="b.md", mime_type="text/markdown"),
        ],
        **extra,
    )


async def replies_with_two_calls(provider: str) -> Any:
    model = ScriptedModel(provider, [[call("mcp__s__echo", text="hi"), call("mcp__s__add", a=1, b=2)]])
    tools = {
        "anthropic": [
            {"name": n, "input_schema": {"type": "object", "properties": {}}} for n in ("mcp__s__echo", "mcp__s__add")
        ],
        "gemini": [{"functionDeclarations": [{"name": "mcp__s__echo"}, {"name": "mcp__s__add"}]}],
    }.get(
        provider,
        [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
            for n in ("mcp__s__echo", "mcp__s__add")
        ],
    )
    return await model([], tools)


@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
async def test_calls_are_read_alike_from_the_sdk_object_and_from_its_dict(provider: str) -> None:
    data = await replies_with_two_calls(provider)
    sdk = check_reply(provider, data)
    for reply in (data, sdk):
        calls = tool_calls(provider, reply)
        assert [(c.name, c.arguments) for c in calls] == [
            ("mcp__s__echo", {"text": "hi"}),
            ("mcp__s__add", {"a": 1, "b": 2}),
        ]
        assert all(c.id and c.problem is None for c in calls)


async def test_the_sdk_objects_go_back_into_the_history_as_they_are() -> None:
    anthropic = check_reply("anthropic", await replies_with_two_calls("anthropic"))
    assert assistant_message("anthropic", anthropic) == {"role": "assistant", "content": anthropic.content}
    gemini = check_reply("gemini", await replies_with_two_calls("gemini"))
    assert assistant_message("gemini", gemini) is gemini.candidates[0].content
    openai = check_reply("openai", await replies_with_two_calls("openai"))
    message = assistant_message("openai", openai)
    assert message["role"] == "assistant" and [c["id"] for c in message["tool_calls"]] == ["call_0_0", "call_0_1"]
    check_result_messages("openai", [])  # the judge reads an empty list too


def test_openai_arguments_that_are_not_json_are_a_problem_not_a_crash() -> None:
    reply = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{oops"}}],
                }
            }
        ]
    }
    (only,) = tool_calls("openai", reply)
    assert only.arguments is None and only.problem is not None and "not valid JSON" in only.problem
    reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "[1, 2]"
    assert "not a JSON object" in (tool_calls("openai", reply)[0].problem or "")


def test_a_reply_without_calls_has_its_text() -> None:
    assert reply_text("anthropic", {"content": [{"type": "text", "text": "done"}]}) == "done"
    assert reply_text("openai", {"choices": [{"message": {"role": "assistant", "content": "done"}}]}) == "done"
    assert reply_text("gemini", {"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}}]}) == "done"
    for provider in PROVIDERS:
        assert tool_calls(provider, {}) == []


def outcomes() -> list[ToolOutcome]:
    return [
        ToolOutcome(ToolCall("mcp__s__a", {}, id="id_a"), result=rich_result()),
        ToolOutcome(
            ToolCall("mcp__s__b", {}, id="id_b"),
            result=s.CallToolResult(content=[s.TextContent(text="bad")], is_error=True),
        ),
        ToolOutcome(ToolCall("mcp__s__c", {}, id="id_c"), error="the call failed: TransportClosed: gone"),
        ToolOutcome(
            ToolCall("mcp__s__d", {}, id="id_d"),
            result=s.CallToolResult(content=[s.TextContent(text='{"t": 21}')], structured_content={"t": 21}),
        ),
        ToolOutcome(ToolCall("mcp__s__e", {}, id="id_e"), result=s.CallToolResult(content=[])),
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_results_are_read_by_the_sdk(provider: str) -> None:
    messages = tool_results(provider, outcomes())
    check_result_messages(provider, messages)


def test_anthropic_results_carry_text_images_and_documents() -> None:
    (message,) = tool_results("anthropic", outcomes())
    assert message["role"] == "user"
    a, b, c, d, e = message["content"]
    assert [x["tool_use_id"] for x in (a, b, c, d, e)] == ["id_a", "id_b", "id_c", "id_d", "id_e"]
    kinds = [block["type"] for block in a["content"]]
    assert kinds == ["text", "image", "text", "text", "document", "document", "text", "text"]
    assert a["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    assert a["content"][2]["text"].startswith("[image image/svg+xml,")
    assert a["content"][3]["text"].startswith("[audio audio/wav,")
    assert a["content"][4] == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "file text"},
        "title": "file:///a.txt",
    }
    assert a["content"][5]["source"]["media_type"] == "application/pdf"
    assert a["content"][7]["text"] == "[resource link b.md <file:///b.md>, text/markdown]"
    assert "is_error" not in a and b["is_error"] is True and c["is_error"] is True
    assert c["content"] == [{"type": "text", "text": "the call failed: TransportClosed: gone"}]
    assert e["content"] == [{"type": "text", "text": "(the tool returned no content)"}]


def test_openai_results_are_text_with_errors_said_in_words() -> None:
    a, b, c, d, e = tool_results("openai", outcomes())
    assert a["role"] == "tool" and a["tool_call_id"] == "id_a"
    assert a["content"].startswith("first\n\n[image image/png,")
    assert "[resource <file:///a.txt>]\nfile text" in a["content"]
    assert b["content"] == "Error: bad"
    assert c["content"] == "Error: the call failed: TransportClosed: gone"
    assert d["content"] == '{"t": 21}'
    assert e["content"] == "(the tool returned no content)"


def test_gemini_results_use_output_and_error_and_carry_media_as_parts() -> None:
    (message,) = tool_results("gemini", outcomes())
    assert message["role"] == "user"
    a, b, c, d, e = (part["functionResponse"] for part in message["parts"])
    assert a["name"] == "mcp__s__a" and a["id"] == "id_a"
    assert [p["inlineData"]["mimeType"] for p in a["parts"]] == ["image/png", "application/pdf"]
    assert "[image image/png" not in a["response"]["output"] and "[image image/svg+xml" in a["response"]["output"]
    assert b["response"] == {"error": "bad"}
    assert c["response"] == {"error": "the call failed: TransportClosed: gone"}
    assert d["response"] == {"output": {"t": 21}}  # structuredContent as JSON, its text copy not repeated
    assert e["response"] == {"output": "(the tool returned no content)"}
    without_id = tool_results("gemini", [ToolOutcome(ToolCall("t", {}), result=s.CallToolResult(content=[]))])
    assert "id" not in without_id[0]["parts"][0]["functionResponse"]


def test_results_are_json() -> None:
    for provider in PROVIDERS:
        json.dumps(tool_results(provider, outcomes()))
