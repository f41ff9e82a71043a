"""The HTTP client transport against small hand-written, often misbehaving, servers.

Every server here is an h11 server on 127.0.0.1 started by the test itself in
the same Trio run (``tests/helpers/h11_fake.py``); each test runs with both
executors (the default keep-alive pool on trimcp's codec, and a caller's ``httpx.AsyncClient``) where the
executor matters.  Real sockets mean real time, so timings are short and every
test is bounded by ``fail_after``; the reconnection policy's own timing is
also tested in virtual time (``autojump_clock``) against a scripted executor.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from helpers.h11_fake import McpFake, Reply, Req, decode_header, result, serve
from helpers.ports import free_port

import trimcp
from trimcp import Era, Handlers, RequestTimeout
from trimcp._errors import (
    ConnectError,
    RemoteProtocolError,
    SessionExpired,
    TransportClosed,
    TransportError,
)
from trimcp._sansio import schema as s
from trimcp._sansio.http.client.plan import Mode
from trimcp._sansio.http.client.policy import ReconnectPolicy
from trimcp._trio.transports.http.connect import open_http_stream
from trimcp._trio.transports.http.pool import PoolExecutor

HANDSHAKE = "2025-11-25"
LIMIT = 15


@pytest.fixture(params=["pool", "httpx"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def connect(url: str, kind: str, **kwargs: Any) -> AsyncIterator[trimcp.ClientSession]:
    """open_client over HTTP with the chosen executor (and ``open_http_stream`` options)."""
    options = {k: kwargs.pop(k) for k in ("post_timeout", "reconnect", "headers_helper", "headers") if k in kwargs}
    async with (
        httpx.AsyncClient() if kind == "httpx" else _nothing() as http_client,
        open_http_stream(url, http_client=http_client, **options) as stream,
        trimcp.open_client(stream, **kwargs) as session,
    ):
        yield session


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield None


def posts(server: Any, method: str) -> list[Req]:
    return [r for r in server.requests if r.method == "POST" and (r.json or {}).get("method") == method]


# --------------------------------------------------------------------------- basics


async def test_json_answers_session_headers_and_delete(kind: str) -> None:
    fake = McpFake()
    with trio.fail_after(LIMIT):
        async with serve(fake) as server:
            async with connect(server.url, kind) as session:
                assert session.protocol_version == HANDSHAKE
                assert session.stream.session_id == "sess-1"  # type: ignore[attr-defined]
                tools = await session.list_tools()
                assert [t.name for t in tools] == ["echo"]
                out = await session.call_tool("echo", {"x": 1})
                assert out.content[0].text == '{"x": 1}'  # type: ignore[union-attr]
            init = posts(server, "initialize")[0]
            assert init.header("accept") == "application/json, text/event-stream"
            assert init.header("content-type") == "application/json"
            assert init.header("mcp-session-id") is None and init.header("mcp-protocol-version") is None
            after = server.requests[server.requests.index(init) + 1 :]
            assert after, "nothing after initialize"
            for r in after:
                assert r.header("mcp-session-id") == "sess-1", r
                assert r.header("mcp-protocol-version") == HANDSHAKE, r
            note = posts(server, "notifications/initialized")[0]
            assert note.header("mcp-method") == "notifications/initialized"
            assert server.requests[-1].method == "DELETE"
            # The standalone GET was tried and its 405 tolerated.
            assert any(r.method == "GET" for r in server.requests)


async def test_dual_era_probe_falls_back_to_initialize(kind: str) -> None:
    fake = McpFake()
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind) as session:
            assert session.era is Era.HANDSHAKE
            await session.ping()
        probe = posts(server, "server/discover")[0]
        assert probe.header("mcp-protocol-version") == "2026-07-28"
        assert probe.header("mcp-session-id") is None


async def test_unreachable_server_fails_the_connect(kind: str) -> None:
    async with serve(McpFake()) as server:
        url = server.url
    with trio.fail_after(LIMIT), pytest.raises(ConnectError, match="cannot|connect"):
        async with connect(url, kind, revision=HANDSHAKE):
            pass


async def test_sequential_calls_reuse_one_connection() -> None:
    fake = McpFake()
    with trio.fail_after(LIMIT):
        async with serve(fake) as server:
            executor = PoolExecutor()
            async with open_http_stream(server.url, executor=executor) as stream:
                async with trimcp.open_client(stream, revision=HANDSHAKE) as session:
                    for i in range(20):
                        await session.call_tool("echo", {"i": i})
            calls = posts(server, "tools/call")
            assert len(calls) == 20
            assert len({r.connection for r in calls}) == 1
            # initialize, initialized, the GET (405) and the calls: at most one extra connection.
            assert server.connections <= 2
            assert executor.connections_opened == server.connections


async def test_concurrent_streams_get_their_own_connections(kind: str) -> None:
    fake = McpFake()
    arrived = 0
    all_in = trio.Event()

    async def on_call(req: Req, reply: Reply) -> None:
        nonlocal arrived
        await reply.sse_start()
        arrived += 1
        if arrived == 5:
            all_in.set()
        await all_in.wait()
        await reply.event(result(req, {"content": []}))
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            async with trio.open_nursery() as nursery:
                for i in range(5):
                    nursery.start_soon(session.call_tool, "echo", {"i": i})
        assert len({r.connection for r in posts(server, "tools/call")}) == 5


async def test_sse_answer_with_server_request_first(kind: str) -> None:
    fake = McpFake()
    answered = trio.Event()
    answers: list[Any] = []

    async def on_call(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        await reply.event(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}
        )
        await reply.event({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
        await answered.wait()
        await reply.event(result(req, {"content": [{"type": "text", "text": json.dumps(answers[0])}]}))
        await reply.end()

    async def on_answer(req: Req, reply: Reply) -> None:
        answers.append(req.json)
        await reply.empty(202)
        answered.set()

    fake.on_call = on_call  # type: ignore[method-assign]
    fake.on_answer = on_answer  # type: ignore[method-assign]
    logs: list[Any] = []
    with trio.fail_after(LIMIT):
        async with serve(fake) as server:
            async with connect(
                server.url,
                kind,
                revision=HANDSHAKE,
                handlers=Handlers(roots=[s.Root(uri="file:///tmp")], logging=logs.append),
            ) as session:
                out = await session.call_tool("echo", {})
            answer = json.loads(out.content[0].text)  # type: ignore[union-attr]
            assert answer["id"] == "srv-1"
            assert answer["result"]["roots"][0]["uri"] == "file:///tmp"
            assert logs and logs[0].data == "working"
            answer_post = [r for r in server.requests if r.method == "POST" and "method" not in (r.json or {})]
            assert answer_post[0].header("mcp-session-id") == "sess-1"


async def test_notifications_get_202(kind: str) -> None:
    fake = McpFake()
    with trio.fail_after(LIMIT):
        async with (
            serve(fake) as server,
            connect(
                server.url, kind, revision=HANDSHAKE, handlers=Handlers(roots=[s.Root(uri="file:///tmp")])
            ) as session,
        ):
            await session.notify_roots_changed()
            await session.ping()
            assert not any("roots" in issue for issue in session.stream.issues)  # type: ignore[attr-defined]
        assert posts(server, "notifications/roots/list_changed")[0].header("mcp-session-id") == "sess-1"


async def test_static_headers_and_headers_helper() -> None:
    fake = McpFake()
    calls = 0
    unauthorized = True

    def helper() -> dict[str, str]:
        nonlocal calls
        calls += 1
        return {"Authorization": f"Bearer token-{calls}"}

    base = fake.on_call

    async def on_call(req: Req, reply: Reply) -> None:
        nonlocal unauthorized
        if unauthorized:
            unauthorized = False
            await reply.text(401, "expired", headers=[("WWW-Authenticate", "Bearer")])
            return
        await base(req, reply)

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server:
            async with connect(
                server.url,
                "pool",
                revision=HANDSHAKE,
                headers={"X-Team": "blue"},
                headers_helper=helper,
            ) as session:
                await session.call_tool("echo", {})
            init = posts(server, "initialize")[0]
            assert init.header("x-team") == "blue" and init.header("authorization") == "Bearer token-1"
            first, second = posts(server, "tools/call")
            assert first.header("authorization") == "Bearer token-1"
            assert second.header("authorization") == "Bearer token-2"


async def test_headers_helper_command() -> None:
    fake = McpFake()
    command = [sys.executable, "-c", 'print(\'{"X-Token": "from-command"}\')']
    with trio.fail_after(LIMIT):
        async with serve(fake) as server:
            async with connect(server.url, "pool", revision=HANDSHAKE, headers_helper=command) as session:
                await session.ping()
            assert posts(server, "ping")[0].header("x-token") == "from-command"


# --------------------------------------------------------------------------- faults


async def test_http_500_is_a_clear_error_and_the_session_survives(kind: str) -> None:
    fake = McpFake()
    failed = False
    base = fake.on_call

    async def on_call(req: Req, reply: Reply) -> None:
        nonlocal failed
        if not failed:
            failed = True
            await reply.text(500, "database on fire")
            return
        await base(req, reply)

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            with pytest.raises(TransportError) as info:
                await session.call_tool("echo", {})
            assert type(info.value) is TransportError
            assert "HTTP 500" in str(info.value) and "database on fire" in str(info.value)
            assert server.url in str(info.value)
            await session.call_tool("echo", {})


async def test_server_that_never_answers_hits_the_deadline(kind: str) -> None:
    fake = McpFake()

    async def on_call(req: Req, reply: Reply) -> None:
        await trio.sleep_forever()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server:
            async with connect(server.url, kind, revision=HANDSHAKE, post_timeout=0.5) as session:
                started = time.monotonic()
                with pytest.raises(TransportError, match="no answer to tools/call within 0.5 s"):
                    await session.call_tool("echo", {})
                assert 0.4 < time.monotonic() - started < 3
                await session.ping()


async def test_session_timeout_still_applies(kind: str) -> None:
    fake = McpFake()

    async def on_call(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        await trio.sleep_forever()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            with pytest.raises(RequestTimeout):
                await session.call_tool("echo", {}, timeout=0.3)
            await session.ping()
        assert posts(server, "notifications/cancelled")


async def test_slow_drip(kind: str) -> None:
    fake = McpFake()

    async def on_call(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        payload = json.dumps(result(req, {"content": [{"type": "text", "text": "drip"}]}))
        for byte in f"id: 1\ndata: {payload}\n\n".encode():
            await reply.body(bytes([byte]))
            await trio.sleep(0.001)
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            out = await session.call_tool("echo", {})
            assert out.content[0].text == "drip"  # type: ignore[union-attr]


async def test_ten_megabyte_result_in_one_event(kind: str) -> None:
    fake = McpFake()
    big = "x" * (10 * 1024 * 1024)

    async def on_call(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        await reply.event(result(req, {"content": [{"type": "text", "text": big}]}), id="1")
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT * 2):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            out = await session.call_tool("echo", {})
            assert out.content[0].text == big  # type: ignore[union-attr]


async def test_malformed_sse_fails_the_request_not_the_session(kind: str) -> None:
    fake = McpFake()
    bad = True
    base = fake.on_call

    async def on_call(req: Req, reply: Reply) -> None:
        nonlocal bad
        if not bad:
            await base(req, reply)
            return
        bad = False
        await reply.sse_start()
        await reply.body(b"data: {not json\n\n: comment\nno colon here\n\nevent: weird\ndata: x\n\nretry: soon\n\n")
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            with pytest.raises(TransportClosed, match="ended before the answer"):
                await session.call_tool("echo", {})
            await session.call_tool("echo", {})
            assert any(i.kind for i in session.driver.issues)


@pytest.mark.parametrize(
    ("shape", "text"),
    [
        ("json", '{"jsonrpc": "2.0", "id": ID, "result": {"content": [], "x": NaN}}'),
        ("sse", '{"jsonrpc": "2.0", "id": ID, "result": {"content": [], "x": NaN}}'),
        ("json", '{"jsonrpc": "2.0", "id": ID, "result": {"content": [], "x": 1e400}}'),
        ("error-status", '{"jsonrpc": "2.0", "id": ID, "error": {"code": -32000, "message": "m", "data": NaN}}'),
    ],
)
async def test_an_http_answer_holding_nan_fails_its_waiter_at_once(kind: str, shape: str, text: str) -> None:
    """Parsed once, strictly: the answer is unusable, but its id shows, so the waiter
    fails with RemoteProtocolError now (not at its deadline) and the session goes on."""
    fake = McpFake()
    bad = True
    base = fake.on_call

    async def on_call(req: Req, reply: Reply) -> None:
        nonlocal bad
        if not bad:
            await base(req, reply)
            return
        bad = False
        body = text.replace("ID", json.dumps(req.json["id"])).encode()
        if shape == "sse":
            await reply.sse_start()
            await reply.body(b"id: 1\ndata: " + body + b"\n\n")
            await reply.end()
        else:
            await reply.head(200 if shape == "json" else 400, [("Content-Type", "application/json")])
            await reply.body(body)
            await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            with trio.fail_after(1), pytest.raises(RemoteProtocolError, match="invalid answer to tools/call"):
                await session.call_tool("echo", {})
            await session.call_tool("echo", {})


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
async def test_an_answer_only_a_lax_parser_reads_fails_its_waiter_at_once(kind: str, encoding: str) -> None:
    """One parse decides: a body json.loads would take (a BOM, UTF-16) but the strict
    parser refuses, showing no id, answers nothing, so the request fails now with a
    TransportError.  (Two parsers that disagreed left this waiter to its deadline.)"""
    fake = McpFake()

    async def on_call(req: Req, reply: Reply) -> None:
        body = json.dumps(result(req, {"content": []})).encode(encoding)
        await reply.head(200, [("Content-Type", "application/json")])
        await reply.body(body)
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            with trio.fail_after(1), pytest.raises(TransportError, match="not JSON"):
                await session.call_tool("echo", {})
            assert any(i.kind == "parse-error" for i in session.driver.issues)  # and the session saw it
            await session.ping()


@pytest.mark.parametrize("with_id", [False, True])
async def test_connection_cut_mid_event(kind: str, with_id: bool) -> None:
    fake = McpFake()

    async def on_call(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        if with_id:
            await reply.event(None, id="ev-1", retry=50)
        await reply.body(b'data: {"jsonrpc": "2.0", "id": ')
        await reply.cut()

    async def on_get(req: Req, reply: Reply) -> None:
        if req.header("last-event-id") != "ev-1":
            await reply.text(405)
            return
        call = posts(server, "tools/call")[-1]
        await reply.sse_start()
        await reply.event(result(call, {"content": [{"type": "text", "text": "resumed"}]}), id="ev-2")
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    fake.on_get = on_get  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            if with_id:
                out = await session.call_tool("echo", {})
                assert out.content[0].text == "resumed"  # type: ignore[union-attr]
                resume = [r for r in server.requests if r.header("last-event-id")]
                assert resume[0].header("mcp-session-id") == "sess-1"
            else:
                with pytest.raises(TransportClosed, match="no way to resume"):
                    await session.call_tool("echo", {})
            await session.ping()


async def test_resumption_waits_for_retry(kind: str) -> None:
    fake = McpFake()
    times: dict[str, float] = {}

    async def on_call(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        await reply.event(None, id="p-1", retry=200)
        times["closed"] = time.monotonic()
        await reply.end()  # closed before the answer: the client must poll after 200 ms

    async def on_get(req: Req, reply: Reply) -> None:
        if req.header("last-event-id") != "p-1":
            await reply.text(405)
            return
        times["resumed"] = time.monotonic()
        call = posts(server, "tools/call")[-1]
        await reply.sse_start()
        await reply.event(result(call, {"content": [{"type": "text", "text": "polled"}]}), id="p-2")
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    fake.on_get = on_get  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            out = await session.call_tool("echo", {})
            assert out.content[0].text == "polled"  # type: ignore[union-attr]
    assert 0.18 <= times["resumed"] - times["closed"] <= 0.6


async def test_standalone_stream_reconnects_after_retry_like_the_sse_retry_scenario(kind: str) -> None:
    """The official ``sse-retry`` client scenario: retry 500 -> reconnect within 450-700 ms."""
    fake = McpFake()
    gets: list[tuple[float, str | None]] = []
    done = trio.Event()

    async def on_get(req: Req, reply: Reply) -> None:
        gets.append((time.monotonic(), req.header("last-event-id")))
        await reply.sse_start()
        await reply.event(None, id=f"g-{len(gets)}", retry=500)
        if len(gets) >= 2:
            done.set()
        await reply.end()

    fake.on_get = on_get  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE):
            await done.wait()
    (t1, id1), (t2, id2) = gets[:2]
    assert id1 is None and id2 == "g-1"
    assert 0.45 <= t2 - t1 <= 0.7


async def test_standalone_stream_delivers_server_messages(kind: str) -> None:
    fake = McpFake()
    seen: list[str] = []
    got = trio.Event()

    async def on_get(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        await reply.event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, id="s-1")
        await trio.sleep_forever()

    async def notified(method: str, params: dict[str, Any]) -> None:
        seen.append(method)
        got.set()

    fake.on_get = on_get  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with (
            serve(fake) as server,
            connect(server.url, kind, revision=HANDSHAKE, handlers=Handlers(notification=notified)),
        ):
            await got.wait()
    assert seen == ["notifications/tools/list_changed"]


async def test_server_restart_reinitializes_and_retries_once(kind: str) -> None:
    fake = McpFake()
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind, revision=HANDSHAKE) as session:
            await session.call_tool("echo", {"n": 1})
            fake.live.clear()  # the server restarted and forgot every session
            out = await session.call_tool("echo", {"n": 2})
            assert out.content[0].text == '{"n": 2}'  # type: ignore[union-attr]
            assert session.stream.session_id == "sess-2"  # type: ignore[attr-defined]
            inits = posts(server, "initialize")
            assert len(inits) == 2 and inits[1].header("mcp-session-id") is None
            assert inits[1].json["params"] == inits[0].json["params"]
            calls = posts(server, "tools/call")
            assert [c.header("mcp-session-id") for c in calls] == ["sess-1", "sess-1", "sess-2"]
            assert calls[1].json["id"] == calls[2].json["id"]
            assert posts(server, "notifications/initialized")[-1].header("mcp-session-id") == "sess-2"
            # A server that keeps refusing gets one retry only.
            fake.live.clear()

            async def refuse(req: Req, reply: Reply) -> None:
                await reply.json(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}}, 404
                )

            fake.on_call = refuse  # type: ignore[method-assign]
            with pytest.raises(SessionExpired, match="dropped the session again"):
                await session.call_tool("echo", {"n": 3})


# --------------------------------------------------------------------------- 2024-11-05


class LegacyServer:
    """A 2024-11-05 HTTP+SSE server: POST /mcp is 405; GET /mcp streams; POST /messages."""

    def __init__(self, endpoint: str = "/messages?session_id=abc") -> None:
        self.endpoint = endpoint
        self.send, self.recv = trio.open_memory_channel[Any](100)

    async def __call__(self, req: Req, reply: Reply) -> None:
        if req.method == "GET" and req.target == "/mcp":
            await reply.sse_start()
            await reply.event(self.endpoint, event="endpoint")
            async for message in self.recv:
                await reply.event(message, event="message")
            return
        if req.method == "POST" and req.target.startswith("/messages"):
            await reply.text(202, "Accepted")
            msg = req.json
            if msg.get("method") == "initialize":
                await self.send.send(
                    result(
                        req,
                        {
                            "protocolVersion": "2024-11-05",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "legacy", "version": "1"},
                        },
                    )
                )
            elif msg.get("method") == "tools/call":
                await self.send.send(result(req, {"content": [{"type": "text", "text": "old school"}]}))
            elif "id" in msg and "method" in msg:
                await self.send.send(result(req, {}))
            return
        await reply.text(405, "Method Not Allowed")


async def test_legacy_fallback(kind: str) -> None:
    legacy = LegacyServer()
    with trio.fail_after(LIMIT):
        async with serve(legacy) as server, connect(server.url, kind) as session:
            assert session.protocol_version == "2024-11-05"
            assert session.stream.mode is Mode.LEGACY_SSE  # type: ignore[attr-defined]
            out = await session.call_tool("echo", {})
            assert out.content[0].text == "old school"  # type: ignore[union-attr]
        targets = [(r.method, r.target) for r in server.requests]
        assert ("GET", "/mcp") in targets
        assert ("POST", "/messages?session_id=abc") in targets


async def test_legacy_cross_origin_endpoint_is_refused() -> None:
    legacy = LegacyServer(endpoint="http://127.0.0.2:1/steal")
    with trio.fail_after(LIMIT):
        async with serve(legacy) as server:
            with pytest.raises(ConnectError, match="405"):
                async with connect(server.url, "pool", revision="2024-11-05"):
                    pass


# --------------------------------------------------------------------------- 2026-07-28


class StatelessFake:
    """A 2026-07-28 server: discover, tools with x-mcp-header, per-request streams."""

    def __init__(self) -> None:
        self.calls: list[Req] = []
        self.listens: list[Req] = []
        self.cut_first = False
        self.hold = False
        self.stream_closed = trio.Event()

    async def __call__(self, req: Req, reply: Reply) -> None:
        if req.method != "POST":
            await reply.text(405)
            return
        msg = req.json
        method = msg["method"]
        meta = {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}}
        if method == "server/discover":
            await reply.json(
                result(
                    req,
                    {
                        "resultType": "complete",
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}},
                        "_meta": meta,
                    },
                )
            )
        elif method == "tools/list":
            await reply.json(
                result(
                    req,
                    {
                        "resultType": "complete",
                        "tools": [
                            {
                                "name": "wetter-☀",
                                "inputSchema": {
                                    "type": "object",
                                    "properties": {
                                        "region": {"type": "string", "x-mcp-header": "Region"},
                                        "greeting": {"type": "string", "x-mcp-header": "Greeting"},
                                        "count": {"type": "integer", "x-mcp-header": "Count"},
                                        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                                        "absent": {"type": "string", "x-mcp-header": "Absent"},
                                        "nothing": {"type": ["string", "null"], "x-mcp-header": "Nothing"},
                                        "query": {"type": "string"},
                                    },
                                },
                            },
                            {
                                "name": "broken",
                                "inputSchema": {
                                    "type": "object",
                                    "properties": {
                                        "a": {"type": "string", "x-mcp-header": "Dup"},
                                        "b": {"type": "string", "x-mcp-header": "dup"},
                                    },
                                },
                            },
                        ],
                    },
                )
            )
        elif method == "tools/call":
            self.calls.append(req)
            if self.cut_first and len(self.calls) == 1:
                await reply.sse_start()
                await reply.cut()
            if self.hold:
                await reply.sse_start()
                try:
                    while True:
                        await trio.sleep(0.02)
                        await reply.body(b": keep-alive\n")
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    self.stream_closed.set()
                    return
            await reply.sse_start()
            await reply.event(
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
            )
            await reply.event(result(req, {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}))
            await reply.end()
        elif method == "subscriptions/listen":
            self.listens.append(req)
            tag = {"_meta": {"io.modelcontextprotocol/subscriptionId": msg["id"]}}
            await reply.sse_start()
            await reply.event(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {"notifications": msg["params"]["notifications"], **tag},
                }
            )
            if len(self.listens) == 1:
                await reply.cut()
            await reply.event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": tag})
            await trio.sleep_forever()
        else:
            await reply.json({"jsonrpc": "2.0", "id": msg.get("id"), "error": {"code": -32601, "message": "nope"}}, 404)


async def test_stateless_request_metadata_headers(kind: str) -> None:
    fake = StatelessFake()
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind) as session:
            assert session.era is Era.STATELESS
            tools = await session.list_tools()
            assert [t.name for t in tools] == ["wetter-☀"]  # the invalid one is left out
            args = {
                "region": "us-west1",
                "greeting": "Hello, 世界",
                "count": 42,
                "flag": True,
                "nothing": None,
                "query": "SELECT 1",
            }
            out = await session.call_tool("wetter-☀", args)
            assert out.content[0].text == "ok"  # type: ignore[union-attr]
        call = fake.calls[0]
        assert call.header("mcp-method") == "tools/call"
        name = call.header("mcp-name") or ""
        assert name.startswith("=?base64?") and decode_header(name) == "wetter-☀"
        assert call.header("mcp-param-region") == "us-west1"
        assert call.header("mcp-param-greeting") == "=?base64?SGVsbG8sIOS4lueVjA==?="
        assert call.header("mcp-param-count") == "42"
        assert call.header("mcp-param-flag") == "true"
        assert call.header("mcp-param-absent") is None and call.header("mcp-param-nothing") is None
        assert call.header("mcp-param-query") is None
        for r in server.requests:
            assert r.method == "POST"
            assert r.header("mcp-protocol-version") == "2026-07-28"
            assert r.header("mcp-session-id") is None
            assert r.header("mcp-method") == r.json["method"]


async def test_stateless_broken_stream_reissues_with_a_new_id(kind: str) -> None:
    fake = StatelessFake()
    fake.cut_first = True
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind) as session:
            await session.list_tools()
            out = await session.call_tool("wetter-☀", {"region": "eu"})
            assert out.content[0].text == "ok"  # type: ignore[union-attr]
            await session.call_tool("echo", {})
    first, second = fake.calls[0], fake.calls[1]
    # The session re-issued it: a new id, the very same request otherwise (its headers too).
    assert first.json["id"] != second.json["id"]
    assert {**first.json, "id": None} == {**second.json, "id": None}
    assert first.header("mcp-param-region") == second.header("mcp-param-region") == "eu"


async def test_stateless_listen_stream_broken_is_reissued_and_keeps_its_subscription(kind: str) -> None:
    fake = StatelessFake()
    with trio.fail_after(LIMIT):
        async with (
            serve(fake) as server,
            connect(server.url, kind, reconnect=ReconnectPolicy(initial_delay=0.05)) as session,
        ):
            async with session.listen(tools_list_changed=True) as sub:
                method, _params = await sub.__anext__()
            assert method == "notifications/tools/list_changed"
    first, second = (r.json for r in fake.listens)
    assert first["id"] != second["id"] and sub.id == second["id"]
    assert {**first, "id": None} == {**second, "id": None}


async def test_stateless_cancel_closes_the_stream(kind: str) -> None:
    fake = StatelessFake()
    fake.hold = True
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, connect(server.url, kind) as session:
            with pytest.raises(RequestTimeout):
                await session.call_tool("slow", {}, timeout=0.3)
            await fake.stream_closed.wait()
        assert not posts(server, "notifications/cancelled")


# --------------------------------------------------------------------------- virtual time


class ScriptedResponse:
    def __init__(self, status: int, headers: list[tuple[str, str]], chunks: list[bytes]) -> None:
        self.status, self.headers, self._chunks = status, headers, list(chunks)

    async def read(self) -> bytes:
        await trio.lowlevel.checkpoint()
        return self._chunks.pop(0) if self._chunks else b""

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class ScriptedExecutor:
    """Answers like a handshake server whose GET stream ends at once, every time."""

    def __init__(self) -> None:
        self.gets: list[float] = []

    async def open(self, request: Any, *, sent: Any = None) -> ScriptedResponse:
        if sent is not None:
            sent()
        await trio.lowlevel.checkpoint()
        if request.method == "GET":
            self.gets.append(trio.current_time())
            return ScriptedResponse(200, [("content-type", "text/event-stream")], [b": nothing\n"])
        if request.method == "DELETE":
            return ScriptedResponse(200, [], [])
        msg = json.loads(request.body)
        if msg.get("method") == "initialize":
            body = json.dumps(
                result_obj(
                    msg["id"],
                    {
                        "protocolVersion": HANDSHAKE,
                        "capabilities": {},
                        "serverInfo": {"name": "x", "version": "1"},
                    },
                )
            ).encode()
            return ScriptedResponse(200, [("content-type", "application/json"), ("mcp-session-id", "s")], [body])
        if "id" not in msg:
            return ScriptedResponse(202, [], [])
        if msg.get("method") == "ping":
            await trio.sleep_forever()
        return ScriptedResponse(
            200, [("content-type", "application/json")], [json.dumps(result_obj(msg["id"], {})).encode()]
        )

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def result_obj(rid: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


async def test_standalone_stream_backs_off_and_gives_up(autojump_clock: trio.abc.Clock) -> None:
    executor = ScriptedExecutor()
    policy = ReconnectPolicy(max_failures=4, initial_delay=1.0, max_delay=3.0)
    async with open_http_stream("http://127.0.0.1:9/mcp", executor=executor, reconnect=policy) as stream:
        async with trimcp.open_client(stream, revision=HANDSHAKE):
            await trio.sleep(60)
    gaps = [b - a for a, b in zip(executor.gets, executor.gets[1:])]
    assert len(executor.gets) == 4  # the first try, then until 4 fruitless attempts in a row
    assert [round(g, 3) for g in gaps] == [1.0, 2.0, 3.0]
    assert any("gave up the standalone GET stream" in i for i in stream.issues)


async def test_post_deadline_in_virtual_time(autojump_clock: trio.abc.Clock) -> None:
    executor = ScriptedExecutor()
    async with open_http_stream(
        "http://127.0.0.1:9/mcp", executor=executor, post_timeout=5.0, standalone_stream=False
    ) as stream:
        async with trimcp.open_client(stream, revision=HANDSHAKE, timeouts=trimcp.Timeouts(request=None)) as session:
            start = trio.current_time()
            with pytest.raises(TransportError, match="within 5.0 s"):
                await session.ping()
            assert trio.current_time() - start == pytest.approx(5.0)


class PacedExecutor(ScriptedExecutor):
    """Takes ``delays[method]`` seconds to put a POST on the wire; logs when each began and left."""

    def __init__(self, delays: dict[str, float]) -> None:
        super().__init__()
        self.delays = delays
        self.log: list[tuple[str, str, float]] = []
        self.cancelled: list[str] = []

    async def open(self, request: Any, *, sent: Any = None) -> ScriptedResponse:
        if request.method != "POST":
            return await super().open(request, sent=sent)
        method = json.loads(request.body).get("method", "")
        self.log.append(("open", method, trio.current_time()))
        await trio.sleep(self.delays.get(method, 0.0))
        self.log.append(("sent", method, trio.current_time()))
        try:
            return await super().open(request, sent=sent)
        except trio.Cancelled:
            self.cancelled.append(method)
            raise


async def test_messages_leave_in_order_without_the_caller_waiting(autojump_clock: trio.abc.Clock) -> None:
    from trimcp._sansio import jsonrpc as rpc

    names = [f"notifications/n{i}" for i in range(8)]
    executor = PacedExecutor({names[0]: 3.0, names[3]: 2.0})
    async with open_http_stream("http://127.0.0.1:9/mcp", executor=executor, standalone_stream=False) as stream:
        async with trimcp.open_client(stream, revision=HANDSHAKE):
            start = trio.current_time()
            for name in names:
                await stream.send(rpc.Notification(method=name))
            assert trio.current_time() == start  # no send waited for its POST to leave
            await trio.sleep(10)
    posted = [(kind, m, t) for kind, m, t in executor.log if m in names]
    assert [m for kind, m, _ in posted if kind == "open"] == names
    # Each POST began only once the one before it was on the wire.
    began = {m: t for kind, m, t in posted if kind == "open"}
    left = {m: t for kind, m, t in posted if kind == "sent"}
    for before, after in itertools.pairwise(names):
        assert began[after] >= left[before]
    assert left[names[-1]] == pytest.approx(start + 5.0)


async def test_a_cancellation_sent_right_after_its_request_frees_the_exchange(
    autojump_clock: trio.abc.Clock,
) -> None:
    from trimcp._sansio import jsonrpc as rpc
    from trimcp._trio.stream import meta_for

    executor = PacedExecutor({"ping": 1.0})
    async with open_http_stream("http://127.0.0.1:9/mcp", executor=executor, standalone_stream=False) as stream:
        async with trimcp.open_client(stream, revision=HANDSHAKE):
            # The request's exchange has not even started when the cancellation is sent.
            await stream.send(rpc.Request(id="x-1", method="ping"))
            # Hand-written: its meta names the request it cancels (the transport reads no payload).
            cancel = rpc.Notification(method="notifications/cancelled", params={"requestId": "x-1"})
            await stream.send(cancel, meta_for(cancel))
            await trio.sleep(5)
            assert executor.cancelled == ["ping"]  # its POST, waiting for an answer, was let go
    methods = [m for kind, m, _ in executor.log if kind == "open"]
    assert methods.index("ping") < methods.index("notifications/cancelled")


# --------------------------------------------------------------------------- real peers


@asynccontextmanager
async def running(argv: list[str], port: int, env: dict[str, str] | None = None) -> AsyncIterator[None]:
    import subprocess

    from peers import peer_env

    process = await trio.lowlevel.open_process(
        argv,
        env=env or peer_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(30):
            while True:
                try:
                    probe = await trio.open_tcp_stream("127.0.0.1", port)
                except OSError:
                    await trio.sleep(0.1)
                    continue
                await probe.aclose()
                break
        yield
    finally:
        with trio.CancelScope(shield=True):
            process.terminate()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


@pytest.mark.parametrize("revision", [HANDSHAKE, "2026-07-28"])
async def test_a_server_killed_mid_call_fails_the_call_at_once(kind: str, revision: str) -> None:
    """``trimcp serve --http`` dies while a slow tool runs: the call fails with a
    TransportError within 2 s.  Reconnecting (to resume, or to re-issue) is refused,
    which means the server is gone - no back-off ladder against a closed port."""
    import subprocess

    from peers import peer_env

    port = free_port()
    argv = [sys.executable, "-c", "from trimcp.cli import main; main()", "serve", "--http", f"127.0.0.1:{port}"]
    process = await trio.lowlevel.open_process(
        argv, env=peer_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with trio.fail_after(30):
            while True:
                try:
                    probe = await trio.open_tcp_stream("127.0.0.1", port)
                except OSError:
                    await trio.sleep(0.05)
                    continue
                await probe.aclose()
                break
        with trio.fail_after(LIMIT):
            async with connect(f"http://127.0.0.1:{port}/mcp", kind, revision=revision) as session:
                in_flight = trio.Event()
                outcome: list[BaseException] = []

                async def slow_call() -> None:
                    try:
                        await session.call_tool(
                            "slow", {"seconds": 60, "steps": 600}, on_progress=lambda e: in_flight.set()
                        )
                    except Exception as exc:
                        outcome.append(exc)

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(slow_call)
                    await in_flight.wait()
                    process.kill()
                    killed = time.monotonic()
                    with trio.fail_after(2):
                        while not outcome:
                            await trio.sleep(0.01)
                    took = time.monotonic() - killed
                assert isinstance(outcome[0], TransportClosed), outcome  # like a dead stdio server
                assert "refused" in str(outcome[0]) or "cannot connect" in str(outcome[0]), outcome
                assert took < 2
    finally:
        with trio.CancelScope(shield=True):
            process.kill()
            await process.wait()


async def _elicit(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.integration
@pytest.mark.parametrize("revision", [None, HANDSHAKE])
async def test_official_sdk_server_streamable_http(kind: str, revision: str | None) -> None:
    import peers

    port = free_port()
    argv = peers.require(peers.sdk_server_argv("streamable-http", port), "the mcp SDK")
    with trio.fail_after(90):
        async with running(argv, port):
            url = f"http://127.0.0.1:{port}/mcp"
            async with connect(url, kind, revision=revision, handlers=Handlers(elicitation=_elicit)) as session:
                assert session.era is (Era.STATELESS if revision is None else Era.HANDSHAKE)
                assert (await session.call_tool("echo", {"text": "hi"})).content[0].text == "hi"  # type: ignore[union-attr]
                asked = await session.call_tool("ask_name", {})
                assert asked.content[0].text == "hello Ada"  # type: ignore[union-attr]
                steps: list[float] = []
                done = await session.call_tool("progress", {"steps": 3}, on_progress=lambda e: steps.append(e.progress))
                assert done.content[0].text == "done 3" and steps == [1, 2, 3]  # type: ignore[union-attr]
                big = await session.call_tool("big", {"size": 10_000_000})
                assert len(big.content[0].text) == 10_000_000  # type: ignore[union-attr]


@pytest.mark.integration
async def test_official_sdk_server_legacy_sse(kind: str) -> None:
    import peers

    port = free_port()
    argv = peers.require(peers.sdk_server_argv("sse", port), "the mcp SDK")
    with trio.fail_after(60):
        async with running(argv, port):
            async with connect(f"http://127.0.0.1:{port}/sse", kind, handlers=Handlers(elicitation=_elicit)) as session:
                assert session.stream.mode is Mode.LEGACY_SSE  # type: ignore[attr-defined]
                assert (await session.call_tool("echo", {"text": "hi"})).content[0].text == "hi"  # type: ignore[union-attr]
                asked = await session.call_tool("ask_name", {})
                assert asked.content[0].text == "hello Ada"  # type: ignore[union-attr]


@pytest.mark.integration
@pytest.mark.parametrize(("transport", "path"), [("streamableHttp", "/mcp"), ("sse", "/sse")])
async def test_server_everything_over_http(transport: str, path: str) -> None:
    import peers

    port = free_port()
    argv = peers.require(peers.everything_http_argv(transport), "server-everything")  # type: ignore[arg-type]
    with trio.fail_after(60):
        async with running(argv, port, peers.everything_http_env(port)):
            async with connect(f"http://127.0.0.1:{port}{path}", "pool") as session:
                names = [t.name for t in await session.list_tools()]
                assert "echo" in names
                out = await session.call_tool("echo", {"message": "hi"})
                assert "hi" in out.content[0].text  # type: ignore[union-attr]


async def test_open_client_accepts_a_url(kind: str) -> None:
    fake = McpFake()
    with trio.fail_after(LIMIT):
        async with serve(fake) as server, httpx.AsyncClient() as http_client:
            http = trimcp.HttpOptions(headers={"X-App": "t"}, http_client=http_client if kind == "httpx" else None)
            async with trimcp.open_client(server.url, http=http) as session:
                await session.ping()
        assert posts(server, "ping")[0].header("x-app") == "t"
