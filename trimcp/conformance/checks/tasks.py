"""The tasks probe: 2025-11-25 ``basic/utilities/tasks``, driven over one fresh connection.

Theory of operation
-------------------
Tasks are experimental in 2025-11-25 and gone into an extension in
2026-07-28, so ``check_tasks`` does nothing for any other revision (the
report's rows say "not in <revision>").  A server without the ``tasks`` capability gets every check
``skip`` "the server does not declare tasks" (absence is no evidence) but one: when it has tools,
a read-only tool is called with a ``task`` on a connection of its own, and a ``CreateTaskResult``
(or a refusal the call without the task does not get) fails ``tasks.not-augmentable``.

Otherwise one connection of its own (``probes.probe_connection``: task
requests with made-up ids are not for the tour's session) is opened with
``initialize`` (declaring sampling and elicitation, answered with canned
input, and no tasks of our own) and walked in an order where one step cannot
spoil the next (``task_probe.py`` holds the connection, ``task_lifecycle.py``
steps 3 and 4):

1. unknown ``taskId`` to ``tasks/get`` / ``tasks/result`` / ``tasks/cancel``
   and an unknown ``tasks/list`` cursor: -32602 (page, "Error Handling");
2. without ``tasks.requests.tools.call``, a read-only tool called with a
   ``task`` must be processed normally ("Task Support and Handling");
   with it, a ``required`` tool called without a task gets -32601 (MUST), a
   tool that forbids tasks called with one -32601 (SHOULD) ("Tool-Level
   Negotiation");
3. a read-only tool that allows tasks is called as tasks A (with a
   ``progressToken``) and B: the ``CreateTaskResult`` (status ``working``),
   ``tasks/get`` and ``tasks/result`` of A with a related-task ``_meta`` naming
   B, which the server must ignore (``tasks/result`` must block until A is
   terminal, carry the related-task ``_meta`` and be what the call without a
   task returns), ``tasks/list`` (A must be in some page), ``tasks/cancel`` of
   the now terminal A (-32602);
4. tasks C and D are created, C is cancelled at once with a ``_meta`` naming D:
   the answer must be C ``cancelled``, C must still say so a little later,
   after its work would have ended, and D must not be cancelled.

Afterwards, the ids of every task created are checked distinct, every
status seen for a task (answers and ``notifications/tasks/status``, in the
order they arrived) against the page's transitions, every
``notifications/progress`` for A's token and for stopping once A was terminal;
a request the server sent while ``tasks/result`` waited must carry the
related-task ``_meta`` of that task (or of another of ours: "Input Required
Status"), and none may be task-augmented (we declared no tasks).  Only
read-only tools are called, as in the feature tour: the harness must not
change the server's world.  Every wait is bounded.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from ..._sansio import jsonrpc as rpc
from ..evidence import received
from ..results import Connector, Results
from ..values import example_arguments
from .probes import CLIENT_INFO, ProbeFailed, probe_connection
from .task_lifecycle import lifecycle
from .task_probe import (
    CHECKS,
    CLIENT_CAPABILITIES,
    MAX_PAGES,
    NEXT,
    NO_CURSOR,
    NO_TASK,
    NO_TOOLS_CALL,
    PROGRESS_TOKEN,
    RELATED,
    REVISION,
    TOOL_CHECKS,
    Exchange,
    TaskProbe,
)

__all__ = ["CHECKS", "NO_TASKS", "check_tasks", "skip_tasks"]

NO_TASKS = "the server does not declare tasks"


def skip_tasks(rec: Results, reason: str) -> None:
    for check_id in CHECKS:
        rec.skip(check_id, reason)


# --------------------------------------------------------------------------- the walk


async def check_tasks(
    rec: Results, connect: Connector, revision: str, capabilities: dict[str, Any], timeout: float
) -> None:
    """Every tasks check, on a connection of its own (see the module docstring); nothing
    outside 2025-11-25, whose report rows say "not in <revision>"."""
    if revision != REVISION:
        return
    tasks_cap = capabilities.get("tasks")
    declared = isinstance(tasks_cap, dict)
    if not declared and "tools" not in capabilities:
        skip_tasks(rec, NO_TASKS)
        return
    stage = ["tasks.errors" if declared else "tasks.not-augmentable"]
    try:
        async with probe_connection(connect, timeout) as probe:
            session = TaskProbe(probe)
            opened = await session.ask(
                "initialize",
                {
                    "protocolVersion": REVISION,
                    "capabilities": CLIENT_CAPABILITIES,
                    "clientInfo": CLIENT_INFO,
                },
            )
            if opened.result is None:
                skip_tasks(rec, "initialize on a fresh connection failed")
                return
            probe.revision = REVISION
            await probe.tell(rpc.Notification("notifications/initialized"))
            if not declared:
                # Tasks on tools/call, the one request a 2025-11-25 server may augment, must not be made.
                await _not_augmentable(rec, session, await _read_only_tools(session), declared=False)
                skip_tasks(rec, NO_TASKS)
                return
            await _walk(rec, session, tasks_cap if isinstance(tasks_cap, dict) else {}, stage, timeout)
            _judge_session(rec, session)
    except ProbeFailed as exc:
        if declared:
            rec.failed(stage[0], exc, f"the probe connection broke: {exc}")
        else:  # a server without tasks never had this connection in the past: not evidence enough
            rec.skip(stage[0], f"not reached: the probe connection broke ({exc})")
    for check_id in CHECKS:
        if check_id not in rec.results:
            rec.skip(check_id, "not reached: the probe connection broke")


def _declared(caps: dict[str, Any], *path: str) -> bool:
    node: Any = caps
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return isinstance(node, dict)


def _support(tool: dict[str, Any]) -> str:
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if isinstance(value, str) else "forbidden"


async def _read_only_tools(session: TaskProbe) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Read-only tools we can invent arguments for, with those arguments."""
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        found = await session.ask("tools/list", {"cursor": cursor} if cursor else {})
        result = found.result or {}
        for tool in result.get("tools") or ():
            annotations = tool.get("annotations") if isinstance(tool, dict) else None
            if isinstance(annotations, dict) and annotations.get("readOnlyHint") is True:
                args = example_arguments(tool.get("inputSchema"))
                if args is not None and isinstance(tool.get("name"), str):
                    out.append((tool, args))
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            break
    return out


async def _walk(rec: Results, session: TaskProbe, caps: dict[str, Any], stage: list[str], timeout: float) -> None:
    can_list, can_cancel = _declared(caps, "list"), _declared(caps, "cancel")
    await _unknown_ids(rec, session, can_list, can_cancel)
    tools = await _read_only_tools(session)
    if not _declared(caps, "requests", "tools", "call"):
        stage[0] = "tasks.not-augmentable"
        await _not_augmentable(rec, session, tools)
        for check_id in TOOL_CHECKS:
            rec.skip(check_id, NO_TOOLS_CALL)
        return
    rec.skip("tasks.not-augmentable", "the server declares task support for tools/call, its one augmentable request")
    stage[0] = "tasks.required"
    await _tool_negotiation(rec, session, tools)
    target = next(((t, a) for t, a in tools if _support(t) in ("optional", "required")), None)
    if target is None:
        reason = "no read-only tool allows tasks (execution.taskSupport optional or required)"
        for check_id in TOOL_CHECKS:
            if check_id not in ("tasks.required", "tasks.forbidden"):
                rec.skip(check_id, reason)
        return
    await lifecycle(rec, session, target[0], target[1], can_list, can_cancel, stage, timeout)


async def _unknown_ids(rec: Results, session: TaskProbe, can_list: bool, can_cancel: bool) -> None:
    check = "tasks.errors"
    asks = [("tasks/get", {"taskId": NO_TASK}), ("tasks/result", {"taskId": NO_TASK})]
    if can_cancel:
        asks.append(("tasks/cancel", {"taskId": NO_TASK}))
    if can_list:
        asks.append(("tasks/list", {"cursor": NO_CURSOR}))
    for method, params in asks:
        found = await session.ask(method, params)
        what = "an unknown cursor" if "cursor" in params else "an unknown taskId"
        problem = (
            "no answer within 10 s"
            if found.answer is None
            else "answered with a result"
            if found.error is None
            else None
            if found.error.code == rpc.INVALID_PARAMS
            else f"error {found.error.code}, not -32602"
        )
        if problem:
            rec.fail(check, f"{method} with {what}: {problem}", found.evidence)
            return
    rec.ok(check, "-32602 to " + ", ".join(m for m, _ in asks))


async def _not_augmentable(
    rec: Results,
    session: TaskProbe,
    tools: Sequence[tuple[dict[str, Any], dict[str, Any]]],
    *,
    declared: bool = True,
) -> None:
    """A task on ``tools/call`` (the one request type a 2025-11-25 server may augment, schema
    ``ServerCapabilities.tasks.requests``) that the capabilities do not list (``declared``: the
    server has ``tasks`` without ``requests.tools.call``; else no ``tasks`` at all): no
    ``CreateTaskResult``, and the call answered as without the task.  Tried on every read-only
    tool that says it takes tasks (``execution.taskSupport``), or else on the first read-only tool."""
    check = "tasks.not-augmentable"
    if not tools:
        rec.skip(check, "no read-only tool to call with a task")
        return
    claiming = [pair for pair in tools if _support(pair[0]) != "forbidden"]
    undeclared = "tasks.requests.tools.call is not declared" if declared else "the server declares no tasks capability"
    tried = []
    for tool, args in claiming or tools[:1]:
        problem, how = await _as_without_task(session, tool["name"], args)
        if problem is not None:
            detail, evidence = problem
            rec.fail(check, f"{detail} although {undeclared}", evidence)
            return
        tried.append(f"{tool['name']} ({how})")
    rec.ok(check, f"tools/call with a task processed as without one ({undeclared}): " + ", ".join(tried))


async def _as_without_task(
    session: TaskProbe, name: str, args: dict[str, Any]
) -> tuple[tuple[str, list[dict[str, Any]]] | None, str]:
    """A call with a task between two without: what is wrong with it (detail, evidence), and what
    was compared.  When the two plain calls agree, the one with a task must give the same."""
    plain = {"name": name, "arguments": args}
    first = await session.ask("tools/call", plain)
    found = await session.ask("tools/call", {**plain, "task": {"ttl": 60000}})
    last = await session.ask("tools/call", plain)
    evidence = first.evidence + found.evidence + last.evidence
    if found.answer is None:
        return (f"tools/call {name} with a task: no answer", evidence), ""
    if found.result is not None and "task" in found.result and "content" not in found.result:
        return (f"tools/call {name} with a task was augmented (CreateTaskResult)", evidence), ""
    stable = first.answer is not None and last.answer is not None and _same(first, last)
    if found.error is not None:
        if first.error is not None and first.error.code == found.error.code:
            return None, f"error {found.error.code}, as without a task"
        return (
            (f"tools/call {name} with a task was refused ({found.error.code}), not processed as without a task"),
            evidence,
        ), ""
    if first.error is not None and last.error is not None:
        return (f"tools/call {name} with a task got a result; without one, error {first.error.code}", evidence), ""
    if stable and not _same(found, first):
        return (
            (f"tools/call {name} with a task answered otherwise than the same call without one (twice alike)"),
            evidence,
        ), ""
    if stable:
        return None, "the same result"
    if bool((found.result or {}).get("isError")) != bool((first.result or {}).get("isError")):
        return (f"tools/call {name} with a task and without one differ in isError", evidence), ""
    return None, "isError alike (its results vary between calls)"


def _same(one: Exchange, two: Exchange) -> bool:
    """The same error code, or the same result apart from ``_meta``."""
    if one.error is not None or two.error is not None:
        return one.error is not None and two.error is not None and one.error.code == two.error.code

    def bare(found: Exchange) -> dict[str, Any]:
        return {k: v for k, v in (found.result or {}).items() if k != "_meta"}

    return bare(one) == bare(two)


async def _tool_negotiation(
    rec: Results, session: TaskProbe, tools: Sequence[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    for check, support, with_task in (
        ("tasks.required", ("required",), False),
        ("tasks.forbidden", ("forbidden",), True),
    ):
        picked = next(((t, a) for t, a in tools if _support(t) in support), None)
        if picked is None:
            rec.skip(check, f"no read-only tool has taskSupport {support[0]}")
            continue
        tool, args = picked
        params: dict[str, Any] = {"name": tool["name"], "arguments": args}
        if with_task:
            params["task"] = {"ttl": 60000}
        found = await session.ask("tools/call", params)
        how = "with a task" if with_task else "without a task"
        judge: Callable[..., None] = rec.fail if check == "tasks.required" else rec.warn
        if found.error is not None and found.error.code == rpc.METHOD_NOT_FOUND:
            rec.ok(check, f"tools/call {tool['name']} {how}: -32601")
        elif found.error is not None:
            judge(check, f"tools/call {tool['name']} {how}: error {found.error.code}, not -32601", found.evidence)
        elif found.answer is None:
            judge(check, f"tools/call {tool['name']} {how}: no answer within 10 s", found.evidence)
        else:
            judge(check, f"tools/call {tool['name']} ({support[0]}) {how} was answered with a result", found.evidence)


# --------------------------------------------------------------------------- afterwards


def _judge_session(rec: Results, session: TaskProbe) -> None:
    if session.field_problems:
        detail, found = session.field_problems[0]
        rec.fail("tasks.task-fields", detail, found.evidence)
    elif session.tasks_read:
        rec.ok("tasks.task-fields", f"{session.tasks_read} tasks read")
    _judge_ids(rec, session)
    _judge_progress(rec, session)
    _judge_flow(rec, session)
    _judge_server_requests(rec, session)
    _judge_related_meta(rec, session)
    bare = [found for found in session.errors if found.error is not None and not found.error.message.strip()]
    if bare:
        rec.warn(
            "tasks.error-messages",
            f"{bare[0].request.method}: error {bare[0].error.code if bare[0].error else ''} with an empty message",
            bare[0].evidence,
        )
    elif session.errors:
        rec.ok("tasks.error-messages", f"{len(session.errors)} errors, each with a message")
    for task, found in session.failed_tasks:
        message = task.get("statusMessage")
        if not (isinstance(message, str) and message.strip()):
            rec.warn(
                "tasks.failed-message", f"task {task.get('taskId')} is failed without a statusMessage", found.evidence
            )
        else:
            rec.ok("tasks.failed-message", f"task {task.get('taskId')}: {message[:80]}")
    if not session.failed_tasks:
        rec.skip("tasks.failed-message", "no task failed")


def _judge_ids(rec: Results, session: TaskProbe) -> None:
    """Every task created in the run has its own id; ``tasks/list`` lists none twice."""
    check = "tasks.create"
    firsts: dict[str, Exchange] = {}
    for task_id, found in session.created:
        if task_id in firsts:
            rec.fail(check, f"two tasks got the same taskId {task_id}", firsts[task_id].evidence + found.evidence)
            return
        firsts[task_id] = found
    if session.duplicates:
        detail, found = session.duplicates[0]
        rec.fail(check, detail, found.evidence)
    elif len(firsts) >= 2:
        listed = f"; tasks/list: {session.listed} ids, none twice" if session.listed else ""
        rec.ok(check, f"{len(firsts)} tasks created, each with its own taskId{listed}")


def _judge_progress(rec: Results, session: TaskProbe) -> None:
    """Task A's call was the one request with a ``progressToken``: every ``notifications/progress``
    of the connection must carry it, and none may come after A was seen terminal (the
    ``tasks/get`` right after ``tasks/result`` is the sentinel round trip behind it)."""
    check = "tasks.progress"
    first = session.created[0][0] if session.created else None
    if first is None:
        rec.skip(check, "no task was created")
        return
    if not session.progress:
        rec.skip(check, f"the server sent no notifications/progress for task {first} (called with a progressToken)")
        return
    terminal = session.terminal_at.get(first)
    for seq, note in session.progress:
        token = (note.params or {}).get("progressToken")
        if token != PROGRESS_TOKEN:
            rec.fail(
                check,
                f"notifications/progress with progressToken {token!r}; task {first}'s request, the "
                f"only one on this connection with a token, gave {PROGRESS_TOKEN!r}",
                [received(note)],
            )
            return
        if terminal is not None and seq > terminal:
            rec.fail(
                check,
                f"notifications/progress for task {first} came after the task was seen terminal",
                [received(note)],
            )
            return
    watched = (
        "after it was terminal, until the next round trip: none"
        if terminal is not None and session.seq > terminal
        else "the task was not seen terminal: their stop was not judged"
    )
    rec.ok(
        check,
        f"{len(session.progress)} notifications/progress for task {first}, each with its progressToken; {watched}",
    )


def _judge_flow(rec: Results, session: TaskProbe) -> None:
    check = "tasks.status-flow"
    moves = 0
    for task_id, seen in session.history.items():
        for (before, _), (after, evidence) in itertools.pairwise(seen):
            moves += 1
            if after != before and after not in NEXT.get(before, set()):
                rec.fail(check, f"task {task_id} went from {before} to {after}", [seen[0][1], evidence])
                return
    if moves:
        rec.ok(check, f"{moves} status observations follow the transitions")
    else:
        rec.skip(check, "no task was seen twice")


def _judge_related_meta(rec: Results, session: TaskProbe) -> None:
    check = "tasks.no-related-meta"
    with_meta = [
        n
        for n in session.notes
        if isinstance((n.params or {}).get("_meta"), dict) and RELATED in (n.params or {})["_meta"]
    ]
    if session.meta_on_ops:
        found = session.meta_on_ops[0]
        rec.warn(check, f"the {found.request.method} result carries {RELATED}", found.evidence)
    elif with_meta:
        rec.warn(check, f"notifications/tasks/status carries {RELATED}", [received(with_meta[0])])
    elif session.ops_answered or session.notes:
        rec.ok(check, f"{session.ops_answered} task operation results, {len(session.notes)} status notifications")


def _judge_server_requests(rec: Results, session: TaskProbe) -> None:
    """Requests the server sent us: tied to their task while one waited (MUST), never task-augmented."""
    check = "tasks.input-meta"
    # Other tasks of ours run meanwhile: a request tied to one of them is tied to its task too.
    ours = {task_id for task_id, _ in session.created}
    for task_id, request in session.input_requests:
        meta = (request.params or {}).get("_meta")
        related = meta.get(RELATED) if isinstance(meta, dict) else None
        got = related.get("taskId") if isinstance(related, dict) else None
        if got != task_id and got not in ours:
            what = f"lacks {RELATED}" if got is None else f"has {RELATED} {got!r}, not {task_id}"
            rec.fail(check, f"{request.method} sent while tasks/result {task_id} waited {what}", [received(request)])
            break
    else:
        if session.input_requests:
            rec.ok(check, f"{len(session.input_requests)} requests during tasks/result, each tied to its task")
        else:
            rec.skip(check, "the server sent no request while tasks/result waited")
    check = "tasks.requestor-capability"
    augmented = [r for r in session.server_requests if "task" in (r.params or {})]
    if augmented:
        rec.warn(
            check,
            f"{augmented[0].method} carries a task although the client declared no tasks",
            [received(augmented[0])],
        )
    elif session.server_requests:
        rec.ok(check, f"{len(session.server_requests)} server requests, none task-augmented")
    else:
        rec.skip(check, "the server sent no request")
