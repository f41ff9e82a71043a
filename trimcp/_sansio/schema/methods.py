"""Which params and result class belong to each method, overall and per revision.

Theory of operation
-------------------
``REQUEST_TYPES`` / ``NOTIFICATION_TYPES`` are the union of the handshake-era
revisions 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25:
``REQUEST_TYPES[method]`` is ``(params class, result class)`` and
``NOTIFICATION_TYPES[method]`` the params class, so a receiver — or the
conformance harness — can validate any message by its method name.  A "params
class" may be a union alias (``elicitation/create`` takes
``ElicitRequestParams``); ``from_wire`` accepts both.

``request_types(revision)`` / ``notification_types(revision)`` /
``params_required(revision)`` narrow that to one of the ``REVISIONS``: which
methods a revision has is its row in the revision table (``revisions.py``,
read off the official schemas), this module only knows each method's classes.
2025-06-18 adds ``elicitation/create``;
2025-11-25 the ``tasks/*`` methods, ``notifications/tasks/status`` and
``notifications/elicitation/complete``.  2026-07-28 (``MODERN_REVISION``) is a
different table: no ``initialize``, ``ping``, ``logging/setLevel``,
``resources/(un)subscribe``, tasks or ``roots/list_changed``; new
``server/discover``, ``subscriptions/listen`` and
``notifications/subscriptions/acknowledged``; and no server-to-client requests
at all — elicitation, sampling and roots travel inside an
``InputRequiredResult`` (``mrtr.INPUT_REQUEST_TYPES``).

Every request and notification *may* carry params (at least ``_meta``);
``PARAMS_REQUIRED`` names the methods whose schema *requires* them (in
2026-07-28: every request, since ``_meta`` carries the envelope).  The helpers
``parse_request_params`` / ``parse_notification_params`` / ``parse_result``
apply the rules of one revision when given ``revision`` (the union's when
not), with error paths starting at ``params`` / ``result``:

* 2026-07-28 requests must carry a valid envelope (``meta.envelope``);
  2025-11-25 URL-mode elicitations an ``elicitationId``;
* 2026-07-28 results must carry ``resultType``: ``"complete"`` selects the
  method's result class, ``"input_required"`` an ``InputRequiredResult`` (only
  for ``mrtr.MRTR_METHODS``); absent or anything else is a ``SchemaError``.
  Cacheable complete results (``CACHEABLE_METHODS``) must carry ``ttlMs``
  (>= 0) and ``cacheScope``; a ``serverInfo`` in ``_meta`` must be an
  ``Implementation``.  A *client* must read an absent ``resultType`` as
  ``"complete"`` and may ignore bad cache hints: ``strict=False`` does both
  (strict is the default, for validating a server);
* handshake revisions keep ``structuredContent`` an object.

Task augmentation (2025-11-25): ``tools/call``, ``sampling/createMessage`` and
``elicitation/create`` answer with ``CreateTaskResult`` instead of their usual
result when the request's params carry ``task``; ``result_class`` knows that
(for 2025-11-25 and the union only: 2026-07-28 moved tasks to an extension).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from ..revisions import ALL_VERSIONS, HANDSHAKE_VERSIONS, STATELESS_VERSIONS, Era, Revision, get_revision
from ..revisions import REVISIONS as REVISION_ROWS
from ._converter import SchemaError, converter, json_type
from .base import (
    CacheableResult,
    EmptyResult,
    NotificationParams,
    PaginatedRequestParams,
    RequestParams,
    ResultType,
)
from .elicitation import (
    ElicitationCompleteNotificationParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
)
from .lifecycle import InitializeRequestParams, InitializeResult
from .meta import envelope, server_info, subscription_id
from .misc import (
    CancelledNotificationParams,
    ListRootsResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    SetLevelRequestParams,
)
from .modern import (
    DiscoverRequestParams,
    DiscoverResult,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from .mrtr import MRTR_METHODS, InputRequiredResult
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
from .tool_calls import CallToolRequestParams, CallToolResult
from .tools import ListToolsResult

__all__ = [
    "CACHEABLE_METHODS",
    "HANDSHAKE_REVISIONS",
    "MODERN_REVISION",
    "NOTIFICATION_TYPES",
    "PARAMS_REQUIRED",
    "REQUEST_TYPES",
    "REVISIONS",
    "TASK_AUGMENTABLE",
    "notification_types",
    "params_required",
    "parse_notification_params",
    "parse_request_params",
    "parse_result",
    "request_types",
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

# --------------------------------------------------------------------------- per revision

#: The handshake-era revisions, oldest first (the revision table's).
HANDSHAKE_REVISIONS: Final = HANDSHAKE_VERSIONS
#: The (newest) stateless revision.
MODERN_REVISION: Final = STATELESS_VERSIONS[-1]
#: Every revision these tables describe, oldest first.
REVISIONS: Final = ALL_VERSIONS

#: 2026-07-28 requests whose complete results carry (required) cache hints.
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)

# The classes of every method of every revision; which methods a revision has is its row
# in the revision table (``Revision.wire_requests``, ``Revision.notifications``).
_ALL_REQUEST_TYPES: Final[Mapping[str, tuple[Any, type]]] = {
    **REQUEST_TYPES,
    "server/discover": (DiscoverRequestParams, DiscoverResult),
    "subscriptions/listen": (SubscriptionsListenRequestParams, SubscriptionsListenResult),
}
_ALL_NOTIFICATION_TYPES: Final[Mapping[str, Any]] = {
    **NOTIFICATION_TYPES,
    "notifications/subscriptions/acknowledged": SubscriptionsAcknowledgedNotificationParams,
}
#: ``PARAMS_REQUIRED`` of the methods the handshake tables do not have.
_MORE_PARAMS_REQUIRED: Final = frozenset({"notifications/subscriptions/acknowledged"})


def _only(table: Mapping[str, Any], names: frozenset[str]) -> Mapping[str, Any]:
    return MappingProxyType({k: v for k, v in table.items() if k in names})


def _params_required(row: Revision) -> frozenset[str]:
    named = (PARAMS_REQUIRED | _MORE_PARAMS_REQUIRED) & (row.wire_requests | row.notifications)
    # In the stateless era every request carries its envelope in ``params._meta``.
    return named | row.client_requests if row.era is Era.STATELESS else named


_REQUESTS: Final[Mapping[str, Mapping[str, tuple[Any, type]]]] = {
    name: _only(_ALL_REQUEST_TYPES, row.wire_requests) for name, row in REVISION_ROWS.items()
}
_NOTIFICATIONS: Final[Mapping[str, Mapping[str, Any]]] = {
    name: _only(_ALL_NOTIFICATION_TYPES, row.notifications) for name, row in REVISION_ROWS.items()
}
_PARAMS_REQUIRED: Final[Mapping[str, frozenset[str]]] = {
    name: _params_required(row) for name, row in REVISION_ROWS.items()
}


def _revision_table(tables: Mapping[str, Any], revision: str) -> Any:
    try:
        return tables[revision]
    except KeyError:
        raise ValueError(f"unknown MCP revision {revision!r}") from None


def request_types(revision: str) -> Mapping[str, tuple[Any, type]]:
    """``method -> (params class, result class)`` for the requests of ``revision`` (either
    direction).  For 2026-07-28 the result class is the ``"complete"`` one.

    ``ValueError`` for a revision not in ``REVISIONS``.
    """
    table: Mapping[str, tuple[Any, type]] = _revision_table(_REQUESTS, revision)
    return table


def notification_types(revision: str) -> Mapping[str, Any]:
    """``method -> params class`` for the notifications of ``revision`` (either direction)."""
    table: Mapping[str, Any] = _revision_table(_NOTIFICATIONS, revision)
    return table


def params_required(revision: str) -> frozenset[str]:
    """The methods of ``revision`` whose messages must carry ``params``."""
    names: frozenset[str] = _revision_table(_PARAMS_REQUIRED, revision)
    return names


# --------------------------------------------------------------------------- parsing


def _structure(cls: Any, value: Any, where: str) -> Any:
    try:
        return converter.get_structure_hook(cls)(value, cls)
    except SchemaError as exc:
        exc.path.insert(0, where)
        raise


def _parse_params(method: str, cls: Any, params: dict[str, Any] | None, required: frozenset[str]) -> Any:
    if params is None:
        if method in required:
            raise SchemaError("required member missing", ["params"])
        params = {}
    return _structure(cls, params, "params")


def parse_request_params(method: str, params: dict[str, Any] | None, revision: str | None = None) -> Any:
    """The typed params of a request.  ``KeyError`` for a method not in the table
    (``REQUEST_TYPES``, or ``request_types(revision)``).

    Error paths start at ``params`` (``params.arguments: expected object, got array``).
    For 2026-07-28 the envelope in ``_meta`` is checked too (``meta.envelope``).
    """
    if revision is None:
        return _parse_params(method, REQUEST_TYPES[method][0], params, PARAMS_REQUIRED)
    cls = request_types(revision)[method][0]
    obj = _parse_params(method, cls, params, params_required(revision))
    if get_revision(revision).era is Era.STATELESS:
        found = envelope(obj.meta)
        if isinstance(found, SchemaError):
            found.path[:0] = ["params", "_meta"]
            raise found
    elif isinstance(obj, ElicitRequestURLParams) and obj.elicitation_id is None:
        # Optional in the class for 2026-07-28's sake; required where URL mode began.
        raise SchemaError("required member missing", ["params", "elicitationId"])
    return obj


def parse_notification_params(method: str, params: dict[str, Any] | None, revision: str | None = None) -> Any:
    """The typed params of a notification.  ``KeyError`` for an unknown method.

    For 2026-07-28 a ``_meta`` subscriptionId must be a JSON-RPC id.
    """
    if revision is None:
        return _parse_params(method, NOTIFICATION_TYPES[method], params, PARAMS_REQUIRED)
    cls = notification_types(revision)[method]
    obj = _parse_params(method, cls, params, params_required(revision))
    if get_revision(revision).era is Era.STATELESS:
        _in_meta(subscription_id, obj.meta, "params")
    return obj


def _in_meta(read: Any, meta: dict[str, Any] | None, where: str) -> None:
    try:
        read(meta)
    except SchemaError as exc:
        exc.path[:0] = [where, "_meta"]
        raise


def result_class(method: str, params: Any = None, revision: str | None = None) -> type:
    """The class of the result of ``method``, given the request's (typed) params.

    A task-augmented request (params with ``task`` set; 2025-11-25, or no
    ``revision``) is answered with ``CreateTaskResult``.  For 2026-07-28 this is
    the ``"complete"`` class; ``parse_result`` also knows ``InputRequiredResult``.
    """
    table = REQUEST_TYPES if revision is None else request_types(revision)
    cls = table[method][1]
    if (
        (revision is None or get_revision(revision).task_augmentation)
        and method in TASK_AUGMENTABLE
        and getattr(params, "task", None) is not None
    ):
        return CreateTaskResult
    return cls


def parse_result(
    method: str,
    result: dict[str, Any],
    params: Any = None,
    revision: str | None = None,
    *,
    strict: bool = True,
) -> Any:
    """The typed result of a request to ``method`` (see ``result_class``).

    With ``revision`` the rules of that revision apply (see the module
    docstring); for 2026-07-28 the class follows ``resultType``.  Error paths
    start at ``result``.  ``KeyError`` for a method not in the table.

    ``strict=False`` reads a 2026-07-28 result the way a lenient client may: an
    absent ``resultType`` as ``"complete"``, absent or negative cache hints as
    "do not cache".  An unknown ``resultType`` is an error either way.
    """
    cls = result_class(method, params, revision)
    if revision is None or not get_revision(revision).result_types:
        obj = _structure(cls, result, "result")
        if (
            revision is not None
            and isinstance(obj, CallToolResult)
            and obj.structured_content is not None
            and not isinstance(obj.structured_content, dict)
        ):
            problem = f"expected object, got {json_type(obj.structured_content)}"
            raise SchemaError(problem, ["result", "structuredContent"])
        return obj
    if not isinstance(result, dict):
        raise SchemaError(f"expected object, got {json_type(result)}", ["result"])
    if "resultType" not in result and strict:
        raise SchemaError("required member missing", ["result", "resultType"])
    result_type = result.get("resultType", ResultType.COMPLETE)
    if result_type == ResultType.INPUT_REQUIRED:
        if method not in MRTR_METHODS:
            problem = f'"input_required" is not allowed in a result of {method}'
            raise SchemaError(problem, ["result", "resultType"])
        obj = _structure(InputRequiredResult, result, "result")
    elif result_type == ResultType.COMPLETE:
        obj = _structure(cls, result, "result")
        if strict and method in CACHEABLE_METHODS:
            _check_cache_hints(obj)
    elif isinstance(result_type, str):
        shown = json.dumps(result_type, ensure_ascii=False)
        problem = f'expected one of "complete", "input_required", got {shown}'
        raise SchemaError(problem, ["result", "resultType"])
    else:
        problem = f"expected string, got {json_type(result_type)}"
        raise SchemaError(problem, ["result", "resultType"])
    _in_meta(server_info, obj.meta, "result")
    return obj


def _check_cache_hints(obj: CacheableResult) -> None:
    if obj.ttl_ms is None:
        raise SchemaError("required member missing", ["result", "ttlMs"])
    if obj.ttl_ms < 0:
        raise SchemaError(f"expected integer >= 0, got {obj.ttl_ms}", ["result", "ttlMs"])
    if obj.cache_scope is None:
        raise SchemaError("required member missing", ["result", "cacheScope"])
