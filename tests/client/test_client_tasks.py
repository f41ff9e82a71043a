"""ext-tasks on the client (2026-07-28): call_tool follows a task to its end,
call_tool_as_task hands it over; the reference server in-process, time is
trio's ``autojump_clock``."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from trimcp import (
    Handlers,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    RequestTimeout,
    TaskCancelled,
    ToolTask,
    open_client,
)
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio import schema as s
from trimcp._sansio import task_poll as tp
from trimcp._sansio.connection import stateless as sl
from trimcp._trio._groups import collapse
from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.stream import NO_META, Inbound, Received, SendMeta, parse_received
from trimcp.conformance import run_checks
from trimcp.conformance.model import Status
from trimcp.conformance.selection import Selection
from trimcp.reference.server import build_server
from trimcp.server import Context, Server, serve_stream
from trimcp.testing import serve_in_process

TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS: dict[str, dict[str, Any]] = {TASKS: {}}


class Recorder:
    """A MessageStream that notes the client's requests (method, params, when)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[tuple[str, dict[str, Any], float]] = []

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if isinstance(message, rpc.Request):
            self.sent.append((message.method, dict(message.params or {}), trio.current_time()))
        await self.inner.send(message, meta)

    async def receive(self) -> Inbound:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def methods(self, method: str) -> list[tuple[dict[str, Any], float]]:
        return [(p, t) for m, p, t in self.sent if m == method]


@asynccontextmanager
async def served(server: Server | None = None) -> AsyncIterator[tuple[Recorder, Server]]:
    server = server or build_server()
    async with serve_in_process(server) as stream:
        yield Recorder(stream), server


def text(result: s.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, s.TextContent)
    return block.text


async def server_status(server: Server, task_id: str) -> str:
    record = await server.tasks.store.get_task(task_id, server.tasks.clock())
    assert record is not None
    return record.status


async def test_call_tool_polls_a_task_to_its_result(autojump_clock: trio.abc.Clock) -> None:
    with collapse():
        async with (
            served() as (stream, server),
            open_client(stream, revision="2026-07-28", extensions=WITH_TASKS) as client,
        ):
            start = trio.current_time()
            result = await client.call_tool("slow_compute", {"seconds": 3, "label": "x"})
            assert text(result) == "computed x after 3s" and not result.is_error
            elapsed = trio.current_time() - start
            assert 3 <= elapsed <= 3.5 + 1e-6  # done at 3 s, seen at the next 500 ms poll
            polls = stream.methods("tasks/get")
            task_id = polls[0][0]["taskId"]
            assert all(p["taskId"] == task_id and set(p) == {"taskId", "_meta"} for p, _ in polls)
            gaps = [b - a for (_, a), (_, b) in itertools.pairwise(polls)]
            assert gaps and min(gaps) >= 0.5 - 1e-6  # the server's pollIntervalMs (500) is honoured
            assert await server_status(server, task_id) == "completed"
            assert stream.methods("tasks/cancel") == []


async def test_without_the_extension_no_task_is_made(autojump_clock: trio.abc.Clock) -> None:
    with collapse():
        async with served() as (stream, _), open_client(stream, revision="2026-07-28") as client:
            assert text(await client.call_tool("slow_compute", {"seconds": 1})) == "computed result after 1s"
            with pytest.raises(McpError) as refused:
                await client.call_tool("failing_job")
            assert refused.value.code == rpc.MISSING_CLIENT_CAPABILITY
            assert stream.methods("tasks/get") == []
            with pytest.raises(LocalProtocolError, match="needs the io.modelcontextprotocol/tasks extension"):
                await client.call_tool_as_task("slow_compute")


async def test_failed_task_is_mcp_error_and_a_tool_error_is_a_result(autojump_clock: trio.abc.Clock) -> None:
    with collapse():
        async with served() as (stream, _), open_client(stream, revision="2026-07-28", extensions=WITH_TASKS) as client:
            with pytest.raises(McpError) as failed:
                await client.call_tool("protocol_error_job")
            assert failed.value.code == rpc.INTERNAL_ERROR
            assert failed.value.message == "protocol_error_job: internal failure"
            tool_error = await client.call_tool("failing_job")
            assert tool_error.is_error and "failing_job always fails" in text(tool_error)
            assert len({p["taskId"] for p, _ in stream.methods("tasks/get")}) == 2


async def test_caller_cancelling_sends_tasks_cancel(autojump_clock: trio.abc.Clock) -> None:
    with collapse():
        async with (
            served() as (stream, server),
            open_client(stream, revision="2026-07-28", extensions=WITH_TASKS) as client,
        ):
            with trio.move_on_after(2) as scope:
                await client.call_tool("slow_compute", {"seconds": 600}, timeout=None)
            assert scope.cancelled_caught
            cancels = stream.methods("tasks/cancel")
            assert len(cancels) == 1 and cancels[0][1] == pytest.approx(scope.deadline)
            task_id = cancels[0][0]["taskId"]
            assert stream.methods("tasks/get")[0][0]["taskId"] == task_id
            await trio.sleep(0.1)
            assert await server_status(server, task_id) == "cancelled"


async def test_input_required_is_answered_by_the_elicitation_handler(autojump_clock: trio.abc.Clock) -> None:
    asked: list[str] = []

    async def elicit(params: s.ElicitRequestParams) -> s.ElicitResult:
        asked.append(params.message)
        if params.message.startswith("Delete"):
            return s.ElicitResult(action="accept", content={"confirm": True})
        return s.ElicitResult(action="accept", content={"name": "Ada" if "first" in params.message else "Lovelace"})

    with collapse():
        async with (
            served() as (stream, _),
            open_client(
                stream,
                revision="2026-07-28",
                extensions=WITH_TASKS,
                handlers=Handlers(elicitation=elicit),
            ) as client,
        ):
            assert text(await client.call_tool("confirm_delete", {"filename": "a.txt"})) == "a.txt: deleted (simulated)"
            updates = stream.methods("tasks/update")
            assert [list(p["inputResponses"]) for p, _ in updates] == [["confirm-a.txt"]]
            assert updates[0][0]["inputResponses"]["confirm-a.txt"] == {
                "action": "accept",
                "content": {"confirm": True},
            }
            assert text(await client.call_tool("multi_input")) == "Ada Lovelace"
            # Both questions of the second task went out in one tasks/update, each asked once.
            assert sorted(stream.methods("tasks/update")[1][0]["inputResponses"]) == ["first_name", "last_name"]
            assert asked == ["Delete a.txt?", "Your first name?", "Your last name?"]


async def test_input_required_the_client_cannot_answer(autojump_clock: trio.abc.Clock) -> None:
    async def refuse(params: s.ElicitRequestParams) -> s.ElicitResult:
        raise McpError(rpc.INVALID_PARAMS, "no questions today")

    with collapse():
        # No elicitation capability declared: the server fails the task itself (-32021).
        async with (
            served() as (stream, server),
            open_client(stream, revision="2026-07-28", extensions=WITH_TASKS) as client,
        ):
            with pytest.raises(McpError) as failed:
                await client.call_tool("confirm_delete", {"filename": "b"})
            assert failed.value.code == rpc.MISSING_CLIENT_CAPABILITY
            assert stream.methods("tasks/update") == []
        # A handler that refuses: the client gives the task up and says so (tasks/cancel).
        async with (
            served() as (stream, server),
            open_client(
                stream,
                revision="2026-07-28",
                extensions=WITH_TASKS,
                handlers=Handlers(elicitation=refuse),
            ) as client,
        ):
            with pytest.raises(RemoteProtocolError, match="no questions today"):
                await client.call_tool("confirm_delete", {"filename": "b"})
            ((cancel, _),) = stream.methods("tasks/cancel")
            assert stream.methods("tasks/update") == []
            await trio.sleep(0.1)
            assert await server_status(server, cancel["taskId"]) == "cancelled"


@pytest.mark.parametrize("reset", [True, False])
async def test_a_task_that_never_ends_meets_the_deadline_exactly(autojump_clock: trio.abc.Clock, reset: bool) -> None:
    with collapse():
        async with (
            served() as (stream, server),
            open_client(stream, revision="2026-07-28", extensions=WITH_TASKS) as client,
        ):
            start = trio.current_time()
            with pytest.raises(RequestTimeout, match="did not finish within the call's deadline .5 s."):
                await client.call_tool("slow_compute", {"seconds": 600}, timeout=5, reset_timeout_on_progress=reset)
            assert trio.current_time() - start == pytest.approx(5.0)
            ((cancel, when),) = stream.methods("tasks/cancel")
            assert when == pytest.approx(start + 5.0)
            polls = stream.methods("tasks/get")
            assert polls[-1][1] <= start + 5.0 and len(polls) >= 9  # polled all along, not given up early
            await trio.sleep(0.1)
            assert await server_status(server, cancel["taskId"]) == "cancelled"


def stepping_server() -> Server:
    server = Server("steps", "1")

    @server.tool(task="optional")
    async def steps(ctx: Context) -> str:
        """Three questions, two seconds apart: the task changes every two seconds."""
        for i in range(3):
            await trio.sleep(2)
            await ctx.elicit(f"step {i}?", {"type": "object", "properties": {"n": {"type": "string"}}}, key=f"s{i}")
        return "done"

    return server


@pytest.mark.parametrize(
    ("options", "ends_at"),
    [
        ({"reset_timeout_on_progress": True}, None),  # each change pushes the 3 s deadline on
        ({"reset_timeout_on_progress": False}, 3.0),
        ({"reset_timeout_on_progress": True, "max_total_timeout": 5.0}, 5.0),  # ... never past the total
    ],
)
async def test_task_changes_push_the_deadline_like_progress(
    autojump_clock: trio.abc.Clock,
    options: dict[str, Any],
    ends_at: float | None,
) -> None:
    async def answer(params: s.ElicitRequestParams) -> s.ElicitResult:
        return s.ElicitResult(action="accept", content={"n": "ok"})

    with collapse():
        async with (
            served(stepping_server()) as (stream, _),
            open_client(
                stream,
                revision="2026-07-28",
                extensions=WITH_TASKS,
                handlers=Handlers(elicitation=answer),
            ) as client,
        ):
            start = trio.current_time()
            if ends_at is None:
                assert text(await client.call_tool("steps", timeout=3, **options)) == "done"
                assert trio.current_time() - start > 6
                assert len(stream.methods("tasks/update")) == 3
            else:
                with pytest.raises(RequestTimeout):
                    await client.call_tool("steps", timeout=3, **options)
                assert trio.current_time() - start == pytest.approx(ends_at)


async def test_the_task_handle(autojump_clock: trio.abc.Clock) -> None:
    with collapse():
        async with (
            served() as (stream, server),
            open_client(stream, revision="2026-07-28", extensions=WITH_TASKS) as client,
        ):
            direct = await client.call_tool_as_task("greet", {"name": "Ada"})
            assert isinstance(direct, s.CallToolResult) and text(direct) == "Hello, Ada!"

            task = await client.call_tool_as_task("slow_compute", {"seconds": 2})
            assert isinstance(task, ToolTask) and task.state.status == "working"
            assert (await task.status()).status == "working"
            with trio.move_on_after(1):
                await task.wait()
            assert stream.methods("tasks/cancel") == []  # leaving wait() early cancels nothing
            done = await task.wait()
            assert done.status == "completed" and done.terminal and task.state is done
            assert text(await task.result()) == "computed result after 2s"

            forever = await client.call_tool_as_task("slow_compute", {"seconds": 600})
            assert isinstance(forever, ToolTask)
            await forever.cancel()
            assert (await forever.wait()).status == "cancelled"
            with pytest.raises(TaskCancelled) as cancelled:
                await forever.result()
            assert cancelled.value.task_id == forever.task_id
            assert await server_status(server, forever.task_id) == "cancelled"

            failed = await client.call_tool_as_task("protocol_error_job")
            assert isinstance(failed, ToolTask)
            with pytest.raises(McpError, match="internal failure"):
                await failed.result()


# ---------------------------------------------------------------- sans-IO pieces

TASK = {
    "taskId": "t1",
    "status": "working",
    "createdAt": "2026-01-01T00:00:00Z",
    "lastUpdatedAt": "2026-01-01T00:00:00Z",
    "ttlMs": 60000,
    "pollIntervalMs": 250,
}


def test_a_task_result_only_answers_a_tools_call_that_declared_the_extension() -> None:
    created = {"resultType": "task", **TASK}
    caps = {"extensions": WITH_TASKS}
    assert sl.result_problem("tools/call", created, caps) is None
    assert sl.result_problem("prompts/get", created, caps) == "prompts/get may not be answered with a CreateTaskResult"
    assert "did not declare" in (sl.result_problem("tools/call", created, {}) or "")
    assert "ttlMs" in (sl.result_problem("tools/call", {**created, "ttlMs": "soon"}, caps) or "")
    missing_ttl = {k: v for k, v in created.items() if k != "ttlMs"}
    assert "ttlMs" in (sl.result_problem("tools/call", missing_ttl, caps) or "")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"status": "done"}, "status 'done'"),
        ({"taskId": 3}, "taskId"),
        ({"status": "completed"}, "result object"),
        ({"status": "failed", "error": {"code": "x", "message": "m"}}, "JSON-RPC error"),
        ({"status": "input_required"}, "inputRequests"),
        ({"status": "input_required", "inputRequests": {"k": {"params": {}}}}, "with a method"),
        ({"pollIntervalMs": -1}, "pollIntervalMs"),
    ],
)
def test_detailed_task_shapes_are_checked(change: dict[str, Any], problem: str) -> None:
    with pytest.raises(RemoteProtocolError, match=problem):
        tp.parse_task({**TASK, **change}, detailed=True)


def test_poller_decisions() -> None:
    poller = tp.TaskPoller(tp.parse_task(TASK, detailed=False))
    assert not poller.observe(tp.parse_task(TASK, detailed=True))
    asking = {
        **TASK,
        "status": "input_required",
        "lastUpdatedAt": "2026-01-01T00:00:01Z",
        "inputRequests": {"a": {"method": "elicitation/create", "params": {}}},
    }
    assert poller.observe(tp.parse_task(asking, detailed=True))
    assert list(poller.to_answer()) == ["a"]
    poller.answered_keys({"a": {}})
    assert poller.to_answer() == {}  # shown again before the server took it: not asked twice
    with pytest.raises(RemoteProtocolError, match="about task 'other'"):
        poller.observe(tp.parse_task({**TASK, "taskId": "other"}, detailed=True))
    state = tp.parse_task(TASK, detailed=True)
    assert tp.poll_delay(state, None) == 0.25 and tp.poll_delay(state, 0.1) == 0.1
    assert tp.poll_delay(tp.parse_task({**TASK, "pollIntervalMs": 0}, detailed=True), None) == tp.MIN_POLL_INTERVAL
    no_hint = {k: v for k, v in TASK.items() if k != "pollIntervalMs"}
    assert tp.poll_delay(tp.parse_task(no_hint, detailed=True), None) == tp.DEFAULT_POLL_INTERVAL


# ---------------------------------------------------------------- trimcp check: ext-tasks.*

EXT_CHECKS = (
    "ext-tasks.methods-gated",
    "ext-tasks.unknown-get",
    "ext-tasks.unknown-other",
    "ext-tasks.create",
    "ext-tasks.get",
    "ext-tasks.undeclared",
    "ext-tasks.ack",
)


class Tamper:
    """The client end of a connection whose incoming answers ``mutate`` rewrites (a broken server)."""

    def __init__(self, inner: Any, mutate: Callable[[dict[str, Any]], None]) -> None:
        self.inner, self.mutate = inner, mutate

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        await self.inner.send(message, meta)

    async def receive(self) -> Inbound:
        item = await self.inner.receive()
        if not isinstance(item, Received):
            return item
        data = json.loads(item.data)
        self.mutate(data)
        return parse_received(json.dumps(data).encode())

    async def aclose(self) -> None:
        await self.inner.aclose()


async def ext_results(
    mutate: Callable[[dict[str, Any]], None] | None = None,
    call_tools: Any = "read-only",
) -> dict[str, Any]:
    server = build_server()
    async with trio.open_nursery() as nursery:

        @asynccontextmanager
        async def connect() -> AsyncIterator[Any]:
            client_end, server_end = memory_stream_pair()
            nursery.start_soon(serve_stream, server, server_end)
            try:
                yield client_end if mutate is None else Tamper(client_end, mutate)
            finally:
                with trio.CancelScope(shield=True):
                    await client_end.aclose()

        report = await run_checks(
            connect,
            target="reference",
            revision="2026-07-28",
            request_timeout=5,
            selection=Selection(only=("ext-tasks.*",)),
            call_tools=call_tools,
        )
        nursery.cancel_scope.cancel()
    return {r.id: r for r in report.results if r.id.startswith("ext-tasks.")}


async def test_check_ext_tasks_passes_the_reference_server(autojump_clock: trio.abc.Clock) -> None:
    got = await ext_results()
    assert {k: r.status for k, r in got.items()} == dict.fromkeys(EXT_CHECKS, Status.PASS), got
    assert "quick_task" in got["ext-tasks.create"].detail
    assert "working -> completed" in got["ext-tasks.get"].detail


async def test_check_ext_tasks_skips_without_a_task_capable_tool(autojump_clock: trio.abc.Clock) -> None:
    got = await ext_results(call_tools="none")
    for check_id in ("ext-tasks.create", "ext-tasks.get", "ext-tasks.undeclared", "ext-tasks.ack"):
        assert got[check_id].status is Status.SKIP and "no tool is called" in got[check_id].detail
    assert got["ext-tasks.methods-gated"].status is Status.PASS  # needs no task


def _results(data: dict[str, Any]) -> dict[str, Any] | None:
    result = data.get("result")
    return result if isinstance(result, dict) else None


def _no_ttl(data: dict[str, Any]) -> None:
    result = _results(data)
    if result is not None and result.get("resultType") == "task":
        result.pop("ttlMs", None)


def _gate_open(data: dict[str, Any]) -> None:
    error = data.get("error")
    if isinstance(error, dict) and error.get("code") == -32021:
        error["code"] = -32601


def _get_says_task(data: dict[str, Any]) -> None:
    result = _results(data)
    if result is not None and result.get("resultType") == "complete" and "taskId" in result:
        result["resultType"] = "task"


def _cancel_not_empty(data: dict[str, Any]) -> None:
    result = _results(data)
    if result is not None and set(result) <= {"resultType", "_meta"}:
        result["status"] = "cancelled"


@pytest.mark.parametrize(
    ("mutate", "failing"),
    [
        (_no_ttl, "ext-tasks.create"),
        (_gate_open, "ext-tasks.methods-gated"),
        (_get_says_task, "ext-tasks.get"),
        (_cancel_not_empty, "ext-tasks.ack"),
    ],
)
async def test_check_ext_tasks_fails_a_broken_server(
    autojump_clock: trio.abc.Clock,
    mutate: Callable[[dict[str, Any]], None],
    failing: str,
) -> None:
    got = await ext_results(mutate)
    assert got[failing].status is Status.FAIL, got[failing]
    assert got[failing].evidence
