"""One task's life, watched from outside: 2025-11-25 ``basic/utilities/tasks``.

Theory of operation
-------------------
``lifecycle`` calls one read-only tool whose ``execution.taskSupport`` allows
tasks as tasks A and B (A with a ``progressToken``), and walks the page's
sections in an order where one step cannot spoil the next:

* "Creating Tasks" / "Result Retrieval": each answer is a ``CreateTaskResult``
  whose task begins ``working`` ("Task Status Lifecycle"), every task created
  in the run has its own ``taskId``, and ``tasks/list`` lists none twice;
* "Getting Tasks": ``tasks/get`` of A names A although its related-task
  ``_meta`` names the real task B, and the other way round ("Associating
  Task-Related Messages": the ``taskId`` parameter is the source of truth);
* "Retrieving Task Results": ``tasks/result`` of A (``_meta`` naming B) is sent
  while A may still be working; it must not answer before A is terminal (a
  ``tasks/get`` right after its answer shows whether it did), must carry the
  related-task ``_meta`` naming A, and its payload must be exactly what the
  request returns without a task.  For a tool whose tasks are optional, plain
  calls before A is created and after its result bracket the task: when they
  agree (the tool is deterministic over that window) the payload must equal
  them apart from ``_meta``, and a second ``tasks/result`` of the terminal A
  must too; when they differ only ``isError`` is compared.  A task-augmented
  call of a tool that does not exist, when the server makes a task of it, must
  give from ``tasks/result`` the JSON-RPC error the plain call of it gets;
* "Listing Tasks": A is in some page of ``tasks/list``;
* "Task Cancellation": cancelling the now terminal A is refused with -32602;
  of tasks C and D, created together, C is cancelled with a ``_meta`` naming
  D: the answer is C, ``cancelled``, and C still says so a little later,
  after its work would have finished (a server may also have deleted it by
  then: the page allows that), while D was not cancelled.

``tasks.progress`` is judged afterwards from every ``notifications/progress``
of the connection (A's call is its one request with a ``progressToken``).
"""

from __future__ import annotations

from typing import Any

import attrs
import trio

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..results import Results
from ..values import invalid_arguments
from .task_probe import (
    ANSWER_WAIT,
    MAX_PAGES,
    NO_TASK,
    PROGRESS_TOKEN,
    RELATED,
    TERMINAL,
    Exchange,
    TaskProbe,
    related,
)

__all__ = ["lifecycle"]

TTL = 60000
#: How long to wait for ``tasks/result`` at most; a task still working by then is skipped.
RESULT_WAIT = ANSWER_WAIT
#: A tool no server has: its plain call gets a JSON-RPC error, which a task of it must give too.
NO_TOOL = "trimcp-check-no-such-tool"


def _decoy_note(decoy: str) -> str:
    return f" (the request's related-task _meta, naming {decoy}, must be ignored in favour of taskId)"


async def lifecycle(
    rec: Results,
    session: TaskProbe,
    tool: dict[str, Any],
    args: dict[str, Any],
    can_list: bool,
    can_cancel: bool,
    stage: list[str],
    timeout: float,
) -> None:
    name = tool["name"]
    stage[0] = "tasks.create"
    call = {"name": name, "arguments": args, "task": {"ttl": TTL}}
    execution = tool.get("execution")
    optional = isinstance(execution, dict) and execution.get("taskSupport") == "optional"
    plain = [await session.ask("tools/call", {"name": name, "arguments": args})] if optional else []
    task_id = _judge_create(
        rec, session, await session.ask("tools/call", {**call, "_meta": {"progressToken": PROGRESS_TOKEN}}), name
    )
    if task_id is None:
        for check_id in (
            "tasks.get",
            "tasks.result",
            "tasks.result-meta",
            "tasks.list",
            "tasks.cancel",
            "tasks.cancel-terminal",
        ):
            rec.skip(check_id, f"tools/call {name} as a task created no task")
        return
    other = await _create(session, call) or NO_TASK
    stage[0] = "tasks.get"
    before = await session.get(task_id, other)
    _judge_get(rec, before, task_id, other)
    if other != NO_TASK:
        _judge_get(rec, await session.get(other, task_id), other, task_id)
    stage[0] = "tasks.result"
    wait = min(RESULT_WAIT, timeout / 3)
    session.waiting_for = task_id
    payload = await session.ask("tasks/result", {"taskId": task_id, "_meta": related(other)}, within=wait)
    session.waiting_for = None
    if payload.answer is not None:
        session.terminal_at.setdefault(task_id, payload.seq)
    after = await session.get(task_id, other)
    _judge_get(rec, after, task_id, other)
    again = None
    if payload.answer is not None and (after.result or {}).get("status") in TERMINAL:
        again = await session.ask("tasks/result", {"taskId": task_id}, within=wait)
    if optional:
        plain.append(await session.ask("tools/call", {"name": name, "arguments": args}))
    failing = await _error_tasks(session, tool, wait)
    _judge_result(
        rec, Outcome(payload, after, again, plain, failing), task_id, other, wait, (before.result or {}).get("status")
    )
    stage[0] = "tasks.list"
    if can_list:
        await _list(rec, session, task_id)
    else:
        rec.skip("tasks.list", "the server does not declare tasks.list")
    if can_cancel:
        stage[0] = "tasks.cancel-terminal"
        await _cancel_terminal(rec, session, task_id, other)
        stage[0] = "tasks.cancel"
        await _cancel_working(rec, session, call)
    else:
        for check_id in ("tasks.cancel", "tasks.cancel-terminal"):
            rec.skip(check_id, "the server does not declare tasks.cancel")
    stage[0] = "tasks.status-flow"
    await session.get(task_id)  # one last look: a terminal task must not have moved


async def _create(session: TaskProbe, call: dict[str, Any]) -> str | None:
    """Another task of the same call; its id, or ``None`` when none was created."""
    created = await session.ask("tools/call", call)
    task = (created.result or {}).get("task")
    return session.read_task(task, created, op=False, created=True) if isinstance(task, dict) else None


def _judge_create(rec: Results, session: TaskProbe, found: Exchange, name: str) -> str | None:
    check = "tasks.create"
    if found.answer is None:
        rec.fail(check, f"tools/call {name} as a task: no answer within {RESULT_WAIT:g} s", found.evidence)
        return None
    if found.error is not None:
        if found.error.code == rpc.METHOD_NOT_FOUND:
            rec.fail(
                check, f"tools/call {name} as a task: -32601, although its taskSupport allows tasks", found.evidence
            )
        else:
            rec.skip(check, f"tools/call {name} as a task was refused ({found.error.code} {found.error.message})")
        return None
    result = found.result or {}
    task = result.get("task")
    if not isinstance(task, dict):
        rec.fail(check, f"tools/call {name} as a task: the result has no task (not a CreateTaskResult)", found.evidence)
        return None
    task_id = session.read_task(task, found, op=False, created=True)
    if task_id is None:
        rec.fail(check, f"the created task's taskId {task.get('taskId')!r} is not a string", found.evidence)
    elif task.get("status") != "working":
        rec.fail(check, f"task {task_id} began in status {task.get('status')!r}, not working", found.evidence)
    else:
        rec.ok(check, f"tools/call {name}: task {task_id}, working")
    return task_id


def _judge_get(rec: Results, found: Exchange, task_id: str, decoy: str) -> None:
    check = "tasks.get"
    if found.answer is None:
        rec.fail(check, f"tasks/get {task_id}: no answer", found.evidence)
    elif found.error is not None:
        rec.fail(
            check,
            f"tasks/get {task_id}: error {found.error.code} {found.error.message}{_decoy_note(decoy)}",
            found.evidence,
        )
    elif (got := (found.result or {}).get("taskId")) != task_id:
        why = _decoy_note(decoy) if got == decoy else ""
        rec.fail(check, f"tasks/get {task_id} answered task {got!r}{why}", found.evidence)
    else:
        rec.ok(
            check,
            f"tasks/get {task_id}: {(found.result or {}).get('status')}"
            + ("" if decoy == NO_TASK else f", with a related-task _meta naming task {decoy}"),
        )


@attrs.frozen
class Outcome:
    """What ``tasks.result`` judges: the ``tasks/result`` of A, the ``tasks/get`` after it, a second
    ``tasks/result`` of the terminal A, the plain calls around A, and the unknown-tool task."""

    payload: Exchange
    after: Exchange
    again: Exchange | None
    plain: list[Exchange]
    failing: list[ErrorCase]


@attrs.frozen
class ErrorCase:
    """A tool that does not exist: its plain call (answered with a JSON-RPC error), the same call as
    a task, and that task's ``tasks/result`` (``None``: no task was made)."""

    plain: Exchange
    created: Exchange
    result: Exchange | None
    #: Whether two plain calls got the same message (else only the code is compared).
    same_message: bool


async def _error_tasks(session: TaskProbe, tool: dict[str, Any], wait: float) -> list[ErrorCase]:
    """The two JSON-RPC errors the tools page names for tools/call, provoked with and without a
    task: a tool that does not exist, and the tool with invalid arguments (when there are such)."""
    calls = [{"name": NO_TOOL, "arguments": {}}]
    if (bad := invalid_arguments(tool.get("inputSchema"))) is not None:
        calls.append({"name": tool["name"], "arguments": bad})
    cases = []
    for call in calls:
        case = await _error_task(session, call, wait)
        if case is not None:
            cases.append(case)
    return cases


async def _error_task(session: TaskProbe, call: dict[str, Any], wait: float) -> ErrorCase | None:
    """``None`` when the plain call got no JSON-RPC error."""
    plain = await session.ask("tools/call", call)
    if plain.error is None:
        return None
    twice = await session.ask("tools/call", call)
    same = _error_of(twice) == _error_of(plain)
    created = await session.ask("tools/call", {**call, "task": {"ttl": TTL}})
    task = (created.result or {}).get("task")
    task_id = session.read_task(task, created, op=False, created=True) if isinstance(task, dict) else None
    if task_id is None:
        return ErrorCase(plain, created, None, same)
    return ErrorCase(plain, created, await session.ask("tasks/result", {"taskId": task_id}, within=wait), same)


def _bare(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A result without the related-task key of its ``_meta``: that key is what tasks/result adds."""
    if result is None:
        return None
    out = dict(result)
    meta = out.pop("_meta", None)
    if isinstance(meta, dict) and (rest := {k: v for k, v in meta.items() if k != RELATED}):
        out["_meta"] = rest
    elif meta is not None and not isinstance(meta, dict):
        out["_meta"] = meta
    return out


def _error_of(found: Exchange) -> tuple[int, str, Any] | None:
    return None if found.error is None else (found.error.code, found.error.message, found.error.data)


def _same_answer(one: Exchange, two: Exchange) -> bool:
    """Whether two answers are the same result (apart from ``_meta``) or the same error."""
    if one.answer is None or two.answer is None:
        return False
    if one.error is not None or two.error is not None:
        return _error_of(one) == _error_of(two)
    return _bare(one.result) == _bare(two.result)


def _judge_result(
    rec: Results,
    seen: Outcome,
    task_id: str,
    decoy: str,
    wait: float,
    before: Any = None,
) -> None:
    """``before``: the task's status in the last tasks/get before tasks/result was sent.  The
    sentence is that tasks/result blocks until the task is terminal: a task already terminal
    by then puts nothing to that test, so what would pass is a skip (a wrong payload still fails)."""
    check, meta_check = "tasks.result", "tasks.result-meta"
    payload, after = seen.payload, seen.after
    status = (after.result or {}).get("status")
    evidence = payload.evidence + after.evidence
    if payload.answer is None:
        if status in TERMINAL:
            rec.fail(
                check, f"tasks/result {task_id}: no answer within {wait:g} s although the task is {status}", evidence
            )
        else:
            rec.skip(check, f"task {task_id} was still {status} after {wait:g} s")
        rec.skip(meta_check, "tasks/result did not answer")
        return
    if isinstance(status, str) and status not in TERMINAL:
        rec.fail(check, f"tasks/result {task_id} answered while the task was still {status}", evidence)
        return
    if payload.error is None:
        for found in (payload, seen.again):
            if found is not None and found.result is not None:
                _judge_meta(rec, found, task_id)
        named = _related_id(payload)
        if named == decoy and decoy != NO_TASK:
            rec.fail(check, f"tasks/result {task_id} answered about task {decoy}{_decoy_note(decoy)}", evidence)
            return
    else:
        rec.skip(meta_check, "tasks/result answered with a JSON-RPC error, which has no _meta")
    problem, notes = _payload_problem(seen)
    if problem is not None:
        problem = f"tasks/result {task_id}: {problem}"
    if not seen.failing:
        notes.append("no call got a JSON-RPC error, so no error case")
    for case in seen.failing:
        if problem is None:
            problem, note = _error_task_problem(case)
            notes.append(note)
    if problem is not None:
        more = (seen.again, *seen.plain) + tuple(
            found for case in seen.failing for found in (case.plain, case.created, case.result)
        )
        extra = [e for found in more if found is not None for e in found.evidence]
        rec.fail(check, problem, evidence + extra)
        return
    what = "the underlying error" if payload.error is not None else "a CallToolResult"
    detail = f"tasks/result {task_id}, sent while the task was {before}: {what} once it was {status}; " + "; ".join(
        notes
    )
    if before in TERMINAL:
        rec.skip(
            check,
            f"task {task_id} had finished ({before}) before tasks/result was sent: "
            f"its blocking was not tested ({'; '.join(notes)})",
        )
    else:
        rec.ok(check, detail)


def _payload_problem(seen: Outcome) -> tuple[str | None, list[str]]:
    """What is wrong with the payload against the plain calls around the task (and the second
    ``tasks/result``), and what was compared."""
    payload, notes = seen.payload, list[str]()
    if payload.error is None:
        try:
            s.from_wire(s.CallToolResult, payload.result or {})
        except s.SchemaError as exc:
            return f"not a CallToolResult: {exc}", notes
    if payload.error is not None and (seen.after.result or {}).get("status") == "completed":
        return f"a completed task's result is error {payload.error.code}", notes
    if seen.again is not None:
        if not _same_answer(payload, seen.again):
            return "a second tasks/result of the terminal task answered otherwise than the first", notes
        notes.append("a second tasks/result once terminal gave the same")
    if len(seen.plain) != 2 or any(p.answer is None for p in seen.plain):
        notes.append(
            "no call without a task to compare with (taskSupport required)"
            if not seen.plain
            else "a call without a task went unanswered: the payload was not compared"
        )
        return None, notes
    first, last = seen.plain
    if payload.error is not None and first.result is not None and last.result is not None:
        return f"error {payload.error.code}; the calls without a task got a result", notes
    if payload.error is None and first.error is not None and last.error is not None:
        return f"a result; the calls without a task got error {first.error.code}", notes
    if _same_answer(first, last):
        if not _same_answer(payload, first):
            return "the payload differs from what the same call without a task returns (twice alike)", notes
        notes.append("equal to the call without a task (apart from _meta; two plain calls alike)")
        return None, notes
    if payload.error is None and bool((first.result or {}).get("isError")) != bool(
        (payload.result or {}).get("isError")
    ):
        return "the payload and the call without a task differ in isError", notes
    notes.append("exact comparison not judged: two calls without a task differed (isError compared)")
    return None, notes


def _error_task_problem(case: ErrorCase) -> tuple[str | None, str]:
    expected, result, name = case.plain.error, case.result, (case.plain.request.params or {}).get("name")
    what = f"tools/call {name} ({'no such tool' if name == NO_TOOL else 'invalid arguments'})"
    assert expected is not None  # (``_error_task`` makes a case only then)
    if result is None:
        refused = _error_of(case.created)
        return None, f"{what} as a task made no task ({refused[0] if refused else 'no task'}): not an error case"
    if result.answer is None:
        return f"tasks/result of the task of {what} did not answer within the wait", ""
    if result.error is None:
        return (
            f"the task of {what} gave a result from tasks/result; the call without a task got "
            f"JSON-RPC error {expected.code}"
        ), ""
    if result.error.code != expected.code or (case.same_message and _error_of(result) != _error_of(case.plain)):
        return (
            f"the task of {what} gave error {result.error.code} {result.error.message!r} from "
            f"tasks/result; the call without a task got {expected.code} {expected.message!r}"
        ), ""
    return None, (
        f"the task of {what} gave the plain call's error {result.error.code}"
        + (" (message and data alike)" if case.same_message else " (its message varies: the code compared)")
    )


def _related_id(found: Exchange) -> Any:
    meta = (found.result or {}).get("_meta")
    related_task = meta.get(RELATED) if isinstance(meta, dict) else None
    return related_task.get("taskId") if isinstance(related_task, dict) else None


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


async def _list(rec: Results, session: TaskProbe, task_id: str) -> None:
    """Every page (up to ``MAX_PAGES``): A must be in one, and no id may be listed twice."""
    check = "tasks.list"
    cursor: str | None = None
    listed: dict[str, int] = {}
    found_on: int | None = None
    for page in range(1, MAX_PAGES + 1):
        found = await session.ask("tasks/list", {"cursor": cursor} if cursor else {})
        result = found.result
        if result is None or not isinstance(result.get("tasks"), list):
            what = (
                "no answer"
                if found.answer is None
                else (f"error {found.error.code}" if found.error is not None else "no tasks array")
            )
            rec.fail(check, f"tasks/list page {page}: {what}", found.evidence)
            return
        session.ops_answered += 1
        meta = result.get("_meta")
        if isinstance(meta, dict) and RELATED in meta:
            session.meta_on_ops.append(found)
        for task in result["tasks"]:
            listed_id = session.read_task(task, found, op=False)
            if listed_id is None:
                continue
            if listed_id in listed:
                twice = f"tasks/list lists task {listed_id} twice (pages {listed[listed_id]} and {page})"
                session.duplicates.append((twice, found))
            listed.setdefault(listed_id, page)
        if found_on is None and task_id in listed:
            found_on = page
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            break
    else:
        if found_on is None:
            rec.skip(check, f"task {task_id} not found in the first {MAX_PAGES} pages")
            return
    session.listed = len(listed)
    if found_on is None:
        rec.fail(
            check,
            f"task {task_id} (retrievable with tasks/get) is in none of {page} pages of tasks/list",
            found.evidence,
        )
    else:
        rec.ok(check, f"task {task_id} listed on page {found_on} of {page}")


async def _cancel_terminal(rec: Results, session: TaskProbe, task_id: str, decoy: str) -> None:
    check = "tasks.cancel-terminal"
    status = session.status(task_id)
    if status not in TERMINAL:
        rec.skip(check, f"task {task_id} did not reach a terminal status")
        return
    found = await session.ask("tasks/cancel", {"taskId": task_id, "_meta": related(decoy)})
    if found.result is not None:
        session.read_task(found.result, found, op=True)
        rec.fail(check, f"tasks/cancel of the {status} task {task_id} was answered with a result", found.evidence)
    elif found.error is None:
        rec.fail(check, f"tasks/cancel of the {status} task {task_id}: no answer", found.evidence)
    elif found.error.code != rpc.INVALID_PARAMS:
        rec.fail(
            check, f"tasks/cancel of the {status} task {task_id}: error {found.error.code}, not -32602", found.evidence
        )
    else:
        rec.ok(check, f"tasks/cancel of the {status} task {task_id}: -32602")


async def _cancel_working(rec: Results, session: TaskProbe, call: dict[str, Any]) -> None:
    """Tasks C and D created together; C cancelled with a ``_meta`` naming D."""
    check = "tasks.cancel"
    task_id = await _create(session, call)
    if task_id is None:
        rec.skip(check, "another task-augmented call created no task")
        return
    bystander = await _create(session, call) or NO_TASK
    note = _decoy_note(bystander)
    found = await session.ask("tasks/cancel", {"taskId": task_id, "_meta": related(bystander)})
    if found.result is not None:
        session.read_task(found.result, found, op=True)
        status, got = found.result.get("status"), found.result.get("taskId")
        if got != task_id:
            rec.fail(
                check,
                f"tasks/cancel of task {task_id} answered task {got!r}" + (note if got == bystander else ""),
                found.evidence,
            )
            return
        if status != "cancelled":
            rec.fail(check, f"tasks/cancel of task {task_id} answered status {status!r}, not cancelled", found.evidence)
            return
        poll = found.result.get("pollInterval")
        # Long enough for the work to have finished had it kept running; bounded either way.
        await trio.sleep(min(max(poll / 1000 if isinstance(poll, int) else 0.0, 0.5), 2.0))
        later = await session.get(task_id, bystander)
        spared = await _spared(session, bystander, task_id)
        if spared is not None:
            rec.fail(
                check,
                f"task {bystander}, named only in the _meta of the tasks/cancel of {task_id}, was cancelled too",
                found.evidence + spared.evidence,
            )
        elif later.error is not None and later.error.code == rpc.INVALID_PARAMS:
            rec.ok(check, f"task {task_id} cancelled, then deleted (which the page allows)")
        elif (now := (later.result or {}).get("status")) != "cancelled":
            rec.fail(check, f"task {task_id} was cancelled, then became {now!r}", found.evidence + later.evidence)
        else:
            rec.ok(
                check,
                f"task {task_id} cancelled, and still cancelled later"
                + ("" if bystander == NO_TASK else f"; task {bystander}, named in its _meta, was not"),
            )
        return
    if found.error is None:
        rec.fail(check, f"tasks/cancel of task {task_id}: no answer", found.evidence)
        return
    later = await session.get(task_id)
    status = (later.result or {}).get("status")
    if found.error.code == rpc.INVALID_PARAMS and status in TERMINAL:
        rec.skip(check, f"task {task_id} was already {status} when cancelled")
    else:
        rec.fail(
            check,
            f"tasks/cancel of the {status} task {task_id}: error {found.error.code}"
            + (note if bystander != NO_TASK else ""),
            found.evidence + later.evidence,
        )


async def _spared(session: TaskProbe, bystander: str, cancelled: str) -> Exchange | None:
    """The ``tasks/get`` of the bystander when it says ``cancelled`` (it was never cancelled), else ``None``."""
    if bystander == NO_TASK:
        return None
    found = await session.get(bystander, cancelled)
    return found if (found.result or {}).get("status") == "cancelled" else None
