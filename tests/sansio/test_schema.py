"""Tests for trimcp._sansio.schema: wire round trips, strictness, error paths, the method
tables, and conformance of what we emit to the official JSON schemas of each revision."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import SHARED

from trimcp._errors import TrimcpError
from trimcp._sansio import schema as S
from trimcp._sansio.schema import SchemaError, from_wire, to_wire

SPEC = SHARED / "spec"
HANDSHAKE_REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
SCHEMA_PACKAGE = Path(S.__file__).resolve().parent


def roundtrip(cls: Any, data: dict[str, Any]) -> Any:
    """Parse ``data``, check it comes back out unchanged (and is not mutated), return the object."""
    before = copy.deepcopy(data)
    obj = from_wire(cls, data)
    assert to_wire(obj) == before
    assert data == before
    # Through JSON text as well: what we emit is plain JSON.
    assert json.loads(json.dumps(to_wire(obj))) == before
    return obj


# --------------------------------------------------------------------------- round trips

WIRE_SAMPLES: list[tuple[Any, dict[str, Any]]] = [
    (
        S.InitializeRequestParams,
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "roots": {"listChanged": True},
                "sampling": {"context": {}, "tools": {}},
                "elicitation": {"form": {}, "url": {}},
                "tasks": {
                    "list": {},
                    "cancel": {},
                    "requests": {"sampling": {"createMessage": {}}},
                },
                "experimental": {"acme.x": {"on": True}},
                "extensions": {"io.example/ext": {}},
            },
            "clientInfo": {
                "name": "c",
                "version": "1.0",
                "title": "C",
                "icons": [{"src": "https://x/i.png", "sizes": ["48x48"], "theme": "dark"}],
                "websiteUrl": "https://x",
                "description": "d",
                "vendor-field": [1, 2],
            },
            "_meta": {"progressToken": "p"},
        },
    ),
    (
        S.InitializeResult,
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {
                "logging": {},
                "completions": {},
                "prompts": {"listChanged": False},
                "resources": {"subscribe": True, "listChanged": True, "x": 1},
                "tools": {},
            },
            "serverInfo": {"name": "s", "version": "0"},
            "instructions": "be nice",
        },
    ),
    (
        S.ListToolsResult,
        {
            "tools": [
                {
                    "name": "add",
                    "title": "Add",
                    "description": "adds",
                    "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
                    "outputSchema": {"type": "object"},
                    "annotations": {
                        "title": "Adder",
                        "readOnlyHint": True,
                        "destructiveHint": False,
                        "idempotentHint": True,
                        "openWorldHint": False,
                        "futureHint": "?",
                    },
                    "execution": {"taskSupport": "optional"},
                    "icons": [{"src": "data:image/png;base64,AA=="}],
                    "_meta": {"io.example/k": {"deep": [1, None]}},
                    "x-unknown": {"kept": True},
                }
            ],
            "nextCursor": "page2",
            "_meta": {"m": 1},
            "ttlMs": 5,
        },
    ),
    (
        S.CallToolRequestParams,
        {"name": "t", "arguments": {"a": [1, {"b": None}]}, "task": {"ttl": 60000}},
    ),
    (
        S.CallToolResult,
        {
            "content": [
                {
                    "type": "text",
                    "text": "hi",
                    "annotations": {"audience": ["user"], "priority": 1},
                },
                {"type": "image", "data": "AAAA", "mimeType": "image/png", "_meta": {}},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {
                    "type": "resource_link",
                    "uri": "file:///a",
                    "name": "a",
                    "size": 3,
                    "mimeType": "text/plain",
                },
                {
                    "type": "resource",
                    "resource": {"uri": "file:///b", "text": "b", "mimeType": "text/plain"},
                },
                {"type": "resource", "resource": {"uri": "file:///c", "blob": "AA=="}},
                {"type": "hologram", "frames": [1, 2, 3]},
            ],
            "structuredContent": {"sum": 3},
            "isError": False,
        },
    ),
    (
        S.ReadResourceResult,
        {
            "contents": [
                {"uri": "u", "text": ""},
                {"uri": "v", "blob": "", "mimeType": "x/y", "z": 0},
            ]
        },
    ),
    (
        S.ListResourcesResult,
        {
            "resources": [
                {
                    "uri": "file:///x",
                    "name": "x",
                    "annotations": {"lastModified": "2025-01-01T00:00:00Z"},
                    "size": 0,
                }
            ]
        },
    ),
    (
        S.ListResourceTemplatesResult,
        {"resourceTemplates": [{"uriTemplate": "file:///{p}", "name": "t"}]},
    ),
    (
        S.ListPromptsResult,
        {"prompts": [{"name": "p", "arguments": [{"name": "a", "required": True, "title": "A"}]}]},
    ),
    (S.GetPromptRequestParams, {"name": "p", "arguments": {"a": "1"}}),
    (
        S.GetPromptResult,
        {
            "description": "d",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "q"}},
                {"role": "assistant", "content": {"type": "future", "v": 1}},
            ],
        },
    ),
    (
        S.CompleteRequestParams,
        {
            "ref": {"type": "ref/resource", "uri": "file:///{p}"},
            "argument": {"name": "p", "value": "a"},
            "context": {"arguments": {"q": "1"}},
        },
    ),
    (
        S.CompleteRequestParams,
        {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}},
    ),
    (S.CompleteResult, {"completion": {"values": ["a", "b"], "total": 2, "hasMore": False}}),
    (S.SetLevelRequestParams, {"level": "warning"}),
    (S.LoggingMessageNotificationParams, {"level": "error", "data": None}),
    (S.LoggingMessageNotificationParams, {"level": "info", "logger": "db", "data": {"x": [1]}}),
    (
        S.ProgressNotificationParams,
        {"progressToken": 7, "progress": 0.5, "total": 1, "message": "half"},
    ),
    (S.ProgressNotificationParams, {"progressToken": "t", "progress": 3}),
    (S.CancelledNotificationParams, {"requestId": "r1", "reason": "bored"}),
    (S.CancelledNotificationParams, {}),
    (S.ListRootsResult, {"roots": [{"uri": "file:///home", "name": "home", "_meta": {}}]}),
    (
        S.CreateMessageRequestParams,
        {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "u1", "name": "t", "input": {"a": 1}}],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "toolUseId": "u1",
                            "content": [{"type": "text", "text": "2"}],
                            "structuredContent": {"v": 2},
                            "isError": False,
                        }
                    ],
                },
            ],
            "maxTokens": 100,
            "modelPreferences": {
                "hints": [{"name": "sonnet"}],
                "costPriority": 0.2,
                "speedPriority": 0,
                "intelligencePriority": 1.0,
            },
            "systemPrompt": "s",
            "includeContext": "thisServer",
            "temperature": 0.7,
            "stopSequences": ["\n"],
            "metadata": {"provider": {}},
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "required"},
        },
    ),
    (
        S.CreateMessageResult,
        {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"},
    ),
    (
        S.CreateMessageResult,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "1", "name": "n", "input": {}}],
            "model": "m",
            "stopReason": "toolUse",
        },
    ),
    (
        S.ElicitRequestFormParams,
        {
            "message": "who?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "default": "x"}},
                "required": ["name"],
            },
        },
    ),
    (
        S.ElicitRequestURLParams,
        {"mode": "url", "message": "go", "url": "https://x", "elicitationId": "e"},
    ),
    (
        S.ElicitResult,
        {"action": "accept", "content": {"name": "x", "n": 1, "ok": True, "tags": ["a"]}},
    ),
    (S.ElicitResult, {"action": "cancel"}),
    (S.ElicitationCompleteNotificationParams, {"elicitationId": "e"}),
    (
        S.URLElicitationRequiredErrorData,
        {"elicitations": [{"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}]},
    ),
    (
        S.CreateTaskResult,
        {
            "task": {
                "taskId": "t",
                "status": "working",
                "createdAt": "2025-11-25T00:00:00Z",
                "lastUpdatedAt": "2025-11-25T00:00:00Z",
                "ttl": None,
                "pollInterval": 500,
            },
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}},
        },
    ),
    (
        S.GetTaskResult,
        {
            "taskId": "t",
            "status": "failed",
            "statusMessage": "x",
            "createdAt": "a",
            "lastUpdatedAt": "b",
            "ttl": 1,
        },
    ),
    (
        S.CancelTaskResult,
        {"taskId": "t", "status": "cancelled", "createdAt": "a", "lastUpdatedAt": "b", "ttl": None},
    ),
    (S.ListTasksResult, {"tasks": [], "nextCursor": "n"}),
    (S.GetTaskPayloadResult, {"content": [{"type": "text", "text": "x"}], "isError": False}),
    (
        S.TaskStatusNotificationParams,
        {
            "taskId": "t",
            "status": "completed",
            "createdAt": "a",
            "lastUpdatedAt": "b",
            "ttl": None,
            "_meta": {},
        },
    ),
    (S.GetTaskRequestParams, {"taskId": "t"}),
    (S.ResourceUpdatedNotificationParams, {"uri": "file:///x"}),
    (S.PaginatedRequestParams, {"cursor": "c", "_meta": {"progressToken": 1}}),
    (S.NotificationParams, {}),
    (S.EmptyResult, {}),
    (S.EmptyResult, {"_meta": {"a": 1}, "resultType": "complete", "x": None}),
]


@pytest.mark.parametrize(
    ("cls", "data"),
    WIRE_SAMPLES,
    ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(WIRE_SAMPLES)],
)
def test_round_trip(cls: Any, data: dict[str, Any]) -> None:
    roundtrip(cls, data)


def test_unknown_members_and_meta_are_kept() -> None:
    obj = roundtrip(S.ListToolsResult, WIRE_SAMPLES[2][1])
    assert obj.extra == {} and obj.ttl_ms == 5  # ttlMs: declared since 2026-07-28
    assert obj.meta == {"m": 1}
    tool = obj.tools[0]
    assert tool.input_schema["properties"]["a"] == {"type": "number"}
    assert tool.extra == {"x-unknown": {"kept": True}}
    assert tool.meta == {"io.example/k": {"deep": [1, None]}}
    assert tool.annotations is not None and tool.annotations.extra == {"futureHint": "?"}
    assert tool.annotations.read_only_hint is True
    assert tool.execution is not None and tool.execution.task_support == "optional"
    assert tool.display_name == "Add"


def test_capabilities() -> None:
    params = from_wire(S.InitializeRequestParams, WIRE_SAMPLES[0][1])
    caps = params.capabilities
    assert caps.extra == {} and caps.extensions == {"io.example/ext": {}}  # 2026-07-28
    assert caps.roots == S.RootsCapability(list_changed=True)
    assert caps.elicitation is not None and caps.elicitation.supports_url
    assert caps.tasks is not None and caps.tasks.supports_request("sampling/createMessage")
    assert not caps.tasks.supports_request("elicitation/create")
    assert params.client_info.website_url == "https://x"
    assert params.client_info.extra == {"vendor-field": [1, 2]}
    assert params.progress_token == "p"
    # Present-but-empty is not absent.
    assert to_wire(S.ClientCapabilities(sampling=S.SamplingCapability())) == {"sampling": {}}
    assert S.ElicitationCapability().supports_form
    assert not S.ElicitationCapability(url={}).supports_form


def test_none_is_omitted_and_required_null_is_written() -> None:
    assert to_wire(S.Tool(name="t", input_schema={"type": "object"})) == {
        "name": "t",
        "inputSchema": {"type": "object"},
    }
    assert to_wire(S.TextContent(text="x")) == {"type": "text", "text": "x"}
    task = S.Task(task_id="t", status="working", created_at="a", last_updated_at="b", ttl=None)
    assert to_wire(task)["ttl"] is None
    assert to_wire(S.LoggingMessageNotificationParams(level="info", data=None)) == {
        "level": "info",
        "data": None,
    }
    with pytest.raises(SchemaError, match="ttl: required member missing"):
        from_wire(S.Task, {"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "b"})


def test_extra_never_overrides_declared_members() -> None:
    obj = S.TextContent(text="real", extra={"text": "fake", "other": 1})
    assert to_wire(obj) == {"type": "text", "text": "real", "other": 1}


def test_numbers_keep_their_json_type() -> None:
    obj = from_wire(S.ProgressNotificationParams, {"progressToken": 1, "progress": 1, "total": 2.5})
    assert type(obj.progress) is int and type(obj.total) is float
    assert json.dumps(to_wire(obj)) == '{"progressToken": 1, "progress": 1, "total": 2.5}'


def test_objects_are_frozen_and_comparable() -> None:
    a = from_wire(S.TextContent, {"type": "text", "text": "x"})
    assert a == S.TextContent(text="x")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        a.text = "y"  # type: ignore[misc]


# --------------------------------------------------------------------------- content unions


def test_content_block_union() -> None:
    hook = S.ContentBlock
    assert isinstance(from_wire(hook, {"type": "text", "text": "t"}), S.TextContent)
    assert isinstance(from_wire(hook, {"type": "audio", "data": "", "mimeType": "a/b"}), S.AudioContent)
    link = from_wire(hook, {"type": "resource_link", "uri": "u", "name": "n"})
    assert isinstance(link, S.ResourceLink)
    emb = from_wire(hook, {"type": "resource", "resource": {"uri": "u", "blob": "aGk="}})
    assert isinstance(emb, S.EmbeddedResource) and isinstance(emb.resource, S.BlobResourceContents)
    assert emb.resource.decode() == b"hi"


def test_unknown_content_type_is_kept_raw() -> None:
    raw = {"type": "hologram", "frames": [{"x": 1}], "_meta": {"a": 1}}
    block = from_wire(S.ContentBlock, raw)
    assert isinstance(block, S.UnknownContent)
    assert block.type == "hologram" and block.raw == raw
    assert to_wire(block) == raw
    # A sampling-only block in a tool result is "unknown" there, not an error.
    tool_use = {"type": "tool_use", "id": "1", "name": "n", "input": {}}
    assert isinstance(from_wire(S.ContentBlock, tool_use), S.UnknownContent)
    assert isinstance(from_wire(S.SamplingContentBlock, tool_use), S.ToolUseContent)
    # ... and a tool-result-only block in sampling is unknown too.
    link = {"type": "resource_link", "uri": "u", "name": "n"}
    assert isinstance(from_wire(S.SamplingContentBlock, link), S.UnknownContent)


def test_sampling_content_single_or_list() -> None:
    single = from_wire(S.SamplingMessage, {"role": "user", "content": {"type": "text", "text": "a"}})
    assert isinstance(single.content, S.TextContent) and len(single.blocks) == 1
    many = from_wire(
        S.SamplingMessage,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "", "mimeType": "i/p"},
            ],
        },
    )
    assert isinstance(many.content, list) and [type(b) for b in many.blocks] == [
        S.TextContent,
        S.ImageContent,
    ]
    with pytest.raises(SchemaError, match=r"^content: expected object or array, got string$"):
        from_wire(S.SamplingMessage, {"role": "user", "content": "a"})


def test_resource_contents_by_member() -> None:
    text = from_wire(S.ResourceContents, {"uri": "u", "text": "t"})
    blob = from_wire(S.ResourceContents, {"uri": "u", "blob": "AA=="})
    assert isinstance(text, S.TextResourceContents) and isinstance(blob, S.BlobResourceContents)
    with pytest.raises(SchemaError, match=r'^contents\[0\]: resource contents need a "text" or a "blob"'):
        from_wire(S.ReadResourceResult, {"contents": [{"uri": "u"}]})


def test_elicitation_params_by_mode() -> None:
    form = from_wire(
        S.ElicitRequestParams,
        {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
    )
    assert isinstance(form, S.ElicitRequestFormParams) and form.mode is None
    form2 = from_wire(
        S.ElicitRequestParams,
        {"mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}},
    )
    assert isinstance(form2, S.ElicitRequestFormParams) and form2.mode == "form"
    url = from_wire(
        S.ElicitRequestParams,
        {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"},
    )
    assert isinstance(url, S.ElicitRequestURLParams)
    with pytest.raises(SchemaError, match=r'^mode: expected one of "form", "url", got "sms"$'):
        from_wire(S.ElicitRequestParams, {"mode": "sms", "message": "m"})


# --------------------------------------------------------------------------- errors


BAD_SAMPLES: list[tuple[Any, Any, str]] = [
    (
        S.ListToolsResult,
        {
            "tools": [
                {"name": "a", "inputSchema": {}},
                {"name": "b", "inputSchema": {}},
                {"name": "c", "inputSchema": "x"},
            ]
        },
        "tools[2].inputSchema: expected object, got string",
    ),
    (S.ListToolsResult, {"tools": [{"inputSchema": {}}]}, "tools[0].name: required member missing"),
    (S.ListToolsResult, {}, "tools: required member missing"),
    (S.ListToolsResult, {"tools": {}}, "tools: expected array, got object"),
    (S.ListToolsResult, [], "expected object (ListToolsResult), got array"),
    (S.ListToolsResult, {"tools": [], "nextCursor": None}, "nextCursor: expected string, got null"),
    (S.ListToolsResult, {"tools": [], "nextCursor": 3}, "nextCursor: expected string, got integer"),
    (S.ListToolsResult, {"tools": [], "_meta": []}, "_meta: expected object, got array"),
    (
        S.ListToolsResult,
        {"tools": [{"name": "a", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}}]},
        "tools[0].annotations.readOnlyHint: expected boolean, got string",
    ),
    (
        S.ListToolsResult,
        {"tools": [{"name": "a", "inputSchema": {}, "icons": [{"src": "s", "sizes": ["1x1", 2]}]}]},
        "tools[0].icons[0].sizes[1]: expected string, got integer",
    ),
    (S.CallToolResult, {"content": [{"text": "x"}]}, "content[0].type: required member missing"),
    (S.CallToolResult, {"content": [{"type": 1}]}, "content[0].type: expected string, got integer"),
    (S.CallToolResult, {"content": [{"type": "text"}]}, "content[0].text: required member missing"),
    (S.CallToolResult, {"content": ["hi"]}, "content[0]: expected object, got string"),
    (S.CallToolResult, {"content": [], "isError": 0}, "isError: expected boolean, got integer"),
    # structuredContent may be any JSON value from 2026-07-28; the handshake revisions'
    # "object only" is checked by parse_result(..., revision=...) (tests/sansio/test_schema_2026.py).
    (
        S.CallToolResult,
        {"content": [{"type": "text", "text": "x", "annotations": {"audience": ["robot"]}}]},
        'content[0].annotations.audience[0]: expected one of "user", "assistant", got "robot"',
    ),
    (
        S.CallToolResult,
        {"content": [{"type": "resource", "resource": {"uri": "u", "text": 5}}]},
        "content[0].resource.text: expected string, got integer",
    ),
    (S.Resource, {"uri": "u", "name": "n", "size": True}, "size: expected integer, got boolean"),
    (S.Resource, {"uri": "u", "name": "n", "size": 1.5}, "size: expected integer, got number"),
    (
        S.ProgressNotificationParams,
        {"progressToken": True, "progress": 1},
        "progressToken: expected integer or string, got boolean",
    ),
    (
        S.ProgressNotificationParams,
        {"progressToken": 1, "progress": "1"},
        "progress: expected number, got string",
    ),
    (
        S.ProgressNotificationParams,
        {"progressToken": None, "progress": 1},
        "progressToken: expected integer or string, got null",
    ),
    (
        S.SetLevelRequestParams,
        {"level": "verbose"},
        'level: expected one of "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", got "verbose"',
    ),
    (
        S.GetPromptRequestParams,
        {"name": "p", "arguments": {"a": 1}},
        "arguments.a: expected string, got integer",
    ),
    (
        S.InitializeResult,
        {
            "protocolVersion": "x",
            "capabilities": {"experimental": {"a.b": 1}},
            "serverInfo": {"name": "s", "version": "1"},
        },
        'capabilities.experimental["a.b"]: expected object, got integer',
    ),
    (
        S.InitializeResult,
        {"protocolVersion": "x", "capabilities": {}, "serverInfo": {"name": "s"}},
        "serverInfo.version: required member missing",
    ),
    (
        S.CompleteRequestParams,
        {"ref": {"type": "ref/x"}, "argument": {"name": "a", "value": "v"}},
        'ref.type: expected one of "ref/prompt", "ref/resource", got "ref/x"',
    ),
    (
        S.Task,
        {"taskId": "t", "status": "sleeping", "createdAt": "a", "lastUpdatedAt": "b", "ttl": 1},
        'status: expected one of "working", "input_required", "completed", "failed", "cancelled", got "sleeping"',
    ),
    (
        S.Task,
        {"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttl": "1"},
        "ttl: expected integer or null, got string",
    ),
    (
        S.CreateMessageRequestParams,
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "toolUseId": "u", "content": [{"type": "text"}]}],
                }
            ],
            "maxTokens": 1,
        },
        "messages[0].content[0].content[0].text: required member missing",
    ),
    (
        S.ElicitResult,
        {"action": "maybe"},
        'action: expected one of "accept", "decline", "cancel", got "maybe"',
    ),
]


@pytest.mark.parametrize(("cls", "data", "message"), BAD_SAMPLES, ids=[m for _, _, m in BAD_SAMPLES])
def test_schema_error_paths(cls: Any, data: Any, message: str) -> None:
    with pytest.raises(SchemaError) as info:
        from_wire(cls, data)
    assert str(info.value) == message


def test_schema_error_class() -> None:
    with pytest.raises(SchemaError) as info:
        from_wire(S.ListToolsResult, {"tools": [{"name": 1, "inputSchema": {}}]})
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, TrimcpError)
    assert err.path == ["tools", 0, "name"]
    assert err.location == "tools[0].name"
    assert err.problem == "expected string, got integer"


# --------------------------------------------------------------------------- method tables


def test_method_tables() -> None:
    assert S.REQUEST_TYPES["tools/call"] == (S.CallToolRequestParams, S.CallToolResult)
    assert S.NOTIFICATION_TYPES["notifications/progress"] is S.ProgressNotificationParams
    for method, (params_cls, result_cls) in S.REQUEST_TYPES.items():
        assert attrs.has(result_cls), method
        if method not in S.PARAMS_REQUIRED:
            from_wire(params_cls, {})  # all-optional params: absent means {}


def test_parse_helpers() -> None:
    params = S.parse_request_params("tools/call", {"name": "t", "task": {}})
    assert isinstance(params, S.CallToolRequestParams)
    assert S.result_class("tools/call", params) is S.CreateTaskResult
    assert S.result_class("tools/call", S.CallToolRequestParams(name="t")) is S.CallToolResult
    assert isinstance(S.parse_request_params("ping", None), S.RequestParams)
    assert isinstance(S.parse_notification_params("notifications/initialized", None), S.NotificationParams)
    with pytest.raises(SchemaError, match=r"^params: required member missing$"):
        S.parse_request_params("tools/call", None)
    with pytest.raises(SchemaError, match=r"^params\.arguments: expected object, got array$"):
        S.parse_request_params("tools/call", {"name": "t", "arguments": []})
    with pytest.raises(SchemaError, match=r"^result\.tools: required member missing$"):
        S.parse_result("tools/list", {})
    with pytest.raises(KeyError):
        S.parse_request_params("tools/explode", {})
    res = S.parse_result("elicitation/create", {"action": "decline"})
    assert res == S.ElicitResult(action="decline")


# --------------------------------------------------------------------------- large payloads
# (speed is measured in benchmarks/, never timed in a unit test)


def test_large_tool_result_round_trips() -> None:
    big = {"content": [{"type": "text", "text": "x" * 10_000_000}] + [{"type": "text", "text": "y"}] * 20_000}
    assert to_wire(from_wire(S.CallToolResult, big)) == big


# --------------------------------------------------------------------------- purity


def test_schema_package_is_pure() -> None:
    forbidden = {
        "trio",
        "asyncio",
        "time",
        "socket",
        "ssl",
        "subprocess",
        "threading",
        "httpx",
        "os",
    }
    for path in SCHEMA_PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{path.name} imports {name}"
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 650, path.name


# --------------------------------------------------------------------------- hypothesis

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=3)


def extras(cls: type) -> st.SearchStrategy[dict[str, Any]]:
    from trimcp._sansio.schema._rules import WIRE_NAME, wire_name

    known = {f.metadata.get(WIRE_NAME) or wire_name(f.name) for f in attrs.fields(cls)}
    return st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in known), json_values, max_size=2)


def opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


annotations_st = st.builds(
    S.Annotations,
    audience=opt(st.lists(st.sampled_from(["user", "assistant"]), max_size=2)),
    priority=opt(st.floats(0, 1)),
    last_modified=opt(st.text(max_size=10)),
    extra=extras(S.Annotations),
)
text_st = st.builds(
    S.TextContent,
    text=st.text(),
    annotations=opt(annotations_st),
    meta=opt(json_objects),
    extra=extras(S.TextContent),
)
image_st = st.builds(
    S.ImageContent,
    data=st.text(max_size=20),
    mime_type=st.text(max_size=10),
    meta=opt(json_objects),
)
unknown_st = st.builds(
    S.UnknownContent,
    raw=st.builds(
        lambda t, rest: {**rest, "type": t},
        st.text(max_size=10).filter(
            lambda t: (
                t
                not in {
                    "text",
                    "image",
                    "audio",
                    "resource",
                    "resource_link",
                    "tool_use",
                    "tool_result",
                }
            )
        ),
        json_objects,
    ),
)
content_st = st.one_of(text_st, image_st, unknown_st)
icon_st = st.builds(
    S.Icon,
    src=st.text(max_size=20),
    sizes=opt(st.lists(st.text(max_size=5), max_size=2)),
    theme=opt(st.sampled_from(["light", "dark"])),
)
tool_st = st.builds(
    S.Tool,
    name=st.text(max_size=10),
    input_schema=json_objects,
    title=opt(st.text(max_size=10)),
    output_schema=opt(json_objects),
    annotations=opt(st.builds(S.ToolAnnotations, read_only_hint=opt(st.booleans()), title=opt(st.text(max_size=5)))),
    icons=opt(st.lists(icon_st, max_size=2)),
    meta=opt(json_objects),
    extra=extras(S.Tool),
)
call_result_st = st.builds(
    S.CallToolResult,
    content=st.lists(content_st, max_size=4),
    structured_content=opt(json_objects),
    is_error=opt(st.booleans()),
    meta=opt(json_objects),
    extra=extras(S.CallToolResult),
)
task_st = st.builds(
    S.GetTaskResult,
    task_id=st.text(max_size=5),
    status=st.sampled_from(["working", "input_required", "completed", "failed", "cancelled"]),
    created_at=st.text(max_size=5),
    last_updated_at=st.text(max_size=5),
    ttl=opt(st.integers()),
    poll_interval=opt(st.integers(0)),
    meta=opt(json_objects),
)
sampling_st = st.builds(
    S.CreateMessageResult,
    role=st.sampled_from(["user", "assistant"]),
    content=st.one_of(text_st, st.lists(st.one_of(text_st, image_st), max_size=3)),
    model=st.text(max_size=5),
    stop_reason=opt(st.text(max_size=5)),
)
objects_st = st.one_of(
    tool_st,
    call_result_st,
    task_st,
    sampling_st,
    st.builds(S.ListToolsResult, tools=st.lists(tool_st, max_size=3), next_cursor=opt(st.text(max_size=5))),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects_st)
def test_hypothesis_round_trip(obj: Any) -> None:
    wire = to_wire(obj)
    again = from_wire(type(obj), json.loads(json.dumps(wire)))
    assert again == obj
    assert to_wire(again) == wire


# --------------------------------------------------------------------------- official JSON schemas


def _load_defs(rev: str) -> tuple[dict[str, Any], str]:
    path = SPEC / rev / "schema.json"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    doc = json.loads(path.read_text(encoding="utf-8"))
    key = "$defs" if "$defs" in doc else "definitions"
    return doc[key], key


def _validator(rev: str, def_name: str) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    defs, key = _load_defs(rev)
    assert def_name in defs, f"{def_name} not in {rev}"
    schema = {"$ref": f"#/{key}/{def_name}", key: defs}
    cls = jsonschema.Draft202012Validator if key == "$defs" else jsonschema.Draft7Validator
    return cls(schema)


def _method_defs(defs: dict[str, Any]) -> dict[str, str]:
    out = {}
    for name, d in defs.items():
        method = d.get("properties", {}).get("method", {}).get("const")
        if method:
            out[method] = name
    return out


def revision_samples(rev: str) -> list[tuple[str, str, Any]]:
    """Objects trimcp would emit under ``rev``: ``(kind, method or def name, object)``.

    ``kind`` is "request" / "notification" (wrapped into a JSON-RPC message and
    checked against the method's message definition) or "result" (checked
    against the definition named like the object's class).
    """
    r = HANDSHAKE_REVISIONS.index(rev)
    v0325, v0618, v1125 = r >= 1, r >= 2, r >= 3
    icons = [S.Icon(src="https://x/i.png", mime_type="image/png", sizes=["48x48"], theme="light")] if v1125 else None
    title = "T" if v0618 else None
    meta = {"io.example/x": 1} if v0618 else None
    impl = S.Implementation(
        name="trimcp",
        version="0.1",
        title=title,
        icons=icons,
        website_url="https://x" if v1125 else None,
        description="d" if v1125 else None,
    )
    annotations = S.Annotations(
        audience=["user"], priority=0.5, last_modified="2025-01-01T00:00:00Z" if v0618 else None
    )
    task_md = S.TaskMetadata(ttl=1000) if v1125 else None
    text = S.TextContent(text="hi", annotations=annotations, meta=meta)
    content: list[Any] = [
        text,
        S.ImageContent(data="AAAA", mime_type="image/png"),
        S.EmbeddedResource(resource=S.TextResourceContents(uri="file:///a", text="a", mime_type="text/plain")),
        S.EmbeddedResource(resource=S.BlobResourceContents(uri="file:///b", blob="AA==")),
    ]
    if v0325:
        content.append(S.AudioContent(data="AAAA", mime_type="audio/wav"))
    if v0618:
        content.append(S.ResourceLink(uri="file:///c", name="c", title=title, size=1, icons=icons, meta=meta))
    tool = S.Tool(
        name="add",
        title=title,
        description="adds",
        input_schema={"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
        output_schema={"type": "object", "properties": {"sum": {"type": "number"}}} if v0618 else None,
        annotations=S.ToolAnnotations(title="Add", read_only_hint=True, destructive_hint=False) if v0325 else None,
        execution=S.ToolExecution(task_support="optional") if v1125 else None,
        icons=icons,
        meta=meta,
    )
    task: dict[str, Any] = {
        "task_id": "t1",
        "status": "working",
        "created_at": "2025-11-25T00:00:00Z",
        "last_updated_at": "2025-11-25T00:00:00Z",
        "ttl": None,
        "poll_interval": 100,
    }
    sampling_content: Any = S.TextContent(text="q")
    if v1125:
        sampling_content = [S.ToolUseContent(id="u1", name="add", input={"a": 1})]
    samples: list[tuple[str, str, Any]] = [
        (
            "request",
            "initialize",
            S.InitializeRequestParams(
                protocol_version=rev,
                capabilities=S.ClientCapabilities(
                    roots=S.RootsCapability(list_changed=True),
                    sampling=S.SamplingCapability(context={}, tools={}) if v1125 else S.SamplingCapability(),
                    elicitation=(S.ElicitationCapability(form={}, url={}) if v1125 else S.ElicitationCapability())
                    if v0618
                    else None,
                    tasks=S.TasksCapability(list={}, cancel={}, requests={"sampling": {"createMessage": {}}})
                    if v1125
                    else None,
                    experimental={"io.example": {}},
                ),
                client_info=impl,
            ),
        ),
        (
            "result",
            "InitializeResult",
            S.InitializeResult(
                protocol_version=rev,
                capabilities=S.ServerCapabilities(
                    logging={},
                    completions={} if v0325 else None,
                    prompts=S.PromptsCapability(list_changed=True),
                    resources=S.ResourcesCapability(subscribe=True, list_changed=False),
                    tools=S.ToolsCapability(),
                    tasks=S.TasksCapability(list={}, requests={"tools": {"call": {}}}) if v1125 else None,
                    experimental={"x": {"y": 1}},
                ),
                server_info=impl,
                instructions="hi",
            ),
        ),
        ("request", "ping", S.RequestParams()),
        ("result", "EmptyResult", S.EmptyResult()),
        ("notification", "notifications/initialized", S.NotificationParams()),
        ("request", "tools/list", S.PaginatedRequestParams(cursor="c")),
        ("request", "resources/list", S.PaginatedRequestParams()),
        (
            "request",
            "resources/templates/list",
            S.PaginatedRequestParams(cursor="c", meta={"progressToken": 1}),
        ),
        ("request", "prompts/list", S.PaginatedRequestParams(cursor="c")),
        ("result", "ListToolsResult", S.ListToolsResult(tools=[tool], next_cursor="n")),
        (
            "request",
            "tools/call",
            S.CallToolRequestParams(name="add", arguments={"a": 1}, meta={"progressToken": 3}, task=task_md),
        ),
        (
            "result",
            "CallToolResult",
            S.CallToolResult(
                content=content,
                structured_content={"sum": 1} if v0618 else None,
                is_error=False,
                meta=meta,
            ),
        ),
        (
            "result",
            "ListResourcesResult",
            S.ListResourcesResult(
                resources=[
                    S.Resource(
                        uri="file:///a",
                        name="a",
                        title=title,
                        mime_type="text/plain",
                        size=3,
                        annotations=annotations,
                        icons=icons,
                        meta=meta,
                    )
                ]
            ),
        ),
        (
            "result",
            "ListResourceTemplatesResult",
            S.ListResourceTemplatesResult(
                resource_templates=[
                    S.ResourceTemplate(
                        uri_template="file:///{p}",
                        name="t",
                        title=title,
                        icons=icons,
                        annotations=annotations,
                    )
                ]
            ),
        ),
        ("request", "resources/read", S.ReadResourceRequestParams(uri="file:///a")),
        (
            "result",
            "ReadResourceResult",
            S.ReadResourceResult(
                contents=[
                    S.TextResourceContents(uri="file:///a", text="a", meta=meta),
                    S.BlobResourceContents(uri="file:///b", blob="AA=="),
                ]
            ),
        ),
        ("request", "resources/subscribe", S.SubscribeRequestParams(uri="file:///a")),
        ("request", "resources/unsubscribe", S.UnsubscribeRequestParams(uri="file:///a")),
        (
            "notification",
            "notifications/resources/updated",
            S.ResourceUpdatedNotificationParams(uri="file:///a"),
        ),
        ("notification", "notifications/resources/list_changed", S.NotificationParams()),
        ("notification", "notifications/tools/list_changed", S.NotificationParams(meta=meta)),
        ("notification", "notifications/prompts/list_changed", S.NotificationParams()),
        (
            "result",
            "ListPromptsResult",
            S.ListPromptsResult(
                prompts=[
                    S.Prompt(
                        name="p",
                        title=title,
                        description="d",
                        arguments=[S.PromptArgument(name="a", title=title, required=True)],
                        icons=icons,
                    )
                ]
            ),
        ),
        ("request", "prompts/get", S.GetPromptRequestParams(name="p", arguments={"a": "1"})),
        (
            "result",
            "GetPromptResult",
            S.GetPromptResult(description="d", messages=[S.PromptMessage(role="user", content=c) for c in content]),
        ),
        (
            "request",
            "completion/complete",
            S.CompleteRequestParams(
                ref=S.PromptReference(name="p", title=title),
                argument=S.CompletionArgument(name="a", value="x"),
                context=S.CompletionContext(arguments={"b": "y"}) if v0618 else None,
            ),
        ),
        (
            "request",
            "completion/complete",
            S.CompleteRequestParams(
                ref=S.ResourceTemplateReference(uri="file:///{p}"),
                argument=S.CompletionArgument(name="p", value=""),
            ),
        ),
        (
            "result",
            "CompleteResult",
            S.CompleteResult(completion=S.Completion(values=["a"], total=1, has_more=False)),
        ),
        ("request", "logging/setLevel", S.SetLevelRequestParams(level="debug")),
        (
            "notification",
            "notifications/message",
            S.LoggingMessageNotificationParams(level="warning", logger="l", data={"x": 1}),
        ),
        (
            "notification",
            "notifications/progress",
            S.ProgressNotificationParams(progress_token="p", progress=1, total=2, message="m" if v0325 else None),
        ),
        (
            "notification",
            "notifications/cancelled",
            S.CancelledNotificationParams(request_id=1, reason="r"),
        ),
        ("request", "roots/list", S.RequestParams()),
        (
            "result",
            "ListRootsResult",
            S.ListRootsResult(roots=[S.Root(uri="file:///home", name="home", meta=meta)]),
        ),
        ("notification", "notifications/roots/list_changed", S.NotificationParams()),
        (
            "request",
            "sampling/createMessage",
            S.CreateMessageRequestParams(
                messages=[
                    S.SamplingMessage(role="user", content=S.TextContent(text="q")),
                    S.SamplingMessage(role="assistant", content=S.ImageContent(data="AA==", mime_type="image/png")),
                ],
                max_tokens=10,
                model_preferences=S.ModelPreferences(
                    hints=[S.ModelHint(name="sonnet")],
                    cost_priority=0.1,
                    speed_priority=0.2,
                    intelligence_priority=0.9,
                ),
                system_prompt="s",
                include_context="none",
                temperature=0.5,
                stop_sequences=["x"],
                metadata={"k": "v"},
                tools=[tool] if v1125 else None,
                tool_choice=S.ToolChoice(mode="auto") if v1125 else None,
                task=task_md,
            ),
        ),
        (
            "result",
            "CreateMessageResult",
            S.CreateMessageResult(role="assistant", content=sampling_content, model="m", stop_reason="endTurn"),
        ),
    ]
    if v0618:
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "age": {"type": "integer", "minimum": 0},
            },
            "required": ["name"],
        }
        samples += [
            (
                "request",
                "elicitation/create",
                S.ElicitRequestFormParams(message="who?", requested_schema=schema, mode="form" if v1125 else None),
            ),
            (
                "result",
                "ElicitResult",
                S.ElicitResult(action="accept", content={"name": "x", "age": 3}),
            ),
            ("result", "ElicitResult", S.ElicitResult(action="decline")),
        ]
    if v1125:
        samples += [
            (
                "request",
                "elicitation/create",
                S.ElicitRequestURLParams(message="go", url="https://x/auth", elicitation_id="e1"),
            ),
            (
                "notification",
                "notifications/elicitation/complete",
                S.ElicitationCompleteNotificationParams(elicitation_id="e1"),
            ),
            ("result", "CreateTaskResult", S.CreateTaskResult(task=S.Task(**task))),
            ("request", "tasks/get", S.GetTaskRequestParams(task_id="t1")),
            ("result", "GetTaskResult", S.GetTaskResult(**task)),
            ("request", "tasks/result", S.GetTaskPayloadRequestParams(task_id="t1")),
            (
                "result",
                "GetTaskPayloadResult",
                S.GetTaskPayloadResult(extra={"content": [], "isError": False}),
            ),
            ("request", "tasks/list", S.PaginatedRequestParams()),
            ("result", "ListTasksResult", S.ListTasksResult(tasks=[S.Task(**task)])),
            ("request", "tasks/cancel", S.CancelTaskRequestParams(task_id="t1")),
            ("result", "CancelTaskResult", S.CancelTaskResult(**{**task, "status": "cancelled"})),
            ("notification", "notifications/tasks/status", S.TaskStatusNotificationParams(**task)),
        ]
    return samples


@pytest.mark.parametrize("rev", HANDSHAKE_REVISIONS)
def test_emitted_objects_match_official_schema(rev: str) -> None:
    defs, _ = _load_defs(rev)
    methods = _method_defs(defs)
    checked = set()
    for kind, name, obj in revision_samples(rev):
        wire = to_wire(obj)
        if kind == "result":
            message: dict[str, Any] = wire
            def_name = name
            assert type(obj).__name__ == name or name == "EmptyResult"
        else:
            def_name = methods[name]
            message = {"jsonrpc": "2.0", "method": name, "params": wire}
            if kind == "request":
                message["id"] = 1
        errors = sorted(_validator(rev, def_name).iter_errors(message), key=str)
        assert not errors, (
            f"{rev} {def_name}: {errors[0].message} at {list(errors[0].absolute_path)}\n{json.dumps(message)[:2000]}"
        )
        # And what we emit parses back to the same object.
        assert from_wire(type(obj), json.loads(json.dumps(wire))) == obj
        checked.add(name)
    # Every method of the revision was exercised.
    assert set(methods) <= checked, set(methods) - checked


@pytest.mark.parametrize("rev", HANDSHAKE_REVISIONS)
def test_method_tables_cover_revision(rev: str) -> None:
    defs, _ = _load_defs(rev)
    for method, def_name in _method_defs(defs).items():
        d = defs[def_name]
        params_required = "params" in d.get("required", [])
        if def_name.endswith("Request"):
            assert method in S.REQUEST_TYPES, method
            result_def = def_name[: -len("Request")] + "Result"
            expected = result_def if result_def in defs else "EmptyResult"
            assert S.REQUEST_TYPES[method][1].__name__ == expected, method
        else:
            assert method in S.NOTIFICATION_TYPES, method
        assert (method in S.PARAMS_REQUIRED) == params_required, (rev, method)


def _resolve(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with ``$ref`` followed and ``allOf`` merged (properties and required only)."""
    if "$ref" in node:
        return _resolve(defs, defs[node["$ref"].rsplit("/", 1)[1]])
    if "allOf" in node:
        props: dict[str, Any] = {}
        required: list[str] = []
        for part in node["allOf"]:
            r = _resolve(defs, part)
            props.update(r.get("properties", {}))
            required += r.get("required", [])
        return {"properties": props, "required": required}
    return node


#: Classes the schemas define inline, as a member of another definition.
INLINE: dict[type, tuple[type, str]] = {
    S.RootsCapability: (S.ClientCapabilities, "roots"),
    S.SamplingCapability: (S.ClientCapabilities, "sampling"),
    S.ElicitationCapability: (S.ClientCapabilities, "elicitation"),
    S.TasksCapability: (S.ServerCapabilities, "tasks"),
    S.PromptsCapability: (S.ServerCapabilities, "prompts"),
    S.ResourcesCapability: (S.ServerCapabilities, "resources"),
    S.ToolsCapability: (S.ServerCapabilities, "tools"),
    S.Completion: (S.CompleteResult, "completion"),
    S.CompletionArgument: (S.CompleteRequestParams, "argument"),
    S.CompletionContext: (S.CompleteRequestParams, "context"),
}


def _schema_def_for(defs: dict[str, Any], cls: type) -> dict[str, Any] | None:
    name = cls.__name__
    if cls in INLINE:
        parent_cls, member = INLINE[cls]
        parent = _schema_def_for(defs, parent_cls)
        if parent is None or member not in parent.get("properties", {}):
            return None
        return _resolve(defs, parent["properties"][member])
    if name in defs:
        return _resolve(defs, defs[name])
    for suffix in ("RequestParams", "NotificationParams"):
        if name.endswith(suffix):
            message = defs.get(name[: -len("Params")])
            if message and "params" in message.get("properties", {}):
                return _resolve(defs, message["properties"]["params"])
    return None


def _schema_classes() -> list[type]:
    return sorted(
        {v for v in vars(S).values() if isinstance(v, type) and attrs.has(v)},
        key=lambda c: c.__name__,
    )


def test_declared_members_match_official_schema() -> None:
    """Every member a revision defines is a declared field (not left in ``extra``), and we never
    require a member that some revision leaves optional."""
    from trimcp._sansio.schema._rules import EXTRA, WIRE_NAME, WIRE_REQUIRED, wire_name

    all_defs = [_load_defs(rev)[0] for rev in HANDSHAKE_REVISIONS]
    seen = 0
    for cls in _schema_classes():
        fields = [f for f in attrs.fields(cls) if f.name != EXTRA]
        declared = {f.metadata.get(WIRE_NAME) or wire_name(f.name) for f in fields}
        required = {
            f.metadata.get(WIRE_NAME) or wire_name(f.name)
            for f in fields
            if f.default is attrs.NOTHING or f.metadata.get(WIRE_REQUIRED)
        }
        for rev, defs in zip(HANDSHAKE_REVISIONS, all_defs):
            d = _schema_def_for(defs, cls)
            if d is None or "properties" not in d:
                continue
            seen += 1
            spec_props = set(d["properties"])
            spec_required = set(d.get("required", []))
            assert spec_props <= declared, (rev, cls.__name__, spec_props - declared)
            assert required <= spec_required, (rev, cls.__name__, required - spec_required)
    assert seen > 100
    assert all(_schema_def_for(all_defs[-1], cls) is not None for cls in INLINE)
