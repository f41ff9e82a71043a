"""Content blocks and resource contents: what tools, prompts and sampling return.

Theory of operation
-------------------
A content block is a JSON object discriminated by its ``type`` member:

======================  =================  ==========================================
``type``                class              since
======================  =================  ==========================================
``text``                TextContent        2024-11-05
``image``               ImageContent       2024-11-05
``resource``            EmbeddedResource   2024-11-05
``audio``               AudioContent       2025-03-26
``resource_link``       ResourceLink       2025-06-18
``tool_use``            ToolUseContent     2025-11-25 (sampling with tools only)
``tool_result``         ToolResultContent  2025-11-25 (sampling with tools only)
======================  =================  ==========================================

``ContentBlock`` is what tool results and prompt messages hold;
``SamplingContentBlock`` is what sampling messages hold.  A block whose
``type`` is a string we do not know (a newer revision, a vendor extension, or
a known type in the wrong place) becomes ``UnknownContent`` keeping the raw
object, so parsing never fails on it; a block with no ``type`` at all is a
``SchemaError``.

Resource contents (``EmbeddedResource.resource``, ``ReadResourceResult.contents``)
are told apart by which member they carry: ``text`` -> ``TextResourceContents``,
else ``blob`` (base64) -> ``BlobResourceContents``; neither is an error.

Binary payloads (``data``, ``blob``) stay base64 strings: decoding is the
caller's choice, and a 10 MB image then costs no copy here.
"""

from __future__ import annotations

import base64
from typing import Any, Literal, TypeAlias

import attrs

from ..shared_methods import frozen
from ._converter import WIRE_REQUIRED, SchemaError, converter, json_type, register_tagged_union
from .base import Annotations, Icon

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "SamplingContentBlock",
    "TextContent",
    "TextResourceContents",
    "ToolResultContent",
    "ToolUseContent",
    "UnknownContent",
]

_TAG = {WIRE_REQUIRED: True}


@frozen(kw_only=True)
class TextResourceContents:
    """The text of a resource (``text`` present)."""

    uri: str
    text: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class BlobResourceContents:
    """The bytes of a resource, base64-encoded in ``blob``."""

    uri: str
    blob: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = attrs.field(factory=dict)

    def decode(self) -> bytes:
        """The decoded bytes (raises ``binascii.Error`` on bad base64)."""
        return base64.b64decode(self.blob, validate=True)


ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents


@frozen(kw_only=True)
class TextContent:
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None
    type: Literal["text"] = attrs.field(default="text", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ImageContent:
    #: base64-encoded image data.
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None
    type: Literal["image"] = attrs.field(default="image", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class AudioContent:
    """Audio (2025-03-26+): base64 ``data`` and its ``mimeType``."""

    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None
    type: Literal["audio"] = attrs.field(default="audio", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ResourceLink:
    """A link to a resource the client may read (2025-06-18+); same members as ``Resource``."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = None
    type: Literal["resource_link"] = attrs.field(default="resource_link", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class EmbeddedResource:
    """A resource's contents inlined in a result."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None
    type: Literal["resource"] = attrs.field(default="resource", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ToolUseContent:
    """The model asks to call a tool (sampling with tools, 2025-11-25)."""

    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] | None = None
    type: Literal["tool_use"] = attrs.field(default="tool_use", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class UnknownContent:
    """A content block of a ``type`` this revision of trimcp does not know; ``raw`` is all of it."""

    raw: dict[str, Any]

    @property
    def type(self) -> str:
        t = self.raw.get("type")
        return t if isinstance(t, str) else ""


ContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | UnknownContent


@frozen(kw_only=True)
class ToolResultContent:
    """The result of a ``ToolUseContent``, sent back to the model (2025-11-25)."""

    tool_use_id: str
    content: list[ContentBlock]
    #: An object in 2025-11-25; any JSON value from 2026-07-28.
    structured_content: Any = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = None
    type: Literal["tool_result"] = attrs.field(default="tool_result", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


SamplingContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent | UnknownContent
)


# --------------------------------------------------------------------------- hooks


def _structure_unknown(value: Any, _tp: Any) -> UnknownContent:
    if not isinstance(value, dict):
        raise SchemaError(f"expected object, got {json_type(value)}")
    return UnknownContent(raw=value)


def _unstructure_unknown(obj: UnknownContent) -> dict[str, Any]:
    return dict(obj.raw)


converter.register_structure_hook(UnknownContent, _structure_unknown)
converter.register_unstructure_hook(UnknownContent, _unstructure_unknown)

register_tagged_union(
    ContentBlock,
    "type",
    {
        "text": TextContent,
        "image": ImageContent,
        "audio": AudioContent,
        "resource_link": ResourceLink,
        "resource": EmbeddedResource,
    },
    fallback=UnknownContent,
)
register_tagged_union(
    SamplingContentBlock,
    "type",
    {
        "text": TextContent,
        "image": ImageContent,
        "audio": AudioContent,
        "tool_use": ToolUseContent,
        "tool_result": ToolResultContent,
    },
    fallback=UnknownContent,
)


def _structure_resource_contents(value: Any, _tp: Any) -> Any:
    if not isinstance(value, dict):
        raise SchemaError(f"expected object, got {json_type(value)}")
    if "text" in value:
        return _text_hook(value, TextResourceContents)
    if "blob" in value:
        return _blob_hook(value, BlobResourceContents)
    raise SchemaError('resource contents need a "text" or a "blob" member')


_text_hook = converter.get_structure_hook(TextResourceContents)
_blob_hook = converter.get_structure_hook(BlobResourceContents)
converter.register_structure_hook_func(lambda t: t == ResourceContents, _structure_resource_contents)
