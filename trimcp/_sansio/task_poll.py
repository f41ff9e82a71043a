"""The client's view of an ext-tasks task: the result shapes, and what to do next.

Theory of operation
-------------------
ext-tasks (``io.modelcontextprotocol/tasks``, specification/draft/tasks.md):
a server that saw the extension in a request's client capabilities MAY answer
a ``tools/call`` (the one "supported method") with a ``CreateTaskResult`` -
``resultType: "task"`` plus the ``Task`` fields - instead of its
``CallToolResult``.  The client then polls ``tasks/get``, whose answer is a
``DetailedTask``: the ``Task`` fields, and per status ``inputRequests``
(``input_required``), ``result`` (``completed``) or the JSON-RPC ``error``
(``failed``).

``parse_task`` reads either shape strictly into a ``TaskState`` (a bad one is
``RemoteProtocolError``); ``create_task_problem`` is the connection's check of
a ``resultType: "task"`` answer.  ``TaskPoller`` is the poll loop's decisions
without I/O: fed each state seen, it says whether the task changed (the
caller's deadline may move, as it does for progress), which ``inputRequests``
still need an answer (keys answered before are skipped: the spec's SHOULD
deduplicate, since the server may show a key again before it took the
answer), and how long to wait before the next ``tasks/get`` - the server's
``pollIntervalMs`` (a SHOULD), with a floor so that a server suggesting 0
does not make the client spin, and never past the deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from .._errors import RemoteProtocolError
from .extensions import TASKS, declares
from .shared_methods import frozen
from .task_table import CANCELLED, COMPLETED, FAILED, INPUT_REQUIRED, TERMINAL, WORKING

#: The requests a server may answer with a CreateTaskResult (ext-tasks "Supported Methods").
TASK_METHODS: Final = frozenset({"tools/call"})
STATUSES: Final = frozenset({WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED})
#: Seconds between polls when the server suggests no ``pollIntervalMs``.
DEFAULT_POLL_INTERVAL: Final = 1.0
#: The least we wait between polls, whatever the server suggests.
MIN_POLL_INTERVAL: Final = 0.05


@frozen
class TaskState:
    """One observation of a task (a ``CreateTaskResult`` or a ``tasks/get`` answer)."""

    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    input_requests: Mapping[str, Any] = attrs.field(factory=dict)
    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


def _int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def task_problem(data: Mapping[str, Any], *, detailed: bool) -> str | None:
    """Why ``data`` is not a ``Task`` (``detailed``: a ``DetailedTask``), or None."""
    if not isinstance(data.get("taskId"), str) or not data["taskId"]:
        return "taskId must be a non-empty string"
    status = data.get("status")
    if status not in STATUSES:
        return f"status {status!r} is not one of {', '.join(sorted(STATUSES))}"
    for key in ("createdAt", "lastUpdatedAt"):
        if not isinstance(data.get(key), str):
            return f"{key} must be an ISO 8601 string"
    if "ttlMs" not in data or not _int_or_none(data["ttlMs"]):
        return "ttlMs must be an integer number of milliseconds or null"
    poll = data.get("pollIntervalMs")
    if not _int_or_none(poll) or (poll is not None and poll < 0):
        return "pollIntervalMs must be a non-negative integer"
    if "statusMessage" in data and not isinstance(data["statusMessage"], str):
        return "statusMessage must be a string"
    if not detailed:
        return None
    if status == INPUT_REQUIRED:
        requests = data.get("inputRequests")
        if not isinstance(requests, dict) or not requests:
            return "an input_required task must carry its inputRequests"
        for key, request in requests.items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                return f"inputRequests[{key!r}] must be a request object with a method"
            if not isinstance(request.get("params", {}), dict):
                return f"inputRequests[{key!r}].params must be an object"
    elif status == COMPLETED and not isinstance(data.get("result"), dict):
        return "a completed task must carry its result object"
    elif status == FAILED:
        error = data.get("error")
        if (
            not isinstance(error, dict)
            or not isinstance(error.get("code"), int)
            or not isinstance(error.get("message"), str)
        ):
            return "a failed task must carry its JSON-RPC error (code and message)"
    return None


def create_task_problem(method: str, result: Mapping[str, Any], client_capabilities: Mapping[str, Any]) -> str | None:
    """Why a ``resultType: "task"`` answer to ``method`` is unusable, or None (spec: a
    CreateTaskResult to a request type that does not support tasks is invalid, and a
    server MUST NOT send one to a request that did not declare the extension)."""
    if method not in TASK_METHODS:
        return f"{method} may not be answered with a CreateTaskResult"
    if not declares(client_capabilities, TASKS.id):
        return f"a CreateTaskResult to a request that did not declare {TASKS.id}"
    problem = task_problem(result, detailed=False)
    return None if problem is None else f"invalid CreateTaskResult: {problem}"


def parse_task(data: Mapping[str, Any], *, detailed: bool, what: str = "task") -> TaskState:
    """A ``TaskState`` from a ``CreateTaskResult`` or (``detailed``) a ``tasks/get`` result."""
    problem = task_problem(data, detailed=detailed)
    if problem is not None:
        raise RemoteProtocolError(f"invalid {what}: {problem}")
    status = data["status"]
    return TaskState(
        task_id=data["taskId"],
        status=status,
        created_at=data["createdAt"],
        last_updated_at=data["lastUpdatedAt"],
        ttl_ms=data["ttlMs"],
        poll_interval_ms=data.get("pollIntervalMs"),
        status_message=data.get("statusMessage"),
        input_requests=dict(data["inputRequests"]) if detailed and status == INPUT_REQUIRED else {},
        result=dict(data["result"]) if detailed and status == COMPLETED else None,
        error=dict(data["error"]) if detailed and status == FAILED else None,
    )


def poll_delay(state: TaskState, remaining: float | None) -> float:
    """Seconds to wait before the next ``tasks/get``: the server's suggestion (at least
    ``MIN_POLL_INTERVAL``), never past ``remaining`` (``None``: no deadline)."""
    delay = DEFAULT_POLL_INTERVAL if state.poll_interval_ms is None else state.poll_interval_ms / 1000
    delay = max(delay, MIN_POLL_INTERVAL)
    return delay if remaining is None else max(0.0, min(delay, remaining))


class TaskPoller:
    """The decisions of one client following one task (see the module docstring)."""

    def __init__(self, created: TaskState) -> None:
        self.task_id = created.task_id
        self.state = created
        #: Every ``inputRequests`` key answered so far (never answered twice).
        self.answered: set[str] = set()

    def observe(self, state: TaskState) -> bool:
        """Take a ``tasks/get`` answer; whether the task changed since the last one."""
        if state.task_id != self.task_id:
            raise RemoteProtocolError(f"tasks/get for {self.task_id!r} answered about task {state.task_id!r}")
        changed = (state.status, state.last_updated_at) != (self.state.status, self.state.last_updated_at)
        self.state = state
        return changed

    def to_answer(self) -> dict[str, Any]:
        """The outstanding ``inputRequests`` not answered yet, in the server's order."""
        if self.state.status != INPUT_REQUIRED:
            return {}
        return {k: v for k, v in self.state.input_requests.items() if k not in self.answered}

    def answered_keys(self, keys: Mapping[str, Any]) -> None:
        self.answered.update(keys)
