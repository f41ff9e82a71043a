"""The malformed-input probes (checks/negative.py, checks/malformed.py): one oracle, any transport.

Each server of tests/helpers/bad_malformed.py answers invalid JSON, invalid requests
and invalid params in one way (right, a wrong code, silence, a crash, nothing at all);
the verdicts of ``jsonrpc.parse-error``, ``jsonrpc.invalid-request`` and
``jsonrpc.invalid-params`` must follow from that alone, over an ordered stream (stdio
in-process), Streamable HTTP and WebSocket.  Silence is proven by the sentinel behind
each message, so no probe waits out a bound; a server that answers not even the
sentinel is "not reached: timed out", not a pass and not a fail.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import pytest
import trio
from helpers import h11_fake
from helpers.bad_malformed import Crash, HttpFake, OrderedFake, react

from trimcp._errors import TrimcpError
from trimcp._trio.stream import MessageStream, Received
from trimcp.conformance.checks.negative import probe_negative
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results

REVISION = "2025-11-25"
MALFORMED = ("jsonrpc.parse-error", "jsonrpc.invalid-request", "jsonrpc.invalid-params")
TIMEOUT = 10.0


async def run(connect: object, timeout: float = TIMEOUT) -> dict[str, tuple[Status, str]]:
    rec = Results(revision=REVISION)
    recordings: list[RecordingStream] = []
    await probe_negative(rec, connect, REVISION, timeout, recordings)  # type: ignore[arg-type]
    return {c: (rec.results[c].status, rec.results[c].detail) for c in MALFORMED if c in rec.results}


def ordered(mode: str) -> object:
    @asynccontextmanager
    async def connect() -> AsyncIterator[MessageStream]:
        fake = OrderedFake(mode)
        try:
            yield fake  # type: ignore[misc]
        finally:
            await fake.aclose()

    return connect


# ------------------------------------------------------------------ expectations, any transport

#: mode -> check -> (status, words in the detail)
EXPECTED: dict[str, dict[str, tuple[Status, str]]] = {
    "good": {c: (Status.PASS, "error") for c in MALFORMED},
    "wrong-code": {
        "jsonrpc.parse-error": (Status.FAIL, "error -32603 (malformed), not -32700"),
        "jsonrpc.invalid-request": (Status.FAIL, "not -32600"),
        "jsonrpc.invalid-params": (Status.WARN, "error -32603, expected -32602"),
    },
    "crash": {"jsonrpc.parse-error": (Status.FAIL, "broke")},
    "hang": {"jsonrpc.parse-error": (Status.SKIP, "not reached: timed out after 10 s")},
}
SILENT_ORDERED = {
    "jsonrpc.parse-error": (Status.FAIL, "invalid JSON got no answer (the ping sent right behind it was answered)"),
    "jsonrpc.invalid-request": (Status.FAIL, "a request without method got no answer"),
    "jsonrpc.invalid-params": (Status.FAIL, "ping with params an array got no answer"),
}
SILENT_HTTP = {
    "jsonrpc.parse-error": (Status.FAIL, "invalid JSON accepted with HTTP 202"),
    "jsonrpc.invalid-request": (Status.FAIL, "accepted with HTTP 202"),
    "jsonrpc.invalid-params": (Status.FAIL, "accepted with HTTP 202"),
}


def assert_verdicts(got: dict[str, tuple[Status, str]], want: dict[str, tuple[Status, str]]) -> None:
    for check, (status, words) in want.items():
        assert check in got, (check, got)
        assert got[check][0] is status, (check, got[check])
        assert words in got[check][1], (check, got[check])


# ------------------------------------------------------------------ stdio-like, in-process


@pytest.mark.parametrize("mode", ["good", "wrong-code", "crash", "hang"])
async def test_ordered_stream(mode: str, autojump_clock: trio.testing.MockClock) -> None:
    started = trio.current_time()
    got = await run(ordered(mode))
    assert_verdicts(got, EXPECTED[mode])
    if mode != "hang":
        # No probe waited for silence: the whole sequence is round trips only.
        assert trio.current_time() - started < 0.5


async def test_ordered_stream_silent_fails_in_one_round_trip(autojump_clock: trio.testing.MockClock) -> None:
    started = trio.current_time()
    got = await run(ordered("silent"))
    assert_verdicts(got, SILENT_ORDERED)
    assert trio.current_time() - started < 0.5


async def test_hang_waits_the_run_timeout_then_skips(autojump_clock: trio.testing.MockClock) -> None:
    started = trio.current_time()
    got = await run(ordered("hang"), timeout=3.0)
    assert got["jsonrpc.parse-error"] == (
        Status.SKIP,
        ("not reached: timed out after 3 s (invalid JSON: neither it nor the ping sent behind it got an answer)"),
    )
    assert 3.0 <= trio.current_time() - started < 3.0 * 5


def test_a_late_sentinel_answer_is_no_stray() -> None:
    # The sentinel's answer is read by the probe that sent it; the notification probe that
    # follows must not count an answer to a sentinel as a response to a notification.
    got = trio.run(partial(_full, "good"))
    assert got["jsonrpc.notification-no-response"][0] is Status.PASS


async def _full(mode: str) -> dict[str, tuple[Status, str]]:
    rec = Results(revision=REVISION)
    await probe_negative(rec, ordered(mode), REVISION, TIMEOUT, [])  # type: ignore[arg-type]
    return {c: (r.status, r.detail) for c, r in rec.results.items()}


# ------------------------------------------------------------------ Streamable HTTP


@pytest.mark.parametrize("mode", ["good", "wrong-code", "crash", "silent", "bare-400"])
async def test_http(mode: str) -> None:
    fake = HttpFake(mode)
    async with h11_fake.serve(fake) as server:
        with trio.fail_after(30):
            got = await run(connector_for([server.url]))
    assert fake.malformed, "no malformed body reached the server"
    want = {
        "silent": SILENT_HTTP,
        "bare-400": {"jsonrpc.parse-error": (Status.WARN, "refused with HTTP 400 but no JSON-RPC error")},
    }
    assert_verdicts(got, want.get(mode) or EXPECTED[mode])


async def test_http_hang_is_not_reached() -> None:
    fake = HttpFake("hang")
    async with h11_fake.serve(fake) as server:
        with trio.fail_after(30):
            got = await run(connector_for([server.url]), timeout=1.0)
    assert got["jsonrpc.parse-error"][0] is Status.SKIP
    assert got["jsonrpc.parse-error"][1].startswith("not reached: timed out after 1 s")


async def test_http_raw_post_carries_the_session() -> None:
    fake = HttpFake("good")
    async with h11_fake.serve(fake) as server:
        with trio.fail_after(30):
            await run(connector_for([server.url]))
    posts = [r for r in server.requests if r.method == "POST" and r.body in fake.malformed]
    assert posts
    for req in posts:
        assert req.header("mcp-session-id") in fake.sessions
        assert req.header("mcp-protocol-version") == REVISION
        assert "text/event-stream" in (req.header("accept") or "")


# ------------------------------------------------------------------ WebSocket


@asynccontextmanager
async def ws_server(mode: str) -> AsyncIterator[str]:
    from trimcp.server.transports.websocket import serve_websocket_streams

    async def handler(stream: object) -> None:
        initialized = False
        while True:
            try:
                item = await stream.receive()  # type: ignore[attr-defined]
            except TrimcpError:
                return
            if not isinstance(item, Received):
                continue
            try:
                out = react(mode, item.data, initialized)
            except Crash:
                return
            initialized = initialized or b'"notifications/initialized"' in item.data
            for obj in out:
                await stream.send_raw(json.dumps(obj).encode())  # type: ignore[attr-defined]

    async with trio.open_nursery() as nursery:
        listener = await nursery.start(serve_websocket_streams, handler)
        try:
            yield f"ws://127.0.0.1:{listener.port}/mcp"
        finally:
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("mode", ["good", "wrong-code", "silent", "crash"])
async def test_websocket(mode: str) -> None:
    async with ws_server(mode) as url:
        with trio.fail_after(30):
            got = await run(connector_for([url]))
    assert_verdicts(got, SILENT_ORDERED if mode == "silent" else EXPECTED[mode])


async def test_websocket_hang_is_not_reached() -> None:
    async with ws_server("hang") as url:
        with trio.fail_after(30):
            got = await run(connector_for([url]), timeout=1.0)
    assert got["jsonrpc.parse-error"][0] is Status.SKIP
