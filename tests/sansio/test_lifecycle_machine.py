"""One hypothesis state machine over the request lifecycle of both eras.

A client Connection and a server Connection, set up for one revision (handshake
era: 2025-06-18 and 2025-11-25; stateless era: 2026-07-28), exchange serialized
messages one ``deliver`` step at a time, so that answers, progress and
cancellations cross each other in flight.  The rules interleave:

- client requests: ``tools/call``, ``prompts/get`` and ``resources/list``, whose
  pages the server answers with ``nextCursor`` and the client follows;
- progress on requests that carried a progress token (both directions in the
  handshake era, where the server makes requests of its own);
- cancellation (``notifications/cancelled``: spec basic/utilities/cancellation;
  in 2026-07-28, basic/patterns/cancellation keeps it for stdio - a byte pipe
  like this test's - while on Streamable HTTP closing the stream replaces it,
  which is the driver's business) and the late answers that cross it;
- multi-round-trip input: in 2026-07-28 an ``InputRequiredResult`` ends the
  request and the client retries under a new id with ``inputResponses`` and the
  echoed ``requestState`` (spec basic/patterns/mrtr); in the handshake era the
  server's own ``elicitation/create``, ``sampling/createMessage`` and
  ``roots/list`` requests, answered (or not) by the client;
- errors, and stray answers, progress and cancellations naming unknown ids.

Everything is checked against ``LIFECYCLE``, written here from the spec and not
read from trimcp's tables: every request ends exactly once, in one of the ways
its era allows; an input-required end is followed by exactly one retry with a
fresh id; a listing ends on its last page; the Connection's pending set equals
the model's after every step (no waiter lost); progress arrives only for a live
token; after a request ended nothing is delivered for it except what the spec
allows (a late answer is dropped and counted; progress that crossed the
cancellation is reported, not delivered).
"""

from __future__ import annotations

import itertools
from typing import Any, Final

import attrs
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import event as label
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from trimcp._errors import LocalProtocolError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection.core import Connection
from trimcp._sansio.connection.lifecycle import CLOSED, IDLE, OPERATING, Role
from trimcp._sansio.connection.stateless import retry_params
from trimcp._sansio.events import (
    CancelRequested,
    Discovered,
    ErrorReceived,
    Initialized,
    InputRequired,
    ProgressReceived,
    ProtocolIssue,
    RequestReceived,
    ResponseReceived,
)

# ---------------------------------------------------------------- the test's own lifecycle table

ERA: Final = {
    "2024-11-05": "handshake",
    "2025-03-26": "handshake",
    "2025-06-18": "handshake",
    "2025-11-25": "handshake",
    "2026-07-28": "stateless",
}
#: The server requests each handshake revision has (elicitation came in 2025-06-18).
SERVER_METHODS: Final = {
    "2024-11-05": {"sampling/createMessage", "roots/list"},
    "2025-03-26": {"sampling/createMessage", "roots/list"},
    "2025-06-18": {"elicitation/create", "sampling/createMessage", "roots/list"},
    "2025-11-25": {"elicitation/create", "sampling/createMessage", "roots/list"},
}
#: How a request may end, in either era: its result, a JSON-RPC error, our cancellation
#: (the sender stops waiting and ignores a late answer), or the connection closing.
ENDS: Final = frozenset({"result", "error", "cancelled", "closed"})
#: era -> who sends -> method -> the ways a request of it may end.
LIFECYCLE: Final[dict[str, dict[str, dict[str, frozenset[str]]]]] = {
    "handshake": {
        "client": {"tools/call": ENDS, "prompts/get": ENDS, "resources/list": ENDS},
        # client/elicitation, client/sampling, client/roots: requests the server makes.
        "server": {"elicitation/create": ENDS, "sampling/createMessage": ENDS, "roots/list": ENDS},
    },
    "stateless": {
        # mrtr "Supported Requests": tools/call, prompts/get, resources/read may be
        # answered with an InputRequiredResult; no other request may.
        "client": {
            "tools/call": ENDS | {"input_required"},
            "prompts/get": ENDS | {"input_required"},
            "resources/list": ENDS,
        },
        # mrtr: "The previous pattern of server-initiated requests is no longer supported."
        "server": {},
    },
}
#: An end that is not the end of the operation, and what must follow it.
FOLLOWED_BY: Final = {"input_required": "a retry under a new id"}
#: The pages a resources/list goes through (pagination: nextCursor on all but the last).
LAST_PAGE: Final = 2

SI: Final = "io.modelcontextprotocol/serverInfo"
CLIENT_CAPS: Final = {"sampling": {}, "roots": {"listChanged": True}, "elicitation": {}}
SERVER_CAPS: Final = {"tools": {}, "resources": {}, "prompts": {}}
#: Input a 2026-07-28 server may ask for, each allowed by CLIENT_CAPS.
INPUT_REQUESTS: Final = {
    "elicitation/create": {"mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {}}},
    "sampling/createMessage": {"messages": [], "maxTokens": 5},
    "roots/list": {},
}
INPUT_RESPONSES: Final = {
    "elicitation/create": {"action": "accept", "content": {}},
    "sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
    "roots/list": {"roots": []},
}


@attrs.define
class Mine:
    """One of our requests, still waiting."""

    method: str
    token: str | None
    #: The operation it belongs to (a listing's pages and a call's retries share one).
    op: int


@attrs.define
class Theirs:
    """A request of the peer's that we have yet to answer."""

    method: str
    token: str | int | None
    params: dict[str, Any]
    cancelled: bool = False
    progress: float = 0.0


@attrs.define
class Op:
    """A client operation: a call (with its retries) or a listing (with its pages)."""

    method: str
    params: dict[str, Any]
    end: str | None = None
    pages: list[int] = attrs.Factory(list)
    cursor: str | None = None  # a nextCursor to follow
    retry: InputRequired | None = None  # an input-required step to retry


@attrs.define
class Side:
    conn: Connection
    name: str
    wire: list[bytes] = attrs.Factory(list)
    #: every request we ever sent (ended or not)
    sent: dict[rpc.RequestId, Mine] = attrs.Factory(dict)
    mine: dict[rpc.RequestId, Mine] = attrs.Factory(dict)
    ended: dict[rpc.RequestId, str] = attrs.Factory(dict)
    theirs: dict[rpc.RequestId, Theirs] = attrs.Factory(dict)
    #: ids of the peer's requests we answered (or whose answer was suppressed)
    done_theirs: set[rpc.RequestId] = attrs.Factory(set)
    #: ids we cancelled whose answer has not arrived: one late answer is dropped
    late_ok: set[rpc.RequestId] = attrs.Factory(set)
    dead_tokens: set[str | int] = attrs.Factory(set)
    progress_seen: dict[str | int, float] = attrs.Factory(dict)
    late: int = 0
    unknown: int = 0
    suppressed: int = 0


class LifecycleMachine(RuleBasedStateMachine):
    REVISION = "2025-11-25"
    counter = itertools.count()

    @property
    def era(self) -> str:
        return ERA[self.REVISION]

    # ------------------------------------------------------------ setup: the session starts

    @initialize()
    def start(self) -> None:
        versions = [self.REVISION]
        self.client = Side(
            Connection(Role.CLIENT, info={"name": "c"}, capabilities=dict(CLIENT_CAPS), supported_versions=versions),
            "client",
        )
        self.server = Side(
            Connection(Role.SERVER, info={"name": "s"}, capabilities=dict(SERVER_CAPS), supported_versions=versions),
            "server",
        )
        self.ops: dict[int, Op] = {}
        self.closed = False
        self.cursors_issued: set[str] = set()
        #: requestState -> (the inputRequests keys it asked, the request it answered);
        #: each is retried once unless the client had cancelled that request
        self.states_issued: dict[str, tuple[set[str], rpc.RequestId]] = {}
        c, s = self.client.conn, self.server.conn
        c.initialize() if self.era == "handshake" else c.discover()
        events: list[Any] = []
        while c.has_output or s.has_output:
            for src, dst in ((c, s), (s, c)):
                for msg in src.outgoing():
                    events += dst.receive_bytes(rpc.serialize(msg))
        kinds = [Initialized, Initialized] if self.era == "handshake" else [Discovered]
        assert [type(e) for e in events] == kinds, events
        assert c.protocol_version == self.REVISION and c.pending == {}

    # ------------------------------------------------------------ plumbing

    def peer(self, side: Side) -> Side:
        return self.server if side is self.client else self.client

    def side(self, who: str) -> Side:
        return self.client if who == "client" else self.server

    def flush(self, side: Side) -> list[rpc.Message]:
        out = side.conn.outgoing()
        side.wire.extend(rpc.serialize(m) for m in out)
        return out

    def end(self, side: Side, request_id: rpc.RequestId, how: str) -> Mine:
        """Request ``request_id`` of ``side`` ends ``how``: exactly once, as the table allows."""
        assert request_id not in side.ended, (
            f"{side.name}: {request_id!r} ended twice ({side.ended[request_id]}, {how})"
        )
        mine = side.mine.pop(request_id)
        assert how in LIFECYCLE[self.era][side.name][mine.method], (self.era, side.name, mine.method, how)
        label(f"{side.name} request ended: {how}")
        side.ended[request_id] = how
        if mine.token is not None:
            side.dead_tokens.add(mine.token)
        return mine

    def send(self, side: Side, method: str, params: dict[str, Any], with_token: bool, op: int) -> rpc.RequestId:
        token = f"{side.name}-tok-{next(self.counter)}" if with_token else None
        request_id = side.conn.send_request(method, params, progress_token=token)
        assert request_id not in side.mine and request_id not in side.ended, "an id was used twice"
        side.mine[request_id] = side.sent[request_id] = Mine(method, token, op)
        [msg] = self.flush(side)
        assert isinstance(msg, rpc.Request) and msg.id == request_id
        return request_id

    # ------------------------------------------------------------ client requests

    @precondition(lambda self: not self.closed)
    @rule(method=st.sampled_from(sorted(LIFECYCLE["handshake"]["client"])), with_token=st.booleans())
    def client_request(self, method: str, with_token: bool) -> None:
        params: dict[str, Any] = {} if method == "resources/list" else {"name": f"n{next(self.counter)}"}
        op = next(self.counter)
        self.ops[op] = Op(method, params)
        self.send(self.client, method, params, with_token, op)

    @precondition(lambda self: not self.closed)
    @rule(data=st.data(), with_token=st.booleans())
    def client_follow_up(self, data: st.DataObject, with_token: bool) -> None:
        """Follow a listing's nextCursor, or retry a call that needed input."""
        waiting = sorted(k for k, op in self.ops.items() if op.cursor is not None or op.retry is not None)
        if waiting:
            self.follow_up(data.draw(st.sampled_from(waiting)), with_token)

    def follow_up(self, key: int, with_token: bool) -> None:
        op = self.ops[key]
        if op.cursor is not None:
            params, op.cursor = {**op.params, "cursor": op.cursor}, None
        else:
            asked = op.retry
            assert asked is not None
            op.retry = None
            responses = {k: INPUT_RESPONSES[r["method"]] for k, r in asked.input_requests.items()}
            params = retry_params(op.params, responses, asked.request_state)
        self.send(self.client, op.method, params, with_token, key)

    # ------------------------------------------------------------ the server's own requests

    @precondition(lambda self: not self.closed)
    @rule(method=st.sampled_from(sorted(LIFECYCLE["handshake"]["server"])), with_token=st.booleans())
    def server_request(self, method: str, with_token: bool) -> None:
        if method not in LIFECYCLE[self.era]["server"] or method not in SERVER_METHODS.get(self.REVISION, ()):
            # 2026-07-28: such requests travel inside an InputRequiredResult only; before
            # 2025-06-18 there is no elicitation/create to send.
            before = dict(self.server.conn.pending)
            with pytest.raises(LocalProtocolError):
                self.server.conn.send_request(method, INPUT_REQUESTS[method])
            assert not self.server.conn.has_output and self.server.conn.pending == before
            return
        self.send(self.server, method, dict(INPUT_REQUESTS[method]), with_token, -1)

    # ------------------------------------------------------------ answering

    def pick(self, data: st.DataObject, eligible: list[Side]) -> Side:
        return data.draw(st.sampled_from(eligible), label="side")

    @rule(data=st.data())
    def misuse(self, data: st.DataObject) -> None:
        """Answering, cancelling or reporting progress on an id that is not ours to touch
        raises LocalProtocolError and changes nothing."""
        side = self.pick(data, [self.client, self.server])
        conn, stray = side.conn, f"never-{next(self.counter)}"
        for attempt in (
            lambda: conn.send_response(stray, {}),
            lambda: conn.send_error(stray, -32000, "x"),
            lambda: conn.cancel(stray),
            lambda: conn.send_progress(stray, 1),
        ):
            with pytest.raises(LocalProtocolError):
                attempt()
        assert not conn.has_output

    @precondition(lambda self: not self.closed and (self.client.theirs or self.server.theirs))
    @rule(data=st.data(), kind=st.sampled_from(["result", "error", "input_required"]))
    def answer(self, data: st.DataObject, kind: str) -> None:
        side = self.pick(data, [s for s in (self.client, self.server) if s.theirs])
        conn = side.conn
        request_id = data.draw(st.sampled_from(sorted(side.theirs, key=repr)))
        theirs = side.theirs[request_id]
        mrtr_ok = side is self.server and "input_required" in LIFECYCLE[self.era]["client"][theirs.method]
        if kind == "input_required" and not mrtr_ok:
            with pytest.raises(LocalProtocolError):
                conn.send_input_required(request_id, None, "state")
            assert not conn.has_output and conn.awaiting_answer(request_id)
            return
        del side.theirs[request_id]
        side.done_theirs.add(request_id)
        if kind == "error":
            conn.send_error(request_id, -32000, "application error", {"id": request_id})
        elif kind == "input_required":
            n = next(self.counter)
            asks = data.draw(st.lists(st.sampled_from(sorted(INPUT_REQUESTS)), max_size=3))
            requests = {f"k{n}-{i}": {"method": m, "params": INPUT_REQUESTS[m]} for i, m in enumerate(asks)}
            state = f"state-{n}"
            self.states_issued[state] = (set(requests), request_id)
            conn.send_input_required(request_id, requests or None, state)
        else:
            conn.send_response(request_id, self.result_for(request_id, theirs))
        out = self.flush(side)
        if theirs.cancelled:  # spec: the receiver of a cancellation SHOULD NOT answer
            label("answer suppressed after cancellation")
            assert out == []
            side.suppressed += 1
        else:
            assert [(type(m), m.id) for m in out] == [
                (rpc.ErrorResponse if kind == "error" else rpc.Response, request_id)
            ]
        assert not conn.awaiting_answer(request_id)

    def result_for(self, request_id: rpc.RequestId, theirs: Theirs) -> dict[str, Any]:
        result: dict[str, Any] = {"echo": request_id}
        if theirs.method == "resources/list":
            cursor = theirs.params.get("cursor")
            page = 0 if cursor is None else int(cursor.removeprefix("page-"))
            result["resources"] = [{"uri": f"x://{page}", "name": f"page {page}"}]
            if page < LAST_PAGE:
                result["nextCursor"] = f"page-{page + 1}"
                self.cursors_issued.add(result["nextCursor"])
        return result

    # ------------------------------------------------------------ progress and cancellation

    @staticmethod
    def live(side: Side) -> list[rpc.RequestId]:
        return sorted((k for k, t in side.theirs.items() if t.token is not None), key=repr)

    @precondition(lambda self: not self.closed and (self.live(self.client) or self.live(self.server)))
    @rule(data=st.data(), step=st.sampled_from([0.5, 1, 7]))
    def progress(self, data: st.DataObject, step: float) -> None:
        side = self.pick(data, [s for s in (self.client, self.server) if self.live(s)])
        live = self.live(side)
        theirs = side.theirs[data.draw(st.sampled_from(live))]
        assert theirs.token is not None
        theirs.progress += step
        side.conn.send_progress(theirs.token, theirs.progress, total=100)
        out = self.flush(side)
        # Progress only for a live request: once the peer's cancellation arrived, none.
        assert len(out) == (0 if theirs.cancelled else 1), (theirs, out)

    @precondition(lambda self: not self.closed and (self.client.mine or self.server.mine))
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        side = self.pick(data, [s for s in (self.client, self.server) if s.mine])
        request_id = data.draw(st.sampled_from(sorted(side.mine, key=repr)))
        mine = self.end(side, request_id, "cancelled")
        side.late_ok.add(request_id)
        if side is self.client:
            self.ops[mine.op].end = "cancelled"
        side.conn.cancel(request_id, data.draw(st.none() | st.just("changed my mind")))
        [note] = self.flush(side)
        assert isinstance(note, rpc.Notification) and note.method == "notifications/cancelled"
        assert note.params is not None and note.params["requestId"] == request_id

    # ------------------------------------------------------------ strays: unknown ids and rogue answers

    @precondition(lambda self: not self.closed)
    @rule(who=st.sampled_from(["client", "server"]), as_error=st.booleans())
    def stray_answer(self, who: str, as_error: bool) -> None:
        request_id = f"stray-{next(self.counter)}"
        body: dict[str, Any] = {"error": {"code": -32000, "message": "?"}} if as_error else {"result": {}}
        self.feed(self.side(who), rpc.dumps({"jsonrpc": "2.0", "id": request_id, **body}))

    @precondition(lambda self: not self.closed)
    @rule(who=st.sampled_from(["client", "server"]), kind=st.sampled_from(["progress", "cancelled"]))
    def stray_notification(self, who: str, kind: str) -> None:
        side = self.side(who)
        if kind == "cancelled" and side is self.client and self.era == "stateless":
            return  # a 2026-07-28 server sends it only for subscriptions/listen
        key = "progressToken" if kind == "progress" else "requestId"
        params = {key: f"stray-{next(self.counter)}", **({"progress": 1} if kind == "progress" else {})}
        self.feed(side, rpc.dumps({"jsonrpc": "2.0", "method": f"notifications/{kind}", "params": params}))

    @precondition(lambda self: not self.closed)
    @rule(data=st.data())
    def rogue_late_answer(self, data: st.DataObject) -> None:
        """A server answers a request after its cancellation arrived (it SHOULD NOT)."""
        if self.client.late_ok:
            request_id = data.draw(st.sampled_from(sorted(self.client.late_ok, key=repr)))
            self.feed(self.client, rpc.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"echo": request_id}}))

    # ------------------------------------------------------------ the transport dies mid-run

    @precondition(lambda self: not self.closed)
    @rule(first=st.sampled_from(["client", "server"]), really=st.integers(0, 5))
    def close(self, first: str, really: int) -> None:
        """The connection ends (the transport died) with requests in flight: ``first``
        closes, then its peer; every waiting request ends "closed" and nothing more goes
        out.  Only one run in six closes, so most runs reach the long interleavings."""
        if really:
            return
        self.closed = True
        for side in (self.side(first), self.peer(self.side(first))):
            waiting = set(side.mine)
            failed = side.conn.close()
            assert sorted(failed, key=repr) == sorted(waiting, key=repr), (side.name, failed, waiting)
            for request_id in failed:
                mine = self.end(side, request_id, "closed")
                if side is self.client:
                    self.ops[mine.op].end = "closed"
            for request_id in sorted(side.theirs, key=repr):  # never to be answered
                del side.theirs[request_id]
                side.done_theirs.add(request_id)
                with pytest.raises(LocalProtocolError):
                    side.conn.send_response(request_id, {})
            with pytest.raises(LocalProtocolError):
                side.conn.send_request("tools/call", {"name": "after-close"})
            assert not side.conn.has_output and side.conn.close() == []
            side.wire.clear()
        for op in self.ops.values():  # a page or a retry not yet asked for will never be
            if op.cursor is not None or op.retry is not None:
                op.cursor = op.retry = None
                op.end = "closed"
        label("closed mid-run")

    # ------------------------------------------------------------ delivery

    @precondition(lambda self: not self.closed)
    @rule(who=st.sampled_from(["client", "server"]), count=st.integers(1, 3))
    def deliver(self, who: str, count: int) -> None:
        sender = self.side(who)
        for _ in range(count):
            if sender.wire:
                self.feed(self.peer(sender), sender.wire.pop(0))

    @precondition(lambda self: not self.closed)
    @rule()
    def deliver_all(self) -> None:
        while self.client.wire or self.server.wire:
            for sender in (self.client, self.server):
                if sender.wire:
                    self.feed(self.peer(sender), sender.wire.pop(0))

    def feed(self, side: Side, data: bytes) -> None:
        """``side`` receives one serialized message; every event is checked against the model."""
        [msg] = rpc.parse_payload(data).messages
        stray = isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id not in side.mine
        events = side.conn.receive_bytes(data)
        if stray:
            assert isinstance(msg, (rpc.Response, rpc.ErrorResponse))
            if msg.id in side.late_ok:  # the sender MUST ignore a late answer: silently
                side.late_ok.discard(msg.id)
                side.late += 1
                label("late answer dropped")
                assert events == []
            else:
                side.unknown += 1
                assert [(type(e), e.kind) for e in events] == [(ProtocolIssue, "unknown-response-id")]  # type: ignore[union-attr]
            return
        if isinstance(msg, (rpc.Response, rpc.ErrorResponse)):
            side.late_ok.discard(msg.id)  # (never cancelled: nothing to forget)
        for event in events:
            self.handle(side, event)
        self.flush(side)  # nothing of its own, but check_quiet() says so

    def handle(self, side: Side, event: Any) -> None:
        peer = self.peer(side)
        if isinstance(event, RequestReceived):
            # (the request may have been cancelled already: the cancellation follows it)
            assert event.id in peer.mine or peer.ended[event.id] == "cancelled"
            assert peer.sent[event.id].method == event.method
            assert event.id not in side.theirs and event.id not in side.done_theirs
            meta = event.params.get("_meta") or {}
            assert meta.get("progressToken") == peer.sent[event.id].token
            if "requestState" in event.params:  # an MRTR retry: state echoed, keys answered
                asked, _ = self.states_issued.pop(event.params["requestState"])
                assert set(event.params.get("inputResponses", {})) == asked
            if "cursor" in event.params:
                assert event.params["cursor"] in self.cursors_issued
            side.theirs[event.id] = Theirs(event.method, meta.get("progressToken"), event.params)
        elif isinstance(event, CancelRequested):
            assert peer.ended.get(event.request_id) == "cancelled"
            assert not side.theirs[event.request_id].cancelled  # reported once
            side.theirs[event.request_id].cancelled = True
        elif isinstance(event, ResponseReceived):
            mine = self.end(side, event.id, "result")
            assert event.method == mine.method
            assert event.result["echo"] == event.id
            if self.era == "stateless":
                assert event.result["resultType"] == "complete" and event.result["_meta"][SI] == {"name": "s"}
            if side is self.client:
                self.op_answered(mine, event.result)
        elif isinstance(event, ErrorReceived):
            mine = self.end(side, event.id, "error")
            assert event.error.code == -32000 and event.error.data == {"id": event.id}
            if side is self.client:
                self.ops[mine.op].end = "error"
        elif isinstance(event, InputRequired):
            assert side is self.client
            mine = self.end(side, event.id, "input_required")
            assert event.request_state in self.states_issued
            assert set(event.input_requests) == self.states_issued[event.request_state][0]
            self.ops[mine.op].retry = event
        elif isinstance(event, ProgressReceived):
            mine = side.mine[event.request_id]  # KeyError: progress delivered for an ended request
            assert mine.token == event.token and event.total == 100
            assert event.progress > side.progress_seen.get(event.token, 0)
            side.progress_seen[event.token] = event.progress
        elif isinstance(event, ProtocolIssue):
            # Progress that crossed our cancellation, or a stray token: reported, never delivered.
            assert event.kind == "unknown-progress-token", event
            token = event.raw.params["progressToken"]
            assert token in side.dead_tokens or str(token).startswith("stray-"), event
            label("progress for a dead token reported" if token in side.dead_tokens else "stray progress")
        else:  # pragma: no cover - nothing else may come of these exchanges
            pytest.fail(f"unexpected event {event!r}")

    def op_answered(self, mine: Mine, result: dict[str, Any]) -> None:
        op = self.ops[mine.op]
        if op.method != "resources/list":
            op.end = "result"
            return
        [resource] = result["resources"]
        op.pages.append(int(resource["uri"].removeprefix("x://")))
        op.cursor = result.get("nextCursor")
        if op.cursor is None:
            op.end = "result"

    # ------------------------------------------------------------ invariants

    @invariant()
    def no_waiter_lost(self) -> None:
        for side in (self.client, self.server):
            conn = side.conn
            assert set(conn.pending) == set(side.mine), (side.name, conn.pending, side.mine)
            for request_id in side.theirs:
                assert conn.awaiting_answer(request_id)
            for request_id in side.done_theirs:
                assert not conn.awaiting_answer(request_id)
            assert not conn.has_output

    @invariant()
    def stats_match_the_model(self) -> None:
        for side in (self.client, self.server):
            stats = side.conn.stats
            assert (stats.late_responses_dropped, stats.unknown_responses, stats.answers_suppressed) == (
                side.late,
                side.unknown,
                side.suppressed,
            ), side.name
            assert stats.invalid_messages == 0

    @invariant()
    def lifecycle_state_holds(self) -> None:
        if self.closed:
            assert self.client.conn.state is CLOSED and self.server.conn.state is CLOSED
            return
        assert self.client.conn.state is OPERATING
        # A 2026-07-28 server has no session: it stays IDLE and serves each request on its own.
        assert self.server.conn.state is (OPERATING if self.era == "handshake" else IDLE)

    # ------------------------------------------------------------ the end: run to quiescence

    def teardown(self) -> None:
        if not hasattr(self, "client"):
            return
        for _ in range(0 if self.closed else 100):
            for side in (self.client, self.server):
                for request_id in sorted(side.theirs, key=repr):
                    theirs = side.theirs.pop(request_id)
                    side.done_theirs.add(request_id)
                    side.conn.send_response(request_id, self.result_for(request_id, theirs))
                    side.suppressed += theirs.cancelled
                    self.flush(side)
            for key in sorted(k for k, op in self.ops.items() if op.cursor is not None or op.retry is not None):
                self.follow_up(key, with_token=False)
            if not (self.client.wire or self.server.wire):
                break
            self.deliver_all()
        else:
            if not self.closed:  # pragma: no cover
                raise AssertionError("the pair never went quiet")
        self.no_waiter_lost()
        self.stats_match_the_model()
        for side in (self.client, self.server):
            # Nothing in flight, a live peer: every request ended, each exactly once (end()).
            assert side.mine == {}, (side.name, side.mine)
            assert side.conn.close() == []
        for op in self.ops.values():
            # Every operation reached a final end ("closed" only if the connection was);
            # FOLLOWED_BY steps were all followed.
            assert op.end in (ENDS if self.closed else ENDS - {"closed"}) and op.end not in FOLLOWED_BY, op
            assert op.retry is None and op.cursor is None
            if op.method == "resources/list" and op.end == "result":
                assert op.pages == list(range(LAST_PAGE + 1)), op.pages
            label(f"operation {op.method} ended: {op.end}")
        # Every input-required step that reached the client was retried once (or the
        # connection closed first).
        for _, request_id in self.states_issued.values():
            assert self.client.ended[request_id] in (
                ("cancelled", "closed", "input_required") if self.closed else ("cancelled",)
            )


SETTINGS: Final = settings(
    max_examples=100, stateful_step_count=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


class Handshake20241105(LifecycleMachine):
    REVISION = "2024-11-05"


class Handshake20250326(LifecycleMachine):
    REVISION = "2025-03-26"


class Handshake20250618(LifecycleMachine):
    REVISION = "2025-06-18"


class Handshake20251125(LifecycleMachine):
    REVISION = "2025-11-25"


class Stateless20260728(LifecycleMachine):
    REVISION = "2026-07-28"


TestLifecycle_2024_11_05 = Handshake20241105.TestCase
TestLifecycle_2025_03_26 = Handshake20250326.TestCase
TestLifecycle_2025_06_18 = Handshake20250618.TestCase
TestLifecycle_2025_11_25 = Handshake20251125.TestCase
TestLifecycle_2026_07_28 = Stateless20260728.TestCase
for _case in (
    TestLifecycle_2024_11_05,
    TestLifecycle_2025_03_26,
    TestLifecycle_2025_06_18,
    TestLifecycle_2025_11_25,
    TestLifecycle_2026_07_28,
):
    _case.settings = SETTINGS
del _case  # (else pytest collects the loop variable as one more case)


def test_the_table_covers_both_eras() -> None:
    assert set(ERA.values()) == set(LIFECYCLE)
    assert "input_required" not in set().union(*LIFECYCLE["handshake"]["client"].values())
