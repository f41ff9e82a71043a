"""A server's surface (what it offers a client) and the difference between two of them.

Theory of operation
-------------------
The surface is what a client can learn by listing: the server's identity and
capabilities (from ``initialize`` or ``server/discover``), its tools with their
input and output schemas and annotations, its resources, resource templates
and prompts (every page, joined).  ``surface_from_transcript`` reads it from a
recording (the answers to those requests); ``surface_from_client`` asks a live
session.  ``diff_surfaces(a, b)`` names every item added, removed or changed,
with the JSON path of each changed member, so that a server upgrade that
renames a tool or tightens a schema shows up in review like a code change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from .._errors import McpError, TrimcpError
from .._sansio import schema as s

if TYPE_CHECKING:
    from .._trio.client.client_session import ClientSession
    from .transcript import Transcript

__all__ = ["Change", "diff_surfaces", "surface_from_client", "surface_from_transcript"]

#: list method -> (surface section, list member, the key naming an item).
LISTS: Final = {
    "tools/list": ("tools", "tools", "name"),
    "resources/list": ("resources", "resources", "uri"),
    "resources/templates/list": ("templates", "resourceTemplates", "uriTemplate"),
    "prompts/list": ("prompts", "prompts", "name"),
}
SECTIONS: Final = ("server", "capabilities", "tools", "resources", "templates", "prompts")


def _empty() -> dict[str, Any]:
    return {"server": {}, "capabilities": {}, "tools": {}, "resources": {}, "templates": {}, "prompts": {}}


def _items(section: dict[str, Any], items: Any, key: str) -> None:
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get(key), str):
            section[item[key]] = {k: v for k, v in item.items() if k != "_meta"}


def surface_from_transcript(transcript: Transcript) -> dict[str, Any]:
    """The surface (server info, capabilities and every list) a recorded conversation shows."""
    out = _empty()
    answers = transcript.answers()
    opened = (answers.get("initialize") or answers.get("server/discover") or [{}])[0]
    out["capabilities"] = opened.get("capabilities") or {}
    info = opened.get("serverInfo") or (opened.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") or {}
    out["server"] = dict(info) if isinstance(info, dict) else {}
    for method, (section, member, key) in LISTS.items():
        for page in answers.get(method, ()):
            _items(out[section], page.get(member), key)
    return out


async def surface_from_client(client: ClientSession) -> dict[str, Any]:
    """Every list of a live session (a feature the server does not advertise stays empty)."""
    out = _empty()
    caps = client.server_capabilities
    out["capabilities"] = dict(caps)
    out["server"] = dict(client.server_info or {})
    fetch: dict[str, Callable[[], Awaitable[Sequence[Any]]]] = {
        "tools": client.list_tools,
        "resources": client.list_resources,
        "templates": client.list_resource_templates,
        "prompts": client.list_prompts,
    }
    feature_of = {"tools": "tools", "resources": "resources", "templates": "resources", "prompts": "prompts"}
    for section, _, key in LISTS.values():
        if feature_of[section] not in caps:
            continue
        try:
            listed = await fetch[section]()
        except McpError:
            continue  # e.g. templates/list not implemented: nothing to compare
        except TrimcpError:
            raise
        _items(out[section], [s.to_wire(item) for item in listed], key)
    return out


@attrs.frozen
class Change:
    """One difference between two surfaces (``diff_surfaces``): an item added, removed or changed."""

    #: ``added``, ``removed`` or ``changed``.
    kind: str
    section: str
    #: The item (tool name, URI, ...), ``""`` for the server and capabilities sections.
    item: str
    #: JSON path of the member that changed, inside the item (``inputSchema.properties.tz``).
    path: str = ""
    before: Any = None
    after: Any = None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def describe(self) -> str:
        where = f"{self.section} {self.item}".strip()
        if self.kind == "changed":
            return f"~ {where}{'.' + self.path if self.path else ''}: {_short(self.before)} -> {_short(self.after)}"
        return f"{'+' if self.kind == 'added' else '-'} {where}{'.' + self.path if self.path else ''}"


def _short(value: Any, limit: int = 80) -> str:
    import json

    text = json.dumps(value, sort_keys=True) if value is not None else "(absent)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff_surfaces(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    """Every difference between surfaces ``a`` and ``b`` (server info, capabilities, tools, resources, templates, prompts)."""
    out: list[Change] = []
    for section in ("server", "capabilities"):
        out.extend(_diff_values(section, "", "", a.get(section) or {}, b.get(section) or {}))
    for section in ("tools", "resources", "templates", "prompts"):
        left, right = a.get(section) or {}, b.get(section) or {}
        for item in sorted(set(left) | set(right)):
            if item not in right:
                out.append(Change("removed", section, item))
            elif item not in left:
                out.append(Change("added", section, item))
            else:
                out.extend(_diff_values(section, item, "", left[item], right[item]))
    return out


def _diff_values(section: str, item: str, path: str, before: Any, after: Any) -> list[Change]:
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[Change] = []
        for key in sorted(set(before) | set(after), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in after:
                out.append(Change("removed", section, item, sub, before[key], None))
            elif key not in before:
                out.append(Change("added", section, item, sub, None, after[key]))
            else:
                out.extend(_diff_values(section, item, sub, before[key], after[key]))
        return out
    if before != after:
        return [Change("changed", section, item, path, before, after)]
    return []
