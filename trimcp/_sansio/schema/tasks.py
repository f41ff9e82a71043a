"""Tasks: durable, pollable request execution (2025-11-25, experimental).

Theory of operation
-------------------
Spec "Utilities / Tasks", revision 2025-11-25 only (the 2026-07-28 revision
moves tasks into the ``io.modelcontextprotocol/tasks`` extension).  A requester
adds ``task: {ttl?}`` (``TaskMetadata``) to the params of a task-capable
request (``tools/call``, ``sampling/createMessage``, ``elicitation/create``);
the receiver answers at once with ``CreateTaskResult`` (a ``Task``) instead of
the usual result.  The requester then polls ``tasks/get`` (a ``Task`` flattened
into the result), fetches the real result with ``tasks/result`` (whose shape is
the original request's result type, so ``GetTaskPayloadResult`` keeps it all in
``extra``), lists with ``tasks/list`` and cancels with ``tasks/cancel``.  The
receiver may push ``notifications/tasks/status`` (a ``Task`` flattened into the
params).  Messages that belong to a task carry
``_meta["io.modelcontextprotocol/related-task"] = {"taskId": ...}``.

``Task.ttl`` is required and nullable (``null`` = kept forever): it is always
written, even as ``null``.  The flattened forms are subclasses of ``Task``.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import attrs

from ..shared_methods import frozen
from .base import PaginatedRequestParams, PaginatedResult, RequestParams, Result

__all__ = [
    "RELATED_TASK_META_KEY",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequestParams",
    "GetTaskResult",
    "ListTasksRequestParams",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotificationParams",
]

#: The ``_meta`` key that ties a message to a task.
RELATED_TASK_META_KEY: Final = "io.modelcontextprotocol/related-task"

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]


@frozen(kw_only=True)
class TaskMetadata:
    """``params.task`` of a task-augmented request: ``ttl`` is the requested retention (ms)."""

    ttl: int | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class RelatedTaskMetadata:
    """The value under ``_meta["io.modelcontextprotocol/related-task"]``."""

    task_id: str
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class Task:
    task_id: str
    status: TaskStatus
    #: ISO 8601.
    created_at: str
    #: ISO 8601.
    last_updated_at: str
    #: Retention from creation in milliseconds; ``None`` (JSON ``null``) = unlimited.  Required.
    ttl: int | None
    status_message: str | None = None
    #: Suggested polling interval in milliseconds.
    poll_interval: int | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def is_terminal(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")


@frozen(kw_only=True)
class CreateTaskResult(Result):
    """The immediate answer to a task-augmented request."""

    task: Task


@frozen(kw_only=True)
class GetTaskRequestParams(RequestParams):
    task_id: str


@frozen(kw_only=True)
class GetTaskPayloadRequestParams(RequestParams):
    task_id: str


@frozen(kw_only=True)
class CancelTaskRequestParams(RequestParams):
    task_id: str


ListTasksRequestParams = PaginatedRequestParams


@frozen(kw_only=True)
class GetTaskResult(Task):
    """``tasks/get``: the ``Task`` members flattened into a result."""

    meta: dict[str, Any] | None = None
    result_type: str | None = None


@frozen(kw_only=True)
class CancelTaskResult(Task):
    """``tasks/cancel``: the ``Task`` (now ``cancelled``) flattened into a result."""

    meta: dict[str, Any] | None = None
    result_type: str | None = None


@frozen(kw_only=True)
class GetTaskPayloadResult(Result):
    """``tasks/result``: the original request's result; its members are in ``extra``.

    Parse it properly with ``from_wire(<original result class>, to_wire(payload))``.
    """


@frozen(kw_only=True)
class ListTasksResult(PaginatedResult):
    tasks: list[Task]


@frozen(kw_only=True)
class TaskStatusNotificationParams(Task):
    """``notifications/tasks/status``: the ``Task`` members flattened into the params."""

    meta: dict[str, Any] | None = None
