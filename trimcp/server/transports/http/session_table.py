"""The live Streamable HTTP sessions, in the order of their last activity, and their limits.

Theory of operation
-------------------
Spec 2025-11-25, transports, "Session Management": a server MAY end a session
at any time, after which it answers requests naming it with 404.  That is
what makes both limits here safe for well-behaved clients: a client whose
session ended starts a new one with a fresh ``initialize``.

``SessionTable`` keeps the sessions by id in an ``OrderedDict`` ordered by
last activity: ``active`` (a request named the session) moves it to the end
in O(1), so the least recently active sessions are always at the front and
neither limit ever walks the whole table:

* ``make_room`` runs before an ``initialize`` opens a session.  Under
  ``max_sessions`` it admits at once.  At the cap it evicts the front-most
  session with no request in flight - an open GET stream does not protect a
  session: a stream is cheap to reopen, and the cap must hold against clients
  that open one and walk away.  Sessions passed over because a request is in
  flight count as active now and move to the end; after ``EVICTION_SCAN`` of
  them it gives up, and the ``initialize`` is refused (503).
* ``reap`` closes the sessions idle longer than the idle timeout: no request
  in flight and no stream attached (``HttpSession.busy``).  It reads from the
  front and stops at the first session that has not expired; a busy session
  it meets is active now and moves to the end.

An evicted or reaped session is closed as a DELETE closes it: its streams
finish and later requests naming it get 404.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterator

import trio

from .sessions import HttpSession

__all__ = ["EVICTION_SCAN", "SessionTable"]

logger = logging.getLogger("trimcp.server.transports.http.app")

#: Busy sessions an ``initialize`` at the cap looks past before it is refused.
EVICTION_SCAN = 64


class SessionTable:
    """Live handshake-era sessions by id, least recently active first."""

    def __init__(self, max_sessions: int | None = None) -> None:
        if max_sessions is not None and max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.max_sessions = max_sessions
        self._by_id: OrderedDict[str, HttpSession] = OrderedDict()
        #: Sessions closed to make room for new ones (for logs and benchmarks).
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[HttpSession]:
        return iter(list(self._by_id.values()))

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._by_id

    def __getitem__(self, session_id: str) -> HttpSession:
        return self._by_id[session_id]

    def values(self) -> list[HttpSession]:
        """The sessions, least recently active first (a copy: safe to close them meanwhile)."""
        return list(self._by_id.values())

    def get(self, session_id: str) -> HttpSession | None:
        return self._by_id.get(session_id)

    def add(self, session: HttpSession) -> None:
        self._by_id[session.id] = session

    def discard(self, session: HttpSession) -> None:
        """Forget ``session`` (if it is still the one under its id)."""
        if self._by_id.get(session.id) is session:
            del self._by_id[session.id]

    def active(self, session: HttpSession) -> None:
        """A request named ``session``: it is the most recently active now."""
        session.touch()
        if session.id in self._by_id:
            self._by_id.move_to_end(session.id)

    def make_room(self) -> tuple[bool, HttpSession | None]:
        """Whether a new session may open, and the session taken out for it (to close).

        Synchronous, so that the caller adds the new session before any other
        task can look: concurrent ``initialize`` requests never overshoot the cap.
        """
        sessions = self._by_id
        if self.max_sessions is None or len(sessions) < self.max_sessions:
            return True, None
        for _ in range(min(len(sessions), EVICTION_SCAN)):
            sid, session = next(iter(sessions.items()))
            if session.exchanges and not session.closed:
                session.touch()  # a request in flight is activity
                sessions.move_to_end(sid)
                continue
            del sessions[sid]
            self.evicted += 1
            return True, session
        return False, None

    async def reap(self, timeout: float) -> None:
        """Close the sessions idle for longer than ``timeout`` seconds."""
        sessions = self._by_id
        now = trio.current_time()
        for _ in range(len(sessions)):
            if not sessions:
                return
            sid, session = next(iter(sessions.items()))
            if session.busy:
                session.touch()
                sessions.move_to_end(sid)
                continue
            if now - session.last_active <= timeout:
                return
            logger.info("closing idle %s", session.describe())
            del sessions[sid]
            await session.aclose()
