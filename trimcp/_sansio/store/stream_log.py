"""One SSE stream's event log as the shared store keeps it, with its replay cursor.

Theory of operation
-------------------
Spec 2025-11-25, basic/transports, "Resumability and Redelivery": a client
whose SSE stream broke GETs the endpoint with ``Last-Event-ID`` and the server
replays what *that* stream sent after the event.  When the server runs as
replicas, the GET may reach a replica other than the one that wrote the
stream - or the writer may be dead - so every resumable stream's events go
to the store, numbered as they were sent (``replay.format_event_id``: the
stream key, then the event's number on that stream).

A ``StreamLog`` is a ``ReplayBuffer`` (the same caps on events and bytes,
the same gap rule) plus what a resuming replica must know: the replica that
writes the stream (``owner``; ``""`` for a session's standalone stream,
which every replica may write), the ids of the requests whose answers end it
(``final_ids``), and whether it has ended (``finished``).  A POST stream's
numbers come from its owner (``append_at``: a repeat is ignored); the
standalone stream's from the store itself, in the order appends arrive.

A stream whose owner died before answering would never end.  The replica the
client resumed on takes it over once the owner's lease has lapsed:
``orphan_answers`` are the JSON-RPC errors it appends for the requests still
unanswered - numbered after both what the log holds and what the client says
it already has (``takeover_seq``; an event the owner wrote to the client but
not yet to the store is never numbered twice) - and the stream ends.  The
client learns that its request was lost and may send it again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

import attrs

from .. import jsonrpc as rpc
from ..http.server.replay import ReplayBuffer

__all__ = [
    "ORPHANED_REQUEST_CODE",
    "LogSlice",
    "StreamLog",
    "StreamMeta",
    "orphan_answers",
    "takeover_seq",
]

ORPHANED_REQUEST_CODE: Final = rpc.INTERNAL_ERROR
ORPHANED_REQUEST_MESSAGE: Final = "the server process handling this request stopped before answering it; send it again"


@attrs.frozen
class StreamMeta:
    """What a resuming replica must know of a stream besides its events."""

    owner: str
    final_ids: tuple[rpc.RequestId, ...] = ()
    finished: bool = False

    def to_json(self) -> str:
        return json.dumps({"owner": self.owner, "final": list(self.final_ids), "done": self.finished})

    @classmethod
    def from_json(cls, text: str | bytes) -> StreamMeta:
        data = json.loads(text)
        return cls(str(data["owner"]), tuple(data["final"]), bool(data["done"]))


@attrs.frozen
class LogSlice:
    """What a stream's log holds after a cursor."""

    meta: StreamMeta
    #: ``(seq, payload)``, oldest first.
    events: tuple[tuple[int, bytes], ...]
    last_seq: int
    #: Some event after the cursor was dropped (by the caps) before it was read.
    gap: bool


class StreamLog:
    """One stream's events and meta (the memory and SQLite stores keep these)."""

    def __init__(self, meta: StreamMeta, max_events: int, max_bytes: int) -> None:
        self.meta = meta
        self.buffer = ReplayBuffer(max_events, max_bytes)

    def append(self, events: Iterable[tuple[int | None, bytes]]) -> int:
        """Add events (``None``: the next number); nothing once finished. The last number."""
        if not self.meta.finished:
            for seq, payload in events:
                if seq is None:
                    self.buffer.append(payload)
                else:
                    self.buffer.append_at(seq, payload)
        return self.buffer.last_seq

    def finish(self) -> None:
        self.meta = attrs.evolve(self.meta, finished=True)

    def after(self, cursor: int) -> LogSlice:
        return LogSlice(self.meta, tuple(self.buffer.since(cursor)), self.buffer.last_seq, self.buffer.has_gap(cursor))


def takeover_seq(last_seq: int, cursor: int) -> int:
    """The number of the first event a replica taking over a dead owner's stream writes."""
    return max(last_seq, cursor) + 1


def _answered(payloads: Iterable[bytes]) -> set[Any]:
    ids: set[Any] = set()
    for payload in payloads:
        try:
            message = json.loads(payload)
        except ValueError:
            continue
        if isinstance(message, dict) and ("result" in message or "error" in message):
            ids.add(message.get("id"))
        elif isinstance(message, list):  # a batch's answers (2025-03-26)
            ids.update(m.get("id") for m in message if isinstance(m, dict))
    return ids


def orphan_answers(final_ids: Sequence[rpc.RequestId], held: Iterable[bytes]) -> list[bytes]:
    """The error answers to the requests of ``final_ids`` that no held event answers."""
    answered = _answered(held)
    error = rpc.ErrorObject(ORPHANED_REQUEST_CODE, ORPHANED_REQUEST_MESSAGE)
    return [rpc.serialize(rpc.ErrorResponse(rid, error)) for rid in final_ids if rid not in answered]
