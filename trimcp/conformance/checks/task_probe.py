"""The connection the tasks probe talks over, and how a Task object is judged.

Theory of operation
-------------------
2025-11-25 ``basic/utilities/tasks``.  ``TaskProbe`` sends requests by id over
a ``probes.Probe`` and, while it waits for an answer, keeps what the checks
judge once the walk is over: every ``notifications/tasks/status``, every
status seen per task in arrival order (answers and notifications alike, so
the order is the server's), every error answer, the problems of every Task
object read (``task_problem``: "TTL and Resource Management" and the schema's
``Task``), and which task-operation results carried a related-task ``_meta``.
The harness declares sampling and elicitation (no tasks) on this connection
and answers them with the canned input of the stateless probes, so that a
task needing input can get it; ``ping`` gets ``{}``, anything else -32601.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

import attrs
import trio

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.revisions import revisions_where
from ..catalog.tasks import SPECS
from ..evidence import received, sent
from .probes import CANNED_INPUT, Answer, Probe, ProbeFailed, answer_to

CHECKS: Final = tuple(spec.id for spec in SPECS)
REVISION: Final = revisions_where(lambda r: "tasks/get" in r.client_requests)[-1]
RELATED: Final = s.RELATED_TASK_META_KEY
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
STATUSES: Final = TERMINAL | {"working", "input_required"}
#: Where each status may go next (page: "Task Status Lifecycle"); staying put is always allowed.
NEXT: Final = {
    "working": {"input_required"} | TERMINAL,
    "input_required": {"working"} | TERMINAL,
}
NO_TASK: Final = "trimcp-check-no-such-task"
NO_CURSOR: Final = "trimcp-check-no-such-cursor"
#: A related-task ``_meta`` naming another task: the ``taskId`` parameter must win.
DECOY: Final = {RELATED: {"taskId": NO_TASK}}
#: The ``progressToken`` of the one request on this connection that carries one (task A's call).
PROGRESS_TOKEN: Final = "trimcp-check-task-progress"
MAX_PAGES: Final = 20
#: How long any one answer is waited for (``tasks/result``, which blocks, may say otherwise).
ANSWER_WAIT: Final = 10.0
#: What the probe connection declares: input a task may need, and no tasks of its own.
CLIENT_CAPABILITIES: Final[dict[str, Any]] = {"sampling": {}, "elicitation": {}}
NO_TOOLS_CALL: Final = "the server does not declare tasks.requests.tools.call"
#: The checks that need ``tasks.requests.tools.call``.
TOOL_CHECKS: Final = tuple(
    c
    for c in CHECKS
    if c not in ("tasks.errors", "tasks.error-messages", "tasks.not-augmentable", "tasks.requestor-capability")
)


@attrs.define
class Exchange:
    request: rpc.Request
    #: ``None``: no answer within the wait.
    answer: Answer | None
    #: Where the answer came in the order of everything received (``TaskProbe.seq``).
    seq: int = 0

    @property
    def evidence(self) -> list[dict[str, Any]]:
        out = [sent(self.request)]
        if self.answer is not None:
            out.append(received(self.answer))
        return out

    @property
    def result(self) -> dict[str, Any] | None:
        return self.answer.result if isinstance(self.answer, rpc.Response) else None

    @property
    def error(self) -> rpc.ErrorObject | None:
        return self.answer.error if isinstance(self.answer, rpc.ErrorResponse) else None


@attrs.define
class TaskProbe:
    """Requests by id over a ``Probe``, keeping what the checks judge afterwards."""

    probe: Probe
    next_id: int = 0
    #: ``notifications/tasks/status`` as they came.
    notes: list[rpc.Notification] = attrs.field(factory=list)
    #: Every status seen, per task, in arrival order, with its evidence.
    history: dict[str, list[tuple[str, dict[str, Any]]]] = attrs.field(factory=dict)
    #: Every error answer to a task operation or a task-related tool call.
    errors: list[Exchange] = attrs.field(factory=list)
    #: Problems of the Task objects in answers (``tasks.task-fields``), and how many were read.
    field_problems: list[tuple[str, Exchange]] = attrs.field(factory=list)
    tasks_read: int = 0
    #: Results of ``tasks/get`` / ``tasks/list`` / ``tasks/cancel`` carrying a related-task ``_meta``.
    meta_on_ops: list[Exchange] = attrs.field(factory=list)
    ops_answered: int = 0
    failed_tasks: list[tuple[dict[str, Any], Exchange]] = attrs.field(factory=list)
    #: Requests from the server, and those that came while ``tasks/result`` of a task was waited for.
    server_requests: list[rpc.Request] = attrs.field(factory=list)
    input_requests: list[tuple[str, rpc.Request]] = attrs.field(factory=list)
    #: The task whose ``tasks/result`` is being waited for.
    waiting_for: str | None = None
    #: How many messages came so far: the arrival order of answers and notifications alike.
    seq: int = 0
    #: ``notifications/progress`` with where each came; the arrival at which a task was first seen terminal.
    progress: list[tuple[int, rpc.Notification]] = attrs.field(factory=list)
    terminal_at: dict[str, int] = attrs.field(factory=dict)
    #: Every task a ``CreateTaskResult`` named, in order (``tasks.create`` judges them distinct).
    created: list[tuple[str, Exchange]] = attrs.field(factory=list)
    #: Ids ``tasks/list`` listed twice, and how many distinct ids it listed.
    duplicates: list[tuple[str, Exchange]] = attrs.field(factory=list)
    listed: int = 0

    async def ask(self, method: str, params: dict[str, Any], within: float = ANSWER_WAIT) -> Exchange:
        """Send a request; its exchange, whose answer is ``None`` when none came ``within`` seconds."""
        self.next_id += 1
        request = rpc.Request(self.next_id, method, params)
        await self.probe.stream.send(request, self.probe.meta(request))
        answer: Answer | None = None
        with trio.move_on_after(within):
            answer = await self._answer(request.id)
        if answer is not None:
            self.seq += 1
        found = Exchange(request, answer, self.seq)
        if found.error is not None:
            self.errors.append(found)
        return found

    async def _answer(self, request_id: rpc.RequestId) -> Answer:
        try:
            return await answer_to(self.probe.stream, request_id, self._other)
        except TrimcpError as exc:  # the transport knows the answer is lost
            raise ProbeFailed(str(exc)) from exc

    async def _other(self, msg: rpc.Message) -> None:
        self.seq += 1
        if isinstance(msg, rpc.Notification) and msg.method == "notifications/progress":
            self.progress.append((self.seq, msg))
        elif isinstance(msg, rpc.Notification) and msg.method == "notifications/tasks/status":
            self.notes.append(msg)
            params = msg.params or {}
            task_id, status = params.get("taskId"), params.get("status")
            if isinstance(task_id, str) and isinstance(status, str):
                self.history.setdefault(task_id, []).append((status, received(msg)))
                if status in TERMINAL:
                    self.terminal_at.setdefault(task_id, self.seq)
        elif isinstance(msg, rpc.Request):
            self.server_requests.append(msg)
            if self.waiting_for is not None:
                self.input_requests.append((self.waiting_for, msg))
            canned = {"ping": {}, **CANNED_INPUT}.get(msg.method)
            reply: rpc.Message = (
                rpc.Response(msg.id, canned)
                if canned is not None
                else rpc.ErrorResponse(msg.id, rpc.ErrorObject(rpc.METHOD_NOT_FOUND, "not supported by trimcp check"))
            )
            await self.probe.stream.send(reply, self.probe.meta(reply))

    def read_task(self, task: Any, found: Exchange, *, op: bool, created: bool = False) -> str | None:
        """Note a Task from an answer (``created``: a ``CreateTaskResult``'s); its id, or ``None``
        when it has none."""
        self.tasks_read += 1
        problem = task_problem(task)
        if problem:
            self.field_problems.append((f"{found.request.method}: {problem}", found))
        if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
            return None
        if isinstance(task.get("status"), str) and found.answer is not None:
            self.history.setdefault(task["taskId"], []).append((task["status"], received(found.answer)))
            if task["status"] in TERMINAL:
                self.terminal_at.setdefault(task["taskId"], found.seq)
        if task.get("status") == "failed" and found.request.method == "tasks/get":
            self.failed_tasks.append((task, found))
        if created:
            self.created.append((task["taskId"], found))
        if op:
            self.ops_answered += 1
            meta = task.get("_meta")
            if isinstance(meta, dict) and RELATED in meta:
                self.meta_on_ops.append(found)
        return str(task["taskId"])

    async def get(self, task_id: str, decoy: str = NO_TASK) -> Exchange:
        """``tasks/get`` of ``task_id`` with a related-task ``_meta`` naming ``decoy``, which must not matter."""
        found = await self.ask("tasks/get", {"taskId": task_id, "_meta": related(decoy)})
        if found.result is not None:
            self.read_task(found.result, found, op=True)
        return found

    def status(self, task_id: str) -> str | None:
        seen = self.history.get(task_id)
        return seen[-1][0] if seen else None


def related(task_id: str) -> dict[str, Any]:
    """A ``_meta`` with the related-task key naming ``task_id``."""
    return {RELATED: {"taskId": task_id}}


def task_problem(task: Any) -> str | None:
    """What is wrong with a Task object (page: "TTL and Resource Management", schema ``Task``)."""
    if not isinstance(task, dict):
        return "the task is not an object"
    task_id = task.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        return f"taskId {task_id!r} is not a non-empty string"
    if task.get("status") not in STATUSES:
        return f"status {task.get('status')!r} is not a task status"
    for key in ("createdAt", "lastUpdatedAt"):
        if not _iso8601(task.get(key)):
            return f"{key} {task.get(key)!r} is not an ISO 8601 timestamp"
    if "ttl" not in task:
        return "no ttl (an integer, or null for unlimited)"
    ttl = task["ttl"]
    if ttl is not None and not _integer(ttl):
        return f"ttl {ttl!r} is neither an integer nor null"
    poll = task.get("pollInterval")
    if poll is not None and not _integer(poll):
        return f"pollInterval {poll!r} is not an integer"
    return None


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _iso8601(value: Any) -> bool:
    if not isinstance(value, str) or "T" not in value.upper():
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return False
    return True
