"""Tools: what a tool is, and ``tools/list``.

Theory of operation
-------------------
Spec "Server features / Tools", revisions 2024-11-05 through 2025-11-25.
A ``Tool`` has a ``name`` and an ``inputSchema`` (a JSON Schema object, kept as
a plain dict; 2025-11-25 makes JSON Schema 2020-12 the default dialect).
Later revisions add ``annotations`` (``ToolAnnotations``, 2025-03-26: untrusted
hints such as ``readOnlyHint``), ``title`` and ``outputSchema`` (2025-06-18),
``icons`` and ``execution.taskSupport`` (2025-11-25).  ``tools/list`` pages
through them.

The call, ``tools/call``, is in ``tool_calls``: ``sampling`` needs the ``Tool``
definition (sampling with tools, 2025-11-25) while a 2026-07-28 call carries
input responses, one kind of which is a sampling result, so the call sits
downstream of both and this module imports neither.

2026-07-28 changes:

* A property of ``inputSchema`` may carry ``x-mcp-header`` (``X_MCP_HEADER``):
  the Streamable HTTP client mirrors that argument into an ``Mcp-Param-{name}``
  header.  ``inputSchema`` stays a plain dict; the annotation round-trips
  like any other JSON Schema keyword.
* ``execution`` (task support) moved to the tasks extension.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

from ..shared_methods import frozen
from .base import Icon, PaginatedRequestParams, PaginatedResult

__all__ = [
    "X_MCP_HEADER",
    "ListToolsRequestParams",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


#: The JSON Schema keyword that marks a tool argument as mirrored into an HTTP header (2026-07-28).
X_MCP_HEADER: Final = "x-mcp-header"


@frozen(kw_only=True)
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


@frozen(kw_only=True)
class ToolExecution:
    """Execution properties (2025-11-25); ``taskSupport`` defaults to ``"forbidden"``."""

    task_support: Literal["forbidden", "optional", "required"] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
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


@frozen(kw_only=True)
class ListToolsResult(PaginatedResult):
    tools: list[Tool]
