"""ext-tasks on the server: a task-capable tool call answered at once, run on in the background.

Theory of operation
-------------------
ext-tasks (``io.modelcontextprotocol/tasks``, specification/draft/tasks.md):
a server that sees the extension in a request's ``clientCapabilities`` MAY
answer a ``tools/call`` with a ``CreateTaskResult`` (``resultType: "task"``)
and run the tool on; the client polls ``tasks/get`` (the ``DetailedTask``,
with ``result``/``error``/``inputRequests`` inlined), answers questions with
``tasks/update`` and asks to stop with ``tasks/cancel``.

``TaskRunner.call`` starts the tool in a Trio task of a *host* nursery that
outlives the request (``hosting()``, opened by the serving functions), under
a ``CapacityLimiter``, and waits only until the call has an answer:

* ``task_start="at_once"``: the task record exists before the tool runs, so
  the ``CreateTaskResult`` goes out at once - and only once ``tasks/get``
  would find it (the spec's durable-creation rule holds: the table is local);
* ``task_start="explicit"``: the tool runs in the foreground's stead until it
  calls ``ctx.start_task()``.  Questions it asks before that are ordinary
  multi-round-trip questions (the spec's SHOULD: resolve MRTR before creating
  the task), so the request may still be answered with an
  ``InputRequiredResult`` - or with the tool's result, if it never starts one.

Once a task, a question (``ctx.elicit`` ...) parks it in ``input_required``
with the question in ``inputRequests`` until ``tasks/update`` brings the
answers (partial sets allowed).  Outcomes: the tool's result (even with
``isError``) is ``completed``; an ``McpError`` from the tool is ``failed``
with that JSON-RPC error inlined; a ``tasks/cancel`` cancels the run and the
task settles ``cancelled``.  The status table itself is ``_sansio.task_table``.
Status notifications (``notifications/tasks``, a MAY) are not sent.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final

import attrs
import trio

from .._errors import McpError
from .._sansio import jsonrpc as rpc
from .._sansio.schema import ResultType
from .._sansio.task_table import TaskRecord, TaskStateError, TaskTable

logger = logging.getLogger("trimcp.server")

DEFAULT_TTL_MS: Final = 3_600_000
DEFAULT_POLL_INTERVAL_MS: Final = 500


@attrs.define(eq=False)
class _Run:
    """One tool call run in the background, before and after it became a task."""

    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    ready: trio.Event = attrs.field(factory=trio.Event)
    outcome: tuple[str, Any] | None = None
    task_id: str | None = None
    answers: dict[str, Any] = attrs.field(factory=dict)
    wake: trio.Event = attrs.field(factory=trio.Event)

    def deliver(self, kind: str, value: Any) -> None:
        if self.outcome is None:
            self.outcome = (kind, value)
        self.ready.set()


class TaskHandle:
    """What a tool's ``Context`` holds while its call may run as a task."""

    def __init__(self, runner: TaskRunner, run: _Run) -> None:
        self._runner = runner
        self._run = run

    @property
    def started(self) -> bool:
        return self._run.task_id is not None

    @property
    def task_id(self) -> str | None:
        return self._run.task_id

    def start(self) -> None:
        if self._run.task_id is None:
            self._runner._create(self._run)

    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """Park the task in ``input_required`` until every question has its answer."""
        run, table = self._run, self._runner.table
        assert run.task_id is not None
        table.ask(run.task_id, requests, self._runner.clock())
        while not all(k in run.answers for k in requests):
            run.wake = trio.Event()
            await run.wake.wait()
        return {k: run.answers.pop(k) for k in requests}


def _unknown(task_id: object) -> McpError:
    return McpError(rpc.INVALID_PARAMS, f"Unknown task: {task_id}", {"taskId": task_id})


def _task_id(params: Mapping[str, Any]) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str):
        raise McpError(rpc.INVALID_PARAMS, "params.taskId must be a string")
    return task_id


class TaskRunner:
    """A server's tasks: the table, the background runs, the three task methods."""

    def __init__(
        self,
        *,
        ttl_ms: int | None = DEFAULT_TTL_MS,
        poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS,
        max_running: int = 64,
        max_tasks: int = 1000,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.table = TaskTable(max_tasks=max_tasks)
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.clock = clock
        self._new_id = new_id
        self._limiter = trio.CapacityLimiter(max_running)
        self._hosts: list[trio.Nursery] = []
        self._runs: dict[str, _Run] = {}

    @contextlib.asynccontextmanager
    async def hosting(self) -> AsyncIterator[None]:
        """Run background tasks in a nursery for as long as this block lasts."""
        async with trio.open_nursery() as nursery:
            self._hosts.append(nursery)
            try:
                yield
            finally:
                self._hosts.remove(nursery)
                nursery.cancel_scope.cancel()

    def hosting_unless_hosted(self) -> contextlib.AbstractAsyncContextManager[None]:
        """``hosting()``, or nothing when a longer-lived host (an HTTP or WebSocket server's)
        already runs: one session ending must not cancel the tasks of the others."""
        return self.hosting() if not self._hosts else contextlib.nullcontext()

    # ------------------------------------------------------------ tools/call

    async def call(
        self, attach: Callable[[TaskHandle], None], body: Callable[[], Awaitable[dict[str, Any]]], *, at_once: bool
    ) -> dict[str, Any]:
        """Answer a task-capable ``tools/call``: a ``CreateTaskResult``, or what ``body``
        answered before it became a task.  ``attach`` gives the call's ``Context`` its handle."""
        if not self._hosts:
            raise McpError(rpc.INTERNAL_ERROR, "this server runs no background tasks (no task host)")
        run = _Run()
        attach(TaskHandle(self, run))
        if at_once:
            self._create(run)
        self._hosts[0].start_soon(self._background, run, body)  # the oldest host lives longest
        try:
            await run.ready.wait()
        except BaseException:
            if run.task_id is None:
                run.scope.cancel()  # the request went away before its task existed
            raise
        assert run.outcome is not None
        kind, value = run.outcome
        if kind == "raise":
            raise value
        result: dict[str, Any] = value
        return result

    def _create(self, run: _Run) -> None:
        try:
            record = self.table.create(
                self._new_id(), self.clock(), ttl_ms=self.ttl_ms, poll_interval_ms=self.poll_interval_ms
            )
        except TaskStateError as exc:
            raise McpError(rpc.INTERNAL_ERROR, str(exc)) from None
        run.task_id = record.task_id
        self._runs[record.task_id] = run
        run.deliver("result", {"resultType": ResultType.TASK, **record.to_wire(detailed=False)})

    async def _background(self, run: _Run, body: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        try:
            async with self._limiter:
                with run.scope:
                    try:
                        result = await body()
                    except McpError as exc:
                        self._failed(run, exc)
                    except Exception as exc:
                        logger.exception("task run failed")
                        self._failed(run, McpError(rpc.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
                    except trio.Cancelled:
                        raise
                    except BaseException as exc:
                        if run.task_id is not None:  # (no MRTR suspension once a task)
                            self._failed(run, McpError(rpc.INTERNAL_ERROR, "the tool stopped for input"))
                        else:
                            run.deliver("raise", exc)
                    else:
                        self._completed(run, result)
        finally:
            self._settle_cancelled(run)

    def _completed(self, run: _Run, result: dict[str, Any]) -> None:
        if run.task_id is None:
            run.deliver("result", result)
        else:
            self.table.complete(run.task_id, result, self.clock())
            self._runs.pop(run.task_id, None)

    def _failed(self, run: _Run, error: McpError) -> None:
        if run.task_id is None:
            run.deliver("raise", error)
            return
        wire = rpc.ErrorObject(error.code, error.message, error.data).to_wire()
        self.table.fail(run.task_id, wire, self.clock(), error.message)
        self._runs.pop(run.task_id, None)

    def _settle_cancelled(self, run: _Run) -> None:
        run.deliver("raise", McpError(rpc.INTERNAL_ERROR, "the tool call was cancelled"))
        if run.task_id is None:
            return
        self._runs.pop(run.task_id, None)
        record = self.table.get(run.task_id, self.clock())
        if record is not None and not record.terminal:
            self.table.cancel(run.task_id, self.clock(), "The task was cancelled.")

    # ------------------------------------------------------------ the task methods

    def _record(self, params: Mapping[str, Any]) -> TaskRecord:
        task_id = _task_id(params)
        record = self.table.get(task_id, self.clock())
        if record is None:
            raise _unknown(task_id)
        return record

    def get(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/get``: the ``DetailedTask``."""
        return self._record(params).to_wire(detailed=True)

    def update(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/update``: take the answers to outstanding questions; an empty ack."""
        record = self._record(params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise McpError(rpc.INVALID_PARAMS, "params.inputResponses must be an object")
        if record.terminal:
            return {}
        taken = self.table.answer(record.task_id, responses, self.clock())
        run = self._runs.get(record.task_id)
        if run is not None and taken:
            run.answers.update(taken)
            run.wake.set()
        return {}

    def cancel(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/cancel``: stop the run (cooperatively); an empty ack, also for a finished task."""
        record = self._record(params)
        run = self._runs.get(record.task_id)
        if run is not None:
            run.scope.cancel()
        return {}
