"""One task's life, watched from outside: 2025-11-25 ``basic/utilities/tasks``.

Theory of operation
-------------------
``lifecycle`` calls one read-only tool whose ``execution.taskSupport`` allows
tasks as task A, and walks the page's sections in an order where one step
cannot spoil the next:

* "Creating Tasks" / "Result Retrieval": the answer is a ``CreateTaskResult``
  whose task begins ``working`` ("Task Status Lifecycle");
* "Getting Tasks": ``tasks/get`` names A, even with a related-task ``_meta``
  naming another task in the request ("Associating Task-Related Messages":
  the ``taskId`` parameter is the source of truth);
* "Retrieving Task Results": ``tasks/result`` is sent while A may still be
  working; it must not answer before A is terminal (a ``tasks/get`` right
  after its answer shows whether it did), must carry the related-task
  ``_meta`` naming A, and its payload must be what the request would have
  returned (for a tool whose tasks are optional, a plain call of it is the
  comparison: result or error, ``isError`` alike);
* "Listing Tasks": A is in some page of ``tasks/list``;
* "Task Cancellation": cancelling the now terminal A is refused with -32602;
  task B, created and cancelled at once, is answered ``cancelled`` and still
  says so a little later, after its work would have finished (a server may
  also have deleted it by then: the page allows that).
"""

from __future__ import annotations

from typing import Any

import trio

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..results import Results
from .task_session import (
    ANSWER_WAIT,
    DECOY,
    MAX_PAGES,
    NO_TASK,
    RELATED,
    TERMINAL,
    Exchange,
    Session,
)

__all__ = ["lifecycle"]

TTL = 60000
#: How long to wait for ``tasks/result`` at most; a task still working by then is skipped.
RESULT_WAIT = ANSWER_WAIT
DECOY_NOTE = " (the request's related-task _meta, naming no task, must be ignored in favour of taskId)"


async def lifecycle(
    rec: Results, session: Session, tool: dict[str, Any], args: dict[str, Any],
    can_list: bool, can_cancel: bool, stage: list[str], timeout: float,
) -> None:
    name = tool["name"]
    stage[0] = "tasks.create"
    call = {"name": name, "arguments": args, "task": {"ttl": TTL}}
    task_id = _judge_create(rec, session, await session.ask("tools/call", call), name)
    if task_id is None:
        for check_id in ("tasks.get", "tasks.result", "tasks.result-meta", "tasks.list", "tasks.cancel",
                         "tasks.cancel-terminal"):
            rec.skip(check_id, f"tools/call {name} as a task created no task")
        return
    stage[0] = "tasks.get"
    before = await session.get(task_id)
    _judge_get(rec, before, task_id)
    stage[0] = "tasks.result"
    wait = min(RESULT_WAIT, timeout / 3)
    session.waiting_for = task_id
    payload = await session.ask("tasks/result", {"taskId": task_id, "_meta": DECOY}, within=wait)
    session.waiting_for = None
    after = await session.get(task_id)
    _judge_get(rec, after, task_id)
    plain = None
    execution = tool.get("execution")
    if isinstance(execution, dict) and execution.get("taskSupport") == "optional":
        plain = await session.ask("tools/call", {"name": name, "arguments": args})
    _judge_result(rec, payload, after, plain, task_id, wait, (before.result or {}).get("status"))
    stage[0] = "tasks.list"
    if can_list:
        await _list(rec, session, task_id)
    else:
        rec.skip("tasks.list", "the server does not declare tasks.list")
    if can_cancel:
        stage[0] = "tasks.cancel-terminal"
        await _cancel_terminal(rec, session, task_id)
        stage[0] = "tasks.cancel"
        await _cancel_working(rec, session, call, task_id)
    else:
        for check_id in ("tasks.cancel", "tasks.cancel-terminal"):
            rec.skip(check_id, "the server does not declare tasks.cancel")
    stage[0] = "tasks.status-flow"
    await session.get(task_id)  # one last look: a terminal task must not have moved


def _judge_create(rec: Results, session: Session, found: Exchange, name: str) -> str | None:
    check = "tasks.create"
    if found.answer is None:
        rec.fail(check, f"tools/call {name} as a task: no answer within {RESULT_WAIT:g} s", found.evidence)
        return None
    if found.error is not None:
        if found.error.code == rpc.METHOD_NOT_FOUND:
            rec.fail(check, f"tools/call {name} as a task: -32601, although its taskSupport allows tasks",
                     found.evidence)
        else:
            rec.skip(check, f"tools/call {name} as a task was refused ({found.error.code} {found.error.message})")
        return None
    result = found.result or {}
    task = result.get("task")
    if not isinstance(task, dict):
        rec.fail(check, f"tools/call {name} as a task: the result has no task (not a CreateTaskResult)",
                 found.evidence)
        return None
    task_id = session.read_task(task, found, op=False)
    if task_id is None:
        rec.fail(check, f"the created task's taskId {task.get('taskId')!r} is not a string", found.evidence)
    elif task.get("status") != "working":
        rec.fail(check, f"task {task_id} began in status {task.get('status')!r}, not working", found.evidence)
    else:
        rec.ok(check, f"tools/call {name}: task {task_id}, working")
    return task_id


def _judge_get(rec: Results, found: Exchange, task_id: str) -> None:
    check = "tasks.get"
    if found.answer is None:
        rec.fail(check, f"tasks/get {task_id}: no answer", found.evidence)
    elif found.error is not None:
        rec.fail(check, f"tasks/get {task_id}: error {found.error.code} {found.error.message}{DECOY_NOTE}",
                 found.evidence)
    elif (got := (found.result or {}).get("taskId")) != task_id:
        why = DECOY_NOTE if got == NO_TASK else ""
        rec.fail(check, f"tasks/get {task_id} answered task {got!r}{why}", found.evidence)
    else:
        rec.ok(check, f"tasks/get {task_id}: {(found.result or {}).get('status')}")


def _judge_result(
    rec: Results, payload: Exchange, after: Exchange, plain: Exchange | None, task_id: str, wait: float,
    before: Any = None,
) -> None:
    """``before``: the task's status in the last tasks/get before tasks/result was sent.  The
    sentence is that tasks/result blocks until the task is terminal: a task already terminal
    by then puts nothing to that test, so what would pass is a skip (a wrong payload still fails)."""
    check, meta_check = "tasks.result", "tasks.result-meta"
    def passed(detail: str) -> None:
        if before in TERMINAL:
            rec.skip(check, f"task {task_id} had finished ({before}) before tasks/result was sent: "
                     "its blocking was not tested")
        else:
            rec.ok(check, detail)
    status = (after.result or {}).get("status")
    evidence = payload.evidence + after.evidence
    if payload.answer is None:
        if status in TERMINAL:
            rec.fail(check, f"tasks/result {task_id}: no answer within {wait:g} s although the task is {status}",
                     evidence)
        else:
            rec.skip(check, f"task {task_id} was still {status} after {wait:g} s")
        rec.skip(meta_check, "tasks/result did not answer")
        return
    if isinstance(status, str) and status not in TERMINAL:
        rec.fail(check, f"tasks/result {task_id} answered while the task was still {status}", evidence)
    if payload.error is not None:
        rec.skip(meta_check, "tasks/result answered with a JSON-RPC error, which has no _meta")
        if status == "completed":
            rec.fail(check, f"tasks/result of a completed task is error {payload.error.code}", evidence)
        elif plain is not None and plain.result is not None:
            rec.fail(check, f"tasks/result is error {payload.error.code}; the call without a task got a result",
                     evidence + plain.evidence)
        else:
            passed(f"tasks/result {task_id}, sent while the task was {before}: answered once it was "
                          f"{status}, with the underlying error {payload.error.code}")
        return
    result = payload.result or {}
    _judge_meta(rec, payload, task_id)
    try:
        called = s.from_wire(s.CallToolResult, result)
    except s.SchemaError as exc:
        rec.fail(check, f"tasks/result {task_id} is not a CallToolResult: {exc}", evidence)
        return
    if plain is not None and plain.error is not None:
        rec.fail(check, f"tasks/result is a result; the call without a task got error {plain.error.code}",
                 evidence + plain.evidence)
    elif plain is not None and bool((plain.result or {}).get("isError")) != bool(called.is_error):
        rec.fail(check, "tasks/result and the call without a task differ in isError", evidence + plain.evidence)
    else:
        passed(f"tasks/result {task_id}, sent while the task was {before}: a CallToolResult once it was "
                      f"{status}" + ("" if plain is None else ", isError as in the call without a task"))


def _judge_meta(rec: Results, payload: Exchange, task_id: str) -> None:
    check = "tasks.result-meta"
    meta = (payload.result or {}).get("_meta")
    related = meta.get(RELATED) if isinstance(meta, dict) else None
    got = related.get("taskId") if isinstance(related, dict) else None
    if got == task_id:
        rec.ok(check, f"{RELATED} names {task_id}")
    elif related is None:
        rec.fail(check, f"the tasks/result answer has no _meta {RELATED}", payload.evidence)
    else:
        rec.fail(check, f"the tasks/result answer's {RELATED} names {got!r}, not {task_id}", payload.evidence)


async def _list(rec: Results, session: Session, task_id: str) -> None:
    check = "tasks.list"
    cursor: str | None = None
    for page in range(1, MAX_PAGES + 1):
        found = await session.ask("tasks/list", {"cursor": cursor} if cursor else {})
        result = found.result
        if result is None or not isinstance(result.get("tasks"), list):
            what = "no answer" if found.answer is None else (
                f"error {found.error.code}" if found.error is not None else "no tasks array")
            rec.fail(check, f"tasks/list page {page}: {what}", found.evidence)
            return
        session.ops_answered += 1
        meta = result.get("_meta")
        if isinstance(meta, dict) and RELATED in meta:
            session.meta_on_ops.append(found)
        ids = [session.read_task(task, found, op=False) for task in result["tasks"]]
        if task_id in ids:
            rec.ok(check, f"task {task_id} listed on page {page}")
            return
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            rec.fail(check, f"task {task_id} (retrievable with tasks/get) is in none of {page} pages of tasks/list",
                     found.evidence)
            return
    rec.skip(check, f"task {task_id} not found in the first {MAX_PAGES} pages")


async def _cancel_terminal(rec: Results, session: Session, task_id: str) -> None:
    check = "tasks.cancel-terminal"
    status = session.status(task_id)
    if status not in TERMINAL:
        rec.skip(check, f"task {task_id} did not reach a terminal status")
        return
    found = await session.ask("tasks/cancel", {"taskId": task_id, "_meta": DECOY})
    if found.result is not None:
        session.read_task(found.result, found, op=True)
        rec.fail(check, f"tasks/cancel of the {status} task {task_id} was answered with a result", found.evidence)
    elif found.error is None:
        rec.fail(check, f"tasks/cancel of the {status} task {task_id}: no answer", found.evidence)
    elif found.error.code != rpc.INVALID_PARAMS:
        rec.fail(check, f"tasks/cancel of the {status} task {task_id}: error {found.error.code}, not -32602",
                 found.evidence)
    else:
        rec.ok(check, f"tasks/cancel of the {status} task {task_id}: -32602")


async def _cancel_working(rec: Results, session: Session, call: dict[str, Any], first_id: str) -> None:
    check = "tasks.cancel"
    created = await session.ask("tools/call", call)
    task = (created.result or {}).get("task")
    task_id = session.read_task(task, created, op=False) if isinstance(task, dict) else None
    if task_id is None:
        rec.skip(check, "a second task-augmented call created no task")
        return
    if task_id == first_id:
        rec.fail("tasks.create", f"two tasks got the same taskId {task_id}", created.evidence)
    found = await session.ask("tasks/cancel", {"taskId": task_id, "_meta": DECOY})
    if found.result is not None:
        session.read_task(found.result, found, op=True)
        status = found.result.get("status")
        if status != "cancelled":
            rec.fail(check, f"tasks/cancel of task {task_id} answered status {status!r}, not cancelled",
                     found.evidence)
            return
        poll = found.result.get("pollInterval")
        # Long enough for the work to have finished had it kept running; bounded either way.
        await trio.sleep(min(max(poll / 1000 if isinstance(poll, int) else 0.0, 0.5), 2.0))
        later = await session.get(task_id)
        if later.error is not None and later.error.code == rpc.INVALID_PARAMS:
            rec.ok(check, f"task {task_id} cancelled, then deleted (which the page allows)")
        elif (now := (later.result or {}).get("status")) != "cancelled":
            rec.fail(check, f"task {task_id} was cancelled, then became {now!r}", found.evidence + later.evidence)
        else:
            rec.ok(check, f"task {task_id} cancelled, and still cancelled later")
        return
    if found.error is None:
        rec.fail(check, f"tasks/cancel of task {task_id}: no answer", found.evidence)
        return
    later = await session.get(task_id)
    status = (later.result or {}).get("status")
    if found.error.code == rpc.INVALID_PARAMS and status in TERMINAL:
        rec.skip(check, f"task {task_id} was already {status} when cancelled")
    else:
        rec.fail(check, f"tasks/cancel of the {status} task {task_id}: error {found.error.code}",
                 found.evidence + later.evidence)
