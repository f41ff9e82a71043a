"""Elicitation: the server asks the user, through the client, for input (``elicitation/create``).

Theory of operation
-------------------
Spec "Client features / Elicitation", revisions 2025-06-18 and 2025-11-25.
*Form mode* (2025-06-18): ``message`` plus ``requestedSchema``, a flat JSON
Schema object whose ``properties`` are primitive schemas (string, number,
boolean, enum; 2025-11-25 adds titled and multi-select enums and ``default``s).
The schema is kept as a plain dict here; ``trimcp._sansio.host.forms``
validates it and fills defaults.  *URL mode* (2025-11-25): ``url`` plus an
``elicitationId``; the user completes the flow out of band and the server may
send ``notifications/elicitation/complete``.  The two are told apart by
``mode``; a request without ``mode`` is form mode (the 2025-06-18 shape).
2026-07-28 drops ``elicitationId`` and the completion notification (the
request now travels inside an ``InputRequiredResult``, see ``mrtr``), so
``elicitation_id`` is optional here although 2025-11-25 requires it.

The answer is ``ElicitResult``: ``action`` accept / decline / cancel and, on
accept in form mode, ``content`` (values: string, number, boolean, or a list of
strings for multi-select).  A server that needs a URL elicitation before it can
answer a request may instead fail it with error -32042 whose ``data`` is
``URLElicitationRequiredErrorData``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from ..shared_methods import frozen
from ._converter import WIRE_REQUIRED, register_tagged_union
from .base import NotificationParams, RequestParams, Result
from .tasks import TaskMetadata

__all__ = [
    "ElicitAction",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCompleteNotificationParams",
    "URLElicitationRequiredErrorData",
]

ElicitAction: TypeAlias = Literal["accept", "decline", "cancel"]


@frozen(kw_only=True)
class ElicitRequestFormParams(RequestParams):
    message: str
    #: ``{"type": "object", "properties": {name: PrimitiveSchemaDefinition}, "required": [...]}``.
    requested_schema: dict[str, Any]
    #: ``"form"``, or ``None`` when absent (2025-06-18 requests have no ``mode``).
    mode: Literal["form"] | None = None
    task: TaskMetadata | None = None


@frozen(kw_only=True)
class ElicitRequestURLParams(RequestParams):
    message: str
    url: str
    #: Required in 2025-11-25; absent in 2026-07-28.
    elicitation_id: str | None = None
    mode: Literal["url"] = attrs.field(default="url", metadata={WIRE_REQUIRED: True})
    task: TaskMetadata | None = None


ElicitRequestParams: TypeAlias = ElicitRequestFormParams | ElicitRequestURLParams


@frozen(kw_only=True)
class ElicitResult(Result):
    action: ElicitAction
    #: The submitted values (form mode, ``accept`` only).
    content: dict[str, Any] | None = None


@frozen(kw_only=True)
class ElicitationCompleteNotificationParams(NotificationParams):
    """``notifications/elicitation/complete`` (2025-11-25): a URL-mode elicitation finished."""

    elicitation_id: str


@frozen(kw_only=True)
class URLElicitationRequiredErrorData:
    """``error.data`` of a -32042 error: the URL elicitations to complete first."""

    elicitations: list[ElicitRequestURLParams]
    extra: dict[str, Any] = attrs.field(factory=dict)


register_tagged_union(
    ElicitRequestParams,
    "mode",
    {"form": ElicitRequestFormParams, "url": ElicitRequestURLParams},
    default=ElicitRequestFormParams,
)
