"""Hypothesis properties of the sans-IO Connection in the 2026-07-28 (stateless) era.

(a) Every request a client Connection sends after ``server/discover`` carries a
    valid envelope in ``params._meta`` (protocol version, the client's
    capabilities and identity, its log level), whatever ``_meta`` extras and
    progress token the caller added; a server Connection takes it as a
    ``RequestReceived`` with the same envelope, or refuses it with -32601 when it
    does not advertise the method's capability (a stateless request may reach a
    server other than the one that was probed).
(b) Any result body - ``resultType`` complete / input_required / junk / missing,
    valid and invalid ``InputRequiredResult`` bodies - fed to a client ends each
    pending request in exactly one of ``ResponseReceived`` / ``InputRequired`` /
    ``InvalidAnswer`` (also for a result that is not an object), never raises, never leaves a waiter behind; ``InputRequired`` exactly when
    ``input_required_ok`` - the test's own reading of the spec - says the body is
    valid.
(c) A client and a server Connection pumped together through N rounds of
    ``send_input_required`` then a complete result: every retry has a fresh id,
    echoes ``requestState`` exactly, answers exactly the keys asked, keeps the
    original params and envelope, and the exchange ends with the final result.
(d) A state machine interleaves sends, answers of every kind (in any order),
    cancellations and re-issues with late answers, and unknown ids.

The rules below (method gates, which input requests need which capability, what
makes an InputRequiredResult valid) are written from the spec
(basic/patterns/mrtr, schema 2026-07-28), not read from trimcp's tables.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as label
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from trimcp._errors import LocalProtocolError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection import stateless as sl
from trimcp._sansio.connection.core import Connection
from trimcp._sansio.connection.lifecycle import OPERATING, Role
from trimcp._sansio.events import (
    Discovered,
    ErrorReceived,
    InputRequired,
    InvalidAnswer,
    ProtocolIssue,
    RequestReceived,
    ResponseReceived,
)
from trimcp._sansio.revisions import ALL_VERSIONS, REV_2026_07_28

REV = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
CI = "io.modelcontextprotocol/clientInfo"
LL = "io.modelcontextprotocol/logLevel"
SI = "io.modelcontextprotocol/serverInfo"
ENVELOPE_KEYS = (PV, CC, CI, LL)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

CLIENT_INFO = {"name": "property-client", "version": "1.0"}
SERVER_INFO = {"name": "property-server", "version": "1.0"}

# ---------------------------------------------------------------- the test's own model of 2026-07-28

#: Client requests of 2026-07-28 (spec: schema ClientRequest) -> the server capability each needs.
GATES: dict[str, str | None] = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "completion/complete": "completions",
    "subscriptions/listen": None,
}
METHODS = sorted(GATES)
#: Requests that may be answered with an InputRequiredResult (spec: mrtr, "Supported Requests").
MRTR = ("prompts/get", "resources/read", "tools/call")
#: What may stand in inputRequests -> the client capability it needs.
INPUT_METHODS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
SERVER_CAPABILITY_NAMES = ("completions", "logging", "prompts", "resources", "tools")
FULL_SERVER_CAPS: dict[str, Any] = {name: {} for name in SERVER_CAPABILITY_NAMES}

PROPERTY_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_model_matches_the_revision_table() -> None:
    assert set(GATES) | {"server/discover"} == set(REV_2026_07_28.client_requests)
    assert set(MRTR) == set(sl.MRTR_METHODS)


def declares(capabilities: dict[str, Any], name: str) -> bool:
    """A capability is declared by an object under its name (spec: ClientCapabilities)."""
    return isinstance(capabilities.get(name), dict)


MISSING = object()


def input_required_ok(method: str, body: dict[str, Any], client_caps: dict[str, Any]) -> bool:
    """Whether ``body`` (resultType input_required) is a usable InputRequiredResult.

    Structural rules only (deep params validation is the driver's job): the method
    may be answered so; at least one of inputRequests / requestState; requestState
    a string; inputRequests an object of ``{method, params?}`` objects whose method
    is elicitation/create, sampling/createMessage or roots/list, each needing the
    matching client capability, params an object.  A JSON null in an optional
    member reads as absent (trimcp's deliberate leniency; never harmful here)."""
    if method not in MRTR:
        return False
    requests = body.get("inputRequests")
    state = body.get("requestState")
    if requests is None and state is None:
        return False
    if state is not None and not isinstance(state, str):
        return False
    if requests is None:
        return True
    if not isinstance(requests, dict):
        return False
    for request in requests.values():
        if not isinstance(request, dict):
            return False
        wanted = request.get("method", MISSING)
        if not isinstance(wanted, str) or wanted not in INPUT_METHODS:
            return False
        if not declares(client_caps, INPUT_METHODS[wanted]):
            return False
        params = request.get("params")
        if params is not None and not isinstance(params, dict):
            return False
    return True


def expected_kind(method: str, body: Any, client_caps: dict[str, Any]) -> type:
    if not isinstance(body, dict):
        return InvalidAnswer  # "result" must be an object (JSON-RPC as MCP uses it)
    kind = body.get("resultType")
    if kind is None or kind == "complete":
        return ResponseReceived  # absent reads as "complete" (spec: Result.resultType)
    if kind == "input_required" and input_required_ok(method, body, client_caps):
        return InputRequired
    return InvalidAnswer


def test_oracle_spot_checks() -> None:
    caps: dict[str, Any] = {"elicitation": {}}
    elicit = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {}}}
    assert input_required_ok("tools/call", {"inputRequests": {"a": elicit}}, caps)
    assert input_required_ok("tools/call", {"requestState": ""}, {})
    assert not input_required_ok("tools/list", {"requestState": "s"}, caps)
    assert not input_required_ok("tools/call", {"resultType": "input_required"}, caps)
    assert not input_required_ok("tools/call", {"inputRequests": {"a": elicit}}, {})
    assert not input_required_ok("tools/call", {"inputRequests": {"a": {"method": "ping"}}}, caps)
    assert not input_required_ok("tools/call", {"requestState": 7}, caps)
    assert not input_required_ok("tools/call", {"inputRequests": [elicit]}, caps)


# ---------------------------------------------------------------- strategies

texts = st.text(max_size=12)
json_scalars = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | texts
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
#: What a client may declare: each of its three request-answering capabilities, or not.
client_capabilities = st.fixed_dictionaries(
    {},
    optional={
        "elicitation": st.sampled_from([{}, {"form": {}}, {"form": {}, "url": {}}]),
        "sampling": st.sampled_from([{}, {"tools": {}}]),
        "roots": st.sampled_from([{}, {"listChanged": True}]),
        "experimental": st.dictionaries(texts, st.dictionaries(texts, json_scalars, max_size=2), max_size=2),
    },
)
server_capabilities: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {}, optional={name: st.just({}) for name in SERVER_CAPABILITY_NAMES}
)
#: ``_meta`` extras a caller may add; envelope keys included (the envelope must win).
meta_extras = st.builds(
    lambda named, other: {**other, **named},
    st.fixed_dictionaries(
        {}, optional={key: json_values for key in (*ENVELOPE_KEYS, "progressToken", "com.example/trace")}
    ),
    st.dictionaries(texts, json_values, max_size=2),
)
progress_tokens = st.none() | texts | st.integers(-(2**31), 2**31)


@st.composite
def request_params(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    params: dict[str, Any] = draw(st.dictionaries(texts.filter(lambda k: k != "_meta"), json_values, max_size=3))
    meta = draw(st.none() | meta_extras | json_scalars)
    if meta is not None or draw(st.booleans()):
        params["_meta"] = meta
    return params


def input_request(method: str) -> dict[str, Any]:
    if method == "elicitation/create":
        return {
            "method": method,
            "params": {
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
    if method == "sampling/createMessage":
        return {
            "method": method,
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10,
            },
        }
    return {"method": method}


def input_response(method: str) -> dict[str, Any]:
    if method == "elicitation/create":
        return {"action": "accept", "content": {"name": "Ada"}}
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}
    return {"roots": [{"uri": "file:///tmp"}]}


#: An inputRequests member: valid ones, wrong methods, wrong shapes.
any_input_request = st.one_of(
    st.sampled_from(sorted(INPUT_METHODS)).map(input_request),
    st.sampled_from(sorted(INPUT_METHODS)).map(lambda m: {"method": m, "params": {}}),
    st.sampled_from(sorted(INPUT_METHODS)).map(lambda m: {"method": m, "params": [1]}),
    st.sampled_from(["tools/call", "ping", "initialize", "roots/lists", ""]).map(lambda m: {"method": m}),
    st.dictionaries(texts, json_values, max_size=2),
    json_scalars,
)


@st.composite
def result_bodies(draw: st.DrawFn, client_caps: dict[str, Any] | None = None) -> Any:
    """Result objects of every kind, mostly near-valid InputRequiredResults (with
    ``client_caps``, often asking only for what the client declared)."""
    if draw(st.sampled_from([True] + [False] * 15)):
        return draw(json_scalars | st.lists(json_scalars, max_size=2))  # not an object at all
    body: dict[str, Any] = draw(
        st.dictionaries(
            texts.filter(lambda k: k not in ("resultType", "inputRequests", "requestState")),
            json_values,
            max_size=2,
        )
    )
    kind = draw(
        st.sampled_from(["complete", "input_required", "input_required", "input_required", MISSING, None, "junk"])
    )
    if kind == "junk":
        kind = draw(texts | st.integers() | st.booleans() | st.lists(texts, max_size=1))
    if kind is not MISSING:
        body["resultType"] = kind
    declared = sorted(m for m, cap in INPUT_METHODS.items() if declares(client_caps or {}, cap))
    requests = draw(st.sampled_from(["absent", "null", "valid", "declared", "declared", "mixed", "junk"]))
    if requests == "null":
        body["inputRequests"] = None
    elif requests == "valid" or requests == "declared":
        pool = declared if requests == "declared" and declared else sorted(INPUT_METHODS)
        methods = draw(st.lists(st.sampled_from(pool), max_size=3))
        body["inputRequests"] = {f"k{i}": input_request(m) for i, m in enumerate(methods)}
        if methods and draw(st.sampled_from([True, False, False])):
            # One member's params of the wrong type, or its method gone.
            victim = body["inputRequests"][f"k{draw(st.integers(0, len(methods) - 1))}"]
            if draw(st.booleans()):
                victim["params"] = draw(st.lists(json_scalars, max_size=1) | texts | st.integers())
            else:
                victim.pop("method")
    elif requests == "mixed":
        body["inputRequests"] = draw(st.dictionaries(texts, any_input_request, min_size=1, max_size=3))
    elif requests == "junk":
        body["inputRequests"] = draw(json_scalars | st.lists(any_input_request, max_size=2))
    state = draw(st.sampled_from(["absent", "absent", "string", "null", "junk"]))
    if state == "string":
        body["requestState"] = draw(st.text(max_size=40))
    elif state == "null":
        body["requestState"] = None
    elif state == "junk":
        body["requestState"] = draw(st.integers() | st.booleans() | st.dictionaries(texts, json_scalars, max_size=1))
    if draw(st.booleans()):
        body["_meta"] = draw(st.dictionaries(texts, json_values, max_size=2))
    return body


# ---------------------------------------------------------------- plumbing


def client(capabilities: dict[str, Any], versions: tuple[str, ...] = ALL_VERSIONS) -> Connection:
    return Connection(Role.CLIENT, info=CLIENT_INFO, capabilities=capabilities, supported_versions=versions)


def server(capabilities: dict[str, Any]) -> Connection:
    return Connection(Role.SERVER, info=SERVER_INFO, capabilities=capabilities, supported_versions=ALL_VERSIONS)


def pump(src: Connection, dst: Connection) -> list[Any]:
    """Carry everything ``src`` queued to ``dst``, serialized; return ``dst``'s events."""
    events: list[Any] = []
    for msg in src.outgoing():
        events.extend(dst.receive_bytes(rpc.serialize(msg)))
    return events


def discovered(client_caps: dict[str, Any], server_caps: dict[str, Any] = FULL_SERVER_CAPS) -> Connection:
    """A client Connection operating in 2026-07-28 after a scripted discover."""
    c, s = client(client_caps), server(server_caps)
    c.discover()
    assert pump(c, s) == []  # the server answers discover by itself
    [event] = pump(s, c)
    assert isinstance(event, Discovered) and event.protocol_version == REV
    assert c.state is OPERATING and c.protocol_version == REV and c.pending == {}
    return c


def wire(msg: rpc.Message) -> dict[str, Any]:
    obj = json.loads(rpc.serialize(msg))
    assert isinstance(obj, dict)
    return obj


# ---------------------------------------------------------------- (a) the envelope


@PROPERTY_SETTINGS
@given(
    client_caps=client_capabilities,
    probed_caps=server_capabilities,
    serving_caps=server_capabilities,
    requests=st.lists(
        st.tuples(st.sampled_from(METHODS), request_params(), progress_tokens, st.none() | st.sampled_from(LOG_LEVELS)),
        min_size=1,
        max_size=6,
    ),
)
def test_every_request_carries_a_valid_envelope(
    client_caps: dict[str, Any],
    probed_caps: dict[str, Any],
    serving_caps: dict[str, Any],
    requests: list[tuple[str, dict[str, Any] | None, str | int | None, str | None]],
) -> None:
    c = discovered(client_caps, probed_caps)
    s = server(serving_caps)
    for method, params, token, level in requests:
        c.request_log_level = level
        gate = GATES[method]
        original = copy.deepcopy(params)
        if gate is not None and gate not in probed_caps:
            # The probed server did not advertise it: refused locally, nothing sent.
            with pytest.raises(LocalProtocolError, match=gate):
                c.send_request(method, params, progress_token=token)
            assert not c.has_output and c.pending == {}
            continue
        request_id = c.send_request(method, params, progress_token=token)
        assert params == original  # the caller's dict is not mutated
        [msg] = c.outgoing()
        sent = wire(msg)
        assert sent["id"] == request_id and sent["method"] == method
        meta = sent["params"]["_meta"]
        assert meta[PV] == REV
        assert meta[CC] == client_caps
        assert meta[CI] == CLIENT_INFO
        assert meta.get(LL, MISSING) == (MISSING if level is None else level)
        # The caller's other params and _meta extras travel unchanged; the envelope wins.
        assert {k: v for k, v in sent["params"].items() if k != "_meta"} == {
            k: v for k, v in (original or {}).items() if k != "_meta"
        }
        extras = (original or {}).get("_meta")
        extras = extras if isinstance(extras, dict) else {}
        for key, value in extras.items():
            if key not in ENVELOPE_KEYS and not (key == "progressToken" and token is not None):
                assert meta[key] == value
        if token is not None:
            assert meta["progressToken"] == token

        events = s.receive_bytes(rpc.serialize(msg))
        if gate is not None and gate not in serving_caps:
            [answer] = s.outgoing()
            assert isinstance(answer, rpc.ErrorResponse) and answer.id == request_id
            assert answer.error.code == rpc.METHOD_NOT_FOUND
            assert [(type(e), getattr(e, "kind", None)) for e in events] == [
                (ProtocolIssue, "capability-not-advertised")
            ]
            assert not s.awaiting_answer(request_id)
            [back] = c.receive_bytes(rpc.serialize(answer))
            assert isinstance(back, ErrorReceived) and back.error.code == rpc.METHOD_NOT_FOUND
        else:
            [event] = events
            assert isinstance(event, RequestReceived)
            assert (event.id, event.method, event.params) == (request_id, method, sent["params"])
            assert event.envelope == sl.Envelope(REV, client_caps, CLIENT_INFO, level)
            assert s.awaiting_answer(request_id) and not s.has_output
            s.send_response(request_id, {"echo": method})
            [back] = pump(s, c)
            assert isinstance(back, ResponseReceived) and back.id == request_id
            assert back.result["resultType"] == "complete"
            assert back.result["_meta"][SI] == SERVER_INFO
        assert c.pending == {}


def test_caller_meta_cannot_forge_or_leave_envelope_keys() -> None:
    """Regression: an envelope key in the caller's _meta (or left by a previous send, as in
    ``InputRequired.params``) lingered when the new envelope omits it (``logLevel``)."""
    c = discovered({})
    c.send_request("tools/list", {"_meta": {LL: "debug", PV: "1999-01-01", CC: {"sampling": {}}, "x": 1}})
    [msg] = c.outgoing()
    assert isinstance(msg, rpc.Request) and msg.params is not None
    assert msg.params["_meta"] == {PV: REV, CC: {}, CI: CLIENT_INFO, "x": 1}
    c.request_log_level = "debug"
    request_id = c.send_request("tools/call", {"name": "t"})
    c.outgoing()
    c.request_log_level = None
    [asked] = c.receive_message(rpc.Response(request_id, {"resultType": "input_required", "requestState": "s"}))
    assert isinstance(asked, InputRequired) and asked.params["_meta"][LL] == "debug"
    c.send_request("tools/call", sl.retry_params(asked.params, None, asked.request_state))
    [retry] = c.outgoing()
    assert isinstance(retry, rpc.Request) and retry.params is not None and LL not in retry.params["_meta"]


@pytest.mark.parametrize("meta", [None, 5, "x", [1]])
def test_progress_token_with_a_meta_that_is_not_an_object(meta: Any) -> None:
    """Regression: ``send_request(params={"_meta": None}, progress_token=...)`` raised TypeError."""
    c = discovered({})
    c.send_request("tools/list", {"_meta": meta}, progress_token="p")
    [msg] = c.outgoing()
    assert isinstance(msg, rpc.Request) and msg.params is not None
    assert msg.params["_meta"]["progressToken"] == "p"


# ---------------------------------------------------------------- (b) results of every kind


@PROPERTY_SETTINGS
@given(client_caps=client_capabilities, data=st.data())
def test_every_result_ends_its_request_exactly_once(client_caps: dict[str, Any], data: st.DataObject) -> None:
    methods = st.sampled_from(MRTR) | st.sampled_from(METHODS)
    answers = data.draw(
        st.lists(st.tuples(methods, result_bodies(client_caps)), min_size=1, max_size=6), label="answers"
    )
    c = discovered(client_caps)
    ids = [c.send_request(method, {"name": "x"} if method in MRTR else None) for method, _ in answers]
    sent = {msg.id: msg for msg in c.outgoing() if isinstance(msg, rpc.Request)}
    assert sorted(sent) == sorted(ids) and len(set(ids)) == len(ids)
    order = data.draw(st.permutations(range(len(answers))), label="answer order")
    ends: dict[rpc.RequestId, list[Any]] = {i: [] for i in ids}
    for index in order:
        method, body = answers[index]
        raw = rpc.dumps({"jsonrpc": "2.0", "id": ids[index], "result": body})
        for event in c.receive_bytes(raw):  # never raises
            if isinstance(event, (ResponseReceived, InputRequired, InvalidAnswer, ErrorReceived)):
                ends[event.id].append(event)
            else:
                assert isinstance(event, ProtocolIssue), event
        assert ids[index] not in c.pending
    assert c.pending == {}  # no lost waiter
    for (method, body), request_id in zip(answers, ids):
        [end] = ends[request_id]
        want = expected_kind(method, body, client_caps)
        label(f"ends with {want.__name__}")
        assert type(end) is want, (method, body, end)
        assert isinstance(end, (ResponseReceived, InputRequired, InvalidAnswer, ErrorReceived))
        assert end.method == method
        if isinstance(end, InputRequired):
            requests = body.get("inputRequests")
            assert end.input_requests == (requests if requests is not None else {})
            assert end.request_state == body.get("requestState")
            assert end.params == sent[request_id].params
        elif isinstance(end, ResponseReceived):
            assert end.result == body
    assert not c.has_output  # a client answers nothing to a bad result


# ---------------------------------------------------------------- (c) multi-round-trip exchanges


@st.composite
def mrtr_rounds(draw: st.DrawFn, client_caps: dict[str, Any]) -> list[tuple[dict[str, Any] | None, str | None]]:
    """0..5 rounds of (inputRequests, requestState): only what the client declared, never both absent."""
    allowed = sorted(m for m, cap in INPUT_METHODS.items() if declares(client_caps, cap))
    rounds = []
    for _ in range(draw(st.integers(0, 5))):
        requests: dict[str, Any] | None = None
        asks = draw(st.booleans()) if allowed else draw(st.sampled_from([True] + [False] * 9))
        if asks:
            keys = draw(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=3))
            requests = {k: input_request(draw(st.sampled_from(allowed))) for k in keys} if allowed else {}
        state = draw(st.none() | st.text(max_size=60))
        if requests is None and state is None:
            state = draw(st.text(max_size=60))
        rounds.append((requests, state))
    return rounds


@PROPERTY_SETTINGS
@given(
    client_caps=client_capabilities,
    method=st.sampled_from(MRTR),
    arguments=st.dictionaries(texts, json_values, max_size=3),
    token=progress_tokens,
    final=st.dictionaries(texts.filter(lambda k: k not in ("resultType", "_meta")), json_values, max_size=3),
    data=st.data(),
)
def test_multi_round_trip_exchange(
    client_caps: dict[str, Any],
    method: str,
    arguments: dict[str, Any],
    token: str | int | None,
    final: dict[str, Any],
    data: st.DataObject,
) -> None:
    rounds = data.draw(mrtr_rounds(client_caps), label="rounds")
    c, s = client(client_caps), server(FULL_SERVER_CAPS)
    sent_ids: list[rpc.RequestId] = []

    def carry(src: Connection, dst: Connection) -> list[Any]:
        msgs = src.outgoing()
        if src is c:
            sent_ids.extend(m.id for m in msgs if isinstance(m, rpc.Request))
        events: list[Any] = []
        for msg in msgs:
            events.extend(dst.receive_bytes(rpc.serialize(msg)))
        return events

    c.discover()
    assert carry(c, s) == []
    [found] = carry(s, c)
    assert isinstance(found, Discovered)

    params = {"name": "t", "arguments": arguments} if method != "resources/read" else {"uri": "x://y"}
    request_id = c.send_request(method, params, progress_token=token)
    [received] = carry(c, s)
    assert isinstance(received, RequestReceived)
    envelope = received.envelope
    for requests, state in rounds:
        s.send_input_required(received.id, requests, state)
        [asked] = carry(s, c)
        assert isinstance(asked, InputRequired) and asked.id == request_id and asked.method == method
        assert asked.input_requests == (requests or {})
        assert asked.request_state == state
        responses = {key: input_response(req["method"]) for key, req in asked.input_requests.items()}
        request_id = c.send_request(method, sl.retry_params(asked.params, responses, asked.request_state))
        [received] = carry(c, s)
        assert isinstance(received, RequestReceived) and received.id == request_id
        assert received.envelope == envelope
        echoed = received.params.get("requestState", MISSING)
        assert echoed == (MISSING if state is None else state)  # byte for byte
        assert set(received.params.get("inputResponses", {})) == set(requests or {})
        assert received.params.get("inputResponses", {}) == {
            k: input_response(v["method"]) for k, v in (requests or {}).items()
        }
        # The original request, unchanged but for the MRTR members.
        assert {k: v for k, v in received.params.items() if k not in ("inputResponses", "requestState")} == (
            {**params, "_meta": received.params["_meta"]}
        )
    s.send_response(received.id, final)
    [done] = carry(s, c)
    assert isinstance(done, ResponseReceived) and done.id == request_id and done.method == method
    assert done.result == {"resultType": "complete", **final, "_meta": {SI: SERVER_INFO}}
    assert len(sent_ids) == len(set(sent_ids)) == len(rounds) + 2  # discover, the request, its retries
    assert c.pending == {} and not s.awaiting_answer(received.id)
    assert not c.has_output and not s.has_output


# ---------------------------------------------------------------- (d) a state machine


class StatelessClientMachine(RuleBasedStateMachine):
    """A discovered client under any mix of sends, answers, cancels, re-issues and stray ids."""

    def __init__(self) -> None:
        super().__init__()
        self.caps: dict[str, Any] = {"sampling": {}, "roots": {}}
        self.conn = discovered(self.caps)
        #: Our model: id -> method of the requests still waiting.
        self.waiting: dict[rpc.RequestId, str] = {}
        self.cancelled: set[rpc.RequestId] = set()
        self.finished: set[rpc.RequestId] = set()
        self.used_ids: set[rpc.RequestId] = {0}  # the discover probe

    @rule(method=st.sampled_from(METHODS), token=progress_tokens)
    def send(self, method: str, token: str | int | None) -> None:
        if token is not None and any(p.progress_token == token for p in self.conn.pending.values()):
            token = None
        request_id = self.conn.send_request(method, {"name": "n"}, progress_token=token)
        assert request_id not in self.used_ids
        self.used_ids.add(request_id)
        [msg] = self.conn.outgoing()
        assert wire(msg)["params"]["_meta"][PV] == REV
        self.waiting[request_id] = method

    @precondition(lambda self: self.waiting)
    @rule(data=st.data(), body=result_bodies())
    def answer(self, data: st.DataObject, body: Any) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.waiting, key=str)))
        method = self.waiting.pop(request_id)
        events = self.conn.receive_bytes(rpc.dumps({"jsonrpc": "2.0", "id": request_id, "result": body}))
        ends = [e for e in events if not isinstance(e, ProtocolIssue)]
        assert [type(e) for e in ends] == [expected_kind(method, body, self.caps)]
        self.finished.add(request_id)

    @precondition(lambda self: self.waiting)
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.waiting, key=str)))
        del self.waiting[request_id]
        self.conn.cancel(request_id, "changed my mind")
        [note] = self.conn.outgoing()
        assert isinstance(note, rpc.Notification) and note.method == "notifications/cancelled"
        self.cancelled.add(request_id)

    @precondition(lambda self: self.waiting)
    @rule(data=st.data())
    def reissue(self, data: st.DataObject) -> None:
        """The transport lost the stream: the same request goes out under a fresh id."""
        old = data.draw(st.sampled_from(sorted(self.waiting, key=str)))
        before = self.conn.pending[old]
        new = self.conn.reissue(old)
        assert new not in self.used_ids
        self.used_ids.add(new)
        [msg] = self.conn.outgoing()
        assert isinstance(msg, rpc.Request) and (msg.id, msg.method, msg.params) == (new, before.method, before.params)
        self.waiting[new] = self.waiting.pop(old)
        self.cancelled.add(old)  # its late answer is dropped like a cancelled one's

    @precondition(lambda self: self.cancelled)
    @rule(data=st.data(), body=result_bodies())
    def late_answer(self, data: st.DataObject, body: Any) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.cancelled, key=str)))
        self.cancelled.discard(request_id)
        dropped = self.conn.stats.late_responses_dropped
        events = self.conn.receive_bytes(rpc.dumps({"jsonrpc": "2.0", "id": request_id, "result": body}))
        # A late answer is dropped silently (a non-object one is still reported as malformed).
        assert all(isinstance(e, ProtocolIssue) for e in events), events
        if isinstance(body, dict):
            assert self.conn.stats.late_responses_dropped == dropped + 1
        self.finished.add(request_id)

    @rule(request_id=st.integers(10_000, 20_000) | st.text(min_size=1, max_size=5), body=result_bodies())
    def stray_answer(self, request_id: rpc.RequestId, body: Any) -> None:
        events = self.conn.receive_bytes(rpc.dumps({"jsonrpc": "2.0", "id": request_id, "result": body}))
        assert all(isinstance(e, ProtocolIssue) for e in events), events

    @invariant()
    def pending_table_matches_the_model(self) -> None:
        assert set(self.conn.pending) == set(self.waiting)
        assert self.conn.state is OPERATING and not self.conn.has_output


TestStatelessClientMachine = StatelessClientMachine.TestCase
TestStatelessClientMachine.settings = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
