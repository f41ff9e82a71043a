"""Calling a tool: ``tools/call``.

Theory of operation
-------------------
Spec "Server features / Tools", revisions 2024-11-05 through 2026-07-28.
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

The ``Tool`` definition itself is in ``tools``.
"""

from __future__ import annotations

from typing import Any

from ..shared_methods import frozen
from .base import RequestParams, Result
from .content import ContentBlock, TextContent
from .mrtr import InputResponses
from .tasks import TaskMetadata

__all__ = ["CallToolRequestParams", "CallToolResult"]


@frozen(kw_only=True)
class CallToolRequestParams(RequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    #: 2025-11-25: ask for task-augmented execution (the answer is a ``CreateTaskResult``).
    task: TaskMetadata | None = None
    #: 2026-07-28 retry after an ``InputRequiredResult``: the answers, by input request key.
    input_responses: InputResponses | None = None
    #: 2026-07-28 retry: the server's opaque ``requestState``, echoed unchanged.
    request_state: str | None = None


@frozen(kw_only=True)
class CallToolResult(Result):
    content: list[ContentBlock]
    #: An object up to 2025-11-25; any JSON value from 2026-07-28.
    structured_content: Any = None
    is_error: bool | None = None

    @property
    def text(self) -> str:
        """The text of every ``TextContent`` block, joined by newlines ("" when there is
        none): what most callers want of a result, without narrowing the content union."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))
