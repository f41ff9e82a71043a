"""The sans-IO HTTP planner: request descriptions, header encoding, response reading."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._errors import LocalProtocolError, RemoteProtocolError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.framing.sse import SSEDecoder
from trimcp._sansio.http.client import response as hr
from trimcp._sansio.http.client.plan import HttpPlanner, MessageKind, Mode, parse_url, resolve_endpoint
from trimcp._sansio.http.client.policy import ReconnectPolicy
from trimcp._sansio.http.headers import (
    HeaderParam,
    InvalidToolHeaders,
    ToolHeaderBook,
    decode_header_value,
    encode_header_value,
    filter_tools,
    header_params,
    header_text,
    is_header_safe,
    param_headers,
)

URL = "http://127.0.0.1:8000/mcp"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


# --------------------------------------------------------------------------- header values


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("us west 1", "us west 1"),
        ("", ""),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
    ],
)
def test_spec_encoding_examples(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@given(st.text())
def test_header_value_round_trip(value: str) -> None:
    encoded = encode_header_value(value)
    assert decode_header_value(encoded) == value
    assert all(" " <= c <= "~" for c in encoded)
    assert encoded == encoded.strip(" ")
    assert (encoded == value) == is_header_safe(value)


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
def test_plain_ascii_is_plain_unless_it_needs_care(value: str) -> None:
    plain = value == value.strip(" ") and not (value.startswith("=?base64?") and value.endswith("?="))
    assert (encode_header_value(value) == value) == plain


@pytest.mark.parametrize("bad", ["=?base64?not base64!?=", "=?base64?/w==?="])
def test_malformed_sentinel(bad: str) -> None:
    with pytest.raises(ValueError):
        decode_header_value(bad)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-7, "-7"),
        (42.0, "42"),
        (3.14159, "3.14159"),
        ("s", "s"),
        (None, None),
        ([1], None),
        ({"a": 1}, None),
        (float("nan"), None),
    ],
)
def test_header_text(value: Any, text: str | None) -> None:
    assert header_text(value) == text


# --------------------------------------------------------------------------- x-mcp-header


def schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_header_params_and_extraction() -> None:
    params = header_params(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            nested={"type": "object", "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"}}},
            maybe={"type": ["boolean", "null"], "x-mcp-header": "Maybe"},
            query={"type": "string"},
        )
    )
    assert params == (
        HeaderParam(("region",), "Region"),
        HeaderParam(("nested", "zone"), "Zone"),
        HeaderParam(("maybe",), "Maybe"),
    )
    headers = param_headers(params, {"region": "Zürich", "nested": {"zone": 3}, "maybe": None, "query": "q"})
    assert headers == [("Mcp-Param-Region", "=?base64?WsO8cmljaA==?="), ("Mcp-Param-Zone", "3")]
    assert param_headers(params, None) == []


@pytest.mark.parametrize(
    "bad_schema",
    [
        schema(v={"type": "string", "x-mcp-header": ""}),
        schema(v={"type": "object", "x-mcp-header": "Data"}),
        schema(v={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}),
        schema(v={"type": "null", "x-mcp-header": "Nil"}),
        # 2026-07-28 tools: "Parameters with type number are not permitted."
        schema(v={"type": "number", "x-mcp-header": "Price"}),
        schema(a={"type": "string", "x-mcp-header": "Region"}, b={"type": "string", "x-mcp-header": "Region"}),
        schema(a={"type": "string", "x-mcp-header": "MyField"}, b={"type": "string", "x-mcp-header": "myfield"}),
        schema(v={"type": "string", "x-mcp-header": "My Region"}),
        schema(v={"type": "string", "x-mcp-header": "Region:Primary"}),
        schema(v={"type": "string", "x-mcp-header": "Région"}),
        schema(v={"type": "string", "x-mcp-header": "Region\t1"}),
        schema(v={"type": "string", "x-mcp-header": 7}),
        schema(v={"type": "array", "items": {"type": "string", "x-mcp-header": "Inner"}}),
        schema(v={"oneOf": [{"type": "string", "x-mcp-header": "Choice"}]}),
        {"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "Def"}}},
        {"type": "string", "x-mcp-header": "Root"},
    ],
)
def test_invalid_annotations(bad_schema: dict[str, Any]) -> None:
    with pytest.raises(InvalidToolHeaders):
        header_params(bad_schema)


def test_a_property_named_like_the_keyword_is_no_annotation() -> None:
    assert header_params(schema(**{"x-mcp-header": {"type": "string"}})) == ()
    assert header_params({"type": "object", "default": {"x-mcp-header": "nope"}}) == ()


def test_filter_tools() -> None:
    tools = [
        {"name": "good", "inputSchema": schema(r={"type": "string", "x-mcp-header": "R"})},
        {"name": "bad", "inputSchema": schema(r={"type": "object", "x-mcp-header": "R"})},
        "not a tool",
    ]
    kept, by_name, rejected = filter_tools(tools)
    assert [t if isinstance(t, str) else t["name"] for t in kept] == ["good", "not a tool"]
    assert by_name == {"good": (HeaderParam(("r",), "R"),)}
    assert rejected[0][0] == "bad"
    assert filter_tools(None) == ([], {}, [])


# --------------------------------------------------------------------------- URLs


def test_parse_url() -> None:
    parsed = parse_url("HTTPS://Example.COM/a/b?x=1#frag")
    assert (parsed.origin.scheme, parsed.origin.host, parsed.origin.port) == ("https", "example.com", 443)
    assert parsed.target == "/a/b?x=1"
    assert parse_url("http://[::1]:81").target == "/"
    assert str(parse_url("http://[::1]:81").origin) == "http://[::1]:81"
    for bad in ("ftp://x/", "http:///nohost", "http://u:p@h/", "http://h:99999/"):
        with pytest.raises(LocalProtocolError):
            parse_url(bad)


def test_resolve_endpoint() -> None:
    sse = "http://127.0.0.1:8000/sse"
    assert resolve_endpoint(sse, "/messages?session_id=1") == "http://127.0.0.1:8000/messages?session_id=1"
    assert resolve_endpoint(sse, "messages/") == "http://127.0.0.1:8000/messages/"
    assert resolve_endpoint(sse, "http://127.0.0.1:8000/m#x") == "http://127.0.0.1:8000/m"
    for bad in ("http://127.0.0.1:8001/m", "https://127.0.0.1:8000/m", "//evil.example/m", "", "ftp://x/"):
        with pytest.raises(RemoteProtocolError):
            resolve_endpoint(sse, bad)


# --------------------------------------------------------------------------- planning


def headers_of(plan: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in plan.request.headers}


def test_handshake_era_requests() -> None:
    planner = HttpPlanner(URL, headers=[("Authorization", "Bearer t")])
    init = planner.plan_post(rpc.Request(1, "initialize", {"protocolVersion": "2025-11-25"}))
    h = headers_of(init)
    assert init.request.method == "POST" and init.request.url == URL
    assert h["accept"] == "application/json, text/event-stream"
    assert h["content-type"] == "application/json" and h["content-length"] == str(len(init.request.body))
    assert h["authorization"] == "Bearer t" and h["mcp-method"] == "initialize"
    assert "mcp-session-id" not in h and "mcp-protocol-version" not in h
    assert init.is_initialize and init.kind is MessageKind.REQUEST and not init.sent_session
    assert planner.initialize_params == {"protocolVersion": "2025-11-25"}
    planner.session_assigned("abc")
    planner.initialized("2025-11-25")
    call = planner.plan_post(rpc.Request(2, "tools/call", {"name": "echo", "arguments": {}}))
    h = headers_of(call)
    assert h["mcp-session-id"] == "abc" and h["mcp-protocol-version"] == "2025-11-25"
    assert h["mcp-name"] == "echo" and call.sent_session
    answer = planner.plan_post(rpc.Response(7, {}))
    assert answer.kind is MessageKind.RESPONSE and "mcp-method" not in headers_of(answer)
    get = planner.plan_get("ev-9")
    assert get.method == "GET" and get.header("Last-Event-ID") == "ev-9" and get.header("accept") == "text/event-stream"
    delete = planner.plan_delete()
    assert delete is not None and delete.header("mcp-session-id") == "abc"
    reinit = planner.plan_reinitialize("r-1")
    assert json.loads(reinit.request.body)["id"] == "r-1"
    assert reinit.request.header("mcp-session-id") is None
    generation = planner.generation
    planner.session_expired()
    assert planner.plan_delete() is None and planner.generation == generation + 1


def test_stateless_requests_never_carry_a_session() -> None:
    planner = HttpPlanner(URL)
    planner.session_assigned("old")
    plan = planner.plan_post(rpc.Request(3, "resources/read", {"uri": "file:///ü", "_meta": META}))
    h = headers_of(plan)
    assert h["mcp-protocol-version"] == "2026-07-28" and "mcp-session-id" not in h
    assert h["mcp-name"] == encode_header_value("file:///ü") and plan.stateless_version == "2026-07-28"
    params = {"name": "t", "arguments": {"a": 1}, "_meta": META}
    call = planner.plan_post(rpc.Request(4, "tools/call", params), header_params=(HeaderParam(("a",), "A"),))
    assert headers_of(call)["mcp-param-a"] == "1"
    # The planner learns nothing from results: without the parameters, no header.
    assert "mcp-param-a" not in headers_of(planner.plan_post(rpc.Request(5, "tools/call", params)))


def test_the_revision_comes_with_the_message() -> None:
    planner = HttpPlanner(URL)
    planner.sending_under("2026-07-28", stateless=True)  # e.g. the discover probe
    note = planner.plan_post(rpc.Notification("notifications/x"))
    assert headers_of(note)["mcp-protocol-version"] == "2026-07-28"
    # The probe was refused: the session speaks the handshake era (and the server gave no session).
    planner.sending_under("2025-11-25", stateless=False)
    note = planner.plan_post(rpc.Notification("notifications/initialized"))
    assert headers_of(note)["mcp-protocol-version"] == "2025-11-25"
    assert planner.stateless_version is None


class _Tool:
    def __init__(self, name: str, input_schema: Any) -> None:
        self.name, self.input_schema = name, input_schema


@pytest.mark.parametrize("reject", [True, False])
def test_tool_header_book(reject: bool) -> None:
    good = _Tool("good", schema(r={"type": "string", "x-mcp-header": "R"}))
    bad = _Tool("bad", schema(r={"type": "object", "x-mcp-header": "R"}))
    plain = _Tool("plain", schema(q={"type": "string"}))
    book = ToolHeaderBook(reject_invalid=reject)
    kept = book.learn([good, bad, plain])
    assert kept == ([good, plain] if reject else [good, bad, plain])
    assert [name for name, _ in book.rejected] == (["bad"] if reject else [])
    assert book.params_for("good") == (HeaderParam(("r",), "R"),)
    assert book.params_for("bad") == () and book.params_for("plain") == () and book.params_for("nope") == ()
    # A tool whose annotation went away (a new list) loses its parameters.
    book.learn([_Tool("good", schema(r={"type": "string"}))])
    assert book.params_for("good") == ()


def test_legacy_mode_posts_to_the_endpoint() -> None:
    planner = HttpPlanner(URL)
    assert planner.plan_legacy_get().header("accept") == "text/event-stream"
    planner.use_legacy("http://127.0.0.1:8000/messages?s=1")
    plan = planner.plan_post(rpc.Request(1, "initialize", {}))
    assert plan.request.url == "http://127.0.0.1:8000/messages?s=1" and plan.mode is Mode.LEGACY_SSE
    assert planner.plan_delete() is None


@pytest.mark.parametrize(
    "header", [("Mcp-Session-Id", "x"), ("Content-Type", "x"), ("Bad Name", "x"), ("X-Ok", "a\r\nb")]
)
def test_static_headers_are_checked(header: tuple[str, str]) -> None:
    with pytest.raises(LocalProtocolError):
        HttpPlanner(URL, headers=[header])


def test_dynamic_headers_win() -> None:
    planner = HttpPlanner(URL, headers=[("Authorization", "static")])
    planner.set_dynamic_headers([("authorization", "dynamic")])
    values = [v for k, v in planner.plan_get().headers if k.lower() == "authorization"]
    assert values == ["dynamic"]


def test_invalid_session_id_is_refused() -> None:
    with pytest.raises(RemoteProtocolError):
        HttpPlanner(URL).session_assigned("has space")


def test_reconnect_policy() -> None:
    policy = ReconnectPolicy(initial_delay=1.0, max_delay=5.0)
    assert policy.delay(0, 500) == 0.5 and policy.delay(1, None) == 1.0
    assert policy.delay(2, 500) == 2.0 and policy.delay(3, None) == 4.0 and policy.delay(9, None) == 5.0


# --------------------------------------------------------------------------- responses


def post_reader(**kwargs: Any) -> hr.ResponseReader:
    options: dict[str, Any] = {"answer_id": 1, "expects_answer": True, "url": URL}
    options.update(kwargs)
    return hr.ResponseReader(hr.Purpose.POST, **options)


def messages(events: list[Any]) -> list[Any]:
    """The well-formed messages the events carry, in their wire form."""
    return [rpc.message_to_obj(m) for e in events if isinstance(e, hr.MessageReceived) for m in e.payload.messages]


def received(events: list[Any]) -> list[hr.MessageReceived]:
    return [e for e in events if isinstance(e, hr.MessageReceived)]


def answer(rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"ok": True}}


JSON = [("content-type", "application/json")]
SSE = [("Content-Type", "text/event-stream; charset=utf-8")]


def run(reader: hr.ResponseReader, status: int, headers: list[tuple[str, str]], body: bytes) -> list[Any]:
    events = reader.head(status, headers)
    events += reader.data(body)
    events += reader.end()
    return events


def test_json_answer() -> None:
    reader = post_reader(is_initialize=True)
    body = json.dumps(answer()).encode()
    events = run(reader, 200, JSON + [("Mcp-Session-Id", "s1")], body)
    assert hr.SessionAssigned("s1") in events and messages(events) == [answer()]
    # Parsed once, here, by the one parser; the session gets that payload and the bytes.
    (got,) = received(events)
    assert got.data == body and got.payload == rpc.parse_payload(body) and got.answers == (1,)
    assert reader.answered and isinstance(events[-1], hr.StreamEnded)
    bad = run(post_reader(is_initialize=True), 200, JSON + [("mcp-session-id", "a b")], body)
    assert any(isinstance(e, hr.TransportIssue) for e in bad)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "result": {"x": NaN}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {"x": 1e400}}',
        b'{"jsonrpc": "2.0", "id": 1, "result": {"x": "\xff"}}',
        b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "x", "data": -Infinity}}',
    ],
)
def test_an_unusable_answer_still_answers_its_request(body: bytes) -> None:
    """The strict parser refuses it, but the id shows through: the session fails that
    waiter at once (with RemoteProtocolError) instead of letting it wait."""
    reader = post_reader()
    events = run(reader, 200, JSON, body)
    (got,) = received(events)
    assert got.answers == (1,) and not got.payload.messages
    assert got.payload.invalid[0].id == 1 and got.payload.invalid[0].error.code == rpc.PARSE_ERROR
    assert reader.answered and isinstance(events[-1], hr.StreamEnded)
    reader, events = sse_run([b"data: " + body + b"\n\n"])
    assert received(events)[0].answers == (1,) and reader.answered


def test_answer_ids() -> None:
    batch = rpc.parse_payload(
        b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}},'
        b'{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":3,"method":"ping"},{"id":4,"result":{}}]'
    )
    # Responses, and the unusable answer with id 4 (no "jsonrpc"); never a request's id.
    assert hr.answer_ids(batch) == (1, "a", 4)


@pytest.mark.parametrize(
    ("body", "needle"),
    [(b"{broken", "not JSON"), (json.dumps(answer(2)).encode(), "does not answer")],
)
def test_json_body_that_does_not_answer(body: bytes, needle: str) -> None:
    reader = post_reader()
    events = run(reader, 200, JSON, body)
    # What the server sent still reaches the session (which reports it); no answer is made up.
    assert len(received(events)) == 1 and not reader.answered
    last = events[-1]
    assert isinstance(last, hr.StreamFailed) and needle in last.detail and last.status == 200


def test_oversize_json_body() -> None:
    reader = post_reader(max_message_size=10)
    events = reader.head(200, JSON) + reader.data(b"x" * 11)
    assert isinstance(events[-1], hr.StreamFailed) and reader.finished and not received(events)
    assert reader.data(b"more") == [] and reader.end() == []


STREAM = (
    b"id: 1\nretry: 300\ndata:\n\n"
    b": keep-alive\n"
    b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n'
    b'id: 2\nevent: message\ndata: {"jsonrpc":"2.0","id":"s-1","method":"roots/list"}\n\n'
    b'id: 3\ndata: {"jsonrpc":"2.0",\ndata: "id":1,"result":{}}\n\n'
)


def sse_run(chunks: list[bytes], **kwargs: Any) -> tuple[hr.ResponseReader, list[Any]]:
    reader = post_reader(**kwargs)
    events = reader.head(200, SSE)
    for chunk in chunks:
        events += reader.data(chunk)
    events += reader.end()
    return reader, events


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_sse_split_anywhere(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)])]
    reader, events = sse_run(chunks)
    kinds = [type(e).__name__ for e in events if not isinstance(e, hr.RetryAfter)]
    assert kinds == ["MessageReceived"] * 3 + ["StreamEnded"]
    assert [m.get("method") for m in messages(events)] == ["notifications/progress", "roots/list", None]
    assert [e.ms for e in events if isinstance(e, hr.RetryAfter)] == [300]
    assert reader.answered and reader.messages == 3 and events[-1] == hr.StreamEnded("3", 300)


@given(st.integers(min_value=1, max_value=len(STREAM) - 1))
def test_sse_cut_anywhere_is_broken_at_the_last_whole_event(cut: int) -> None:
    reader = post_reader()
    events = reader.head(200, SSE) + reader.data(STREAM[:cut]) + reader.broken("reset")
    assert not reader.answered
    last = events[-1]
    assert isinstance(last, hr.StreamBroken)
    whole = SSEDecoder()
    whole.feed(STREAM[:cut])
    # The resumption point is the last event received whole, never one that was lost.
    assert last.last_event_id == whole.last_event_id


def test_sse_failure_mid_chunk_stops_the_state_at_the_failing_event() -> None:
    # The fuzzer's finding (fuzz/corpus/http_response/regression-failed-mid-chunk-retry):
    # a retry-only block, then a message over the cap, then more.  Read whole, the
    # state froze before the retry; split, after it.  It is now the state in effect
    # at the failing event however the body is cut.
    big = b'{"jsonrpc":"2.0","method":"x","params":{"p":"' + b"y" * 64 + b'"}}'
    stream = (
        b"id: 1\ndata: " + json.dumps(answer(9)).encode() + b"\n\nretry: 0\n\n"
        b"id: 2\ndata: " + big + b"\n\nretry: 50\nid: 3\ndata: {}\n\n"
    )
    # Cut inside the first message, just after the retry block, inside the big one, near the end.
    for cut in (None, 40, stream.index(b"id: 2"), stream.index(b"yyyy"), len(stream) - 5):
        chunks = [stream] if cut is None else [stream[:cut], stream[cut:]]
        reader, events = sse_run(chunks, max_message_size=64)
        assert isinstance(events[-1], hr.StreamFailed) and "64-byte limit" in events[-1].detail
        assert [m["id"] for m in messages(events)] == [9]
        assert (reader.last_event_id, reader.retry_ms) == ("2", 0), cut


def test_sse_overflow_keeps_the_messages_before_it() -> None:
    # The decoder's own cap (the message cap plus slack) fails on an endless line;
    # what came whole before it in the same chunk is still delivered.
    stream = b"id: 1\ndata: " + json.dumps(answer()).encode() + b"\n\n: " + b"z" * 6000
    reader, events = sse_run([stream], max_message_size=100)
    assert [e.answers for e in received(events)] == [(1,)] and reader.answered
    assert isinstance(events[-1], hr.StreamFailed) and "larger than" in events[-1].detail
    assert reader.last_event_id == "1"


def test_sse_truncated_mid_event_and_early_end() -> None:
    _, events = sse_run([b'id: 7\ndata:\n\ndata: {"jsonrpc"'])
    assert events[-1] == hr.StreamBroken("7", None, "the event stream ended in the middle of an event")
    _, events = sse_run([b"id: 7\ndata:\n\n"])
    assert isinstance(events[-1], hr.StreamBroken) and "before the answer" in events[-1].detail


def test_sse_null_id_error_is_about_our_request() -> None:
    text = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"x"}}'
    reader, events = sse_run([b"data: " + text + b"\n\n"])
    assert messages(events)[0]["id"] == 1 and reader.answered
    # The bytes stay what the server sent; only the session's payload names our request.
    assert received(events)[0].data == text


def test_a_malformed_null_id_error_is_about_our_request_too() -> None:
    text = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":7}}'
    reader, events = sse_run([b"data: " + text + b"\n\n"])
    (got,) = received(events)
    assert got.answers == (1,) and got.payload.invalid[0].id == 1 and reader.answered
    # Not so an OAuth-style error body, which is no JSON-RPC at all.
    reader = post_reader()
    run(reader, 400, JSON, b'{"error": "invalid_token"}')
    assert not reader.answered


def test_sse_oversize_event() -> None:
    reader = post_reader(max_message_size=10)
    events = reader.head(200, SSE) + reader.data(b"data: " + b"x" * 5000)
    assert isinstance(events[-1], hr.StreamFailed) and not received(events)
    # An event within the SSE cap (message size + framing) but over the message cap.
    reader = post_reader(max_message_size=100)
    events = reader.head(200, SSE) + reader.data(b"data: " + b" " * 200 + b"{}\n\n")
    assert isinstance(events[-1], hr.StreamFailed) and "exceeds" in events[-1].detail


def test_sse_unknown_event_types_are_reported() -> None:
    _, events = sse_run([b"event: ping\ndata: x\n\nevent: endpoint\ndata: /m\n\n"])
    assert sum(isinstance(e, hr.TransportIssue) for e in events) == 2


@pytest.mark.parametrize(("status", "expected"), [(202, hr.AnswerElsewhere(202)), (204, hr.AnswerElsewhere(204))])
def test_request_accepted_without_body(status: int, expected: Any) -> None:
    events = run(post_reader(), status, [], b"")
    assert expected in events


def test_notification_accepted() -> None:
    events = run(post_reader(answer_id=None, expects_answer=False), 202, [], b"")
    assert events == [hr.Accepted(202), hr.StreamEnded()]


def test_legacy_mode_post_answer_comes_elsewhere() -> None:
    events = run(post_reader(legacy_mode=True), 200, [("content-type", "text/plain")], b"Accepted")
    assert hr.AnswerElsewhere(200) in events


def test_unlabelled_bodies() -> None:
    events = run(post_reader(), 200, [("content-type", "text/plain")], json.dumps(answer()).encode())
    assert messages(events) == [answer()]
    events = run(post_reader(), 200, [("content-type", "text/html")], b"<html>")
    assert isinstance(events[-1], hr.StreamFailed) and "unexpected content type" in events[-1].detail
    events = run(post_reader(), 200, [], b"")
    assert hr.AnswerElsewhere(200) in events


def error_body(code: int, message: str, rid: Any = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}).encode()


@pytest.mark.parametrize(
    ("status", "body", "expired"),
    [
        (404, b"", True),
        (404, error_body(-32001, "Session not found"), True),
        (404, error_body(-32601, "Method not found"), False),
        (400, error_body(-32001, "Session not found"), True),
        (400, error_body(32600, "Session terminated"), True),
        (400, error_body(-32600, "Bad Request: session expired"), True),
        (400, error_body(-32600, "Invalid Request"), False),
        (500, b"boom", False),
    ],
)
def test_session_expiry_recognition(status: int, body: bytes, expired: bool) -> None:
    events = run(post_reader(sent_session=True), status, JSON, body)
    assert any(isinstance(e, hr.SessionExpired) for e in events) == expired
    without = run(post_reader(sent_session=False), status, JSON, body)
    assert not any(isinstance(e, hr.SessionExpired) for e in without)


def test_200_json_error_meaning_session_gone() -> None:
    reader = post_reader(sent_session=True)
    events = run(reader, 200, JSON, error_body(-32001, "Session not found", 1))
    assert isinstance(events[-1], hr.SessionExpired) and not received(events) and not reader.answered


def test_error_status_answers() -> None:
    events = run(post_reader(), 400, JSON, error_body(-32602, "bad params"))
    assert messages(events)[-1] == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad params"}}
    assert isinstance(events[-1], hr.StreamEnded)
    events = run(post_reader(), 500, [("content-type", "text/plain")], b"database on fire")
    assert not received(events)
    assert events[-1] == hr.StreamFailed(f"HTTP 500 from {URL}: database on fire", 500)
    events = run(post_reader(), 503, [], b"x" * (hr.MAX_ERROR_BODY + 10))
    assert isinstance(events[-1], hr.StreamFailed) and events[-1].detail.startswith("HTTP 503")
    events = run(post_reader(answer_id=None, expects_answer=False), 500, [], b"no")
    assert events == [hr.StreamFailed(f"HTTP 500 from {URL}: no", 500)]
    # An OAuth-style JSON error body is no JSON-RPC: nothing for the session.
    events = run(post_reader(), 403, JSON, b'{"error": "forbidden"}')
    assert not received(events) and isinstance(events[-1], hr.StreamFailed) and events[-1].status == 403


@pytest.mark.parametrize(
    ("status", "body", "falls_back"),
    [
        (405, b"Method Not Allowed", True),
        (404, b"", True),
        (400, error_body(-32600, "bad"), True),
        (400, error_body(-32022, "Unsupported protocol version"), False),
        (404, error_body(-32601, "Method not found"), False),
        (500, b"", False),
    ],
)
def test_legacy_fallback_decision(status: int, body: bytes, falls_back: bool) -> None:
    events = run(post_reader(is_initialize=True, legacy_fallback=True), status, [], body)
    assert any(isinstance(e, hr.FallBackToLegacy) for e in events) == falls_back
    events = run(post_reader(is_initialize=True, legacy_fallback=False), status, [], body)
    assert not any(isinstance(e, hr.FallBackToLegacy) for e in events)


def test_get_streams() -> None:
    reader = hr.ResponseReader(hr.Purpose.STANDALONE, url=URL)
    assert reader.head(405, []) == [hr.StreamRefused(405, f"HTTP 405 from {URL}")]
    reader = hr.ResponseReader(hr.Purpose.STANDALONE, url=URL)
    assert isinstance(reader.head(200, JSON)[0], hr.StreamRefused)
    reader = hr.ResponseReader(hr.Purpose.STANDALONE, sent_session=True, url=URL)
    assert isinstance(reader.head(404, [])[0], hr.SessionExpired)
    reader = hr.ResponseReader(hr.Purpose.STANDALONE, url=URL, last_event_id="4")
    events = run(reader, 200, SSE, b'id: 5\ndata: {"jsonrpc":"2.0","method":"x"}\n\n')
    assert events[-1] == hr.StreamEnded("5", None)
    reader = hr.ResponseReader(hr.Purpose.RESUME, answer_id=1, expects_answer=True, last_event_id="4")
    events = run(reader, 200, SSE, b"id: 5\ndata:\n\n")
    assert isinstance(events[-1], hr.StreamBroken) and events[-1].last_event_id == "5"


def test_legacy_endpoint_event() -> None:
    reader = hr.ResponseReader(hr.Purpose.LEGACY_SSE, url="http://127.0.0.1:8000/sse")
    events = reader.head(200, SSE) + reader.data(b"event: endpoint\ndata: /messages?s=1\n\n")
    assert events == [hr.EndpointAnnounced("http://127.0.0.1:8000/messages?s=1")]
    assert isinstance(reader.data(b"event: endpoint\ndata: /other\n\n")[0], hr.TransportIssue)
    reader = hr.ResponseReader(hr.Purpose.LEGACY_SSE, url="http://127.0.0.1:8000/sse")
    events = reader.head(200, SSE) + reader.data(b"event: endpoint\ndata: http://evil.example/m\n\n")
    assert isinstance(events[-1], hr.StreamFailed) and "another origin" in events[-1].detail


def test_broken_bodies() -> None:
    reader = post_reader()
    events = reader.head(200, JSON) + reader.data(b'{"jsonrpc"') + reader.broken("reset")
    assert events[-1] == hr.StreamBroken(None, None, "the connection broke mid-body (reset)")
    reader = post_reader()
    events = reader.head(500, []) + reader.broken("reset")
    assert events == [hr.StreamFailed("the connection broke before the answer (reset)", 500)]
    reader = post_reader(answer_id=None, expects_answer=False)
    assert reader.head(202, []) + reader.broken("reset") == [hr.Accepted(202), hr.StreamEnded()]
    assert reader.broken("again") == [] and reader.end() == []


@given(st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_json_body_split_anywhere(cuts: list[int]) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "é" * 60}}).encode()
    points = sorted({c for c in cuts if c <= len(body)})
    reader = post_reader()
    events = reader.head(200, JSON)
    for a, b in zip([0, *points], [*points, len(body)]):
        events += reader.data(body[a:b])
    events += reader.end()
    assert messages(events) == [json.loads(body)] and reader.answered
