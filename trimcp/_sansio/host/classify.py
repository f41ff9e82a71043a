"""Search, read or write: what an agent may collapse in its UI and run concurrently.

Theory of operation
-------------------
Spec "Server features / Tools", ``ToolAnnotations`` (2025-03-26 onwards): a server
may say a tool is ``readOnlyHint`` (no side effects), ``destructiveHint`` (may
destroy; meaningful only when not read-only), ``idempotentHint`` (repeating it has
no further effect) and ``openWorldHint`` (it reaches outside entities, such as the
web).  The spec calls them untrusted hints; we use them because the alternative, the
tool's name, is weaker evidence still.

``classify_tool(tool)`` returns ``"search" | "read" | "write"``:

1. Annotations win where given.  ``readOnlyHint: true`` makes the tool read-only
   (``"search"`` if its name says search, else ``"read"``); ``readOnlyHint: false``
   or ``destructiveHint: true`` make it a write.  ``idempotentHint`` and
   ``openWorldHint`` do not change the class (an idempotent write is still a write,
   a web fetch is still a read); they are reported in ``ToolTraits``.
2. Otherwise the name decides.  It is put in snake_case (``getFileContents``,
   ``get-file-contents`` and ``get file contents`` all become
   ``get_file_contents``) and split into words.  A word of ``WRITE_WORDS`` makes
   it a write whatever else it says (``search_and_replace``, ``write_query``); a
   word of ``SEARCH_WORDS`` makes it a search (``search_code``,
   ``brave_web_search``); a word of ``READ_WORDS`` a read (``read_file``,
   ``list_issues``, ``git_status``, ``fetch``); anything else is a write.

Unknown means write because the two mistakes are not equal: a write taken for a
read may run concurrently with another write, or be hidden in a collapsed UI row; a
read taken for a write only runs alone.  ``fetch`` (mcp-server-fetch and its
cousins) is a read: it GETs a URL, which is open-world but has no side effect the
agent is accountable for.  ``query`` is not on the read list: database servers use
it for arbitrary SQL.  The word lists are data, drawn from the tool names of the
reference servers (filesystem, git, github, fetch, memory, sqlite, postgres, slack,
puppeteer, time) and popular third-party ones (brave, tavily, exa, context7, sentry).

``plan_batch(kinds)`` is the pure half of a batch executor: consecutive non-write
calls form one group that may run concurrently; each write is a group of its own;
groups run one after another, so writes keep their order relative to everything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from ..schema import Tool, ToolAnnotations

__all__ = [
    "READ_WORDS",
    "SEARCH_WORDS",
    "WRITE_WORDS",
    "ToolKind",
    "ToolTraits",
    "classify_tool",
    "plan_batch",
    "snake_case",
    "tool_traits",
]

ToolKind = Literal["search", "read", "write"]

SEARCH_WORDS: Final = frozenset(
    {
        "search",
        "grep",
        "find",
        "glob",
        "lookup",
        "locate",
        "ripgrep",
        "rg",
    }
)
READ_WORDS: Final = frozenset(
    {
        # verbs
        "read",
        "get",
        "list",
        "fetch",
        "show",
        "view",
        "describe",
        "inspect",
        "retrieve",
        "open",
        "cat",
        "head",
        "tail",
        "stat",
        "count",
        "resolve",
        "explain",
        "browse",
        "extract",
        "scrape",
        "crawl",
        "download",
        "preview",
        "summarize",
        "check",
        "validate",
        "lint",
        "diff",
        "log",
        "blame",
        "status",
        "screenshot",
        "snapshot",
        "convert",
        "echo",
        # nouns that name a read by themselves (``directory_tree``, ``current_time``)
        "tree",
        "info",
        "metadata",
        "schema",
        "history",
        "docs",
        "time",
        "whoami",
        "me",
    }
)
WRITE_WORDS: Final = frozenset(
    {
        "write",
        "create",
        "update",
        "delete",
        "remove",
        "rm",
        "edit",
        "set",
        "put",
        "post",
        "send",
        "move",
        "mv",
        "rename",
        "replace",
        "insert",
        "add",
        "append",
        "push",
        "merge",
        "commit",
        "apply",
        "run",
        "execute",
        "exec",
        "eval",
        "install",
        "uninstall",
        "upload",
        "patch",
        "drop",
        "truncate",
        "kill",
        "restart",
        "deploy",
        "publish",
        "approve",
        "close",
        "reopen",
        "assign",
        "fork",
        "checkout",
        "reset",
        "revert",
        "stage",
        "unstage",
        "init",
        "mkdir",
        "save",
        "store",
        "upsert",
        "modify",
        "change",
        "submit",
        "click",
        "fill",
        "press",
        "navigate",
        "hover",
        "drag",
        "evaluate",
        "archive",
        "invite",
        "comment",
        "reply",
        "react",
        "schedule",
        "cancel",
        "clear",
        "import",
        "login",
        "logout",
        "register",
        "subscribe",
        "unsubscribe",
        "mark",
        "lock",
        "unlock",
        "enable",
        "disable",
        "transfer",
        "pay",
        "sign",
        "generate",
        "transform",
    }
)

_BOUNDARY_1 = re.compile(r"([A-Z]+)([A-Z][a-z])")  # HTTPRequest -> HTTP_Request
_BOUNDARY_2 = re.compile(r"([a-z0-9])([A-Z])")  # getFile -> get_File
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")


def snake_case(name: str) -> str:
    """``name`` in snake_case: camelCase and PascalCase split at their humps, runs of
    anything not a letter or digit (``-``, spaces, dots, ``/``) become one ``_``."""
    s = _BOUNDARY_2.sub(r"\1_\2", _BOUNDARY_1.sub(r"\1_\2", name))
    return _SEPARATORS.sub("_", s).strip("_").lower()


def _kind_from_name(name: str) -> ToolKind:
    words = set(snake_case(name).split("_"))
    if words & WRITE_WORDS:
        return "write"
    if words & SEARCH_WORDS:
        return "search"
    if words & READ_WORDS:
        return "read"
    return "write"


@attrs.frozen(kw_only=True)
class ToolTraits:
    """What a host needs to know to schedule and show a tool.

    ``kind`` is the class; ``source`` says whether annotations or the name decided it;
    ``idempotent`` and ``open_world`` are the annotations' values, ``None`` when absent.
    """

    kind: ToolKind
    source: Literal["annotations", "name"]
    idempotent: bool | None = None
    open_world: bool | None = None

    @property
    def concurrent(self) -> bool:
        """Whether calls may run concurrently with other non-writes."""
        return self.kind != "write"

    @property
    def retry_safe(self) -> bool:
        """Whether a failed call may be re-issued without asking: reads, and idempotent writes."""
        return self.kind != "write" or self.idempotent is True


def _hint(raw: Mapping[str, Any], key: str) -> bool | None:
    value = raw.get(key)
    return value if isinstance(value, bool) else None


def _name_and_hints(tool: Tool | Mapping[str, Any]) -> tuple[str, dict[str, bool | None]]:
    if isinstance(tool, Tool):
        a = tool.annotations or ToolAnnotations()
        return tool.name, {
            "readOnlyHint": a.read_only_hint,
            "destructiveHint": a.destructive_hint,
            "idempotentHint": a.idempotent_hint,
            "openWorldHint": a.open_world_hint,
        }
    name = tool.get("name")
    if not isinstance(name, str):
        raise TypeError("a tool's wire form needs a string 'name'")
    raw = tool.get("annotations")
    raw = raw if isinstance(raw, Mapping) else {}
    keys = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    return name, {key: _hint(raw, key) for key in keys}


def tool_traits(tool: Tool | Mapping[str, Any]) -> ToolTraits:
    """The class of ``tool`` (a ``Tool`` or its wire dict) with the evidence for it."""
    name, hints = _name_and_hints(tool)
    extras = {"idempotent": hints["idempotentHint"], "open_world": hints["openWorldHint"]}
    read_only = hints["readOnlyHint"]
    if read_only is True:
        kind: ToolKind = "search" if _kind_from_name(name) == "search" else "read"
        return ToolTraits(kind=kind, source="annotations", **extras)
    if read_only is False or hints["destructiveHint"] is True:
        return ToolTraits(kind="write", source="annotations", **extras)
    return ToolTraits(kind=_kind_from_name(name), source="name", **extras)


def classify_tool(tool: Tool | Mapping[str, Any]) -> ToolKind:
    """``"search"``, ``"read"`` or ``"write"`` for a ``Tool`` or its wire dict."""
    return tool_traits(tool).kind


def plan_batch(kinds: Sequence[ToolKind]) -> list[list[int]]:
    """Groups of call indices, to run one group after another: consecutive non-writes
    share a group (they may run concurrently), each write is alone.  Concatenated, the
    groups are ``range(len(kinds))``, so results can be put back in call order."""
    groups: list[list[int]] = []
    open_group = False  # whether the last group is a group of reads that may grow
    for index, kind in enumerate(kinds):
        if kind == "write":
            groups.append([index])
            open_group = False
        elif open_group:
            groups[-1].append(index)
        else:
            groups.append([index])
            open_group = True
    return groups
