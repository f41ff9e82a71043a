"""Prompts (``prompts/list``, ``prompts/get``) and argument completion (``completion/complete``).

Theory of operation
-------------------
Spec "Server features / Prompts" and "Utilities / Completion", revisions
2024-11-05 through 2025-11-25.  A ``Prompt`` names its ``arguments``;
``prompts/get`` fills them in (string values only) and returns
``PromptMessage``s, each one content block with a role.

``completion/complete`` asks for values of one argument of a prompt
(``ref/prompt``) or of a resource template (``ref/resource``; 2024-11-05 called
it ``ResourceReference``, same shape).  2025-06-18 adds ``context.arguments``
(values already chosen) and ``title`` on prompts, arguments and references;
2025-11-25 adds ``icons`` on prompts.  A completion holds at most 100 values.
2026-07-28 makes ``prompts/list`` cacheable and lets ``prompts/get`` be
answered with an ``InputRequiredResult`` and retried with ``inputResponses`` /
``requestState`` (see ``mrtr``).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from ..shared_methods import frozen
from ._converter import WIRE_REQUIRED, register_tagged_union
from .base import Icon, PaginatedRequestParams, PaginatedResult, RequestParams, Result, Role
from .content import ContentBlock
from .mrtr import InputResponses

__all__ = [
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsRequestParams",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "ResourceTemplateReference",
]

_TAG = {WIRE_REQUIRED: True}


@frozen(kw_only=True)
class PromptArgument:
    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class Prompt:
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class PromptMessage:
    role: Role
    content: ContentBlock
    extra: dict[str, Any] = attrs.field(factory=dict)


ListPromptsRequestParams = PaginatedRequestParams


@frozen(kw_only=True)
class ListPromptsResult(PaginatedResult):
    prompts: list[Prompt]


@frozen(kw_only=True)
class GetPromptRequestParams(RequestParams):
    name: str
    arguments: dict[str, str] | None = None
    #: 2026-07-28 retry after an ``InputRequiredResult`` (see ``mrtr``).
    input_responses: InputResponses | None = None
    request_state: str | None = None


@frozen(kw_only=True)
class GetPromptResult(Result):
    messages: list[PromptMessage]
    description: str | None = None


# --------------------------------------------------------------------------- completion


@frozen(kw_only=True)
class PromptReference:
    name: str
    title: str | None = None
    type: Literal["ref/prompt"] = attrs.field(default="ref/prompt", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ResourceTemplateReference:
    """A resource template (``uri`` is the template, or a URI)."""

    uri: str
    type: Literal["ref/resource"] = attrs.field(default="ref/resource", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


CompletionReference: TypeAlias = PromptReference | ResourceTemplateReference


@frozen(kw_only=True)
class CompletionArgument:
    name: str
    value: str
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class CompletionContext:
    """2025-06-18: arguments already resolved, to narrow the completion."""

    arguments: dict[str, str] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class CompleteRequestParams(RequestParams):
    ref: CompletionReference
    argument: CompletionArgument
    context: CompletionContext | None = None


@frozen(kw_only=True)
class Completion:
    values: list[str]
    total: int | None = None
    has_more: bool | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class CompleteResult(Result):
    completion: Completion


register_tagged_union(
    CompletionReference,
    "type",
    {"ref/prompt": PromptReference, "ref/resource": ResourceTemplateReference},
)
