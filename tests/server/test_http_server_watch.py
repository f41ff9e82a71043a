"""The response writer watches its own connection: no watcher task per request.

While ``write_response`` waits for the answer it reads the connection itself
(``OutStream.wait`` with the ``H1ServerConnection``), so a client that closes is
noticed (``Outcome.CLIENT_GONE``) and what a client pipelines meanwhile is
kept for the codec (RFC 9112 section 9.3.2: requests on a persistent connection are
answered in order).  These tests drive an ``H1ServerConnection`` over an in-memory
stream pair, with the client side written by hand.
"""

from __future__ import annotations

import json

import h11
import trio
import trio.testing

from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.http.server.replay import ReplayBuffer
from trimcp._trio.http1.server import H1ServerConnection
from trimcp.server.transports.http.streams import Outcome, OutStream, ResponseMode, write_response

REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"


class Spawns(trio.abc.Instrument):
    def __init__(self) -> None:
        self.count = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.count += 1


def answer_stream(request_id: int = 1) -> OutStream:
    return OutStream("7", ReplayBuffer(100, 1 << 20), final_ids=[request_id])


async def served() -> tuple[H1ServerConnection, trio.abc.Stream]:
    """A server connection that has read one request, and the client's end."""
    client, server = trio.testing.memory_stream_pair()
    http = H1ServerConnection(server, max_body=1024)
    await client.send_all(REQUEST)
    got = await http.read_request(None)
    assert isinstance(got, tuple)
    return http, client


def response_of(data: bytes) -> tuple[int, bytes]:
    peer = h11.Connection(h11.CLIENT)
    peer.send(h11.Request(method="POST", target="/mcp", headers=[("host", "x"), ("content-length", "0")]))
    peer.send(h11.EndOfMessage())
    peer.receive_data(data)
    head = peer.next_event()
    assert isinstance(head, h11.Response)
    body = b""
    while isinstance(event := peer.next_event(), h11.Data):
        body += event.data
    assert isinstance(event, h11.EndOfMessage)
    return head.status_code, body


async def read_all(client: trio.abc.Stream) -> bytes:
    data = b""
    with trio.move_on_after(0.5):
        while chunk := await client.receive_some():
            data += chunk
    return data


async def test_waiting_for_the_answer_spawns_no_task(autojump_clock: trio.abc.Clock) -> None:
    http, client = await served()
    stream = answer_stream()
    outcome: list[Outcome] = []
    spawns = Spawns()

    async def writer() -> None:
        outcome.append(await write_response(http, stream, mode=ResponseMode.JSON))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(writer)
        await trio.testing.wait_all_tasks_blocked()
        trio.lowlevel.add_instrument(spawns)
        try:
            await trio.sleep(1)  # the answer is slow
            stream.push(rpc.Response(1, {"ok": True}))
            await trio.testing.wait_all_tasks_blocked()
        finally:
            trio.lowlevel.remove_instrument(spawns)
    assert outcome == [Outcome.COMPLETE]
    assert spawns.count == 0
    assert not stream._wakers  # the wake-up took the writer's scope away
    status, body = response_of(await read_all(client))
    assert status == 200 and json.loads(body)["result"] == {"ok": True}


async def test_write_response_spawns_no_task_at_all() -> None:
    http, _client = await served()
    stream = answer_stream()
    spawns = Spawns()
    trio.lowlevel.add_instrument(spawns)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: write_response(http, stream, mode=ResponseMode.LAZY))
            await trio.testing.wait_all_tasks_blocked()
            stream.push(rpc.Response(1, {}))
    finally:
        trio.lowlevel.remove_instrument(spawns)
    assert spawns.count == 1  # the test's own writer task; none inside write_response


async def test_client_closing_while_the_answer_waits_is_client_gone(
    autojump_clock: trio.abc.Clock,
) -> None:
    http, client = await served()
    stream = answer_stream()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:

            async def hang_up() -> None:
                await trio.sleep(1)
                await client.aclose()

            nursery.start_soon(hang_up)
            outcome = await write_response(http, stream, mode=ResponseMode.LAZY)
    assert outcome is Outcome.CLIENT_GONE
    assert http.peer_closed and not http.next_cycle()
    assert not stream._wakers


async def test_client_closing_an_sse_stream_is_client_gone(autojump_clock: trio.abc.Clock) -> None:
    http, client = await served()
    stream = answer_stream()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:

            async def progress_then_hang_up() -> None:
                stream.push(rpc.Notification("notifications/progress", {"progress": 1}))
                await trio.sleep(1)
                await client.aclose()

            nursery.start_soon(progress_then_hang_up)
            outcome = await write_response(http, stream, mode=ResponseMode.SSE, keepalive=0.3)
    assert outcome is Outcome.CLIENT_GONE


async def test_a_request_pipelined_during_the_wait_is_served_next(
    autojump_clock: trio.abc.Clock,
) -> None:
    http, client = await served()
    stream = answer_stream()
    second = b"POST /next HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"
    async with trio.open_nursery() as nursery:

        async def pipeline_then_answer() -> None:
            await client.send_all(second[:20])  # read by the waiting writer, in two parts
            await trio.sleep(0.5)
            await client.send_all(second[20:])
            await trio.sleep(0.5)
            stream.push(rpc.Response(1, {}))

        nursery.start_soon(pipeline_then_answer)
        outcome = await write_response(http, stream, mode=ResponseMode.JSON)
    assert outcome is Outcome.COMPLETE
    assert http.next_cycle()
    got = await http.read_request(None)
    assert isinstance(got, tuple)
    head, body = got
    assert head.target == "/next" and body == b"{}"


async def test_past_the_early_data_cap_the_writer_stops_reading_but_answers(
    autojump_clock: trio.abc.Clock,
) -> None:
    http, client = await served()
    stream = answer_stream()
    flood = b"x" * (1024 * 1024)
    async with trio.open_nursery() as nursery:

        async def flood_then_answer() -> None:
            await client.send_all(flood)  # (the memory stream holds it all)
            await trio.sleep(1)
            stream.push(rpc.Response(1, {}))

        nursery.start_soon(flood_then_answer)
        outcome = await write_response(http, stream, mode=ResponseMode.JSON)
    assert outcome is Outcome.COMPLETE
    assert 256 * 1024 < http._early < len(flood)
    assert response_of(await read_all(client))[0] == 200
