"""Tools: ``tools/list`` and ``tools/call``.

Theory of operation
-------------------
Spec "Server features / Tools", revisions 2024-11-05 through 2025-11-25.
A ``Tool`` has a ``name`` and an ``inputSchema`` (a JSON Schema object, kept as
a plain dict; 2025-11-25 makes JSON Schema 2020-12 the default dialect).
Later revisions add ``annotations`` (``ToolAnnotations``, 2025-03-26: untrusted
hints such as ``readOnlyHint``), ``title`` and ``outputSchema`` (2025-06-18),
``icons`` and ``execution.taskSupport`` (2025-11-25).

``tools/call`` takes ``CallToolRequestParams`` (``name``, ``arguments``, and in
2025-11-25 an optional ``task`` asking for task-augmented execution, answered
by a ``CreateTaskResult`` instead) and returns ``CallToolResult``: ``content``
blocks, optional ``structuredContent`` (2025-06-18, must match
``outputSchema`` when the tool declares one) and ``isError`` — a tool failure
is a successful JSON-RPC response with ``isError: true``, not a JSON-RPC error.

2026-07-28 changes:

* ``structuredContent`` may be any JSON value (an array, say), not only an
  object, so ``structured_content`` is typed ``Any``; the per-revision
  ``parse_result`` still insists on an object for the handshake revisions.
  (A JSON ``null`` there reads as absent.)
* ``tools/call`` may be answered with an ``InputRequiredResult`` and retried
  with ``inputResponses`` and ``requestState`` (see ``mrtr``).
* A property of ``inputSchema`` may carry ``x-mcp-header`` (``X_MCP_HEADER``):
  the Streamable HTTP client mirrors that argument into an ``Mcp-Param-{name}``
  header.  ``inputSchema`` stays a plain dict; the annotation round-trips
  like any other JSON Schema keyword.
* ``execution`` (task support) moved to the tasks extension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from .base import Icon, PaginatedRequestParams, PaginatedResult, RequestParams, Result
from .content import ContentBlock
from .tasks import TaskMetadata

if TYPE_CHECKING:
    # Resolved by ``mrtr`` (which imports this module through ``sampling``).
    from .mrtr import InputResponses

__all__ = [
    "X_MCP_HEADER",
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsRequestParams",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


#: The JSON Schema keyword that marks a tool argument as mirrored into an HTTP header (2026-07-28).
X_MCP_HEADER: Final = "x-mcp-header"


@attrs.frozen(kw_only=True)
class ToolAnnotations:
    """Hints about a tool's behaviour (2025-03-26).  Clients must not trust them blindly.

    Defaults when absent: ``readOnlyHint`` false, ``destructiveHint`` true,
    ``idempotentHint`` false, ``openWorldHint`` true.
    """

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolExecution:
    """Execution properties (2025-11-25); ``taskSupport`` defaults to ``"forbidden"``."""

    task_support: Literal["forbidden", "optional", "required"] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Tool:
    name: str
    input_schema: dict[str, Any]
    title: str | None = None
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    execution: ToolExecution | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def display_name(self) -> str:
        """``title``, else ``annotations.title``, else ``name`` (the spec's precedence)."""
        if self.title:
            return self.title
        if self.annotations is not None and self.annotations.title:
            return self.annotations.title
        return self.name


#: ``tools/list`` takes only a cursor.
ListToolsRequestParams = PaginatedRequestParams


@attrs.frozen(kw_only=True)
class ListToolsResult(PaginatedResult):
    tools: list[Tool]


@attrs.frozen(kw_only=True)
class CallToolRequestParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    #: 2025-11-25: ask for task-augmented execution (the answer is a ``CreateTaskResult``).
    task: TaskMetadata | None = None
    #: 2026-07-28 retry after an ``InputRequiredResult``: the answers, by input request key.
    input_responses: InputResponses | None = None
    #: 2026-07-28 retry: the server's opaque ``requestState``, echoed unchanged.
    request_state: str | None = None


@attrs.frozen(kw_only=True)
class CallToolResult(Result):
    content: list[ContentBlock]
    #: An object up to 2025-11-25; any JSON value from 2026-07-28.
    structured_content: Any = None
    is_error: bool | None = None
