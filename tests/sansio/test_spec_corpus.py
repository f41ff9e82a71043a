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
from repo_paths import SPEC

from trimcp import Connection, Role
from trimcp import schema as s
from trimcp._sansio import events as ev
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection.lifecycle import OPERATING

SPEC = SPEC
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
    conn = Connection(
        Role.CLIENT,
        info={"name": "spec-replay", "version": "0"},
        capabilities=_client_capabilities(transcript),
        supported_versions=[path.parent.name],
    )
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
        bad = [
            e
            for e in events
            if isinstance(e, (ev.ProtocolIssue, ev.HandshakeFailed))
            and not _late_after_cancel(e, obj, cancelled_tokens)
        ]
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
    return (
        isinstance(event, ev.ProtocolIssue)
        and event.kind == "unknown-progress-token"
        and obj.get("method") == "notifications/progress"
        and obj["params"].get("progressToken") in cancelled_tokens
    )


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


# ---------------------------------------------------------------- the HTTP evidence


#: The transport each file name stands for (spec/README.md); the meta file must agree.
def _transport_of(path: Path) -> str:
    if path.name.endswith(".http.jsonl"):
        return "streamable-http"
    if path.name.endswith(".sse.jsonl"):
        return "sse"
    return "stdio"


def _meta_of(path: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(path.with_name(path.name[: -len(".jsonl")] + ".meta.json").read_text("utf-8"))
    return meta


def _kind(obj: dict[str, Any]) -> str:
    if "method" in obj:
        return "request" if "id" in obj else "notification"
    return "answer"


def _content_type(headers: dict[str, str] | None) -> str:
    return (headers or {}).get("content-type", "").split(";")[0].strip().lower()


MESSAGE_TYPES = ("application/json", "text/event-stream")


def check_meta_transport(path: Path, meta: dict[str, Any]) -> None:
    assert meta.get("transport") == _transport_of(path), (path.name, meta.get("transport"))


def check_streamable_http(entries: list[dict[str, Any]], revision: str) -> None:
    """basic/transports, Streamable HTTP: a POSTed notification or response is answered
    202; a POSTed request 200 with a JSON or SSE body (2026-07-28 may answer a JSON-RPC
    error with a 4xx, as it must for HeaderMismatch or an unsupported version); from
    2025-06-18 on every request after initialize carries ``MCP-Protocol-Version`` equal to
    the negotiated revision; once the server issued ``Mcp-Session-Id`` every later request
    carries it; every received message came on a 200 JSON or SSE response."""
    cancelled = {
        obj["params"]["requestId"]
        for e in entries
        if e["dir"] == "send"
        for obj in [e["message"]]
        if obj.get("method") == "notifications/cancelled"
    }
    session: str | None = None
    for index, entry in enumerate(entries):
        obj, http = entry["message"], entry.get("http")
        where = f"entry {index} ({obj.get('method') or 'answer'})"
        assert isinstance(http, dict), f"{where}: no http member"
        if entry["dir"] == "send":
            if http.get("posted") is False:
                assert revision in STATELESS and obj.get("method") == "notifications/cancelled", where
                continue
            assert http["method"] == "POST", where
            headers = http["headers"]
            kind = _kind(obj)
            if kind == "request" and obj["id"] in cancelled and http.get("status") is None:
                pass  # cancelled before the answer's head arrived: the stream was closed
            elif kind == "request":
                status = http.get("status")
                error_ok = revision in STATELESS and isinstance(status, int) and 400 <= status < 500
                assert status == 200 or error_ok, f"{where}: status {status}"
                assert _content_type(http.get("response_headers")) in MESSAGE_TYPES, where
            else:
                assert http.get("status") == 202, f"{where}: status {http.get('status')}"
            if revision >= "2025-06-18" and obj.get("method") != "initialize":
                assert headers.get("mcp-protocol-version") == revision, f"{where}: {headers}"
            if session is not None:
                assert headers.get("mcp-session-id") == session, f"{where}: {headers}"
            issued = (http.get("response_headers") or {}).get("mcp-session-id")
        else:
            status = http.get("status") or 0
            assert status == 200 or (revision in STATELESS and 400 <= status < 500), f"{where}: status {status}"
            assert _content_type(http.get("headers")) in MESSAGE_TYPES, where
            issued = (http.get("headers") or {}).get("mcp-session-id")
        if session is None and issued:
            session = issued


def check_http_sse(entries: list[dict[str, Any]]) -> None:
    """basic/transports 2024-11-05, HTTP with SSE: the client POSTs every message to the
    endpoint the server announced (one URL, accepted with a 2xx); every server message
    comes down the GET event stream."""
    urls = set()
    for index, entry in enumerate(entries):
        obj, http = entry["message"], entry.get("http")
        where = f"entry {index} ({obj.get('method') or 'answer'})"
        assert isinstance(http, dict), f"{where}: no http member"
        if entry["dir"] == "send":
            assert http["method"] == "POST" and 200 <= (http.get("status") or 0) < 300, where
            urls.add(http["url"])
        else:
            assert http["via"] == "GET" and http["status"] == 200, where
            assert _content_type(http["headers"]) == "text/event-stream", where
    assert len(urls) == 1, urls


def check_http(path: Path, entries: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    check_meta_transport(path, meta)
    transport = _transport_of(path)
    if transport == "streamable-http":
        check_streamable_http(entries, path.parent.name)
    elif transport == "sse":
        check_http_sse(entries)
    else:
        assert not any("http" in e for e in entries), "an stdio transcript with an http member"


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_http_evidence(path: Path) -> None:
    check_http(path, _entries(path), _meta_of(path))


def _first_send(entries: list[dict[str, Any]], kind: str, after_init: bool = True) -> dict[str, Any] | None:
    for entry in entries[1 if after_init else 0 :]:
        http = entry.get("http") or {}
        if entry["dir"] == "send" and _kind(entry["message"]) == kind and http.get("status") is not None:
            return entry
    return None


def _set_status(kind: str, status: int) -> Any:
    def mutate(entries: list[dict[str, Any]], revision: str) -> bool:
        entry = _first_send(entries, kind)
        if entry is None:
            return False
        entry["http"]["status"] = status
        return True

    return mutate


def _json_as_html(entries: list[dict[str, Any]], revision: str) -> bool:
    entry = _first_send(entries, "request")
    if entry is None:
        return False
    entry["http"]["response_headers"]["content-type"] = "text/html"
    return True


def _header(name: str, value: str | None, since: str = "") -> Any:
    def mutate(entries: list[dict[str, Any]], revision: str) -> bool:
        if revision < since:
            return False
        later = [e for e in entries[1:] if e["dir"] == "send" and name in (e.get("http") or {}).get("headers", {})]
        if not later:
            return False
        headers = later[-1]["http"]["headers"]
        if value is None:
            del headers[name]
        else:
            headers[name] = value
        return True

    return mutate


def _recv_via_post(entries: list[dict[str, Any]], revision: str) -> bool:
    for entry in entries:
        if entry["dir"] == "recv":
            entry["http"]["via"] = "POST"
            return True
    return False


_HTTP_MUTATIONS = {
    "notification answered 200": ("streamable-http", _set_status("notification", 200)),
    "response answered 200": ("streamable-http", _set_status("answer", 200)),
    "request answered 202": ("streamable-http", _set_status("request", 202)),
    "request answered text/html": ("streamable-http", _json_as_html),
    "protocol version header dropped": ("streamable-http", _header("mcp-protocol-version", None, "2025-06-18")),
    "protocol version header wrong": ("streamable-http", _header("mcp-protocol-version", "2025-03-26", "2025-06-18")),
    "session id dropped": ("streamable-http", _header("mcp-session-id", None)),
    "session id changed": ("streamable-http", _header("mcp-session-id", "session-other")),
    "sse message on a POST": ("sse", _recv_via_post),
}


@pytest.mark.parametrize("name", sorted(_HTTP_MUTATIONS))
def test_http_check_rejects_altered_transcript(name: str) -> None:
    transport, mutate = _HTTP_MUTATIONS[name]
    altered = 0
    for path in HTTP_FILES:
        if _transport_of(path) != transport:
            continue
        entries, meta = _entries(path), _meta_of(path)
        check_http(path, entries, meta)  # the recording itself passes
        if not mutate(entries, path.parent.name):
            continue
        altered += 1
        with pytest.raises(AssertionError):
            check_http(path, entries, meta)
    if not altered:
        pytest.skip(f"no {transport} transcript to alter")


@pytest.mark.parametrize(
    "path",
    HTTP_FILES[:1] + [p for p in FILES if p not in HTTP_FILES][:1],
    ids=_ids(HTTP_FILES[:1] + [p for p in FILES if p not in HTTP_FILES][:1]),
)
def test_meta_transport_must_match_the_file_name(path: Path) -> None:
    meta = _meta_of(path)
    check_meta_transport(path, meta)
    for wrong in ("stdio", "streamable-http", "sse"):
        if wrong != meta["transport"]:
            with pytest.raises(AssertionError):
                check_meta_transport(path, {**meta, "transport": wrong})
