"""The WebSocket server's limits: connection cap, idle timeout, message size, handshake deadline.

Real sockets on 127.0.0.1.  They do not advance with ``autojump_clock`` (it would jump
to the next deadline whenever every task waits on the network, see test_websocket.py),
so the limits here are short real timeouts, well under 2 s each.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import h11
import pytest
import trio
from repo_paths import REPO

from trimcp._errors import ConnectError
from trimcp._sansio import jsonrpc
from trimcp._trio._groups import collapse
from trimcp._trio.client import open_client
from trimcp._trio.http_limits import OVERLOAD_RESPONSE
from trimcp._trio.transports.websocket import (
    DEFAULT_MAX_MESSAGE_SIZE,
    WebSocketClosed,
    WebSocketStream,
    open_websocket_stream,
)
from trimcp.cli.serve import DEFAULT_MAX_MESSAGE_SIZE as CLI_MAX_MESSAGE
from trimcp.cli.serve import add_serve_arguments, limit_options, ws_limit_options
from trimcp.server import Context, Server
from trimcp.server.transports.websocket import IDLE_REASON, WebSocketListener, serve_websocket

ROOT = REPO
PING = jsonrpc.Request(1, "ping")
UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    b"Sec-WebSocket-Protocol: mcp\r\n"
)


@pytest.fixture(autouse=True)
def no_leaked_sockets() -> Iterator[None]:
    yield
    gc.collect()


def napping_server() -> Server:
    server = Server("ws-limits-test", "1")

    @server.tool
    async def nap(ctx: Context, seconds: float) -> str:
        """Sleep without a word (no progress, no log): the connection carries nothing meanwhile."""
        await trio.sleep(seconds)
        return "rested"

    return server


@asynccontextmanager
async def mcp_server(**kwargs: Any) -> AsyncIterator[WebSocketListener]:
    with collapse():
        async with trio.open_nursery() as nursery:
            listener = await nursery.start(partial(serve_websocket, napping_server(), **kwargs))
            yield listener
            nursery.cancel_scope.cancel()


async def read_until_closed(tcp: trio.SocketStream, limit: float) -> bytes:
    """Everything the server sends until it closes the connection (fails after ``limit`` s)."""
    got = b""
    with trio.fail_after(limit):
        while data := await tcp.receive_some(65536):
            got += data
    return got


async def ping(stream: WebSocketStream) -> None:
    await stream.send(PING)
    with trio.fail_after(2):
        await stream.receive()


# ---------------------------------------------------------------- connection cap


async def test_over_the_cap_gets_503_the_others_keep_working_and_a_slot_is_reused() -> None:
    async with (
        mcp_server(max_connections=2) as listener,
        open_websocket_stream(listener.url) as first,
    ):
        async with open_websocket_stream(listener.url) as second:
            await ping(second)
            # A third: refused before its request is read, with a reason and a retry hint.
            tcp = await trio.open_tcp_stream("127.0.0.1", listener.port)
            async with tcp:
                await tcp.send_all(UPGRADE + b"\r\n")
                answer = await read_until_closed(tcp, 3)
            assert answer.startswith(b"HTTP/1.1 503 ")
            assert b"retry-after: 1\r\n" in answer.lower()
            with pytest.raises(ConnectError, match="HTTP 503"):
                async with open_websocket_stream(listener.url):
                    pytest.fail("connected over the cap")  # pragma: no cover
            await ping(first)  # the connections already open are untouched
        # ``second`` closed: its slot is free again (once its close completes).
        with trio.fail_after(2):
            while True:
                try:
                    async with open_websocket_stream(listener.url) as third:
                        await ping(third)
                        break
                except ConnectError:
                    await trio.sleep(0.02)
        await ping(first)


async def test_a_connection_still_in_its_handshake_holds_a_slot() -> None:
    async with mcp_server(max_connections=1, handshake_timeout=5) as listener:
        slow = await trio.open_tcp_stream("127.0.0.1", listener.port)
        async with slow:
            await slow.send_all(UPGRADE)  # the head never ends
            await trio.sleep(0.1)
            with pytest.raises(ConnectError, match="HTTP 503"):
                async with open_websocket_stream(listener.url):
                    pytest.fail("connected over the cap")  # pragma: no cover


def test_the_503_parses_exactly() -> None:
    """A strict client (h11, wsproto's handshake) reads the 503 to its end and nothing more."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(OVERLOAD_RESPONSE)
    client.receive_data(b"")
    events = []
    while (event := client.next_event()) is not h11.PAUSED:
        events.append(type(event))
        if isinstance(event, h11.ConnectionClosed):
            break
    assert events == [h11.Response, h11.Data, h11.EndOfMessage, h11.ConnectionClosed]


def test_the_cap_must_be_positive() -> None:
    async def main() -> None:
        async with mcp_server(max_connections=0):
            pytest.fail("served")  # pragma: no cover

    with pytest.raises(ValueError, match="max_connections"):
        trio.run(main)


# ---------------------------------------------------------------- idle timeout


async def test_an_idle_connection_is_closed_with_1001_after_the_timeout() -> None:
    async with (
        mcp_server(session_idle_timeout=0.5) as listener,
        open_websocket_stream(listener.url) as stream,
    ):
        began = trio.current_time()
        await trio.sleep(0.3)
        await ping(stream)  # a message each way restarts the clock
        pinged = trio.current_time()
        with trio.fail_after(2), pytest.raises(WebSocketClosed) as closed:
            await stream.receive()
        waited = trio.current_time() - pinged
    assert (closed.value.code, closed.value.reason) == (1001, IDLE_REASON)
    assert 0.45 <= waited < 1.5
    assert trio.current_time() - began >= 0.75  # the ping did restart it


async def test_a_connection_with_a_slow_tool_call_outstanding_is_not_idle() -> None:
    async with (
        mcp_server(session_idle_timeout=0.4) as listener,
        open_websocket_stream(listener.url) as stream,
        open_client(stream) as client,
    ):
        with trio.fail_after(5):
            result = await client.call_tool("nap", {"seconds": 1.2})
        assert result.content[0].text == "rested"  # type: ignore[union-attr]
        assert stream.closed is None
        answered = trio.current_time()
        with trio.fail_after(2):
            while stream.closed is None:  # idle again now: closed after the timeout
                await trio.sleep(0.02)
        assert stream.closed == (1001, IDLE_REASON)
        assert trio.current_time() - answered >= 0.35


async def test_no_idle_timeout_when_none() -> None:
    async with (
        mcp_server(session_idle_timeout=None) as listener,
        open_websocket_stream(listener.url) as stream,
    ):
        await trio.sleep(1.0)
        await ping(stream)


# ---------------------------------------------------------------- message size


async def test_an_oversize_message_closes_with_1009() -> None:
    async with (
        mcp_server(max_message_size=1024) as listener,
        open_websocket_stream(listener.url) as stream,
    ):
        await ping(stream)  # a small one is fine
        big = jsonrpc.Request(2, "ping", {"pad": "x" * 2000})
        await stream.send(big)
        with trio.fail_after(2), pytest.raises(WebSocketClosed) as closed:
            await stream.receive()
    assert closed.value.code == 1009


# ---------------------------------------------------------------- handshake deadline


async def test_a_half_sent_handshake_is_dropped_after_the_deadline() -> None:
    async with mcp_server(handshake_timeout=0.5) as listener:
        tcp = await trio.open_tcp_stream("127.0.0.1", listener.port)
        async with tcp:
            began = trio.current_time()
            await tcp.send_all(UPGRADE)  # no blank line: the head never ends
            assert await read_until_closed(tcp, 2) == b""
            assert trio.current_time() - began >= 0.45
        # ...and the deadline does not touch a client that finishes in time.
        async with open_websocket_stream(listener.url) as stream:
            await trio.sleep(0.7)
            await ping(stream)


async def test_a_rejected_client_that_keeps_its_socket_open_is_dropped() -> None:
    async with mcp_server(max_connections=1) as listener:
        tcp = await trio.open_tcp_stream("127.0.0.1", listener.port)
        async with tcp:
            await tcp.send_all(UPGRADE + b"Origin: https://evil.example\r\n\r\n")
            answer = await read_until_closed(tcp, 3)  # we never hang up: the server must
        assert answer.startswith(b"HTTP/1.1 403 ")
        async with open_websocket_stream(listener.url) as stream:  # and its slot is free
            await ping(stream)


# ---------------------------------------------------------------- the CLI


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="trimcp serve")
    add_serve_arguments(parser)
    return parser.parse_args(argv)


def test_cli_limit_flags_reach_serve_websocket() -> None:
    ns = parse(
        [
            "--ws",
            "127.0.0.1:0",
            "--header-timeout",
            "3",
            "--idle-timeout",
            "9",
            "--max-connections",
            "5",
            "--max-message",
            "2M",
        ]
    )
    assert ws_limit_options(ns) == {
        "handshake_timeout": 3.0,
        "session_idle_timeout": 9.0,
        "max_connections": 5,
        "max_message_size": 2 * 1024 * 1024,
    }
    # The defaults are those of serve_websocket, and the shared ones those of the HTTP server.
    ws, http = ws_limit_options(parse([])), limit_options(parse([]))
    assert ws["max_message_size"] == CLI_MAX_MESSAGE == DEFAULT_MAX_MESSAGE_SIZE
    assert ws["handshake_timeout"] == http["header_timeout"] == 10.0
    assert ws["session_idle_timeout"] == http["session_idle_timeout"] == 3600.0
    assert ws["max_connections"] == http["max_connections"] == 1000


@pytest.mark.parametrize("argv", [["--max-message", "12Q"], ["--max-message", "0"], ["--idle-timeout", "never"]])
def test_bad_ws_limit_values_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse(["--ws", "127.0.0.1:0", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "error: argument " + argv[0] in err and "Traceback" not in err


def test_help_documents_the_ws_limits() -> None:
    parser = argparse.ArgumentParser(prog="trimcp serve")
    add_serve_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert "WebSocket limits (--ws)" in text and "--max-message BYTES" in text
    assert "limits (--http, --sse and --ws)" in text


async def test_the_real_cli_serves_websocket_with_the_limits() -> None:
    """``trimcp serve --ws`` with tight limits: each holds, end to end."""
    proc = await trio.lowlevel.open_process(
        [
            sys.executable,
            "-m",
            "trimcp",
            "serve",
            "--ws",
            "127.0.0.1:0",
            "--max-connections",
            "1",
            "--idle-timeout",
            "0.6",
            "--max-message",
            "1K",
            "--header-timeout",
            "0.5",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stderr is not None
        seen = b""
        with trio.fail_after(20):
            while b"ws://" not in seen or not seen.endswith(b"\n"):
                chunk = await proc.stderr.receive_some(4096)
                assert chunk, seen
                seen += chunk
        url = seen.decode().rsplit(" at ", 1)[1].strip()
        started = time.monotonic()
        port = int(url.rsplit(":", 1)[1].strip("/"))
        tcp = await trio.open_tcp_stream("127.0.0.1", port)
        async with tcp:
            await tcp.send_all(UPGRADE)
            assert await read_until_closed(tcp, 3) == b""  # --header-timeout 0.5
        async with open_websocket_stream(url) as stream:
            await ping(stream)
            with pytest.raises(ConnectError, match="HTTP 503"):  # --max-connections 1
                async with open_websocket_stream(url):
                    pytest.fail("connected over the cap")  # pragma: no cover
            await stream.send(jsonrpc.Request(2, "ping", {"pad": "x" * 2000}))
            with trio.fail_after(2), pytest.raises(WebSocketClosed) as closed:
                await stream.receive()
            assert closed.value.code == 1009  # --max-message 1K
        with trio.fail_after(3):
            while True:  # the slot comes back once the server has closed the connection
                try:
                    async with open_websocket_stream(url) as stream:
                        with trio.fail_after(3), pytest.raises(WebSocketClosed) as closed:
                            await stream.receive()
                        assert closed.value.code == 1001  # --idle-timeout 0.6
                        break
                except ConnectError:
                    await trio.sleep(0.05)
        assert time.monotonic() - started < 10
    finally:
        proc.terminate()
        with trio.move_on_after(5):
            await proc.wait()
        if proc.returncode is None:  # pragma: no cover
            proc.kill()
            await proc.wait()
        if proc.stderr is not None:
            await proc.stderr.aclose()
