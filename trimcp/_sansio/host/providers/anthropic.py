"""The Anthropic Messages API: tool definitions, ``tool_use`` blocks and ``tool_result`` blocks.

Theory of operation
-------------------
Sources (read 2026): the tool use guide, "Define tools"
(https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools, formerly
docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use), the Messages API
reference, and the SDK's own types (``anthropic.types.ToolParam``,
``ToolResultBlockParam``, ``ToolUseBlock``), against which the tests check every entry.

* a tool is ``{"name", "description", "input_schema"}``; ``name`` must match
  ``^[a-zA-Z0-9_-]{1,64}$``; ``input_schema`` is a JSON Schema (draft 2020-12) whose root
  has ``"type": "object"``.  The API answers ``input_schema does not support oneOf, allOf,
  or anyOf at the top level`` to a root union, and ``Property keys should match pattern
  '^[a-zA-Z0-9_.-]{1,64}$'`` to a top-level property name outside that pattern (the
  400 errors as the API words them); such a name is sent as another and mapped back
  (``repair.py``).  Below the root the full vocabulary is accepted, so the dialect keeps
  it; references are inlined all the same (one tree, no cycles: ``inline.py``).  No cap on
  the description is documented.
* the model's calls are ``tool_use`` content blocks (``id``, ``name``, ``input``) of the
  assistant message; the reply goes back into the history as ``{"role": "assistant",
  "content": <its blocks>}`` (the SDK's block objects are kept as they are).
* the results go back in one user message of ``tool_result`` blocks (``tool_use_id``,
  ``content``, ``is_error``).  Their content is text, image and document blocks:
  ``image`` takes base64 JPEG, PNG, GIF or WebP; ``document`` takes a PDF (base64) or
  plain text (a text resource, titled with its URI).  Audio, other images and other
  binaries are described in a line of text.  An empty text block is refused by the API,
  so none is sent; an empty result says so in words.  ``isError`` and a call that failed
  before reaching the tool (``ToolOutcome.error``) are ``is_error: true`` with the text.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ...schema import EmbeddedResource, ImageContent, TextContent
from ...schema.content import BlobResourceContents, TextResourceContents
from .base import EMPTY_RESULT, ProviderFormat, ToolCall, ToolOutcome, as_data, block_text, member, parse_arguments
from .shape import KEYWORDS_BY_TYPE, Dialect

__all__ = ["DIALECT", "FORMAT"]

IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


DIALECT: Final = Dialect(
    name="Anthropic",
    keywords=KEYWORDS_BY_TYPE,
    annotations=frozenset({"title", "description", "default", "examples"}),
)


def _entry(name: str, description: str | None, parameters: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "input_schema": parameters}
    if description:
        out["description"] = description
    return out


def _blocks(reply: Any) -> list[Any]:
    """The content blocks of a reply: a ``Message``, its dict, or the list of blocks."""
    content = getattr(reply, "content", None)
    if content is None and isinstance(reply, dict):
        content = reply.get("content")
    if content is None and isinstance(reply, list):
        content = reply
    return list(content) if isinstance(content, list | tuple) else []


def _calls(reply: Any) -> list[ToolCall]:
    calls = []
    for block in _blocks(reply):
        data = as_data(block)
        if member(data, "type") != "tool_use":
            continue
        arguments, problem = parse_arguments(member(data, "input"))
        calls.append(
            ToolCall(name=str(member(data, "name")), arguments=arguments, id=str(member(data, "id")), problem=problem)
        )
    return calls


def _text(reply: Any) -> str:
    texts = [member(as_data(b), "text") for b in _blocks(reply) if member(as_data(b), "type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))


def _assistant(reply: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": _blocks(reply)}


def _content(outcome: ToolOutcome) -> list[dict[str, Any]]:
    result = outcome.result
    if result is None:
        return [{"type": "text", "text": outcome.error or "the call failed"}]
    out: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, TextContent):
            if block.text:
                out.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent) and block.mime_type in IMAGE_TYPES:
            source = {"type": "base64", "media_type": block.mime_type, "data": block.data}
            out.append({"type": "image", "source": source})
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            text = block.resource.text
            if text:
                source = {"type": "text", "media_type": "text/plain", "data": text}
                out.append({"type": "document", "source": source, "title": block.resource.uri[:500]})
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents):
            blob = block.resource
            if blob.mime_type == "application/pdf":
                source = {"type": "base64", "media_type": "application/pdf", "data": blob.blob}
                out.append({"type": "document", "source": source, "title": blob.uri[:500]})
            elif blob.mime_type in IMAGE_TYPES:
                out.append(
                    {"type": "image", "source": {"type": "base64", "media_type": blob.mime_type, "data": blob.blob}}
                )
            else:
                out.append({"type": "text", "text": block_text(block)})
        else:
            out.append({"type": "text", "text": block_text(block)})
    if not out and result.structured_content is not None:
        out.append({"type": "text", "text": json.dumps(result.structured_content, ensure_ascii=False)})
    return out or [{"type": "text", "text": EMPTY_RESULT}]


def _result(outcome: ToolOutcome) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": outcome.call.id or "",
        "content": _content(outcome),
    }
    if outcome.failed:
        block["is_error"] = True
    return block


def _messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": items}] if items else []


FORMAT: Final = ProviderFormat(
    name="anthropic",
    dialect=DIALECT,
    name_pattern=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    property_key=re.compile(r"^[a-zA-Z0-9_.-]{1,64}$"),
    description_cap=None,
    entry=_entry,
    tools_field=lambda entries: entries,
    calls=_calls,
    assistant=_assistant,
    result=_result,
    messages=_messages,
    text=_text,
)
