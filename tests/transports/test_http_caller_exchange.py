"""The HTTP client runs a call's POST in the caller's task (``begin_request``), and keeps every guarantee.

A session's own request is carried out by the task that waits for its answer: no task is
spawned for it, and a plain JSON answer the session's reader could take at once is handed
to the Connection by the caller itself.  These tests hold it to what the spawned exchange
promised: messages that arrived before the answer are handled first; an event stream the
server keeps open after the answer does not hold the caller; a caller cancelled mid-POST
tells the server, leaves no connection half-read in the pool, and loses no other call.
Every server is an h11 fake on 127.0.0.1 started by the test (``helpers/h11_fake.py``);
each test is bounded by ``fail_after``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
from helpers.h11_fake import McpFake, Reply, Req, result, serve

import trimcp
from trimcp import Handlers
from trimcp._trio.stream import Received
from trimcp._trio.transports.http.connect import open_http_stream
from trimcp._trio.transports.http.inbox import Inbox

HANDSHAKE = "2025-11-25"
LIMIT = 15


@pytest.fixture
def channel_log(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every item the HTTP transport puts in its channel to the session's reader."""
    log: list[Any] = []
    send = Inbox._send

    async def logged(self: Inbox, item: Any) -> None:
        log.append(item)
        await send(self, item)

    monkeypatch.setattr(Inbox, "_send", logged)
    return log


def answered_ids(items: list[Any]) -> list[Any]:
    out = []
    for item in items:
        if isinstance(item, Received):
            out += [getattr(m, "id", None) for m in item.payload.messages if not hasattr(m, "method")]
    return out


async def test_a_plain_json_answer_skips_the_reader_task(channel_log: list[Any]) -> None:
    with trio.fail_after(LIMIT):
        async with serve(McpFake()) as server, trimcp.open_client(server.url, revision=HANDSHAKE) as session:
            channel_log.clear()  # (the handshake's answer went through the channel)
            for n in range(5):
                out = await session.call_tool("echo", {"n": n})
                assert json.loads(out.content[0].text) == {"n": n}  # type: ignore[union-attr]
            # Each answer went straight to its caller, none through the reader's channel.
            assert answered_ids(channel_log) == []


async def test_what_came_before_the_answer_is_handled_first(channel_log: list[Any]) -> None:
    """Progress and the answer in one piece of the event stream: the reader is busy with the
    progress when the answer is read, so the answer queues behind it."""
    fake = McpFake()

    async def on_call(req: Req, reply: Reply) -> None:
        token = req.json["params"]["_meta"]["progressToken"]
        progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token}}
        answer = result(req, {"content": [{"type": "text", "text": "done"}]})
        await reply.sse_start()
        await reply.body(
            f"data: {json.dumps({**progress, 'params': {**progress['params'], 'progress': 1}})}\n\n"
            f"data: {json.dumps(answer)}\n\n".encode()
        )
        await reply.end()

    fake.on_call = on_call  # type: ignore[method-assign]
    seen: list[str] = []

    async def on_progress(event: Any) -> None:
        seen.append(f"progress {event.progress:g}")

    with trio.fail_after(LIMIT):
        async with serve(fake) as server, trimcp.open_client(server.url, revision=HANDSHAKE) as session:
            out = await session.call_tool("echo", {}, on_progress=on_progress)
            seen.append("returned")
            assert out.content[0].text == "done"  # type: ignore[union-attr]
    assert seen == ["progress 1", "returned"]
    assert len(answered_ids(channel_log)) == 2  # initialize's and this one: it took the reader's way


async def test_an_event_stream_left_open_after_the_answer_does_not_hold_the_caller() -> None:
    fake = McpFake()
    release = trio.Event()
    stream_ended = trio.Event()

    async def on_call(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        await reply.event(result(req, {"content": [{"type": "text", "text": "answer"}]}))
        await release.wait()  # the server keeps the stream open after the answer
        await reply.event(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "tail"}}
        )
        await reply.end()
        stream_ended.set()

    fake.on_call = on_call  # type: ignore[method-assign]
    logs: list[Any] = []
    got_tail = trio.Event()

    def on_log(params: Any) -> None:
        logs.append(params.data)
        got_tail.set()

    with trio.fail_after(LIMIT):
        async with (
            serve(fake) as server,
            trimcp.open_client(server.url, revision=HANDSHAKE, handlers=Handlers(logging=on_log)) as session,
        ):
            out = await session.call_tool("echo", {})
            assert out.content[0].text == "answer"  # type: ignore[union-attr]
            assert not release.is_set()  # returned while the stream was still open
            release.set()
            await got_tail.wait()  # what the server sent after the answer still arrives
            await stream_ended.wait()
            assert (await session.call_tool("echo", {"again": 1})).content  # the transport goes on
    assert logs == ["tail"]


async def test_a_caller_cancelled_mid_post_tells_the_server_and_spoils_nothing() -> None:
    fake = McpFake()
    holding = trio.Event()
    release = trio.Event()
    closed: list[int] = []

    async def on_call(req: Req, reply: Reply) -> None:
        args = req.json["params"].get("arguments", {})
        if args.get("hold"):
            holding.set()
            try:
                await release.wait()
                await reply.json(result(req, {"content": [{"type": "text", "text": "late"}]}))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                closed.append(req.connection)
                raise
            return
        if args.get("slow"):
            await release.wait()
        await reply.json(result(req, {"content": [{"type": "text", "text": json.dumps(args)}]}))

    fake.on_call = on_call  # type: ignore[method-assign]
    with trio.fail_after(LIMIT):
        async with (
            serve(fake) as server,
            open_http_stream(server.url) as stream,
            trimcp.open_client(stream, revision=HANDSHAKE) as session,
        ):
            other: list[Any] = []

            async def slow_call() -> None:
                other.append(await session.call_tool("echo", {"slow": 1}))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(slow_call)  # another call in flight, not cancelled
                with trio.CancelScope() as scope:
                    nursery.start_soon(lambda: _cancel_when(holding, scope))
                    await session.call_tool("echo", {"hold": 1})
                assert scope.cancelled_caught
                release.set()
            assert json.loads(other[0].content[0].text) == {"slow": 1}  # not lost
            held = next(r for r in server.requests if (r.json or {}).get("params", {}).get("arguments") == {"hold": 1})
            with trio.fail_after(5):  # (the notification is posted by a task of the transport)
                while not (cancels := posts(server, "notifications/cancelled")):
                    await trio.sleep(0.01)
            assert [c.json["params"]["requestId"] for c in cancels] == [held.json["id"]]
            # The cancelled POST's connection was closed, not pooled half-read: the server's
            # late answer found it gone, and later calls run on sound connections.
            with trio.fail_after(5):
                while not closed:
                    await trio.sleep(0.01)
            assert closed == [held.connection]
            for n in range(3):
                out = await session.call_tool("echo", {"n": n})
                assert json.loads(out.content[0].text) == {"n": n}  # type: ignore[union-attr]
            later = [
                r
                for r in server.requests
                if r.method == "POST" and "n" in (r.json or {}).get("params", {}).get("arguments", {})
            ]
            assert held.connection not in {r.connection for r in later}


def posts(server: Any, method: str) -> list[Req]:
    return [r for r in server.requests if r.method == "POST" and (r.json or {}).get("method") == method]


async def _cancel_when(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
