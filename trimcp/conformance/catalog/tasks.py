"""The tasks checks: 2025-11-25 ``basic/utilities/tasks`` (experimental in that revision).

2026-07-28 moved tasks into the ``io.modelcontextprotocol/tasks`` extension,
so every check here runs under 2025-11-25 only.  Levels follow the page's
sentences (``requirements/data/tasks.json``): the task lifecycle, result
retrieval, protocol errors, tool-level negotiation of ``required`` tools and the
progress of a task (``basic/utilities/progress``) are MUSTs; the -32601 for a task on a tool that forbids tasks, leaving the
related-task ``_meta`` off ``tasks/get`` / ``tasks/list`` / ``tasks/cancel`` and
status notifications, informative error messages and a ``statusMessage`` on a
failed task are SHOULDs.
"""

from __future__ import annotations

from typing import Final

from ..._sansio.revisions import revisions_where
from ..model import CheckSpec, Level

M, S = Level.MUST, Level.SHOULD
PAGE: Final = "basic/utilities/tasks"
#: The revisions with core tasks (2026-07-28 moved them to the ext-tasks extension).
TASKS_REVISIONS: Final = revisions_where(lambda r: "tasks/get" in r.client_requests)


def _spec(check_id: str, level: Level, title: str) -> CheckSpec:
    return CheckSpec(check_id, level, PAGE, title, TASKS_REVISIONS)


SPECS: Final[tuple[CheckSpec, ...]] = (
    _spec(
        "tasks.create",
        M,
        "a task-augmented tools/call gets a CreateTaskResult: a string taskId no other task of the run has "
        "(nor tasks/list twice), status working",
    ),
    _spec(
        "tasks.task-fields",
        M,
        "every Task answered carries ISO 8601 createdAt and lastUpdatedAt, ttl (integer or null), "
        "an integer pollInterval if any",
    ),
    _spec(
        "tasks.get",
        M,
        "tasks/get returns the task its taskId names (ignoring a related-task _meta naming another task)",
    ),
    _spec(
        "tasks.status-flow",
        M,
        "a task's statuses move only along working/input_required -> terminal; terminal never changes",
    ),
    _spec(
        "tasks.result",
        M,
        "tasks/result blocks until the task is terminal and returns exactly the underlying request's result "
        "or JSON-RPC error (ignoring a related-task _meta naming another task)",
    ),
    _spec("tasks.result-meta", M, "the tasks/result answer carries _meta io.modelcontextprotocol/related-task"),
    _spec("tasks.list", M, "tasks/list lists a task tasks/get can retrieve, following nextCursor"),
    _spec(
        "tasks.errors",
        M,
        "an unknown taskId (tasks/get, tasks/result, tasks/cancel) and an unknown tasks/list cursor get -32602",
    ),
    _spec(
        "tasks.cancel",
        M,
        "tasks/cancel of a working task answers it cancelled, and it stays cancelled; another task its "
        "_meta names is not cancelled",
    ),
    _spec("tasks.cancel-terminal", M, "tasks/cancel of a terminal task is refused with -32602"),
    _spec(
        "tasks.input-meta",
        M,
        "a request the server sends while tasks/result waits carries the task's related-task _meta",
    ),
    _spec("tasks.required", M, "a tool whose taskSupport is required, called without a task, gets -32601"),
    _spec(
        "tasks.not-augmentable",
        M,
        "a task on a request the tasks capability does not list (or on any, without the capability) is "
        "ignored: no CreateTaskResult, the request processed as without it",
    ),
    CheckSpec(
        "tasks.progress",
        M,
        "basic/utilities/progress",
        "notifications/progress for a task carry the progressToken of its task-augmented request, "
        "and stop once the task is terminal",
        TASKS_REVISIONS,
    ),
    _spec("tasks.forbidden", S, "a task on a tool whose taskSupport is forbidden (or absent) gets -32601"),
    _spec(
        "tasks.no-related-meta",
        S,
        "tasks/get, tasks/list, tasks/cancel results and notifications/tasks/status carry no related-task _meta",
    ),
    _spec("tasks.error-messages", S, "task protocol errors carry an informative (non-empty) message"),
    _spec("tasks.failed-message", S, "tasks/get of a failed task carries a statusMessage"),
    _spec(
        "tasks.requestor-capability",
        S,
        "the server does not augment its own requests with a task: the client declared no tasks",
    ),
)
