"""The handshake (``initialize``), implementation info and capabilities.

Theory of operation
-------------------
Spec "Lifecycle" and "Capabilities", revisions 2024-11-05 through 2025-11-25.
The client sends ``initialize`` with its newest ``protocolVersion``, its
``ClientCapabilities`` and its ``clientInfo`` (an ``Implementation``); the
server answers with the revision it will speak, its ``ServerCapabilities``,
``serverInfo`` and optional ``instructions``.

A capability is *present* when its member is present, even as ``{}``: ``None``
here means absent, an empty sub-object means "supported, no options".  What was
added when:

* 2024-11-05: client ``roots`` (``listChanged``), ``sampling``, ``experimental``;
  server ``logging``, ``prompts``/``resources``/``tools`` (``listChanged``),
  ``resources.subscribe``, ``experimental``.
* 2025-03-26: server ``completions``.
* 2025-06-18: client ``elicitation``; ``Implementation.title``.
* 2025-11-25: ``elicitation.form``/``url``, ``sampling.context``/``tools``,
  ``tasks`` on both sides; ``Implementation.icons``/``websiteUrl``/``description``.

* 2026-07-28: ``extensions`` on both sides (extension identifier -> settings
  object, ``{}`` = supported with no settings; e.g. ``io.modelcontextprotocol/tasks``,
  which replaces ``tasks``).  There is no ``initialize`` any more: the client
  sends its ``ClientCapabilities`` and ``Implementation`` in every request's
  ``_meta`` (see ``meta``) and the server publishes its ``ServerCapabilities``
  in the ``server/discover`` result (see ``modern``).

Capabilities are not a closed set: unknown ones land in ``extra`` and are
written back unchanged.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..shared_methods import frozen
from .base import Icon, RequestParams, Result

__all__ = [
    "ClientCapabilities",
    "ElicitationCapability",
    "Implementation",
    "InitializeRequestParams",
    "InitializeResult",
    "ListChangedCapability",
    "PromptsCapability",
    "ResourcesCapability",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "TasksCapability",
    "ToolsCapability",
]


@frozen(kw_only=True)
class Implementation:
    """The name and version of an MCP client or server (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    icons: list[Icon] | None = None
    website_url: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ListChangedCapability:
    """A capability whose only option is ``listChanged``."""

    list_changed: bool | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class RootsCapability(ListChangedCapability):
    """Client: can answer ``roots/list``; ``listChanged`` = sends the change notification."""


@frozen(kw_only=True)
class PromptsCapability(ListChangedCapability):
    """Server: offers prompts."""


@frozen(kw_only=True)
class ToolsCapability(ListChangedCapability):
    """Server: offers tools."""


@frozen(kw_only=True)
class ResourcesCapability(ListChangedCapability):
    """Server: offers resources; ``subscribe`` = supports ``resources/subscribe``."""

    subscribe: bool | None = None


@frozen(kw_only=True)
class SamplingCapability:
    """Client: can answer ``sampling/createMessage``.

    2025-11-25: ``context`` = honours ``includeContext`` other than ``"none"``;
    ``tools`` = accepts ``tools``/``toolChoice``.
    """

    context: dict[str, Any] | None = None
    tools: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ElicitationCapability:
    """Client: can answer ``elicitation/create`` (2025-06-18).

    2025-11-25 splits it by mode; an empty object means form mode only.
    """

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def supports_form(self) -> bool:
        return self.form is not None or self.url is None

    @property
    def supports_url(self) -> bool:
        return self.url is not None


@frozen(kw_only=True)
class TasksCapability:
    """Task-augmented requests (2025-11-25, experimental), either side.

    ``requests`` says which requests may be task-augmented: for a server
    ``{"tools": {"call": {}}}``, for a client ``{"sampling": {"createMessage": {}},
    "elicitation": {"create": {}}}``.
    """

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    def supports_request(self, method: str) -> bool:
        """Whether ``method`` (e.g. ``"tools/call"``) may be task-augmented."""
        group, _, verb = method.partition("/")
        node = (self.requests or {}).get(group)
        return isinstance(node, dict) and isinstance(node.get(verb), dict)


@frozen(kw_only=True)
class ClientCapabilities:
    experimental: dict[str, dict[str, Any]] | None = None
    #: 2026-07-28: extension identifier -> settings object.
    extensions: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: TasksCapability | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ServerCapabilities:
    experimental: dict[str, dict[str, Any]] | None = None
    #: 2026-07-28: extension identifier -> settings object.
    extensions: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: TasksCapability | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class InitializeRequestParams(RequestParams):
    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


@frozen(kw_only=True)
class InitializeResult(Result):
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None
