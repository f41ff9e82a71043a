"""The HTTP server's limits under abuse: each one acts, and a fresh client is still served.

The server runs in the test's nursery on 127.0.0.1 (an ephemeral port).  The
abusive peers are raw TCP sockets (a slow-loris cannot be written with an
HTTP client); the fresh client is ``trimcp.open_client`` + ``list_tools``.
Timeouts run on trio's ``autojump_clock``: loopback bytes are in the peer's
buffer once ``send`` returns, so the clock only jumps when every task truly
waits, and the timings asserted are virtual seconds.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import trio
from repo_paths import REPO

from trimcp import open_client
from trimcp._sansio import jsonrpc as rpc
from trimcp._trio.http1.server import serve_connection
from trimcp._trio.http_limits import BodyBudget, ConnectionLimit, SlotStream
from trimcp.cli.serve import add_serve_arguments, limit_options, parse_size
from trimcp.reference.server import build_server
from trimcp.server import Context, Server
from trimcp.server.transports.http.app import BoundHttpServer, serve_http

LATEST = "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream"}


async def start(nursery: trio.Nursery, server: Server | None = None, **options: Any) -> BoundHttpServer:
    bound: BoundHttpServer = await nursery.start(
        lambda task_status: serve_http(server or build_server(), task_status=task_status, **options)
    )
    return bound


async def fresh_client_works(bound: BoundHttpServer) -> None:
    with trio.fail_after(20):
        async with open_client(bound.url, revision=LATEST) as client:
            assert await client.list_tools()


async def read_all(stream: trio.SocketStream, limit: float = 120) -> bytes:
    """Everything the server sends until it closes (bounded in time)."""
    data = b""
    with trio.fail_after(limit):
        while True:
            try:
                part = await stream.receive_some(65536)
            except trio.BrokenResourceError:
                return data
            if not part:
                return data
            data += part


async def until(condition: Callable[[], bool], limit: float = 60) -> None:
    """Wait (bounded) for the server to reach a state the test can see."""
    with trio.fail_after(limit):
        while not condition():
            await trio.sleep(0.01)


def post_head(length: int | None, *, port: int) -> bytes:
    framing = "transfer-encoding: chunked" if length is None else f"content-length: {length}"
    return (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\n{framing}\r\n\r\n"
    ).encode()


# ---------------------------------------------------------------- header and idle timeouts


async def test_slow_loris_head_is_cut_at_the_header_deadline(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    bound = await start(nursery, header_timeout=10.0)
    stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
    began = trio.current_time()
    closed_at: list[float] = []

    async def drip() -> None:
        # One byte a second, forever: a deadline renewed per byte would never fire.
        for byte in b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-padding: " + b"a" * 100:
            try:
                await stream.send_all(bytes([byte]))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            await trio.sleep(1)

    async with trio.open_nursery() as inner:
        inner.start_soon(drip)
        answer = await read_all(stream)
        closed_at.append(trio.current_time() - began)
        inner.cancel_scope.cancel()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"connection: close" in answer.lower()
    assert 10.0 <= closed_at[0] < 12.5  # the deadline, plus the bounded linger
    await stream.aclose()
    await fresh_client_works(bound)


async def test_silent_connection_is_closed_at_the_header_deadline(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    bound = await start(nursery, header_timeout=5.0)
    stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
    began = trio.current_time()
    assert await read_all(stream) == b""  # nothing began: nothing to answer
    assert 5.0 <= trio.current_time() - began < 6.0
    await stream.aclose()
    await fresh_client_works(bound)


async def test_idle_keep_alive_connection_has_its_own_timeout(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    bound = await start(nursery, header_timeout=5.0, connection_idle_timeout=30.0)
    stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
    await stream.send_all(f"GET /nowhere HTTP/1.1\r\nhost: 127.0.0.1:{bound.port}\r\n\r\n".encode())
    first = b""
    while not first.endswith(b"/nowhere\n"):  # the whole plain-text answer
        first += await stream.receive_some(65536)
    assert first.startswith(b"HTTP/1.1 404 "), first
    began = trio.current_time()
    assert await read_all(stream) == b""
    # Closed by the keep-alive idle timeout, not by the (shorter) header deadline.
    assert 30.0 <= trio.current_time() - began < 31.0
    await stream.aclose()
    await fresh_client_works(bound)


# ---------------------------------------------------------------- connections


async def test_connections_over_the_cap_get_503_and_freed_slots_are_reused(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    bound = await start(nursery, max_connections=6, header_timeout=30.0)
    with trio.fail_after(20):
        async with open_client(bound.url, revision=LATEST) as client:
            await client.list_tools()
            held: list[trio.SocketStream] = []
            refused = b""
            while len(held) < 10:
                stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
                await stream.send_all(b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # never ends
                with trio.move_on_after(0.5):
                    refused = await read_all(stream)
                if refused:
                    await stream.aclose()
                    break
                held.append(stream)
            assert refused.startswith(b"HTTP/1.1 503 ")
            assert b"connection: close" in refused.lower()
            assert bound.app.connections.open <= 6 and bound.app.connections.refused >= 1
            # The session already open keeps working at the cap.
            assert await client.list_tools()
            for stream in held:
                await stream.aclose()
        await until(lambda: bound.app.connections.open == 0)
    await fresh_client_works(bound)


# ---------------------------------------------------------------- sessions


async def open_session(client: httpx.AsyncClient, url: str) -> dict[str, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    r = await client.post(url, json=init, headers=ACCEPT)
    assert r.status_code == 200, r.text
    headers = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": LATEST}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post(url, json=note, headers=headers)).status_code == 202
    return headers


async def ping(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> int:
    r = await client.post(url, json={"jsonrpc": "2.0", "id": 7, "method": "ping"}, headers=headers)
    return r.status_code


async def test_session_cap_evicts_the_least_recently_active_session(nursery: trio.Nursery) -> None:
    bound = await start(nursery, max_sessions=2)
    with trio.fail_after(20):
        async with httpx.AsyncClient() as client:
            a = await open_session(client, bound.url)
            b = await open_session(client, bound.url)
            assert await ping(client, bound.url, a) == 200  # a is now more recent than b
            c = await open_session(client, bound.url)
            assert len(bound.app.sessions) == 2
            assert await ping(client, bound.url, b) == 404  # evicted, as if deleted
            assert await ping(client, bound.url, a) == 200
            assert await ping(client, bound.url, c) == 200
    await fresh_client_works(bound)  # itself evicts the oldest idle session
    assert len(bound.app.sessions) <= 2


async def test_an_open_get_stream_does_not_protect_a_session_at_the_cap(nursery: trio.Nursery) -> None:
    # (A stream is cheap to reopen; the cap must hold against clients that open one and walk away.)
    bound = await start(nursery, max_sessions=1)
    with trio.fail_after(20):
        async with httpx.AsyncClient(timeout=20) as client:
            a = await open_session(client, bound.url)
            async with client.stream("GET", bound.url, headers=a) as listening:
                assert listening.status_code == 200
                (session,) = bound.app.sessions.values()
                await until(lambda: session.standalone.attached)
                b = await open_session(client, bound.url)
                assert await ping(client, bound.url, a) == 404
                assert await ping(client, bound.url, b) == 200


async def test_session_cap_with_every_session_busy_refuses_initialize(
    nursery: trio.Nursery,
) -> None:
    server = build_server()
    release = trio.Event()

    @server.tool()
    async def hold(ctx: Context) -> str:
        """Stay in flight until the test lets go."""
        await release.wait()
        return "released"

    bound = await start(nursery, server, max_sessions=1)
    with trio.fail_after(20):
        async with httpx.AsyncClient(timeout=20) as client:
            a = await open_session(client, bound.url)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hold", "arguments": {}}}
            answers: list[httpx.Response] = []

            async def in_flight() -> None:
                answers.append(await client.post(bound.url, json=call, headers={**a, "accept": "application/json"}))

            async with trio.open_nursery() as inner:
                inner.start_soon(in_flight)
                (session,) = bound.app.sessions.values()
                await until(lambda: bool(session.exchanges))
                init = {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LATEST,
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
                r = await client.post(bound.url, json=init, headers=ACCEPT)
                assert r.status_code == 503
                assert r.json()["error"]["code"] == -32603 and r.json()["id"] == 9
                release.set()
            assert answers[0].status_code == 200
    # Once nothing is in flight, the idle session makes room for a fresh client.
    await fresh_client_works(bound)


async def test_idle_sessions_expire(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    bound = await start(nursery, session_idle_timeout=100.0)
    async with httpx.AsyncClient() as client:
        headers = await open_session(client, bound.url)
        await trio.sleep(50)
        assert await ping(client, bound.url, headers) == 200  # activity renews it
        await trio.sleep(90)
        assert await ping(client, bound.url, headers) == 200
        await trio.sleep(200)
        assert await ping(client, bound.url, headers) == 404
    await fresh_client_works(bound)


# ---------------------------------------------------------------- bodies


async def test_oversize_content_length_is_refused_before_the_body(nursery: trio.Nursery) -> None:
    bound = await start(nursery, max_body_size=1000)
    with trio.fail_after(10):
        stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
        # The head alone: a server that reads the body first would wait for it.
        await stream.send_all(post_head(100 * 1024 * 1024, port=bound.port))
        answer = await read_all(stream)
        await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b'"code":-32600' in answer.replace(b" ", b"")
    await fresh_client_works(bound)


async def test_malformed_heads_get_their_status_and_close(nursery: trio.Nursery) -> None:
    """The codec's refusals reach the client with their status (RFC 6585 431, RFC 9110 505 and 501)."""
    bound = await start(nursery)
    for raw, status in [
        (b"POST /mcp HTTP/1.1\r\nhost: x\r\nx-pad: " + b"a" * 20_000 + b"\r\n\r\n", b"431"),
        (b"POST /mcp HTTP/3.0\r\nhost: x\r\n\r\n", b"505"),
        (b"POST /mcp HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n\r\n", b"501"),
        (b"POST /mcp HTTP/1.1\r\nhost: x\r\nx-a: 1\r\n  folded\r\n\r\n", b"400"),
    ]:
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
            await stream.send_all(raw)
            answer = await read_all(stream)
            await stream.aclose()
        assert answer.startswith(b"HTTP/1.1 " + status + b" "), answer[:80]
        assert b"connection: close" in answer.lower()
    await fresh_client_works(bound)


async def test_chunked_body_is_cut_at_the_cap(nursery: trio.Nursery) -> None:
    bound = await start(nursery, max_body_size=1000)
    with trio.fail_after(10):
        stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
        await stream.send_all(post_head(None, port=bound.port))
        for _ in range(3):  # 1200 bytes, and no end: the cap must act as it streams
            await stream.send_all(b"190\r\n" + b"x" * 400 + b"\r\n")
        answer = await read_all(stream)
        await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert bound.app.body_budget.used == 0
    await fresh_client_works(bound)


async def test_bodies_share_one_budget(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    bound = await start(nursery, max_body_size=10_000, max_body_budget=40_000, body_timeout=20.0)
    budget = bound.app.body_budget
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'.ljust(10_000)
    cost = rpc.parse_cost(body)
    assert 30_000 < cost <= 40_000  # more than the 3 copies reserved up front, fits alone
    first = await trio.open_tcp_stream("127.0.0.1", bound.port)
    # Before a byte is read a body reserves 3 copies of its length (30000), and it settles
    # on what parsing it costs (``parse_cost``) once it is read.
    await first.send_all(post_head(10_000, port=bound.port) + body[:10])
    await until(lambda: budget.used == 30_000)
    second = await trio.open_tcp_stream("127.0.0.1", bound.port)
    await second.send_all(post_head(10_000, port=bound.port) + body)  # does not fit: waits
    with trio.move_on_after(5):
        assert await second.receive_some(65536) == b""  # pragma: no cover - must not answer yet
    assert budget.used == 30_000
    await first.send_all(body[10:])  # the first body completes and is served: room
    assert (await read_all(second)).split(b"\r\n", 1)[0] != b"HTTP/1.1 503 Service Unavailable"
    await first.aclose()
    await until(lambda: budget.used == 0)  # the second is served, its bytes given back
    assert budget.peak == 30_000 + (cost - 30_000)  # one settled body at a time, no more
    # A body that never gets room is refused with 503 when its deadline passes.  (The room
    # is held here, not by another body: that one's own deadline would pass first.)
    await budget.reserve(10_001)
    fourth = await trio.open_tcp_stream("127.0.0.1", bound.port)
    began = trio.current_time()
    await fourth.send_all(post_head(10_000, port=bound.port) + body)
    answer = await read_all(fourth)
    assert answer.startswith(b"HTTP/1.1 503 "), answer
    assert 20.0 <= trio.current_time() - began < 22.0
    budget.release(10_001)
    assert budget.peak <= 40_000
    for stream in (second, fourth):
        await stream.aclose()
    await fresh_client_works(bound)


async def test_a_body_that_takes_more_than_the_budget_to_parse_is_413(nursery: trio.Nursery) -> None:
    bound = await start(nursery, max_body_size=10_000, max_body_budget=40_000)
    budget = bound.app.body_budget
    # 10000 bytes of "{}," parse into ~3300 dicts: about 24 times the size, more than the budget.
    dense = (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[' + b"{}," * 3400)[:9_995] + b"{}]}}"
    assert len(dense) == 10_000 and rpc.parse_cost(dense) > 40_000
    with trio.fail_after(10):
        stream = await trio.open_tcp_stream("127.0.0.1", bound.port)
        await stream.send_all(post_head(len(dense), port=bound.port) + dense)
        answer = await read_all(stream)
        await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 413 "), answer
    assert b"body budget" in answer
    assert budget.used == 0 and budget.peak <= 40_000
    await fresh_client_works(bound)


async def test_budget_is_fifo_and_a_cancelled_waiter_gives_way() -> None:
    budget = BodyBudget(100)
    await budget.reserve(80)
    order: list[str] = []

    async def want(name: str, amount: int) -> None:
        await budget.reserve(amount)
        order.append(name)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(want, "big", 60)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(want, "small", 10)  # fits now, but the big one came first
        await trio.testing.wait_all_tasks_blocked()
        assert order == [] and budget.used == 80
        with trio.move_on_after(0):
            await budget.reserve(5)  # gives up at once, and holds nothing
        budget.release(80)  # room for both, granted in order
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(order) == ["big", "small"] and budget.used == 70
    budget.release(70)
    assert budget.used == 0 and budget.peak == 80


async def test_a_holder_tops_up_at_once_when_it_fits_even_past_waiters() -> None:
    """A body settling on its parse cost takes the rest without waiting when it fits (a holder
    goes before newcomers, as ``top_up`` does), and is told no, holding nothing more, when not."""
    budget = BodyBudget(100)
    assert budget.try_reserve(50)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(budget.reserve, 60)  # waits: 50 + 60 > 100
        await trio.testing.wait_all_tasks_blocked()
        assert budget.try_top_up(30) and budget.used == 80
        assert not budget.try_top_up(30) and budget.used == 80
        budget.release(80)
    assert budget.used == 60
    budget.release(60)


# ---------------------------------------------------------------- the CLI flags


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="trimcp serve")
    add_serve_arguments(parser)
    return parser.parse_args(argv)


def test_cli_limit_flags_reach_serve_http() -> None:
    ns = parse(
        [
            "--http",
            "127.0.0.1:0",
            "--header-timeout",
            "3",
            "--connection-idle-timeout",
            "7",
            "--idle-timeout",
            "9",
            "--max-connections",
            "5",
            "--max-sessions",
            "4",
            "--max-body",
            "16M",
            "--max-body-budget",
            "1G",
        ]
    )
    assert limit_options(ns) == {
        "header_timeout": 3.0,
        "connection_idle_timeout": 7.0,
        "session_idle_timeout": 9.0,
        "max_connections": 5,
        "max_sessions": 4,
        "max_body_size": 16 * 1024 * 1024,
        "max_body_budget": 1024**3,
    }
    defaults = limit_options(parse([]))
    assert defaults["header_timeout"] == 10.0 and defaults["max_body_budget"] is None


@pytest.mark.parametrize(
    "text, size", [("1048576", 1048576), ("512K", 524288), ("16m", 16 << 20), ("1GiB", 1 << 30), ("1.5M", 1572864)]
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-body", "12Q"],
        ["--max-body", "0"],
        ["--header-timeout", "-1"],
        ["--header-timeout", "soon"],
        ["--max-connections", "0"],
        ["--max-sessions", "1.5"],
    ],
)
def test_bad_limit_values_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse(["--http", "127.0.0.1:0", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "error: argument " + argv[0] in err and "Traceback" not in err


def test_budget_smaller_than_a_body_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from trimcp.cli.serve import run_serve

    ns = parse(["--http", "127.0.0.1:0", "--max-body", "2M", "--max-body-budget", "1M"])
    assert run_serve(ns) == 2
    assert "--max-body-budget" in capsys.readouterr().err
    # A body counts 3 times its size at least (its bytes, the text, the parsed strings).
    ns = parse(["--http", "127.0.0.1:0", "--max-body", "2M", "--max-body-budget", "5M"])
    assert run_serve(ns) == 2
    assert "3 x its size" in capsys.readouterr().err


def test_the_cli_and_the_server_agree_on_what_a_body_counts() -> None:
    from trimcp._trio.http1.server import BODY_COPIES
    from trimcp.cli import serve

    assert serve.PARSE_COPIES == rpc.PARSE_COPIES == BODY_COPIES


def test_the_real_cli_rejects_a_bad_limit_without_a_traceback() -> None:
    import os
    import subprocess
    import sys

    root = REPO
    done = subprocess.run(
        [sys.executable, "-m", "trimcp", "serve", "--http", "127.0.0.1:0", "--max-body", "12Q"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "error: argument --max-body: expected a size" in done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- the slot comes back first


class _Closing(trio.abc.Stream):
    """A stream that notes how many connections its limit counted when it was closed."""

    def __init__(self, limit: ConnectionLimit, eof: bool = True) -> None:
        self.limit = limit
        self.open_at_close: int | None = None
        self.eof = eof

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.lowlevel.checkpoint()

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        return b""  # the client hung up at once

    async def aclose(self) -> None:
        self.open_at_close = self.limit.open
        await trio.lowlevel.checkpoint()


async def test_a_slot_stream_gives_its_slot_back_before_the_socket_closes() -> None:
    """Whoever closes it (trio-websocket closes its stream itself): a client that sees the close
    must find the slot free, even at the cap (a race seen under load before)."""
    limit = ConnectionLimit(1)
    slot = limit.admit()
    assert slot is not None and limit.admit() is None  # at the cap
    inner = _Closing(limit)
    await SlotStream(inner, slot).aclose()
    assert inner.open_at_close == 0
    slot.release()  # a second release gives nothing back twice
    assert limit.open == 0


async def test_serve_connection_releases_before_it_closes() -> None:
    limit = ConnectionLimit(1)
    slot = limit.admit()
    assert slot is not None
    inner = _Closing(limit)

    async def never(*_: Any) -> None:  # pragma: no cover - no request arrives
        raise AssertionError

    await serve_connection(inner, never, max_body=1024, idle_timeout=1.0, on_close=slot.release)
    assert inner.open_at_close == 0 and limit.open == 0
