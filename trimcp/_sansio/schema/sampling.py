"""Sampling: the server asks the client's LLM for a completion (``sampling/createMessage``).

Theory of operation
-------------------
Spec "Client features / Sampling", revisions 2024-11-05 through 2025-11-25.
The server sends ``CreateMessageRequestParams`` (``messages``, ``maxTokens``,
optional ``modelPreferences`` with name ``hints`` and cost/speed/intelligence
priorities in [0, 1], ``systemPrompt``, ``includeContext``, ``temperature``,
``stopSequences``, provider ``metadata``); the client answers with one
``CreateMessageResult`` (``role``, ``content``, ``model``, ``stopReason``).

Content: 2024-11-05 allows text and image, 2025-03-26 adds audio.  2025-11-25
adds sampling *with tools*: ``tools`` and ``toolChoice`` in the request,
``ToolUseContent`` / ``ToolResultContent`` blocks, and ``content`` that may be a
single block *or an array* of blocks (both shapes round-trip as received).  It
also adds ``task`` (task-augmented sampling) and soft-deprecates
``includeContext`` values other than ``"none"``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from ..shared_methods import frozen
from .base import RequestParams, Result, Role
from .content import SamplingContentBlock
from .tasks import TaskMetadata
from .tools import Tool

__all__ = [
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingContent",
    "SamplingMessage",
    "ToolChoice",
]

IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]
#: One block, or (2025-11-25) a list of blocks.
SamplingContent: TypeAlias = SamplingContentBlock | list[SamplingContentBlock]


@frozen(kw_only=True)
class ModelHint:
    """A (sub)string of a model name, e.g. ``"claude-3-5-sonnet"`` or ``"sonnet"``."""

    name: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ModelPreferences:
    hints: list[ModelHint] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class SamplingMessage:
    role: Role
    content: SamplingContent
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def blocks(self) -> list[SamplingContentBlock]:
        """``content`` as a list, whichever shape it arrived in."""
        return self.content if isinstance(self.content, list) else [self.content]


@frozen(kw_only=True)
class ToolChoice:
    """2025-11-25: ``auto`` (default), ``required`` (must use a tool) or ``none``."""

    mode: Literal["auto", "required", "none"] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class CreateMessageRequestParams(RequestParams):
    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    #: Provider-specific pass-through.
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    task: TaskMetadata | None = None


@frozen(kw_only=True)
class CreateMessageResult(Result):
    role: Role
    content: SamplingContent
    model: str
    #: ``endTurn``, ``stopSequence``, ``maxTokens``, ``toolUse`` … (open set).
    stop_reason: str | None = None

    @property
    def blocks(self) -> list[SamplingContentBlock]:
        return self.content if isinstance(self.content, list) else [self.content]
