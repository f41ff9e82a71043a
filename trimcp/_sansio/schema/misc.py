"""Small utilities: logging, progress, cancellation and roots.

Theory of operation
-------------------
Spec "Utilities" and "Client features / Roots", revisions 2024-11-05 through
2025-11-25.

* Logging: the client sets the minimum level with ``logging/setLevel``; the
  server sends ``notifications/message`` (``level``, optional ``logger``, any
  JSON ``data``).  Levels are the syslog ones, ``debug`` … ``emergency``.
* Progress: a requester puts ``_meta.progressToken`` in its request; the
  receiver may send ``notifications/progress`` with that token and a
  ``progress`` that increases each time (``total`` and, from 2025-03-26,
  ``message`` optional).
* Cancellation: ``notifications/cancelled`` names the ``requestId`` (required
  up to 2025-06-18; optional in 2025-11-25, where tasks are cancelled with
  ``tasks/cancel`` instead) and an optional ``reason``.
* Roots: the server asks ``roots/list``; the client answers ``Root``s
  (``file://`` URIs) and may send ``notifications/roots/list_changed``.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import attrs

from ..shared_methods import frozen
from .base import NotificationParams, ProgressToken, RequestId, RequestParams, Result

__all__ = [
    "LOGGING_LEVELS",
    "CancelledNotificationParams",
    "ListRootsRequestParams",
    "ListRootsResult",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "ProgressNotificationParams",
    "Root",
    "SetLevelRequestParams",
]

LoggingLevel: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
#: The levels from least to most severe (RFC 5424 order).
LOGGING_LEVELS: Final[tuple[LoggingLevel, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


@frozen(kw_only=True)
class SetLevelRequestParams(RequestParams):
    level: LoggingLevel


@frozen(kw_only=True)
class LoggingMessageNotificationParams(NotificationParams):
    level: LoggingLevel
    #: Any JSON value (required; may be ``null``).
    data: Any
    logger: str | None = None


@frozen(kw_only=True)
class ProgressNotificationParams(NotificationParams):
    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = None


@frozen(kw_only=True)
class CancelledNotificationParams(NotificationParams):
    request_id: RequestId | None = None
    reason: str | None = None


@frozen(kw_only=True)
class Root:
    #: A ``file://`` URI in the handshake era.
    uri: str
    name: str | None = None
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


ListRootsRequestParams = RequestParams


@frozen(kw_only=True)
class ListRootsResult(Result):
    roots: list[Root]
