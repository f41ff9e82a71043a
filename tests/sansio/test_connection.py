"""The MCP Connection state machine (trimcp._sansio.connection.core), client and server roles."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest

from trimcp._errors import LocalProtocolError, RemoteProtocolError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection.admission import ANY, RECEIVE_ALLOWED, SEND_ALLOWED
from trimcp._sansio.connection.core import LOG_LEVELS, Connection
from trimcp._sansio.connection.lifecycle import (
    CLOSED,
    IDLE,
    INITIALIZING,
    OPERATING,
    TRANSITIONS,
    LifecycleEvent,
    Role,
    transition,
)
from trimcp._sansio.connection.requests import PendingTable
from trimcp._sansio.events import (
    CancelRequested,
    ErrorReceived,
    Event,
    HandshakeFailed,
    Initialized,
    InvalidAnswer,
    LegacyServer,
    LogLevelChanged,
    NotificationReceived,
    ProgressReceived,
    ProtocolIssue,
    RequestReceived,
    ResponseReceived,
)
from trimcp._sansio.framing.lines import LineDecoder
from trimcp._sansio.revisions import (
    ALL_VERSIONS,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    REVISIONS,
    Era,
    get_revision,
    has_capability,
    own_gate,
    peer_gate,
)

CLIENT_INFO = {"name": "test-client", "version": "1"}
SERVER_INFO = {"name": "test-server", "version": "2"}
ALL_SERVER_CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
    "tasks": {"list": {}, "cancel": {}},
}
ALL_CLIENT_CAPS: dict[str, Any] = {
    "sampling": {},
    "roots": {"listChanged": True},
    "elicitation": {},
    "tasks": {"list": {}, "cancel": {}},
}


def client(versions: Sequence[str] = HANDSHAKE_VERSIONS, caps: dict[str, Any] | None = None) -> Connection:
    return Connection(Role.CLIENT, info=CLIENT_INFO, capabilities=caps, supported_versions=versions)


def server(
    versions: Sequence[str] = HANDSHAKE_VERSIONS,
    caps: dict[str, Any] | None = None,
    instructions: str | None = None,
) -> Connection:
    return Connection(
        Role.SERVER,
        info=SERVER_INFO,
        capabilities=caps,
        supported_versions=versions,
        instructions=instructions,
    )


def pump(src: Connection, dst: Connection) -> list[Event]:
    """Move everything ``src`` wants to send to ``dst`` over the wire form."""
    events: list[Event] = []
    for msg in src.outgoing():
        events += dst.receive_bytes(rpc.serialize(msg))
    return events


def handshake(c: Connection, s: Connection, version: str | None = None) -> tuple[list[Event], list[Event]]:
    c.initialize(protocol_version=version)
    s_events = pump(c, s)
    c_events = pump(s, c)
    s_events += pump(c, s)
    return c_events, s_events


def pair(
    client_caps: dict[str, Any] | None = None,
    server_caps: dict[str, Any] | None = None,
    *,
    version: str | None = None,
) -> tuple[Connection, Connection]:
    c = client(caps=ALL_CLIENT_CAPS if client_caps is None else client_caps)
    s = server(caps=ALL_SERVER_CAPS if server_caps is None else server_caps)
    handshake(c, s, version)
    assert c.state is OPERATING and s.state is OPERATING
    return c, s


def req(id_: rpc.RequestId, method: str, params: dict[str, Any] | None = None) -> bytes:
    return rpc.serialize(rpc.Request(id_, method, params))


def issues(events: list[Event]) -> list[str]:
    return [e.kind for e in events if isinstance(e, ProtocolIssue)]


def only_error(conn: Connection) -> rpc.ErrorResponse:
    out = conn.outgoing()
    assert len(out) == 1 and isinstance(out[0], rpc.ErrorResponse), out
    return out[0]


# ================================================================= construction


def test_construction() -> None:
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=["2024-11-05", "2025-06-18", "2025-03-26"])
    assert c.supported_versions == ("2025-06-18", "2025-03-26", "2024-11-05")
    assert c.state is IDLE and c.protocol_version is None
    assert c.revision.name == "2025-06-18"  # before negotiation: the newest supported
    assert c.capabilities == {} and c.pending == {} and c.outgoing() == []
    caps = {"roots": {}}
    c2 = client(caps=caps)
    c2.capabilities["x"] = 1
    assert caps == {"roots": {}}  # copied, not aliased
    with pytest.raises(ValueError, match="unknown MCP protocol revision"):
        client(versions=["2025-06-18", "1999-01-01"])
    with pytest.raises(ValueError):
        client(versions=[])


# ================================================================= handshake


def test_client_offers_newest() -> None:
    c = client(caps={"roots": {}})
    rid = c.initialize()
    assert c.state is INITIALIZING
    [msg] = c.outgoing()
    assert msg == rpc.Request(
        rid,
        "initialize",
        {
            "protocolVersion": LATEST_HANDSHAKE,
            "capabilities": {"roots": {}},
            "clientInfo": CLIENT_INFO,
        },
    )
    assert LATEST_HANDSHAKE == "2025-11-25"
    assert c.pending[rid].method == "initialize"


def test_client_may_offer_an_older_supported_version() -> None:
    c = client()
    c.initialize(protocol_version="2025-03-26")
    [msg] = c.outgoing()
    assert isinstance(msg, rpc.Request) and msg.params is not None
    assert msg.params["protocolVersion"] == "2025-03-26"
    with pytest.raises(LocalProtocolError, match="not among supported_versions"):
        client(versions=["2025-06-18"]).initialize(protocol_version="2025-03-26")


def test_full_handshake() -> None:
    c = client(caps={"sampling": {}})
    s = server(caps={"tools": {}}, instructions="be nice")
    c.initialize()
    assert pump(c, s) == []
    assert s.state is INITIALIZING
    assert s.protocol_version == LATEST_HANDSHAKE
    assert s.peer_info == CLIENT_INFO and s.peer_capabilities == {"sampling": {}}
    [answer] = s.outgoing()
    assert answer == rpc.Response(
        0,
        {
            "protocolVersion": LATEST_HANDSHAKE,
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
            "instructions": "be nice",
        },
    )
    c_events = c.receive_message(answer)
    assert c_events == [Initialized(LATEST_HANDSHAKE, SERVER_INFO, {"tools": {}}, "be nice")]
    assert c.state is OPERATING and c.protocol_version == LATEST_HANDSHAKE
    assert c.peer_instructions == "be nice" and c.pending == {}
    [note] = c.outgoing()
    assert note == rpc.Notification("notifications/initialized")
    s_events = s.receive_message(note)
    assert s_events == [Initialized(LATEST_HANDSHAKE, CLIENT_INFO, {"sampling": {}})]
    assert s.state is OPERATING


def test_server_without_instructions_omits_them() -> None:
    c, s = client(), server()
    c.initialize()
    pump(c, s)
    [answer] = s.outgoing()
    assert isinstance(answer, rpc.Response) and "instructions" not in answer.result
    [ev] = c.receive_message(answer)
    assert isinstance(ev, Initialized) and ev.instructions is None


@pytest.mark.parametrize("offered", HANDSHAKE_VERSIONS)
def test_server_answers_with_clients_revision_if_supported(offered: str) -> None:
    c, s = client(), server()
    c_events, _ = handshake(c, s, offered)
    assert s.protocol_version == offered == c.protocol_version
    assert isinstance(c_events[0], Initialized) and c_events[0].protocol_version == offered
    assert c.revision is REVISIONS[offered]


def test_server_answers_with_its_newest_otherwise() -> None:
    c = client()
    s = server(versions=["2024-11-05", "2025-03-26"])
    c_events, s_events = handshake(c, s)  # client offers 2025-11-25
    assert s.protocol_version == "2025-03-26" == c.protocol_version
    assert isinstance(c_events[0], Initialized) and isinstance(s_events[0], Initialized)


def test_server_answers_newest_for_unknown_offer() -> None:
    s = server(versions=["2025-06-18", "2024-11-05"])
    s.receive_bytes(req(1, "initialize", {"protocolVersion": "2099-01-01", "capabilities": {}}))
    [answer] = s.outgoing()
    assert isinstance(answer, rpc.Response) and answer.result["protocolVersion"] == "2025-06-18"
    assert s.peer_info == {}  # no clientInfo: tolerated


def test_server_skips_stateless_revisions_when_negotiating() -> None:
    s = server(versions=["2026-07-28", "2025-06-18"])
    s.receive_bytes(req(1, "initialize", {"protocolVersion": "2026-07-28", "capabilities": {}}))
    [answer] = s.outgoing()
    assert isinstance(answer, rpc.Response) and answer.result["protocolVersion"] == "2025-06-18"


def test_stateless_only_server_refuses_initialize() -> None:
    s = server(versions=["2026-07-28"])
    s.receive_bytes(req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    # Spec (versioning): a modern-only server names the versions it speaks.
    error = only_error(s).error
    assert error.code == rpc.UNSUPPORTED_PROTOCOL_VERSION
    assert error.data == {"supported": ["2026-07-28"], "requested": "2025-06-18"}
    assert s.state is IDLE


def test_client_accepts_older_supported_answer() -> None:
    c = client()
    c.initialize()
    c.outgoing()
    events = c.receive_message(
        rpc.Response(
            0,
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "serverInfo": {"name": "old"},
            },
        )
    )
    assert events == [Initialized("2024-11-05", {"name": "old"}, {}, None)]
    assert c.protocol_version == "2024-11-05" and c.state is OPERATING


def test_handshake_failed_on_unsupported_version() -> None:
    c = client(versions=["2025-06-18", "2025-11-25"])
    c.initialize()
    c.outgoing()
    events = c.receive_message(
        rpc.Response(
            0,
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "serverInfo": {"name": "s"},
            },
        )
    )
    [ev] = events
    assert isinstance(ev, HandshakeFailed) and ev.error is None
    assert "2024-11-05" in ev.reason and "does not support" in ev.reason
    assert c.state is CLOSED and c.protocol_version is None
    assert c.outgoing() == []  # no notifications/initialized


def test_handshake_failed_on_error_answer() -> None:
    c = client()
    c.initialize()
    c.outgoing()
    err = rpc.ErrorObject(-32602, "Unsupported protocol version", {"supported": ["x"]})
    [ev] = c.receive_message(rpc.ErrorResponse(0, err))
    assert ev == HandshakeFailed("server refused initialize: Unsupported protocol version", err)
    assert c.state is CLOSED and c.outgoing() == []


@pytest.mark.parametrize(
    "result",
    [
        {"capabilities": {}, "serverInfo": {"name": "s"}},
        {"protocolVersion": 20250618, "capabilities": {}, "serverInfo": {"name": "s"}},
        {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s"}},
        {"protocolVersion": "2025-06-18", "capabilities": [], "serverInfo": {"name": "s"}},
        {"protocolVersion": "2025-06-18", "capabilities": {}},
        {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": "s"},
        {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"version": "1"}},
    ],
)
def test_handshake_failed_on_malformed_result(result: dict[str, Any]) -> None:
    c = client()
    c.initialize()
    c.outgoing()
    [ev] = c.receive_message(rpc.Response(0, result))
    assert isinstance(ev, HandshakeFailed) and "initialize result has no" in ev.reason
    assert c.state is CLOSED and c.outgoing() == []


@pytest.mark.parametrize(
    "line",
    [b'{"jsonrpc":"2.0","id":0,"result":[]}', b'{"jsonrpc":"2.0","id":0,"error":"nope"}'],
)
def test_handshake_failed_on_invalid_answer(line: bytes) -> None:
    """An answer to initialize that is not even a valid response must end the handshake,
    not leave the client INITIALIZING forever."""
    c = client()
    c.initialize()
    c.outgoing()
    events = c.receive_bytes(line)
    assert issues(events) == ["invalid-message"]
    failed = [e for e in events if isinstance(e, HandshakeFailed)]
    assert len(failed) == 1 and failed[0].error is not None
    assert failed[0].error.code == rpc.INVALID_REQUEST
    assert c.state is CLOSED and c.pending == {} and c.outgoing() == []


def test_initialized_event_values_instructions_non_string() -> None:
    c = client()
    c.initialize()
    c.outgoing()
    [ev] = c.receive_message(
        rpc.Response(
            0,
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "s"},
                "instructions": 3,
            },
        )
    )
    assert isinstance(ev, Initialized) and ev.instructions is None and c.peer_instructions is None


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"capabilities": {}},
        {"protocolVersion": 1, "capabilities": {}},
        {"protocolVersion": "2025-06-18"},
        {"protocolVersion": "2025-06-18", "capabilities": []},
    ],
)
def test_server_rejects_malformed_initialize(params: dict[str, Any] | None) -> None:
    s = server()
    events = s.receive_bytes(req(9, "initialize", params))
    assert issues(events) == ["invalid-initialize"]
    err = only_error(s)
    assert err.id == 9 and err.error.code == rpc.INVALID_PARAMS
    assert s.state is IDLE and s.protocol_version is None
    # a correct initialize still works afterwards
    s.receive_bytes(req(10, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    assert s.state is INITIALIZING


def test_only_a_client_initializes() -> None:
    with pytest.raises(LocalProtocolError):
        server().initialize()
    with pytest.raises(LocalProtocolError, match="Connection.initialize"):
        client().send_request("initialize", {})


@pytest.mark.parametrize("answered", [False, True])
def test_client_second_initialize_is_local_error(answered: bool) -> None:
    c, s = client(), server()
    if answered:
        handshake(c, s)
    else:
        c.initialize()
    with pytest.raises(LocalProtocolError):
        c.initialize()


@pytest.mark.parametrize("initialized", [False, True])
def test_server_second_initialize_is_answered_with_error(initialized: bool) -> None:
    """A peer's second initialize is the peer's mistake: answer with an error,
    keep the session, never raise out of receive_*."""
    c, s = client(), server()
    c.initialize(protocol_version="2025-06-18")
    pump(c, s)
    if initialized:
        pump(s, c)
        pump(c, s)
    s.outgoing()
    state_before = s.state
    events = s.receive_bytes(req(99, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {}}))
    assert len(issues(events)) == 1
    err = only_error(s)
    assert err.id == 99 and err.error.code == rpc.INVALID_REQUEST
    assert s.state is state_before and s.protocol_version == "2025-06-18"


def test_client_rejects_initialize_from_server() -> None:
    c, _ = pair()
    events = c.receive_bytes(req(5, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    err = only_error(c)
    assert err.id == 5 and err.error.code in (rpc.INVALID_REQUEST, rpc.METHOD_NOT_FOUND)
    assert not any(isinstance(e, RequestReceived) for e in events)
    assert c.state is OPERATING


def test_unexpected_initialized_notification() -> None:
    s = server()
    note = rpc.serialize(rpc.Notification("notifications/initialized"))
    assert issues(s.receive_bytes(note)) == ["unexpected-initialized"]
    assert s.state is IDLE
    _, s = pair()
    assert issues(s.receive_bytes(note)) == ["unexpected-initialized"]
    assert s.state is OPERATING
    # a client receiving it just reports the notification
    c = client()
    assert c.receive_bytes(note) == [NotificationReceived("notifications/initialized", {})]


# ================================================================= lifecycle table


def test_transition_table_is_exhaustive() -> None:
    for role, state_cls, event in itertools.product(Role, (IDLE, INITIALIZING, OPERATING, CLOSED), LifecycleEvent):
        expected = TRANSITIONS[role][state_cls].get(event)
        if expected is None:
            with pytest.raises(LocalProtocolError, match=f"role={role.value} and state={state_cls!r}"):
                transition(role, state_cls, event)
        else:
            assert transition(role, state_cls, event) is expected
    assert repr(IDLE) == "IDLE" and repr(ANY) == "ANY" and "anything" in ANY


@pytest.mark.parametrize("before", [IDLE, INITIALIZING, OPERATING, CLOSED])
def test_close_from_every_state(before: type) -> None:
    c, s = client(), server()
    if before is not IDLE:
        c.initialize()
        pump(c, s)
    if before in (OPERATING, CLOSED):
        pump(s, c)
        pump(c, s)
    if before is CLOSED:
        c.close()
        s.close()
    assert c.state is before and s.state is before
    c.outgoing(), s.outgoing()
    c.close()
    s.close()
    assert c.state is CLOSED and s.state is CLOSED
    assert c.outgoing() == [] and s.outgoing() == []  # closing sends nothing by itself


def test_close_returns_pending_ids() -> None:
    c, s = pair()
    a = c.send_request("tools/list")
    b = c.send_request("tools/call", {"name": "x"}, progress_token="t")
    pump(c, s)
    assert c.close() == [a, b]
    assert c.pending == {} and c.close() == []
    # an answer arriving after close is reported, not delivered
    s.send_response(a, {"tools": []})
    events = pump(s, c)
    assert issues(events) == ["after-close"]
    assert c.outgoing() == []


def test_close_during_initialize_returns_initialize_id() -> None:
    c = client()
    rid = c.initialize()
    assert c.close() == [rid]


def test_client_requests_before_initialize() -> None:
    c = client()
    for method in ("tools/list", "resources/read", "logging/setLevel", "x/custom"):
        with pytest.raises(LocalProtocolError, match="state=IDLE"):
            c.send_request(method)
    c.send_request("ping")  # allowed before initialize
    c.initialize()
    for method in ("tools/list", "prompts/list"):
        with pytest.raises(LocalProtocolError, match="state=INITIALIZING"):
            c.send_request(method)
    c.send_request("ping")
    assert [m.method for m in c.outgoing()] == ["ping", "initialize", "ping"]  # type: ignore[union-attr]


def test_server_requests_before_initialized() -> None:
    s = server()
    with pytest.raises(LocalProtocolError):
        s.send_request("sampling/createMessage", {})
    s.send_request("ping")
    s.receive_bytes(req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}}}))
    assert s.state is INITIALIZING
    with pytest.raises(LocalProtocolError, match="state=INITIALIZING"):
        s.send_request("roots/list")
    s.send_request("ping")


def test_send_tables_match_lifecycle_module() -> None:
    assert "ping" in SEND_ALLOWED[Role.CLIENT][IDLE] and "initialize" in SEND_ALLOWED[Role.CLIENT][IDLE]
    assert "initialize" not in SEND_ALLOWED[Role.CLIENT][INITIALIZING]
    assert not SEND_ALLOWED[Role.SERVER][CLOSED]
    assert "tools/list" in RECEIVE_ALLOWED[Role.SERVER][INITIALIZING]


def test_server_rejects_requests_before_initialize() -> None:
    s = server(caps=ALL_SERVER_CAPS)
    events = s.receive_bytes(req(3, "tools/list"))
    assert issues(events) == ["request-before-initialize"]
    err = only_error(s)
    assert err.id == 3 and err.error.code == rpc.INVALID_REQUEST


def test_server_accepts_pipelined_requests_while_initializing() -> None:
    s = server(caps=ALL_SERVER_CAPS)
    s.receive_bytes(req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    s.outgoing()
    assert s.receive_bytes(req(1, "tools/list")) == [RequestReceived(1, "tools/list", {})]


@pytest.mark.parametrize("initialized", [False, True])
def test_client_rejects_server_requests_before_operating(initialized: bool) -> None:
    c = client(caps=ALL_CLIENT_CAPS)
    if initialized:
        c.initialize()
        c.outgoing()
    events = c.receive_bytes(req("s1", "roots/list"))
    assert issues(events) == ["request-before-initialize"]
    err = only_error(c)
    assert err.id == "s1" and err.error.code == rpc.INVALID_REQUEST


def test_sending_after_close() -> None:
    c, s = pair()
    s.receive_bytes(req(50, "tools/call", {"name": "t", "_meta": {"progressToken": "p"}}))
    s.close()
    c.close()
    with pytest.raises(LocalProtocolError):
        c.send_request("ping")
    with pytest.raises(LocalProtocolError):
        c.send_request("tools/list")
    with pytest.raises(LocalProtocolError, match="closed"):
        c.send_notification("notifications/roots/list_changed")
    with pytest.raises(LocalProtocolError):
        c.initialize()
    with pytest.raises(LocalProtocolError, match="closed"):
        s.send_response(50, {})
    with pytest.raises(LocalProtocolError, match="closed"):
        s.send_error(50, 1, "x")
    with pytest.raises(LocalProtocolError):
        s.send_progress("p", 1)
    with pytest.raises(LocalProtocolError):
        s.send_notification("notifications/message", {"level": "info", "data": "x"})
    assert c.outgoing() == [] and s.outgoing() == []


def test_receive_after_close_is_reported_and_not_answered() -> None:
    s = server()
    s.close()
    assert issues(s.receive_bytes(req(1, "ping"))) == ["after-close"]
    assert issues(s.receive_bytes(rpc.serialize(rpc.Notification("x")))) == ["after-close"]
    events = s.receive_bytes(b"{not json")
    assert issues(events) == ["parse-error"]
    events = s.receive_bytes(b'{"jsonrpc":"2.0","id":3,"method":7}')
    assert issues(events) == ["invalid-message"]
    assert s.outgoing() == []  # nothing is sent on a closed connection


def test_notifications_before_operating() -> None:
    c = client(caps=ALL_CLIENT_CAPS)
    with pytest.raises(LocalProtocolError, match="state=IDLE"):
        c.send_notification("notifications/roots/list_changed")
    with pytest.raises(LocalProtocolError, match="use cancel"):
        c.send_notification("notifications/cancelled", {"requestId": 1})
    with pytest.raises(LocalProtocolError, match="send_progress"):
        c.send_notification("notifications/progress", {})
    s = server(caps={"logging": {}})
    s.send_notification("notifications/message", {"level": "info", "data": "early log"})
    with pytest.raises(LocalProtocolError):
        s.send_notification("notifications/tools/list_changed")
    assert s.outgoing() == [rpc.Notification("notifications/message", {"level": "info", "data": "early log"})]


def test_custom_requests_and_notifications_pass_through() -> None:
    c, s = pair()
    rid = c.send_request("vendor/thing", {"a": 1})
    assert pump(c, s) == [RequestReceived(rid, "vendor/thing", {"a": 1})]
    s.send_response(rid, {"ok": True})
    assert pump(s, c) == [ResponseReceived(rid, "vendor/thing", {"ok": True})]
    c.send_notification("vendor/note", {"b": 2})
    assert pump(c, s) == [NotificationReceived("vendor/note", {"b": 2})]
    s.send_notification("notifications/tools/list_changed")
    assert pump(s, c) == [NotificationReceived("notifications/tools/list_changed", {})]


def test_error_round_trip() -> None:
    c, s = pair()
    rid = c.send_request("tools/call", {"name": "boom"})
    pump(c, s)
    s.send_error(rid, -32000, "it broke", {"why": "because"})
    assert pump(s, c) == [ErrorReceived(rid, "tools/call", rpc.ErrorObject(-32000, "it broke", {"why": "because"}))]
    assert c.pending == {}


def test_answering_unknown_or_answered_request_is_local_error() -> None:
    _, s = pair()
    with pytest.raises(LocalProtocolError, match="awaits an answer"):
        s.send_response(123, {})
    s.receive_bytes(req(7, "tools/list"))
    assert s.awaiting_answer(7)
    s.send_response(7, {"tools": []})
    assert not s.awaiting_answer(7)
    with pytest.raises(LocalProtocolError):
        s.send_error(7, 1, "again")


def test_request_ids_are_unique_and_increasing() -> None:
    c, _ = pair()
    ids = [c.send_request("ping") for _ in range(5)]
    assert ids == sorted(set(ids)) and 0 not in ids  # 0 went to initialize


# ================================================================= capability gating


@pytest.mark.parametrize(
    ("method", "needed"),
    [
        ("tools/list", {"tools": {}}),
        ("tools/call", {"tools": {}}),
        ("prompts/list", {"prompts": {}}),
        ("prompts/get", {"prompts": {}}),
        ("resources/list", {"resources": {}}),
        ("resources/templates/list", {"resources": {}}),
        ("resources/read", {"resources": {}}),
        ("resources/subscribe", {"resources": {"subscribe": True}}),
        ("resources/unsubscribe", {"resources": {"subscribe": True}}),
        ("logging/setLevel", {"logging": {}}),
        ("completion/complete", {"completions": {}}),
    ],
)
def test_client_refuses_to_send_ungated_request(method: str, needed: dict[str, Any]) -> None:
    c, _ = pair(server_caps={})
    with pytest.raises(LocalProtocolError, match="did not advertise"):
        c.send_request(method, {})
    c2, _ = pair(server_caps=needed)
    c2.send_request(method, {})
    assert [m.method for m in c2.outgoing()] == [method]  # type: ignore[union-attr]


def test_subscribe_false_does_not_grant() -> None:
    c, _ = pair(server_caps={"resources": {"subscribe": False}})
    c.send_request("resources/list")
    with pytest.raises(LocalProtocolError):
        c.send_request("resources/subscribe", {"uri": "x"})


@pytest.mark.parametrize(
    ("method", "needed"),
    [
        ("sampling/createMessage", {"sampling": {}}),
        ("roots/list", {"roots": {}}),
        ("elicitation/create", {"elicitation": {}}),
    ],
)
def test_server_refuses_to_send_ungated_request(method: str, needed: dict[str, Any]) -> None:
    _, s = pair(client_caps={})
    with pytest.raises(LocalProtocolError, match="did not advertise"):
        s.send_request(method, {})
    _, s2 = pair(client_caps=needed)
    s2.send_request(method, {})


@pytest.mark.parametrize(
    "method",
    [
        "tools/list",
        "tools/call",
        "prompts/get",
        "resources/read",
        "resources/subscribe",
        "logging/setLevel",
        "completion/complete",
    ],
)
def test_server_answers_unadvertised_method_with_32601(method: str) -> None:
    _, s = pair(server_caps={})
    events = s.receive_bytes(req(77, method, {"name": "x"}))
    assert issues(events) == ["capability-not-advertised"]
    assert not any(isinstance(e, (RequestReceived, LogLevelChanged)) for e in events)
    err = only_error(s)
    assert err.id == 77 and err.error.code == rpc.METHOD_NOT_FOUND
    assert method in err.error.message


@pytest.mark.parametrize("method", ["sampling/createMessage", "roots/list", "elicitation/create"])
def test_client_answers_unadvertised_method_with_32601(method: str) -> None:
    c, _ = pair(client_caps={})
    events = c.receive_bytes(req("srv-1", method, {}))
    assert issues(events) == ["capability-not-advertised"]
    err = only_error(c)
    assert err.id == "srv-1" and err.error.code == rpc.METHOD_NOT_FOUND


def test_advertised_capability_delivers_request() -> None:
    c, s = pair()
    assert c.receive_bytes(req("srv-1", "sampling/createMessage", {"messages": []})) == [
        RequestReceived("srv-1", "sampling/createMessage", {"messages": []}),
    ]
    assert s.receive_bytes(req(70, "tools/list")) == [RequestReceived(70, "tools/list", {})]


@pytest.mark.parametrize(
    ("receiver", "method"),
    [
        ("server", "sampling/createMessage"),
        ("server", "roots/list"),
        ("client", "tools/list"),
        ("client", "logging/setLevel"),
        ("client", "completion/complete"),
    ],
)
def test_wrong_direction_method_answered_with_32601(receiver: str, method: str) -> None:
    c, s = pair()
    conn = s if receiver == "server" else c
    events = conn.receive_bytes(req(5, method, {}))
    assert not any(isinstance(e, RequestReceived) for e in events)
    assert len(issues(events)) == 1  # the peer's mistake is reported
    err = only_error(conn)
    assert err.id == 5 and err.error.code == rpc.METHOD_NOT_FOUND


def test_own_gates_on_notifications() -> None:
    _, s = pair(server_caps={"tools": {}, "resources": {"subscribe": False}})
    for method in (
        "notifications/tools/list_changed",
        "notifications/message",
        "notifications/resources/updated",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ):
        with pytest.raises(LocalProtocolError, match="requires advertising"):
            s.send_notification(method, {})
    _, s2 = pair()
    s2.send_notification("notifications/tools/list_changed")
    s2.send_notification("notifications/resources/updated", {"uri": "x"})
    c, _ = pair(client_caps={"roots": {}})
    with pytest.raises(LocalProtocolError):
        c.send_notification("notifications/roots/list_changed")
    c2, _ = pair(client_caps={"roots": {"listChanged": True}})
    c2.send_notification("notifications/roots/list_changed")


def test_revision_tables() -> None:
    assert ALL_VERSIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
    assert HANDSHAKE_VERSIONS == ALL_VERSIONS[:-1]
    assert get_revision("2026-07-28").era is Era.STATELESS
    assert get_revision("2025-03-26").batches and not get_revision("2025-06-18").batches
    with pytest.raises(ValueError, match="known: 2024-11-05"):
        get_revision("2025-01-01")
    r = get_revision("2025-11-25")
    assert r.requests_from(Role.CLIENT) == r.client_requests and "tasks/get" in r.client_requests
    assert r.requests_from(Role.SERVER) == r.server_requests
    assert r.notifications_from(Role.CLIENT) == r.client_notifications
    assert "notifications/elicitation/complete" in r.notifications_from(Role.SERVER)
    assert peer_gate("completion/complete", get_revision("2024-11-05")) is None
    assert peer_gate("completion/complete", r) == ("completions",)
    assert peer_gate("tasks/list", r) == ("tasks", "list")
    assert peer_gate("ping", r) is None
    assert own_gate("notifications/message") == ("logging",) and own_gate("x") is None


def test_has_capability() -> None:
    assert has_capability({"tools": {}}, ("tools",))
    assert not has_capability(None, ("tools",))
    assert not has_capability({}, ("tools",))
    assert has_capability({"resources": {"subscribe": True}}, ("resources", "subscribe"))
    assert not has_capability({"resources": {"subscribe": False}}, ("resources", "subscribe"))
    assert not has_capability({"resources": None}, ("resources",))
    assert not has_capability({"resources": True}, ("resources", "subscribe"))  # not a mapping
    assert not has_capability({"resources": {}}, ("resources", "subscribe"))
    assert has_capability({"tasks": {"list": {}}}, ("tasks", "list"))


# ================================================================= revision-specific methods


def test_elicitation_only_from_2025_06_18() -> None:
    _, s = pair(version="2025-03-26")
    with pytest.raises(LocalProtocolError, match="revision 2025-03-26"):
        s.send_request("elicitation/create", {})
    _, s2 = pair(version="2025-06-18")
    s2.send_request("elicitation/create", {})


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_tasks_only_in_2025_11_25(version: str) -> None:
    c, s = pair(version=version)
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        with pytest.raises(LocalProtocolError, match=f"revision {version}"):
            c.send_request(method, {"taskId": "t"})
        with pytest.raises(LocalProtocolError):
            s.send_request(method, {"taskId": "t"})
    # and the receiver refuses them too
    s.receive_bytes(req(40, "tasks/get", {"taskId": "t"}))
    assert only_error(s).error.code == rpc.METHOD_NOT_FOUND


def test_tasks_in_2025_11_25() -> None:
    c, s = pair(version="2025-11-25")
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        c.send_request(method, {"taskId": "t"})
        s.send_request(method, {"taskId": "t"})
    c2, _ = pair(version="2025-11-25", server_caps={"tasks": {}})
    c2.send_request("tasks/get", {"taskId": "t"})
    with pytest.raises(LocalProtocolError, match="tasks.list"):
        c2.send_request("tasks/list")


def test_completion_gated_only_from_2025_03_26() -> None:
    c, s = pair(version="2024-11-05", server_caps={})
    c.send_request("completion/complete", {})  # no capability existed yet
    assert s.receive_bytes(req(60, "completion/complete", {})) == [RequestReceived(60, "completion/complete", {})]
    for version in ("2025-03-26", "2025-06-18", "2025-11-25"):
        c, s = pair(version=version, server_caps={})
        with pytest.raises(LocalProtocolError, match="completions"):
            c.send_request("completion/complete", {})
        s.receive_bytes(req(60, "completion/complete", {}))
        assert only_error(s).error.code == rpc.METHOD_NOT_FOUND


# ================================================================= ping


def _ping_answered(conn: Connection, id_: rpc.RequestId) -> None:
    events = conn.receive_bytes(req(id_, "ping"))
    assert events == []
    assert conn.outgoing() == [rpc.Response(id_, {})]


def test_ping_auto_answer_in_every_state() -> None:
    s = server()
    _ping_answered(s, 1)  # IDLE
    s.receive_bytes(req(2, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    s.outgoing()
    _ping_answered(s, 3)  # INITIALIZING
    s.receive_bytes(rpc.serialize(rpc.Notification("notifications/initialized")))
    _ping_answered(s, 4)  # OPERATING
    c = client()
    _ping_answered(c, "a")  # IDLE
    c.initialize()
    c.outgoing()
    _ping_answered(c, "b")  # INITIALIZING
    c.receive_message(
        rpc.Response(0, {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s"}})
    )
    c.outgoing()
    _ping_answered(c, "c")  # OPERATING
    c.close()
    assert issues(c.receive_bytes(req("d", "ping"))) == ["after-close"]
    assert c.outgoing() == []


def test_ping_round_trip() -> None:
    c, s = client(), server()
    rid = c.send_request("ping")
    assert pump(c, s) == []
    assert pump(s, c) == [ResponseReceived(rid, "ping", {})]
    assert c.pending == {}


# ================================================================= logging


def test_set_level_and_should_log() -> None:
    c, s = pair()
    assert s.log_level is None
    assert all(s.should_log(level) for level in LOG_LEVELS)
    rid = c.send_request("logging/setLevel", {"level": "warning"})
    assert pump(c, s) == [LogLevelChanged("warning")]
    assert s.log_level == "warning"
    assert pump(s, c) == [ResponseReceived(rid, "logging/setLevel", {})]
    expected = {
        "debug": False,
        "info": False,
        "notice": False,
        "warning": True,
        "error": True,
        "critical": True,
        "alert": True,
        "emergency": True,
    }
    assert {level: s.should_log(level) for level in LOG_LEVELS} == expected
    c.send_request("logging/setLevel", {"level": "emergency"})
    pump(c, s)
    assert [s.should_log(level) for level in LOG_LEVELS] == [False] * 7 + [True]
    c.send_request("logging/setLevel", {"level": "debug"})
    pump(c, s)
    assert all(s.should_log(level) for level in LOG_LEVELS)
    with pytest.raises(LocalProtocolError, match="unknown log level"):
        s.should_log("verbose")


@pytest.mark.parametrize("params", [{}, {"level": "verbose"}, {"level": 3}, {"level": "WARNING"}])
def test_set_level_invalid(params: dict[str, Any]) -> None:
    _, s = pair()
    events = s.receive_bytes(req(8, "logging/setLevel", params))
    assert issues(events) == ["invalid-params"]
    err = only_error(s)
    assert err.id == 8 and err.error.code == rpc.INVALID_PARAMS
    assert s.log_level is None


def test_set_level_without_logging_capability() -> None:
    _, s = pair(server_caps={"tools": {}})
    events = s.receive_bytes(req(8, "logging/setLevel", {"level": "info"}))
    assert issues(events) == ["capability-not-advertised"]
    assert only_error(s).error.code == rpc.METHOD_NOT_FOUND
    assert s.log_level is None


# ================================================================= progress


def test_progress_token_in_meta() -> None:
    c, _ = pair()
    original = {"name": "slow", "_meta": {"other": 1}}
    rid = c.send_request("tools/call", original, progress_token="tok")
    assert original == {"name": "slow", "_meta": {"other": 1}}  # caller's dict untouched
    [msg] = c.outgoing()
    assert isinstance(msg, rpc.Request)
    assert msg.params == {"name": "slow", "_meta": {"other": 1, "progressToken": "tok"}}
    assert c.pending[rid].progress_token == "tok"
    rid2 = c.send_request("tools/list", progress_token=7)
    [msg2] = c.outgoing()
    assert isinstance(msg2, rpc.Request) and msg2.params == {"_meta": {"progressToken": 7}}
    with pytest.raises(LocalProtocolError, match="already in use"):
        c.send_request("tools/list", progress_token="tok")
    assert rid2 != rid


def test_progress_flow() -> None:
    c, s = pair()
    rid = c.send_request("tools/call", {"name": "slow"}, progress_token="tok")
    [received] = pump(c, s)
    assert isinstance(received, RequestReceived)
    assert received.params["_meta"] == {"progressToken": "tok"}
    s.send_progress("tok", 1, total=10, message="starting")
    s.send_progress("tok", 2.5)
    assert s.outgoing() == [
        rpc.Notification(
            "notifications/progress", {"progressToken": "tok", "progress": 1, "total": 10, "message": "starting"}
        ),
        rpc.Notification("notifications/progress", {"progressToken": "tok", "progress": 2.5}),
    ]
    s.send_progress("tok", 3, total=10)
    s.send_progress("tok", 4, message="m")
    assert pump(s, c) == [
        ProgressReceived("tok", 3, 10, None, rid),
        ProgressReceived("tok", 4, None, "m", rid),
    ]
    with pytest.raises(LocalProtocolError, match="must increase"):
        s.send_progress("tok", 4)
    with pytest.raises(LocalProtocolError, match="must increase"):
        s.send_progress("tok", 3.5)
    s.send_response(rid, {"content": []})
    with pytest.raises(LocalProtocolError, match="no active request"):
        s.send_progress("tok", 5)
    assert pump(s, c) == [ResponseReceived(rid, "tools/call", {"content": []})]
    # the token is free again once the request is answered
    c.send_request("tools/list", progress_token="tok")


def test_progress_after_the_peer_cancelled_is_dropped_but_still_checked() -> None:
    c, s = pair()
    rid = c.send_request("tools/call", {"name": "slow"}, progress_token="tok")
    pump(c, s)
    s.send_progress("tok", 1)
    c.cancel(rid)
    pump(c, s)
    s.outgoing()
    # The cancellation retired the token for the client: nothing more goes out ...
    s.send_progress("tok", 2)
    assert s.outgoing() == []
    # ... but progress that does not grow is still the handler's bug, cancelled or not.
    with pytest.raises(LocalProtocolError, match="must increase"):
        s.send_progress("tok", 2)
    with pytest.raises(LocalProtocolError, match="must increase"):
        s.send_progress("tok", 1.5)
    s.send_response(rid, {"content": []})
    assert s.outgoing() == []


def test_send_progress_unknown_token() -> None:
    _, s = pair()
    with pytest.raises(LocalProtocolError, match="no active request"):
        s.send_progress("nope", 1)
    # a token of an invalid type is not tracked
    s.receive_bytes(req(1, "tools/call", {"name": "x", "_meta": {"progressToken": 1.5}}))
    with pytest.raises(LocalProtocolError):
        s.send_progress(1.5, 1)  # type: ignore[arg-type]
    s.receive_bytes(req(2, "tools/call", {"name": "x", "_meta": "junk"}))
    s.send_response(2, {})


def test_progress_received_before_operating() -> None:
    # progress may flow on a request made before the session operates (e.g. ping)
    c = client()
    rid = c.send_request("ping", progress_token=5)
    events = c.receive_bytes(
        rpc.serialize(rpc.Notification("notifications/progress", {"progressToken": 5, "progress": 1}))
    )
    assert events == [ProgressReceived(5, 1, None, None, rid)]


def _progress(token: Any, progress: Any, **extra: Any) -> bytes:
    return rpc.serialize(
        rpc.Notification("notifications/progress", {"progressToken": token, "progress": progress, **extra})
    )


def test_progress_not_increasing_is_an_issue() -> None:
    c, _ = pair()
    rid = c.send_request("tools/call", {"name": "x"}, progress_token="t")
    assert c.receive_bytes(_progress("t", 5)) == [ProgressReceived("t", 5, None, None, rid)]
    events = c.receive_bytes(_progress("t", 5))
    assert issues(events) == ["progress-not-increasing"]
    assert events[-1] == ProgressReceived("t", 5, None, None, rid)
    events = c.receive_bytes(_progress("t", 4))
    assert issues(events) == ["progress-not-increasing"]
    assert issues(c.receive_bytes(_progress("t", 6))) == []


def test_progress_unknown_token_is_an_issue() -> None:
    c, s = pair()
    assert issues(c.receive_bytes(_progress("ghost", 1))) == ["unknown-progress-token"]
    assert issues(c.receive_bytes(_progress(True, 1))) == ["unknown-progress-token"]
    assert issues(c.receive_bytes(_progress(None, 1))) == ["unknown-progress-token"]
    rid = c.send_request("tools/call", {"name": "x"}, progress_token="t")
    pump(c, s)
    s.send_response(rid, {})
    pump(s, c)
    # after the answer the token is no longer known
    assert issues(c.receive_bytes(_progress("t", 9))) == ["unknown-progress-token"]
    # same after cancel
    rid = c.send_request("tools/call", {"name": "x"}, progress_token="u")
    c.cancel(rid)
    assert issues(c.receive_bytes(_progress("u", 1))) == ["unknown-progress-token"]


@pytest.mark.parametrize("value", ["1", None, True, [1]])
def test_progress_value_must_be_a_number(value: Any) -> None:
    c, _ = pair()
    c.send_request("tools/call", {"name": "x"}, progress_token="t")
    assert issues(c.receive_bytes(_progress("t", value))) == ["invalid-message"]


def test_progress_ignores_ill_typed_optional_fields() -> None:
    c, _ = pair()
    rid = c.send_request("tools/call", {"name": "x"}, progress_token="t")
    assert c.receive_bytes(_progress("t", 1, total="ten", message=5)) == [ProgressReceived("t", 1, None, None, rid)]


def test_server_can_request_progress_from_client() -> None:
    c, s = pair()
    rid = s.send_request("sampling/createMessage", {"messages": []}, progress_token="sp")
    [ev] = pump(s, c)
    assert isinstance(ev, RequestReceived)
    c.send_progress("sp", 0.5)
    assert pump(c, s) == [ProgressReceived("sp", 0.5, None, None, rid)]


# ================================================================= cancellation


def test_cancel_outgoing_request_and_drop_late_answer() -> None:
    c, s = pair()
    rid = c.send_request("tools/call", {"name": "slow"})
    pump(c, s)
    c.cancel(rid, "user gave up")
    assert rid not in c.pending
    [note] = c.outgoing()
    assert note == rpc.Notification("notifications/cancelled", {"requestId": rid, "reason": "user gave up"})
    # the server answers anyway (crossed in flight): the client drops it silently
    s.send_response(rid, {"content": []})
    assert pump(s, c) == []
    assert c.stats.late_responses_dropped == 1 and c.stats.unknown_responses == 0
    # a second answer with that id is no longer "late": it is unknown
    assert issues(c.receive_bytes(rpc.serialize(rpc.Response(rid, {})))) == ["unknown-response-id"]
    assert c.stats.unknown_responses == 1


def test_late_error_answer_also_dropped() -> None:
    c, _ = pair()
    rid = c.send_request("tools/list")
    c.outgoing()
    c.cancel(rid)
    [note] = c.outgoing()
    assert note == rpc.Notification("notifications/cancelled", {"requestId": rid})  # no reason
    assert c.receive_bytes(rpc.serialize(rpc.ErrorResponse(rid, rpc.ErrorObject(-1, "x")))) == []
    assert c.stats.late_responses_dropped == 1


def test_cancel_errors() -> None:
    c = client()
    rid = c.initialize()
    with pytest.raises(LocalProtocolError, match="never be cancelled"):
        c.cancel(rid)
    assert rid in c.pending
    with pytest.raises(LocalProtocolError, match="no pending request"):
        c.cancel(12345)


def test_cancelled_memory_is_bounded() -> None:
    c, _ = pair()
    first = c.send_request("tools/list")
    c.cancel(first)
    for _ in range(4096):
        c.cancel(c.send_request("tools/list"))
    c.outgoing()
    # the oldest cancelled id was forgotten: its answer now counts as unknown
    assert issues(c.receive_bytes(rpc.serialize(rpc.Response(first, {})))) == ["unknown-response-id"]
    assert c.stats.late_responses_dropped == 0
    # the newest is still remembered
    assert c.receive_bytes(rpc.serialize(rpc.Response(first + 4096, {}))) == []
    assert c.stats.late_responses_dropped == 1


def test_forget_does_not_notify() -> None:
    c, _ = pair()
    rid = c.send_request("tools/call", {"name": "x"}, progress_token="f")
    c.outgoing()
    c.forget(rid)
    c.forget(rid)  # idempotent
    assert c.outgoing() == [] and rid not in c.pending
    c.send_request("tools/list", progress_token="f")  # token released


def test_cancel_after_handshake_failure_sends_nothing() -> None:
    c = client()
    c.initialize()
    ping = c.send_request("ping")
    c.outgoing()
    c.receive_message(rpc.ErrorResponse(0, rpc.ErrorObject(-32602, "no")))
    assert c.state is CLOSED
    c.cancel(ping)
    assert c.outgoing() == [] and c.pending == {}


def test_incoming_cancellation_suppresses_answer() -> None:
    c, s = pair()
    rid = c.send_request("tools/call", {"name": "slow"}, progress_token="pt")
    pump(c, s)
    c.cancel(rid, "bored")
    assert pump(c, s) == [CancelRequested(rid, "bored")]
    assert s.awaiting_answer(rid)
    # duplicate cancellation: reported once only
    assert s.receive_bytes(rpc.serialize(rpc.Notification("notifications/cancelled", {"requestId": rid}))) == []
    s.send_response(rid, {"content": []})
    assert s.outgoing() == []
    assert s.stats.answers_suppressed == 1
    assert not s.awaiting_answer(rid)
    # and with send_error too
    rid2 = c.send_request("tools/call", {"name": "slow"})
    pump(c, s)
    c.cancel(rid2)
    assert pump(c, s) == [CancelRequested(rid2, None)]
    s.send_error(rid2, -32000, "cancelled")
    assert s.outgoing() == [] and s.stats.answers_suppressed == 2


@pytest.mark.parametrize(
    "params",
    [{"requestId": 999}, {"requestId": None}, {"requestId": True}, {"requestId": 1.0}, {}, None],
)
def test_cancellation_of_unknown_request_is_ignored(params: dict[str, Any] | None) -> None:
    _, s = pair()
    assert s.receive_bytes(rpc.serialize(rpc.Notification("notifications/cancelled", params))) == []
    assert s.outgoing() == []


def test_cancel_reason_must_be_a_string() -> None:
    _, s = pair()
    s.receive_bytes(req(3, "tools/list"))
    events = s.receive_bytes(rpc.serialize(rpc.Notification("notifications/cancelled", {"requestId": 3, "reason": 42})))
    assert events == [CancelRequested(3, None)]


def test_initialize_cannot_be_cancelled_by_peer() -> None:
    s = server()
    s.receive_bytes(req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    assert s.receive_bytes(rpc.serialize(rpc.Notification("notifications/cancelled", {"requestId": 0}))) == []
    [answer] = s.outgoing()
    assert isinstance(answer, rpc.Response)


# ================================================================= answers and ids


def test_unknown_response_ids() -> None:
    c, _ = pair()
    assert issues(c.receive_bytes(rpc.serialize(rpc.Response(4242, {})))) == ["unknown-response-id"]
    assert issues(c.receive_bytes(rpc.serialize(rpc.ErrorResponse("x", rpc.ErrorObject(1, "m"))))) == [
        "unknown-response-id"
    ]
    assert c.stats.unknown_responses == 2
    assert c.outgoing() == []  # responses are never answered


def test_duplicate_response() -> None:
    c, s = pair()
    rid = c.send_request("tools/list")
    pump(c, s)
    s.send_response(rid, {"tools": []})
    [answer] = s.outgoing()
    assert c.receive_message(answer) == [ResponseReceived(rid, "tools/list", {"tools": []})]
    assert issues(c.receive_message(answer)) == ["unknown-response-id"]
    assert c.stats.unknown_responses == 1


def test_error_without_id() -> None:
    c, _ = pair()
    rid = c.send_request("tools/list")
    events = c.receive_bytes(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
    assert issues(events) == ["error-without-id"]
    assert rid in c.pending  # nobody's waiter is failed


def test_duplicate_incoming_request_id() -> None:
    _, s = pair()
    assert s.receive_bytes(req(5, "tools/call", {"name": "a"})) == [RequestReceived(5, "tools/call", {"name": "a"})]
    events = s.receive_bytes(req(5, "tools/call", {"name": "b"}))
    assert issues(events) == ["duplicate-request-id"]
    assert s.stats.invalid_messages == 1
    assert s.outgoing() == []  # answering would confuse the peer's two requests
    s.send_response(5, {})
    assert s.outgoing() == [rpc.Response(5, {})]
    # once answered, the id may be used again
    assert s.receive_bytes(req(5, "tools/list")) == [RequestReceived(5, "tools/list", {})]


def test_malformed_response_fails_the_waiter() -> None:
    c, _ = pair()
    rid = c.send_request("tools/list")
    other = c.send_request("prompts/list")
    c.outgoing()
    events = c.receive_bytes(json.dumps({"jsonrpc": "2.0", "id": rid, "result": "not an object"}).encode())
    assert issues(events) == ["invalid-message"]
    [failed] = [e for e in events if isinstance(e, InvalidAnswer)]
    assert failed.id == rid and failed.method == "tools/list"
    assert "malformed response" in failed.reason and "must be an object" in failed.reason
    assert not any(isinstance(e, ErrorReceived) for e in events)  # no error came from the peer
    assert rid not in c.pending and other in c.pending
    assert c.stats.invalid_messages == 1
    assert c.outgoing() == []
    # malformed error object too
    events = c.receive_bytes(json.dumps({"jsonrpc": "2.0", "id": other, "error": {"code": "x"}}).encode())
    assert [e.id for e in events if isinstance(e, InvalidAnswer)] == [other]


def test_malformed_response_with_unknown_id() -> None:
    c, _ = pair()
    events = c.receive_bytes(json.dumps({"jsonrpc": "2.0", "id": 999, "result": 1}).encode())
    assert issues(events) == ["invalid-message"]
    assert not any(isinstance(e, ErrorReceived) for e in events)
    assert c.outgoing() == []


# ---- answers only a lenient reader reads (JSON-RPC id recovered by parse_payload)


def stdio_line(text: bytes) -> bytes:
    """The line a stdio transport hands over: framed by the peer, split by LineDecoder."""
    [line] = LineDecoder().receive_data(text + b"\n")
    return line


UNREADABLE_ANSWERS = {
    "bad-utf8": b'{"jsonrpc":"2.0","id":ID,"result":{"tools":[{"name":"caf\xe9","inputSchema":{}}]}}',
    "nan": b'{"jsonrpc":"2.0","id":ID,"result":{"tools":[],"score":NaN}}',
    "1e400": b'{"jsonrpc":"2.0","id":ID,"result":{"tools":[],"score":1e400}}',
}


def answer_to(rid: rpc.RequestId, template: bytes) -> bytes:
    return template.replace(b"ID", rpc.dumps(rid))


@pytest.mark.parametrize("template", UNREADABLE_ANSWERS.values(), ids=UNREADABLE_ANSWERS.keys())
@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_unreadable_answer_fails_its_waiter_at_once(template: bytes, era: str) -> None:
    if era == "handshake":
        c, _ = pair()
    else:
        c = client(versions=["2026-07-28"])
        s = server(versions=["2026-07-28"], caps=ALL_SERVER_CAPS)
        c.discover()
        pump(c, s)
        pump(s, c)
    assert c.state is OPERATING
    rid = c.send_request("tools/list")
    other = c.send_request("prompts/list")
    c.outgoing()
    events = c.receive_bytes(stdio_line(answer_to(rid, template)))
    assert issues(events) == ["parse-error"]
    [failed] = [e for e in events if not isinstance(e, ProtocolIssue)]
    assert isinstance(failed, InvalidAnswer) and failed.id == rid and failed.method == "tools/list"
    assert failed.reason.startswith("malformed response: parse error")
    assert rid not in c.pending and other in c.pending
    assert c.outgoing() == [] and c.stats.invalid_messages == 1


def test_unreadable_answer_to_initialize_fails_the_handshake() -> None:
    c = client()
    rid = c.initialize()
    c.outgoing()
    events = c.receive_bytes(answer_to(rid, b'{"jsonrpc":"2.0","id":ID,"result":{"protocolVersion":NaN}}'))
    assert issues(events) == ["parse-error"]
    [failed] = [e for e in events if isinstance(e, HandshakeFailed)]
    assert "invalid answer to initialize" in failed.reason
    assert c.state is CLOSED and c.pending == {}


def test_unreadable_answer_to_the_probe_fails_it() -> None:
    c = client(versions=["2026-07-28", "2025-11-25"])
    rid = c.discover()
    c.outgoing()
    events = c.receive_bytes(answer_to(rid, b'{"jsonrpc":"2.0","id":ID,"result":{"ttlMs":1e400}}'))
    assert any(isinstance(e, HandshakeFailed) for e in events)
    assert c.state is CLOSED


def test_unreadable_answers_in_a_batch_fail_each_waiter() -> None:
    c, _ = pair()
    a, b = c.send_request("tools/list"), c.send_request("prompts/list")
    c.outgoing()
    clean = b'{"jsonrpc":"2.0","id":ID,"result":{}}'
    batch = b"[" + answer_to(a, UNREADABLE_ANSWERS["nan"]) + b"," + answer_to(b, clean) + b"]"
    events = c.receive_bytes(batch)
    assert sorted(e.id for e in events if isinstance(e, InvalidAnswer)) == [a, b]  # type: ignore[type-var]
    assert c.pending == {}


def test_unreadable_late_answer_to_a_cancelled_request_is_only_reported() -> None:
    c, _ = pair()
    rid = c.send_request("tools/list")
    c.cancel(rid)
    c.outgoing()
    events = c.receive_bytes(answer_to(rid, UNREADABLE_ANSWERS["nan"]))
    assert issues(events) == ["parse-error"] and len(events) == 1
    assert c.outgoing() == []


@pytest.mark.parametrize("role", [Role.CLIENT, Role.SERVER])
def test_unreadable_request_is_answered_with_its_id(role: Role) -> None:
    conn = pair()[0 if role is Role.CLIENT else 1]
    method = "roots/list" if role is Role.CLIENT else "tools/list"
    events = conn.receive_bytes(b'{"jsonrpc":"2.0","id":"q7","method":"' + method.encode() + b'","params":{"n":NaN}}')
    assert issues(events) == ["parse-error"]
    err = only_error(conn)
    assert err.id == "q7" and err.error.code == rpc.PARSE_ERROR
    assert not conn.awaiting_answer("q7")


# ---- parse once: a payload parsed by the transport


def test_receive_payload_takes_what_the_transport_parsed() -> None:
    c, s = pair(version="2025-03-26")  # the revision with batches
    rid = c.send_request("tools/list")
    c.outgoing()
    batch = rpc.serialize([rpc.Request(41, "ping"), rpc.Request(42, "tools/list")])[:-1] + b',{"x":1}]'
    parsed = rpc.parse_payload(batch)
    events = s.receive_payload(parsed)
    assert issues(events) == ["invalid-message"] and RequestReceived(42, "tools/list", {}) in events
    assert rpc.Response(41, {}) in s.outgoing()
    answer = rpc.parse_payload(rpc.serialize(rpc.Response(rid, {"tools": []})))
    assert c.receive_payload(answer) == [ResponseReceived(rid, "tools/list", {"tools": []})]
    assert c.receive_payload(rpc.parse_payload(answer_to(999, UNREADABLE_ANSWERS["nan"]))) != []


def test_receive_bytes_is_parse_then_receive_payload() -> None:
    texts = [
        req(1, "tools/list"),
        b"{oops",
        answer_to(5, UNREADABLE_ANSWERS["nan"]),
        b"[]",
        rpc.serialize([rpc.Request(2, "ping"), rpc.Notification("vendor/x")]),
    ]
    one, two = pair()[1], pair()[1]
    for text in texts:
        assert one.receive_bytes(text) == two.receive_payload(rpc.parse_payload(text))
        assert one.outgoing() == two.outgoing()
    assert one.stats == two.stats


def test_receive_payload_leaves_the_size_cap_to_the_transport() -> None:
    s = Connection(Role.SERVER, info=SERVER_INFO, max_message_size=16)
    with pytest.raises(RemoteProtocolError):
        s.receive_bytes(req(1, "ping"))
    assert s.receive_payload(rpc.parse_payload(req(1, "ping"))) == []
    assert s.outgoing() == [rpc.Response(1, {})]


# ---- re-issue (2026-07-28 Streamable HTTP: a broken stream is answered by re-sending)


def stateless_pair() -> tuple[Connection, Connection]:
    c = client(versions=["2026-07-28"], caps={"elicitation": {}})
    s = server(versions=["2026-07-28"], caps=ALL_SERVER_CAPS)
    c.discover()
    pump(c, s)
    pump(s, c)
    assert c.state is OPERATING
    return c, s


def test_reissue_sends_the_same_request_under_a_fresh_id() -> None:
    c, s = stateless_pair()
    old = c.send_request("tools/call", {"name": "slow", "arguments": {"n": 1}}, progress_token="tok")
    [first] = c.outgoing()
    new = c.reissue(old)
    [again] = c.outgoing()
    assert isinstance(first, rpc.Request) and isinstance(again, rpc.Request)
    assert new != old and again.id == new
    assert (again.method, again.params) == (first.method, first.params)  # envelope and token kept
    assert set(c.pending) == {new} and c.pending[new].progress_token == "tok"
    # The server sees a new request; its progress reaches the new waiter.
    [received] = s.receive_bytes(rpc.serialize(again))
    assert isinstance(received, RequestReceived) and received.id == new
    s.send_progress("tok", 1)
    [progress] = pump(s, c)
    assert isinstance(progress, ProgressReceived) and progress.request_id == new
    # The answer to the old id, should it still come, is dropped and counted.
    assert c.receive_bytes(rpc.serialize(rpc.Response(old, {"resultType": "complete", "content": []}))) == []
    assert c.stats.late_responses_dropped == 1 and c.stats.unknown_responses == 0
    s.send_response(new, {"content": []})
    [done] = pump(s, c)
    assert isinstance(done, ResponseReceived) and done.id == new and c.pending == {}


def test_reissue_in_the_handshake_era_and_twice() -> None:
    c, _s = pair()
    first = c.send_request("tools/list")
    second = c.reissue(first)
    third = c.reissue(second)
    assert len({first, second, third}) == 3 and set(c.pending) == {third}
    assert [m.id for m in c.outgoing()] == [first, second, third]  # type: ignore[union-attr]
    for late in (first, second):
        assert c.receive_bytes(rpc.serialize(rpc.Response(late, {"tools": []}))) == []
    assert c.stats.late_responses_dropped == 2
    # a second late answer to the same old id is unknown again
    assert issues(c.receive_bytes(rpc.serialize(rpc.Response(first, {})))) == ["unknown-response-id"]


def test_reissue_refuses_unknown_ids_and_initialize() -> None:
    c = client()
    rid = c.initialize()
    c.outgoing()
    with pytest.raises(LocalProtocolError, match="initialize can't be re-issued"):
        c.reissue(rid)
    with pytest.raises(LocalProtocolError, match="no pending request"):
        c.reissue(12345)
    assert set(c.pending) == {rid} and c.outgoing() == []
    c, s = pair()
    answered = c.send_request("tools/list")
    pump(c, s)
    s.send_response(answered, {"tools": []})
    pump(s, c)
    cancelled = c.send_request("tools/list")
    c.cancel(cancelled)
    open_one = c.send_request("tools/list")
    c.outgoing()
    for gone in (answered, cancelled):
        with pytest.raises(LocalProtocolError, match="no pending request"):
            c.reissue(gone)
    c.close()
    with pytest.raises(LocalProtocolError, match="no pending request"):
        c.reissue(open_one)  # close() failed it already
    assert c.outgoing() == []


def test_retired_id_memory_is_bounded() -> None:
    table = PendingTable(cancelled_memory=2)
    ids = [table.add("tools/list", None, None) for _ in range(3)]
    fresh = [table.reissue(i) for i in ids]
    assert set(table.requests) == set(fresh)
    # the oldest retired id is forgotten first
    assert [table.take_late_answer(i) for i in ids] == [False, True, True]
    assert not table.take_late_answer(ids[1])


def test_parse_error_answered_with_null_id_in_server_role_only() -> None:
    _, s = pair()
    events = s.receive_bytes(b"{oops")
    assert issues(events) == ["parse-error"]
    err = only_error(s)
    assert err.id is None and err.error.code == rpc.PARSE_ERROR
    assert s.stats.invalid_messages == 1
    c, _ = pair()
    assert issues(c.receive_bytes(b"{oops")) == ["parse-error"]
    assert c.outgoing() == []
    assert c.stats.invalid_messages == 1


def test_invalid_request_answered_with_its_id_in_both_roles() -> None:
    for conn in pair():
        events = conn.receive_bytes(b'{"jsonrpc":"2.0","id":"q","method":"x","params":"p"}')
        assert issues(events) == ["invalid-message"]
        err = only_error(conn)
        assert err.id == "q" and err.error.code == rpc.INVALID_REQUEST
    for conn in pair():  # array params: valid JSON-RPC no MCP method takes
        events = conn.receive_bytes(b'{"jsonrpc":"2.0","id":"q","method":"x","params":[1]}')
        assert issues(events) == ["invalid-message"]
        err = only_error(conn)
        assert err.id == "q" and err.error.code == rpc.INVALID_PARAMS


def test_invalid_message_without_id() -> None:
    c, s = pair()
    bad = b'{"jsonrpc":"1.0","method":"x"}'
    assert issues(s.receive_bytes(bad)) == ["invalid-message"]
    assert only_error(s).id is None
    assert issues(c.receive_bytes(bad)) == ["invalid-message"]
    assert c.outgoing() == []


def test_batch_is_handled_message_by_message() -> None:
    _, s = pair(version="2025-03-26")
    batch = json.dumps(
        [
            {"jsonrpc": "2.0", "id": 101, "method": "ping"},
            {"jsonrpc": "2.0", "id": 102, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 103, "method": 1},
        ]
    ).encode()
    events = s.receive_bytes(batch)
    assert issues(events) == ["invalid-message"]
    assert RequestReceived(102, "tools/list", {}) in events
    out = s.outgoing()
    assert rpc.Response(101, {}) in out
    assert [m.id for m in out if isinstance(m, rpc.ErrorResponse)] == [103]
    assert issues(s.receive_bytes(b"[]")) == ["invalid-message"]
    assert only_error(s).id is None


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_batch_refused_where_the_revision_has_none(version: str) -> None:
    c, s = pair(version=version)
    rid = c.send_request("tools/list")
    c.outgoing()
    batch = rpc.serialize([rpc.Request(7, "tools/list"), rpc.Notification("vendor/x"), rpc.Request(8, "ping")])
    events = s.receive_bytes(batch)
    assert issues(events) == ["batch-not-in-revision"] and len(events) == 1
    out = s.outgoing()
    assert [(m.id, m.error.code) for m in out if isinstance(m, rpc.ErrorResponse)] == [
        (7, rpc.INVALID_REQUEST),
        (8, rpc.INVALID_REQUEST),
    ]
    assert len(out) == 2 and version in out[0].error.message
    # Answers inside a refused batch still reach their waiter: refusing them would only lose them.
    events = c.receive_bytes(rpc.serialize([rpc.Response(rid, {"tools": []})]))
    assert issues(events) == ["batch-not-in-revision"]
    assert ResponseReceived(rid, "tools/list", {"tools": []}) in events and c.pending == {}


def test_batch_refused_before_negotiation_and_with_initialize() -> None:
    s = server()
    s.receive_bytes(rpc.serialize([rpc.Request(1, "ping")]))
    assert only_error(s).error.code == rpc.INVALID_REQUEST
    c = client(versions=["2025-03-26"])
    c.initialize()
    (init,) = c.outgoing()
    s = server()
    events = s.receive_bytes(rpc.serialize([init]))
    assert issues(events) == ["batch-not-in-revision"] and s.state is IDLE
    assert "initialize" in only_error(s).error.message
    _, s = pair(version="2025-03-26")
    s.receive_bytes(rpc.serialize([rpc.Request(5, "initialize", {})]))
    assert "initialize" in only_error(s).error.message


def test_oversize_payload_raises() -> None:
    s = Connection(Role.SERVER, info=SERVER_INFO, max_message_size=64)
    s.receive_bytes(req(1, "ping"))
    with pytest.raises(RemoteProtocolError):
        s.receive_bytes(req(2, "ping", {"pad": "x" * 64}))


def test_receive_message_objects_directly() -> None:
    _, s = pair()
    assert s.receive_message(rpc.Request(9, "tools/list")) == [RequestReceived(9, "tools/list", {})]
    assert s.receive_message(rpc.Notification("vendor/x")) == [NotificationReceived("vendor/x", {})]


def test_malformed_answer_to_discover_fails_the_probe() -> None:
    from trimcp._sansio.connection.lifecycle import CLOSED as _CLOSED

    c = client(versions=["2026-07-28", "2025-11-25"])
    c.discover()
    [probe] = c.outgoing()
    assert isinstance(probe, rpc.Request)
    events = c.receive_bytes(rpc.dumps({"jsonrpc": "2.0", "id": probe.id, "result": 5}))
    assert any(isinstance(e, HandshakeFailed) for e in events)
    assert c.state is _CLOSED


def test_stateless_request_without_log_level_gets_no_logs() -> None:
    s = server(versions=["2026-07-28"], caps={"tools": {}})
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    s.receive_bytes(req(7, "tools/list", {"_meta": meta}))
    s.receive_bytes(req(8, "tools/list", {"_meta": {**meta, "io.modelcontextprotocol/logLevel": "warning"}}))
    assert not s.should_log("emergency", 7)
    assert s.should_log("error", 8) and not s.should_log("info", 8)


def test_discover_retries_once_with_the_same_version_after_32022() -> None:
    """A -32022 naming the very revision we offered earns one more probe, then a failure."""
    c = client(versions=["2026-07-28"])
    c.discover()
    for attempt in range(3):
        [probe] = c.outgoing()
        assert isinstance(probe, rpc.Request) and probe.method == "server/discover"
        error = {
            "code": rpc.UNSUPPORTED_PROTOCOL_VERSION,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"},
        }
        events = c.receive_bytes(rpc.dumps({"jsonrpc": "2.0", "id": probe.id, "error": error}))
        if attempt == 0:
            assert events == [] and c.has_output  # probing again
        else:
            assert any(isinstance(e, HandshakeFailed) for e in events)
            assert "2026-07-28" in next(e for e in events if isinstance(e, HandshakeFailed)).reason
            break


def test_a_notification_the_revision_lacks_is_refused_locally() -> None:
    """notifications/elicitation/complete exists from 2025-11-25 only."""
    for version, allowed in (("2025-06-18", False), ("2025-11-25", True)):
        c = client(versions=[version], caps={"elicitation": {}})
        s = server(versions=[version])
        c.initialize()
        pump(c, s)
        pump(s, c)
        pump(c, s)
        if allowed:
            s.send_notification("notifications/elicitation/complete", {"elicitationId": "e1"})
            assert s.has_output
        else:
            with pytest.raises(LocalProtocolError, match="can't send 'notifications/elicitation/complete'"):
                s.send_notification("notifications/elicitation/complete", {"elicitationId": "e1"})


# ================================================================= admission, both eras


META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def test_envelope_rules_at_a_dual_era_server() -> None:
    """Each stateless envelope rule: which code answers it and which issue reports it."""
    s = server(versions=["2026-07-28", "2025-11-25"], caps=ALL_SERVER_CAPS)
    # no envelope while there is no handshake session: -32602 missing-envelope
    assert issues(s.receive_bytes(req(1, "tools/list"))) == ["missing-envelope"]
    assert only_error(s).error.code == rpc.INVALID_PARAMS
    # ... except what a handshake-era client starts with
    assert s.receive_bytes(req(2, "ping")) == [] and s.outgoing() == [rpc.Response(2, {})]
    # an envelope that is not one: -32602 invalid-envelope
    bad = {"_meta": {**META_2026, "io.modelcontextprotocol/clientCapabilities": []}}
    assert issues(s.receive_bytes(req(3, "tools/list", bad))) == ["invalid-envelope"]
    assert only_error(s).error.code == rpc.INVALID_PARAMS
    # a revision the server does not speak: -32022 naming its own, and no issue (it is negotiation)
    other = {"_meta": {**META_2026, "io.modelcontextprotocol/protocolVersion": "2030-01-01"}}
    assert s.receive_bytes(req(4, "tools/list", other)) == []
    err = only_error(s).error
    assert err.code == rpc.UNSUPPORTED_PROTOCOL_VERSION
    assert err.data == {"supported": ["2026-07-28", "2025-11-25"], "requested": "2030-01-01"}
    # a valid envelope is taken whatever the handshake state
    [got] = s.receive_bytes(req(5, "tools/list", {"_meta": META_2026}))
    assert isinstance(got, RequestReceived) and got.envelope is not None
    assert s.state is IDLE
    # a method the envelope's revision lacks
    assert issues(s.receive_bytes(req(6, "ping", {"_meta": META_2026}))) == ["method-not-in-revision"]
    assert only_error(s).error.code == rpc.METHOD_NOT_FOUND


def test_rules_name_their_code_and_issue_kind() -> None:
    from trimcp._sansio.connection import admission as adm

    table = {
        rule.kind: rule.code
        for rule in (
            adm.MISSING_ENVELOPE,
            adm.INVALID_ENVELOPE,
            adm.UNSUPPORTED_VERSION,
            adm.NOT_NOW,
            adm.UNEXPECTED_INITIALIZE,
            adm.NOT_IN_REVISION,
            adm.NOT_ADVERTISED,
            adm.UNEXPECTED_INITIALIZED,
        )
    }
    assert table == {
        "missing-envelope": rpc.INVALID_PARAMS,
        "invalid-envelope": rpc.INVALID_PARAMS,
        "unsupported-version": rpc.UNSUPPORTED_PROTOCOL_VERSION,
        "request-before-initialize": rpc.INVALID_REQUEST,
        "unexpected-initialize": rpc.INVALID_REQUEST,
        "method-not-in-revision": rpc.METHOD_NOT_FOUND,
        "capability-not-advertised": rpc.METHOD_NOT_FOUND,
        "unexpected-initialized": None,
    }
    assert not adm.UNSUPPORTED_VERSION.reported
    # the probe rule: at most MAX_PROBES, the same revision at most twice
    assert adm.may_probe_again(1, "2026-07-28", "2026-07-28")
    assert not adm.may_probe_again(2, "2026-07-28", "2026-07-28")
    assert adm.may_probe_again(2, "2026-07-28", "2027-01-01")
    assert not adm.may_probe_again(adm.MAX_PROBES, "2026-07-28", "2027-01-01")
    assert not adm.may_probe_again(1, "2026-07-28", None)


def test_abandoned_probe_drops_its_late_answer() -> None:
    c = client(versions=["2026-07-28", "2025-11-25"])
    rid = c.discover()
    c.outgoing()
    c.abandon_probe()
    assert c.state is IDLE and c.pending == {}
    assert c.receive_bytes(rpc.serialize(rpc.Response(rid, {"supportedVersions": []}))) == []
    assert c.stats.late_responses_dropped == 1


def test_input_required_only_answers_a_stateless_request_that_may_take_it() -> None:
    s = server(versions=["2026-07-28", "2025-11-25"], caps=ALL_SERVER_CAPS)
    s.receive_bytes(req(1, "tools/list", {"_meta": META_2026}))
    with pytest.raises(LocalProtocolError, match="tools/list can't be answered"):
        s.send_input_required(1, request_state="x")
    with pytest.raises(LocalProtocolError, match="only answers a pending stateless-era request"):
        s.send_input_required(99, request_state="x")


def test_negotiated_attributes_are_writable() -> None:
    """A harness may pretend the peer said otherwise (conformance: absent capabilities)."""
    c, _ = pair()
    c.peer_capabilities = {}
    with pytest.raises(LocalProtocolError, match="did not advertise"):
        c.send_request("tools/list")
    c.peer_info, c.peer_instructions, c.protocol_version = {"name": "x"}, "be nice", "2025-06-18"
    assert (c.peer_info, c.peer_instructions, c.revision.name) == ({"name": "x"}, "be nice", "2025-06-18")


def probe_answer(answer: dict[str, Any]) -> tuple[Connection, list[Event]]:
    c = client(versions=["2026-07-28", "2025-11-25"])
    rid = c.discover()
    c.outgoing()
    return c, c.receive_bytes(rpc.dumps({"jsonrpc": "2.0", "id": rid, **answer}))


@pytest.mark.parametrize(
    ("answer", "state", "outcome", "detail"),
    [
        ({"result": {"capabilities": {}}}, CLOSED, HandshakeFailed, "invalid DiscoverResult"),
        ({"result": {"supportedVersions": ["2025-11-25"], "capabilities": {}}}, IDLE, LegacyServer, "2025-11-25"),
        (
            {"result": {"supportedVersions": ["2099-01-01"], "capabilities": {}}},
            CLOSED,
            HandshakeFailed,
            "no common protocol revision",
        ),
        ({"error": {"code": -32601, "message": "no such method"}}, IDLE, LegacyServer, "-32601"),
        (
            {
                "error": {
                    "code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": ["2025-11-25"]},
                }
            },
            IDLE,
            LegacyServer,
            "2025-11-25",
        ),
    ],
)
def test_what_each_probe_answer_decides(answer: dict[str, Any], state: type, outcome: type, detail: str) -> None:
    c, events = probe_answer(answer)
    [decided] = events
    assert isinstance(decided, outcome) and detail in repr(decided)
    assert c.state is state and c.pending == {}


def test_only_a_client_with_a_stateless_revision_probes() -> None:
    with pytest.raises(LocalProtocolError, match="only a client sends server/discover"):
        server(versions=["2026-07-28"]).discover()
    with pytest.raises(LocalProtocolError, match="not among supported_versions"):
        client().discover()


def test_discover_result_carries_the_instructions() -> None:
    s = server(versions=["2026-07-28"], instructions="read the docs")
    s.receive_bytes(req(1, "server/discover", {"_meta": META_2026}))
    [answer] = s.outgoing()
    assert isinstance(answer, rpc.Response) and answer.result["instructions"] == "read the docs"
