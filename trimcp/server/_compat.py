"""Shaping what the server sends to the revision the client negotiated.

Theory of operation
-------------------
The server stores tools, resources and prompts in their newest (2025-11-25)
shape and trims them per session: a 2024-11-05 client must not see fields its
schema never had (``title``, ``outputSchema``, ``structuredContent``, tool
``annotations``, ``_meta`` on most objects, ``icons``), nor content types that
did not exist yet.  The rules are data: ``_SINCE`` maps an object kind to the
revision that introduced each optional member (revision names are ISO dates,
so they compare as strings).  A content block too new for the client is not
dropped but downgraded to a text block that says what it was, so that the
model still learns that something was there:

* ``audio`` arrived in 2025-03-26;
* ``resource_link`` arrived in 2025-06-18.

Members can leave too: ``_UNTIL`` names the last revision that has them
(the tool ``execution`` member went with core tasks in 2026-07-28).  In the
stateless era the revision is the one in each request's envelope, not a
session's.

Everything here copies; the registered definitions are never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

_META_TITLE: Final = {"_meta": "2025-06-18", "title": "2025-06-18", "icons": "2025-11-25"}

#: kind -> {member: first revision that has it}
_SINCE: Final[Mapping[str, Mapping[str, str]]] = {
    "tool": {
        **_META_TITLE,
        "annotations": "2025-03-26",
        "outputSchema": "2025-06-18",
        "execution": "2025-11-25",
    },
    "resource": _META_TITLE,
    "resource_template": _META_TITLE,
    "prompt": _META_TITLE,
    "prompt_argument": {"title": "2025-06-18"},
    "annotations": {"lastModified": "2025-06-18"},
    "content": {"_meta": "2025-06-18"},
    "resource_contents": {"_meta": "2025-06-18"},
    "call_tool_result": {"structuredContent": "2025-06-18"},
}
#: kind -> {member: last revision that has it}
_UNTIL: Final[Mapping[str, Mapping[str, str]]] = {
    "tool": {"execution": "2025-11-25"},
}
#: content block type -> first revision that has it
_CONTENT_SINCE: Final[Mapping[str, str]] = {"audio": "2025-03-26", "resource_link": "2025-06-18"}


def _trim(kind: str, obj: Mapping[str, Any], revision: str) -> dict[str, Any]:
    since, until = _SINCE[kind], _UNTIL.get(kind, {})
    out = {
        k: v
        for k, v in obj.items()
        if (k not in since or since[k] <= revision) and (k not in until or revision <= until[k])
    }
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
    since = _CONTENT_SINCE.get(kind) if isinstance(kind, str) else None
    if since is not None and revision < since:
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
