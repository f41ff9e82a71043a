"""The recorded conversations under spec/ (see spec/README.md) stay valid.

Each ``spec/<revision>/<server>[.http|.sse].jsonl`` is a real transcript recorded by
``spec/record.py``.  For each one: every message is valid JSON-RPC, every
result validates against the schema for the method of the request it answers,
every notification against its params class, the handshake (or, in the stateless
era, every request's envelope) settled on the directory's revision, every request
was answered once (a cancelled one may stay unanswered: basic/utilities/cancellation),
and a fresh client ``Connection`` replaying the client side accepts every recorded
server message without a protocol issue.  The ``"http"`` member of an HTTP
transcript's entries agrees with basic/transports (status codes, content types,
``Mcp-Session-Id`` and ``MCP-Protocol-Version`` on every later request).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp import Connection, Role
from trimcp import schema as s
from trimcp._sansio import events as ev
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection.lifecycle import OPERATING

SPEC = Path(__file__).resolve().parents[1] / "spec"
FILES = sorted(SPEC.glob("*/*.jsonl"))
HTTP_FILES = [p for p in FILES if p.name.endswith((".http.jsonl", ".sse.jsonl"))]
STATELESS = ("2026-07-28",)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

pytestmark = pytest.mark.skipif(not FILES, reason="no recorded corpus under spec/")


def _load(path: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            assert entry["dir"] in ("send", "recv")
            out.append((entry["dir"], entry["message"]))
    return out


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.stem}" for p in paths]


def _cancelled(transcript: list[tuple[str, dict[str, Any]]]) -> set[tuple[str, rpc.RequestId]]:
    """(direction, id) of every request its sender cancelled."""
    return {
        (direction, obj["params"]["requestId"])
        for direction, obj in transcript
        if obj.get("method") == "notifications/cancelled"
    }


def _one(obj: dict[str, Any]) -> rpc.Message:
    parsed = rpc.parse_payload(json.dumps(obj))
    assert not parsed.invalid, parsed.invalid
    assert len(parsed.messages) == 1 and not parsed.is_batch
    return parsed.messages[0]


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_messages_are_valid_and_typed(path: Path) -> None:
    transcript = _load(path)
    assert transcript, "empty transcript"
    sent: dict[tuple[str, rpc.RequestId], str] = {}
    answered: set[tuple[str, rpc.RequestId]] = set()
    init_version = None
    stateless = path.parent.name in STATELESS
    for direction, obj in transcript:
        msg = _one(obj)
        other = "recv" if direction == "send" else "send"
        if isinstance(msg, rpc.Request):
            assert (direction, msg.id) not in sent, f"duplicate request id {msg.id!r}"
            sent[(direction, msg.id)] = msg.method
            types = s.REQUEST_TYPES.get(msg.method)
            if types is not None and msg.method != "ping":
                s.from_wire(types[0], msg.params or {})
            if stateless and direction == "send":
                assert (msg.params or {})["_meta"][VERSION_KEY] == path.parent.name, msg.method
        elif isinstance(msg, rpc.Notification):
            cls = s.NOTIFICATION_TYPES.get(msg.method)
            if cls is not None:
                s.from_wire(cls, msg.params or {})
        else:
            assert msg.id is not None
            key = (other, msg.id)
            assert key in sent, f"answer to unknown id {msg.id!r}"
            assert key not in answered, f"second answer to {msg.id!r}"
            answered.add(key)
            if isinstance(msg, rpc.Response):
                method = sent[key]
                if msg.result.get("resultType") == "input_required":  # 2026-07-28 multi-round-trip
                    s.from_wire(s.InputRequiredResult, msg.result)
                elif method in s.REQUEST_TYPES:
                    s.parse_result(method, msg.result, revision=path.parent.name)
                if method == "initialize":
                    init_version = msg.result["protocolVersion"]
                if method == "server/discover":
                    assert path.parent.name in msg.result["supportedVersions"]
                    init_version = path.parent.name
    assert init_version == path.parent.name
    unanswered = set(sent) - answered - _cancelled(transcript)
    assert not unanswered, f"unanswered requests: {unanswered}"


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_replay_into_client_connection(path: Path) -> None:
    transcript = _load(path)
    conn = Connection(Role.CLIENT, info={"name": "spec-replay", "version": "0"},
                      capabilities=_client_capabilities(transcript), supported_versions=[path.parent.name])
    id_map: dict[rpc.RequestId, rpc.RequestId] = {}
    cancelled_tokens: set[Any] = set()
    tokens: dict[rpc.RequestId, Any] = {}
    for direction, obj in transcript:
        msg = _one(obj)
        events: list[ev.Event] = []
        if direction == "send":
            if isinstance(msg, rpc.Request):
                if msg.method == "initialize":
                    assert msg.params is not None
                    new = conn.initialize(protocol_version=msg.params["protocolVersion"])
                elif msg.method == "server/discover":
                    new = conn.discover(protocol_version=path.parent.name)
                else:
                    params, token = _own_meta(msg.params)
                    new = conn.send_request(msg.method, params, progress_token=token)
                    tokens[msg.id] = token
                id_map[msg.id] = new
            elif isinstance(msg, rpc.Notification):
                if msg.method == "notifications/initialized":
                    pass  # the Connection queued it itself on the initialize answer
                elif msg.method == "notifications/cancelled":
                    assert msg.params is not None
                    cancelled_tokens.add(tokens.get(msg.params["requestId"]))
                    conn.cancel(id_map[msg.params["requestId"]])
                else:
                    conn.send_notification(msg.method, msg.params)
            elif isinstance(msg, rpc.Response):
                conn.send_response(msg.id, msg.result)  # answering a server request
            else:
                assert isinstance(msg, rpc.ErrorResponse) and msg.id is not None
                conn.send_error(msg.id, msg.error.code, msg.error.message, msg.error.data)
        else:
            if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id is not None:
                obj = {**obj, "id": id_map[msg.id]}
            events = conn.receive_bytes(json.dumps(obj))
        bad = [e for e in events if isinstance(e, (ev.ProtocolIssue, ev.HandshakeFailed))
               and not _late_after_cancel(e, obj, cancelled_tokens)]
        assert not bad, f"{path.name}: {bad}"
        conn.outgoing()
    if path.parent.name not in STATELESS:
        assert conn.state is OPERATING
    assert conn.protocol_version == path.parent.name
    assert not conn.pending


def _client_capabilities(transcript: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """What the recording client declared (initialize, or a stateless request's envelope)."""
    for direction, obj in transcript:
        if direction == "send" and obj.get("method") == "initialize":
            return dict(obj["params"].get("capabilities") or {})
        meta = (obj.get("params") or {}).get("_meta") or {}
        if direction == "send" and "io.modelcontextprotocol/clientCapabilities" in meta:
            return dict(meta["io.modelcontextprotocol/clientCapabilities"])
    return {}


def _own_meta(params: dict[str, Any] | None) -> tuple[dict[str, Any] | None, Any]:
    """``params`` without what the Connection adds itself (the progress token, the envelope)."""
    if params is None or not isinstance(params.get("_meta"), dict):
        return params, None
    meta = {k: v for k, v in params["_meta"].items() if not k.startswith("io.modelcontextprotocol/")}
    token = meta.pop("progressToken", None)
    out = {k: v for k, v in params.items() if k != "_meta"}
    if meta:
        out["_meta"] = meta
    return out, token


def _late_after_cancel(event: ev.Event, obj: dict[str, Any], cancelled_tokens: set[Any]) -> bool:
    """Progress for a request the client cancelled may still arrive (the notifications
    crossed: basic/utilities/cancellation); the Connection reports and drops it."""
    return (isinstance(event, ev.ProtocolIssue) and event.kind == "unknown-progress-token"
            and obj.get("method") == "notifications/progress"
            and obj["params"].get("progressToken") in cancelled_tokens)


# ---------------------------------------------------------------- mutations

#: (method, list member, required member of each item) for recorded results.
_MUTABLE = (
    ("tools/list", "tools", "name"),
    ("tools/list", "tools", "inputSchema"),
    ("prompts/list", "prompts", "name"),
    ("resources/list", "resources", "uri"),
    ("resources/list", "resources", "name"),
    ("resources/read", "contents", "uri"),
    ("prompts/get", "messages", "role"),
    ("prompts/get", "messages", "content"),
    ("tools/call", "content", "type"),
)


def _answers() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in FILES:
        sent: dict[rpc.RequestId, str] = {}
        for direction, obj in _load(path):
            if direction == "send" and "method" in obj and "id" in obj:
                sent[obj["id"]] = obj["method"]
            elif direction == "recv" and "result" in obj and obj.get("id") in sent:
                out.append((sent[obj["id"]], obj["result"]))
    return out


_CANDIDATES = [
    (method, key, member, result)
    for method, result in _answers()
    for m, key, member in _MUTABLE
    if m == method and result.get(key)
]
# A type no required member accepts: text/uri/name/role want strings, inputSchema and content objects.
_WRONG = st.sampled_from([12345, True, None, [1, 2]])


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_mutated_answer_is_rejected_at_the_mutation(data: st.DataObject) -> None:
    if not _CANDIDATES:
        pytest.skip("no mutable answers in the corpus")
    method, key, member, result = data.draw(st.sampled_from(_CANDIDATES))
    mutated = copy.deepcopy(result)
    index = data.draw(st.integers(0, len(mutated[key]) - 1))
    item = mutated[key][index]
    if data.draw(st.booleans()):
        item.pop(member, None)
    else:
        item[member] = data.draw(_WRONG)
    with pytest.raises(s.SchemaError) as info:
        s.parse_result(method, mutated)
    assert info.value.path[:3] == ["result", key, index], str(info.value)
    # the unmutated original still parses
    s.parse_result(method, result)
