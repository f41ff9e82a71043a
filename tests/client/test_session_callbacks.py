"""User code runs off the reader task: callbacks in order through a bounded queue, peer requests
under a concurrency limit, and neither can deadlock the session (trimcp/_trio/driver.py,
callbacks.py, request_slots.py).

Against a real in-process trimcp ``Server`` (memory streams) where a whole conversation matters,
against the scripted peer of tests/fake_server.py where the order of bytes on the wire does.
Virtual time throughout (``autojump_clock``): a deadlock shows up as a ``TooSlowError`` at once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from fake_server import TEXT_OK, Json, connected, round_trip, spawn

from trimcp import Handlers, Limits
from trimcp import schema as s
from trimcp._sansio.events import ProgressReceived
from trimcp._trio._groups import collapse
from trimcp._trio.client import ClientSession, open_client
from trimcp._trio.memory import memory_stream_pair
from trimcp.server import Context, Server, ServerSession, serve_stream


@asynccontextmanager
async def in_process(
    server: Server, serve_kwargs: dict[str, Any] | None = None, **client_kwargs: Any
) -> AsyncIterator[tuple[ClientSession, ServerSession]]:
    client_kwargs.setdefault("revision", "2025-11-25")
    client_end, server_end = memory_stream_pair()
    with collapse():
        async with trio.open_nursery() as nursery:
            session: ServerSession = await nursery.start(
                lambda task_status: serve_stream(server, server_end, task_status=task_status, **(serve_kwargs or {}))
            )
            async with open_client(client_end, **client_kwargs) as client:
                yield client, session


def texts(result: s.CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, s.TextContent)]


# ---------------------------------------------------------------- the reported defect


async def test_a_list_changed_handler_can_refetch_while_a_call_is_in_flight(autojump_clock: Any) -> None:
    # The handler calls list_tools() from inside the notification handler.  When that handler
    # ran in the reader task, the reader waited for an answer only it could read: the refetch
    # and the tools/call in flight both ended in RequestTimeout.
    server = Server("changing", "1")

    @server.tool
    async def work(ctx: Context) -> str:
        await server.notify_tools_list_changed()
        await trio.sleep(0.1)
        return "done"

    holder: list[ClientSession] = []
    refetched: list[tuple[float, list[str]]] = []

    async def on_notification(method: str, params: Json) -> None:
        if method == "notifications/tools/list_changed":
            tools = await holder[0].list_tools(refresh=True)
            refetched.append((trio.current_time(), [t.name for t in tools]))

    async with in_process(server, handlers=Handlers(notification=on_notification)) as (client, _):
        holder.append(client)
        start = trio.current_time()
        with trio.fail_after(1):
            result = await client.call_tool("work")
        assert texts(result) == ["done"]
        # The refetch was answered too, within the second, before the call returned
        # (the notification arrived before the call's answer).
        assert [names for _, names in refetched] == [["work"]]
        assert refetched[0][0] - start < 1


async def test_a_roots_changed_hook_can_ask_the_client_for_its_roots(autojump_clock: Any) -> None:
    # The server's hook is user code too: it must not run in the server's reader task.
    server = Server("roots", "1")
    seen: list[Any] = []

    @server.tool
    async def noop(ctx: Context) -> str:
        return "x"

    @server.on_roots_changed
    async def changed(session: ServerSession) -> None:
        seen.append(await session.driver.request("roots/list", timeout=5))

    async with in_process(server, handlers=Handlers(roots=[s.Root(uri="file:///w", name="w")])) as (client, _):
        with trio.fail_after(1):
            await client.notify_roots_changed()
            while not seen:
                await trio.sleep(0.01)
            assert texts(await client.call_tool("noop")) == ["x"]
    assert seen == [{"roots": [{"uri": "file:///w", "name": "w"}]}]


# ---------------------------------------------------------------- order, tasks, failures


async def test_notifications_progress_and_logs_arrive_in_order_off_the_reader_task(autojump_clock: Any) -> None:
    order: list[str] = []
    tasks: set[trio.lowlevel.Task] = set()

    async def on_log(params: s.LoggingMessageNotificationParams) -> None:
        tasks.add(trio.lowlevel.current_task())
        await trio.sleep(0.3)  # the slowest callback first: order must not depend on speed
        order.append(f"log:{params.data}")

    async def on_notification(method: str, params: Json) -> None:
        tasks.add(trio.lowlevel.current_task())
        await trio.sleep(0.1)
        order.append(method)

    async def on_progress(event: ProgressReceived) -> None:
        tasks.add(trio.lowlevel.current_task())
        order.append(f"progress:{event.progress}")

    with trio.fail_after(10):
        async with (
            connected(handlers=Handlers(logging=on_log, notification=on_notification)) as (
                client,
                peer,
            ),
            trio.open_nursery() as nursery,
        ):
            call = spawn(nursery, client.call_tool, "work", on_progress=on_progress)
            req = await peer.expect("tools/call")
            token = req["params"]["_meta"]["progressToken"]
            await peer.notify("notifications/message", {"level": "info", "data": 1})
            await peer.notify("notifications/progress", {"progressToken": token, "progress": 1})
            await peer.notify("test/a")
            await peer.notify("notifications/progress", {"progressToken": token, "progress": 2})
            await peer.notify("notifications/tools/list_changed")
            await peer.reply(req, TEXT_OK)
            await call.result()
            # The call returned only after every callback for what preceded its answer had run.
            assert order == [
                "log:1",
                "notifications/message",
                "progress:1",
                "test/a",
                "progress:2",
                "notifications/tools/list_changed",
            ]
    assert tasks == {client.driver.callbacks.task}  # one task, and not the reader


async def test_a_failing_callback_is_logged_and_the_session_goes_on(
    autojump_clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    notes: list[str] = []

    async def on_notification(method: str, params: Json) -> None:
        if method == "test/explode":
            raise RuntimeError("handler bug")
        notes.append(method)

    def broken_progress(event: ProgressReceived) -> None:
        raise ValueError("progress bug")

    with trio.fail_after(10), caplog.at_level(logging.ERROR, logger="trimcp"):
        async with (
            connected(handlers=Handlers(notification=on_notification)) as (client, peer),
            trio.open_nursery() as nursery,
        ):
            await peer.notify("test/before")
            await peer.notify("test/explode")
            call = spawn(nursery, client.call_tool, "work", on_progress=broken_progress)
            req = await peer.expect("tools/call")
            await peer.notify(
                "notifications/progress", {"progressToken": req["params"]["_meta"]["progressToken"], "progress": 1}
            )
            await peer.notify("test/after")
            await peer.reply(req, TEXT_OK)
            assert texts(await call.result()) == ["ok"]
            await round_trip(client, peer)
            assert notes == ["test/before", "test/after"]
            assert not client.driver.is_closed
    messages = [r.getMessage() for r in caplog.records]
    assert "callback for test/explode raised" in messages
    assert "callback for progress callback raised" in messages


# ---------------------------------------------------------------- the bound


async def test_a_full_callback_queue_holds_the_reader_back_and_loses_nothing(autojump_clock: Any) -> None:
    release = trio.Event()
    seen: list[str] = []

    async def on_notification(method: str, params: Json) -> None:
        if method == "test/0":
            await release.wait()
        seen.append(method)

    with trio.fail_after(10):
        async with connected(
            handlers=Handlers(notification=on_notification), limits=Limits(max_pending_callbacks=2)
        ) as (client, peer):
            for n in range(6):
                await peer.notify(f"test/{n}")
            await peer.send({"id": "p", "method": "ping"})  # answered by the reader itself
            with trio.move_on_after(5) as waited:
                await peer.recv()
            # test/0 runs (blocked), test/1 and test/2 fill the queue, the reader waits with test/3
            # in hand: nothing behind it is read, so the ping is not answered.
            assert waited.cancelled_caught
            callbacks = client.driver.callbacks
            assert callbacks.pending == 2 and callbacks.accepted == 3 and seen == []
            release.set()
            assert await peer.recv() == {"jsonrpc": "2.0", "id": "p", "result": {}}
            await round_trip(client, peer)
            assert seen == [f"test/{n}" for n in range(6)]
            assert callbacks.dropped == 0


async def test_a_callback_waiting_for_the_peer_never_deadlocks_the_full_queue(autojump_clock: Any) -> None:
    # With the queue full, the reader would wait for the callback, and the callback for an
    # answer only the reader can read.  Instead the reader goes on and drops what finds the
    # queue full while that callback waits; everything else arrives in order.
    holder: list[ClientSession] = []
    seen: list[str] = []

    async def on_notification(method: str, params: Json) -> None:
        if method == "test/0":
            await holder[0].ping()
        seen.append(method)

    with trio.fail_after(10):
        async with connected(
            handlers=Handlers(notification=on_notification), limits=Limits(max_pending_callbacks=1)
        ) as (client, peer):
            holder.append(client)
            await peer.notify("test/0")
            ping = await peer.expect("ping")  # the callback now waits for the peer
            await peer.notify("test/1")  # queued
            await peer.notify("test/2")  # queue full: dropped, not waited for
            await peer.send({"id": "p", "method": "ping"})
            assert await peer.recv() == {"jsonrpc": "2.0", "id": "p", "result": {}}  # the reader is free
            await peer.reply(ping, {})
            await round_trip(client, peer)
            assert seen == ["test/0", "test/1"]
            assert client.driver.callbacks.dropped == 1


# ---------------------------------------------------------------- the request limit


async def test_peer_requests_run_under_the_concurrency_limit(autojump_clock: Any) -> None:
    running = 0
    most = 0
    release = trio.Event()

    async def sampling(params: s.CreateMessageRequestParams) -> s.CreateMessageResult:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await release.wait()
        running -= 1
        return s.CreateMessageResult(role="assistant", content=s.TextContent(text="x"), model="m")

    request = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}
    with trio.fail_after(10):
        async with connected(handlers=Handlers(sampling=sampling), limits=Limits(max_concurrent_requests=2)) as (
            client,
            peer,
        ):
            for n in range(4):
                await peer.send({"id": n, **request})
            await peer.send({"id": "p", "method": "ping"})
            with trio.move_on_after(5) as waited:
                await peer.recv()
            # Two handlers run; the reader holds the third request until a slot is free.
            assert waited.cancelled_caught and most == 2
            assert client.driver.request_slots.in_use == 2
            release.set()
            answered = [await peer.recv() for _ in range(5)]
            assert {m["id"] for m in answered} == {0, 1, 2, 3, "p"}
            await trio.testing.wait_all_tasks_blocked()  # the last handlers leave their slots
            assert most == 2 and client.driver.request_slots.in_use == 0


async def test_handlers_asking_the_peer_do_not_exhaust_the_limit(autojump_clock: Any) -> None:
    # Server side, the normal case: every tools/call handler asks the client for sampling.
    # Were a waiting handler to keep its slot, the only slot would be held while the reader
    # waits for a slot to start the next call and never reads the sampling answer.
    server = Server("asks", "1")
    running = 0
    most = 0

    @server.tool
    async def ask(ctx: Context) -> str:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await trio.sleep(0.01)
        running -= 1  # waiting for the client does not count...
        answer = await ctx.sample("hi", 5)
        running += 1  # ...running user code again does
        most = max(most, running)
        await trio.sleep(0.01)
        running -= 1
        return str(answer["content"]["text"])

    async def sampling(params: s.CreateMessageRequestParams) -> s.CreateMessageResult:
        await trio.sleep(0.05)
        return s.CreateMessageResult(role="assistant", content=s.TextContent(text="ok"), model="m")

    results: list[list[str]] = []
    async with in_process(server, {"max_concurrent_requests": 1}, handlers=Handlers(sampling=sampling)) as (
        client,
        session,
    ):
        with trio.fail_after(2):
            async with trio.open_nursery() as nursery:
                for _ in range(5):
                    nursery.start_soon(lambda: _call(client, results))
        assert results == [["ok"]] * 5
        assert most == 1 and session.driver.request_slots.in_use == 0


async def _call(client: ClientSession, into: list[list[str]]) -> None:
    into.append(texts(await client.call_tool("ask")))


def test_the_limits_must_be_positive() -> None:
    from trimcp._trio.callbacks import CallbackQueue
    from trimcp._trio.request_slots import RequestSlots

    with pytest.raises(ValueError):
        CallbackQueue(0)
    with pytest.raises(ValueError):
        RequestSlots(0)
