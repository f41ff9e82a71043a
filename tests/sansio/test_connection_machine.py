"""A hypothesis state machine drives a client Connection against a server Connection.

Both sides are well-behaved applications: they only do what the test's own model of
the protocol (written here, independently of the library's tables) says is allowed,
and check that the library refuses exactly the rest with ``LocalProtocolError``.
Messages travel serialized, in order, one per ``deliver`` step, so cancellations,
progress and answers cross each other in flight.
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)

from trimcp._errors import LocalProtocolError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection.core import LOG_LEVELS, Connection
from trimcp._sansio.connection.lifecycle import (
    CLOSED,
    IDLE,
    INITIALIZING,
    OPERATING,
    TRANSITIONS,
    Role,
)
from trimcp._sansio.events import (
    CancelRequested,
    ErrorReceived,
    HandshakeFailed,
    Initialized,
    LogLevelChanged,
    NotificationReceived,
    ProgressReceived,
    ProtocolIssue,
    RequestReceived,
    ResponseReceived,
)
from trimcp._sansio.revisions import HANDSHAKE_VERSIONS

# ---------------------------------------------------------------- the test's own model of MCP

#: method -> (capability path the receiver must advertise, first revision having it, last revision)
CLIENT_METHODS: dict[str, tuple[tuple[str, ...] | None, str, str]] = {
    "ping": (None, "2024-11-05", "2025-11-25"),
    "tools/list": (("tools",), "2024-11-05", "2025-11-25"),
    "tools/call": (("tools",), "2024-11-05", "2025-11-25"),
    "resources/read": (("resources",), "2024-11-05", "2025-11-25"),
    "resources/subscribe": (("resources", "subscribe"), "2024-11-05", "2025-11-25"),
    "prompts/get": (("prompts",), "2024-11-05", "2025-11-25"),
    "logging/setLevel": (("logging",), "2024-11-05", "2025-11-25"),
    "completion/complete": (("completions",), "2024-11-05", "2025-11-25"),  # gated from 2025-03-26
    "tasks/get": (("tasks",), "2025-11-25", "2025-11-25"),
    "vendor/custom": (None, "2024-11-05", "2025-11-25"),
}
SERVER_METHODS: dict[str, tuple[tuple[str, ...] | None, str, str]] = {
    "ping": (None, "2024-11-05", "2025-11-25"),
    "sampling/createMessage": (("sampling",), "2024-11-05", "2025-11-25"),
    "roots/list": (("roots",), "2024-11-05", "2025-11-25"),
    "elicitation/create": (("elicitation",), "2025-06-18", "2025-11-25"),
    "tasks/list": (("tasks", "list"), "2025-11-25", "2025-11-25"),
    "vendor/custom": (None, "2024-11-05", "2025-11-25"),
}
#: Requests each role may send before the session operates (spec: Lifecycle).
EARLY_REQUESTS = {
    Role.CLIENT: {IDLE: {"initialize", "ping"}, INITIALIZING: {"ping"}},
    Role.SERVER: {IDLE: {"ping"}, INITIALIZING: {"ping"}},
}


def cap_ok(caps: dict[str, Any] | None, path: tuple[str, ...]) -> bool:
    node: Any = caps or {}
    for key in path:
        if not isinstance(node, dict) or key not in node or node[key] in (False, None):
            return False
        node = node[key]
    return True


def may_send(conn: Connection, method: str) -> bool:
    """Whether a request of ``method`` may be sent now, by the test's own reckoning."""
    if conn.state is CLOSED:
        return False
    if conn.state is not OPERATING:
        return method in EARLY_REQUESTS[conn.role][conn.state]
    table = CLIENT_METHODS if conn.role is Role.CLIENT else SERVER_METHODS
    gate, first, last = table[method]
    version = conn.protocol_version
    assert version is not None
    if not first <= version <= last:
        return method.startswith("vendor/")
    if gate is None:
        return True
    if method == "completion/complete" and version < "2025-03-26":
        return True
    return cap_ok(conn.peer_capabilities, gate)


server_caps = st.fixed_dictionaries(
    {},
    optional={
        "tools": st.just({}),
        "resources": st.sampled_from([{}, {"subscribe": True}, {"subscribe": False}]),
        "prompts": st.just({}),
        "logging": st.just({}),
        "completions": st.just({}),
        "tasks": st.sampled_from([{}, {"list": {}}]),
    },
)
client_caps = st.fixed_dictionaries(
    {},
    optional={
        "sampling": st.just({}),
        "roots": st.sampled_from([{}, {"listChanged": True}]),
        "elicitation": st.just({}),
        "tasks": st.sampled_from([{}, {"list": {}}]),
    },
)
versions = st.sets(st.sampled_from(HANDSHAKE_VERSIONS), min_size=1)


@attrs.define
class Sent:
    method: str
    token: str | None


@attrs.define
class ToAnswer:
    method: str
    token: str | int | None
    cancelled: bool = False
    last_progress: float = 0.0


@attrs.define
class Side:
    conn: Connection
    name: str
    expected_state: type = IDLE
    #: serialized messages on their way to the peer, oldest first
    wire: list[bytes] = attrs.Factory(list)
    sent: dict[rpc.RequestId, Sent] = attrs.Factory(dict)
    outstanding: set[rpc.RequestId] = attrs.Factory(set)
    #: how each of our requests ended: "answered" | "cancelled" | "closed"
    resolved: dict[rpc.RequestId, str] = attrs.Factory(dict)
    cancelled_tokens: set[str] = attrs.Factory(set)
    to_answer: dict[rpc.RequestId, ToAnswer] = attrs.Factory(dict)
    progress_seen: dict[str | int, float] = attrs.Factory(dict)
    #: ids of the responses this side has put on the wire
    answered_on_wire: set[rpc.RequestId] = attrs.Factory(set)
    expected_late: int = 0
    expected_suppressed: int = 0
    last_stats: dict[str, int] = attrs.Factory(dict)
    last_state: type = IDLE

    def resolve(self, request_id: rpc.RequestId, how: str) -> None:
        assert request_id not in self.resolved, f"{self.name}: request {request_id} resolved twice"
        assert request_id in self.outstanding
        self.outstanding.discard(request_id)
        self.resolved[request_id] = how


class ConnectionPair(RuleBasedStateMachine):
    tokens = itertools.count()

    @initialize(
        c_versions=versions,
        s_versions=versions,
        c_caps=client_caps,
        s_caps=server_caps,
        handshake_first=st.booleans(),
    )
    def setup(
        self,
        c_versions: set[str],
        s_versions: set[str],
        c_caps: dict[str, Any],
        s_caps: dict[str, Any],
        handshake_first: bool,
    ) -> None:
        self.client = Side(
            Connection(Role.CLIENT, info={"name": "c"}, capabilities=c_caps, supported_versions=sorted(c_versions)),
            "client",
        )
        self.server = Side(
            Connection(Role.SERVER, info={"name": "s"}, capabilities=s_caps, supported_versions=sorted(s_versions)),
            "server",
        )
        offered = max(c_versions)
        chosen = offered if offered in s_versions else max(s_versions)
        self.expected_version: str | None = chosen if chosen in c_versions else None
        self.level_sent: list[str] = []
        if handshake_first:  # half the runs start in operation, to spend their steps there
            self.start_handshake()
            self.deliver_all()

    @rule()
    def deliver_all(self) -> None:
        while self.client.wire or self.server.wire:
            for side in (self.client, self.server):
                if side.wire:
                    self.deliver_one(side)

    # ------------------------------------------------------------ helpers

    def peer(self, side: Side) -> Side:
        return self.server if side is self.client else self.client

    def side(self, name: str) -> Side:
        return self.client if name == "client" else self.server

    def flush(self) -> dict[str, list[rpc.Message]]:
        """Put everything both sides want to send on the wire; return it by side."""
        flushed: dict[str, list[rpc.Message]] = {}
        for side in (self.client, self.server):
            flushed[side.name] = out = side.conn.outgoing()
            for msg in out:
                if isinstance(msg, (rpc.Response, rpc.ErrorResponse)):
                    assert msg.id is not None, f"{side.name} sent an error with a null id: {msg}"
                    assert msg.id not in side.answered_on_wire, f"{side.name} answered {msg.id} twice"
                    side.answered_on_wire.add(msg.id)
                side.wire.append(rpc.serialize(msg))
        return flushed

    def send(self, side: Side, method: str, with_token: bool) -> None:
        conn = side.conn
        allowed = may_send(conn, method)
        token = f"{side.name}-tok-{next(self.tokens)}" if with_token else None
        params: dict[str, Any] | None = None
        if method == "logging/setLevel":
            params = {"level": LOG_LEVELS[len(side.sent) % len(LOG_LEVELS)]}
        if not allowed:
            with pytest.raises(LocalProtocolError):
                conn.send_request(method, params, progress_token=token)
            assert conn.outgoing() == []
            return
        request_id = conn.send_request(method, params, progress_token=token)
        assert request_id not in side.sent
        side.sent[request_id] = Sent(method, token)
        side.outstanding.add(request_id)
        if method == "logging/setLevel":
            assert params is not None
            self.level_sent.append(params["level"])
        self.flush()

    # ------------------------------------------------------------ rules

    @rule()
    def start_handshake(self) -> None:
        conn = self.client.conn
        if conn.state is not IDLE:
            with pytest.raises(LocalProtocolError):
                conn.initialize()
            return
        request_id = conn.initialize()
        self.client.sent[request_id] = Sent("initialize", None)
        self.client.outstanding.add(request_id)
        self.client.expected_state = INITIALIZING
        self.check_transition(self.client)
        self.flush()

    @rule(who=st.sampled_from(["client", "server"]), data=st.data(), with_token=st.booleans())
    def send_request(self, who: str, data: st.DataObject, with_token: bool) -> None:
        side = self.side(who)
        table = CLIENT_METHODS if who == "client" else SERVER_METHODS
        self.send(side, data.draw(st.sampled_from(sorted(table))), with_token)

    @rule(who=st.sampled_from(["client", "server"]))
    def ping(self, who: str) -> None:
        self.send(self.side(who), "ping", with_token=False)

    @rule(who=st.sampled_from(["client", "server"]))
    def notify(self, who: str) -> None:
        conn = self.side(who).conn
        if conn.state is not OPERATING:
            with pytest.raises(LocalProtocolError):
                conn.send_notification("vendor/note", {"from": who})
            return
        conn.send_notification("vendor/note", {"from": who})
        self.flush()

    @rule(who=st.sampled_from(["client", "server"]), data=st.data(), as_error=st.booleans())
    def respond(self, who: str, data: st.DataObject, as_error: bool) -> None:
        side = self.side(who)
        if not side.to_answer:
            with pytest.raises(LocalProtocolError):
                side.conn.send_response("no-such-request", {})
            return
        request_id = data.draw(st.sampled_from(sorted(side.to_answer, key=repr)))
        incoming = side.to_answer.pop(request_id)
        assert side.conn.awaiting_answer(request_id)
        if as_error:
            side.conn.send_error(request_id, -32000, "application error", {"id": request_id})
        else:
            side.conn.send_response(request_id, {"echo": incoming.method})
        out = self.flush()[who]
        if incoming.cancelled:
            assert out == []
            side.expected_suppressed += 1
        else:
            expected: rpc.Message = (
                rpc.ErrorResponse(request_id, rpc.ErrorObject(-32000, "application error", {"id": request_id}))
                if as_error
                else rpc.Response(request_id, {"echo": incoming.method})
            )
            assert out == [expected]
        assert not side.conn.awaiting_answer(request_id)

    @rule(who=st.sampled_from(["client", "server"]), data=st.data())
    def cancel(self, who: str, data: st.DataObject) -> None:
        side = self.side(who)
        if not side.outstanding:
            with pytest.raises(LocalProtocolError):
                side.conn.cancel("no-such-request")
            return
        request_id = data.draw(st.sampled_from(sorted(side.outstanding, key=repr)))
        sent = side.sent[request_id]
        if sent.method == "initialize":
            with pytest.raises(LocalProtocolError):
                side.conn.cancel(request_id)
            return
        side.conn.cancel(request_id, data.draw(st.none() | st.just("changed my mind")))
        side.resolve(request_id, "cancelled")
        if sent.token is not None:
            side.cancelled_tokens.add(sent.token)
        out = self.flush()[who]
        if side.conn.state is CLOSED:
            assert out == []
        else:
            assert len(out) == 1 and isinstance(out[0], rpc.Notification)
            assert out[0].method == "notifications/cancelled"
            assert out[0].params is not None and out[0].params["requestId"] == request_id

    @rule(
        who=st.sampled_from(["client", "server"]),
        data=st.data(),
        step=st.sampled_from([0.5, 1, 7]),
        backwards=st.booleans(),
    )
    def progress(self, who: str, data: st.DataObject, step: float, backwards: bool) -> None:
        side = self.side(who)
        with_token = {k: v for k, v in side.to_answer.items() if v.token is not None}
        if not with_token:
            return
        request_id = data.draw(st.sampled_from(sorted(with_token, key=repr)))
        incoming = with_token[request_id]
        assert incoming.token is not None
        if backwards and incoming.last_progress > 0:
            with pytest.raises(LocalProtocolError):
                side.conn.send_progress(incoming.token, incoming.last_progress)
            return
        incoming.last_progress += step
        side.conn.send_progress(incoming.token, incoming.last_progress, total=100)
        self.flush()

    @rule(who=st.sampled_from(["client", "server"]), count=st.integers(1, 3))
    def deliver(self, who: str, count: int) -> None:
        """Deliver up to ``count`` messages from ``who`` to its peer, in order."""
        sender = self.side(who)
        for _ in range(count):
            if sender.wire:
                self.deliver_one(sender)

    @rule(who=st.sampled_from(["client", "server"]), really=st.integers(0, 3))
    def maybe_close(self, who: str, really: int) -> None:
        if really == 0:  # closing ends the interesting part: do it a quarter as often
            self.close(who)

    def close(self, who: str) -> None:
        side = self.side(who)
        failed = side.conn.close()
        assert set(failed) == side.outstanding
        assert len(failed) == len(set(failed))
        for request_id in failed:
            side.resolve(request_id, "closed")
        side.to_answer.clear()
        side.expected_state = CLOSED
        self.check_transition(side)
        assert side.conn.outgoing() == []
        with pytest.raises(LocalProtocolError):
            side.conn.send_request("ping")

    # ------------------------------------------------------------ delivery and events

    def deliver_one(self, sender: Side) -> None:
        receiver = self.peer(sender)
        data = sender.wire.pop(0)
        [msg] = rpc.parse_payload(data).messages
        was_closed = receiver.conn.state is CLOSED
        if isinstance(msg, rpc.Request) and msg.method == "initialize" and not was_closed:
            receiver.expected_state = INITIALIZING
        if (
            isinstance(msg, (rpc.Response, rpc.ErrorResponse))
            and not was_closed
            and receiver.resolved.get(msg.id) == "cancelled"
        ):  # type: ignore[arg-type]
            receiver.expected_late += 1
        events = receiver.conn.receive_bytes(data)
        for event in events:
            if isinstance(event, (Initialized, HandshakeFailed)):
                receiver.expected_state = OPERATING if isinstance(event, Initialized) else CLOSED
        self.check_transition(receiver)
        if was_closed:
            assert [type(e) for e in events] == [ProtocolIssue]
            assert events[0].kind == "after-close"  # type: ignore[union-attr]
            return
        for event in events:
            self.handle(receiver, event)
        self.flush()

    def handle(self, side: Side, event: Any) -> None:
        peer = self.peer(side)
        if isinstance(event, RequestReceived):
            assert event.id in peer.sent and peer.sent[event.id].method == event.method
            assert event.id not in side.to_answer
            meta = event.params.get("_meta") or {}
            assert meta.get("progressToken") == peer.sent[event.id].token
            side.to_answer[event.id] = ToAnswer(event.method, meta.get("progressToken"))
        elif isinstance(event, CancelRequested):
            assert peer.resolved.get(event.request_id) == "cancelled"
            side.to_answer[event.request_id].cancelled = True
        elif isinstance(event, (ResponseReceived, ErrorReceived)):
            assert side.sent[event.id].method == event.method
            side.resolve(event.id, "answered")
            if isinstance(event, ErrorReceived):
                assert event.error.code == -32000 and event.error.data == {"id": event.id}
            elif event.method not in ("ping", "logging/setLevel"):
                assert event.result == {"echo": event.method}
        elif isinstance(event, ProgressReceived):
            assert event.request_id in side.outstanding
            assert side.sent[event.request_id].token == event.token
            assert event.progress > side.progress_seen.get(event.token, 0)
            assert event.total == 100
            side.progress_seen[event.token] = event.progress
        elif isinstance(event, Initialized):
            assert event.protocol_version == self.expected_version
            assert side.conn.protocol_version == self.expected_version == peer.conn.protocol_version
            if side is self.client:
                [init_id] = [i for i, s in side.sent.items() if s.method == "initialize"]
                side.resolve(init_id, "answered")
                assert event.peer_capabilities == self.server.conn.capabilities
            else:
                assert event.peer_capabilities == self.client.conn.capabilities
            side.expected_state = OPERATING
        elif isinstance(event, HandshakeFailed):
            assert side is self.client and self.expected_version is None
            [init_id] = [i for i, s in side.sent.items() if s.method == "initialize"]
            side.resolve(init_id, "answered")
            side.expected_state = CLOSED
            side.to_answer.clear()
        elif isinstance(event, LogLevelChanged):
            assert side is self.server and event.level == self.level_sent.pop(0)
        elif isinstance(event, NotificationReceived):
            assert event.method == "vendor/note" and event.params == {"from": peer.name}
        elif isinstance(event, ProtocolIssue):
            # A well-behaved peer causes only one kind of issue: progress that crossed
            # our cancellation in flight.
            assert event.kind == "unknown-progress-token", event
            assert event.raw.params["progressToken"] in side.cancelled_tokens
        else:  # pragma: no cover - every event type is handled above
            pytest.fail(f"unexpected event {event!r}")

    # ------------------------------------------------------------ invariants

    def check_transition(self, side: Side) -> None:
        """Called after every single operation: a state change is one move of the table."""
        state = side.conn.state
        assert state is side.expected_state, (side.name, state, side.expected_state)
        if state is not side.last_state:
            assert state in TRANSITIONS[side.conn.role][side.last_state].values()
        side.last_state = state

    @invariant()
    def states_follow_the_lifecycle_table(self) -> None:
        for side in (self.client, self.server):
            self.check_transition(side)

    @invariant()
    def forbidden_sends_are_refused_without_side_effects(self) -> None:
        """In every state, every request the model forbids raises LocalProtocolError and
        changes nothing (the exhaustive complement of what ``send`` exercises)."""
        for side, table in ((self.client, CLIENT_METHODS), (self.server, SERVER_METHODS)):
            conn = side.conn
            before = (dict(conn.pending), conn.state, conn.stats)
            for method in table:
                if not may_send(conn, method):
                    with pytest.raises(LocalProtocolError):
                        conn.send_request(method, {}, progress_token="probe")
            if conn.state is not IDLE or conn.role is Role.SERVER:
                with pytest.raises(LocalProtocolError):
                    conn.initialize()
            assert (dict(conn.pending), conn.state, conn.stats) == before
            assert conn.outgoing() == []

    @invariant()
    def pending_tables_are_consistent(self) -> None:
        for side in (self.client, self.server):
            assert set(side.conn.pending) == side.outstanding
            assert set(side.sent) == side.outstanding | set(side.resolved)
            assert not (side.outstanding & set(side.resolved))
            for request_id in side.to_answer:
                assert side.conn.awaiting_answer(request_id)

    @invariant()
    def stats_never_decrease_and_match_the_model(self) -> None:
        for side in (self.client, self.server):
            stats = attrs.asdict(side.conn.stats)
            for key, value in side.last_stats.items():
                assert stats[key] >= value, (side.name, key)
            side.last_stats = stats
            assert stats["late_responses_dropped"] == side.expected_late
            assert stats["answers_suppressed"] == side.expected_suppressed
            assert stats["unknown_responses"] == 0
            assert stats["invalid_messages"] == 0

    @invariant()
    def handshake_completes_once_delivered(self) -> None:
        """Once the client operates and everything it sent has arrived, so does the server."""
        c, s = self.client, self.server
        if c.conn.state is OPERATING and not c.wire and s.conn.state is not CLOSED:
            assert s.conn.state is OPERATING

    @invariant()
    def versions_agree(self) -> None:
        if self.client.conn.state is OPERATING:
            assert self.client.conn.protocol_version == self.expected_version
            assert self.server.conn.protocol_version == self.expected_version

    # ------------------------------------------------------------ the end: run to quiescence

    def teardown(self) -> None:
        if not hasattr(self, "client"):
            return
        for _ in range(50):
            for side in (self.client, self.server):
                if side.conn.state is not CLOSED:
                    for request_id in list(side.to_answer):
                        incoming = side.to_answer.pop(request_id)
                        side.conn.send_response(request_id, {"echo": incoming.method})
                        if incoming.cancelled:
                            side.expected_suppressed += 1
                    self.flush()
            if not (self.client.wire or self.server.wire):
                break
            for side in (self.client, self.server):
                while side.wire:
                    self.deliver_one(side)
        else:  # pragma: no cover
            raise AssertionError("the pair never went quiet")
        self.stats_never_decrease_and_match_the_model()
        self.pending_tables_are_consistent()
        for side in (self.client, self.server):
            # with a live peer and nothing in flight, every request got its answer
            if self.peer(side).conn.state is not CLOSED and side.conn.state is not CLOSED:
                assert side.outstanding == set(), (side.name, side.outstanding)
        for side in (self.client, self.server):
            self.close(side.name)  # legal in every state; returns what never got an answer
            # every request we sent ended exactly one way
            assert set(side.resolved) == set(side.sent)
            assert not side.outstanding
            assert set(side.resolved.values()) <= {"answered", "cancelled", "closed"}
            # every answer we received was to a request we sent, at most once (resolve() checks)
            assert side.answered_on_wire <= set(self.peer(side).sent)


TestConnectionPair = ConnectionPair.TestCase
TestConnectionPair.settings = settings(
    max_examples=150,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
