"""The client in the 2026-07-28 stateless era, and the dual-era negotiation that picks it.

Fake servers speak 2026-07-28 by hand over ``memory_stream_pair`` (tests/fake_server.py's
``Peer``), so every byte on the wire is under the test's control; timed tests use
``autojump_clock``.  Covered: the ``server/discover`` probe and its fallbacks to ``initialize``
(error, silence, -32022), pinned revisions, multi-round-trip requests (InputRequiredResult
answered by the client's handlers, bounded rounds, the one deadline over the whole exchange),
cache hints (``ttlMs``, ``list_changed``), ``subscriptions/listen`` and the methods the era
removed.  A Hypothesis test plays random InputRequiredResult sequences.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest
import trio
import trio.testing
from fake_server import TEXT_OK, Json, Peer, RawWire, drain, memory_peer, serve_handshake, spawn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp import (
    ConnectError,
    Connection,
    Era,
    Handlers,
    Limits,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    RequestTimeout,
    Role,
    Timeouts,
    TransportClosed,
    open_client,
)
from trimcp import schema as s
from trimcp._sansio import events as ev
from trimcp._sansio import revisions
from trimcp._sansio.connection import stateless as sl
from trimcp._trio.client import ClientSession
from trimcp._trio.client.connect import CLIENT_INFO
from trimcp._trio.client.mrtr import answer_input_requests
from trimcp._trio.driver import SessionDriver

V26 = "2026-07-28"
SERVER_INFO = {"name": "fake-2026", "version": "1.0"}
CAPABILITIES: Json = {
    "tools": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "prompts": {"listChanged": True},
}
DISCOVER_RESULT: Json = {
    "resultType": "complete",
    "supportedVersions": [V26, "2025-11-25"],
    "capabilities": CAPABILITIES,
    "instructions": "be kind",
    "ttlMs": 60_000,
    "cacheScope": "public",
    "_meta": {sl.SERVER_INFO_KEY: SERVER_INFO},
}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
SAMPLE = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
        "maxTokens": 5,
    },
}
ROOTS = {"method": "roots/list"}
INPUT_REQUESTS = {"elicitation/create": ELICIT, "sampling/createMessage": SAMPLE, "roots/list": ROOTS}


def complete(result: Json) -> Json:
    return {"resultType": "complete", **result}


def input_required(requests: Json | None = None, state: str | None = None) -> Json:
    out: Json = {"resultType": "input_required"}
    if requests is not None:
        out["inputRequests"] = requests
    if state is not None:
        out["requestState"] = state
    return out


def without_token(meta: Json) -> Json:
    return {k: v for k, v in meta.items() if k != "progressToken"}


def meta(msg: Json) -> Json:
    got = msg["params"]["_meta"]
    assert isinstance(got, dict)
    return got


class Recorder:
    """Client callbacks that record what they were asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []

    async def sample(self, params: s.CreateMessageRequestParams) -> s.CreateMessageResult:
        self.asked.append(("sampling", params))
        return s.CreateMessageResult(role="assistant", content=s.TextContent(text="4"), model="m")

    async def elicit(self, params: s.ElicitRequestParams) -> s.ElicitResult:
        self.asked.append(("elicitation", params))
        return s.ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self) -> list[s.Root]:
        self.asked.append(("roots", None))
        return [s.Root(uri="file:///work", name="work")]

    def kwargs(self) -> dict[str, Any]:
        return {"handlers": Handlers(sampling=self.sample, elicitation=self.elicit, roots=self.roots)}


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}
ELICITED = {"action": "accept", "content": {"name": "Ada"}}
ROOTS_LISTED = {"roots": [{"uri": "file:///work", "name": "work"}]}


async def serve_discover(peer: Peer, result: Json | None = None) -> Json:
    probe = await peer.expect("server/discover")
    await peer.reply(probe, DISCOVER_RESULT if result is None else result)
    return probe


@asynccontextmanager
async def stateless(
    *, discover: Json | None = None, max_buffer: int = 64, **kwargs: Any
) -> AsyncIterator[tuple[ClientSession, Peer]]:
    """A client connected to a fake 2026-07-28 server that answered the probe."""
    stream, peer = memory_peer(max_buffer)
    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            peer.probe = await serve_discover(peer, discover)

        nursery.start_soon(serve)
        async with open_client(stream, **kwargs) as client:
            yield client, peer


async def sync(client: ClientSession, peer: Peer) -> Json:
    """A raw tools/list the peer answers: everything it sent before has been handled."""
    async with trio.open_nursery() as nursery:
        call = spawn(nursery, client.request, "tools/list")
        req = await peer.expect("tools/list")
        await peer.reply(req, complete({"tools": []}))
        await call.result()
    return req


# --------------------------------------------------------------------------- negotiation


async def test_probe_discovers_a_stateless_server_and_requests_carry_the_envelope(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless(handlers=Handlers(roots=[])) as (client, peer):
            assert peer.probe is not None
            assert meta(peer.probe) == {
                sl.PROTOCOL_VERSION_KEY: V26,
                sl.CLIENT_CAPABILITIES_KEY: {"roots": {"listChanged": True}},
                sl.CLIENT_INFO_KEY: CLIENT_INFO,
            }
            assert client.era is Era.STATELESS and client.protocol_version == V26
            assert client.server_info == SERVER_INFO
            assert client.server_capabilities == CAPABILITIES
            assert client.instructions == "be kind"
            assert client.supported_versions == (V26, "2025-11-25")
            assert client.discover_result == DISCOVER_RESULT
            assert client.driver.initialized.is_set()
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "echo", {"x": 1})
                req = await peer.expect("tools/call")  # no notifications/initialized came first
                assert req["params"]["name"] == "echo" and req["params"]["arguments"] == {"x": 1}
                # The same envelope as the probe; a tools/call also asks for progress (a tool
                # that reports progress keeps its deadline moving).
                call_meta = dict(meta(req))
                assert isinstance(call_meta.pop("progressToken"), str)
                assert call_meta == meta(peer.probe)
                await peer.reply(req, complete(TEXT_OK))
                assert (await call.result()).content == [s.TextContent(text="ok")]
            client.log_level = "warning"
            assert client.log_level == "warning"
            assert meta(await sync(client, peer))[sl.LOG_LEVEL_KEY] == "warning"
            client.log_level = None
            assert sl.LOG_LEVEL_KEY not in meta(await sync(client, peer))
            with pytest.raises(LocalProtocolError, match="unknown log level 'loud'"):
                client.log_level = "loud"
            assert list(client.driver.issues) == []


async def test_methods_the_stateless_era_removed_are_refused_locally(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless() as (client, peer):
            with pytest.raises(LocalProtocolError, match="ping does not exist in the stateless era"):
                await client.ping()
            with pytest.raises(LocalProtocolError, match=r"logging/setLevel .* set ClientSession.log_level"):
                await client.set_logging_level("info")
            with pytest.raises(LocalProtocolError, match=r"resources/subscribe .*listen\(resource_uris"):
                await client.subscribe_resource("file:///a")
            with pytest.raises(LocalProtocolError, match="resources/unsubscribe does not exist"):
                await client.unsubscribe_resource("file:///a")
            # The Connection refuses them too, whoever asks.
            with pytest.raises(LocalProtocolError, match="can't send 'ping' in revision 2026-07-28"):
                await client.driver.request("ping")
            await sync(client, peer)  # nothing reached the wire


@pytest.mark.parametrize("code", [-32601, -32602, -32600, -32603, -32000])
async def test_a_probe_error_means_a_handshake_era_server(autojump_clock: Any, code: int) -> None:
    # Spec (stdio, Backward Compatibility): the fallback is not keyed to one error code.
    with trio.fail_after(10):
        stream, peer = memory_peer()
        served = trio.Event()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                probe = await peer.expect("server/discover")
                await peer.send({"id": probe["id"], "error": {"code": code, "message": "no"}})
                peer.initialize = await serve_handshake(peer, {"tools": {}})
                served.set()

            nursery.start_soon(serve)
            async with open_client(stream) as client:
                await served.wait()
                assert client.era is Era.HANDSHAKE
                assert client.protocol_version == revisions.LATEST_HANDSHAKE
                assert peer.initialize["params"]["protocolVersion"] == revisions.LATEST_HANDSHAKE
                assert client.supported_versions is None and client.discover_result is None
                with pytest.raises(LocalProtocolError, match="call set_logging_level"):
                    client.log_level = "info"
                with pytest.raises(LocalProtocolError, match="stateless era"):
                    async with client.listen(tools_list_changed=True):
                        pytest.fail("listened in the handshake era")


async def test_a_silent_probe_is_abandoned_then_initialize_and_the_late_answer_is_dropped(
    autojump_clock: Any,
) -> None:
    with trio.fail_after(100):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                peer.probe = await peer.expect("server/discover")
                start = trio.current_time()
                peer.initialize = await serve_handshake(peer, {"tools": {}})
                assert trio.current_time() - start == pytest.approx(2)

            nursery.start_soon(serve)
            async with open_client(stream, timeouts=Timeouts(probe=2)) as client:
                assert client.era is Era.HANDSHAKE
                assert peer.probe is not None
                # The answer finally comes: too late, dropped and counted, not an issue.
                await peer.reply(peer.probe, DISCOVER_RESULT)
                async with trio.open_nursery() as inner:
                    ping = spawn(inner, client.ping)
                    await peer.reply(await peer.expect("ping"), {})
                    await ping.result()
                assert client.era is Era.HANDSHAKE
                assert client.connection.stats.late_responses_dropped == 1
                assert list(client.driver.issues) == []


async def test_a_stateless_server_that_missed_the_probe_deadline_is_probed_again(autojump_clock: Any) -> None:
    # A server still starting misses the probe's deadline; the client falls back to
    # initialize, which a stateless-only server refuses with -32022 naming its revision:
    # the client probes again and gets a stateless session, not a failed connect.
    with trio.fail_after(100):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                late = await peer.expect("server/discover")
                init = await peer.expect("initialize")
                await peer.send(
                    {
                        "id": init["id"],
                        "error": {
                            "code": -32022,
                            "message": "Unsupported protocol version",
                            "data": {"supported": [V26], "requested": init["params"]["protocolVersion"]},
                        },
                    }
                )
                await peer.reply(late, DISCOVER_RESULT)  # the first answer, far too late: dropped
                peer.probe = await peer.expect("server/discover")
                await peer.reply(peer.probe, DISCOVER_RESULT)

            nursery.start_soon(serve)
            async with open_client(stream, timeouts=Timeouts(probe=2)) as client:
                assert client.era is Era.STATELESS and client.protocol_version == V26
                assert client.discover_result == DISCOVER_RESULT


async def test_a_pinned_handshake_revision_is_never_probed_after_a_32022(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                init = await peer.expect("initialize")
                await peer.send(
                    {
                        "id": init["id"],
                        "error": {
                            "code": -32022,
                            "message": "Unsupported protocol version",
                            "data": {"supported": [V26]},
                        },
                    }
                )

            nursery.start_soon(serve)
            with pytest.raises(ConnectError, match="initialize failed"):
                async with open_client(stream, revision="2025-11-25"):
                    pytest.fail("connected")


async def test_probe_timeout_is_bounded_by_the_connect_timeout(autojump_clock: Any) -> None:
    got: list[Json] = []
    with trio.fail_after(100):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain, peer, got)
            start = trio.current_time()
            with pytest.raises(ConnectError, match="no answer to server/discover within 3 s"):
                async with open_client(stream, timeouts=Timeouts(connect=3, probe=5)):
                    pytest.fail("connected to a silent server")
            assert trio.current_time() - start == pytest.approx(3)
    assert [m["method"] for m in got] == ["server/discover"]


async def test_a_server_dying_during_the_probe_fails_the_connect_at_once(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                await peer.expect("server/discover")
                await peer.aclose()

            nursery.start_soon(serve)
            start = trio.current_time()
            with pytest.raises(ConnectError, match="closed") as info:
                async with open_client(stream):
                    pytest.fail("connected to a dead server")
            assert trio.current_time() == start  # not after the 5 s probe timeout
        # The transport's own account, as it is (no "server/discover failed: the session is
        # closed: ..." around it); the request's TransportClosed is the cause.
        assert isinstance(info.value.__cause__, TransportClosed)
        assert re.fullmatch(r"peer of in-memory stream #\w+ closed", str(info.value)), str(info.value)


async def test_unsupported_version_naming_a_handshake_revision_initializes_with_it(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                probe = await peer.expect("server/discover")
                await peer.send(
                    {
                        "id": probe["id"],
                        "error": {
                            "code": -32022,
                            "message": "Unsupported protocol version",
                            "data": {"supported": ["2025-06-18", "1999-01-01"], "requested": V26},
                        },
                    }
                )
                peer.initialize = await serve_handshake(peer, {})
                served.set()

            served = trio.Event()
            nursery.start_soon(serve)
            async with open_client(stream) as client:
                await served.wait()
                assert peer.initialize["params"]["protocolVersion"] == "2025-06-18"
                assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-06-18"


async def test_unsupported_version_with_nothing_in_common_fails_the_connect(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                probe = await peer.expect("server/discover")
                await peer.send(
                    {
                        "id": probe["id"],
                        "error": {
                            "code": -32022,
                            "message": "Unsupported protocol version",
                            "data": {"supported": ["2099-01-01"], "requested": V26},
                        },
                    }
                )

            nursery.start_soon(serve)
            with pytest.raises(ConnectError, match=r"server/discover refused: \[-32022\]"):
                async with open_client(stream):
                    pytest.fail("connected without a common revision")
            with pytest.raises(TransportClosed):
                await peer.recv()  # and the wire is closed


async def test_unsupported_version_retries_the_probe_with_a_named_stateless_revision(
    autojump_clock: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Only one stateless revision exists yet: invent a newer one the server does not speak.
    newer = attrs.evolve(revisions.REV_2026_07_28, name="2099-01-01")
    monkeypatch.setitem(revisions.REVISIONS, "2099-01-01", newer)
    with trio.fail_after(10):
        stream, peer = memory_peer()
        conn = Connection(Role.CLIENT, info=CLIENT_INFO, supported_versions=("2099-01-01", V26, "2025-11-25"))
        driver = SessionDriver(conn, stream)
        async with trio.open_nursery() as nursery:
            await nursery.start(driver.run)
            probe = spawn(nursery, driver.discover)
            first = await peer.expect("server/discover")
            assert meta(first)[sl.PROTOCOL_VERSION_KEY] == "2099-01-01"
            await peer.send(
                {
                    "id": first["id"],
                    "error": {
                        "code": -32022,
                        "message": "Unsupported protocol version",
                        "data": {"supported": [V26, "2025-11-25"], "requested": "2099-01-01"},
                    },
                }
            )
            second = await serve_discover(peer)
            assert meta(second)[sl.PROTOCOL_VERSION_KEY] == V26 and second["id"] != first["id"]
            outcome = await probe.result()
            assert isinstance(outcome, ev.Discovered) and outcome.protocol_version == V26
            assert conn.protocol_version == V26 and driver.handshake == outcome
            await driver.aclose()


@pytest.mark.parametrize(
    "answer",
    [
        {"result": {}},
        {"result": {"supportedVersions": V26, "capabilities": {}}},
        {"result": {"supportedVersions": [V26], "capabilities": []}},
        {"result": {"resultType": "input_required", "supportedVersions": [V26], "capabilities": {}}},
        {"result": "not an object"},
    ],
    ids=["empty", "versions-not-a-list", "capabilities-not-an-object", "not-complete", "malformed"],
)
async def test_a_garbage_discover_result_fails_the_connect(autojump_clock: Any, answer: Json) -> None:
    with trio.fail_after(10):
        wire = RawWire()  # a peer that can send what is no JSON-RPC message
        stream, peer = wire, wire.peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                probe = await peer.expect("server/discover")
                await peer.send({"id": probe["id"], **answer})

            nursery.start_soon(serve)
            start = trio.current_time()
            with pytest.raises(ConnectError, match="server/discover failed: invalid"):
                async with open_client(stream):
                    pytest.fail("connected on a garbage DiscoverResult")
            assert trio.current_time() == start  # at once: no timeout was needed
            with pytest.raises(TransportClosed):
                await peer.recv()  # no initialize: the wire was closed


async def test_pinned_stateless_revision_refuses_a_handshake_era_server(autojump_clock: Any) -> None:
    got: list[Json] = []
    with trio.fail_after(10):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                probe = await peer.expect("server/discover")
                await peer.send({"id": probe["id"], "error": {"code": -32601, "message": "Method not found"}})
                await drain(peer, got)

            nursery.start_soon(serve)
            with pytest.raises(ConnectError, match="speaks only the handshake era.*2026-07-28 was pinned"):
                async with open_client(stream, revision=V26):
                    pytest.fail("connected to a legacy server with 2026-07-28 pinned")
    assert got == []  # no initialize


async def test_pinned_stateless_revision_waits_the_whole_connect_timeout(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        stream, peer = memory_peer()
        got: list[Json] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain, peer, got)
            start = trio.current_time()
            with pytest.raises(ConnectError, match="no answer to server/discover within 30.0 s"):
                async with open_client(stream, revision=V26):
                    pytest.fail("connected to a silent server")
            assert trio.current_time() - start == pytest.approx(30)
    assert [m["method"] for m in got] == ["server/discover"]


async def test_pinned_stateless_revision_against_a_stateless_server(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless(revision=V26) as (client, peer):
            assert client.era is Era.STATELESS
            assert peer.probe is not None and meta(peer.probe)[sl.PROTOCOL_VERSION_KEY] == V26


async def test_pinned_handshake_revision_never_probes(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        stream, peer = memory_peer()
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                peer.initialize = await peer.expect("initialize")  # the very first message
                await peer.reply(
                    peer.initialize,
                    {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "serverInfo": {"name": "old"},
                    },
                )
                await peer.expect("notifications/initialized")

            nursery.start_soon(serve)
            async with open_client(stream, revision="2025-06-18") as client:
                assert client.era is Era.HANDSHAKE
                assert client.connection.supported_versions == ("2025-06-18",)


# --------------------------------------------------------------------------- multi round-trip requests


async def test_input_required_is_answered_by_the_handlers_and_the_request_retried(autojump_clock: Any) -> None:
    handlers = Recorder()
    with trio.fail_after(10):
        async with stateless(**handlers.kwargs()) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "book", {"when": "now"})
                first = await peer.expect("tools/call")
                assert "inputResponses" not in first["params"] and "requestState" not in first["params"]
                await peer.reply(
                    first,
                    input_required(
                        {"who": ELICIT, "llm": SAMPLE, "where": ROOTS},
                        state="opaque\u2603 state==",
                    ),
                )
                retry = await peer.expect("tools/call")
                await peer.reply(retry, complete(TEXT_OK))
                result = await call.result()
            assert result.content == [s.TextContent(text="ok")]
            assert retry["id"] != first["id"]
            assert retry["params"]["name"] == "book" and retry["params"]["arguments"] == {"when": "now"}
            assert retry["params"]["requestState"] == "opaque\u2603 state=="
            assert retry["params"]["inputResponses"] == {"who": ELICITED, "llm": SAMPLED, "where": ROOTS_LISTED}
            # The envelope again (each attempt has a progress token of its own).
            assert without_token(meta(retry)) == without_token(meta(first))
            assert meta(retry)["progressToken"] != meta(first)["progressToken"]
            # The handlers were called, in the server's order, with the requests' params.
            assert [kind for kind, _ in handlers.asked] == ["elicitation", "sampling", "roots"]
            elicited = handlers.asked[0][1]
            assert isinstance(elicited, s.ElicitRequestFormParams) and elicited.message == "Your name?"
            assert handlers.asked[1][1].max_tokens == 5
            assert client.connection.pending == {}
            assert list(client.driver.issues) == []


async def test_get_prompt_and_read_resource_take_input_too(autojump_clock: Any) -> None:
    handlers = Recorder()
    with trio.fail_after(10):
        async with stateless(**handlers.kwargs()) as (client, peer), trio.open_nursery() as nursery:
            call = spawn(nursery, client.get_prompt, "greet")
            req = await peer.expect("prompts/get")
            await peer.reply(req, input_required({"r": ROOTS}))
            retry = await peer.expect("prompts/get")
            assert retry["params"]["inputResponses"] == {"r": ROOTS_LISTED}
            await peer.reply(retry, complete({"messages": []}))
            assert (await call.result()).messages == []

            read = spawn(nursery, client.read_resource, "file:///x")
            req = await peer.expect("resources/read")
            await peer.reply(req, input_required({"s": SAMPLE}, "st"))
            retry = await peer.expect("resources/read")
            assert retry["params"]["uri"] == "file:///x"
            assert retry["params"]["inputResponses"] == {"s": SAMPLED}
            await peer.reply(retry, complete({"contents": []}))
            assert (await read.result()).contents == []


async def test_request_state_is_echoed_only_when_given(autojump_clock: Any) -> None:
    handlers = Recorder()
    with trio.fail_after(10):
        async with stateless(**handlers.kwargs()) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "t")
                req = await peer.expect("tools/call")
                await peer.reply(req, input_required({"r": ROOTS}))  # no requestState
                retry = await peer.expect("tools/call")
                assert "requestState" not in retry["params"]
                assert retry["params"]["inputResponses"] == {"r": ROOTS_LISTED}
                # State but no inputRequests: retry at once, with the state and no inputResponses.
                await peer.reply(retry, input_required(state="s2"))
                again = await peer.expect("tools/call")
                assert again["params"]["requestState"] == "s2"
                assert "inputResponses" not in again["params"]
                # A new round replaces, never accumulates, the previous answers and state.
                await peer.reply(again, input_required({"e": ELICIT}))
                last = await peer.expect("tools/call")
                assert "requestState" not in last["params"]
                assert last["params"]["inputResponses"] == {"e": ELICITED}
                await peer.reply(last, complete(TEXT_OK))
                await call.result()
            assert len({req["id"], retry["id"], again["id"], last["id"]}) == 4


async def test_a_server_asking_forever_fails_after_max_input_rounds(autojump_clock: Any) -> None:
    handlers = Recorder()
    with trio.fail_after(10):
        async with stateless(limits=Limits(max_input_rounds=3), **handlers.kwargs()) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "loop")
                for _ in range(4):  # the first attempt and three retries
                    req = await peer.expect("tools/call")
                    await peer.reply(req, input_required({"r": ROOTS}, "again"))
                with pytest.raises(RemoteProtocolError, match="kept asking for input after 3 rounds"):
                    await call.result()
            assert len(handlers.asked) == 3
            assert client.connection.pending == {}
            await sync(client, peer)  # no fifth attempt; the session goes on


@pytest.mark.parametrize(
    ("method", "answer", "message"),
    [
        ("tools/call", {"resultType": "partial", "content": []}, "unknown resultType 'partial'"),
        ("tools/call", {"resultType": 7}, "unknown resultType 7"),
        ("tools/call", {"resultType": "input_required"}, "must carry inputRequests or requestState"),
        ("tools/call", input_required({"x": {"method": "tools/list"}}), "not allowed there"),
        ("tools/call", input_required({"x": ELICIT}), "needs the elicitation capability"),
        ("tools/call", input_required({"x": ROOTS}, state=5), "requestState must be a string"),  # type: ignore[arg-type]
        ("tools/list", input_required({"x": ROOTS}), "tools/list may not be answered with an InputRequiredResult"),
    ],
)
async def test_invalid_results_fail_the_request(autojump_clock: Any, method: str, answer: Json, message: str) -> None:
    with trio.fail_after(10):
        async with stateless(handlers=Handlers(roots=[])) as (client, peer):  # roots declared, elicitation not
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.request, method, {"name": "x"} if method == "tools/call" else None)
                await peer.reply(await peer.expect(method), answer)
                with pytest.raises(RemoteProtocolError, match=f"invalid answer to {method}: .*{message}"):
                    await call.result()
            assert [issue.kind for issue in client.driver.issues] == ["invalid-result"]
            await sync(client, peer)  # nothing re-sent; the session goes on


async def test_an_input_request_without_a_handler_names_the_method(autojump_clock: Any) -> None:
    # open_client declares exactly what it has handlers for; a bare driver may not.
    with trio.fail_after(10):
        stream, peer = memory_peer()
        conn = Connection(Role.CLIENT, info=CLIENT_INFO, capabilities={"sampling": {}}, supported_versions=(V26,))
        driver = SessionDriver(conn, stream, answer_input=answer_input_requests)
        async with trio.open_nursery() as nursery:
            await nursery.start(driver.run)
            probe = spawn(nursery, driver.discover)
            await serve_discover(peer)
            assert isinstance(await probe.result(), ev.Discovered)
            call = spawn(nursery, driver.request, "tools/call", {"name": "t"})
            await peer.reply(await peer.expect("tools/call"), input_required({"k": SAMPLE}))
            missing = r"sampling/createMessage \(inputRequests\['k'\]\).*no handler"
            with pytest.raises(RemoteProtocolError, match=missing):
                await call.result()
            await driver.aclose()


async def test_input_request_params_that_do_not_fit_fail_the_request(autojump_clock: Any) -> None:
    handlers = Recorder()
    with trio.fail_after(10):
        async with stateless(**handlers.kwargs()) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "t")
                bad = {"method": "sampling/createMessage", "params": {"messages": "nope"}}
                await peer.reply(await peer.expect("tools/call"), input_required({"k": bad}))
                with pytest.raises(RemoteProtocolError, match=r"could not answer inputRequests\['k'\] \(sampling"):
                    await call.result()
            assert handlers.asked == []
            await sync(client, peer)


async def test_one_deadline_covers_the_whole_exchange(autojump_clock: Any) -> None:
    async def slow_roots() -> list[s.Root]:
        await trio.sleep(3)
        return []

    with trio.fail_after(100):
        async with stateless(timeouts=Timeouts(request=10), handlers=Handlers(roots=slow_roots)) as (client, peer):
            async with trio.open_nursery() as nursery:
                start = trio.current_time()
                call = spawn(nursery, client.call_tool, "t")
                first = await peer.expect("tools/call")
                await trio.sleep(4)
                await peer.reply(first, input_required({"r": ROOTS}))
                retry = await peer.expect("tools/call")
                assert trio.current_time() - start == pytest.approx(7)  # 4 s server + 3 s handler
                note = await peer.expect("notifications/cancelled")  # the retry is what is cancelled
                assert trio.current_time() - start == pytest.approx(10)
                assert note["params"]["requestId"] == retry["id"]
                with pytest.raises(RequestTimeout, match="tools/call got no answer within 10 s"):
                    await call.result()

                # The deadline can also fall while the handlers run: nothing is pending then.
                start = trio.current_time()
                call = spawn(nursery, client.call_tool, "t", timeout=2)
                await peer.reply(await peer.expect("tools/call"), input_required({"r": ROOTS}))
                with pytest.raises(RequestTimeout, match="within 2 s .while answering input requests"):
                    await call.result()
                assert trio.current_time() - start == pytest.approx(2)
            assert client.connection.pending == {}
            await sync(client, peer)  # no cancellation went out for the second call


async def test_each_attempt_has_its_own_progress_token(autojump_clock: Any) -> None:
    progress: list[ev.ProgressReceived] = []
    with trio.fail_after(10):
        async with stateless(handlers=Handlers(roots=[])) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "t", on_progress=progress.append)
                first = await peer.expect("tools/call")
                token1 = meta(first)["progressToken"]
                await peer.notify("notifications/progress", {"progressToken": token1, "progress": 1})
                await peer.reply(first, input_required({"r": ROOTS}))
                retry = await peer.expect("tools/call")
                token2 = meta(retry)["progressToken"]
                assert token2 != token1
                await peer.notify("notifications/progress", {"progressToken": token2, "progress": 1})
                await peer.reply(retry, complete(TEXT_OK))
                await call.result()
            assert [(p.token, p.request_id) for p in progress] == [(token1, first["id"]), (token2, retry["id"])]


async def test_caller_cancellation_during_a_retry_cancels_it_on_the_wire(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless(handlers=Handlers(roots=[])) as (client, peer):
            scope = trio.CancelScope()

            async def caller() -> None:
                with scope:
                    await client.call_tool("t")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(caller)
                await peer.reply(await peer.expect("tools/call"), input_required({"r": ROOTS}))
                retry = await peer.expect("tools/call")
                scope.cancel()
                note = await peer.expect("notifications/cancelled")
            assert note["params"]["requestId"] == retry["id"]
            assert client.connection.pending == {}


# --------------------------------------------------------------------------- cache hints


def _tools(*names: str, ttl: Any = None, cursor: str | None = None) -> Json:
    out: Json = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
    if ttl is not None:
        out["ttlMs"] = ttl
    if cursor is not None:
        out["nextCursor"] = cursor
    return complete(out)


async def list_served(client: ClientSession, peer: Peer, *answers: Json, refresh: bool = False) -> list[str]:
    """``list_tools`` with the peer answering each page in turn from ``answers``."""
    async with trio.open_nursery() as nursery:
        listing = spawn(nursery, client.list_tools, refresh=refresh)
        for answer in answers:
            await peer.reply(await peer.expect("tools/list"), answer)
        return [t.name for t in await listing.result()]


async def test_list_results_are_cached_for_their_ttl(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        async with stateless() as (client, peer):
            assert await list_served(client, peer, _tools("a", ttl=10_000)) == ["a"]
            await trio.sleep(9.9)
            assert await list_served(client, peer) == ["a"]  # fresh: nothing asked
            await trio.sleep(0.1)
            assert await list_served(client, peer, _tools("b", ttl=10_000)) == ["b"]  # stale at 10 s
            assert await list_served(client, peer, _tools("c", ttl=10_000), refresh=True) == ["c"]
            assert await list_served(client, peer) == ["c"]  # the refreshed page was stored
            await sync(client, peer)


@pytest.mark.parametrize("ttl", [None, 0, -5])
async def test_no_usable_ttl_means_no_caching(autojump_clock: Any, ttl: Any) -> None:
    with trio.fail_after(10):
        async with stateless() as (client, peer):
            assert await list_served(client, peer, _tools("a", ttl=ttl)) == ["a"]
            assert await list_served(client, peer, _tools("b", ttl=ttl)) == ["b"]
            assert len(client.cache) == 0


async def test_list_changed_invalidates_the_cache(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless() as (client, peer):
            await list_served(client, peer, _tools("a", ttl=60_000))
            async with trio.open_nursery() as nursery:
                res = spawn(nursery, client.list_resources)
                await peer.reply(await peer.expect("resources/list"), complete({"resources": [], "ttlMs": 60_000}))
                await res.result()
                tpl = spawn(nursery, client.list_resource_templates)
                await peer.reply(
                    await peer.expect("resources/templates/list"), complete({"resourceTemplates": [], "ttlMs": 60_000})
                )
                await tpl.result()
                pr = spawn(nursery, client.list_prompts)
                await peer.reply(await peer.expect("prompts/list"), complete({"prompts": [], "ttlMs": 60_000}))
                await pr.result()
            assert len(client.cache) == 4
            await peer.notify("notifications/resources/list_changed")
            await sync(client, peer)
            assert len(client.cache) == 2  # resources and templates went, tools and prompts stay
            assert await list_served(client, peer) == ["a"]
            await peer.notify("notifications/tools/list_changed")
            await sync(client, peer)
            assert await list_served(client, peer, _tools("b", ttl=60_000)) == ["b"]
            await peer.notify("notifications/prompts/list_changed")
            await sync(client, peer)
            assert len(client.cache) == 1


async def test_a_page_fetched_across_a_list_changed_is_not_stored(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless() as (client, peer):
            async with trio.open_nursery() as nursery:
                listing = spawn(nursery, client.list_tools)
                req = await peer.expect("tools/list")
                await peer.notify("notifications/tools/list_changed")  # arrives before the answer
                await peer.reply(req, _tools("old", ttl=60_000))
                assert [t.name for t in await listing.result()] == ["old"]
            assert len(client.cache) == 0
            assert await list_served(client, peer, _tools("new", ttl=60_000)) == ["new"]


async def test_each_page_has_its_own_ttl(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        async with stateless() as (client, peer):
            pages = [_tools("a", ttl=60_000, cursor="p2"), _tools("b", ttl=1_000)]
            assert await list_served(client, peer, *pages) == ["a", "b"]
            await trio.sleep(2)
            async with trio.open_nursery() as nursery:
                listing = spawn(nursery, client.list_tools)
                req = await peer.expect("tools/list")  # only the expired second page is asked for
                assert req["params"]["cursor"] == "p2"
                await peer.reply(req, _tools("b2", ttl=1_000))
                assert [t.name for t in await listing.result()] == ["a", "b2"]


# --------------------------------------------------------------------------- subscriptions/listen


def tagged(sub_id: Any, params: Json | None = None) -> Json:
    return {**(params or {}), "_meta": {sl.SUBSCRIPTION_ID_KEY: sub_id}}


async def test_listen_yields_the_notifications_of_its_subscription(autojump_clock: Any) -> None:
    seen: list[str] = []
    with trio.fail_after(10):
        async with stateless(handlers=Handlers(notification=lambda m, p: seen.append(m))) as (client, peer):
            got: list[tuple[str, Json]] = []
            async with trio.open_nursery() as nursery:

                async def server() -> Json:
                    req = await peer.expect("subscriptions/listen")
                    await peer.notify(
                        "notifications/subscriptions/acknowledged",
                        tagged(
                            req["id"],
                            {
                                "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]},
                            },
                        ),
                    )
                    return req

                srv = spawn(nursery, server)
                async with client.listen(tools_list_changed=True, resource_uris=["file:///a"]) as sub:
                    req = await srv.result()
                    assert req["params"]["notifications"] == {
                        "toolsListChanged": True,
                        "resourceSubscriptions": ["file:///a"],
                    }
                    assert sl.PROTOCOL_VERSION_KEY in meta(req)
                    assert sub.id == req["id"]
                    assert sub.acknowledged == {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
                    await peer.notify("notifications/tools/list_changed", tagged(req["id"]))
                    await peer.notify("notifications/resources/updated", tagged("other", {"uri": "file:///b"}))
                    await peer.notify("notifications/message", {"level": "info", "data": "untagged"})
                    await peer.notify("notifications/resources/updated", tagged(req["id"], {"uri": "file:///a"}))
                    async for method, params in sub:
                        got.append((method, params))
                        if len(got) == 2:
                            break
                note = await peer.expect("notifications/cancelled")  # leaving the block ended it
                assert note["params"]["requestId"] == req["id"]
            assert [m for m, _ in got] == ["notifications/tools/list_changed", "notifications/resources/updated"]
            assert got[1][1]["uri"] == "file:///a"
            assert client.router.subscriptions == {}
            # The application's handler saw everything, tagged or not.
            assert seen == [
                "notifications/subscriptions/acknowledged",
                "notifications/tools/list_changed",
                "notifications/resources/updated",
                "notifications/message",
                "notifications/resources/updated",
            ]


async def test_a_server_ending_the_stream_ends_the_iteration(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless() as (client, peer):
            async with trio.open_nursery() as nursery:

                async def server() -> None:
                    req = await peer.expect("subscriptions/listen")
                    await peer.notify(
                        "notifications/subscriptions/acknowledged", tagged(req["id"], {"notifications": {}})
                    )
                    await peer.notify("notifications/prompts/list_changed", tagged(req["id"]))
                    await peer.reply(req, complete({"_meta": {sl.SUBSCRIPTION_ID_KEY: req["id"]}}))

                nursery.start_soon(server)
                async with client.listen(prompts_list_changed=True, resources_list_changed=True) as sub:
                    assert sub.acknowledged == {}  # the server honours none of it
                    got = [method async for method, _ in sub]
                    assert sub.ended and sub.error is None and sub.result is not None
            assert got == ["notifications/prompts/list_changed"]
            await sync(client, peer)  # nothing cancelled: the request was answered


async def test_listen_refused_or_unacknowledged(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        async with stateless(timeouts=Timeouts(request=5)) as (client, peer):
            async with trio.open_nursery() as nursery:

                async def refuse() -> None:
                    req = await peer.expect("subscriptions/listen")
                    await peer.send({"id": req["id"], "error": {"code": -32601, "message": "no streams"}})

                nursery.start_soon(refuse)
                with pytest.raises(McpError, match="no streams"):
                    async with client.listen(tools_list_changed=True):
                        pytest.fail("listened without a stream")

            async with trio.open_nursery() as nursery:
                start = trio.current_time()
                listening = spawn(nursery, peer.expect, "subscriptions/listen")
                with pytest.raises(RequestTimeout, match="not acknowledged within 5 s"):
                    async with client.listen(tools_list_changed=True):
                        pytest.fail("listened without an acknowledgment")
                assert trio.current_time() - start == pytest.approx(5)
                req = await listening.result()
                note = await peer.expect("notifications/cancelled")
                assert note["params"]["requestId"] == req["id"]
            with pytest.raises(LocalProtocolError, match="at least one kind"):
                async with client.listen():
                    pytest.fail("listened to nothing")


async def test_a_broken_stream_raises_from_the_iteration(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless() as (client, peer), trio.open_nursery() as nursery:

            async def server() -> None:
                req = await peer.expect("subscriptions/listen")
                await peer.notify(
                    "notifications/subscriptions/acknowledged",
                    tagged(req["id"], {"notifications": {"toolsListChanged": True}}),
                )
                await peer.aclose()

            nursery.start_soon(server)
            async with client.listen(tools_list_changed=True) as sub:
                with pytest.raises(TransportClosed):
                    async for _ in sub:
                        pytest.fail("a notification from nowhere")


async def test_a_slow_reader_loses_notifications_not_the_session(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with stateless() as (client, peer), trio.open_nursery() as nursery:

            async def server() -> Json:
                req = await peer.expect("subscriptions/listen")
                await peer.notify(
                    "notifications/subscriptions/acknowledged",
                    tagged(req["id"], {"notifications": {"toolsListChanged": True}}),
                )
                return req

            srv = spawn(nursery, server)
            async with client.listen(tools_list_changed=True, max_buffer=2) as sub:
                req = await srv.result()
                for _ in range(5):
                    await peer.notify("notifications/tools/list_changed", tagged(req["id"]))
                await sync(client, peer)  # the reader task was never blocked
                assert sub.dropped == 3
            await peer.expect("notifications/cancelled")


# --------------------------------------------------------------------------- random MRTR sequences

_METHODS = sorted(INPUT_REQUESTS)
_ANSWERS = {"elicitation/create": ELICITED, "sampling/createMessage": SAMPLED, "roots/list": ROOTS_LISTED}


@st.composite
def _rounds(draw: st.DrawFn) -> list[tuple[dict[str, str], str | None]]:
    """1..8 InputRequiredResults: ({key: method}, requestState), each carrying one of the two."""
    out = []
    for _ in range(draw(st.integers(1, 8))):
        requests = draw(st.dictionaries(st.text(min_size=1, max_size=6), st.sampled_from(_METHODS), max_size=4))
        state = draw(st.one_of(st.none(), st.text(max_size=30)))
        if not requests and state is None:
            state = ""
        out.append((requests, state))
    return out


async def _play(rounds: list[tuple[dict[str, str], str | None]]) -> None:
    handlers = Recorder()
    seen_ids: set[Any] = set()
    async with stateless(**handlers.kwargs()) as (client, peer):
        async with trio.open_nursery() as nursery:
            call = spawn(nursery, client.call_tool, "random", {"n": len(rounds)})
            req = await peer.expect("tools/call")
            previous: tuple[dict[str, str], str | None] | None = None
            for step in [*rounds, None]:
                assert req["id"] not in seen_ids
                seen_ids.add(req["id"])
                params = req["params"]
                assert params["name"] == "random" and params["arguments"] == {"n": len(rounds)}
                if previous is None:
                    assert "inputResponses" not in params and "requestState" not in params
                else:
                    asked, echoed = previous
                    if echoed is None:
                        assert "requestState" not in params
                    else:
                        assert params["requestState"] == echoed
                    expected = {key: _ANSWERS[method] for key, method in asked.items()}
                    assert params.get("inputResponses", {}) == expected
                if step is None:
                    break
                requests, state = previous = step
                await peer.reply(
                    req,
                    input_required(
                        {key: INPUT_REQUESTS[method] for key, method in requests.items()},
                        state,
                    ),
                )
                req = await peer.expect("tools/call")
            await peer.reply(req, complete({"content": [{"type": "text", "text": "final"}]}))
            result = await call.result()
        assert result.content == [s.TextContent(text="final")]
        assert len(handlers.asked) == sum(len(r) for r, _ in rounds)
        assert client.connection.pending == {}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rounds())
def test_random_input_required_sequences_end_with_the_final_result(
    rounds: list[tuple[dict[str, str], str | None]],
) -> None:
    async def main() -> None:
        with trio.fail_after(60):
            await _play(rounds)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
