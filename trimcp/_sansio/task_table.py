"""The server's table of ext-tasks tasks: records, statuses and the moves between them.

Theory of operation
-------------------
ext-tasks (``io.modelcontextprotocol/tasks``, specification/draft/tasks.md)
lets a server answer a ``tools/call`` with a ``CreateTaskResult`` and run the
work on; the client polls ``tasks/get``, answers questions with
``tasks/update`` and asks to stop with ``tasks/cancel``.

A task starts ``working``; ``working`` and ``input_required`` move to each
other and to a terminal status (``completed``, ``failed``, ``cancelled``);
a terminal task never moves again.  ``TRANSITIONS`` is that diagram as data:
an illegal move is ``TaskStateError`` (our misuse, not the peer's).

Questions: ``ask`` adds entries to the task's ``inputRequests`` (a key may
never be used twice over a task's life) and sets ``input_required``;
``answer`` takes the responses to keys still outstanding - others are
ignored, as the spec says - and sets ``working`` again once none remain.

Time is passed in (seconds since the epoch) so the table stays
deterministic; ``createdAt``/``lastUpdatedAt`` are ISO 8601 in UTC.  A
terminal task whose ``ttlMs`` ran out is dropped on the next look-up; the
table holds at most ``max_tasks`` records and makes room by dropping the
oldest terminal ones.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Final

import attrs

from .._errors import LocalProtocolError

WORKING: Final = "working"
INPUT_REQUIRED: Final = "input_required"
COMPLETED: Final = "completed"
FAILED: Final = "failed"
CANCELLED: Final = "cancelled"
TERMINAL: Final = frozenset({COMPLETED, FAILED, CANCELLED})

TRANSITIONS: Final[Mapping[str, frozenset[str]]] = {
    WORKING: frozenset({INPUT_REQUIRED}) | TERMINAL,
    INPUT_REQUIRED: frozenset({WORKING}) | TERMINAL,
    COMPLETED: frozenset(),
    FAILED: frozenset(),
    CANCELLED: frozenset(),
}


class TaskStateError(LocalProtocolError):
    """A move the task status diagram does not allow, or a full table."""


def iso8601(now: float) -> str:
    stamp = datetime.datetime.fromtimestamp(now, datetime.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@attrs.define
class TaskRecord:
    task_id: str
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None
    status: str = WORKING
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    #: Outstanding questions, by key (each a ``{"method", "params"}`` request).
    input_requests: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    #: Every key ever asked: a key is never reused over a task's life.
    keys_used: set[str] = attrs.field(factory=set)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def move(self, status: str, now: float, message: str | None = None) -> None:
        if status == self.status:
            return
        if status not in TRANSITIONS[self.status]:
            raise TaskStateError(f"can't move task {self.task_id} from {self.status!r} to {status!r}")
        self.status = status
        self.updated_at = now
        if message is not None:
            self.status_message = message

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and (now - self.created_at) * 1000 > self.ttl_ms

    def to_wire(self, *, detailed: bool) -> dict[str, Any]:
        """The ``Task`` fields; ``detailed``: with the status's payload (``DetailedTask``)."""
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": iso8601(self.created_at),
            "lastUpdatedAt": iso8601(self.updated_at),
            "ttlMs": self.ttl_ms,
        }
        if self.poll_interval_ms is not None:
            out["pollIntervalMs"] = self.poll_interval_ms
        if self.status_message is not None:
            out["statusMessage"] = self.status_message
        if detailed:
            if self.status == INPUT_REQUIRED:
                out["inputRequests"] = {k: dict(v) for k, v in self.input_requests.items()}
            elif self.status == COMPLETED and self.result is not None:
                out["result"] = self.result
            elif self.status == FAILED and self.error is not None:
                out["error"] = self.error
        return out


class TaskTable:
    """Every task one server knows, by id."""

    def __init__(self, *, max_tasks: int = 1000) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self.max_tasks = max_tasks
        self._tasks: dict[str, TaskRecord] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def create(self, task_id: str, now: float, *, ttl_ms: int | None, poll_interval_ms: int | None) -> TaskRecord:
        if task_id in self._tasks:
            raise TaskStateError(f"task id {task_id!r} is already in use")
        if ttl_ms is not None and (not isinstance(ttl_ms, int) or ttl_ms <= 0):
            raise ValueError("ttl_ms must be a positive integer (milliseconds) or None")
        self._make_room(now)
        record = TaskRecord(task_id, now, now, ttl_ms, poll_interval_ms)
        self._tasks[task_id] = record
        return record

    def _make_room(self, now: float) -> None:
        self.expire(now)
        if len(self._tasks) < self.max_tasks:
            return
        for task_id, record in sorted(self._tasks.items(), key=lambda kv: kv[1].updated_at):
            if record.terminal:
                del self._tasks[task_id]
                return
        raise TaskStateError(f"too many tasks at once (at most {self.max_tasks})")

    def expire(self, now: float) -> None:
        for task_id in [t for t, r in self._tasks.items() if r.terminal and r.expired(now)]:
            del self._tasks[task_id]

    def get(self, task_id: str, now: float) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is not None and record.terminal and record.expired(now):
            del self._tasks[task_id]
            return None
        return record

    def complete(self, task_id: str, result: dict[str, Any], now: float) -> None:
        record = self._tasks[task_id]
        record.move(COMPLETED, now)
        record.result, record.input_requests = result, {}

    def fail(self, task_id: str, error: dict[str, Any], now: float, message: str | None = None) -> None:
        record = self._tasks[task_id]
        record.move(FAILED, now, message)
        record.error, record.input_requests = error, {}

    def cancel(self, task_id: str, now: float, message: str | None = None) -> None:
        record = self._tasks[task_id]
        record.move(CANCELLED, now, message)
        record.input_requests = {}

    def ask(self, task_id: str, requests: Mapping[str, dict[str, Any]], now: float) -> None:
        """Add questions (by fresh key) and wait for them in ``input_required``."""
        record = self._tasks[task_id]
        reused = sorted(set(requests) & record.keys_used)
        if reused:
            raise TaskStateError(f"input keys {reused} were already used by task {task_id}")
        record.move(INPUT_REQUIRED, now)
        record.input_requests.update({k: dict(v) for k, v in requests.items()})
        record.keys_used.update(requests)

    def answer(self, task_id: str, responses: Mapping[str, Any], now: float) -> dict[str, Any]:
        """Take the responses to outstanding keys (others ignored); the ones taken."""
        record = self._tasks[task_id]
        taken = {k: v for k, v in responses.items() if k in record.input_requests and isinstance(v, dict)}
        for key in taken:
            del record.input_requests[key]
        if taken:
            record.updated_at = now
        if record.status == INPUT_REQUIRED and not record.input_requests:
            record.move(WORKING, now)
        return taken
