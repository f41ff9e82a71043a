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

Replicas (issue 30): the record is what every replica of a server shares
through its store (``trimcp.server.store``), so each move is a function of a
record (``complete``, ``fail``, ``cancel``, ``ask``, ``answer``,
``take_answers``, ``request_cancel``, ``orphan``) that a store applies inside
one atomic read-modify-write.  The record names its ``runner`` (the replica
whose process runs the tool); answers that ``tasks/update`` took wait in
``answers`` until the runner takes them, and a ``tasks/cancel`` that reached
another replica sets ``cancel_requested`` for the runner to act on.  When the
runner's lease lapsed (its process died), ``orphan`` moves a task that is
still ``working`` or ``input_required`` to ``failed`` with a JSON-RPC error
saying so (the extension: ``failed`` carries the error), so no task is left
``working`` for ever.  ``to_store``/``from_store`` are the record as JSON data.

Time is passed in (seconds since the epoch) so the table stays
deterministic; ``createdAt``/``lastUpdatedAt`` are ISO 8601 in UTC.  A
terminal task whose ``ttlMs`` ran out is dropped on the next look-up; the
table holds at most ``max_tasks`` records and makes room by dropping the
oldest terminal ones.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
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
    #: The replica running the tool (``None``: not recorded, a table of one process).
    runner: str | None = None
    #: Answers ``tasks/update`` took, by key, not yet taken by the runner.
    answers: dict[str, Any] = attrs.field(factory=dict)
    #: ``tasks/cancel`` arrived at a replica other than the runner.
    cancel_requested: bool = False

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

    def to_store(self) -> dict[str, Any]:
        """Every field, as JSON data (what a store keeps)."""
        return {
            "id": self.task_id,
            "created": self.created_at,
            "updated": self.updated_at,
            "ttl": self.ttl_ms,
            "poll": self.poll_interval_ms,
            "status": self.status,
            "message": self.status_message,
            "result": self.result,
            "error": self.error,
            "inputs": self.input_requests,
            "keys": sorted(self.keys_used),
            "runner": self.runner,
            "answers": self.answers,
            "cancel": self.cancel_requested,
        }

    @classmethod
    def from_store(cls, data: Mapping[str, Any]) -> TaskRecord:
        """The record ``to_store`` gave (``TaskStateError`` when it is not one)."""
        try:
            status = data["status"]
            if status not in TRANSITIONS:
                raise ValueError(status)
            return cls(
                str(data["id"]),
                float(data["created"]),
                float(data["updated"]),
                data["ttl"],
                data["poll"],
                status,
                data["message"],
                data["result"],
                data["error"],
                dict(data["inputs"]),
                set(data["keys"]),
                data["runner"],
                dict(data["answers"]),
                bool(data["cancel"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TaskStateError(f"not a stored task record: {exc!r}") from None

    def expires_at(self) -> float | None:
        """When a terminal task may be dropped (seconds since the epoch), if ever."""
        if not self.terminal or self.ttl_ms is None:
            return None
        return self.created_at + self.ttl_ms / 1000

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


#: The JSON-RPC error of a task whose runner died (ext-tasks: ``failed`` carries an error).
ORPHANED_CODE: Final = -32603
ORPHANED_MESSAGE: Final = "the server process running this task stopped before it finished"


def complete(record: TaskRecord, result: dict[str, Any], now: float) -> None:
    record.move(COMPLETED, now)
    record.result, record.input_requests = result, {}


def fail(record: TaskRecord, error: dict[str, Any], now: float, message: str | None = None) -> None:
    record.move(FAILED, now, message)
    record.error, record.input_requests = error, {}


def cancel(record: TaskRecord, now: float, message: str | None = None) -> None:
    record.move(CANCELLED, now, message)
    record.input_requests = {}


def ask(record: TaskRecord, requests: Mapping[str, dict[str, Any]], now: float) -> None:
    """Add questions (by fresh key) and wait for them in ``input_required``."""
    reused = sorted(set(requests) & record.keys_used)
    if reused:
        raise TaskStateError(f"input keys {reused} were already used by task {record.task_id}")
    record.move(INPUT_REQUIRED, now)
    record.input_requests.update({k: dict(v) for k, v in requests.items()})
    record.keys_used.update(requests)


def answer(record: TaskRecord, responses: Mapping[str, Any], now: float) -> dict[str, Any]:
    """Take the responses to outstanding keys (others ignored) into ``answers`` for the
    runner; the ones taken.  With none outstanding any more the task is ``working`` again."""
    taken = {k: v for k, v in responses.items() if k in record.input_requests and isinstance(v, dict)}
    for key in taken:
        del record.input_requests[key]
    record.answers.update(taken)
    if taken:
        record.updated_at = now
    if record.status == INPUT_REQUIRED and not record.input_requests:
        record.move(WORKING, now)
    return taken


def progress_message(progress: float, total: float | None, message: str | None) -> str:
    """A ``statusMessage`` saying how far a task is (``"3/10: copying"``, ``"40%"`` style numbers kept)."""
    count = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
    return f"{count}: {message}" if message else count


def note_progress(record: TaskRecord, text: str, now: float) -> bool:
    """Say how far a ``working`` task is in its ``statusMessage`` (ext-tasks names it the place for
    "progress descriptions for working"); whether it changed.  A task waiting for input, or
    ended, keeps its message."""
    if record.status != WORKING or record.status_message == text:
        return False
    record.status_message = text
    record.updated_at = now
    return True


def take_answers(record: TaskRecord, keys: Iterable[str]) -> dict[str, Any]:
    """The runner takes the answers to ``keys`` that have come (they leave the record)."""
    return {k: record.answers.pop(k) for k in keys if k in record.answers}


def request_cancel(record: TaskRecord) -> bool:
    """Note a ``tasks/cancel`` for the runner; whether there is anything left to cancel."""
    if record.terminal:
        return False
    record.cancel_requested = True
    return True


def orphan(record: TaskRecord, now: float) -> bool:
    """Fail a task whose runner is gone (its lease lapsed); whether it moved."""
    if record.terminal:
        return False
    error = {"code": ORPHANED_CODE, "message": ORPHANED_MESSAGE, "data": {"runner": record.runner}}
    fail(record, error, now, "The task failed: " + ORPHANED_MESSAGE + ".")
    record.answers = {}
    return True


class TaskTable:
    """Every task one server knows, by id."""

    def __init__(self, *, max_tasks: int = 1000) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self.max_tasks = max_tasks
        self._tasks: dict[str, TaskRecord] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def create(
        self,
        task_id: str,
        now: float,
        *,
        ttl_ms: int | None,
        poll_interval_ms: int | None,
        runner: str | None = None,
    ) -> TaskRecord:
        record = new_record(task_id, now, ttl_ms=ttl_ms, poll_interval_ms=poll_interval_ms, runner=runner)
        self.insert(record, now)
        return record

    def insert(self, record: TaskRecord, now: float) -> None:
        """Keep a new record (``TaskStateError``: its id is taken, or the table is full)."""
        if record.task_id in self._tasks:
            raise TaskStateError(f"task id {record.task_id!r} is already in use")
        self._make_room(now)
        self._tasks[record.task_id] = record

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

    def replace(self, record: TaskRecord) -> None:
        """Keep ``record`` in place of the one with its id (a move made on a copy)."""
        if record.task_id not in self._tasks:
            raise KeyError(record.task_id)
        self._tasks[record.task_id] = record

    def complete(self, task_id: str, result: dict[str, Any], now: float) -> None:
        complete(self._tasks[task_id], result, now)

    def fail(self, task_id: str, error: dict[str, Any], now: float, message: str | None = None) -> None:
        fail(self._tasks[task_id], error, now, message)

    def cancel(self, task_id: str, now: float, message: str | None = None) -> None:
        cancel(self._tasks[task_id], now, message)

    def ask(self, task_id: str, requests: Mapping[str, dict[str, Any]], now: float) -> None:
        """Add questions (by fresh key) and wait for them in ``input_required``."""
        ask(self._tasks[task_id], requests, now)

    def answer(self, task_id: str, responses: Mapping[str, Any], now: float) -> dict[str, Any]:
        """Take the responses to outstanding keys (others ignored); the ones taken."""
        return answer(self._tasks[task_id], responses, now)


def new_record(
    task_id: str, now: float, *, ttl_ms: int | None, poll_interval_ms: int | None, runner: str | None = None
) -> TaskRecord:
    """A fresh ``working`` task (``ValueError`` for a ``ttl_ms`` that is not a positive integer)."""
    if ttl_ms is not None and (not isinstance(ttl_ms, int) or ttl_ms <= 0):
        raise ValueError("ttl_ms must be a positive integer (milliseconds) or None")
    return TaskRecord(task_id, now, now, ttl_ms, poll_interval_ms, runner=runner)
