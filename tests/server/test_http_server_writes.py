"""How many writes an HTTP answer takes: a ready answer leaves in one, with the same bytes.

Each write is a system call (and, on a stream that has to wait, a scheduler
pass), so ``H1ServerConnection.respond`` and a corked SSE answer (``streams._write``)
group what the codec produces.  These tests count the ``send_all`` calls on a
recording stream and parse what was written with an h11 client, so the
grouping is checked and the bytes stay a valid response (RFC 9112 framing,
Streamable HTTP's SSE stream: priming event, then the answer).
"""

from __future__ import annotations

import json

import h11
import trio

from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.http.server import h1
from trimcp._sansio.http.server.replay import ReplayBuffer
from trimcp._trio.http1.server import H1ServerConnection
from trimcp._trio.http_limits import BodyBudget
from trimcp.server.transports.http.streams import Outcome, OutStream, ResponseMode, write_response

REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"


class Recorder(trio.abc.Stream):
    """Keeps every ``send_all`` apart; the client never sends more nor closes."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.lowlevel.checkpoint()
        self.writes.append(bytes(data))

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def serving(recorder: Recorder) -> H1ServerConnection:
    http = H1ServerConnection(recorder, max_body=1024)
    http.codec.receive_data(REQUEST)
    assert isinstance(http.codec.next_event(), h1.Request)
    assert isinstance(http.codec.next_event(), h1.EndOfMessage)
    return http


def parse(data: bytes) -> tuple[h11.Response, bytes]:
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="POST", target="/mcp", headers=[("host", "127.0.0.1"), ("content-length", "0")]))
    client.send(h11.EndOfMessage())
    client.receive_data(data)
    head = client.next_event()
    assert isinstance(head, h11.Response)
    body = b""
    while True:
        event = client.next_event()
        if isinstance(event, h11.Data):
            body += event.data
        else:
            assert isinstance(event, h11.EndOfMessage), event
            return head, body


def answered(request_id: int = 1) -> OutStream:
    return OutStream("7", ReplayBuffer(100, 1 << 20), final_ids=[request_id], resumable=True)


async def test_respond_is_one_write() -> None:
    recorder = Recorder()
    http = serving(recorder)
    await http.respond(200, [("content-type", "application/json")], b'{"ok":true}')
    assert len(recorder.writes) == 1
    head, body = parse(recorder.writes[0])
    assert head.status_code == 200 and body == b'{"ok":true}'
    assert (b"content-length", b"11") in head.headers


async def test_respond_sends_a_large_body_on_its_own() -> None:
    recorder = Recorder()
    http = serving(recorder)
    big = b"x" * (200 * 1024)
    await http.respond(200, [("content-type", "application/json")], big)
    assert len(recorder.writes) == 2  # the head, then the body (not copied into one buffer)
    assert parse(b"".join(recorder.writes))[1] == big


async def test_ready_sse_answer_is_one_write() -> None:
    recorder = Recorder()
    http = serving(recorder)
    stream = answered()
    stream.push(rpc.Notification("notifications/message", {"level": "info", "data": "hi"}))
    stream.push(rpc.Response(1, {"content": []}))
    outcome = await write_response(http, stream, mode=ResponseMode.SSE, event_ids=True, priming=True, retry_ms=500)
    assert outcome is Outcome.COMPLETE
    assert len(recorder.writes) == 1  # head, priming event, two events, last chunk
    head, body = parse(recorder.writes[0])
    assert head.status_code == 200
    assert (b"content-type", b"text/event-stream") in head.headers
    events = [e for e in body.decode().split("\n\n") if e]
    assert len(events) == 3 and "retry: 500" in events[0]
    datas = [json.loads(line[5:]) for e in events[1:] for line in e.split("\n") if line.startswith("data:")]
    assert datas[0]["method"] == "notifications/message" and datas[1] == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": []},
    }
    assert http.next_cycle()  # the cork is off: the next response writes as usual


async def test_sse_head_leaves_before_a_slow_answer() -> None:
    recorder = Recorder()
    http = serving(recorder)
    stream = answered()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: write_response(http, stream, mode=ResponseMode.SSE, priming=True))
        await trio.testing.wait_all_tasks_blocked()
        # The answer is not there: the head and priming event were not held back for it.
        assert len(recorder.writes) == 1
        head = recorder.writes[0]
        assert head.startswith(b"HTTP/1.1 200 ") and b"id:" in head  # the priming event too
        stream.push(rpc.Response(1, {}))
    assert len(recorder.writes) == 2
    assert parse(b"".join(recorder.writes))[0].status_code == 200


async def test_try_reserve_takes_only_what_fits_and_never_jumps_the_queue() -> None:
    budget = BodyBudget(100)
    assert budget.try_reserve(60) and budget.used == 60
    assert not budget.try_reserve(50) and budget.used == 60  # does not fit: nothing taken
    async with trio.open_nursery() as nursery:
        nursery.start_soon(budget.reserve, 50)  # waits for room
        await trio.testing.wait_all_tasks_blocked()
        assert not budget.try_reserve(10)  # fits, but someone waits first (FIFO)
        budget.release(60)
    assert budget.used == 50
