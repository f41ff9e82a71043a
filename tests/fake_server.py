"""A scriptable fake MCP server for the client tests (test_client_faults, test_client_callbacks).

Theory of operation: the client under test talks over ``memory_stream_pair`` (or ``RawWire``,
when the test must send bytes that are no JSON-RPC message at all) to a ``Peer`` that the test
drives message by message, so every byte on the wire is under the test's control.
``connected()`` yields a client whose handshake the fake server has completed; ``spawn`` runs a
client call in the background so the test can play the server meanwhile; ``round_trip`` (a
ping the peer answers) proves everything the peer sent before has been handled.

These fakes are handshake-era servers: a dual-era client (``revision=None``) first probes with
``server/discover``, which ``expect_initialize`` refuses with -32601 as a legacy server would.
The stateless-era fakes are in test_client_stateless.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.lowlevel

from trimcp import ClientSession, TransportClosed, memory_stream_pair, open_client
from trimcp._sansio import jsonrpc
from trimcp._trio.stream import NO_META, MessageStream, Received, SendMeta, parse_received

Json = dict[str, Any]


class Peer:
    """The fake server's end of the wire: what the client sent, as dicts; JSON-RPC back."""

    def __init__(
        self,
        receive: Callable[[], Awaitable[bytes]],
        send_bytes: Callable[[bytes], Awaitable[None]],
        aclose: Callable[[], Awaitable[None]],
    ) -> None:
        self._receive, self._send_bytes, self.aclose = receive, send_bytes, aclose
        self.initialize: Json = {}
        #: The client's server/discover probe, if it sent one.
        self.probe: Json | None = None

    async def recv(self) -> Json:
        item: Any = await self._receive()
        msg = json.loads(item.data if isinstance(item, Received) else item)
        assert isinstance(msg, dict)
        return msg

    async def expect(self, method: str) -> Json:
        msg = await self.recv()
        assert msg.get("method") == method, f"expected {method}, got {msg}"
        return msg

    async def send(self, obj: Json) -> None:
        await self._send_bytes(jsonrpc.dumps({"jsonrpc": "2.0", **obj}))

    async def send_raw(self, data: bytes) -> None:
        await self._send_bytes(data)

    async def reply(self, request: Json, result: Json) -> None:
        await self.send({"id": request["id"], "result": result})

    async def notify(self, method: str, params: Json | None = None) -> None:
        await self.send({"method": method, **({"params": params} if params is not None else {})})


def memory_peer(max_buffer: int = 64) -> tuple[MessageStream, Peer]:
    client_end, server_end = memory_stream_pair(max_buffer)

    async def send_bytes(data: bytes) -> None:
        (msg,) = jsonrpc.parse_payload(data).messages
        await server_end.send(msg)

    return client_end, Peer(server_end.receive, send_bytes, server_end.aclose)


class RawWire:
    """A client-side ``MessageStream`` whose incoming bytes the test writes verbatim."""

    def __init__(self) -> None:
        self._in_send, self._in_recv = trio.open_memory_channel[bytes](64)
        self._out_send, self._out_recv = trio.open_memory_channel[bytes](64)

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        try:
            await self._out_send.send(jsonrpc.serialize(message))
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise TransportClosed("raw wire closed") from None

    async def receive(self) -> Received:
        try:
            return parse_received(await self._in_recv.receive())
        except (trio.ClosedResourceError, trio.EndOfChannel):
            raise TransportClosed("raw wire closed") from None

    async def aclose(self) -> None:
        self._out_send.close()
        self._in_recv.close()
        await trio.lowlevel.checkpoint()

    def peer(self) -> Peer:
        async def receive() -> bytes:
            try:
                return await self._out_recv.receive()
            except (trio.ClosedResourceError, trio.EndOfChannel):
                raise TransportClosed("raw wire closed") from None

        async def aclose() -> None:
            self._in_send.close()
            self._out_recv.close()
            await trio.lowlevel.checkpoint()

        return Peer(receive, self._in_send.send, aclose)


async def expect_initialize(peer: Peer) -> Json:
    """The client's initialize, after refusing its server/discover probe like a legacy server."""
    msg = await peer.recv()
    if msg.get("method") == "server/discover":
        peer.probe = msg
        await peer.send({"id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
        msg = await peer.recv()
    assert msg.get("method") == "initialize", f"expected initialize, got {msg}"
    return msg


async def serve_handshake(peer: Peer, capabilities: Json) -> Json:
    init = await expect_initialize(peer)
    await peer.reply(
        init,
        {
            "protocolVersion": init["params"]["protocolVersion"],
            "capabilities": capabilities,
            "serverInfo": {"name": "fake", "version": "0"},
        },
    )
    await peer.expect("notifications/initialized")
    return init


@asynccontextmanager
async def connected(
    *, raw: bool = False, max_buffer: int = 64, capabilities: Json | None = None, **kwargs: Any
) -> AsyncIterator[tuple[ClientSession, Peer]]:
    """A client connected to a fake server that has finished the handshake."""
    if raw:
        wire = RawWire()
        stream: MessageStream = wire
        peer = wire.peer()
    else:
        stream, peer = memory_peer(max_buffer)
    done = trio.Event()

    async def handshake() -> None:
        peer.initialize = await serve_handshake(peer, {"tools": {}} if capabilities is None else capabilities)
        done.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(handshake)
        async with open_client(stream, **kwargs) as client:
            await done.wait()
            yield client, peer


class Background:
    """The outcome of a call running in another task."""

    def __init__(self) -> None:
        self.done = trio.Event()
        self.value: Any = None
        self.error: Exception | None = None

    async def result(self) -> Any:
        await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.value


def spawn(nursery: trio.Nursery, fn: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Background:
    bg = Background()

    async def run() -> None:
        try:
            bg.value = await fn(*args, **kwargs)
        except Exception as exc:
            bg.error = exc
        finally:
            bg.done.set()

    nursery.start_soon(run)
    return bg


async def round_trip(client: ClientSession, peer: Peer) -> None:
    """A ping the peer answers: everything the peer sent before it has been handled."""
    async with trio.open_nursery() as nursery:
        ping = spawn(nursery, client.ping)
        await peer.reply(await peer.expect("ping"), {})
        await ping.result()


async def drain(peer: Peer, into: list[Json]) -> None:
    """Record everything the client sends until it closes the wire."""
    while True:
        try:
            into.append(await peer.recv())
        except TransportClosed:
            return


TEXT_OK = {"content": [{"type": "text", "text": "ok"}]}
