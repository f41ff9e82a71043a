"""The client against bad peers: timeouts, cancellation, dying servers, malformed input.

Most tests run in-process against the scripted fake server of tests/fake_server.py, so every
byte on the wire is under the test's control.  Timed tests use ``autojump_clock``: a 30 s
connect timeout costs no wall time and elapsed virtual time can be asserted exactly.  The stdio
tests at the end run tiny real servers (tests/helpers/fault_server.py) in real time, to check
what a user sees when a process dies.  Server-to-client requests, progress and notifications
are in test_client_callbacks.py.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import peers
import pytest
import trio
from fake_server import (
    TEXT_OK,
    Json,
    Peer,
    connected,
    drain,
    expect_initialize,
    memory_peer,
    round_trip,
    spawn,
)
from repo_paths import HELPERS

from trimcp import (
    ConnectError,
    Connection,
    Handlers,
    Limits,
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeout,
    Role,
    StdioOptions,
    Timeouts,
    TransportClosed,
    open_client,
)
from trimcp import schema as s
from trimcp._sansio import jsonrpc
from trimcp._trio.client.connect import CLIENT_INFO
from trimcp._trio.driver import CANCEL_SEND_TIMEOUT, SessionDriver

HELPER = str(HELPERS / "fault_server.py")


# --------------------------------------------------------------------------- handshake


async def test_connect_timeout_when_initialize_is_never_answered(autojump_clock: Any) -> None:
    got: list[Json] = []
    with trio.fail_after(100):
        client_end, peer = memory_peer()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain, peer, got)
            start = trio.current_time()
            with pytest.raises(ConnectError, match="no answer to initialize within 30.0 s"):
                async with open_client(client_end):
                    pytest.fail("connected without an initialize answer")
            assert trio.current_time() - start == pytest.approx(30.0)
    # The wire was closed (drain returned); the unanswered probe was abandoned after
    # probe_timeout (no cancellation: the server may not even know the method) and
    # initialize was never cancelled.
    assert [m["method"] for m in got] == ["server/discover", "initialize"]


async def test_caller_cancelling_the_connect_never_cancels_initialize(autojump_clock: Any) -> None:
    got: list[Json] = []
    with trio.fail_after(100):
        client_end, peer = memory_peer()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain, peer, got)
            with trio.move_on_after(7) as scope:  # the probe gives up at 5 s, then initialize
                async with open_client(client_end):
                    pytest.fail("connected without an initialize answer")
    assert scope.cancelled_caught
    assert [m["method"] for m in got] == ["server/discover", "initialize"]


async def test_server_request_before_initialize_answer_is_rejected(autojump_clock: Any) -> None:
    async def sampling(params: s.CreateMessageRequestParams) -> Json:
        raise AssertionError("must not be called before the handshake")

    with trio.fail_after(10):
        client_end, peer = memory_peer()
        replies: list[Json] = []
        done = trio.Event()

        async def server() -> None:
            init = await expect_initialize(peer)
            await peer.send(
                {"id": "early", "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}
            )
            await peer.send({"id": "p", "method": "ping"})
            replies.extend([await peer.recv(), await peer.recv()])
            await peer.reply(
                init,
                {
                    "protocolVersion": init["params"]["protocolVersion"],
                    "capabilities": {},
                    "serverInfo": {"name": "fake"},
                },
            )
            await peer.expect("notifications/initialized")
            done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(server)
            async with open_client(client_end, handlers=Handlers(sampling=sampling)) as client:
                await done.wait()
                kinds = [issue.kind for issue in client.driver.issues]
    assert replies[0]["id"] == "early" and replies[0]["error"]["code"] == jsonrpc.INVALID_REQUEST
    assert replies[1] == {"jsonrpc": "2.0", "id": "p", "result": {}}  # ping may come early
    assert kinds == ["request-before-initialize"]


async def test_driver_refuses_requests_before_initialize(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        client_end, peer = memory_peer()
        conn = Connection(Role.CLIENT, info=CLIENT_INFO)
        driver = SessionDriver(conn, client_end)
        async with trio.open_nursery() as nursery:
            await nursery.start(driver.run)
            with pytest.raises(LocalProtocolError, match="can't send 'tools/list'"):
                await driver.request("tools/list")
            ping = spawn(nursery, driver.request, "ping")
            await peer.reply(await peer.expect("ping"), {})  # nothing was sent before the ping
            assert await ping.result() == {}
            spawn(nursery, driver.initialize)
            init = await peer.expect("initialize")
            with pytest.raises(LocalProtocolError, match="can't send 'tools/call'"):
                await driver.request("tools/call", {"name": "x"})
            with pytest.raises(LocalProtocolError, match="initialize can never be cancelled"):
                conn.cancel(init["id"])
            await driver.aclose()
            with pytest.raises(TransportClosed):
                await peer.recv()  # nothing but EOF after initialize


# --------------------------------------------------------------------------- timeouts and cancellation


async def test_request_timeout_cancels_on_the_wire_and_drops_the_late_answer(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        async with connected(timeouts=Timeouts(request=5)) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "slow")
                req = await peer.expect("tools/call")
                start = trio.current_time()
                note = await peer.expect("notifications/cancelled")
                assert trio.current_time() - start == pytest.approx(5)
                assert note["params"]["requestId"] == req["id"]
                assert "timed out after 5" in note["params"]["reason"]
                with pytest.raises(RequestTimeout, match="tools/call got no answer within 5"):
                    await call.result()
            await peer.reply(req, TEXT_OK)  # too late: dropped, counted, not an issue
            await round_trip(client, peer)
            assert client.connection.stats.late_responses_dropped == 1
            assert client.connection.stats.unknown_responses == 0
            assert list(client.driver.issues) == []
            assert client.connection.pending == {}


async def test_per_call_timeout_overrides_the_default(autojump_clock: Any) -> None:
    with trio.fail_after(200):
        async with connected(timeouts=Timeouts(request=60)) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "x", timeout=2)
                await peer.expect("tools/call")
                start = trio.current_time()
                await peer.expect("notifications/cancelled")
                assert trio.current_time() - start == pytest.approx(2)
                with pytest.raises(RequestTimeout, match="within 2"):
                    await call.result()
                # timeout=None waits past the 60 s default, and nothing is cancelled.
                call = spawn(nursery, client.call_tool, "x", timeout=None)
                req = await peer.expect("tools/call")
                await trio.sleep(100)
                await peer.reply(req, TEXT_OK)
                assert (await call.result()).content == [s.TextContent(text="ok")]
            await round_trip(client, peer)  # the next message is the ping, not a cancellation


async def test_caller_cancellation_sends_cancelled(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        async with connected() as (client, peer):
            caught: list[bool] = []
            scope = trio.CancelScope()

            async def caller() -> None:
                with scope:
                    await client.call_tool("slow")
                caught.append(scope.cancelled_caught)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(caller)
                req = await peer.expect("tools/call")
                scope.cancel()
                note = await peer.expect("notifications/cancelled")
            assert note["params"] == {"requestId": req["id"], "reason": "request cancelled by the caller"}
            assert caught == [True]
            assert client.connection.pending == {}
            await peer.reply(req, TEXT_OK)
            await round_trip(client, peer)
            assert client.connection.stats.late_responses_dropped == 1


async def test_cancel_notification_cannot_hang_on_a_stuck_peer(autojump_clock: Any) -> None:
    # Unbuffered wire and a peer that stops reading: the request's send blocks, the caller
    # gives up, and the courtesy notifications/cancelled gets CANCEL_SEND_TIMEOUT, no more.
    with trio.fail_after(100):
        async with connected(max_buffer=0) as (client, peer):
            start = trio.current_time()
            with trio.move_on_after(2) as scope:
                await client.call_tool("x")
            assert scope.cancelled_caught
            assert trio.current_time() - start == pytest.approx(2 + CANCEL_SEND_TIMEOUT)
            await round_trip(client, peer)  # the session is still usable


async def test_server_death_fails_every_pending_request_at_once(autojump_clock: Any) -> None:
    with trio.fail_after(100):
        async with connected() as (client, peer):
            failures: list[tuple[int, float, TransportClosed]] = []

            async def call(i: int) -> None:
                try:
                    await client.call_tool("slow", {"i": i}, timeout=None)
                except TransportClosed as exc:
                    failures.append((i, trio.current_time(), exc))

            async with trio.open_nursery() as nursery:
                for i in range(5):
                    nursery.start_soon(call, i)
                for _ in range(5):
                    await peer.expect("tools/call")
                await trio.sleep(3)
                closed_at = trio.current_time()
                await peer.aclose()
            assert sorted(i for i, _, _ in failures) == [0, 1, 2, 3, 4]
            assert {t for _, t, _ in failures} == {closed_at}
            assert len({id(exc) for _, _, exc in failures}) == 1  # one error for every waiter
            assert client.driver.is_closed
            with pytest.raises(TransportClosed, match="the session is closed"):
                await client.ping()


# --------------------------------------------------------------------------- malformed input


async def test_malformed_json_is_reported_and_the_session_goes_on(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with connected(raw=True) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "echo")
                req = await peer.expect("tools/call")
                await peer.send_raw(b'{"jsonrpc": "2.0", "id": ')
                await peer.send_raw(b"\xff\xfe not utf-8")
                await peer.send_raw(b'{"hello": "world"}')
                await peer.send_raw(b"[]")
                await peer.reply(req, TEXT_OK)
                assert (await call.result()).content == [s.TextContent(text="ok")]
            # A client answers nothing to garbage: the next thing on the wire is our ping.
            await round_trip(client, peer)
            kinds = [issue.kind for issue in client.driver.issues]
            assert kinds == ["parse-error", "parse-error", "invalid-message", "invalid-message"]
            assert client.connection.stats.invalid_messages == 4


@pytest.mark.parametrize(
    "answer",
    [
        b'{"jsonrpc":"2.0","id":ID,"result":"not an object"}',
        b'{"jsonrpc":"2.0","id":ID,"result":{"content":[],"x":NaN}}',  # JSON only a lenient reader reads
        b'{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"\xff"}]}}',  # not UTF-8
    ],
)
async def test_malformed_answer_fails_its_request_instead_of_hanging(answer: bytes, autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with connected(raw=True) as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "echo")
                req = await peer.expect("tools/call")
                await peer.send_raw(answer.replace(b"ID", jsonrpc.dumps(req["id"])))
                # A protocol failure of the answer, not an error the server reported.
                with pytest.raises(RemoteProtocolError, match="invalid answer to tools/call: malformed response"):
                    await call.result()
            await round_trip(client, peer)


async def test_unknown_and_duplicate_response_ids_are_dropped_and_reported(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with connected() as (client, peer):
            async with trio.open_nursery() as nursery:
                call = spawn(nursery, client.call_tool, "echo")
                req = await peer.expect("tools/call")
                await peer.reply(req, TEXT_OK)
                await peer.reply(req, {"content": [{"type": "text", "text": "again"}]})
                await peer.send({"id": 9999, "result": {}})
                await peer.send({"id": "nope", "error": {"code": -1, "message": "who?"}})
                await peer.send({"id": None, "error": {"code": -32700, "message": "I choked"}})
                assert (await call.result()).content == [s.TextContent(text="ok")]
            await round_trip(client, peer)
            kinds = [issue.kind for issue in client.driver.issues]
            assert kinds == ["unknown-response-id"] * 3 + ["error-without-id"]
            assert client.connection.stats.unknown_responses == 3
            assert client.connection.stats.late_responses_dropped == 0


async def test_oversize_message_closes_the_connection(autojump_clock: Any) -> None:
    with trio.fail_after(10):
        async with connected(limits=Limits(max_message_size=1000)) as (client, peer):
            async with trio.open_nursery() as nursery:
                calls = [spawn(nursery, client.call_tool, "big") for _ in range(2)]
                req = await peer.expect("tools/call")
                await peer.expect("tools/call")
                await peer.reply(req, {"content": [{"type": "text", "text": "x" * 2000}]})
                for call in calls:
                    with pytest.raises(RemoteProtocolError, match="exceeds the 1000-byte limit"):
                        await call.result()
                with pytest.raises(TransportClosed):
                    await peer.recv()  # the client closed the wire
            with pytest.raises(TransportClosed, match="the session is closed"):
                await client.ping()


# --------------------------------------------------------------------------- pagination


def _tool(name: str) -> Json:
    return {"name": name, "inputSchema": {"type": "object"}}


async def serve_pages(peer: Peer, pages: dict[str | None, tuple[list[str], str | None]], count: int) -> list[Json]:
    requests = []
    for _ in range(count):
        req = await peer.expect("tools/list")
        requests.append(req)
        names, next_cursor = pages[req.get("params", {}).get("cursor")]
        result: Json = {"tools": [_tool(n) for n in names]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        await peer.reply(req, result)
    return requests


async def test_pagination_assembles_every_page_in_order(autojump_clock: Any) -> None:
    pages = {None: (["a", "b"], "c1"), "c1": (["c"], "c2"), "c2": (["d"], None)}
    with trio.fail_after(10):
        async with connected() as (client, peer):
            async with trio.open_nursery() as nursery:
                listing = spawn(nursery, client.list_tools)
                requests = await serve_pages(peer, pages, 3)
                tools = await listing.result()
            assert [t.name for t in tools] == ["a", "b", "c", "d"]
            assert "params" not in requests[0]
            assert [r["params"]["cursor"] for r in requests[1:]] == ["c1", "c2"]
            await round_trip(client, peer)  # no fourth page was asked for


async def test_pagination_refuses_a_repeated_cursor(autojump_clock: Any) -> None:
    pages = {None: (["a"], "c1"), "c1": (["b"], "c2"), "c2": (["c"], "c1")}
    with trio.fail_after(10):
        async with connected() as (client, peer):
            async with trio.open_nursery() as nursery:
                listing = spawn(nursery, client.list_tools)
                await serve_pages(peer, pages, 3)
                with pytest.raises(RemoteProtocolError, match="repeated cursor 'c1'"):
                    await listing.result()
            await round_trip(client, peer)


async def test_pagination_stops_at_the_page_cap(autojump_clock: Any) -> None:
    pages: dict[str | None, tuple[list[str], str | None]] = {None: (["t0"], "p1")}
    pages.update({f"p{i}": ([f"t{i}"], f"p{i + 1}") for i in range(1, 10)})
    with trio.fail_after(10):
        async with connected(limits=Limits(max_pages=3)) as (client, peer):
            async with trio.open_nursery() as nursery:
                listing = spawn(nursery, client.list_tools)
                await serve_pages(peer, pages, 3)
                with pytest.raises(RemoteProtocolError, match="more than 3 pages"):
                    await listing.result()
            await round_trip(client, peer)


# --------------------------------------------------------------------------- real processes on stdio


def helper(*args: str) -> list[str]:
    return [sys.executable, HELPER, *args]


def assert_reaped(pid: int) -> None:
    with pytest.raises(ChildProcessError):  # no longer our child: reaped
        os.waitpid(pid, os.WNOHANG)


async def test_stdio_server_death_reports_exit_status_and_stderr() -> None:
    with trio.fail_after(20):
        async with open_client(helper("die-on-call"), stdio=StdioOptions(env=peers.peer_env())) as client:
            with pytest.raises(TransportClosed) as info:
                await client.call_tool("anything")
            assert "exited with status 7" in str(info.value) and "boom" in str(info.value)
            assert str(info.value).count("status 7") == 1
            assert info.value.returncode == 7
            assert client.stream.returncode == 7  # type: ignore[attr-defined]
            with pytest.raises(TransportClosed, match="the session is closed"):
                await client.ping()


async def test_stdio_connect_timeout_reaps_the_child() -> None:
    lines: list[str] = []
    with trio.fail_after(20):
        start = trio.current_time()
        # probe_timeout (5 s) is cut to the connect timeout, which the silent probe uses up.
        with pytest.raises(ConnectError, match="no answer to server/discover within 0.5 s") as info:
            async with open_client(
                helper("mute"),
                stdio=StdioOptions(env=peers.peer_env(), on_stderr=lines.append),
                timeouts=Timeouts(connect=0.5),
            ):
                pytest.fail("connected to a mute server")
        assert 0.5 <= trio.current_time() - start < 10
    assert lines and lines[0].startswith("pid ")
    assert lines[0] in str(info.value)  # the stderr tail explains the failure
    assert_reaped(int(lines[0].split()[1]))


async def test_stdio_malformed_line_is_reported_and_the_session_goes_on() -> None:
    with trio.fail_after(20):
        async with open_client(helper("garbage"), stdio=StdioOptions(env=peers.peer_env())) as client:
            result = await client.call_tool("anything")
            assert result.content == [s.TextContent(text="ok")]
            assert [issue.kind for issue in client.driver.issues] == ["parse-error"]
            await client.ping()
            assert (await client.call_tool("again")).content == [s.TextContent(text="ok")]


async def test_stdio_oversize_line_breaks_the_connection() -> None:
    with trio.fail_after(20):
        async with open_client(
            helper("oversize", "5000"), stdio=StdioOptions(env=peers.peer_env()), limits=Limits(max_message_size=1000)
        ) as client:
            with pytest.raises(RemoteProtocolError, match="exceeds the 1000-byte limit"):
                await client.call_tool("anything")
            with pytest.raises(TransportClosed, match="the session is closed"):
                await client.ping()
            assert client.stream.returncode is not None  # type: ignore[attr-defined]
