"""Checks of the tasks extension (``io.modelcontextprotocol/tasks``, ext-tasks
specification/draft/tasks.md), which replaced 2025-11-25's core tasks in 2026-07-28.

The ``tasks.*`` checks (``tasks.py``) are the 2025-11-25 core feature; these
are the extension's, each resting on a sentence of its page
(``requirements/data/ext-tasks.json``)."""

from __future__ import annotations

from typing import Final

from ..model import CheckSpec, Level
from .core import STATELESS

M, S = Level.MUST, Level.SHOULD
PAGE: Final = "extensions/tasks"


def _spec(check_id: str, level: Level, title: str) -> CheckSpec:
    return CheckSpec(check_id, level, PAGE, title, STATELESS)


SPECS: Final[tuple[CheckSpec, ...]] = (
    _spec(
        "ext-tasks.methods-gated",
        M,
        "tasks/get, tasks/update and tasks/cancel from a request that did not declare the extension get -32021",
    ),
    _spec("ext-tasks.unknown-get", M, "tasks/get of an unknown taskId gets -32602"),
    _spec("ext-tasks.unknown-other", S, "tasks/update and tasks/cancel of an unknown taskId get a JSON-RPC error"),
    _spec(
        "ext-tasks.create",
        M,
        "a CreateTaskResult says resultType task, carries the Task fields, and tasks/get finds the task at once",
    ),
    _spec(
        "ext-tasks.get",
        M,
        "tasks/get answers resultType complete with the task's status and its payload (inputRequests, result or error)",
    ),
    _spec(
        "ext-tasks.undeclared",
        M,
        "a tools/call that did not declare the extension is never answered with a CreateTaskResult",
    ),
    _spec(
        "ext-tasks.ack", M, "tasks/update and tasks/cancel are acknowledged with an empty result (resultType complete)"
    ),
)
