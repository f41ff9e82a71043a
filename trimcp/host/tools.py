"""The pool's tools as the model sees them: one name each, and the way back.

Theory of operation
-------------------
Spec "Server features / Tools" (``tools/list``; ``ToolAnnotations`` from 2025-03-26).
A model API wants flat names matching ``^[a-zA-Z0-9_-]{1,64}$``; a host holds many
servers whose tool names may clash, contain ``__`` or be long.  The pure core
(``_sansio/host/naming.py``) gives each (server, tool) pair of a *set* a name that
depends only on that set; ``classify.py`` says search, read or write.  This module
applies them to the pool's live state:

* ``ToolCatalog.table(snapshot)`` is one ``NameTable`` over every (server, tool) pair
  of the cached lists (``slot.lists["tools"]``) of the connected servers.  It is
  rebuilt only when one of those lists is another object than last time (a list
  changed, a server came or went), so names are stable while the set is.  A tool whose
  MCP Apps visibility leaves out ``"model"`` (``_meta.ui.visibility: ["app"]``) is not
  in it: the extension says a host MUST NOT put it in the agent's tool list;
* ``host_tools`` makes a ``HostTool`` per pair: the full name, the ``Tool``, its
  class and traits, and the description capped for the model;
* ``ToolCatalog.resolve(name)`` maps a full name back through the table, never by
  splitting it on ``__`` (server and tool names may contain it).  A name the current
  table lacks is looked up in the table last handed out by ``tools()`` too: the
  model was shown that name, and its server may merely be reconnecting (the call
  then reconnects it).  Anything else is ``UnknownTool``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs

from .._errors import TrimcpError
from .._sansio import apps
from .._sansio import schema as s
from .._sansio.host.classify import ToolKind, ToolTraits, tool_traits
from .._sansio.host.naming import (
    DEFAULT_DESCRIPTION_CAP,
    DESCRIPTION_MARKER,
    NameTable,
    cap_description,
)

__all__ = ["HostTool", "ToolCatalog", "UnknownTool", "host_tools"]

#: Up to this many known names are listed in an ``UnknownTool`` message; past it, counted.
LIST_AT_MOST: Final = 10

#: What the catalog is built from: each connected server's name and cached tool list.
Snapshot = Sequence[tuple[str, tuple[s.Tool, ...]]]


class UnknownTool(TrimcpError, LookupError):
    """No tool of that full name among the pool's tools."""


@attrs.frozen(kw_only=True)
class HostTool:
    """One tool of one server, as a model is shown it.

    ``name`` is the model-facing full name (unique in the pool, stable while the set of
    tools does not change); ``server`` and ``tool`` are where it goes; ``kind`` is
    search / read / write (annotations first, then the name); ``description`` is the
    tool's, capped.  ``read_only`` says the host treats the tool as free of side effects
    (search or read); ``concurrent`` that a batch may run it beside other such calls.
    The two agree today; ``traits`` holds the evidence (annotations or name, idempotent,
    open world).
    """

    name: str
    server: str
    tool: s.Tool
    kind: ToolKind
    description: str | None
    traits: ToolTraits

    @property
    def read_only(self) -> bool:
        return self.kind != "write"

    @property
    def concurrent(self) -> bool:
        return self.traits.concurrent


def host_tools(
    table: NameTable,
    snapshot: Snapshot,
    *,
    description_cap: int = DEFAULT_DESCRIPTION_CAP,
    marker: str = DESCRIPTION_MARKER,
) -> list[HostTool]:
    """A ``HostTool`` per tool of ``snapshot``, servers in snapshot order, each server's
    tools in the order it listed them."""
    out = []
    for server, tools in snapshot:
        for tool in _for_model(tools):
            traits = tool_traits(tool)
            out.append(
                HostTool(
                    name=table.name(server, tool.name),
                    server=server,
                    tool=tool,
                    kind=traits.kind,
                    description=cap_description(tool.description, cap=description_cap, marker=marker),
                    traits=traits,
                )
            )
    return out


def _for_model(tools: Sequence[s.Tool]) -> list[s.Tool]:
    """The tools the agent may see: not those an MCP Apps view alone may call."""
    return [t for t in tools if t.meta is None or apps.model_visible({"_meta": t.meta})]


def _same(a: Snapshot, b: Snapshot) -> bool:
    """Whether two snapshots hold the very same lists (identity: a changed list is a new tuple)."""
    return len(a) == len(b) and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b))


class ToolCatalog:
    """The name table of a pool, memoised on the identity of the cached lists."""

    def __init__(self) -> None:
        self._snapshot: Snapshot = ()
        self._table = NameTable()
        self._tools: dict[str, HostTool] = {}
        #: The tools last handed out by ``Pool.tools()``, by full name.
        self._served: dict[str, HostTool] = {}

    def table(self, snapshot: Snapshot) -> NameTable:
        if not _same(snapshot, self._snapshot):
            pairs = [(server, tool.name) for server, tools in snapshot for tool in _for_model(tools)]
            self._table = NameTable(pairs)
            # Memoised with the default cap: what tools() hands out unless asked otherwise.
            self._tools = {t.name: t for t in host_tools(self._table, snapshot)}
            self._snapshot = tuple(snapshot)
        return self._table

    def tools(
        self,
        snapshot: Snapshot,
        *,
        description_cap: int = DEFAULT_DESCRIPTION_CAP,
        marker: str = DESCRIPTION_MARKER,
    ) -> list[HostTool]:
        """The ``HostTool``s of ``snapshot``, remembered as what the model was shown.  With
        the default cap and marker they are the memoised ones (built once per set)."""
        table = self.table(snapshot)
        if description_cap == DEFAULT_DESCRIPTION_CAP and marker == DESCRIPTION_MARKER:
            tools = list(self._tools.values())
        else:
            tools = host_tools(table, snapshot, description_cap=description_cap, marker=marker)
        self._served = {t.name: t for t in tools}
        return tools

    def lookup(self, snapshot: Snapshot, full_name: str) -> HostTool:
        """The tool of ``full_name``, or ``UnknownTool``."""
        self.table(snapshot)
        found = self._tools.get(full_name) or self._served.get(full_name)
        if found is not None:
            return found
        known = sorted(self._tools.keys() | self._served.keys())
        if not known:
            listed = "no tools are known (no connected server has listed any)"
        elif len(known) <= LIST_AT_MOST:
            listed = "known: " + ", ".join(known)
        else:
            listed = f"{len(known)} tools are known"
        raise UnknownTool(f"no tool named {full_name!r} in the pool ({listed})")
