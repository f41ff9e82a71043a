"""What the HTTP server's policy may see of the live state, read-only.

Theory of operation
-------------------
``ServerPolicy.decide`` (``trimcp._sansio.http.server.policy``) is pure: it
gets the request and a ``SessionView``, and the answer it gives depends on
nothing else.  ``LiveView`` is that view over the app's tables - the
Streamable HTTP sessions (``SessionTable``), the legacy HTTP+SSE sessions by
id, the server's tools (a ``tools/call``'s input schema names the
``Mcp-Param-*`` headers to check) - and only reads them: the app changes
them when it carries out the action, with no await in between, so what the
policy saw still holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._registry import ToolEntry
from .legacy_sse import LegacySession
from .session_table import SessionTable
from .sessions import HttpSession

__all__ = ["LiveView"]


class LiveView:
    """A ``SessionView`` over the app's sessions and the server's tools."""

    def __init__(
        self,
        sessions: SessionTable,
        legacy: Mapping[str, LegacySession],
        tools: Mapping[str, ToolEntry],
    ) -> None:
        self._sessions = sessions
        self._legacy = legacy
        self._tools = tools

    def session(self, session_id: str) -> HttpSession | None:
        return self._sessions.get(session_id)

    def legacy_session(self, session_id: str) -> LegacySession | None:
        return self._legacy.get(session_id)

    def tool_schema(self, name: str) -> Mapping[str, Any] | None:
        entry = self._tools.get(name)
        return entry.input_schema if entry is not None else None
