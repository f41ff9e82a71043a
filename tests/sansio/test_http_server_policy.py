"""The HTTP server's policy (``_sansio/http/server/policy.py``): a request in, an action out, no I/O.

Table-driven: each row is one request against one view of the live state and the action
the policy must choose (for a ``Respond``: its status, and the JSON-RPC error code and id
of its body).  Every status the Trio app answers with comes from ``decide`` or ``answer``;
the last test holds the app to that.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection import stateless as sl
from trimcp._sansio.http.server import policy as sp
from trimcp._sansio.http.server.replay import STANDALONE_KEY
from trimcp._sansio.http.server.routing import OriginPolicy, RequestHead, stateless_status

MODERN = "2026-07-28"
LATEST = "2025-11-25"
SID = "s1"
LEGACY_SID = "L1"
HOST = "127.0.0.1:8000"
JSON_SSE = "application/json, text/event-stream"


# ---------------------------------------------------------------- a view of the live state


@attrs.define
class FakeSession:
    protocol_version: str | None = LATEST
    closed: bool = False
    exchanges: frozenset[rpc.RequestId] = frozenset()
    standalone_attached: bool = False
    streams: frozenset[str] = frozenset({STANDALONE_KEY})

    def in_flight(self, request_id: rpc.RequestId) -> bool:
        return request_id in self.exchanges

    def has_stream(self, key: str) -> bool:
        return key in self.streams


@attrs.define
class FakeView:
    sessions: dict[str, FakeSession] = attrs.field(factory=lambda: {SID: FakeSession()})
    legacy: dict[str, FakeSession] = attrs.field(factory=lambda: {LEGACY_SID: FakeSession("2024-11-05")})
    tools: dict[str, Mapping[str, Any]] = attrs.field(factory=dict)

    def session(self, session_id: str) -> FakeSession | None:
        return self.sessions.get(session_id)

    def legacy_session(self, session_id: str) -> FakeSession | None:
        return self.legacy.get(session_id)

    def tool_schema(self, name: str) -> Mapping[str, Any] | None:
        return self.tools.get(name)


def view(**session: Any) -> FakeView:
    return FakeView(sessions={SID: FakeSession(**session)})


POLICY = sp.ServerPolicy(
    OriginPolicy.loopback(8000),
    mcp_path="/mcp",
    sse_path="/sse",
    messages_path="/messages",
    max_body_size=1000,
    handshake_versions=("2024-11-05", "2025-03-26", "2025-06-18", LATEST),
)


# ---------------------------------------------------------------- requests


def head(method: str = "POST", target: str = "/mcp", **headers: str) -> RequestHead:
    fields = {"host": HOST, "accept": JSON_SSE, **headers}
    return RequestHead.build(method, target, [(k.replace("_", "-"), v) for k, v in fields.items()])


def in_session(method: str = "POST", target: str = "/mcp", **headers: str) -> RequestHead:
    return head(method, target, mcp_session_id=SID, mcp_protocol_version=LATEST, **headers)


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


def req(rid: Any, method: str = "tools/list", params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


def note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


INIT = body(req(1, "initialize", {"protocolVersion": LATEST, "capabilities": {}}))
CALL = body(req(7))
ENVELOPE = sl.build_envelope(MODERN, {}, {"name": "t", "version": "1"}, None)


def modern(rid: Any = 9, method: str = "tools/list", **params: Any) -> bytes:
    return body(req(rid, method, {**params, "_meta": ENVELOPE}))


def modern_head(method: str = "tools/list", **headers: str) -> RequestHead:
    return head(mcp_protocol_version=MODERN, mcp_method=method, **headers)


# ---------------------------------------------------------------- Respond rows


@attrs.frozen
class Status:
    """The expected ``Respond``: status, JSON-RPC code and id (``None``: a plain body)."""

    status: int
    code: int | None = None
    id: Any = None
    header: tuple[str, str] | None = None


RESPOND_ROWS: list[tuple[str, RequestHead, bytes, FakeView, Status]] = [
    # DNS rebinding and routing
    ("foreign origin", head(origin="http://evil.example"), CALL, view(), Status(403, -32600)),
    ("foreign host", head(host="evil.example"), CALL, view(), Status(421, -32600)),
    ("unknown path", head(target="/nope"), CALL, view(), Status(404)),
    (
        "method",
        head("PUT"),
        b"",
        view(),
        Status(405, -32600, header=("allow", "POST, GET, DELETE")),
    ),
    ("legacy method", head("POST", "/sse"), b"", view(), Status(405, -32600)),
    # POST: the body
    ("content type", in_session(content_type="text/plain"), CALL, view(), Status(415, -32600)),
    ("too large", in_session(), b" " * 1001, view(), Status(413, -32600)),
    ("unparsable", in_session(), b"{", view(), Status(400, rpc.PARSE_ERROR)),
    ("not JSON-RPC", in_session(), b'{"id": 3}', view(), Status(400, rpc.INVALID_REQUEST, 3)),
    # POST, stateless era
    ("stateless batch", modern_head(), b"[" + modern(1) + b"]", view(), Status(400, -32600, 1)),
    (
        "stateless notification",
        modern_head(),
        body(note("notifications/cancelled")),
        view(),
        Status(202),
    ),
    (
        "stateless response",
        modern_head(),
        body({"jsonrpc": "2.0", "id": 1, "result": {}}),
        view(),
        Status(400, -32600),
    ),
    (
        "stateless method header",
        modern_head("tools/call"),
        modern(),
        view(),
        Status(400, rpc.HEADER_MISMATCH, 9),
    ),
    (
        "stateless no envelope version",
        modern_head(),
        body(req(9, "tools/list", {"_meta": {sl.PROTOCOL_VERSION_KEY: MODERN}})),
        view(),
        Status(400, rpc.INVALID_PARAMS, 9),
    ),
    (
        "stateless param header",
        modern_head("tools/call", mcp_name="q"),
        modern(9, "tools/call", name="q", arguments={"region": "eu"}),
        FakeView(
            tools={
                "q": {
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                }
            }
        ),
        Status(400, rpc.HEADER_MISMATCH, 9),
    ),
    (
        "stateless accept",
        modern_head(accept="text/plain"),
        modern(),
        view(),
        Status(406, -32600, 9),
    ),
    # POST, handshake era, no session
    ("initialize accept", head(accept="text/plain"), INIT, view(), Status(406, -32600, 1)),
    ("missing session", head(), CALL, view(), Status(400, -32600, 7)),
    ("batch outside a session", head(), b"[" + CALL + b"]", view(), Status(400, -32600, 7)),
    # POST naming a session
    ("malformed session id", head(mcp_session_id="a b"), CALL, view(), Status(400, -32600, 7)),
    ("unknown session", head(mcp_session_id="other"), CALL, view(), Status(404, -32600, 7)),
    ("closed session", in_session(), CALL, view(closed=True), Status(404, -32600, 7)),
    (
        "unsupported version",
        head(mcp_session_id=SID, mcp_protocol_version="1999-01-01"),
        CALL,
        view(),
        Status(400, -32600, 7),
    ),
    ("batch the revision lacks", in_session(), b"[" + CALL + b"]", view(), Status(400, -32600, 7)),
    (
        "batch with initialize",
        in_session(),
        b"[" + INIT + b"]",
        view(protocol_version="2025-03-26"),
        Status(400, -32600, 1),
    ),
    (
        "batch sharing an id",
        in_session(),
        b"[" + CALL + b"," + CALL + b"]",
        view(protocol_version="2025-03-26"),
        Status(400, -32600, 7),
    ),
    ("request accept", in_session(accept="text/plain"), CALL, view(), Status(406, -32600, 7)),
    ("id in flight", in_session(), CALL, view(exchanges=frozenset({7})), Status(409, -32600, 7)),
    # GET
    (
        "GET stateless version",
        head("GET", mcp_protocol_version=MODERN),
        b"",
        view(),
        Status(405, -32600, header=("allow", "POST")),
    ),
    ("GET accept", in_session("GET", accept="application/json"), b"", view(), Status(406, -32600)),
    ("GET missing session", head("GET"), b"", view(), Status(400, -32600)),
    ("GET unknown session", head("GET", mcp_session_id="other"), b"", view(), Status(404, -32600)),
    (
        "GET second stream",
        in_session("GET"),
        b"",
        view(standalone_attached=True),
        Status(409, -32600),
    ),
    ("GET resume gone", in_session("GET", last_event_id="5.3"), b"", view(), Status(200)),
    # DELETE
    (
        "DELETE stateless version",
        head("DELETE", mcp_protocol_version=MODERN),
        b"",
        view(),
        Status(405, -32600, header=("allow", "POST")),
    ),
    (
        "DELETE unknown session",
        head("DELETE", mcp_session_id="other"),
        b"",
        view(),
        Status(404, -32600),
    ),
    # legacy HTTP+SSE
    (
        "legacy GET accept",
        head("GET", "/sse", accept="application/json"),
        b"",
        view(),
        Status(406, -32600),
    ),
    ("legacy POST no session", head("POST", "/messages"), CALL, view(), Status(400, -32600)),
    (
        "legacy POST unknown",
        head("POST", "/messages?session_id=zz"),
        CALL,
        view(),
        Status(404, -32600),
    ),
    (
        "legacy POST content type",
        head("POST", f"/messages?session_id={LEGACY_SID}", content_type="text/html"),
        CALL,
        view(),
        Status(415, -32600),
    ),
    (
        "legacy POST unparsable",
        head("POST", f"/messages?session_id={LEGACY_SID}"),
        b"[",
        view(),
        Status(400, rpc.PARSE_ERROR),
    ),
    (
        "legacy POST batch",
        head("POST", f"/messages?session_id={LEGACY_SID}"),
        b"[" + CALL + b"]",
        view(),
        Status(400, -32600, 7),
    ),
]


def check_respond(action: sp.Action, want: Status) -> None:
    assert isinstance(action, sp.Respond), action
    assert action.status == want.status
    headers = dict(action.headers)
    if want.code is None:
        assert headers.get("content-type") != "application/json"
    else:
        assert headers["content-type"] == "application/json"
        error = json.loads(action.body)
        assert error["error"]["code"] == want.code and error["id"] == want.id
    if want.header is not None:
        assert headers[want.header[0]] == want.header[1]


@pytest.mark.parametrize(
    ("request_head", "data", "state", "want"),
    [row[1:] for row in RESPOND_ROWS],
    ids=[row[0] for row in RESPOND_ROWS],
)
def test_refusals(request_head: RequestHead, data: bytes, state: FakeView, want: Status) -> None:
    action = POLICY.decide(request_head, data, state)
    check_respond(action, want)
    assert POLICY.decide(request_head, data, state) == action  # deterministic


def test_get_without_get_stream_allows_post_and_delete() -> None:
    action = attrs.evolve(POLICY, get_stream=False).decide(in_session("GET"), b"", view())
    check_respond(action, Status(405, -32600, header=("allow", "POST, DELETE")))


def test_without_handshake_revisions_every_post_is_stateless() -> None:
    stateless_only = attrs.evolve(POLICY, handshake_versions=())
    # A handshake-era initialize carries no envelope: refused as a malformed stateless request.
    check_respond(stateless_only.decide(head(), INIT, view()), Status(400, rpc.INVALID_PARAMS, 1))
    check_respond(stateless_only.decide(in_session("GET"), b"", view()), Status(405, -32600))
    check_respond(stateless_only.decide(in_session("DELETE"), b"", view()), Status(405, -32600))


def test_a_refusal_after_the_session_was_found_counts_as_its_activity() -> None:
    busy = POLICY.decide(in_session(), CALL, view(exchanges=frozenset({7})))
    assert isinstance(busy, sp.Respond) and busy.session_id == SID
    unknown = POLICY.decide(head(mcp_session_id="other"), CALL, view())
    assert isinstance(unknown, sp.Respond) and unknown.session_id is None


# ---------------------------------------------------------------- actions that serve


def test_initialize_opens_a_session() -> None:
    action = POLICY.decide(head(), INIT, view())
    assert isinstance(action, sp.OpenSession)
    assert action.request.method == "initialize" and action.request.id == 1
    assert action.json_ok and action.post.data == INIT
    sse_only = POLICY.decide(head(accept="text/event-stream"), INIT, view())
    assert isinstance(sse_only, sp.OpenSession) and not sse_only.json_ok


def test_notifications_only_are_submitted_and_answered_202() -> None:
    data = body(note("notifications/cancelled", {"requestId": 4}))
    action = POLICY.decide(in_session(), data, view())
    assert isinstance(action, sp.SubmitToSession) and action.session_id == SID
    assert action.reply == sp.ACCEPTED and action.reply.status == 202
    assert action.cancelled == (4,)  # the app never reads the payload for it


def test_cancelled_ids_that_are_no_ids_are_left_out() -> None:
    data = body([note("notifications/cancelled", {"requestId": v}) for v in (1.5, None, "x")])
    action = POLICY.decide(in_session(), data, view(protocol_version="2025-03-26"))
    assert isinstance(action, sp.SubmitToSession) and action.cancelled == ("x",)


@pytest.mark.parametrize(
    ("version", "accept", "json_response", "sse", "priming"),
    [
        (LATEST, JSON_SSE, False, True, True),
        ("2025-06-18", JSON_SSE, False, True, False),
        ("2025-03-26", JSON_SSE, False, True, False),
        (LATEST, "application/json", False, False, False),
        (LATEST, JSON_SSE, True, False, False),
        (LATEST, "text/event-stream", True, True, True),
    ],
)
def test_a_request_in_a_session_gets_a_reply_shape(
    version: str, accept: str, json_response: bool, sse: bool, priming: bool
) -> None:
    policy = attrs.evolve(POLICY, json_response=json_response)
    action = policy.decide(in_session(accept=accept), CALL, view(protocol_version=version))
    assert isinstance(action, sp.SubmitToSession)
    json_ok = "application/json" in accept
    # An answer that comes first, at once, goes as JSON whenever the client takes both.
    when_ready = sse and json_ok
    assert action.reply == sp.Reply(sse, json_ok, priming, when_ready, related=7)


def test_a_batch_relates_to_no_single_request() -> None:
    data = b"[" + CALL + b"," + body(req(8)) + b"]"
    action = POLICY.decide(in_session(), data, view(protocol_version="2025-03-26"))
    assert isinstance(action, sp.SubmitToSession) and isinstance(action.reply, sp.Reply)
    assert action.reply.related is None and [r.id for r in action.post.requests] == [7, 8]


def test_stateless_request_is_served_stateless() -> None:
    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }
    data = modern(9, "tools/call", name="q", arguments={"region": "eu"})
    ok = modern_head("tools/call", mcp_name="q", mcp_param_region="eu")
    action = POLICY.decide(ok, data, FakeView(tools={"q": schema}))
    assert isinstance(action, sp.ServeStateless) and action.request.id == 9
    assert action.json_ok and action.sse_ok and action.status_of is stateless_status
    # An envelope makes a POST stateless whatever session header it carries.
    action = POLICY.decide(modern_head(mcp_session_id="ignored"), modern(), view())
    assert isinstance(action, sp.ServeStateless)
    json_only = POLICY.decide(modern_head(accept="application/json"), modern(), view())
    assert isinstance(json_only, sp.ServeStateless) and not json_only.sse_ok


def test_get_attaches_the_standalone_stream_or_resumes_one() -> None:
    assert POLICY.decide(in_session("GET"), b"", view()) == sp.AttachStream(SID, STANDALONE_KEY, None, priming=True)
    old = view(protocol_version="2025-06-18", streams=frozenset({"0", "3"}))
    assert POLICY.decide(in_session("GET", last_event_id="3.12"), b"", old) == sp.AttachStream(
        SID, "3", 12, priming=False
    )
    # An id this server never made reads as no id: the standalone stream.
    assert POLICY.decide(in_session("GET", last_event_id="zz"), b"", view()) == sp.AttachStream(
        SID, STANDALONE_KEY, None, priming=True
    )


def test_delete_ends_the_session() -> None:
    action = POLICY.decide(in_session("DELETE"), b"", view())
    assert action == sp.EndSession(SID) and action.then.status == 200


def test_legacy_endpoints() -> None:
    assert POLICY.decide(head("GET", "/sse"), b"", view()) == sp.OpenLegacyStream()
    target = f"/messages?session_id={LEGACY_SID}"
    action = POLICY.decide(head("POST", target), CALL, view())
    assert isinstance(action, sp.SubmitToLegacySession) and action.session_id == LEGACY_SID
    assert action.then.status == 202 and action.then.body == b"Accepted"
    batches = FakeView(legacy={LEGACY_SID: FakeSession("2025-03-26")})
    assert isinstance(POLICY.decide(head("POST", target), b"[" + CALL + b"]", batches), sp.SubmitToLegacySession)


# ---------------------------------------------------------------- facts after acting


@pytest.mark.parametrize(
    ("fact", "want"),
    [
        (
            sp.SessionsFull(1, open_sessions=3),
            Status(503, rpc.INTERNAL_ERROR, 1, header=("retry-after", "1")),
        ),
        (sp.InitializeUnanswered(1), Status(500, rpc.INTERNAL_ERROR, 1)),
        (sp.StreamAborted(5, cancelled=True), Status(200, rpc.INTERNAL_ERROR, 5)),
        (sp.StreamAborted(5, cancelled=False), Status(404, -32600)),
        (sp.StatelessUnanswered(9), Status(500, rpc.INTERNAL_ERROR, 9)),
        (sp.SessionGone(), Status(404, -32600)),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, Status) else str(v.status),
)
def test_answers_to_facts(fact: sp.Fact, want: Status) -> None:
    check_respond(sp.answer(fact), want)


def test_priming_is_a_per_revision_fact() -> None:
    assert sp.primes_streams(LATEST)
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", MODERN, None, "2099-01-01"):
        assert not sp.primes_streams(version), version


# ---------------------------------------------------------------- the app decides nothing


def test_the_app_answers_only_what_the_policy_decided() -> None:
    """Every HTTP answer of the app goes through ``_respond`` with a policy ``Respond``:
    no status number, no ``HttpError`` and no ``respond_error`` in the executor."""
    from trimcp.server.transports.http import app

    tree = ast.parse(Path(app.__file__).read_text())
    executor = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "HttpApp")
    responders = []
    for node in ast.walk(executor):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("respond", "respond_error")
        ):
            responders.append(node.func.attr)
        if isinstance(node, ast.Name):
            assert node.id != "HttpError", "the app builds an answer of its own"
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            assert not 100 <= node.value <= 599, f"a status in the app: {node.value}"
    assert responders == ["respond"]  # the one in ``_respond``
