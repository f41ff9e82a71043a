"""ext-tasks on trimcp.server (2026-07-28): task-capable tools, tasks/get|update|cancel.

Raw stateless JSON-RPC over ``serve_stream`` (the ``Raw`` client of
test_server_stateless); time is trio's ``autojump_clock``.
"""

from __future__ import annotations

from typing import Any

import trio
from test_server_stateless import Raw, stateless

from trimcp._errors import McpError
from trimcp._sansio import jsonrpc as rpc
from trimcp.server import Context, Server

TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS: {}}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


def make_server() -> Server:
    server = Server("tasks-test", "1")

    @server.tool
    async def plain(ctx: Context) -> str:
        return "plain"

    @server.tool(task="optional")
    async def slow(ctx: Context, seconds: float = 1) -> str:
        await trio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(task="required")
    async def broken(ctx: Context) -> str:
        raise McpError(rpc.INTERNAL_ERROR, "broken inside")

    @server.tool(task="optional")
    async def counts(ctx: Context, steps: int = 3) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            await trio.sleep(1)
        return f"counted {steps}"

    @server.tool(task="optional")
    async def oops(ctx: Context) -> str:
        raise ValueError("tool-level failure")

    @server.tool(task="optional")
    async def ask_two(ctx: Context) -> str:
        from trimcp.server import inputs

        answers = await ctx.ask_all(
            {
                "a": inputs.elicitation("a?", NAME),
                "b": inputs.elicitation("b?", NAME),
            }
        )
        return ",".join(answers[k]["content"]["name"] for k in ("a", "b"))

    @server.tool(task="required", task_start="explicit")
    async def mrtr_then_task(ctx: Context) -> str:
        answer = await ctx.elicit("name?", NAME, key="user_name")
        await ctx.start_task()
        return f"Hello, {answer['content']['name']} from {ctx.task_id is not None}"

    return server


async def settle(raw: Raw, task_id: str) -> dict[str, Any]:
    for _ in range(100):
        got = (await raw.call("tasks/get", {"taskId": task_id}, caps=WITH_TASKS))["result"]
        if got["status"] in ("completed", "failed", "cancelled"):
            return got
        await trio.sleep(0.5)
    raise AssertionError("task did not settle")


async def test_discover_advertises_the_extension(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        caps = (await raw.call("server/discover"))["result"]["capabilities"]
    assert caps["extensions"] == {TASKS: {}} and "tasks" not in caps


async def test_task_lifecycle_create_poll_complete(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        created = (await raw.tool("slow", {"seconds": 5}, caps=WITH_TASKS))["result"]
        assert created["resultType"] == "task" and created["status"] == "working"
        assert isinstance(created["ttlMs"], int) and "result" not in created and "task" not in created
        working = (await raw.call("tasks/get", {"taskId": created["taskId"]}, caps=WITH_TASKS))["result"]
        assert working["resultType"] == "complete" and working["status"] == "working"
        done = await settle(raw, created["taskId"])
        assert done["status"] == "completed"
        assert done["result"]["content"][0]["text"] == "slept 5"


async def test_progress_of_a_task_is_its_status_message(autojump_clock: trio.abc.Clock) -> None:
    """Once the call is a task its request is answered, so no progress notification can name it:
    the task's statusMessage says how far it is (and the progress used to fail the task)."""
    async with stateless(make_server()) as raw:
        params = {"name": "counts", "arguments": {"steps": 3}, "_meta": {"progressToken": "p1"}}
        created = (await raw.call("tools/call", params, caps=WITH_TASKS))["result"]
        assert created["resultType"] == "task"
        await trio.sleep(1.5)
        working = (await raw.call("tasks/get", {"taskId": created["taskId"]}, caps=WITH_TASKS))["result"]
        assert working["status"] == "working" and working["statusMessage"] == "2/3: step 2"
        done = await settle(raw, created["taskId"])
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "counted 3"
        assert not [n for n in raw.notes if n["method"] == "notifications/progress"]


async def test_without_the_extension_optional_is_sync_and_required_is_32021(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        sync = (await raw.tool("slow", {"seconds": 0}))["result"]
        assert sync["resultType"] == "complete" and "taskId" not in sync
        refused = await raw.tool("broken")
        assert refused["error"]["code"] == -32021
        assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
        for method, params in (
            ("tasks/get", {"taskId": "x"}),
            ("tasks/update", {"taskId": "x", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "x"}),
        ):
            assert (await raw.call(method, params))["error"]["code"] == -32021


async def test_removed_and_unknown(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        for method in ("tasks/result", "tasks/list"):
            assert (await raw.call(method, {"taskId": "x"}, caps=WITH_TASKS))["error"]["code"] == -32601
        unknown = await raw.call("tasks/get", {"taskId": "nope"}, caps=WITH_TASKS)
        assert unknown["error"]["code"] == -32602
        plain = (await raw.tool("plain", caps=WITH_TASKS))["result"]
        assert plain["resultType"] == "complete" and "taskId" not in plain


async def test_protocol_error_fails_tool_error_completes(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        failed = await settle(raw, (await raw.tool("broken", caps=WITH_TASKS))["result"]["taskId"])
        assert failed["status"] == "failed" and failed["error"]["code"] == rpc.INTERNAL_ERROR
        assert "result" not in failed
        completed = await settle(raw, (await raw.tool("oops", caps=WITH_TASKS))["result"]["taskId"])
        assert completed["status"] == "completed" and completed["result"]["isError"] is True


async def test_cancel_settles_cancelled_and_is_idempotent(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        task_id = (await raw.tool("slow", {"seconds": 600}, caps=WITH_TASKS))["result"]["taskId"]
        ack = (await raw.call("tasks/cancel", {"taskId": task_id}, caps=WITH_TASKS))["result"]
        assert ack["resultType"] == "complete" and "taskId" not in ack and "status" not in ack
        assert (await settle(raw, task_id))["status"] == "cancelled"
        again = (await raw.call("tasks/cancel", {"taskId": task_id}, caps=WITH_TASKS))["result"]
        assert again["resultType"] == "complete"


async def test_input_required_with_partial_updates(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        task_id = (await raw.tool("ask_two", caps=WITH_TASKS))["result"]["taskId"]
        await trio.sleep(0.1)
        got = (await raw.call("tasks/get", {"taskId": task_id}, caps=WITH_TASKS))["result"]
        assert got["status"] == "input_required" and set(got["inputRequests"]) == {"a", "b"}
        assert got["inputRequests"]["a"]["method"] == "elicitation/create"
        ack = await raw.call(
            "tasks/update",
            {
                "taskId": task_id,
                "inputResponses": {"a": {"action": "accept", "content": {"name": "x"}}, "zz": {"ignored": True}},
            },
            caps=WITH_TASKS,
        )
        assert ack["result"]["resultType"] == "complete"
        got = (await raw.call("tasks/get", {"taskId": task_id}, caps=WITH_TASKS))["result"]
        assert got["status"] == "input_required" and set(got["inputRequests"]) == {"b"}
        await raw.call(
            "tasks/update",
            {"taskId": task_id, "inputResponses": {"b": {"action": "accept", "content": {"name": "y"}}}},
            caps=WITH_TASKS,
        )
        done = await settle(raw, task_id)
        assert done["result"]["content"][0]["text"] == "x,y"


async def test_mrtr_round_then_task(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        first = (await raw.tool("mrtr_then_task", caps=WITH_TASKS))["result"]
        assert first["resultType"] == "input_required" and "taskId" not in first
        assert list(first["inputRequests"]) == ["user_name"]
        second = (
            await raw.tool(
                "mrtr_then_task",
                caps=WITH_TASKS,
                requestState=first["requestState"],
                inputResponses={"user_name": {"action": "accept", "content": {"name": "Alice"}}},
            )
        )["result"]
        assert second["resultType"] == "task" and "requestState" not in second
        done = await settle(raw, second["taskId"])
        assert done["result"]["content"][0]["text"] == "Hello, Alice from True"


async def test_handshake_era_initialize_leaves_the_extension_out(autojump_clock: trio.abc.Clock) -> None:
    async with stateless(make_server()) as raw:
        init = await raw.call(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
            bare=True,
        )
    caps = init["result"]["capabilities"]
    assert "tools" in caps and "extensions" not in caps


async def test_a_task_outlives_the_session_that_started_it(autojump_clock: trio.abc.Clock) -> None:
    server = make_server()
    async with server.tasks.hosting():  # what serve_http / serve_websocket open
        async with stateless(server) as first:
            task_id = (await first.tool("slow", {"seconds": 5}, caps=WITH_TASKS))["result"]["taskId"]
        async with stateless(server) as second:
            done = await settle(second, task_id)
    assert done["status"] == "completed"


async def test_no_task_host_is_an_internal_error_not_a_hang() -> None:
    server = make_server()
    with trio.fail_after(5):
        try:
            await server.tasks.call(lambda handle: None, _never, at_once=True)
        except McpError as exc:
            assert exc.code == rpc.INTERNAL_ERROR and "no task host" in exc.message
        else:
            raise AssertionError("expected an McpError")


async def _never() -> dict[str, Any]:
    await trio.sleep_forever()
    raise AssertionError


async def test_listen_for_task_ids_needs_the_extension(autojump_clock: trio.abc.Clock) -> None:
    with trio.fail_after(5):  # (without the gate the listen request is held open)
        async with stateless(make_server()) as raw:
            refused = await raw.call("subscriptions/listen", {"notifications": {"taskIds": ["t"]}})
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"]["requiredCapabilities"] == {"extensions": {TASKS: {}}}
