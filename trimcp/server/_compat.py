"""Shaping what the server sends to the revision the client negotiated.

Theory of operation
-------------------
The server stores tools, resources and prompts in their newest (2025-11-25)
shape and trims them per session: a 2024-11-05 client must not see fields its
schema never had (``title``, ``outputSchema``, ``structuredContent``, tool
``annotations``, ``_meta`` on most objects, ``icons``), nor content types that
did not exist yet.  The rules are data, in the revision table (``_sansio/revisions.py``):
``Revision.members`` lists the optional members each object kind has in that
revision, ``Revision.content_types`` the newer content types.  A content block
too new for the client is not dropped but downgraded to a text block that says
what it was, so that the model still learns that something was there
(``audio`` arrived in 2025-03-26, ``resource_link`` in 2025-06-18).

Members can leave too: the tool ``execution`` member went with core tasks in
2026-07-28, so that row lacks it.  In the stateless era the revision is the one
in each request's envelope, not a session's.

Everything here copies; the registered definitions are never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._sansio.revisions import get_revision


def _trim(kind: str, obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    row = get_revision(revision)
    out = {k: v for k, v in obj.items() if row.has_member(kind, k)}
    ann = out.get("annotations")
    # Tool annotations (hints) differ from content/resource Annotations (audience, priority).
    if kind != "tool" and isinstance(ann, Mapping):
        out["annotations"] = _trim("annotations", ann, revision)
    return out


def tool(obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    return _trim("tool", obj, revision)


def resource(obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    return _trim("resource", obj, revision)


def resource_template(obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    return _trim("resource_template", obj, revision)


def prompt(obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    out = _trim("prompt", obj, revision)
    args = out.get("arguments")
    if isinstance(args, list):
        out["arguments"] = [_trim("prompt_argument", a, revision) if isinstance(a, Mapping) else a for a in args]
    return out


def resource_contents(obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    return _trim("resource_contents", obj, revision)


def content(block: Mapping[str, Any], revision: str) -> dict[str, Any]:
    """One content block as ``revision`` knows it (downgraded to text if too new)."""
    kind = block.get("type")
    if isinstance(kind, str) and not get_revision(revision).has_content_type(kind):
        return {"type": "text", "text": _describe(block, revision)}
    out = _trim("content", block, revision)
    inner = out.get("resource")
    if kind == "resource" and isinstance(inner, Mapping):
        out["resource"] = resource_contents(inner, revision)
    return out


def _describe(block: Mapping[str, Any], revision: str) -> str:
    if block.get("type") == "resource_link":
        name = block.get("name") or block.get("uri")
        return f"[resource link: {name} <{block.get('uri')}>]"
    mime = block.get("mimeType", "unknown type")
    return f"[{block.get('type')} content ({mime}) omitted: protocol revision {revision} cannot carry it]"


def call_tool_result(result: Mapping[str, Any], revision: str) -> dict[str, Any]:
    out = _trim("call_tool_result", result, revision)
    blocks = out.get("content")
    if isinstance(blocks, list):
        out["content"] = [content(b, revision) if isinstance(b, Mapping) else b for b in blocks]
    return out


def prompt_messages(messages: list[Any], revision: str) -> list[Any]:
    out: list[Any] = []
    for msg in messages:
        if isinstance(msg, Mapping) and isinstance(msg.get("content"), Mapping):
            msg = {**msg, "content": content(msg["content"], revision)}
        out.append(msg)
    return out


def read_result(contents: list[Any], revision: str) -> list[Any]:
    return [resource_contents(c, revision) if isinstance(c, Mapping) else c for c in contents]
