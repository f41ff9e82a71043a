"""Server-side SSE streams of a Streamable HTTP session: event ids and replay.

Theory of operation
-------------------
In the handshake era (2025-03-26 .. 2025-11-25) every SSE stream a server
opens - one per POSTed request, plus the standalone GET stream - may be
resumed after a broken connection: the client GETs the endpoint with
``Last-Event-ID`` and the server replays what that stream sent after the
event, and nothing from any other stream (spec 2025-11-25, transports,
"Resumability and Redelivery").  Event ids must be unique across the
session's streams and should say which stream they belong to.

An event id here is ``<stream key>.<sequence number>``: the stream key is
unique within the session (``"0"`` is the standalone stream, POST streams
count up from ``"1"``) and the sequence number counts that stream's events
from 1.  ``0`` is the priming event's number (an id and empty data, sent
first so that a client can resume before anything else arrived: "everything
after nothing").

``ReplayBuffer`` keeps one stream's recent events, bounded by count and by
bytes (the newest event is always kept, whatever its size).  ``since(n)``
hands back what is still held after event ``n``; ``has_gap(n)`` tells the
caller that some of those were already dropped, so a resumed stream would
miss messages.  A buffer that nobody will resume (stateless era, legacy
transport) drops events as soon as they are written (``discard_through``)
and then serves as a plain bounded queue.

A stream whose numbers are given elsewhere - a replica writing its streams to
the shared store, which keeps them in a ``ReplayBuffer`` too - is appended to
with ``append_at``: a number already held is a repeat and is ignored, and
numbers skipped over count as lost (a resume from before them has a gap).
"""

from __future__ import annotations

from collections import deque
from typing import Final

STANDALONE_KEY: Final = "0"
PRIMING_SEQ: Final = 0

DEFAULT_REPLAY_EVENTS: Final = 256
DEFAULT_REPLAY_BYTES: Final = 8 * 1024 * 1024


def format_event_id(stream_key: str, seq: int) -> str:
    return f"{stream_key}.{seq}"


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``(stream key, sequence number)`` of an id this module made, else ``None``."""
    key, sep, seq = event_id.strip().rpartition(".")
    if not sep or not key or not key.isalnum() or not key.isascii():
        return None
    if not seq.isdigit() or not seq.isascii() or len(seq) > 18:
        return None
    return key, int(seq)


class ReplayBuffer:
    """The recent events of one stream, numbered from 1."""

    def __init__(self, max_events: int = DEFAULT_REPLAY_EVENTS, max_bytes: int = DEFAULT_REPLAY_BYTES) -> None:
        if max_events < 1 or max_bytes < 1:
            raise ValueError("a replay buffer must hold at least one event")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._events: deque[tuple[int, bytes]] = deque()
        self._bytes = 0
        self._last_seq = PRIMING_SEQ
        #: Highest sequence number dropped before it was known to be written.
        self._lost_through = PRIMING_SEQ
        self._discarded_through = PRIMING_SEQ

    def __len__(self) -> int:
        return len(self._events)

    @property
    def last_seq(self) -> int:
        """The number of the newest event (``0`` before any)."""
        return self._last_seq

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def append(self, payload: bytes) -> int:
        """Keep ``payload`` as the next event; return its number."""
        self._last_seq += 1
        self._events.append((self._last_seq, payload))
        self._bytes += len(payload)
        while len(self._events) > 1 and (len(self._events) > self.max_events or self._bytes > self.max_bytes):
            seq, dropped = self._events.popleft()
            self._bytes -= len(dropped)
            if seq > self._discarded_through:
                self._lost_through = max(self._lost_through, seq)
        return self._last_seq

    def append_at(self, seq: int, payload: bytes) -> bool:
        """Keep ``payload`` as event ``seq``; False (nothing kept) when ``seq`` is not new."""
        if seq <= self._last_seq:
            return False
        if seq > self._last_seq + 1:
            self._lost_through = max(self._lost_through, seq - 1)
        self._last_seq = seq - 1
        self.append(payload)
        return True

    @property
    def first_seq(self) -> int:
        """The number of the oldest event held (``last_seq + 1`` when none is)."""
        return self._events[0][0] if self._events else self._last_seq + 1

    def since(self, seq: int) -> list[tuple[int, bytes]]:
        """The held events numbered above ``seq``, oldest first."""
        return [(n, p) for n, p in self._events if n > seq]

    def has_gap(self, seq: int) -> bool:
        """Whether an event numbered above ``seq`` was dropped (resuming there loses it)."""
        return seq < self._lost_through

    def discard_through(self, seq: int) -> None:
        """Forget events up to ``seq`` (they were delivered)."""
        self._discarded_through = max(self._discarded_through, seq)
        while self._events and self._events[0][0] <= seq:
            _, dropped = self._events.popleft()
            self._bytes -= len(dropped)


__all__ = [
    "DEFAULT_REPLAY_BYTES",
    "DEFAULT_REPLAY_EVENTS",
    "PRIMING_SEQ",
    "STANDALONE_KEY",
    "ReplayBuffer",
    "format_event_id",
    "parse_event_id",
]
