"""The WebSocket transport: trimcp client <-> trimcp server over 127.0.0.1, and each side
against raw peers (bare trio-websocket, bare TCP) that break the rules on purpose.

Real sockets do not advance with ``autojump_clock`` (it would jump to the ``fail_after``
deadline whenever every task waits on the network), so these tests run in real time.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import logging
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import trio_websocket

from trimcp import Limits
from trimcp._errors import ConnectError, RemoteProtocolError, TransportClosed
from trimcp._sansio import jsonrpc
from trimcp._sansio.revisions import LATEST_HANDSHAKE, Era
from trimcp._trio._groups import collapse
from trimcp._trio.client import open_client
from trimcp._trio.stream import MessageStream
from trimcp._trio.transports.websocket import (
    SUBPROTOCOL,
    WebSocketClosed,
    WebSocketStream,
    _parse_url,
    open_websocket_stream,
)
from trimcp.reference.server import build_server
from trimcp.server import Server
from trimcp.server.transports.websocket import (
    WebSocketListener,
    origin_allowed,
    serve_websocket,
    serve_websocket_streams,
)

PING = jsonrpc.Request(1, "ping")


@pytest.fixture(autouse=True)
def no_leaked_sockets() -> Iterator[None]:
    """Collect garbage after each test, so that an unclosed socket fails the test that leaked it."""
    yield
    gc.collect()


@asynccontextmanager
async def mcp_server(server: Server | None = None, **kwargs: object) -> AsyncIterator[WebSocketListener]:
    with collapse():
        async with trio.open_nursery() as nursery:
            listener = await nursery.start(partial(serve_websocket, server or build_server(), **kwargs))
            yield listener
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def raw_ws_server(
    handler: Callable[[trio_websocket.WebSocketRequest], Awaitable[None]],
) -> AsyncIterator[str]:
    """A bare trio-websocket server: it does whatever ``handler`` does."""
    with collapse():
        async with trio.open_nursery() as nursery:
            server = await nursery.start(trio_websocket.serve_websocket, handler, "127.0.0.1", 0, None)
            yield f"ws://127.0.0.1:{server.port}/mcp"
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def raw_tcp_server(
    handler: Callable[[trio.SocketStream], Awaitable[None]],
) -> AsyncIterator[str]:
    """A bare TCP server, for handshakes no WebSocket library would produce."""
    with collapse():
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
            port = listeners[0].socket.getsockname()[1]
            yield f"ws://127.0.0.1:{port}/mcp"
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def raw_ws_client(
    listener: WebSocketListener, subprotocols: list[str]
) -> AsyncIterator[trio_websocket.WebSocketConnection]:
    """A bare trio-websocket client.  Not ``open_websocket_url``: that one leaves its socket
    open after a rejection or a close by the server (trio-websocket 0.12)."""
    tcp = await trio.open_tcp_stream("127.0.0.1", listener.port)
    try:
        with collapse():
            async with trio.open_nursery() as nursery:
                ws = await trio_websocket.wrap_client_stream(
                    nursery, tcp, f"127.0.0.1:{listener.port}", "/", subprotocols=subprotocols
                )
                try:
                    yield ws
                finally:
                    await ws.aclose()
    finally:
        await tcp.aclose()


async def refused(url: str, match: str, **kwargs: Any) -> ConnectError:
    """Connecting to ``url`` fails with a ``ConnectError`` matching ``match``."""
    with pytest.raises(ConnectError, match=match) as info:
        async with open_websocket_stream(url, **kwargs):
            pytest.fail("connected")  # pragma: no cover
    return info.value


async def read_request(stream: trio.SocketStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some()
        if not chunk:
            break
        data += chunk
    return data


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("revision", [None, LATEST_HANDSHAKE])
async def test_handshake_list_and_call_through_the_reference_server(revision: str | None) -> None:
    with trio.fail_after(10):
        async with mcp_server() as listener:
            assert listener.url == f"ws://127.0.0.1:{listener.port}/"
            async with open_websocket_stream(listener.url) as stream:
                assert isinstance(stream, MessageStream)
                assert stream.subprotocol == SUBPROTOCOL
                async with open_client(stream, revision=revision) as client:
                    if revision is not None:
                        assert client.protocol_version == revision
                    assert client.server_info["name"] == "trimcp-reference"
                    names = {tool.name for tool in await client.list_tools()}
                    assert {"echo", "add", "slow"} <= names
                    echoed = await client.call_tool("echo", {"message": "héllo \u2028 wörld"})
                    assert echoed.content[0].text == "héllo \u2028 wörld"
                    added = await client.call_tool("add", {"a": 2, "b": 3})
                    assert added.structured_content == {"sum": 5}
                assert stream.closed == (1000, None)


async def test_open_client_takes_a_ws_url() -> None:
    with trio.fail_after(10):
        async with mcp_server() as listener, open_client(listener.url) as client:
            assert client.era is Era.STATELESS
            echoed = await client.call_tool("echo", {"message": "by url"})
            assert echoed.content[0].text == "by url"


async def test_concurrent_calls_on_one_connection_and_two_clients() -> None:
    with trio.fail_after(10):
        async with mcp_server() as listener:
            results: dict[tuple[int, int], str] = {}

            async def one_client(c: int) -> None:
                async with (
                    open_websocket_stream(listener.url) as stream,
                    open_client(stream) as client,
                ):

                    async def call(i: int) -> None:
                        result = await client.call_tool("echo", {"message": f"{c}:{i}"})
                        results[c, i] = result.content[0].text

                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(client.call_tool, "slow", {"seconds": 0.2})
                        for i in range(25):
                            nursery.start_soon(call, i)

            async with trio.open_nursery() as nursery:
                for c in range(2):
                    nursery.start_soon(one_client, c)
    assert results == {(c, i): f"{c}:{i}" for c in range(2) for i in range(25)}


async def test_server_shutdown_fails_the_pending_request_with_the_close_code() -> None:
    server_scope = trio.CancelScope()

    async def run_server(task_status: trio.TaskStatus[WebSocketListener]) -> None:
        with server_scope:
            await serve_websocket(build_server(), task_status=task_status)

    async def stop_the_server() -> None:
        await trio.sleep(0.2)
        server_scope.cancel()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            listener = await nursery.start(run_server)
            async with open_websocket_stream(listener.url) as stream, open_client(stream) as client:
                nursery.start_soon(stop_the_server)
                with pytest.raises(TransportClosed) as info:
                    await client.call_tool("slow", {"seconds": 30})
    assert isinstance(info.value, WebSocketClosed)
    assert info.value.code == 1001  # going away: the server was shut down
    assert "peer closed the connection (1001 GOING_AWAY: server shutting down)" in str(info.value)


async def test_leaving_the_client_ends_only_that_session() -> None:
    server = build_server()
    with trio.fail_after(10):
        async with (
            mcp_server(server) as listener,
            open_websocket_stream(listener.url) as first,
            open_client(first) as a,
        ):
            async with open_websocket_stream(listener.url) as second, open_client(second) as b:
                await b.list_tools()
                assert len(server.sessions) == 2
            await a.list_tools()
            with trio.move_on_after(2):
                while len(server.sessions) != 1:
                    await trio.sleep(0.01)
            assert len(server.sessions) == 1


async def test_cancelling_the_client_closes_at_once_with_1000() -> None:
    seen: list[int] = []

    async def handler(stream: WebSocketStream) -> None:
        with pytest.raises(WebSocketClosed) as info:
            while True:
                await stream.receive()
        seen.append(info.value.code)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            listener = await nursery.start(serve_websocket_streams, handler)
            started = trio.current_time()
            with trio.move_on_after(0.2):
                async with open_websocket_stream(listener.url, disconnect_timeout=5) as stream:
                    await trio.sleep_forever()
            # The reader survived the cancellation, so the closing handshake took one round
            # trip instead of the whole disconnect_timeout.
            assert trio.current_time() - started < 2
            assert stream.closed == (1000, None)
            with trio.move_on_after(2):
                while not seen:
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    assert seen == [1000]


def make_tls_contexts(tmp: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate for 127.0.0.1: (server context, client context trusting it)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "trimcp test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    (tmp / "cert.pem").write_bytes(cert_pem)
    (tmp / "key.pem").write_bytes(key_pem)
    server.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    client = ssl.create_default_context(cadata=cert_pem.decode())
    return server, client


async def test_wss_round_trip_and_an_untrusted_certificate(tmp_path: Path) -> None:
    server_tls, client_tls = make_tls_contexts(tmp_path)
    with trio.fail_after(10):
        async with mcp_server(ssl_context=server_tls) as listener:
            assert listener.url.startswith("wss://127.0.0.1:")
            async with (
                open_websocket_stream(listener.url, ssl_context=client_tls) as stream,
                open_client(stream) as client,
            ):
                result = await client.call_tool("echo", {"message": "over TLS"})
                assert result.content[0].text == "over TLS"
            await refused(listener.url, "CERTIFICATE_VERIFY_FAILED")


# --------------------------------------------------------------------------- refusals


async def test_a_server_that_selects_no_subprotocol_is_refused() -> None:
    async def handler(request: trio_websocket.WebSocketRequest) -> None:
        ws = await request.accept()  # a generic WebSocket server: ignores "mcp"
        with pytest.raises(trio_websocket.ConnectionClosed) as info:
            await ws.get_message()
        assert info.value.reason is not None and info.value.reason.code == 1002

    with trio.fail_after(5):
        async with raw_ws_server(handler) as url:
            await refused(url, "selected subprotocol none, not 'mcp'")


async def test_a_server_that_selects_another_subprotocol_is_refused() -> None:
    async def handler(stream: trio.SocketStream) -> None:
        request = await read_request(stream)
        key = next(
            line.split(b":", 1)[1].strip()
            for line in request.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
        await stream.send_all(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept + b"\r\nSec-WebSocket-Protocol: graphql-ws\r\n\r\n"
        )
        await stream.receive_some()

    with trio.fail_after(5):
        async with raw_tcp_server(handler) as url:
            await refused(url, "handshake failed: unrecognized subprotocol graphql-ws")


async def test_our_server_refuses_a_client_that_does_not_offer_mcp() -> None:
    with trio.fail_after(5):
        async with mcp_server() as listener:
            with pytest.raises(trio_websocket.ConnectionRejected) as info:
                async with raw_ws_client(listener, subprotocols=["chat"]):
                    pytest.fail("connected")  # pragma: no cover
    assert info.value.status_code == 400
    assert b"Sec-WebSocket-Protocol: mcp" in (info.value.body or b"")


async def test_an_http_error_answer_is_a_connect_error_with_status_and_body() -> None:
    async def handler(stream: trio.SocketStream) -> None:
        await read_request(stream)
        await stream.send_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nno route!")

    with trio.fail_after(5):
        async with raw_tcp_server(handler) as url:
            await refused(url, r"refused the WebSocket upgrade with HTTP 404: no route!")


async def test_a_server_that_hangs_up_or_stays_silent_during_the_handshake() -> None:
    async def hang_up(stream: trio.SocketStream) -> None:
        await read_request(stream)
        await stream.aclose()

    async def stay_silent(stream: trio.SocketStream) -> None:
        await trio.sleep_forever()

    with trio.fail_after(5):  # far below connect_timeout: EOF is noticed, not waited out
        async with raw_tcp_server(hang_up) as url:
            await refused(url, "closed the connection during the handshake", connect_timeout=60)
        async with raw_tcp_server(stay_silent) as url:
            await refused(url, "no WebSocket connection within 0.3 s", connect_timeout=0.3)


async def test_nothing_listening_is_a_connect_error() -> None:
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # the port is now (very probably) closed
    with trio.fail_after(5):
        error = await refused(f"ws://127.0.0.1:{port}/?t=secret", f"to ws://127.0.0.1:{port}/:")
    assert "secret" not in str(error)  # a query string may carry a token


async def test_origin_check() -> None:
    with trio.fail_after(10):
        async with mcp_server() as listener:
            for origin in ("http://localhost:3000", "https://127.0.0.1", "http://[::1]:8080"):
                async with open_websocket_stream(listener.url, headers={"Origin": origin}):
                    pass
            for origin in ("http://evil.example", "null", "http://localhost.evil.example"):
                await refused(listener.url, "HTTP 403: Origin not allowed", headers={"Origin": origin})
        async with mcp_server(allowed_origins=["https://app.example"]) as listener:
            async with open_websocket_stream(listener.url, headers=[("Origin", "https://APP.example/")]):
                pass
            await refused(listener.url, "HTTP 403", headers={"Origin": "http://localhost"})


def test_origin_allowed() -> None:
    assert origin_allowed(None) and origin_allowed(None, [])  # not a browser
    assert origin_allowed("http://LOCALHOST:1") and origin_allowed("https://x.example", ["*"])
    assert not origin_allowed("ftp://localhost") and not origin_allowed("http://[::1")
    assert not origin_allowed("https://x.example", [])


# --------------------------------------------------------------------------- framing violations


async def test_a_binary_frame_is_a_remote_protocol_error_and_closes_with_1003() -> None:
    seen: list[int] = []

    async def handler(request: trio_websocket.WebSocketRequest) -> None:
        ws = await request.accept(subprotocol=SUBPROTOCOL)
        await ws.send_message(jsonrpc.serialize(PING))  # bytes: a binary frame
        try:
            await ws.get_message()
        except trio_websocket.ConnectionClosed as exc:
            assert exc.reason is not None
            seen.append(exc.reason.code)

    with trio.fail_after(5):
        async with raw_ws_server(handler) as url:
            async with open_websocket_stream(url) as stream:
                with pytest.raises(RemoteProtocolError, match="binary frame"):
                    await stream.receive()
                with pytest.raises(TransportClosed, match="was closed: .*binary frame"):
                    await stream.receive()
                with pytest.raises(TransportClosed):
                    await stream.send(PING)
            with trio.move_on_after(2):
                while not seen:
                    await trio.sleep(0.01)
    assert seen == [1003]


async def test_our_server_closes_a_connection_that_sends_a_binary_frame() -> None:
    with trio.fail_after(5):
        async with mcp_server() as listener, raw_ws_client(listener, subprotocols=["mcp"]) as ws:
            await ws.send_message(jsonrpc.serialize(PING))
            with pytest.raises(trio_websocket.ConnectionClosed) as info:
                await ws.get_message()
    assert info.value.reason is not None and info.value.reason.code == 1003


async def test_an_oversize_answer_fails_the_call_and_the_connection() -> None:
    with trio.fail_after(10):
        async with (
            mcp_server() as listener,
            open_websocket_stream(listener.url, max_message_size=4096) as stream,
        ):
            async with open_client(stream, limits=Limits(max_message_size=4096)) as client:
                with pytest.raises(RemoteProtocolError, match="limit is 4096 bytes"):
                    await client.call_tool("large_output", {"size": 20_000})
                with pytest.raises(TransportClosed):
                    await client.list_tools()
            assert stream.closed is not None and stream.closed[0] == 1009


async def test_the_cap_counts_utf8_bytes_not_characters() -> None:
    async def handler(request: trio_websocket.WebSocketRequest) -> None:
        ws = await request.accept(subprotocol=SUBPROTOCOL)
        await ws.send_message('"' + "é" * 600 + '"')  # 602 characters, 1202 bytes
        with pytest.raises(trio_websocket.ConnectionClosed) as info:
            await ws.get_message()
        assert info.value.reason is not None and info.value.reason.code == 1009

    with trio.fail_after(5):
        async with (
            raw_ws_server(handler) as url,
            open_websocket_stream(url, max_message_size=1000) as stream,
        ):
            with pytest.raises(RemoteProtocolError, match="one of 1202 bytes"):
                await stream.receive()


async def test_an_oversize_request_is_refused_by_the_server_with_1009() -> None:
    with trio.fail_after(10):
        async with (
            mcp_server(max_message_size=2000) as listener,
            open_websocket_stream(listener.url) as stream,
            open_client(stream) as client,
        ):
            with pytest.raises(WebSocketClosed) as info:
                await client.call_tool("echo", {"message": "x" * 5000})
    assert info.value.code == 1009
    assert "1009 MESSAGE_TOO_BIG" in str(info.value)


# --------------------------------------------------------------------------- the stream itself


async def test_aclose_wakes_a_blocked_receive_and_later_calls_fail() -> None:
    with trio.fail_after(5):
        async with mcp_server() as listener, open_websocket_stream(listener.url) as stream:
            async with trio.open_nursery() as nursery:

                async def blocked() -> None:
                    with pytest.raises(TransportClosed, match="is closed"):
                        await stream.receive()

                nursery.start_soon(blocked)
                await trio.sleep(0.05)
                await stream.aclose()
            await stream.aclose()  # idempotent
            with pytest.raises(TransportClosed):
                await stream.send(PING)
            with pytest.raises(TransportClosed):
                await stream.receive()


async def test_a_send_cancelled_mid_frame_fails_the_stream() -> None:
    async def handler(request: trio_websocket.WebSocketRequest) -> None:
        await request.accept(subprotocol=SUBPROTOCOL)
        await trio.sleep_forever()  # never reads: the client's sends back up

    big = jsonrpc.Notification("notifications/message", {"data": "x" * (1 << 20)})
    with trio.fail_after(10):
        async with (
            raw_ws_server(handler) as url,
            open_websocket_stream(url, max_message_size=4 << 20) as stream,
        ):
            with trio.move_on_after(0.5) as scope:
                while True:
                    await stream.send(big)
            assert scope.cancelled_caught
            with pytest.raises(TransportClosed, match="cancelled part-way"):
                await stream.send(PING)


async def test_a_failing_handler_does_not_stop_the_server(caplog: pytest.LogCaptureFixture) -> None:
    calls = 0

    async def handler(stream: WebSocketStream) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("boom")
        await stream.send(jsonrpc.Notification("hello"))

    with trio.fail_after(5), caplog.at_level(logging.ERROR, "trimcp.websocket"):
        async with trio.open_nursery() as nursery:
            listener = await nursery.start(serve_websocket_streams, handler)
            async with open_websocket_stream(listener.url) as stream:
                with pytest.raises(WebSocketClosed):
                    await stream.receive()
            async with open_websocket_stream(listener.url) as stream:
                assert (await stream.receive()).data == b'{"jsonrpc":"2.0","method":"hello"}'
            nursery.cancel_scope.cancel()
    assert "boom" in caplog.text


# --------------------------------------------------------------------------- plumbing


def test_url_parsing() -> None:
    target = _parse_url("ws://[::1]:8080/mcp?token=secret#frag")
    assert (target.host, target.port, target.resource) == ("::1", 8080, "/mcp?token=secret")
    assert target.host_header == "[::1]:8080"
    assert target.display == "ws://[::1]:8080/mcp"
    assert _parse_url("wss://example.com").host_header == "example.com"
    assert _parse_url("wss://example.com").resource == "/"
    for bad in ("http://example.com/", "ws:///path", "ws://host:99999/"):
        with pytest.raises(ValueError):
            _parse_url(bad)


async def test_reserved_headers_and_ssl_for_ws_are_refused() -> None:
    with pytest.raises(ValueError, match="Sec-WebSocket-Protocol"):
        async with open_websocket_stream("ws://127.0.0.1:1/", headers={"Sec-WebSocket-Protocol": "x"}):
            pass  # pragma: no cover
    with pytest.raises(ValueError, match="wss"):
        async with open_websocket_stream("ws://127.0.0.1:1/", ssl_context=ssl.create_default_context()):
            pass  # pragma: no cover


def test_importing_trimcp_does_not_import_trio_websocket() -> None:
    code = (
        "import sys, trimcp, trimcp.server, trimcp.reference.server, trimcp._trio.client.connect\n"
        "assert 'trio_websocket' not in sys.modules, 'imported eagerly'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
