"""Content blocks, and turning what a handler returns into an MCP result.

Theory of operation
-------------------
MCP results are JSON objects; writing them by hand is noisy, so handlers may
return something simpler and this module completes it (spec 2025-11-25,
Server / Tools, Resources, Prompts):

* a tool may return a full ``CallToolResult``-shaped dict (it has ``content``
  or ``isError``), a ``str`` (one text block), a list of content blocks (or
  strings), ``None`` (no content), or, when it declared an ``outputSchema``,
  a plain dict that becomes ``structuredContent``; for clients that only read
  ``content`` a JSON text rendering of it is added, as the spec recommends;
* a resource reader may return ``str`` (text contents), ``bytes`` (a base64
  ``blob``), one contents dict, or a list of them;
* a prompt may return a ``str`` (one user text message), a list of messages
  (a ``str`` item is a user text message) or a ``GetPromptResult``-shaped dict.

The helpers ``text``, ``image``, ``audio``, ``resource_link``,
``embedded_text`` and ``embedded_blob`` build content blocks.
Values that are ``attrs`` instances of the schema package are converted with
``to_wire`` so typed and plain-dict handlers mix freely.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "audio",
    "embedded_blob",
    "embedded_text",
    "error_result",
    "image",
    "prompt_result",
    "resource_contents",
    "resource_link",
    "text",
    "tool_result",
]


def _wire(value: Any) -> Any:
    """Plain JSON for a schema object (attrs instance); anything else unchanged."""
    if attrs.has(type(value)):
        from .._sansio import schema  # lazily: the typed layer is optional here

        return schema.to_wire(value)
    return value


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def _with(out: dict[str, Any], **optional: Any) -> dict[str, Any]:
    out.update({k: v for k, v in optional.items() if v is not None})
    return out


def text(value: str, *, annotations: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A text content block."""
    return _with({"type": "text", "text": value}, annotations=annotations)


def image(data: bytes | str, mime_type: str, *, annotations: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An image block; ``data`` is raw bytes (encoded here) or base64 text."""
    return _with({"type": "image", "data": _b64(data), "mimeType": mime_type}, annotations=annotations)


def audio(data: bytes | str, mime_type: str, *, annotations: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An audio block (2025-03-26+; downgraded to text for older clients)."""
    return _with({"type": "audio", "data": _b64(data), "mimeType": mime_type}, annotations=annotations)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
) -> dict[str, Any]:
    """A link to a resource (2025-06-18+; downgraded to text for older clients)."""
    return _with(
        {"type": "resource_link", "uri": uri, "name": name},
        title=title,
        description=description,
        mimeType=mime_type,
        size=size,
    )


def embedded_text(uri: str, value: str, mime_type: str | None = "text/plain") -> dict[str, Any]:
    """An embedded text resource block (``type: "resource"``) of ``uri``."""
    return {"type": "resource", "resource": _with({"uri": uri, "text": value}, mimeType=mime_type)}


def embedded_blob(uri: str, data: bytes | str, mime_type: str | None = None) -> dict[str, Any]:
    """An embedded binary resource block of ``uri``; ``data`` is raw bytes (encoded here) or base64 text."""
    return {"type": "resource", "resource": _with({"uri": uri, "blob": _b64(data)}, mimeType=mime_type)}


def _block(item: Any) -> dict[str, Any]:
    item = _wire(item)
    if isinstance(item, str):
        return text(item)
    if isinstance(item, dict) and isinstance(item.get("type"), str):
        return item
    raise TypeError(f"not a content block: {item!r}")


def error_result(message: str) -> dict[str, Any]:
    """A tool failure reported in the result, where the model can see it (spec: Tools / Error Handling)."""
    return {"content": [text(message)], "isError": True}


def tool_result(value: Any, *, structured: bool) -> dict[str, Any]:
    """A ``CallToolResult`` for what a tool returned; ``structured``: it has an ``outputSchema``."""
    value = _wire(value)
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [text(value)]}
    if isinstance(value, dict):
        if "content" in value or "isError" in value:
            out = dict(value)
            out["content"] = [_block(b) for b in out.get("content") or []]
            return out
        if structured:
            # Spec: a tool returning structured content SHOULD also return it serialized as text.
            return {
                "content": [text(json.dumps(value, ensure_ascii=False))],
                "structuredContent": value,
            }
        if isinstance(value.get("type"), str):
            return {"content": [value]}
        return {"content": [text(json.dumps(value, ensure_ascii=False))]}
    if isinstance(value, (list, tuple)):
        return {"content": [_block(b) for b in value]}
    if isinstance(value, (int, float, bool)):
        return {"content": [text(json.dumps(value))]}
    raise TypeError(f"a tool returned {type(value).__name__}, which is not a tool result")


def resource_contents(uri: str, value: Any, mime_type: str | None) -> list[dict[str, Any]]:
    """The ``contents`` of a ``ReadResourceResult`` for what a reader returned."""
    value = _wire(value)
    if isinstance(value, str):
        return [_with({"uri": uri, "text": value}, mimeType=mime_type)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [_with({"uri": uri, "blob": _b64(bytes(value))}, mimeType=mime_type)]
    if isinstance(value, dict):
        if "contents" in value:
            return [_wire(c) for c in value["contents"]]
        return [value]
    if isinstance(value, (list, tuple)):
        return [_wire(c) for c in value]
    raise TypeError(f"a resource reader returned {type(value).__name__}, not str, bytes or contents")


def _message(item: Any) -> dict[str, Any]:
    item = _wire(item)
    if isinstance(item, str):
        return {"role": "user", "content": text(item)}
    if isinstance(item, dict) and "role" in item and "content" in item:
        content = item["content"]
        return {**item, "content": _block(content)}
    raise TypeError(f"not a prompt message: {item!r}")


def prompt_result(value: Any, description: str | None) -> dict[str, Any]:
    """A ``GetPromptResult`` for what a prompt returned."""
    value = _wire(value)
    if isinstance(value, dict) and "messages" in value:
        out = dict(value)
        out["messages"] = [_message(m) for m in out["messages"]]
        return out
    messages: Sequence[Any] = [value] if isinstance(value, (str, dict)) else value
    if not isinstance(messages, (list, tuple)):
        raise TypeError(f"a prompt returned {type(value).__name__}, not messages")
    return _with({"messages": [_message(m) for m in messages]}, description=description)
