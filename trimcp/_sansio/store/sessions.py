"""The session cap and the idle timeout, decided the same way by every store.

Theory of operation
-------------------
Spec 2025-11-25, basic/transports "Session Management": a server MAY end a
session at any time, after which requests naming it get 404 and the client
starts a new one with ``initialize``.  Two limits use that freedom:

* ``max_sessions``: an ``initialize`` at the cap takes the place of the
  least recently active session that has no request in flight.  Which
  sessions are busy is known only to the processes running their requests,
  so the store asks (``busy``); a busy session it passes over counts as
  active now.  After ``EVICTION_SCAN`` busy ones it gives up, and the
  ``initialize`` is refused (503).  (A replica refreshes the activity of the
  sessions it is busy with, so another replica's busy sessions are not at
  the front of the line.)
* the idle timeout: a session nobody used for longer is ended, unless busy.

``choose_eviction`` and ``idle`` are those rules over the candidates a store
lists, least recently active first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

import attrs

__all__ = ["EVICTION_SCAN", "Admission", "Eviction", "choose_eviction", "idle"]

#: Busy sessions an ``initialize`` at the cap looks past before it is refused.
EVICTION_SCAN: Final = 64


@attrs.frozen
class Admission:
    """Whether a new session was admitted, and the session ended to make room for it."""

    admitted: bool
    evicted: str | None = None


@attrs.frozen
class Eviction:
    """The session to end (``None``: none may go), and the busy ones passed over."""

    victim: str | None
    passed_over: tuple[str, ...]


def choose_eviction(oldest_first: Iterable[str], busy: Callable[[str], bool]) -> Eviction:
    """The first of at most ``EVICTION_SCAN`` candidates that is not busy."""
    passed: list[str] = []
    for n, session_id in enumerate(oldest_first):
        if n >= EVICTION_SCAN:
            break
        if busy(session_id):
            passed.append(session_id)
            continue
        return Eviction(session_id, tuple(passed))
    return Eviction(None, tuple(passed))


def idle(last_active: float, now: float, timeout: float) -> bool:
    """Whether a session last active at ``last_active`` has been idle too long at ``now``."""
    return now - last_active > timeout
