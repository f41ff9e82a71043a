"""Counting terminal transport failures in a row: when is a session dead?

Theory of operation
-------------------
A transport that lost its peer does not always say so by ending: an HTTP
client transport turns each request to a server that went away into a failed
request (spec 2025-11-25 basic/transports, Streamable HTTP: every message is
its own POST), and the session would stay "open" forever.  The session
therefore counts *terminal* failures in a row -- a request whose answer the
transport reports lost for good, a heartbeat the peer left unanswered, the
standalone event stream given up -- and anything received from the peer
resets the count (the peer is evidently there).  At ``limit`` failures in a row
the session is taken for dead.

``FailureCounter`` is only the bookkeeping: no clock, no I/O.  ``failed``
returns the verdict -- the ``TransportClosed`` to fail every pending request
with, naming the count and the last failure, which is its ``__cause__`` -- and
the driver acts on it (closes the transport).
"""

from __future__ import annotations

from ..._errors import TransportClosed

__all__ = ["DEFAULT_MAX_CONSECUTIVE_FAILURES", "FailureCounter"]

#: Three in a row: one lost request is bad luck, three with nothing received between is a dead peer.
DEFAULT_MAX_CONSECUTIVE_FAILURES = 3


class FailureCounter:
    """Terminal failures since the peer was last heard from (``limit=None``: never dead)."""

    __slots__ = ("count", "dead", "last", "limit")

    def __init__(self, limit: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"max_consecutive_failures must be at least 1 or None, not {limit!r}")
        self.limit = limit
        self.count = 0
        #: The latest failure counted (kept after a reset, for the logs).
        self.last: BaseException | None = None
        self.dead = False

    def alive(self) -> None:
        """Something arrived from the peer: start counting again."""
        self.count = 0

    def failed(self, error: BaseException) -> TransportClosed | None:
        """Count one terminal failure; the session's death sentence once the limit is reached."""
        if self.dead:
            return None
        self.count += 1
        self.last = error
        if self.limit is None or self.count < self.limit:
            return None
        self.dead = True
        verdict = TransportClosed(f"{self.count} consecutive transport failures; last: {error}")
        verdict.__cause__ = error
        return verdict
