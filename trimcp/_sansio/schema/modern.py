"""Types new in the 2026-07-28 (stateless) revision: discovery, subscriptions and error data.

Theory of operation
-------------------
* ``server/discover`` (spec: server/discover).  Servers must implement it;
  clients may call it to learn, in one request, which revisions the server
  speaks, its capabilities and its identity (a dual-era client probes with it
  on stdio).  Its params are the envelope alone (``DiscoverRequestParams`` is
  ``RequestParams``); ``DiscoverResult`` has ``supportedVersions``,
  ``capabilities``, optional ``instructions``, the server's ``Implementation``
  in ``_meta`` (see ``meta.server_info``) and the cache hints of every
  cacheable result.
* ``subscriptions/listen`` (spec: basic/patterns/subscriptions) replaces
  ``resources/subscribe`` and the HTTP GET stream.  The request's
  ``SubscriptionFilter`` names the notifications wanted (list changes of
  tools, prompts, resources; updates of given resource URIs).  The server first
  sends ``notifications/subscriptions/acknowledged`` with the part of the
  filter it honours, then only notifications the filter asked for, each with
  ``_meta`` subscriptionId = the listen request's id; it ends the stream
  gracefully by answering the request with a ``SubscriptionsListenResult``,
  whose ``_meta`` must carry the subscriptionId.
* JSON-RPC errors (spec: schema, basic/versioning, streamable HTTP): -32020
  header mismatch (an HTTP header disagrees with the body; no ``data``
  defined), -32021 missing required client capability (``data.requiredCapabilities``,
  a ``ClientCapabilities``), -32022 unsupported protocol version
  (``data.supported``, ``data.requested``).  ``Error`` is the error object;
  ``parse_error_data`` types ``data`` by code (also -32042 of 2025-11-25).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ..shared_methods import frozen
from ._converter import SchemaError, converter, register_checked
from .base import CacheableResult, NotificationParams, RequestId, RequestParams, Result
from .elicitation import URLElicitationRequiredErrorData
from .lifecycle import ClientCapabilities, ServerCapabilities
from .meta import SUBSCRIPTION_ID_META, subscription_id

__all__ = [
    "ERROR_DATA_TYPES",
    "DiscoverRequestParams",
    "DiscoverResult",
    "Error",
    "MissingRequiredClientCapabilityErrorData",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "UnsupportedProtocolVersionErrorData",
    "parse_error_data",
]

#: ``server/discover`` takes only the envelope in ``_meta``.
DiscoverRequestParams = RequestParams


@frozen(kw_only=True)
class DiscoverResult(CacheableResult):
    #: The revisions the server speaks; the client picks one for its next requests.
    supported_versions: list[str]
    capabilities: ServerCapabilities
    #: Guidance for the model on how to use this server.
    instructions: str | None = None


@frozen(kw_only=True)
class SubscriptionFilter:
    """Which notifications a ``subscriptions/listen`` stream carries (absent = not wanted)."""

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    #: URIs whose ``notifications/resources/updated`` are wanted.
    resource_subscriptions: list[str] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    def wants(self, method: str, uri: str | None = None) -> bool:
        """Whether the notification ``method`` (about ``uri``, for updates) passes the filter."""
        if method == "notifications/resources/updated":
            return uri is not None and uri in (self.resource_subscriptions or ())
        flag = {
            "notifications/tools/list_changed": self.tools_list_changed,
            "notifications/prompts/list_changed": self.prompts_list_changed,
            "notifications/resources/list_changed": self.resources_list_changed,
        }.get(method)
        return flag is True


@frozen(kw_only=True)
class SubscriptionsListenRequestParams(RequestParams):
    notifications: SubscriptionFilter


@frozen(kw_only=True)
class SubscriptionsListenResult(Result):
    """The server's graceful end of a subscription stream; ``_meta`` names the subscription."""

    #: Required here: it must hold ``io.modelcontextprotocol/subscriptionId``.
    meta: dict[str, Any]

    @property
    def subscription_id(self) -> RequestId | None:
        return subscription_id(self.meta)


@frozen(kw_only=True)
class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """The first message of a stream: the part of the requested filter the server honours."""

    notifications: SubscriptionFilter


def _check_listen_result(obj: SubscriptionsListenResult) -> None:
    try:
        found = subscription_id(obj.meta)
    except SchemaError as exc:
        exc.path.insert(0, "_meta")
        raise
    if found is None:
        raise SchemaError("required member missing", ["_meta", SUBSCRIPTION_ID_META])


register_checked(SubscriptionsListenResult, _check_listen_result)


# --------------------------------------------------------------------------- errors


@frozen(kw_only=True)
class Error:
    """A JSON-RPC error object; ``data`` is any JSON value (``null`` reads as absent)."""

    code: int
    message: str
    data: Any = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    def typed_data(self) -> Any:
        """``data`` parsed by ``parse_error_data``."""
        return parse_error_data(self.code, self.data)


@frozen(kw_only=True)
class MissingRequiredClientCapabilityErrorData:
    """``error.data`` of -32021: the capabilities this request needs that the client did not declare."""

    required_capabilities: ClientCapabilities
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class UnsupportedProtocolVersionErrorData:
    """``error.data`` of -32022: what the server speaks, and what the request asked for."""

    supported: list[str]
    requested: str
    extra: dict[str, Any] = attrs.field(factory=dict)


#: JSON-RPC error code -> class of its ``data`` (codes with a defined data shape only).
ERROR_DATA_TYPES: Final[Mapping[int, type]] = {
    -32042: URLElicitationRequiredErrorData,  # URL elicitation required (2025-11-25)
    -32021: MissingRequiredClientCapabilityErrorData,  # 2026-07-28
    -32022: UnsupportedProtocolVersionErrorData,  # 2026-07-28
}


def parse_error_data(code: int, data: Any) -> Any:
    """The ``data`` of an error with ``code``, typed when ``ERROR_DATA_TYPES`` knows the code.

    The data of other codes comes back as given.  Raises ``SchemaError`` (path
    starting at ``data``) when a known code's data is absent (``None``) or broken.
    """
    cls = ERROR_DATA_TYPES.get(code)
    if cls is None:
        return data
    if data is None:
        raise SchemaError("required member missing", ["data"])
    try:
        return converter.get_structure_hook(cls)(data, cls)
    except SchemaError as exc:
        exc.path.insert(0, "data")
        raise
