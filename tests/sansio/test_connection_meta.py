"""What the Connection tells its driver besides events (issue 28, build step 1 tail).

Sans-IO: every queued message comes with its ``SendMeta`` from the Connection's own
bookkeeping (``outgoing_with_meta``), so no transport reads a payload; ``meta_for``
derives the same labels for hand-written messages.  ``request_lost`` decides what
follows a request its transport lost, so the driver only carries it out; the session's
size cap is checked in ``receive_payload``; ``stateless.InputRounds`` counts the rounds of a
multi-round-trip exchange and says when to give up.
"""

from __future__ import annotations

from typing import Any

import pytest

from trimcp._errors import InputRoundsExceeded, RemoteProtocolError, TransportError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection import stateless as sl
from trimcp._sansio.connection.core import Connection
from trimcp._sansio.connection.lifecycle import CLOSED, IDLE, OPERATING, Role
from trimcp._sansio.connection.send_meta import NO_META, SendMeta, meta_for
from trimcp._sansio.events import HandshakeFailed, LegacyServer, ProtocolIssue, RequestLost, RequestReissued

CLIENT_INFO = {"name": "c", "version": "1"}
SERVER_INFO = {"name": "s", "version": "1"}
STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"


def pump(src: Connection, dst: Connection) -> list[Any]:
    events: list[Any] = []
    for msg in src.outgoing():
        events += dst.receive_bytes(rpc.serialize(msg))
    return events


def handshake_pair() -> tuple[Connection, Connection]:
    caps = {"roots": {"listChanged": True}}
    c = Connection(Role.CLIENT, info=CLIENT_INFO, capabilities=caps, supported_versions=[HANDSHAKE])
    s = Connection(Role.SERVER, info=SERVER_INFO, capabilities={"tools": {}}, supported_versions=[HANDSHAKE])
    c.initialize()
    pump(c, s)
    pump(s, c)
    pump(c, s)
    assert c.state is OPERATING and s.state is OPERATING
    return c, s


def stateless_pair() -> tuple[Connection, Connection]:
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=[STATELESS])
    s = Connection(Role.SERVER, info=SERVER_INFO, capabilities={"tools": {}}, supported_versions=[STATELESS])
    c.discover()
    pump(c, s)
    pump(s, c)
    assert c.state is OPERATING
    return c, s


# ---------------------------------------------------------------- SendMeta from the Connection


def test_initialize_opens_a_session_under_no_revision() -> None:
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=[HANDSHAKE])
    c.initialize()
    [(message, meta)] = c.outgoing_with_meta()
    assert isinstance(message, rpc.Request) and message.method == "initialize"
    assert meta == SendMeta(None, opens_session=True)


def test_the_handshake_answer_and_what_follows_carry_the_agreed_revision() -> None:
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=[HANDSHAKE])
    s = Connection(Role.SERVER, info=SERVER_INFO, supported_versions=[HANDSHAKE])
    rid = c.initialize()
    pump(c, s)
    [(answer, answer_meta)] = s.outgoing_with_meta()
    assert isinstance(answer, rpc.Response) and answer_meta == SendMeta(HANDSHAKE, rid)
    c.receive_bytes(rpc.serialize(answer))
    [(note, note_meta)] = c.outgoing_with_meta()
    assert isinstance(note, rpc.Notification) and note.method == "notifications/initialized"
    assert note_meta == SendMeta(HANDSHAKE)


def test_requests_notifications_and_answers_are_labelled_from_the_connections_bookkeeping() -> None:
    c, s = handshake_pair()
    rid = c.send_request("tools/list")
    c.send_notification("notifications/roots/list_changed")
    assert [meta for _, meta in c.outgoing_with_meta()] == [SendMeta(HANDSHAKE), SendMeta(HANDSHAKE)]
    s.receive_bytes(rpc.serialize(rpc.Request(rid, "tools/list")))
    s.send_response(rid, {"tools": []})
    s.receive_bytes(rpc.serialize(rpc.Request("p", "ping")))  # answered by the Connection itself
    s.receive_bytes(rpc.serialize(rpc.Request("x", "prompts/list")))  # refused by it: no prompts
    metas = [meta for _, meta in s.outgoing_with_meta()]
    assert metas == [SendMeta(HANDSHAKE, rid), SendMeta(HANDSHAKE, "p"), SendMeta(HANDSHAKE, "x")]


def test_a_cancellation_names_the_request_it_cancels() -> None:
    c, _ = handshake_pair()
    rid = c.send_request("tools/list")
    c.outgoing()
    c.cancel(rid, "bored")
    [(note, meta)] = c.outgoing_with_meta()
    assert isinstance(note, rpc.Notification) and note.method == "notifications/cancelled"
    assert meta == SendMeta(HANDSHAKE, cancels=rid)
    # A transport finds the request by the meta alone: nothing else in it names one.
    assert meta._replace(cancels=None) == SendMeta(HANDSHAKE)


def test_stateless_requests_carry_their_envelopes_revision_and_a_reissue_names_the_old_id() -> None:
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=[STATELESS])
    c.discover()
    [(_probe, probe_meta)] = c.outgoing_with_meta()
    assert c.protocol_version is None and probe_meta == SendMeta(STATELESS)  # the probe's own revision
    c, _ = stateless_pair()
    old = c.send_request("tools/call", {"name": "t", "arguments": {}})
    [(_, meta)] = c.outgoing_with_meta()
    assert meta == SendMeta(STATELESS)
    new = c.reissue(old)
    [(again, again_meta)] = c.outgoing_with_meta()
    assert isinstance(again, rpc.Request) and again.id == new
    assert again_meta == SendMeta(STATELESS, reissue_of=old)


def test_outgoing_still_gives_the_bare_messages_and_drains_the_same_queue() -> None:
    c, _ = handshake_pair()
    c.send_request("tools/list")
    [message] = c.outgoing()
    assert isinstance(message, rpc.Request) and c.outgoing_with_meta() == [] and not c.has_output


# ---------------------------------------------------------------- meta_for (hand-written messages)


def test_meta_for_matches_what_the_connection_labels() -> None:
    c, _ = stateless_pair()
    c.send_request("tools/list")
    [(request, meta)] = c.outgoing_with_meta()
    assert meta_for(request) == meta  # the envelope names the revision
    c, _ = handshake_pair()
    rid = c.send_request("tools/list")
    c.outgoing()
    c.cancel(rid)
    [(note, meta)] = c.outgoing_with_meta()
    assert meta_for(note, HANDSHAKE) == meta
    init = rpc.Request(0, "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {}})
    assert meta_for(init) == SendMeta(opens_session=True)


def test_meta_for_reads_only_a_valid_cancelled_id_and_answers_name_their_request() -> None:
    for params in (None, {"requestId": True}, {"requestId": None}, {"reason": "x"}):
        assert meta_for(rpc.Notification("notifications/cancelled", params)) == NO_META
    assert meta_for(rpc.Notification("notifications/progress", {"requestId": 3})) == NO_META
    assert meta_for(rpc.Response(7, {}), HANDSHAKE) == SendMeta(HANDSHAKE, 7)
    error = rpc.ErrorResponse("e", rpc.ErrorObject(rpc.INVALID_PARAMS, "no"))
    assert meta_for(error) == SendMeta(None, "e")
    # A request naming its own revision is sent under it, whatever the caller says.
    enveloped = rpc.Request(1, "ping", {"_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS}})
    assert meta_for(enveloped, HANDSHAKE).protocol_version == STATELESS
    assert meta_for(rpc.Request(1, "ping"), HANDSHAKE) == SendMeta(HANDSHAKE)


# ---------------------------------------------------------------- request_lost: what follows a lost answer


LOST = TransportError("the exchange broke")


def test_a_lost_ordinary_request_fails_its_waiter_with_the_transports_error() -> None:
    c, _s = handshake_pair()
    rid = c.send_request("tools/list")
    c.outgoing()
    assert c.request_lost(rid, LOST) == [RequestLost(rid, "tools/list", LOST)]
    assert rid not in c.pending and c.state is OPERATING  # one request, not the session
    # Forgotten, not cancelled: nothing goes to the peer, and an answer after all is unknown.
    assert c.outgoing() == []
    late = c.receive_bytes(rpc.serialize(rpc.Response(rid, {"tools": []})))
    assert [type(e) for e in late] == [ProtocolIssue]
    assert c.request_lost(rid, LOST) == []  # no longer pending: nothing follows


def test_a_lost_request_the_transport_may_carry_again_is_reissued() -> None:
    c, _s = stateless_pair()
    old = c.send_request("tools/call", {"name": "t", "arguments": {}})
    c.outgoing()
    [event] = c.request_lost(old, LOST, may_reissue=True)
    assert isinstance(event, RequestReissued) and event.old_id == old and event.new_id in c.pending
    [(again, meta)] = c.outgoing_with_meta()
    assert isinstance(again, rpc.Request) and again.id == event.new_id and meta.reissue_of == old
    assert c.receive_bytes(rpc.serialize(rpc.Response(old, {"resultType": "complete"}))) == []  # late: dropped


def test_a_lost_probe_is_silence_the_server_is_handshake_era() -> None:
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=[STATELESS, HANDSHAKE])
    rid = c.discover()
    c.outgoing()
    [event] = c.request_lost(rid, LOST, may_reissue=True)  # never re-issued: it decides the era
    assert event == LegacyServer("server/discover failed: the exchange broke")
    assert c.state is IDLE and c.pending == {} and c.outgoing() == []
    c.initialize()  # the handshake may follow
    assert [m.method for m in c.outgoing()] == ["initialize"]  # type: ignore[union-attr]


def test_a_lost_initialize_fails_the_handshake_and_is_never_reissued() -> None:
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=[HANDSHAKE])
    rid = c.initialize()
    c.outgoing()
    assert c.request_lost(rid, LOST, may_reissue=True) == [HandshakeFailed("the exchange broke")]
    assert c.state is CLOSED and c.pending == {} and c.outgoing() == []


def test_an_unreadable_answer_to_the_probe_fails_the_negotiation_in_the_connection() -> None:
    # (The driver used to catch an ErrorReceived for the probe; the Connection never emits one.)
    c = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=[STATELESS])
    rid = c.discover()
    c.outgoing()
    events = c.receive_bytes(b'{"jsonrpc": "2.0", "id": %d, "error": {"code": "x"}}' % rid)
    assert [type(e) for e in events] == [ProtocolIssue, HandshakeFailed] and c.state is CLOSED
    assert "invalid answer to server/discover" in events[1].reason  # type: ignore[union-attr]


# ---------------------------------------------------------------- the session's size cap, checked once


def test_receive_payload_checks_the_sessions_cap_when_told_the_size() -> None:
    s = Connection(Role.SERVER, info=SERVER_INFO, max_message_size=16)
    text = rpc.serialize(rpc.Request(1, "ping"))
    assert len(text) > 16
    parsed = rpc.parse_payload(text)  # a transport's parse, under its own (larger) bound
    with pytest.raises(RemoteProtocolError, match=f"message of {len(text)} bytes exceeds the 16-byte limit") as info:
        s.receive_payload(parsed, len(text))
    assert info.value.reply_hint == rpc.ErrorObject(rpc.INVALID_REQUEST, "message too large").to_wire()
    assert s.outgoing() == []  # nothing of it was taken in
    assert s.receive_payload(parsed, 16) == []  # at the limit: taken (the size is the caller's word)
    assert s.outgoing() == [rpc.Response(1, {})]


# ---------------------------------------------------------------- multi-round-trip input: the rounds


def test_input_rounds_count_and_give_up_past_the_limit() -> None:
    rounds = sl.InputRounds("tools/call", {"name": "t"}, limit=2)
    rounds.asked(answerable=True)
    rounds.asked(answerable=True)
    with pytest.raises(InputRoundsExceeded, match="after 2 rounds") as info:
        rounds.asked(answerable=True)
    assert (info.value.method, info.value.rounds) == ("tools/call", 2)


def test_input_rounds_refuse_at_once_when_the_session_cannot_answer() -> None:
    rounds = sl.InputRounds("prompts/get", None, limit=8)
    with pytest.raises(RemoteProtocolError, match="cannot give") as info:
        rounds.asked(answerable=False)
    assert not isinstance(info.value, InputRoundsExceeded)


def test_each_retry_is_the_original_params_plus_this_rounds_answers() -> None:
    original = {"name": "t", "arguments": {"a": 1}}
    rounds = sl.InputRounds("tools/call", original, limit=8)
    first = rounds.retry({"q1": {"action": "decline"}}, "s1")
    assert first == {**original, "inputResponses": {"q1": {"action": "decline"}}, "requestState": "s1"}
    second = rounds.retry({"q2": {"roots": []}}, None)  # nothing of the first round lingers
    assert second == {**original, "inputResponses": {"q2": {"roots": []}}}
    assert original == {"name": "t", "arguments": {"a": 1}}  # not mutated
