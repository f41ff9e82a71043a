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

* ``task_start="at_once"``: the task record is created before the tool runs,
  and the ``CreateTaskResult`` goes out only once the store holds it - once
  ``tasks/get`` on any replica would find it (the spec's durable-creation rule);
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
task settles ``cancelled``.  Status notifications (``notifications/tasks``,
a MAY) are not sent.

The records live in the server's store (``trimcp.server.store``; in memory
unless ``serve_http(store=...)`` binds another), each move one atomic
``change_task`` with the moves of ``_sansio.task_table``, so the three
methods work on whichever replica they reach.  The run itself lives in the
process that started it (the record's ``runner``): ``tasks/update`` and
``tasks/cancel`` that reach another replica leave the answers (or
``cancel_requested``) in the record and say so on the store's bus
(``TaskChanged``); the runner takes them, and also looks again every
``recheck`` seconds, since a bus message can be lost.  A task whose runner
died is found out by the next look-up on any replica: its lease has lapsed
(``Store.replica_alive``), and the task is moved to ``failed`` with a JSON-RPC
error that says so - never left ``working``.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from functools import partial
from typing import Any, Final

import attrs
import trio

from .._errors import McpError
from .._sansio import jsonrpc as rpc
from .._sansio import task_table as tt
from .._sansio.schema import ResultType
from .._sansio.store.bus import BusMessage, TaskChanged
from .._sansio.task_table import TaskRecord, TaskStateError
from .store.base import Store, StoreError
from .store.memory import MemoryStore

logger = logging.getLogger("trimcp.server")

DEFAULT_TTL_MS: Final = 3_600_000
DEFAULT_POLL_INTERVAL_MS: Final = 500
#: Seconds a final write (the outcome of a run) may take before it is given up.
_SETTLE_TIMEOUT: Final = 10.0


@attrs.define(eq=False)
class _Run:
    """One tool call run in the background, before and after it became a task."""

    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    ready: trio.Event = attrs.field(factory=trio.Event)
    outcome: tuple[str, Any] | None = None
    task_id: str | None = None
    #: Set once the store holds the task (or refused it: ``refused``).
    created: trio.Event = attrs.field(factory=trio.Event)
    refused: bool = False
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

    async def report_progress(self, progress: float, total: float | None, message: str | None) -> None:
        """How far the task is, in its ``statusMessage``: the request whose ``progressToken`` a
        notification would name was answered with the ``CreateTaskResult``, so the client learns
        it from ``tasks/get`` (and ``notifications/tasks``)."""
        task_id = self._run.task_id
        assert task_id is not None, "report_progress before the task started"
        text = tt.progress_message(progress, total, message)
        await self._runner._change(task_id, lambda record, now: tt.note_progress(record, text, now))

    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """Park the task in ``input_required`` until every question has its answer."""
        run, runner = self._run, self._runner
        task_id = await runner._created(run)
        await runner._change(task_id, lambda r, now: tt.ask(r, requests, now))
        answers: dict[str, Any] = {}
        while True:
            run.wake = trio.Event()  # before looking: a wake-up meanwhile is not lost
            missing = [k for k in requests if k not in answers]
            answers.update(await runner._change(task_id, partial(_take_answers, missing)))
            if all(k in answers for k in requests):
                return {k: answers[k] for k in requests}
            with trio.move_on_after(runner.recheck):
                await run.wake.wait()


def _take_answers(keys: list[str], record: TaskRecord, _now: float) -> dict[str, Any]:
    return tt.take_answers(record, keys)


def _unknown(task_id: object) -> McpError:
    return McpError(rpc.INVALID_PARAMS, f"Unknown task: {task_id}", {"taskId": task_id})


def _task_id(params: Mapping[str, Any]) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str):
        raise McpError(rpc.INVALID_PARAMS, "params.taskId must be a string")
    return task_id


def _store_failed(exc: StoreError) -> McpError:
    return McpError(rpc.INTERNAL_ERROR, f"the task store failed: {exc}")


class TaskRunner:
    """A server's tasks: the records (in its store), the background runs, the three task methods."""

    def __init__(
        self,
        *,
        ttl_ms: int | None = DEFAULT_TTL_MS,
        poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS,
        max_running: int = 64,
        max_tasks: int = 1000,
        clock: Callable[[], float] = time.time,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        store: Store | None = None,
        recheck: float = 1.0,
    ) -> None:
        #: Where the records live (``hosting(store)`` binds a server's shared one).
        self.store: Store = store if store is not None else MemoryStore(max_tasks=max_tasks)
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.clock = clock
        #: Seconds between a waiting runner's own looks at its record (the bus may lose a message).
        self.recheck = recheck
        self._new_id = new_id
        self._limiter = trio.CapacityLimiter(max_running)
        self._hosts: list[trio.Nursery] = []
        self._runs: dict[str, _Run] = {}

    @contextlib.asynccontextmanager
    async def hosting(self, store: Store | None = None) -> AsyncIterator[None]:
        """Run background tasks in a nursery for as long as this block lasts; with ``store``,
        keep the records there meanwhile (a server serving over HTTP with a shared store)."""
        previous = self.store
        if store is not None and store is not previous:
            if self._hosts:
                raise ValueError("this server's tasks already live in another store (one store per Server)")
            self.store = store
        stop = self.store.subscribe(self._on_message)
        try:
            async with trio.open_nursery() as nursery:
                self._hosts.append(nursery)
                try:
                    yield
                finally:
                    self._hosts.remove(nursery)
                    nursery.cancel_scope.cancel()
        finally:
            stop()
            self.store = previous

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
        now = self.clock()
        record = tt.new_record(
            self._new_id(),
            now,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            runner=self.store.replica_id,
        )
        run.task_id = record.task_id
        self._runs[record.task_id] = run
        self._hosts[0].start_soon(self._persist, run, record)

    async def _persist(self, run: _Run, record: TaskRecord) -> None:
        """Write the new task; the ``CreateTaskResult`` goes out once the store holds it."""
        try:
            await self.store.create_task(record, self.clock())
        except (TaskStateError, StoreError) as exc:
            run.refused = True
            self._runs.pop(record.task_id, None)
            run.deliver("raise", McpError(rpc.INTERNAL_ERROR, str(exc)))
            run.scope.cancel()
        else:
            run.deliver("result", {"resultType": ResultType.TASK, **record.to_wire(detailed=False)})
        finally:
            run.created.set()

    async def _created(self, run: _Run) -> str:
        """The run's task id once the store holds the task (``McpError`` if it refused it)."""
        await run.created.wait()
        if run.refused or run.task_id is None:
            raise McpError(rpc.INTERNAL_ERROR, "the task could not be created")
        return run.task_id

    async def _change(self, task_id: str, change: Callable[[TaskRecord, float], Any]) -> Any:
        now = self.clock()
        try:
            moved = await self.store.change_task(task_id, now, lambda record: change(record, now))
        except StoreError as exc:
            raise _store_failed(exc) from None
        if moved is None:
            raise _unknown(task_id)
        return moved[1]

    async def _background(self, run: _Run, body: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        try:
            async with self._limiter:
                with run.scope:
                    try:
                        result = await body()
                    except McpError as exc:
                        await self._failed(run, exc)
                    except Exception as exc:
                        logger.exception("task run failed")
                        await self._failed(run, McpError(rpc.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
                    except trio.Cancelled:
                        raise
                    except BaseException as exc:
                        if run.task_id is not None:  # (no MRTR suspension once a task)
                            await self._failed(run, McpError(rpc.INTERNAL_ERROR, "the tool stopped for input"))
                        else:
                            run.deliver("raise", exc)
                    else:
                        await self._completed(run, result)
        finally:
            await self._settle_cancelled(run)

    async def _settle(self, run: _Run, change: Callable[[TaskRecord, float], Any]) -> None:
        """Write a run's outcome: shielded (a cancelled run still records it), bounded in time."""
        with trio.CancelScope(shield=True), trio.move_on_after(_SETTLE_TIMEOUT):
            await run.created.wait()
            if run.refused or run.task_id is None:
                return
            try:
                await self._change(run.task_id, change)
            except (McpError, TaskStateError) as exc:
                logger.warning("task %s: its outcome could not be recorded: %s", run.task_id, exc)
        if run.task_id is not None:
            self._runs.pop(run.task_id, None)

    async def _completed(self, run: _Run, result: dict[str, Any]) -> None:
        if run.task_id is None:
            run.deliver("result", result)
        else:
            await self._settle(run, lambda r, now: tt.complete(r, result, now))

    async def _failed(self, run: _Run, error: McpError) -> None:
        if run.task_id is None:
            run.deliver("raise", error)
            return
        wire = rpc.ErrorObject(error.code, error.message, error.data).to_wire()
        await self._settle(run, lambda r, now: tt.fail(r, wire, now, error.message))

    async def _settle_cancelled(self, run: _Run) -> None:
        run.deliver("raise", McpError(rpc.INTERNAL_ERROR, "the tool call was cancelled"))
        if run.task_id is None or run.task_id not in self._runs:
            return

        def cancelled(record: TaskRecord, now: float) -> None:
            if not record.terminal:
                tt.cancel(record, now, "The task was cancelled.")

        await self._settle(run, cancelled)

    # ------------------------------------------------------------ replicas

    def _on_message(self, message: BusMessage, origin: str) -> None:
        """``tasks/update`` or ``tasks/cancel`` reached another replica: wake the run."""
        if not isinstance(message, TaskChanged):
            return
        run = self._runs.get(message.task_id)
        if run is not None and self._hosts:
            run.wake.set()
            self._hosts[0].start_soon(self._check_cancel, message.task_id, run)

    async def _check_cancel(self, task_id: str, run: _Run) -> None:
        try:
            record = await self.store.get_task(task_id, self.clock())
        except StoreError as exc:
            logger.warning("task %s: could not read its record: %s", task_id, exc)
            return
        if record is not None and record.cancel_requested:
            run.scope.cancel()

    async def _look_up(self, params: Mapping[str, Any]) -> TaskRecord:
        """The task ``params`` names; one whose runner is gone is failed first (it never
        stays ``working``)."""
        task_id = _task_id(params)
        now = self.clock()
        try:
            record = await self.store.get_task(task_id, now)
            if record is None:
                raise _unknown(task_id)
            if record.terminal or record.task_id in self._runs:
                return record
            if record.runner != self.store.replica_id and await self.store.replica_alive(record.runner or ""):
                return record
            # Its runner is gone: a process that died (its lease lapsed), or this one's run
            # that ended without recording how.
            moved = await self.store.change_task(task_id, now, lambda r: tt.orphan(r, now))
        except StoreError as exc:
            raise _store_failed(exc) from None
        if moved is None:
            raise _unknown(task_id)
        if moved[1]:
            logger.warning("task %s failed: its runner %s is gone", task_id, record.runner)
        return moved[0]

    # ------------------------------------------------------------ the task methods

    async def get(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/get``: the ``DetailedTask``."""
        return (await self._look_up(params)).to_wire(detailed=True)

    async def update(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/update``: take the answers to outstanding questions; an empty ack."""
        record = await self._look_up(params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise McpError(rpc.INVALID_PARAMS, "params.inputResponses must be an object")
        if record.terminal:
            return {}
        taken = await self._change(record.task_id, lambda r, now: {} if r.terminal else tt.answer(r, responses, now))
        if taken:
            await self._tell_runner(record.task_id)
        return {}

    async def cancel(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/cancel``: stop the run (cooperatively); an empty ack, also for a finished task."""
        record = await self._look_up(params)
        run = self._runs.get(record.task_id)
        if run is not None:
            run.scope.cancel()
        elif not record.terminal and await self._change(record.task_id, lambda r, _now: tt.request_cancel(r)):
            await self._tell_runner(record.task_id)
        return {}

    async def _tell_runner(self, task_id: str) -> None:
        run = self._runs.get(task_id)
        if run is not None:
            run.wake.set()
            return
        try:
            await self.store.publish(TaskChanged(task_id))
        except StoreError as exc:
            # The runner looks at its record every ``recheck`` seconds anyway.
            logger.warning("task %s: could not tell its runner: %s", task_id, exc)
