"""Which params and result class belong to each handshake-era method.

Theory of operation
-------------------
Union of the methods of revisions 2024-11-05, 2025-03-26, 2025-06-18 and
2025-11-25 (which revision has which method is ``trimcp._sansio.revisions``'
business, not this table's).  ``REQUEST_TYPES[method]`` is ``(params class,
result class)`` and ``NOTIFICATION_TYPES[method]`` the params class, so a
receiver — or the conformance harness — can validate any message by its method
name.  A "params class" may be a union alias (``elicitation/create`` takes
``ElicitRequestParams``); ``from_wire`` accepts both.

Every request and notification *may* carry params (at least ``_meta``);
``PARAMS_REQUIRED`` names the methods whose schema *requires* them.  The
helpers ``parse_request_params`` / ``parse_notification_params`` apply that
rule and treat absent params as ``{}`` otherwise.

Task augmentation (2025-11-25): ``tools/call``, ``sampling/createMessage`` and
``elicitation/create`` answer with ``CreateTaskResult`` instead of their usual
result when the request's params carry ``task``; ``result_class`` knows that.
"""

from __future__ import annotations

from typing import Any, Final

from ._converter import SchemaError, converter
from .base import EmptyResult, NotificationParams, PaginatedRequestParams, RequestParams
from .elicitation import ElicitationCompleteNotificationParams, ElicitRequestParams, ElicitResult
from .lifecycle import InitializeRequestParams, InitializeResult
from .misc import (
    CancelledNotificationParams,
    ListRootsResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    SetLevelRequestParams,
)
from .prompts import (
    CompleteRequestParams,
    CompleteResult,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
)
from .resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from .sampling import CreateMessageRequestParams, CreateMessageResult
from .tasks import (
    CancelTaskRequestParams,
    CancelTaskResult,
    CreateTaskResult,
    GetTaskPayloadRequestParams,
    GetTaskPayloadResult,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksResult,
    TaskStatusNotificationParams,
)
from .tools import CallToolRequestParams, CallToolResult, ListToolsResult

__all__ = [
    "NOTIFICATION_TYPES",
    "PARAMS_REQUIRED",
    "REQUEST_TYPES",
    "TASK_AUGMENTABLE",
    "parse_notification_params",
    "parse_request_params",
    "parse_result",
    "result_class",
]

REQUEST_TYPES: Final[dict[str, tuple[Any, type]]] = {
    # lifecycle and utilities
    "initialize": (InitializeRequestParams, InitializeResult),
    "ping": (RequestParams, EmptyResult),
    "logging/setLevel": (SetLevelRequestParams, EmptyResult),
    "completion/complete": (CompleteRequestParams, CompleteResult),
    # server features
    "resources/list": (PaginatedRequestParams, ListResourcesResult),
    "resources/templates/list": (PaginatedRequestParams, ListResourceTemplatesResult),
    "resources/read": (ReadResourceRequestParams, ReadResourceResult),
    "resources/subscribe": (SubscribeRequestParams, EmptyResult),
    "resources/unsubscribe": (UnsubscribeRequestParams, EmptyResult),
    "prompts/list": (PaginatedRequestParams, ListPromptsResult),
    "prompts/get": (GetPromptRequestParams, GetPromptResult),
    "tools/list": (PaginatedRequestParams, ListToolsResult),
    "tools/call": (CallToolRequestParams, CallToolResult),
    # client features
    "sampling/createMessage": (CreateMessageRequestParams, CreateMessageResult),
    "roots/list": (RequestParams, ListRootsResult),
    "elicitation/create": (ElicitRequestParams, ElicitResult),
    # tasks (2025-11-25), either direction
    "tasks/get": (GetTaskRequestParams, GetTaskResult),
    "tasks/result": (GetTaskPayloadRequestParams, GetTaskPayloadResult),
    "tasks/list": (PaginatedRequestParams, ListTasksResult),
    "tasks/cancel": (CancelTaskRequestParams, CancelTaskResult),
}

NOTIFICATION_TYPES: Final[dict[str, Any]] = {
    "notifications/initialized": NotificationParams,
    "notifications/cancelled": CancelledNotificationParams,
    "notifications/progress": ProgressNotificationParams,
    "notifications/message": LoggingMessageNotificationParams,
    "notifications/resources/list_changed": NotificationParams,
    "notifications/resources/updated": ResourceUpdatedNotificationParams,
    "notifications/prompts/list_changed": NotificationParams,
    "notifications/tools/list_changed": NotificationParams,
    "notifications/roots/list_changed": NotificationParams,
    "notifications/tasks/status": TaskStatusNotificationParams,
    "notifications/elicitation/complete": ElicitationCompleteNotificationParams,
}

#: Methods whose message must carry ``params`` (per every schema that has them).
PARAMS_REQUIRED: Final = frozenset(
    {
        "initialize",
        "logging/setLevel",
        "completion/complete",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/get",
        "tools/call",
        "sampling/createMessage",
        "elicitation/create",
        "tasks/get",
        "tasks/result",
        "tasks/cancel",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/message",
        "notifications/resources/updated",
        "notifications/tasks/status",
        "notifications/elicitation/complete",
    }
)

#: Requests that may be task-augmented (2025-11-25).
TASK_AUGMENTABLE: Final = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})


def _parse_params(method: str, cls: Any, params: dict[str, Any] | None) -> Any:
    if params is None:
        if method in PARAMS_REQUIRED:
            raise SchemaError("required member missing", ["params"])
        params = {}
    try:
        return converter.get_structure_hook(cls)(params, cls)
    except SchemaError as exc:
        exc.path.insert(0, "params")
        raise


def parse_request_params(method: str, params: dict[str, Any] | None) -> Any:
    """The typed params of a request.  ``KeyError`` for a method not in ``REQUEST_TYPES``.

    Error paths start at ``params`` (``params.arguments: expected object, got array``).
    """
    return _parse_params(method, REQUEST_TYPES[method][0], params)


def parse_notification_params(method: str, params: dict[str, Any] | None) -> Any:
    """The typed params of a notification.  ``KeyError`` for an unknown method."""
    return _parse_params(method, NOTIFICATION_TYPES[method], params)


def result_class(method: str, params: Any = None) -> type:
    """The class of the result of ``method``, given the request's (typed) params.

    A task-augmented request (params with ``task`` set) is answered with ``CreateTaskResult``.
    """
    if method in TASK_AUGMENTABLE and getattr(params, "task", None) is not None:
        return CreateTaskResult
    return REQUEST_TYPES[method][1]


def parse_result(method: str, result: dict[str, Any], params: Any = None) -> Any:
    """The typed result of a request to ``method`` (see ``result_class``).

    Error paths start at ``result``.
    """
    cls = result_class(method, params)
    try:
        return converter.get_structure_hook(cls)(result, cls)
    except SchemaError as exc:
        exc.path.insert(0, "result")
        raise
