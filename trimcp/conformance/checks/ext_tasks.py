"""The tasks-extension probe (``io.modelcontextprotocol/tasks``, ext-tasks
specification/draft/tasks.md), 2026-07-28 servers, on a raw connection of its own.

Theory of operation
-------------------
The extension is opt-in on both sides, per request: a server lists it under
``capabilities.extensions`` and then MAY answer a ``tools/call`` that
declared it with a ``CreateTaskResult``.  A server that does not advertise it
gets every ``ext-tasks.*`` check skipped: absence is no evidence.

The probe writes its own requests (``probes.Probe``), each with its own
``_meta`` envelope, because half of them are ones the trimcp client rightly
refuses to send (task methods without the declaration):

1. ``tasks/get``, ``tasks/update``, ``tasks/cancel`` declaring nothing:
   -32021 ("Error Handling": MUST for non-declaring clients);
2. declaring the extension, a made-up ``taskId``: ``tasks/get`` -32602
   (MUST), ``tasks/update`` / ``tasks/cancel`` a JSON-RPC error (SHOULD;
   -32602 named);
3. the tools the tool policy lets the harness call (``--call-tools``; read-only
   ones by default) are called, declaring the extension (and elicitation,
   sampling, roots, answered with canned input), until one is answered with a
   task.  The server alone decides which calls become tasks and tools say
   nothing about it, so when none does, the checks below are skipped with
   that reason.  Then: the ``CreateTaskResult`` (``resultType: "task"``, the
   ``Task`` fields; ``tasks/get`` must find it at once: the "durably
   created" MUST); ``tasks/get`` polled at the server's ``pollIntervalMs``
   until terminal, within a bound (``resultType: "complete"``, the
   ``DetailedTask`` of each status), ``input_required`` answered through
   ``tasks/update`` (whose answer must be the empty ack); ``tasks/cancel`` of
   the task (the empty ack, MUST, even when it is already terminal);
4. the same call without the declaration must not be answered with a
   ``CreateTaskResult`` (MUST NOT).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final

import trio

from ..._sansio import extensions
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio import task_poll as tp
from ..._sansio.task_table import TERMINAL
from .. import evidence
from ..results import Connector, Results
from .probes import CANNED_INPUT, Answer, Probe, ProbeFailed, envelope, probe_connection
from .tool_calls import ToolPolicy

__all__ = ["EXT_TASKS_CHECKS", "check_ext_tasks"]

EXT_TASKS_CHECKS: Final = (
    "ext-tasks.methods-gated",
    "ext-tasks.unknown-get",
    "ext-tasks.unknown-other",
    "ext-tasks.create",
    "ext-tasks.get",
    "ext-tasks.undeclared",
    "ext-tasks.ack",
)
TASK_CHECKS: Final = ("ext-tasks.create", "ext-tasks.get", "ext-tasks.undeclared", "ext-tasks.ack")
EXT: Final = extensions.TASKS.id
UNKNOWN_ID: Final = "trimcp-check-no-such-task"
#: What the probe's task calls declare: the extension, and what canned input can answer.
DECLARING: Final[dict[str, Any]] = {"extensions": {EXT: {}}, "elicitation": {}, "sampling": {}, "roots": {}}
#: Tools tried at most before concluding that none becomes a task.
MAX_CANDIDATES: Final = 16
#: Polls of one task at most (each waits the server's pollIntervalMs, at most MAX_WAIT).
MAX_POLLS: Final = 40
MAX_WAIT: Final = 2.0


class _Asker:
    def __init__(self, probe: Probe, revision: str) -> None:
        self.probe, self.revision = probe, revision
        self.ids = itertools.count(1)

    def request(self, method: str, params: Mapping[str, Any], capabilities: Mapping[str, Any]) -> rpc.Request:
        return rpc.Request(next(self.ids), method, {**params, "_meta": envelope(self.revision, dict(capabilities))})

    async def ask(
        self, method: str, params: Mapping[str, Any], capabilities: Mapping[str, Any]
    ) -> tuple[rpc.Request, Answer]:
        request = self.request(method, params, capabilities)
        return request, await self.probe.ask(request)


def _shown(request: rpc.Request, answer: Answer) -> list[dict[str, Any]]:
    return [evidence.sent(request), evidence.received(answer)]


def _ack_problem(answer: Answer) -> str | None:
    if isinstance(answer, rpc.ErrorResponse):
        return f"error {answer.error.code} {answer.error.message!r}"
    extra = sorted(k for k in answer.result if k not in ("resultType", "_meta"))
    if answer.result.get("resultType") != s.ResultType.COMPLETE:
        return f"resultType {answer.result.get('resultType')!r}, not 'complete'"
    return f"not empty: {', '.join(extra)}" if extra else None


async def check_ext_tasks(
    rec: Results,
    connect: Connector,
    revision: str,
    capabilities: Mapping[str, Any],
    tools: Sequence[s.Tool],
    policy: ToolPolicy,
    timeout: float,
) -> None:
    if not rec.wants(*EXT_TASKS_CHECKS):
        return
    if not extensions.declares(capabilities, EXT):
        for check_id in EXT_TASKS_CHECKS:
            rec.skip(check_id, f"the server does not advertise the {EXT} extension")
        return
    try:
        # Bound: every candidate call and every poll, each within its own bound.
        async with probe_connection(connect, timeout * (MAX_CANDIDATES + 12) + MAX_POLLS * MAX_WAIT) as probe:
            probe.revision = revision
            asker = _Asker(probe, revision)
            await _gating(rec, asker)
            await _unknown(rec, asker)
            await _tasks(rec, asker, tools, policy, timeout)
    except ProbeFailed as exc:
        for check_id in EXT_TASKS_CHECKS:
            if check_id not in rec.results:
                rec.failed(check_id, exc, f"the probe connection failed: {exc}")


async def _gating(rec: Results, asker: _Asker) -> None:
    bad: list[str] = []
    shown: list[dict[str, Any]] = []
    for method, params in (
        ("tasks/get", {"taskId": UNKNOWN_ID}),
        ("tasks/update", {"taskId": UNKNOWN_ID, "inputResponses": {}}),
        ("tasks/cancel", {"taskId": UNKNOWN_ID}),
    ):
        request, answer = await asker.ask(method, params, {})
        if isinstance(answer, rpc.Response):
            bad.append(f"{method}: answered with a result")
        elif answer.error.code != rpc.MISSING_CLIENT_CAPABILITY:
            bad.append(f"{method}: error {answer.error.code}, not -32021")
        else:
            continue
        shown += _shown(request, answer)
    if bad:
        rec.fail("ext-tasks.methods-gated", "; ".join(bad), shown)
    else:
        rec.ok("ext-tasks.methods-gated", "tasks/get, tasks/update, tasks/cancel without the declaration: -32021")


async def _unknown(rec: Results, asker: _Asker) -> None:
    declared: dict[str, Any] = {"extensions": {EXT: {}}}
    request, answer = await asker.ask("tasks/get", {"taskId": UNKNOWN_ID}, declared)
    if isinstance(answer, rpc.ErrorResponse) and answer.error.code == rpc.INVALID_PARAMS:
        rec.ok("ext-tasks.unknown-get", "tasks/get of an unknown taskId: -32602")
    else:
        what = "a result" if isinstance(answer, rpc.Response) else f"error {answer.error.code}"
        rec.fail(
            "ext-tasks.unknown-get", f"tasks/get of an unknown taskId: {what}, not -32602", _shown(request, answer)
        )
    results: list[str] = []
    codes: list[str] = []
    shown: list[dict[str, Any]] = []
    for method, params in (
        ("tasks/update", {"taskId": UNKNOWN_ID, "inputResponses": {}}),
        ("tasks/cancel", {"taskId": UNKNOWN_ID}),
    ):
        request, answer = await asker.ask(method, params, declared)
        if isinstance(answer, rpc.Response):
            results.append(method)
            shown += _shown(request, answer)
        elif answer.error.code != rpc.INVALID_PARAMS:
            codes.append(f"{method}: {answer.error.code}")
            shown += _shown(request, answer)
    if results:
        rec.fail("ext-tasks.unknown-other", f"an unknown taskId was acknowledged by {', '.join(results)}", shown)
    elif codes:
        rec.warn("ext-tasks.unknown-other", f"errors, but not the -32602 the page names ({'; '.join(codes)})", shown)
    else:
        rec.ok("ext-tasks.unknown-other", "tasks/update and tasks/cancel of an unknown taskId: -32602")


async def _find_task(
    asker: _Asker,
    tools: Sequence[s.Tool],
    policy: ToolPolicy,
    timeout: float,
) -> tuple[s.Tool, dict[str, Any], rpc.Request, rpc.Response] | str:
    """The first allowed tool call answered with a task, or why there is none."""
    # Tools that speak of tasks first: nothing else hints which calls may become tasks.
    allowed = [t for t in tools if policy.allows(t)]
    candidates = sorted(allowed, key=lambda t: "task" not in f"{t.name} {t.description or ''}".lower())
    candidates = candidates[:MAX_CANDIDATES]
    if not candidates:
        return policy.describe()
    for tool in candidates:
        arguments = (policy.examples(tool) or [{}])[0]
        with trio.move_on_after(timeout):
            request, answer = await asker.ask(
                "tools/call",
                {"name": tool.name, "arguments": arguments},
                DECLARING,
            )
            if isinstance(answer, rpc.Response) and answer.result.get("resultType") == s.ResultType.TASK:
                return tool, arguments, request, answer
    names = ", ".join(t.name for t in candidates)
    return (
        f"no tool the harness may call was answered with a task, declaring {EXT} "
        f"(tried {names}; the server decides per request, --call-tools all tries every tool)"
    )


async def _tasks(rec: Results, asker: _Asker, tools: Sequence[s.Tool], policy: ToolPolicy, timeout: float) -> None:
    found = await _find_task(asker, tools, policy, timeout)
    if isinstance(found, str):
        for check_id in TASK_CHECKS:
            rec.skip(check_id, found)
        return
    tool, arguments, call, created = found
    problem = tp.task_problem(created.result, detailed=False)
    task_id = created.result.get("taskId")
    if problem is not None or not isinstance(task_id, str):
        rec.fail("ext-tasks.create", f"{tool.name}: invalid CreateTaskResult: {problem}", _shown(call, created))
        for check_id in ("ext-tasks.get", "ext-tasks.ack"):
            rec.skip(check_id, "the CreateTaskResult was unusable")
    else:
        await _follow(rec, asker, tool.name, call, created, task_id, timeout)
    # MUST NOT: the same call, undeclared, answered with a task.
    with trio.move_on_after(timeout) as scope:
        request, answer = await asker.ask(
            "tools/call",
            {"name": tool.name, "arguments": arguments},
            {k: v for k, v in DECLARING.items() if k != "extensions"},
        )
    if scope.cancelled_caught:
        rec.skip("ext-tasks.undeclared", f"{tool.name} without the declaration got no answer within {timeout} s")
    elif isinstance(answer, rpc.Response) and answer.result.get("resultType") == s.ResultType.TASK:
        rec.fail(
            "ext-tasks.undeclared",
            f"{tool.name} was answered with a task though the request did not declare {EXT}",
            _shown(request, answer),
        )
        if isinstance(answer.result.get("taskId"), str):
            await asker.ask("tasks/cancel", {"taskId": answer.result["taskId"]}, {"extensions": {EXT: {}}})
    else:
        what = "a result" if isinstance(answer, rpc.Response) else f"error {answer.error.code}"
        rec.ok("ext-tasks.undeclared", f"{tool.name} without the declaration: {what}, no task")


async def _follow(
    rec: Results,
    asker: _Asker,
    name: str,
    call: rpc.Request,
    created: rpc.Response,
    task_id: str,
    timeout: float,
) -> None:
    declared: dict[str, Any] = {"extensions": {EXT: {}}}
    request, first = await asker.ask("tasks/get", {"taskId": task_id}, DECLARING)
    if isinstance(first, rpc.ErrorResponse):
        rec.fail(
            "ext-tasks.create",
            f"{name}: tasks/get right after the CreateTaskResult: error "
            f"{first.error.code} (the task must exist once announced)",
            _shown(call, created) + _shown(request, first),
        )
    else:
        rec.ok("ext-tasks.create", f"{name}: resultType task, Task fields, found by tasks/get at once")
    bad: list[str] = []
    shown: list[dict[str, Any]] = []
    acks: list[str] = []
    ack_shown: list[dict[str, Any]] = []
    answered: set[str] = set()
    answer: Answer = first
    statuses: list[str] = []
    for _ in range(MAX_POLLS):
        if isinstance(answer, rpc.ErrorResponse):
            bad.append(f"tasks/get: error {answer.error.code} {answer.error.message!r}")
            shown += _shown(request, answer)
            break
        result = answer.result
        problem = tp.task_problem(result, detailed=True)
        if result.get("resultType") != s.ResultType.COMPLETE:
            problem = f"resultType {result.get('resultType')!r}, not 'complete'"
        elif problem is None and result.get("taskId") != task_id:
            problem = f"answered about task {result.get('taskId')!r}"
        if problem is not None:
            bad.append(f"tasks/get: {problem}")
            shown += _shown(request, answer)
            break
        statuses.append(result["status"])
        if result["status"] in TERMINAL:
            break
        pending = {k: v for k, v in (result.get("inputRequests") or {}).items() if k not in answered}
        if pending:
            responses = {k: CANNED_INPUT.get(v.get("method"), {}) for k, v in pending.items()}
            update, ack = await asker.ask("tasks/update", {"taskId": task_id, "inputResponses": responses}, DECLARING)
            answered.update(pending)
            why = _ack_problem(ack)
            if why is not None:
                acks.append(f"tasks/update: {why}")
                ack_shown += _shown(update, ack)
        interval = result.get("pollIntervalMs")
        await trio.sleep(min(MAX_WAIT, (interval if isinstance(interval, int) else 500) / 1000))
        request, answer = await asker.ask("tasks/get", {"taskId": task_id}, DECLARING)
    if bad:
        rec.fail("ext-tasks.get", f"{name}: " + "; ".join(bad), shown)
    elif statuses:
        rec.ok(
            "ext-tasks.get",
            f"{name}: statuses {' -> '.join(dict.fromkeys(statuses))}, each a well-formed "
            "DetailedTask with resultType complete",
        )
    cancel, ack = await asker.ask("tasks/cancel", {"taskId": task_id}, declared)
    why = _ack_problem(ack)
    if why is not None:
        acks.append(f"tasks/cancel: {why}")
        ack_shown += _shown(cancel, ack)
    if acks:
        rec.fail("ext-tasks.ack", f"{name}: " + "; ".join(acks), ack_shown)
    else:
        rec.ok(
            "ext-tasks.ack",
            f"{name}: tasks/cancel{' and tasks/update' if answered else ''} answered with the empty ack",
        )
