"""The body budget bounds what request bodies really take, parsing included.

Many large bodies are POSTed at once to ``serve_http`` on 127.0.0.1 (raw sockets, all in
this process) while tracemalloc traces every allocation: the peak above what was traced
before must stay within the body budget plus a tenth, plus a small allowance for what
every connection holds anyway (the codec's receive buffer, the task, the answer).  The budget
counts what ``jsonrpc.parse_payload`` takes (``jsonrpc.parse_cost``): its bytes, the
decoded text, the parsed tree.  Each body is answered 400 (valid ones name no session,
the others are not JSON), after being parsed in full.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import pytest
import trio

from trimcp._sansio import jsonrpc as rpc
from trimcp.reference.server import build_server
from trimcp.server.transports.http.app import BoundHttpServer, serve_http

KiB, MiB = 1024, 1024 * 1024
MAX_BODY = 4 * MiB
#: Room for one body of ``MAX_BODY`` as it is parsed, hardly more: with a budget of a few
#: bodies, how much each one overruns its share hides among the ones that wait.
BUDGET = 3 * MAX_BODY + 64 * KiB
CONNECTIONS = 8
#: What each connection may hold outside the budget (codec buffers, tasks, answers).
PER_CONNECTION = 96 * KiB


def body(kind: str, size: int) -> bytes:
    head = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
    if kind == "wide":
        head += "\U0001f600".encode()  # one character past the BMP: a str of 4 bytes each
    tail = b'"}}'
    data = head + b"a" * (size - len(head) - len(tail)) + tail
    return data[:-1] + b" " if kind == "invalid" else data


async def start(nursery: trio.Nursery, **options: Any) -> BoundHttpServer:
    bound: BoundHttpServer = await nursery.start(
        lambda task_status: serve_http(build_server(), task_status=task_status, **options)
    )
    return bound


async def post(port: int, data: bytes) -> bytes:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    head = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\ncontent-length: {len(data)}\r\n"
        "connection: close\r\n\r\n"
    ).encode()
    answer = b""

    async def send() -> None:
        await stream.send_all(head)
        await stream.send_all(data)  # not head + data: a copy of the body on this side

    async with stream, trio.open_nursery() as nursery:
        nursery.start_soon(send)
        while part := await stream.receive_some(65536):
            answer += part
        nursery.cancel_scope.cancel()
    return answer


@pytest.mark.parametrize(
    "kind, size",
    [("valid", MAX_BODY), ("invalid", MAX_BODY), ("wide", 1280 * KiB)],
)
async def test_concurrent_big_bodies_stay_within_the_budget(nursery: trio.Nursery, kind: str, size: int) -> None:
    bound = await start(nursery, max_body_size=MAX_BODY, max_body_budget=BUDGET, body_timeout=60.0)
    data = body(kind, size)
    assert rpc.parse_cost(data) <= BUDGET  # each fits alone, two do not
    answers: list[bytes] = []

    async def one() -> None:
        answers.append(await post(bound.port, data))

    await post(bound.port, data)  # warm up: imports, caches, first allocations
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with trio.fail_after(60):
            async with trio.open_nursery() as posts:
                for _ in range(CONNECTIONS):
                    posts.start_soon(one)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert len(answers) == CONNECTIONS
    statuses = sorted(a.split(b" ", 2)[1].decode() for a in answers)
    print(kind, "traced peak", peak / MiB, "MiB; answers", statuses)
    assert set(statuses) <= {"400", "503"} and "400" in statuses, statuses
    budget = bound.app.body_budget
    assert budget.used == 0 and budget.peak <= BUDGET
    allowed = BUDGET * 1.10 + CONNECTIONS * PER_CONNECTION
    assert peak <= allowed, f"{kind}: traced peak {peak / MiB:.2f} MiB > {allowed / MiB:.2f} MiB"


async def test_an_idle_session_keeps_nothing_of_its_last_message() -> None:
    # The budget is given back once a request is served; the session's reader must not then
    # hold the message (its bytes and parsed tree) until the next one arrives: with many idle
    # sessions that is memory no budget counts (16 MiB per 8 MiB argument before).
    from trimcp._trio.client import open_client
    from trimcp._trio.memory import memory_stream_pair
    from trimcp.server import Context, Server, serve_stream

    server = Server("m", "1")

    @server.tool()
    async def take(ctx: Context, blob: str) -> str:
        """Take a blob."""
        return str(len(blob))

    client_end, server_end = memory_stream_pair()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(serve_stream, server, server_end)
            async with open_client(client_end, revision="2025-11-25") as client:
                await client.call_tool("take", {"blob": "x"})
                gc.collect()
                tracemalloc.start()
                try:
                    before = tracemalloc.get_traced_memory()[0]
                    result = await client.call_tool("take", {"blob": "x" * (8 * MiB)})
                    await trio.sleep(0.05)
                    gc.collect()
                    held = tracemalloc.get_traced_memory()[0] - before
                finally:
                    tracemalloc.stop()
    assert result.content[0].text == str(8 * MiB)  # type: ignore[union-attr]
    assert held < 256 * KiB, held
