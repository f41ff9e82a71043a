"""Resources: listing, templates, reading, subscribing.

Theory of operation
-------------------
Spec "Server features / Resources", revisions 2024-11-05 through 2025-11-25.
``resources/list`` pages through ``Resource`` descriptions, and
``resources/templates/list`` through ``ResourceTemplate`` (RFC 6570 URI
templates).  ``resources/read`` returns a list of contents, each text or blob
(see ``content.ResourceContents``; one URI may expand to several contents).
When the server has ``resources.subscribe``, ``resources/subscribe`` and
``resources/unsubscribe`` manage ``notifications/resources/updated``
(``ResourceUpdatedNotificationParams``); ``notifications/resources/list_changed``
has no params of its own.

2025-06-18 adds ``title`` and ``_meta``, 2025-11-25 ``icons``.  A missing
resource is JSON-RPC error -32002 in the handshake era (-32602 from 2026-07-28).

2026-07-28 drops ``resources/subscribe`` / ``unsubscribe`` (the client opens a
``subscriptions/listen`` stream instead, see ``modern``), makes the list and
read results cacheable (``ttlMs``, ``cacheScope``: see ``base.CacheableResult``)
and lets ``resources/read`` be answered with an ``InputRequiredResult`` and
retried with ``inputResponses`` / ``requestState`` (see ``mrtr``).
"""

from __future__ import annotations

from typing import Any

import attrs

from ..shared_methods import frozen
from .base import (
    Annotations,
    CacheableResult,
    Icon,
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    RequestParams,
)
from .content import ResourceContents
from .mrtr import InputResponses

__all__ = [
    "ListResourceTemplatesRequestParams",
    "ListResourceTemplatesResult",
    "ListResourcesRequestParams",
    "ListResourcesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceTemplate",
    "ResourceUpdatedNotificationParams",
    "SubscribeRequestParams",
    "UnsubscribeRequestParams",
]


@frozen(kw_only=True)
class Resource:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    #: Size in bytes of the raw content (before base64), if known.
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


ListResourcesRequestParams = PaginatedRequestParams
ListResourceTemplatesRequestParams = PaginatedRequestParams


@frozen(kw_only=True)
class ListResourcesResult(PaginatedResult):
    resources: list[Resource]


@frozen(kw_only=True)
class ListResourceTemplatesResult(PaginatedResult):
    resource_templates: list[ResourceTemplate]


@frozen(kw_only=True)
class ReadResourceRequestParams(RequestParams):
    uri: str
    #: 2026-07-28 retry after an ``InputRequiredResult`` (see ``mrtr``).
    input_responses: InputResponses | None = None
    request_state: str | None = None


@frozen(kw_only=True)
class ReadResourceResult(CacheableResult):
    contents: list[ResourceContents]


@frozen(kw_only=True)
class SubscribeRequestParams(RequestParams):
    uri: str


@frozen(kw_only=True)
class UnsubscribeRequestParams(RequestParams):
    uri: str


@frozen(kw_only=True)
class ResourceUpdatedNotificationParams(NotificationParams):
    """The resource at ``uri`` changed; the client may read it again."""

    uri: str
