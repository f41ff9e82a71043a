"""trimcp/_trio/tcp.py: FastTcpStream (a Trio stream over a raw socket) and connect_tcp, on real loopback sockets."""

from __future__ import annotations

import socket

import pytest
import trio

from trimcp._errors import ConnectError
from trimcp._trio.tcp import FAIR_STREAK, FastTcpStream, connect_tcp, fast_stream


async def _pair() -> tuple[FastTcpStream, trio.SocketStream, trio.SocketListener]:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    listener = listeners[0]
    port = listener.socket.getsockname()[1]
    client = fast_stream(await trio.open_tcp_stream("127.0.0.1", port))
    server = await listener.accept()
    assert isinstance(server, trio.SocketStream)
    return client, server, listener


async def test_round_trip_and_eof() -> None:
    client, server, listener = await _pair()
    await client.send_all(b"hello")
    assert await server.receive_some(100) == b"hello"
    await server.send_all(b"world")
    assert await client.receive_some(100) == b"world"
    await client.send_eof()
    assert await server.receive_some(100) == b""
    await server.aclose()
    assert await client.receive_some(100) == b""
    await client.aclose()
    await listener.aclose()


async def test_large_send_waits_for_the_reader_and_arrives_whole() -> None:
    client, server, listener = await _pair()
    payload = bytes(range(256)) * (40 * 1024)  # 10 MiB: far more than the socket buffers hold
    got = bytearray()

    async def drain() -> None:
        while len(got) < len(payload):
            got.extend(await server.receive_some(1 << 16))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drain)
        await client.send_all(payload)
    assert bytes(got) == payload
    await client.aclose()
    await server.aclose()
    await listener.aclose()


async def test_cancelled_caller_raises_at_the_start_and_nothing_is_sent() -> None:
    client, server, listener = await _pair()
    with trio.CancelScope() as scope:
        scope.cancel()
        with pytest.raises(trio.Cancelled):
            await client.send_all(b"lost")
    await client.send_all(b"kept")
    assert await server.receive_some(100) == b"kept"
    await client.aclose()
    await server.aclose()
    await listener.aclose()


async def test_aclose_wakes_a_waiting_receive() -> None:
    client, server, listener = await _pair()
    errors: list[BaseException] = []

    async def wait() -> None:
        try:
            await client.receive_some(10)
        except trio.ClosedResourceError as exc:
            errors.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.testing.wait_all_tasks_blocked()
        await client.aclose()
    assert len(errors) == 1
    with pytest.raises(trio.ClosedResourceError):
        await client.send_all(b"x")
    await server.aclose()
    await listener.aclose()


async def test_peer_reset_is_broken_resource() -> None:
    client, server, listener = await _pair()
    # SO_LINGER 0: the close sends a RST, so the next recv fails with ECONNRESET.
    server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    await server.aclose()
    await trio.sleep(0.05)
    with pytest.raises(trio.BrokenResourceError):
        await client.receive_some(10)
    await client.aclose()
    await listener.aclose()


async def test_a_socket_that_never_blocks_still_lets_other_tasks_run() -> None:
    client, server, listener = await _pair()
    await server.send_all(b"x" * 4096)
    await trio.sleep(0.05)  # all of it is in the client's receive buffer
    ticks = 0
    reads = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticker)
        await trio.lowlevel.checkpoint()  # the ticker is running now (it never blocks)
        before = ticks
        for _ in range(4 * FAIR_STREAK):
            assert await client.receive_some(1) == b"x"  # never waits: the data is there
            reads += 1
        nursery.cancel_scope.cancel()
    # The reader yielded about once per FAIR_STREAK reads, and not at every read.
    assert 3 <= ticks - before <= 2 * 4
    assert reads == 4 * FAIR_STREAK
    await client.aclose()
    await server.aclose()
    await listener.aclose()


async def test_connect_tcp_gives_a_fast_stream_and_its_socket() -> None:
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    stream, sock = await connect_tcp("127.0.0.1", port)
    server = await listener.accept()
    assert isinstance(stream, FastTcpStream) and sock is stream.socket
    await stream.send_all(b"ping")
    assert await server.receive_some(10) == b"ping"
    await stream.aclose()
    await server.aclose()
    await listener.aclose()


async def test_connect_tcp_refused_is_a_connect_error_naming_the_peer() -> None:
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    await listener.aclose()  # nothing listens there any more
    with pytest.raises(ConnectError, match="cannot connect to the-origin"):
        await connect_tcp("127.0.0.1", port, name="the-origin")
