"""What every provider module fills in: the format record, a tool call, an outcome, and content as text.

Theory of operation
-------------------
A provider is a ``ProviderFormat``: its schema ``Dialect`` (``shape.py``), its name and
description limits, and the functions that build a tool entry, read the model's tool
calls out of a reply, turn the reply into the message that goes back into the history,
and turn each call's outcome into the provider's result shape.  The provider modules
(``anthropic.py``, ``openai.py``, ``gemini.py``) each define theirs; ``FORMATS``
(``tools.py``) is the table of them.

A reply may be the provider SDK's own object (a pydantic model) or the plain dict of the
same JSON; ``as_data`` reads either as JSON data, once, at this edge (``model_dump`` in
JSON mode, ``None`` members left out).  A ``ToolCall`` is one call read from it: the id
the result must echo, the name, the arguments (an object), or ``problem`` when the
arguments could not be read (the call is then answered with that problem, never run).

Results carry content a provider may not take (audio, an SVG image, a binary resource).
``block_text`` says in one bracketed line what such a block was, so the model knows
something was there; text and text resources go through whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ...schema import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from .shape import Dialect

__all__ = ["ProviderFormat", "ToolCall", "ToolOutcome", "as_data", "block_text", "result_text"]


@attrs.frozen
class ToolCall:
    """One tool call of a model's reply, in any provider's shape."""

    name: str
    arguments: dict[str, Any] | None
    #: The id the result must echo (Gemini may give none).
    id: str | None = None
    #: Why the arguments could not be read (then the call is not run).
    problem: str | None = None


@attrs.frozen
class ToolOutcome:
    """How one call ended: a result (which may itself say ``isError``) or an error's text."""

    call: ToolCall
    result: CallToolResult | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None or bool(self.result is not None and self.result.is_error)


@attrs.frozen
class ProviderFormat:
    """One provider's facts and shapes (see the module docstring)."""

    #: The provider's name as ``Provider`` spells it.
    name: str
    dialect: Dialect
    #: Model-facing tool names the provider accepts.
    name_pattern: re.Pattern[str]
    #: Top-level property names it accepts (others are renamed); ``None``: any.
    property_key: re.Pattern[str] | None
    #: Characters of a tool description it accepts; ``None``: no documented cap.
    description_cap: int | None
    #: ``entry(name, description, parameters)`` -> one tool entry.
    entry: Callable[[str, str | None, dict[str, Any]], dict[str, Any]]
    #: The request's ``tools`` field from the entries.
    tools_field: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    calls: Callable[[Any], list[ToolCall]]
    assistant: Callable[[Any], Any]
    result: Callable[[ToolOutcome], dict[str, Any]]
    messages: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    #: The text of a reply (what the model said besides its calls).
    text: Callable[[Any], str]


def as_data(value: Any) -> Any:
    """An SDK object (pydantic) as its JSON data; dicts, lists and scalars as they are."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {str(k): as_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_data(v) for v in value]
    return value


def member(data: Any, *names: str) -> Any:
    """The first of ``names`` present in the mapping ``data`` (snake_case or camelCase)."""
    if isinstance(data, Mapping):
        for name in names:
            if name in data:
                return data[name]
    return None


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments as an object, from an object or a JSON text; else the problem."""
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            return None, f"the arguments are not valid JSON ({exc})"
    if not isinstance(raw, dict):
        return None, f"the arguments are not a JSON object but {type(raw).__name__}"
    return raw, None


def _size(data: str) -> str:
    count = len(data) * 3 // 4
    return f"{count} bytes" if count < 10_000 else f"{count // 1000} kB"


def block_text(block: ContentBlock) -> str:
    """A content block as text: whole for text, one bracketed line for what text cannot hold."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image {block.mime_type}, {_size(block.data)}: not shown here]"
    if isinstance(block, AudioContent):
        return f"[audio {block.mime_type}, {_size(block.data)}: not shown here]"
    if isinstance(block, ResourceLink):
        kind = f", {block.mime_type}" if block.mime_type else ""
        about = f": {block.description}" if block.description else ""
        return f"[resource link {block.name} <{block.uri}>{kind}{about}]"
    if isinstance(block, EmbeddedResource):
        contents = block.resource
        if isinstance(contents, TextResourceContents):
            return f"[resource <{contents.uri}>]\n{contents.text}"
        if isinstance(contents, BlobResourceContents):
            kind = contents.mime_type or "binary"
            return f"[resource <{contents.uri}>, {kind}, {_size(contents.blob)}: not shown here]"
    return f"[{getattr(block, 'type', 'unknown')} content: not shown here]"


def result_text(result: CallToolResult, blocks: Sequence[ContentBlock] | None = None) -> str:
    """The text of ``blocks`` (default: the whole content), one block a paragraph; the JSON of
    ``structuredContent`` when there is no content at all."""
    chosen = result.content if blocks is None else blocks
    parts = [text for text in (block_text(b) for b in chosen) if text]
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    return "\n\n".join(parts)


EMPTY_RESULT = "(the tool returned no content)"
