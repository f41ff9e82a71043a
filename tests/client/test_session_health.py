"""Session health: terminal failures in a row close the session, the heartbeat finds a
silent peer, and progress keeps a request alive within its total bound.

``trimcp.testing.ScriptedStream`` plays the transport (as in test_request_failed.py):
the test sees what the session sends and hands back texts, ``RequestFailed`` and
``StreamLost`` items, in virtual time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.lowlevel

from trimcp import Limits, RequestTimeout, Timeouts, TransportClosed, open_client
from trimcp._errors import ConnectError, TrimcpError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection.health import FailureCounter
from trimcp._trio.client.client_session import ClientSession
from trimcp.testing import ScriptedStream

HANDSHAKE = "2025-11-25"
INIT_RESULT = {"protocolVersion": HANDSHAKE, "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}


@asynccontextmanager
async def session(**options: Any) -> AsyncIterator[tuple[ClientSession, ScriptedStream]]:
    stream = ScriptedStream()
    async with trio.open_nursery() as nursery:

        async def handshake() -> None:
            init, _ = await stream.expect("initialize")
            await stream.answer(init, INIT_RESULT)

        nursery.start_soon(handshake)
        async with open_client(stream, revision=HANDSHAKE, **options) as client:
            yield client, stream


def test_the_counter_is_reset_by_life_and_dies_once() -> None:
    counter = FailureCounter(2)
    assert counter.failed(ValueError("a")) is None
    counter.alive()
    assert counter.failed(ValueError("b")) is None
    dead = counter.failed(ValueError("c"))
    assert dead is not None and "2 consecutive transport failures; last: c" in str(dead)
    assert isinstance(dead.__cause__, ValueError)
    assert counter.failed(ValueError("d")) is None  # the verdict is given once
    assert FailureCounter(None).failed(ValueError("x")) is None
    with pytest.raises(ValueError):
        FailureCounter(0)


async def _pending_pings(client: ClientSession, n: int, nursery: trio.Nursery) -> list[BaseException]:
    errors: list[BaseException] = []

    async def ping() -> None:
        try:
            await client.ping(timeout=None)
        except TrimcpError as exc:
            errors.append(exc)

    for _ in range(n):
        nursery.start_soon(ping)
    await trio.sleep(0.01)
    return errors


async def test_three_terminal_failures_in_a_row_close_the_session_and_fail_all_pending(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with session() as (client, stream), trio.open_nursery() as nursery:
        errors = await _pending_pings(client, 5, nursery)
        pings = stream.requests()
        assert len(pings) == 5
        for i, request in enumerate(pings[:3]):
            await stream.lose(request, ConnectError(f"refused #{i}"))
        start = trio.current_time()
        while len(errors) < 5:
            await trio.lowlevel.checkpoint()
        assert trio.current_time() == start  # at once, not at a deadline
        verdicts = [e for e in errors if "consecutive" in str(e)]
        assert len(verdicts) == 2  # the two still pending fail with the verdict
        last = verdicts[0]
        assert "3 consecutive transport failures; last: refused #2" in str(last)
        assert isinstance(last.__cause__, ConnectError) and str(last.__cause__) == "refused #2"
        assert stream.closed and client.driver.is_closed
        with pytest.raises(TransportClosed, match="consecutive"):
            await client.ping()


async def test_two_failures_then_an_answer_do_not(autojump_clock: trio.abc.Clock) -> None:
    async with session() as (client, stream), trio.open_nursery() as nursery:
        errors = await _pending_pings(client, 5, nursery)
        pings = stream.requests()
        for request in pings[:2]:
            await stream.lose(request, ConnectError("refused"))
        await stream.answer(pings[2], {})
        for request in pings[3:]:
            await stream.lose(request, ConnectError("refused"))
        await trio.sleep(1)
        assert len(errors) == 4 and not any("consecutive" in str(e) for e in errors)
        assert not client.driver.is_closed and not stream.closed


async def test_a_reissue_and_an_auth_failure_do_not_count_but_a_lost_stream_does(
    autojump_clock: trio.abc.Clock,
) -> None:
    from trimcp._errors import AuthError

    async with session() as (client, stream), trio.open_nursery() as nursery:
        errors = await _pending_pings(client, 2, nursery)
        first, second = stream.requests()
        await stream.lose(first, TransportClosed("broke"), may_reissue=True)
        await stream.lose(second, AuthError("no"))
        await stream.lose_stream(TransportClosed("gave up the standalone GET stream"))
        await stream.lose_stream(TransportClosed("gave up the standalone GET stream"))
        await trio.sleep(1)
        assert not client.driver.is_closed
        await stream.lose_stream(TransportClosed("gave up the standalone GET stream"))
        await trio.sleep(1)
        assert client.driver.is_closed and any("standalone GET" in str(e) for e in errors)


async def test_max_consecutive_failures_none_never_closes(autojump_clock: trio.abc.Clock) -> None:
    async with session(limits=Limits(max_consecutive_failures=None)) as (client, stream):
        for _ in range(10):
            await stream.lose_stream(TransportClosed("lost"))
        await trio.sleep(1)
        assert not client.driver.is_closed


async def test_the_heartbeat_finds_a_silent_peer(autojump_clock: trio.abc.Clock) -> None:
    interval, timeout = 5.0, 2.0
    async with session(timeouts=Timeouts(heartbeat=interval, heartbeat_timeout=timeout)) as (client, stream):
        quiet_since = trio.current_time()
        with trio.fail_after(interval + timeout * 3 + 0.5):
            while not client.driver.is_closed:
                await trio.sleep(0.1)
        took = trio.current_time() - quiet_since
        assert interval + 3 * timeout - 0.5 <= took <= interval + 3 * timeout + 0.5
        sent = stream.requests()
        assert [r.method for r in sent] == ["ping"] * 3
        assert "3 consecutive transport failures; last: ping got no answer within 2.0 s" in str(
            client.driver.closed_error
        )


async def test_the_heartbeat_is_quiet_on_a_busy_session_and_an_error_answer_is_alive(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with session(timeouts=Timeouts(heartbeat=5.0, heartbeat_timeout=2.0)) as (client, stream):

        async def server() -> None:
            while True:
                request, _ = await stream.expect("tools/list")
                await stream.answer(request, {"tools": []})

        # The answering task has a nursery of its own: what follows must not run in a
        # cancelled scope (its first checkpoint would end the test, passing, unseen).
        async with trio.open_nursery() as n:
            n.start_soon(server)
            for _ in range(30):
                await client.request("tools/list")
                await trio.sleep(1)
            n.cancel_scope.cancel()
        assert stream.requests() == []  # no heartbeat while messages keep arriving
        # Quiet now: a heartbeat goes out after the interval; an error answer keeps the session.
        for _ in range(3):
            ping, _ = await stream.expect("ping")
            await stream.give({"id": ping.id, "error": {"code": -32601, "message": "no ping here"}})
        assert not client.driver.is_closed


async def test_progress_keeps_a_short_timeout_call_alive(autojump_clock: trio.abc.Clock) -> None:
    async with session() as (client, stream), trio.open_nursery() as nursery:
        results: list[Any] = []

        async def call() -> None:
            results.append(await client.call_tool("slow", timeout=1.0, max_total_timeout=20.0))

        nursery.start_soon(call)
        request, _ = await stream.expect("tools/call")
        start = trio.current_time()
        for i in range(20):  # 10 s of progress, every 0.5 s
            await trio.sleep(0.5)
            await stream.progress(request, i)
        await stream.answer(request, {"content": []})
        await trio.lowlevel.checkpoint()
        while not results:
            await trio.sleep(0.01)
        assert trio.current_time() - start >= 10.0


async def test_the_total_bound_holds_and_the_message_says_why(autojump_clock: trio.abc.Clock) -> None:
    async with session() as (client, stream), trio.open_nursery() as nursery:
        failed: list[BaseException] = []
        done = trio.Event()

        async def call() -> None:
            with pytest.raises(RequestTimeout) as info:
                await client.call_tool("slow", timeout=1.0, max_total_timeout=3.0)
            failed.append(info.value)
            done.set()

        async def chatter(request: rpc.Request) -> None:
            for i in range(100):
                await trio.sleep(0.5)
                await stream.progress(request, i)

        nursery.start_soon(call)
        request, _ = await stream.expect("tools/call")
        start = trio.current_time()
        nursery.start_soon(chatter, request)
        await done.wait()
        assert trio.current_time() - start == pytest.approx(3.0, abs=0.01)
        assert "within 1.0 s of the last progress" in str(failed[0])
        assert "3.0 s in all" in str(failed[0])
        nursery.cancel_scope.cancel()


async def test_without_reset_progress_does_not_extend(autojump_clock: trio.abc.Clock) -> None:
    async with session(timeouts=Timeouts(reset_on_progress=False)) as (client, stream), trio.open_nursery() as nursery:
        failed: list[BaseException] = []

        async def call() -> None:
            with pytest.raises(RequestTimeout) as info:
                await client.call_tool("slow", timeout=1.0, on_progress=lambda *_: None)
            failed.append(info.value)

        nursery.start_soon(call)
        request, _ = await stream.expect("tools/call")
        start = trio.current_time()
        await trio.sleep(0.5)
        await stream.progress(request, 1)
        while not failed:
            await trio.sleep(0.01)
        assert trio.current_time() - start == pytest.approx(1.0, abs=0.02)
        assert "of the last progress" not in str(failed[0])


async def test_call_tool_sends_a_progress_token_only_while_resetting(autojump_clock: trio.abc.Clock) -> None:
    for reset, expected in ((True, True), (False, False)):
        async with session() as (client, stream), trio.open_nursery() as nursery:
            nursery.start_soon(lambda r=reset: client.call_tool("t", reset_timeout_on_progress=r))
            request, _ = await stream.expect("tools/call")
            assert ("progressToken" in (request.params or {}).get("_meta", {})) is expected
            await stream.answer(request, {"content": []})
