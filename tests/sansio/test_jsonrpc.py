"""JSON-RPC 2.0 message parsing and serialization (trimcp._sansio.jsonrpc)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._errors import LocalProtocolError, RemoteProtocolError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.jsonrpc import (
    ErrorObject,
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    Response,
)


def parse_one(data: bytes | str) -> rpc.Message | InvalidMessage:
    parsed = rpc.parse_payload(data)
    assert not parsed.is_batch
    assert len(parsed.messages) + len(parsed.invalid) == 1
    return (parsed.messages or parsed.invalid)[0]  # type: ignore[operator]


def obj(**members: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **members}).encode()


# ---------------------------------------------------------------- every message kind


@pytest.mark.parametrize("id_", [0, 7, -3, 2**70, "", "abc", "ünï"])
def test_request_parse_and_serialize(id_: rpc.RequestId) -> None:
    msg = parse_one(obj(id=id_, method="tools/list", params={"cursor": "x"}))
    assert msg == Request(id_, "tools/list", {"cursor": "x"})
    assert json.loads(rpc.serialize(msg)) == {  # type: ignore[arg-type]
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/list",
        "params": {"cursor": "x"},
    }


def test_request_without_params() -> None:
    msg = parse_one(obj(id=1, method="ping"))
    assert msg == Request(1, "ping", None)
    assert json.loads(rpc.serialize(msg)) == {"jsonrpc": "2.0", "id": 1, "method": "ping"}  # type: ignore[arg-type]


def test_notification_parse_and_serialize() -> None:
    msg = parse_one(obj(method="notifications/initialized"))
    assert msg == Notification("notifications/initialized", None)
    assert rpc.serialize(msg) == b'{"jsonrpc":"2.0","method":"notifications/initialized"}'  # type: ignore[arg-type]
    msg2 = parse_one(obj(method="notifications/progress", params={"progress": 1}))
    assert msg2 == Notification("notifications/progress", {"progress": 1})
    assert json.loads(rpc.serialize(msg2))["params"] == {"progress": 1}  # type: ignore[arg-type]


def test_response_parse_and_serialize() -> None:
    msg = parse_one(obj(id="r1", result={"tools": []}))
    assert msg == Response("r1", {"tools": []})
    assert rpc.serialize(msg) == b'{"jsonrpc":"2.0","id":"r1","result":{"tools":[]}}'  # type: ignore[arg-type]


def test_error_response_parse_and_serialize() -> None:
    msg = parse_one(obj(id=4, error={"code": -32601, "message": "nope", "data": {"x": 1}}))
    assert msg == ErrorResponse(4, ErrorObject(-32601, "nope", {"x": 1}))
    assert json.loads(rpc.serialize(msg)) == {  # type: ignore[arg-type]
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32601, "message": "nope", "data": {"x": 1}},
    }
    # data is omitted when absent
    no_data = ErrorResponse(4, ErrorObject(-1, "m"))
    assert rpc.serialize(no_data) == b'{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"m"}}'


def test_error_response_with_null_id() -> None:
    msg = parse_one(obj(id=None, error={"code": -32700, "message": "parse error"}))
    assert msg == ErrorResponse(None, ErrorObject(-32700, "parse error"))
    assert json.loads(rpc.serialize(msg))["id"] is None  # type: ignore[arg-type]
    # error response without any id member also has a null id
    assert parse_one(obj(error={"code": 1, "message": "m"})) == ErrorResponse(None, ErrorObject(1, "m"))


def test_parse_accepts_str() -> None:
    assert parse_one('{"jsonrpc":"2.0","method":"x"}') == Notification("x")


def test_serialize_non_message_is_local_error() -> None:
    with pytest.raises(LocalProtocolError):
        rpc.serialize({"jsonrpc": "2.0"})  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        rpc.message_to_obj(InvalidMessage(None, ErrorObject(1, "x")))  # type: ignore[arg-type]


# ---------------------------------------------------------------- ids


def test_is_valid_id() -> None:
    assert rpc.is_valid_id(0) and rpc.is_valid_id("x") and rpc.is_valid_id(-1)
    for bad in (True, False, None, 1.0, 1.5, [], {}):
        assert not rpc.is_valid_id(bad)


@pytest.mark.parametrize("bad_id", [True, False, None, 1.0, 2.5, [1], {"a": 1}])
def test_request_with_bad_id_is_invalid(bad_id: Any) -> None:
    msg = parse_one(obj(id=bad_id, method="ping"))
    assert isinstance(msg, InvalidMessage)
    assert msg.id is None
    assert msg.error.code == rpc.INVALID_REQUEST
    assert msg.raw == {"jsonrpc": "2.0", "id": bad_id, "method": "ping"}


@pytest.mark.parametrize("bad_id", [True, None, 1.0])
def test_response_with_bad_id_is_invalid(bad_id: Any) -> None:
    msg = parse_one(obj(id=bad_id, result={}))
    assert isinstance(msg, InvalidMessage)
    assert msg.id is None and msg.error.code == rpc.INVALID_REQUEST
    assert isinstance(parse_one(obj(result={})), InvalidMessage)  # no id at all


@pytest.mark.parametrize("bad_id", [True, 1.5, [], {}])
def test_error_response_with_bad_id_is_invalid(bad_id: Any) -> None:
    msg = parse_one(obj(id=bad_id, error={"code": 1, "message": "m"}))
    assert isinstance(msg, InvalidMessage)
    assert msg.id is None and msg.error.code == rpc.INVALID_REQUEST


# ---------------------------------------------------------------- -32700


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"{'a': 1}",
        b'{"jsonrpc":"2.0","method":"x"} trailing',
        b"\xff\xfe",
        b'{"jsonrpc":"2.0","method":"\xc3"}',  # truncated UTF-8 sequence
        b'{"jsonrpc":"2.0","method":"\xed\xa0\x80"}',  # UTF-8-encoded surrogate
        '{"jsonrpc":"2.0","method":"x"}'.encode("utf-16"),  # valid JSON, not UTF-8
        '{"jsonrpc":"2.0","method":"x"}'.encode("utf-32-le"),
        b'{"jsonrpc":"2.0","method":"x","params":{"a":NaN}}',
        b'{"jsonrpc":"2.0","method":"x","params":{"a":-Infinity}}',
        b"[" * 100_000,  # nesting deeper than the recursion limit
    ],
)
def test_parse_error(data: bytes) -> None:
    parsed = rpc.parse_payload(data)
    assert parsed.messages == []
    assert len(parsed.invalid) == 1
    bad = parsed.invalid[0]
    assert bad.id is None
    assert bad.error.code == rpc.PARSE_ERROR
    assert bad.error.message.startswith("parse error")
    assert bad.raw == data


# ---------------------------------------------------------------- -32600


@pytest.mark.parametrize(
    ("payload", "expected_id"),
    [
        ({"id": 5, "method": "ping"}, 5),  # no jsonrpc member
        ({"jsonrpc": "1.0", "id": "a", "method": "ping"}, "a"),
        ({"jsonrpc": 2.0, "id": 5, "method": "ping"}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": 3}, 5),
        ({"jsonrpc": "2.0", "id": 5, "method": "x", "params": "p"}, 5),
        ({"jsonrpc": "2.0", "method": "x", "params": [1]}, None),  # notification
        ({"jsonrpc": "2.0", "id": 6, "result": {}, "error": {"code": 1, "message": "m"}}, 6),
        ({"jsonrpc": "2.0", "id": 6, "result": [1]}, 6),
        ({"jsonrpc": "2.0", "id": 6, "result": None}, 6),
        ({"jsonrpc": "2.0", "id": 7, "error": "boom"}, 7),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": "1", "message": "m"}}, 7),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": True, "message": "m"}}, 7),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": 1.0, "message": "m"}}, 7),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": 1}}, 7),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": 1, "message": None}}, 7),
        ({"jsonrpc": "2.0", "id": 8}, 8),  # nothing but an id
        ({"jsonrpc": "2.0"}, None),
    ],
)
def test_invalid_request_recovers_id(payload: dict[str, Any], expected_id: Any) -> None:
    msg = parse_one(json.dumps(payload).encode())
    assert isinstance(msg, InvalidMessage)
    assert msg.error.code == rpc.INVALID_REQUEST
    assert msg.id == expected_id
    assert type(msg.id) is type(expected_id)
    assert msg.raw == payload


def test_array_params_are_invalid_params() -> None:
    # Valid JSON-RPC, but no MCP method takes positional params: -32602, the id kept.
    payload = {"jsonrpc": "2.0", "id": 5, "method": "x", "params": [1, 2]}
    msg = parse_one(json.dumps(payload).encode())
    assert isinstance(msg, InvalidMessage)
    assert (msg.error.code, msg.id) == (rpc.INVALID_PARAMS, 5)


@pytest.mark.parametrize("value", [1, "s", None, True, 1.5])
def test_non_object_is_invalid(value: Any) -> None:
    msg = parse_one(json.dumps(value).encode())
    assert isinstance(msg, InvalidMessage)
    assert msg.error.code == rpc.INVALID_REQUEST and msg.id is None
    assert "must be an object" in msg.error.message


# ---------------------------------------------------------------- batches


def test_batch_mixed_valid_and_invalid() -> None:
    data = json.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": 5},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            17,
            {"jsonrpc": "2.0", "id": 3, "result": {}},
        ]
    ).encode()
    parsed = rpc.parse_payload(data)
    assert parsed.is_batch
    assert parsed.messages == [
        Request(1, "ping"),
        Notification("notifications/initialized"),
        Response(3, {}),
    ]
    assert [(i.id, i.error.code) for i in parsed.invalid] == [
        (2, rpc.INVALID_REQUEST),
        (None, rpc.INVALID_REQUEST),
    ]


def test_empty_batch() -> None:
    parsed = rpc.parse_payload(b"[]")
    assert parsed.is_batch
    assert parsed.messages == []
    assert len(parsed.invalid) == 1
    assert parsed.invalid[0].id is None
    assert parsed.invalid[0].error.code == rpc.INVALID_REQUEST
    assert "empty batch" in parsed.invalid[0].error.message


def test_batch_of_nested_array_is_invalid_member() -> None:
    parsed = rpc.parse_payload(b"[[]]")
    assert parsed.is_batch and parsed.messages == []
    assert parsed.invalid[0].error.code == rpc.INVALID_REQUEST


def test_serialize_batch() -> None:
    batch: list[rpc.Message] = [Request(1, "ping"), Notification("n", {"a": 1})]
    data = rpc.serialize(batch)
    assert data == b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n","params":{"a":1}}]'
    parsed = rpc.parse_payload(data)
    assert parsed.is_batch and parsed.messages == batch and parsed.invalid == []


# ---------------------------------------------------------------- size cap


def test_size_cap() -> None:
    data = obj(id=1, method="ping")
    assert rpc.parse_payload(data, max_size=len(data)).messages == [Request(1, "ping")]
    with pytest.raises(RemoteProtocolError) as info:
        rpc.parse_payload(data, max_size=len(data) - 1)
    assert info.value.reply_hint is not None
    assert info.value.reply_hint["code"] == rpc.INVALID_REQUEST
    assert str(len(data)) in str(info.value)


def test_size_cap_applies_before_parsing() -> None:
    # garbage that is too large is a size error, not a parse error
    with pytest.raises(RemoteProtocolError):
        rpc.parse_payload(b"x" * 11, max_size=10)


# ---------------------------------------------------------------- output format


def test_compact_utf8_output() -> None:
    msg = Request(1, "tools/call", {"name": "grüß", "arguments": {"text": "日本語 🎉", "n": [1, 2]}})
    data = rpc.serialize(msg)
    assert b" " not in data.replace("日本語 🎉".encode(), b"")  # compact separators
    assert "grüß".encode() in data and "日本語 🎉".encode() in data  # raw UTF-8, not \\u escapes
    assert b"\\u" not in data
    assert b"\n" not in data
    assert data.decode("utf-8")  # valid UTF-8
    assert rpc.parse_payload(data).messages == [msg]


def test_output_escapes_newlines_in_strings() -> None:
    data = rpc.serialize(Notification("n", {"text": "a\nb\r\nc\u2028"}))
    assert b"\n" not in data and b"\r" not in data
    assert rpc.parse_payload(data).messages == [Notification("n", {"text": "a\nb\r\nc\u2028"})]


def test_output_refuses_nan() -> None:
    with pytest.raises(ValueError):
        rpc.serialize(Notification("n", {"x": float("nan")}))


def test_lone_surrogate_round_trips() -> None:
    # "\ud800" is a legal JSON escape, so a peer can send it; echoing it must not crash.
    received = parse_one(b'{"jsonrpc":"2.0","method":"n","params":{"t":"a\\ud800b"}}')
    assert received == Notification("n", {"t": "a\ud800b"})
    data = rpc.serialize(received)  # type: ignore[arg-type]
    data.decode("utf-8")  # strictly valid UTF-8
    assert parse_one(data) == received


def test_error_object_to_wire() -> None:
    assert ErrorObject(1, "m").to_wire() == {"code": 1, "message": "m"}
    assert ErrorObject(1, "m", [0]).to_wire() == {"code": 1, "message": "m", "data": [0]}
    assert ErrorObject(1, "m", False).to_wire() == {"code": 1, "message": "m", "data": False}


# ---------------------------------------------------------------- round trip (hypothesis)

# Any code point, lone surrogates included: "\ud800" is a legal JSON escape a peer may send.
# Not a high surrogate followed by a low one: its escapes "\ud800\udc00" are, by JSON's own
# rule (RFC 8259 section 7), the one character U+10000, so no wire text can carry the pair apart.
_SPLIT_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _wire_text(alphabet: st.SearchStrategy[str], **size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, **size).filter(lambda t: _SPLIT_PAIR.search(t) is None)


texts = _wire_text(st.characters(exclude_categories=()), max_size=8)
ids = st.one_of(st.integers(), texts)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(texts, children, max_size=4),
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=4)
methods = _wire_text(st.characters(exclude_categories=()), min_size=1, max_size=20)

messages = st.one_of(
    st.builds(Request, ids, methods, st.none() | json_objects),
    st.builds(Notification, methods, st.none() | json_objects),
    st.builds(Response, ids, json_objects),
    st.builds(
        ErrorResponse,
        st.none() | ids,
        st.builds(ErrorObject, st.integers(), texts, json_values),
    ),
)


@settings(max_examples=200, deadline=None)
@given(messages)
def test_round_trip(msg: rpc.Message) -> None:
    data = rpc.serialize(msg)
    assert b"\n" not in data and b"\r" not in data
    data.decode("utf-8")
    parsed = rpc.parse_payload(data)
    assert parsed.invalid == []
    assert parsed.messages == [msg]  # (``data: null`` and no ``data`` are equal)
    # serialization is deterministic / a fixed point
    assert rpc.serialize(parsed.messages[0]) == data


@settings(max_examples=50, deadline=None)
@given(st.lists(messages, min_size=1, max_size=5))
def test_batch_round_trip(batch: list[rpc.Message]) -> None:
    parsed = rpc.parse_payload(rpc.serialize(batch))
    assert parsed.is_batch and parsed.invalid == [] and parsed.messages == batch


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_parse_never_raises_on_garbage(data: bytes) -> None:
    parsed = rpc.parse_payload(data)
    assert len(parsed.messages) + len(parsed.invalid) >= 1
    for bad in parsed.invalid:
        assert bad.error.code in (rpc.PARSE_ERROR, rpc.INVALID_REQUEST)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_message_from_obj_total(value: Any) -> None:
    # Any JSON value is classified, never raises.
    result = rpc.message_from_obj(value)
    assert isinstance(result, (Request, Notification, Response, ErrorResponse, InvalidMessage))


def test_number_overflowing_a_double_is_a_parse_error() -> None:
    parsed = rpc.parse_payload(b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":1e400}}')
    assert parsed.messages == []
    assert parsed.invalid[0].error.code == rpc.PARSE_ERROR
    assert "out of range" in parsed.invalid[0].error.message


# ---------------------------------------------------------------- -32700 with the id recovered


@pytest.mark.parametrize(
    ("data", "expected_id", "member"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"text":"caf\xe9"}}', 7, "result"),  # Latin-1, not UTF-8
        (b'{"jsonrpc":"2.0","id":7,"result":{"n":NaN}}', 7, "result"),
        (b'{"jsonrpc":"2.0","id":"r","result":{"n":1e400}}', "r", "result"),
        (b'{"jsonrpc":"2.0","id":8,"error":{"code":-1,"message":"m","data":-Infinity}}', 8, "error"),
        (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"s":"tab\there"}}', 9, "method"),
        ('{"jsonrpc":"2.0","id":10,"method":"x","params":{"n":Infinity}}', 10, "method"),  # str input
    ],
)
def test_parse_error_recovers_the_id(data: bytes | str, expected_id: rpc.RequestId, member: str) -> None:
    """A text the strict reader refuses still names its id, and whether it answers or asks."""
    parsed = rpc.parse_payload(data)
    assert parsed.messages == [] and not parsed.is_batch
    [bad] = parsed.invalid
    assert bad.error.code == rpc.PARSE_ERROR and bad.error.message.startswith("parse error")
    assert bad.id == expected_id and type(bad.id) is type(expected_id)
    assert isinstance(bad.raw, dict) and member in bad.raw


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","id":true,"result":{"n":NaN}}',
        b'{"jsonrpc":"2.0","id":1.5,"result":{"n":NaN}}',
        b'{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"\xff"}}',
        b'{"jsonrpc":"2.0","method":"x","params":{"n":NaN}}',
        b"[1, NaN]",
        b'{"jsonrpc":"2.0","id":1,"result":{}} trailing NaN',  # no lenient reading either
    ],
)
def test_parse_error_without_a_usable_id(data: bytes) -> None:
    [bad] = rpc.parse_payload(data).invalid
    assert bad.id is None and bad.error.code == rpc.PARSE_ERROR
    assert bad.raw == data


def test_parse_error_in_a_batch_recovers_each_id() -> None:
    data = b'[{"jsonrpc":"2.0","id":1,"result":{"n":NaN}},{"jsonrpc":"2.0","id":"b","result":{}},17]'
    parsed = rpc.parse_payload(data)
    # Nothing of a text the strict reader refused is used, not even its clean members.
    assert parsed.is_batch and parsed.messages == []
    assert [(bad.id, bad.error.code) for bad in parsed.invalid] == [
        (1, rpc.PARSE_ERROR),
        ("b", rpc.PARSE_ERROR),
        (None, rpc.PARSE_ERROR),
    ]
    assert parsed.invalid[-1].raw == data  # what shows no id is reported once, as received
    every_id = rpc.parse_payload(b'[{"jsonrpc":"2.0","id":1,"result":{"n":NaN}}]')
    assert [bad.id for bad in every_id.invalid] == [1]


#: Any bytes that stay inside a JSON string (no quote or backslash to leave it).
string_bytes = st.binary(max_size=64).map(lambda b: b.replace(b'"', b"").replace(b"\\", b""))


@settings(max_examples=200, deadline=None)
@given(string_bytes, st.integers(0, 2**31) | st.text(max_size=5))
def test_any_bytes_in_an_answer_string_keep_its_id(garbage: bytes, id_: rpc.RequestId) -> None:
    """Whatever sits in a string (invalid UTF-8, control characters), the answer is
    either a valid message or a -32700 that still names its id."""
    data = b'{"jsonrpc":"2.0","id":' + rpc.dumps(id_) + b',"result":{"g":"' + garbage + b'"}}'
    parsed = rpc.parse_payload(data)
    if parsed.messages:
        [msg] = parsed.messages
        assert isinstance(msg, Response) and msg.id == id_
    else:
        [bad] = parsed.invalid
        assert bad.error.code == rpc.PARSE_ERROR and bad.id == id_
