"""Tests for the 2026-07-28 (stateless era) part of trimcp._sansio.schema: the official
examples parse and round-trip, what trimcp emits validates against the official schema,
the per-revision method tables, ``parse_result`` dispatch on ``resultType``, the request
envelope, and hypothesis round trips of the multi round-trip types."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import SHARED

from trimcp._sansio import schema as S
from trimcp._sansio.schema import SchemaError, from_wire, to_wire

SPEC = SHARED / "spec"
REV = "2026-07-28"
EXAMPLES = SPEC / REV / "examples"

needs_spec = pytest.mark.skipif(not (SPEC / REV / "schema.json").is_file(), reason=f"{SPEC / REV} not available")


def _load(rev: str) -> tuple[dict[str, Any], str]:
    path = SPEC / rev / "schema.json"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    doc = json.loads(path.read_text(encoding="utf-8"))
    key = "$defs" if "$defs" in doc else "definitions"
    return doc[key], key


def _defs(rev: str = REV) -> dict[str, Any]:
    return _load(rev)[0]


def _validator(def_name: str, rev: str = REV) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    defs, key = _load(rev)
    assert def_name in defs, f"{def_name} not in {rev}"
    schema = {"$ref": f"#/{key}/{def_name}", key: defs}
    cls = jsonschema.Draft202012Validator if key == "$defs" else jsonschema.Draft7Validator
    return cls(schema)


def _assert_valid(def_name: str, value: Any) -> None:
    errors = sorted(_validator(def_name).iter_errors(value), key=str)
    assert not errors, f"{def_name}: {errors[0].message} at {list(errors[0].absolute_path)}\n{json.dumps(value)[:2000]}"


def _method_defs(defs: dict[str, Any]) -> dict[str, str]:
    """method -> the name of its message definition (the first one, for the duplicated
    ``notifications/cancelled``)."""
    out: dict[str, str] = {}
    for name, d in defs.items():
        method = d.get("properties", {}).get("method", {}).get("const")
        if method and name not in ("ClientNotification",):
            out.setdefault(method, name)
    return out


def roundtrip(cls: Any, data: Any) -> Any:
    before = copy.deepcopy(data)
    obj = from_wire(cls, data)
    assert to_wire(obj) == before
    assert data == before
    assert json.loads(json.dumps(to_wire(obj))) == before
    return obj


# --------------------------------------------------------------------------- official examples

#: Error definitions and the code each one fixes.
ERROR_CODES = {
    "HeaderMismatchError": -32020,
    "MissingRequiredClientCapabilityError": -32021,
    "UnsupportedProtocolVersionError": -32022,
    "InternalError": -32603,
    "InvalidParamsError": -32602,
    "MethodNotFoundError": -32601,
    "ParseError": -32700,
}
#: Primitive schema definitions of elicitation (kept as plain dicts in ``requestedSchema``).
PRIMITIVE_SCHEMAS = {
    "BooleanSchema",
    "NumberSchema",
    "StringSchema",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
}
#: Examples that contradict the spec text: (directory, file) -> the strict parse_result error.
#: The result of ``resources/read`` is complete but has no cache hints, which the caching
#: page and the ``ReadResourceResult`` definition require; the response definition still
#: accepts it because ``InputRequiredResult`` requires only ``resultType``.
KNOWN_BAD_EXAMPLES = {
    ("ReadResourceResultResponse", "read-resource-result-response.json"): ("result.ttlMs: required member missing"),
}


def _example_files() -> list[Path]:
    if not EXAMPLES.is_dir():
        return []
    return sorted(EXAMPLES.glob("*/*.json"))


EXAMPLE_FILES = _example_files()


def _method_of(defs: dict[str, Any], prefix: str) -> str:
    method: str = defs[prefix + "Request"]["properties"]["method"]["const"]
    return method


def check_example(name: str, file: str, data: Any) -> str:
    """Parse one example with the class its directory names, check the round trip and that
    what we emit validates against the directory's definition.  Returns how it was parsed."""
    defs = _defs()
    if name in ERROR_CODES:
        error = data.get("error", data)
        obj = roundtrip(S.Error, error)
        assert obj.code == ERROR_CODES[name]
        typed = obj.typed_data()
        if type(typed) in S.ERROR_DATA_TYPES.values():
            assert to_wire(typed) == error["data"]
        emitted: Any = {**data, "error": to_wire(obj)} if "error" in data else to_wire(obj)
        how = "Error" + (f" + {type(typed).__name__}" if typed is not obj.data else "")
    elif name.endswith("ResultResponse"):
        cls_name = name[: -len("Response")]
        obj = roundtrip(getattr(S, cls_name), data["result"])
        method = _method_of(defs, name[: -len("ResultResponse")])
        known = KNOWN_BAD_EXAMPLES.get((name, file))
        if known is None:
            assert S.parse_result(method, data["result"], revision=REV) == obj
        else:
            with pytest.raises(SchemaError) as info:
                S.parse_result(method, data["result"], revision=REV)
            assert str(info.value) == known
            assert S.parse_result(method, data["result"], revision=REV, strict=False) == obj
        emitted = {**data, "result": to_wire(obj)}
        how = f"{cls_name} (result of {method})"
    elif name.endswith("Request") and "jsonrpc" in data:
        params = S.parse_request_params(data["method"], data.get("params"), revision=REV)
        expected = getattr(S, name + "Params", None)
        if isinstance(expected, type):
            assert isinstance(params, expected)
        emitted = {**data, "params": to_wire(params)}
        how = f"{type(params).__name__} (params of {data['method']})"
    elif name.endswith("Request"):
        # 2026-07-28 has no server-to-client JSON-RPC requests: these are input requests.
        obj = roundtrip(S.InputRequest, data)
        emitted = to_wire(obj)
        assert type(obj) is S.INPUT_REQUEST_TYPES[data["method"]][0]
        how = f"InputRequest -> {type(obj).__name__}"
    elif name.endswith("Notification"):
        params = S.parse_notification_params(data["method"], data.get("params"), revision=REV)
        wire = to_wire(params)
        emitted = {**data, "params": wire} if "params" in data else dict(data)
        if "params" not in data:
            assert wire == {}
        how = f"{type(params).__name__} (params of {data['method']})"
    elif name in PRIMITIVE_SCHEMAS:
        form = {
            "mode": "form",
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {"p": data}},
        }
        obj = roundtrip(S.ElicitRequestFormParams, form)
        emitted = to_wire(obj)["requestedSchema"]["properties"]["p"]
        how = "ElicitRequestFormParams.requestedSchema property"
    else:
        cls = getattr(S, name)
        obj = roundtrip(cls, data)
        emitted = to_wire(obj)
        how = name
        if isinstance(obj, S.RequestParams) and obj.meta and S.PROTOCOL_VERSION_META in obj.meta:
            assert isinstance(S.envelope(obj.meta), S.Envelope)
    assert emitted == data
    _assert_valid(name, emitted)
    return how


@needs_spec
@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[f"{p.parent.name}/{p.name}" for p in EXAMPLE_FILES])
def test_official_example_parses_and_round_trips(path: Path) -> None:
    check_example(path.parent.name, path.name, json.loads(path.read_text(encoding="utf-8")))


@needs_spec
def test_every_example_directory_has_a_class() -> None:
    assert len(EXAMPLE_FILES) >= 100
    for directory in sorted({p.parent.name for p in EXAMPLE_FILES}):
        handled = (
            directory in ERROR_CODES
            or directory in PRIMITIVE_SCHEMAS
            or directory.endswith(("Request", "Notification", "ResultResponse"))
            or hasattr(S, directory)
        )
        assert handled, directory
    for directory, file in KNOWN_BAD_EXAMPLES:
        assert (EXAMPLES / directory / file).is_file(), "a known bad example went away"


# --------------------------------------------------------------------------- what we emit

IMPL = S.Implementation(
    name="trimcp",
    version="0.1",
    title="trimcp",
    icons=[S.Icon(src="https://x/i.png", mime_type="image/png", sizes=["48x48"], theme="dark")],
    website_url="https://x",
)
CLIENT_CAPS = S.ClientCapabilities(
    roots=S.RootsCapability(),
    sampling=S.SamplingCapability(tools={}),
    elicitation=S.ElicitationCapability(form={}, url={}),
    extensions={"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
)
ENVELOPE = S.Envelope(
    protocol_version=REV,
    client_capabilities=CLIENT_CAPS,
    client_info=IMPL,
    log_level="info",
    progress_token="p1",
    extra={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"},
)
META = ENVELOPE.to_meta()
RESULT_META = {S.SERVER_INFO_META: to_wire(IMPL)}
CACHE: dict[str, Any] = {"ttl_ms": 60_000, "cache_scope": "public", "result_type": "complete"}
TOOL = S.Tool(
    name="sql",
    title="SQL",
    description="run a query",
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", S.X_MCP_HEADER: "Region"},
            "query": {"type": "string"},
        },
        "required": ["region", "query"],
    },
    output_schema={"type": "array", "items": {"type": "object"}},
    annotations=S.ToolAnnotations(read_only_hint=True),
    icons=IMPL.icons,
    meta={"io.example/k": 1},
)
FORM = S.ElicitRequestFormParams(
    mode="form",
    message="Your name?",
    requested_schema={
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name"}},
        "required": ["name"],
    },
)
INPUT_REQUESTS: dict[str, Any] = {
    "form": S.ElicitInputRequest(params=FORM),
    "url": S.ElicitInputRequest(params=S.ElicitRequestURLParams(message="Sign in", url="https://x/login")),
    "llm": S.CreateMessageInputRequest(
        params=S.CreateMessageRequestParams(
            messages=[S.SamplingMessage(role="user", content=S.TextContent(text="2+2?"))],
            max_tokens=10,
            system_prompt="be brief",
            tools=[TOOL],
            tool_choice=S.ToolChoice(mode="auto"),
        )
    ),
    "roots": S.ListRootsInputRequest(),
}
INPUT_RESPONSES: dict[str, Any] = {
    "form": S.ElicitResult(action="accept", content={"name": "octocat", "age": 3}),
    "url": S.ElicitResult(action="accept"),
    "llm": S.CreateMessageResult(role="assistant", content=S.TextContent(text="4"), model="m", stop_reason="endTurn"),
    "roots": S.ListRootsResult(roots=[S.Root(uri="file:///work", name="work")]),
}
RETRY: dict[str, Any] = {"input_responses": INPUT_RESPONSES, "request_state": "opaque=="}
INPUT_REQUIRED = S.InputRequiredResult(input_requests=INPUT_REQUESTS, request_state="opaque==", meta=RESULT_META)


def modern_samples() -> list[tuple[str, str, Any]]:
    """``(kind, method or definition, object)`` that trimcp emits under 2026-07-28.

    kind "request" / "notification": wrapped into a JSON-RPC message and checked against the
    method's definition; "result": checked against the definition named like its class and
    parsed back with ``parse_result(method, ..., revision=REV)``; "input": an input request,
    checked against its definition; "error": a JSON-RPC error response.
    """
    text = S.TextContent(text="hi", annotations=S.Annotations(audience=["user"], priority=0.5))
    resource = S.Resource(uri="file:///a", name="a", mime_type="text/plain", size=1)
    template = S.ResourceTemplate(uri_template="file:///{path}", name="files")
    prompt = S.Prompt(name="greet", title="Greet", arguments=[S.PromptArgument(name="who", required=True)])
    acknowledged = S.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["file:///a"])
    sub_meta = {S.SUBSCRIPTION_ID_META: "listen-1"}
    return [
        ("request", "server/discover", S.DiscoverRequestParams(meta=META)),
        (
            "result",
            "server/discover",
            S.DiscoverResult(
                supported_versions=[REV, "2025-11-25"],
                capabilities=S.ServerCapabilities(
                    tools=S.ToolsCapability(list_changed=True),
                    prompts=S.PromptsCapability(),
                    resources=S.ResourcesCapability(subscribe=True, list_changed=True),
                    completions={},
                    logging={},
                    extensions={"io.modelcontextprotocol/tasks": {}},
                ),
                instructions="Prefer sql for data.",
                meta=RESULT_META,
                **CACHE,
            ),
        ),
        ("request", "tools/list", S.PaginatedRequestParams(meta=META, cursor="c1")),
        (
            "result",
            "tools/list",
            S.ListToolsResult(tools=[TOOL], next_cursor="c2", meta=RESULT_META, **CACHE),
        ),
        ("request", "tools/call", S.CallToolRequestParams(meta=META, name="sql", arguments={})),
        (
            "request",
            "tools/call",
            S.CallToolRequestParams(meta=META, name="sql", arguments={"q": 1}, **RETRY),
        ),
        (
            "result",
            "tools/call",
            S.CallToolResult(
                content=[text, S.ResourceLink(uri="file:///a", name="a")],
                structured_content=[{"id": 1}, {"id": 2}],
                is_error=False,
                result_type="complete",
            ),
        ),
        ("result", "tools/call", INPUT_REQUIRED),
        ("result", "prompts/get", S.InputRequiredResult(request_state="s")),
        ("request", "prompts/list", S.PaginatedRequestParams(meta=META)),
        ("result", "prompts/list", S.ListPromptsResult(prompts=[prompt], **CACHE)),
        (
            "request",
            "prompts/get",
            S.GetPromptRequestParams(meta=META, name="greet", arguments={"who": "x"}, **RETRY),
        ),
        (
            "result",
            "prompts/get",
            S.GetPromptResult(
                messages=[S.PromptMessage(role="user", content=text)],
                description="d",
                result_type="complete",
            ),
        ),
        ("request", "resources/list", S.PaginatedRequestParams(meta=META)),
        ("result", "resources/list", S.ListResourcesResult(resources=[resource], **CACHE)),
        ("request", "resources/templates/list", S.PaginatedRequestParams(meta=META)),
        (
            "result",
            "resources/templates/list",
            S.ListResourceTemplatesResult(resource_templates=[template], **CACHE),
        ),
        ("request", "resources/read", S.ReadResourceRequestParams(meta=META, uri="file:///a")),
        (
            "request",
            "resources/read",
            S.ReadResourceRequestParams(meta=META, uri="file:///a", **RETRY),
        ),
        (
            "result",
            "resources/read",
            S.ReadResourceResult(
                contents=[
                    S.TextResourceContents(uri="file:///a", text="a"),
                    S.BlobResourceContents(uri="file:///b", blob="AA=="),
                ],
                **{**CACHE, "cache_scope": "private"},
            ),
        ),
        ("result", "resources/read", S.InputRequiredResult(input_requests=INPUT_REQUESTS)),
        (
            "request",
            "completion/complete",
            S.CompleteRequestParams(
                meta=META,
                ref=S.PromptReference(name="greet"),
                argument=S.CompletionArgument(name="who", value="a"),
                context=S.CompletionContext(arguments={"x": "y"}),
            ),
        ),
        (
            "result",
            "completion/complete",
            S.CompleteResult(
                completion=S.Completion(values=["alice"], total=1, has_more=False),
                result_type="complete",
            ),
        ),
        (
            "request",
            "subscriptions/listen",
            S.SubscriptionsListenRequestParams(
                meta=META,
                notifications=S.SubscriptionFilter(
                    tools_list_changed=True,
                    prompts_list_changed=True,
                    resources_list_changed=False,
                    resource_subscriptions=["file:///a"],
                ),
            ),
        ),
        (
            "result",
            "subscriptions/listen",
            S.SubscriptionsListenResult(meta={**sub_meta, **RESULT_META}, result_type="complete"),
        ),
        (
            "notification",
            "notifications/subscriptions/acknowledged",
            S.SubscriptionsAcknowledgedNotificationParams(meta=sub_meta, notifications=acknowledged),
        ),
        ("notification", "notifications/tools/list_changed", S.NotificationParams(meta=sub_meta)),
        ("notification", "notifications/prompts/list_changed", S.NotificationParams()),
        (
            "notification",
            "notifications/resources/list_changed",
            S.NotificationParams(meta=sub_meta),
        ),
        (
            "notification",
            "notifications/resources/updated",
            S.ResourceUpdatedNotificationParams(uri="file:///a", meta=sub_meta),
        ),
        (
            "notification",
            "notifications/cancelled",
            S.CancelledNotificationParams(request_id="listen-1", reason="done"),
        ),
        (
            "notification",
            "notifications/progress",
            S.ProgressNotificationParams(progress_token="p1", progress=0.5, total=1, message="m"),
        ),
        (
            "notification",
            "notifications/message",
            S.LoggingMessageNotificationParams(level="warning", data={"k": [1]}, logger="db"),
        ),
        *[("input", type(r).__name__, r) for r in INPUT_REQUESTS.values()],
        (
            "error",
            "MissingRequiredClientCapabilityError",
            S.Error(
                code=-32021,
                message="needs elicitation",
                data=to_wire(
                    S.MissingRequiredClientCapabilityErrorData(
                        required_capabilities=S.ClientCapabilities(elicitation=S.ElicitationCapability())
                    )
                ),
            ),
        ),
        (
            "error",
            "UnsupportedProtocolVersionError",
            S.Error(
                code=-32022,
                message="Unsupported protocol version",
                data=to_wire(
                    S.UnsupportedProtocolVersionErrorData(supported=[REV, "2025-11-25"], requested="1900-01-01")
                ),
            ),
        ),
        ("error", "HeaderMismatchError", S.Error(code=-32020, message="Mcp-Name mismatch")),
    ]


INPUT_DEFS = {
    "ElicitInputRequest": "ElicitRequest",
    "CreateMessageInputRequest": "CreateMessageRequest",
    "ListRootsInputRequest": "ListRootsRequest",
}


@needs_spec
def test_emitted_objects_match_official_schema() -> None:
    methods = _method_defs(_defs())
    checked: set[str] = set()
    for kind, name, obj in modern_samples():
        wire = to_wire(obj)
        message: Any
        if kind == "result":
            def_name = type(obj).__name__
            message = wire
            assert S.parse_result(name, json.loads(json.dumps(wire)), revision=REV) == obj
            checked.add(name)
        elif kind == "input":
            def_name = INPUT_DEFS[name]
            message = wire
            checked.add(wire["method"])
        elif kind == "error":
            def_name = name
            message = {"jsonrpc": "2.0", "id": 1, "error": wire}
            if obj.data is not None:
                assert to_wire(obj.typed_data()) == obj.data
        else:
            def_name = methods[name]
            message = {"jsonrpc": "2.0", "method": name, "params": wire}
            if kind == "request":
                message["id"] = 1
                parsed = S.parse_request_params(name, json.loads(json.dumps(wire)), revision=REV)
            else:
                parsed = S.parse_notification_params(name, json.loads(json.dumps(wire)), revision=REV)
            assert parsed == obj
            checked.add(name)
        _assert_valid(def_name, message)
        assert from_wire(type(obj), json.loads(json.dumps(wire))) == obj
    assert set(methods) <= checked, set(methods) - checked


# --------------------------------------------------------------------------- method tables


@needs_spec
@pytest.mark.parametrize("rev", S.REVISIONS)
def test_method_tables_match_each_revision(rev: str) -> None:
    defs = _defs(rev)
    requests: set[str] = set()
    notifications: set[str] = set()
    required: set[str] = set()
    input_requests: set[str] = set()
    for name, d in defs.items():
        method = d.get("properties", {}).get("method", {}).get("const")
        if not method or name == "ClientNotification":
            continue
        is_rpc = "jsonrpc" in d.get("required", [])
        if name.endswith("Request") and not is_rpc and rev == REV:
            input_requests.add(method)
            continue
        (requests if name.endswith("Request") else notifications).add(method)
        if "params" in d.get("required", []):
            required.add(method)
        if name.endswith("Request"):
            result_def = name[: -len("Request")] + "Result"
            expected = result_def if result_def in defs else "EmptyResult"
            assert S.request_types(rev)[method][1].__name__ == expected, (rev, method)
    assert set(S.request_types(rev)) == requests
    assert set(S.notification_types(rev)) == notifications
    assert S.params_required(rev) == required
    if rev == REV:
        assert set(S.INPUT_REQUEST_TYPES) == input_requests


def test_revision_tables() -> None:
    modern = S.request_types(REV)
    assert modern["server/discover"] == (S.DiscoverRequestParams, S.DiscoverResult)
    assert modern["tools/call"] == (S.CallToolRequestParams, S.CallToolResult)
    for gone in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "tasks/get"):
        assert gone not in modern and gone in S.REQUEST_TYPES
    assert "sampling/createMessage" not in modern  # an input request now
    assert "notifications/initialized" not in S.notification_types(REV)
    assert "notifications/roots/list_changed" not in S.notification_types(REV)
    assert "elicitation/create" not in S.request_types("2025-03-26")
    assert "elicitation/create" in S.request_types("2025-06-18")
    assert "tasks/get" in S.request_types("2025-11-25")
    assert "tasks/get" not in S.request_types("2025-06-18")
    assert S.params_required(REV) >= set(modern)
    with pytest.raises(TypeError):
        modern["x"] = (S.RequestParams, S.Result)  # type: ignore[index]
    with pytest.raises(ValueError, match="unknown MCP revision '2099-01-01'"):
        S.request_types("2099-01-01")
    with pytest.raises(ValueError):
        S.notification_types("")
    with pytest.raises(ValueError):
        S.params_required("1.0")
    assert S.REVISIONS == (*S.HANDSHAKE_REVISIONS, S.MODERN_REVISION)
    assert S.MRTR_METHODS == {"tools/call", "prompts/get", "resources/read"}
    assert S.CACHEABLE_METHODS <= set(modern)


# --------------------------------------------------------------------------- parse_result


def test_parse_result_dispatches_on_result_type() -> None:
    complete = S.parse_result("tools/call", {"resultType": "complete", "content": []}, None, REV)
    assert complete == S.CallToolResult(content=[], result_type="complete")
    for method in sorted(S.MRTR_METHODS):
        res = S.parse_result(method, {"resultType": "input_required", "requestState": "s"}, None, REV)
        assert res == S.InputRequiredResult(request_state="s")
    listen = S.parse_result(
        "subscriptions/listen",
        {"resultType": "complete", "_meta": {S.SUBSCRIPTION_ID_META: 7}},
        revision=REV,
    )
    assert isinstance(listen, S.SubscriptionsListenResult) and listen.subscription_id == 7


@pytest.mark.parametrize(
    ("method", "result", "message"),
    [
        ("tools/call", {"content": []}, "result.resultType: required member missing"),
        (
            "tools/call",
            {"resultType": "task", "content": []},
            'result.resultType: expected one of "complete", "input_required", got "task"',
        ),
        (
            "tools/call",
            {"resultType": 1, "content": []},
            "result.resultType: expected string, got integer",
        ),
        (
            "tools/list",
            {"resultType": "input_required", "requestState": "s"},
            'result.resultType: "input_required" is not allowed in a result of tools/list',
        ),
        (
            "tools/call",
            {"resultType": "input_required"},
            "result: an InputRequiredResult needs inputRequests or requestState",
        ),
        (
            "tools/call",
            {"resultType": "input_required", "inputRequests": {"k": {"method": "ping"}}},
            (
                'result.inputRequests.k.method: expected one of "elicitation/create", '
                '"sampling/createMessage", "roots/list", got "ping"'
            ),
        ),
        (
            "tools/call",
            {
                "resultType": "input_required",
                "inputRequests": {"k": {"method": "sampling/createMessage", "params": {}}},
            },
            "result.inputRequests.k.params.messages: required member missing",
        ),
        (
            "tools/list",
            {"resultType": "complete", "tools": [], "cacheScope": "public"},
            "result.ttlMs: required member missing",
        ),
        (
            "tools/list",
            {"resultType": "complete", "tools": [], "ttlMs": 5},
            "result.cacheScope: required member missing",
        ),
        (
            "resources/read",
            {"resultType": "complete", "contents": [], "ttlMs": -1, "cacheScope": "public"},
            "result.ttlMs: expected integer >= 0, got -1",
        ),
        (
            "server/discover",
            {
                "resultType": "complete",
                "supportedVersions": [REV],
                "capabilities": {},
                "ttlMs": 0,
                "cacheScope": "shared",
            },
            'result.cacheScope: expected one of "public", "private", got "shared"',
        ),
        (
            "tools/call",
            {
                "resultType": "complete",
                "content": [],
                "_meta": {S.SERVER_INFO_META: {"name": "s"}},
            },
            'result._meta["io.modelcontextprotocol/serverInfo"].version: required member missing',
        ),
        (
            "subscriptions/listen",
            {"resultType": "complete", "_meta": {}},
            'result._meta["io.modelcontextprotocol/subscriptionId"]: required member missing',
        ),
        (
            "subscriptions/listen",
            {"resultType": "complete", "_meta": {S.SUBSCRIPTION_ID_META: None}},
            ('result._meta["io.modelcontextprotocol/subscriptionId"]: expected integer or string, got null'),
        ),
        (
            "subscriptions/listen",
            {"resultType": "complete"},
            "result._meta: required member missing",
        ),
        ("tools/call", [], "result: expected object, got array"),
    ],
)
def test_parse_result_errors(method: str, result: Any, message: str) -> None:
    with pytest.raises(SchemaError) as info:
        S.parse_result(method, result, revision=REV)
    assert str(info.value) == message


def test_parse_result_lenient_client() -> None:
    # A client must read an absent resultType as "complete"; cache hints become optional.
    res = S.parse_result("tools/list", {"tools": []}, revision=REV, strict=False)
    assert res == S.ListToolsResult(tools=[]) and res.cache_ttl_ms == 0
    res = S.parse_result("resources/read", {"contents": [], "ttlMs": -5}, revision=REV, strict=False)
    assert res.cache_ttl_ms == 0
    with pytest.raises(SchemaError, match="resultType: expected one of"):
        S.parse_result("tools/list", {"resultType": "x", "tools": []}, revision=REV, strict=False)


def test_parse_result_per_revision() -> None:
    array = {"content": [], "structuredContent": [1]}
    assert S.parse_result("tools/call", array).structured_content == [1]
    assert S.parse_result("tools/call", {**array, "resultType": "complete"}, None, REV)
    for rev in S.HANDSHAKE_REVISIONS:
        with pytest.raises(SchemaError, match=r"^result\.structuredContent: expected object"):
            S.parse_result("tools/call", array, revision=rev)
        assert S.parse_result("tools/call", {"content": []}, revision=rev).result_type is None
    # Task augmentation exists in 2025-11-25 (and the union) only.
    task_params = S.CallToolRequestParams(name="t", task=S.TaskMetadata())
    assert S.result_class("tools/call", task_params) is S.CreateTaskResult
    assert S.result_class("tools/call", task_params, "2025-11-25") is S.CreateTaskResult
    assert S.result_class("tools/call", task_params, "2025-06-18") is S.CallToolResult
    assert S.result_class("tools/call", task_params, REV) is S.CallToolResult
    with pytest.raises(KeyError):
        S.parse_result("initialize", {}, revision=REV)
    with pytest.raises(KeyError):
        S.parse_result("server/discover", {}, revision="2025-11-25")
    with pytest.raises(KeyError):
        S.result_class("elicitation/create", revision="2025-03-26")


# --------------------------------------------------------------------------- params


def test_parse_request_params_checks_the_envelope() -> None:
    params = S.parse_request_params(
        "tools/call",
        {
            "_meta": META,
            "name": "t",
            "inputResponses": {"a": {"action": "decline"}, "b": {"roots": []}},
            "requestState": "st",
        },
        revision=REV,
    )
    assert isinstance(params, S.CallToolRequestParams)
    assert params.input_responses == {
        "a": S.ElicitResult(action="decline"),
        "b": S.ListRootsResult(roots=[]),
    }
    assert params.request_state == "st"
    assert S.envelope(params.meta) == ENVELOPE
    cases: list[tuple[str, Any, str]] = [
        ("tools/list", None, "params: required member missing"),
        ("tools/list", {}, "params._meta: required member missing"),
        (
            "tools/list",
            {"_meta": {S.CLIENT_CAPABILITIES_META: {}}},
            'params._meta["io.modelcontextprotocol/protocolVersion"]: required member missing',
        ),
        (
            "server/discover",
            {"_meta": {S.PROTOCOL_VERSION_META: REV, S.CLIENT_CAPABILITIES_META: []}},
            (
                'params._meta["io.modelcontextprotocol/clientCapabilities"]: '
                "expected object (ClientCapabilities), got array"
            ),
        ),
        (
            "tools/call",
            {"_meta": META, "name": "t", "inputResponses": {"a": "yes"}},
            "params.inputResponses.a: expected object, got string",
        ),
        (
            "tools/call",
            {"_meta": META, "name": "t", "inputResponses": {"a": {"action": "maybe"}}},
            ('params.inputResponses.a.action: expected one of "accept", "decline", "cancel", got "maybe"'),
        ),
    ]
    for method, raw, message in cases:
        with pytest.raises(SchemaError) as info:
            S.parse_request_params(method, raw, revision=REV)
        assert str(info.value) == message
    # 2025-11-25 URL elicitations keep their required elicitationId.
    url = {"mode": "url", "message": "m", "url": "https://x"}
    with pytest.raises(SchemaError, match=r"^params\.elicitationId: required member missing$"):
        S.parse_request_params("elicitation/create", url, revision="2025-11-25")
    assert S.parse_request_params("elicitation/create", url) == S.ElicitRequestURLParams(message="m", url="https://x")
    # Handshake revisions: no envelope, and their own method set.
    assert S.parse_request_params("ping", None, revision="2025-11-25") == S.RequestParams()
    with pytest.raises(KeyError):
        S.parse_request_params("ping", None, revision=REV)
    with pytest.raises(KeyError):
        S.parse_request_params("subscriptions/listen", {}, revision="2025-11-25")


def test_parse_notification_params_per_revision() -> None:
    ok = S.parse_notification_params("notifications/tools/list_changed", {"_meta": {S.SUBSCRIPTION_ID_META: 3}}, REV)
    assert S.subscription_id(ok.meta) == 3
    assert S.parse_notification_params("notifications/tools/list_changed", None, REV)
    with pytest.raises(SchemaError) as info:
        S.parse_notification_params(
            "notifications/resources/updated",
            {"uri": "u", "_meta": {S.SUBSCRIPTION_ID_META: True}},
            REV,
        )
    assert str(info.value) == (
        'params._meta["io.modelcontextprotocol/subscriptionId"]: expected integer or string, got boolean'
    )
    with pytest.raises(SchemaError, match=r"^params: required member missing$"):
        S.parse_notification_params("notifications/subscriptions/acknowledged", None, REV)
    with pytest.raises(KeyError):
        S.parse_notification_params("notifications/initialized", None, REV)
    with pytest.raises(KeyError):
        S.parse_notification_params("notifications/elicitation/complete", {}, "2025-06-18")


# --------------------------------------------------------------------------- envelope


def test_envelope_reads_the_reserved_keys() -> None:
    minimal = {S.PROTOCOL_VERSION_META: REV, S.CLIENT_CAPABILITIES_META: {}}
    env = S.envelope(minimal)
    assert env == S.Envelope(protocol_version=REV, client_capabilities=S.ClientCapabilities())
    assert isinstance(env, S.Envelope) and env.to_meta() == minimal
    assert env.client_info is None and env.log_level is None
    assert S.envelope(META) == ENVELOPE
    assert to_wire(ENVELOPE) == META == ENVELOPE.to_meta()
    assert META[S.CLIENT_INFO_META] == to_wire(IMPL)
    assert META[S.LOG_LEVEL_META] == "info" and META["progressToken"] == "p1"
    assert ENVELOPE.extra == {"traceparent": META["traceparent"]}
    assert (
        S.PROTOCOL_VERSION_META,
        S.CLIENT_CAPABILITIES_META,
        S.CLIENT_INFO_META,
        S.LOG_LEVEL_META,
        S.SUBSCRIPTION_ID_META,
        S.SERVER_INFO_META,
    ) == tuple(
        "io.modelcontextprotocol/" + k
        for k in (
            "protocolVersion",
            "clientCapabilities",
            "clientInfo",
            "logLevel",
            "subscriptionId",
            "serverInfo",
        )
    )


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (None, "required member missing"),
        ([], "expected object (Envelope), got array"),
        ({}, '["io.modelcontextprotocol/protocolVersion"]: required member missing'),
        (
            {S.PROTOCOL_VERSION_META: 20260728, S.CLIENT_CAPABILITIES_META: {}},
            '["io.modelcontextprotocol/protocolVersion"]: expected string, got integer',
        ),
        (
            {S.PROTOCOL_VERSION_META: REV},
            '["io.modelcontextprotocol/clientCapabilities"]: required member missing',
        ),
        (
            {
                S.PROTOCOL_VERSION_META: REV,
                S.CLIENT_CAPABILITIES_META: {"roots": True},
            },
            ('["io.modelcontextprotocol/clientCapabilities"].roots: expected object (RootsCapability), got boolean'),
        ),
        (
            {
                S.PROTOCOL_VERSION_META: REV,
                S.CLIENT_CAPABILITIES_META: {},
                S.CLIENT_INFO_META: {"name": "c"},
            },
            '["io.modelcontextprotocol/clientInfo"].version: required member missing',
        ),
        (
            {
                S.PROTOCOL_VERSION_META: REV,
                S.CLIENT_CAPABILITIES_META: {},
                S.LOG_LEVEL_META: "verbose",
            },
            (
                '["io.modelcontextprotocol/logLevel"]: expected one of "debug", "info", "notice", '
                '"warning", "error", "critical", "alert", "emergency", got "verbose"'
            ),
        ),
    ],
)
def test_envelope_returns_the_problem(meta: Any, message: str) -> None:
    problem = S.envelope(meta)
    assert isinstance(problem, SchemaError)
    assert str(problem) == message


def test_meta_readers() -> None:
    assert S.server_info(None) is None and S.server_info({}) is None
    assert S.server_info(RESULT_META) == IMPL
    with pytest.raises(SchemaError, match="serverInfo"):
        S.server_info({S.SERVER_INFO_META: []})
    assert S.subscription_id({S.SUBSCRIPTION_ID_META: "a"}) == "a"
    assert S.subscription_id(None) is None
    with pytest.raises(SchemaError):
        S.subscription_id({S.SUBSCRIPTION_ID_META: 1.5})


# --------------------------------------------------------------------------- new types


def test_discover_result() -> None:
    data: dict[str, Any] = {
        "resultType": "complete",
        "supportedVersions": [REV],
        "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "_meta": {S.SERVER_INFO_META: {"name": "s", "version": "1"}},
        "ttlMs": 10,
        "cacheScope": "public",
    }
    res = roundtrip(S.DiscoverResult, data)
    assert res.capabilities.extensions == {"io.modelcontextprotocol/tasks": {}}
    assert res.capabilities.extra == {}
    assert S.server_info(res.meta) == S.Implementation(name="s", version="1")
    assert res.cache_ttl_ms == 10 and res.cache_scope == "public"
    assert isinstance(res, S.CacheableResult)
    assert isinstance(S.ListToolsResult(tools=[]), S.CacheableResult)
    assert S.DiscoverRequestParams is S.RequestParams


def test_subscription_filter() -> None:
    f = S.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["file:///a"])
    assert f.wants("notifications/tools/list_changed")
    assert not f.wants("notifications/prompts/list_changed")
    assert not f.wants("notifications/resources/list_changed")
    assert f.wants("notifications/resources/updated", "file:///a")
    assert not f.wants("notifications/resources/updated", "file:///b")
    assert not f.wants("notifications/resources/updated")
    assert not f.wants("notifications/message")
    assert not S.SubscriptionFilter().wants("notifications/resources/updated", "file:///a")
    with pytest.raises(SchemaError, match="subscriptionId"):
        from_wire(S.SubscriptionsListenResult, {"_meta": {}})
    assert S.SubscriptionsListenResult(meta={}).subscription_id is None


def test_input_required_result() -> None:
    wire = to_wire(INPUT_REQUIRED)
    assert wire["resultType"] == "input_required"
    assert set(wire["inputRequests"]) == {"form", "url", "llm", "roots"}
    assert wire["inputRequests"]["roots"] == {"method": "roots/list"}
    assert from_wire(S.InputRequiredResult, wire) == INPUT_REQUIRED
    # The default resultType is the only one allowed.
    assert to_wire(S.InputRequiredResult(request_state="s")) == {
        "resultType": "input_required",
        "requestState": "s",
    }
    with pytest.raises(SchemaError) as info:
        from_wire(S.InputRequiredResult, {"resultType": "complete", "requestState": "s"})
    assert str(info.value) == 'resultType: expected one of "input_required", got "complete"'
    with pytest.raises(SchemaError, match=r"^resultType: required member missing$"):
        from_wire(S.InputRequiredResult, {"requestState": "s"})
    # ``roots/list`` may come with or without params; the others need them.
    with_params = {"method": "roots/list", "params": {"_meta": {"k": 1}}}
    assert roundtrip(S.InputRequest, with_params) == S.ListRootsInputRequest(params=S.RequestParams(meta={"k": 1}))
    with pytest.raises(SchemaError, match=r"^params: required member missing$"):
        from_wire(S.InputRequest, {"method": "elicitation/create"})
    with pytest.raises(SchemaError, match=r"^method: required member missing$"):
        from_wire(S.InputRequest, {"params": {}})
    # Maps of objects come out through to_wire too.
    assert to_wire(INPUT_REQUESTS) == wire["inputRequests"]
    assert from_wire(S.InputRequests, wire["inputRequests"]) == INPUT_REQUESTS


def test_input_responses() -> None:
    wire = to_wire(INPUT_RESPONSES)
    assert wire["url"] == {"action": "accept"}
    assert "resultType" not in json.dumps(wire)
    assert from_wire(S.InputResponses, wire) == INPUT_RESPONSES
    assert S.input_response(INPUT_RESPONSES, "form", S.ElicitResult) == INPUT_RESPONSES["form"]
    assert S.input_response(INPUT_RESPONSES, "form", S.ListRootsResult) is None
    assert S.input_response(INPUT_RESPONSES, "nope", S.ElicitResult) is None
    assert S.input_response(None, "form", S.ElicitResult) is None
    # Told apart by members; an elicitation's ``content`` does not make it a sampling result.
    assert from_wire(S.InputResponse, {"action": "accept", "content": {"a": 1}}) == (
        S.ElicitResult(action="accept", content={"a": 1})
    )
    sampled = from_wire(S.InputResponse, {"role": "user", "content": [], "model": "m"})
    assert isinstance(sampled, S.CreateMessageResult)
    with pytest.raises(SchemaError, match=r"^model: required member missing$"):
        from_wire(S.InputResponse, {"role": "user", "content": {"type": "text", "text": ""}})
    # Unrecognised answers are kept, for the server to ignore.
    odd = roundtrip(S.InputResponses, {"x": {"answer": 42}, "y": {}})
    assert odd == {
        "x": S.UnknownInputResponse(raw={"answer": 42}),
        "y": S.UnknownInputResponse(raw={}),
    }
    with pytest.raises(SchemaError, match=r"^x: expected object, got array$"):
        from_wire(S.InputResponses, {"x": []})


def test_error_data() -> None:
    data: dict[str, Any] = {"requiredCapabilities": {"sampling": {"tools": {}}}}
    typed = S.parse_error_data(-32021, data)
    assert typed == S.MissingRequiredClientCapabilityErrorData(
        required_capabilities=S.ClientCapabilities(sampling=S.SamplingCapability(tools={}))
    )
    version = S.parse_error_data(-32022, {"supported": [REV], "requested": "1"})
    assert version == S.UnsupportedProtocolVersionErrorData(supported=[REV], requested="1")
    url = S.parse_error_data(-32042, {"elicitations": [{"mode": "url", "message": "m", "url": "https://x"}]})
    assert isinstance(url, S.URLElicitationRequiredErrorData)
    assert S.parse_error_data(-32020, None) is None
    assert S.parse_error_data(-32601, {"reason": "x"}) == {"reason": "x"}
    with pytest.raises(SchemaError, match=r"^data: required member missing$"):
        S.parse_error_data(-32022, None)
    with pytest.raises(SchemaError, match=r"^data\.supported: required member missing$"):
        S.parse_error_data(-32022, {"requested": "1"})
    err = roundtrip(S.Error, {"code": -32021, "message": "m", "data": data})
    assert err.typed_data() == typed
    assert roundtrip(S.Error, {"code": -32603, "message": "m"}).data is None


def test_2026_members() -> None:
    # elicitationId is gone in 2026-07-28 (and required in 2025-11-25 only).
    url = roundtrip(S.ElicitRequestParams, {"mode": "url", "message": "m", "url": "https://x"})
    assert isinstance(url, S.ElicitRequestURLParams) and url.elicitation_id is None
    # x-mcp-header is an ordinary JSON Schema keyword of inputSchema.
    tool = roundtrip(S.Tool, to_wire(TOOL))
    assert tool.input_schema["properties"]["region"][S.X_MCP_HEADER] == "Region"
    # structuredContent may be any JSON value.
    for value in ([1, 2], "s", 3, True, {"a": None}):
        res = roundtrip(S.CallToolResult, {"content": [], "structuredContent": value})
        assert res.structured_content == value
    result_content = {
        "type": "tool_result",
        "toolUseId": "u",
        "content": [],
        "structuredContent": [],
    }
    roundtrip(S.SamplingContentBlock, result_content)
    assert S.ListToolsResult(tools=[], ttl_ms=-3).cache_ttl_ms == 0
    assert [str(v) for v in S.ResultType] == ["complete", "input_required", "task"]
    assert json.dumps({"resultType": S.ResultType.TASK}) == '{"resultType": "task"}'


def test_result_type_old_names_warn_and_give_the_member() -> None:
    import trimcp.schema as public

    with pytest.warns(DeprecationWarning, match=r"RESULT_TYPE_COMPLETE .*ResultType\.COMPLETE"):
        assert public.RESULT_TYPE_COMPLETE is S.ResultType.COMPLETE
    with pytest.warns(DeprecationWarning, match="ResultType.INPUT_REQUIRED"):
        assert public.RESULT_TYPE_INPUT_REQUIRED is S.ResultType.INPUT_REQUIRED
    assert "RESULT_TYPE_COMPLETE" not in public.__all__
    with pytest.raises(AttributeError):
        public.RESULT_TYPE_TASK  # noqa: B018


# --------------------------------------------------------------------------- schema members


def _resolve(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
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


def _error_data(defs: dict[str, Any], name: str) -> dict[str, Any]:
    return _resolve(defs, defs[name]["properties"]["error"])["properties"]["data"]  # type: ignore[no-any-return]


def _def_for(defs: dict[str, Any], cls: type) -> dict[str, Any] | None:
    inline = {
        S.RootsCapability: ("ClientCapabilities", "roots"),
        S.SamplingCapability: ("ClientCapabilities", "sampling"),
        S.ElicitationCapability: ("ClientCapabilities", "elicitation"),
        S.PromptsCapability: ("ServerCapabilities", "prompts"),
        S.ResourcesCapability: ("ServerCapabilities", "resources"),
        S.ToolsCapability: ("ServerCapabilities", "tools"),
        S.Completion: ("CompleteResult", "completion"),
        S.CompletionArgument: ("CompleteRequestParams", "argument"),
        S.CompletionContext: ("CompleteRequestParams", "context"),
    }
    renamed = {
        S.Envelope: "RequestMetaObject",
        S.ElicitInputRequest: "ElicitRequest",
        S.CreateMessageInputRequest: "CreateMessageRequest",
        S.ListRootsInputRequest: "ListRootsRequest",
    }
    if cls in inline:
        parent, member = inline[cls]
        return _resolve(defs, defs[parent]["properties"][member])
    if cls is S.MissingRequiredClientCapabilityErrorData:
        return _error_data(defs, "MissingRequiredClientCapabilityError")
    if cls is S.UnsupportedProtocolVersionErrorData:
        return _error_data(defs, "UnsupportedProtocolVersionError")
    name = renamed.get(cls, cls.__name__)
    if name in defs:
        return _resolve(defs, defs[name])
    return None


@needs_spec
def test_declared_members_match_2026_schema() -> None:
    """Every member 2026-07-28 defines is a declared field, and no field is required that
    2026-07-28 leaves optional."""
    from trimcp._sansio.schema._rules import EXTRA, WIRE_NAME, WIRE_REQUIRED, wire_name

    defs = _defs()
    classes = {v for v in vars(S).values() if isinstance(v, type) and attrs.has(v)}
    seen = set()
    for cls in sorted(classes, key=lambda c: c.__name__):
        d = _def_for(defs, cls)
        if d is None or "properties" not in d:
            continue
        fields = [f for f in attrs.fields(cls) if f.name != EXTRA]
        declared = {f.metadata.get(WIRE_NAME) or wire_name(f.name) for f in fields}
        required = {
            f.metadata.get(WIRE_NAME) or wire_name(f.name)
            for f in fields
            if f.default is attrs.NOTHING or f.metadata.get(WIRE_REQUIRED)
        }
        assert set(d["properties"]) <= declared, (cls.__name__, set(d["properties"]) - declared)
        assert required <= set(d.get("required", [])), (cls.__name__, required)
        seen.add(cls.__name__)
    for name in (
        "DiscoverResult",
        "InputRequiredResult",
        "SubscriptionFilter",
        "SubscriptionsListenRequestParams",
        "SubscriptionsListenResult",
        "SubscriptionsAcknowledgedNotificationParams",
        "Envelope",
        "ElicitInputRequest",
        "Error",
        "MissingRequiredClientCapabilityErrorData",
        "UnsupportedProtocolVersionErrorData",
        "CallToolRequestParams",
        "ClientCapabilities",
        "ServerCapabilities",
        "ListToolsResult",
        "ReadResourceResult",
    ):
        assert name in seen, name
    assert len(seen) > 60


# --------------------------------------------------------------------------- hypothesis

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=3)
#: Members that tell input responses apart: never in ``extra`` or an unknown response.
MARKERS = {"action", "roots", "model", "role", "content"}


def opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


def extras(cls: type) -> st.SearchStrategy[dict[str, Any]]:
    from trimcp._sansio.schema._rules import WIRE_NAME, wire_name

    known = {f.metadata.get(WIRE_NAME) or wire_name(f.name) for f in attrs.fields(cls)}
    return st.dictionaries(
        st.text(min_size=1, max_size=8).filter(lambda k: k not in known and k not in MARKERS),
        json_values,
        max_size=2,
    )


text_st = st.builds(S.TextContent, text=st.text(max_size=10), meta=opt(json_objects))
elicit_form_st = st.builds(
    S.ElicitRequestFormParams,
    message=st.text(max_size=10),
    requested_schema=st.builds(
        lambda props: {"type": "object", "properties": props},
        st.dictionaries(st.text(max_size=5), st.just({"type": "string"}), max_size=3),
    ),
    mode=opt(st.just("form")),
    meta=opt(json_objects),
)
elicit_url_st = st.builds(
    S.ElicitRequestURLParams,
    message=st.text(max_size=10),
    url=st.text(max_size=10),
    elicitation_id=opt(st.text(max_size=5)),
)
input_request_st = st.one_of(
    st.builds(
        S.ElicitInputRequest,
        params=st.one_of(elicit_form_st, elicit_url_st),
        extra=extras(S.ElicitInputRequest),
    ),
    st.builds(
        S.CreateMessageInputRequest,
        params=st.builds(
            S.CreateMessageRequestParams,
            messages=st.lists(
                st.builds(
                    S.SamplingMessage,
                    role=st.sampled_from(["user", "assistant"]),
                    content=st.one_of(text_st, st.lists(text_st, max_size=2)),
                ),
                max_size=2,
            ),
            max_tokens=st.integers(0, 10_000),
            system_prompt=opt(st.text(max_size=10)),
            temperature=opt(st.floats(0, 2)),
            stop_sequences=opt(st.lists(st.text(max_size=3), max_size=2)),
        ),
    ),
    st.builds(
        S.ListRootsInputRequest,
        params=opt(st.builds(S.RequestParams, meta=opt(json_objects))),
    ),
)
input_response_st = st.one_of(
    st.builds(
        S.ElicitResult,
        action=st.sampled_from(["accept", "decline", "cancel"]),
        content=opt(
            st.dictionaries(
                st.text(max_size=5),
                st.one_of(
                    st.text(max_size=5),
                    st.integers(),
                    st.booleans(),
                    st.lists(st.text(max_size=3), max_size=2),
                ),
                max_size=3,
            )
        ),
        meta=opt(json_objects),
        extra=extras(S.ElicitResult),
    ),
    st.builds(
        S.CreateMessageResult,
        role=st.sampled_from(["user", "assistant"]),
        content=st.one_of(text_st, st.lists(text_st, max_size=2)),
        model=st.text(max_size=5),
        stop_reason=opt(st.text(max_size=5)),
        extra=extras(S.CreateMessageResult),
    ),
    st.builds(
        S.ListRootsResult,
        roots=st.lists(st.builds(S.Root, uri=st.text(max_size=8), name=opt(st.text(max_size=5)))),
        extra=extras(S.ListRootsResult),
    ),
    st.builds(
        S.UnknownInputResponse,
        raw=st.dictionaries(st.text(max_size=8).filter(lambda k: k not in MARKERS), json_values, max_size=3),
    ),
)
keys = st.text(max_size=8)
input_required_st = st.builds(
    S.InputRequiredResult,
    input_requests=st.dictionaries(keys, input_request_st, max_size=3),
    request_state=opt(st.text(max_size=20)),
    meta=opt(json_objects),
    extra=extras(S.InputRequiredResult),
) | st.builds(S.InputRequiredResult, request_state=st.text(max_size=20))
input_responses_st = st.dictionaries(keys, input_response_st, max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(input_required_st)
def test_hypothesis_input_required_round_trip(obj: S.InputRequiredResult) -> None:
    wire = to_wire(obj)
    again = S.parse_result("tools/call", json.loads(json.dumps(wire)), revision=REV)
    assert again == obj
    assert to_wire(again) == wire


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(input_responses_st, opt(st.text(max_size=10)))
def test_hypothesis_input_responses_round_trip(responses: dict[str, Any], state: str | None) -> None:
    wire = to_wire(responses)
    assert from_wire(S.InputResponses, json.loads(json.dumps(wire))) == responses
    params = S.GetPromptRequestParams(meta=META, name="p", input_responses=responses, request_state=state)
    raw = json.loads(json.dumps(to_wire(params)))
    assert S.parse_request_params("prompts/get", raw, revision=REV) == params
