"""This process's copies of the live Streamable HTTP sessions, by id.

Theory of operation
-------------------
Spec 2025-11-25, transports, "Session Management".  A session's *record*
lives in the server's store (``trimcp.server.store``), which also keeps its
limits - the session cap and the idle timeout - so that every replica of a
server gets the same answer (``replicas.Replicas``).  What lives here is
what only this process can hold: the running ``HttpSession`` (its server
Connection, driver, streams and requests in flight), one per session this
process has served.  With the in-memory store this is every session; with a
shared store, a replica holds a copy of each session it was asked to serve.
"""

from __future__ import annotations

from collections.abc import Iterator

from .sessions import HttpSession

__all__ = ["SessionTable"]


class SessionTable:
    """The sessions running in this process, by id."""

    def __init__(self) -> None:
        self._by_id: dict[str, HttpSession] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[HttpSession]:
        return iter(list(self._by_id.values()))

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._by_id

    def __getitem__(self, session_id: str) -> HttpSession:
        return self._by_id[session_id]

    def values(self) -> list[HttpSession]:
        """The sessions (a copy: safe to close them meanwhile)."""
        return list(self._by_id.values())

    def get(self, session_id: str) -> HttpSession | None:
        return self._by_id.get(session_id)

    def add(self, session: HttpSession) -> None:
        self._by_id[session.id] = session

    def discard(self, session: HttpSession) -> None:
        """Forget ``session`` (if it is still the one under its id)."""
        if self._by_id.get(session.id) is session:
            del self._by_id[session.id]
