"""What replicas tell one another over the store's publish/subscribe channel.

Theory of operation
-------------------
Each replica holds live things no store can: HTTP connections, running tool
calls, the server's own requests waiting for the client's answer.  When
something happens on one replica that another one's live things must act
on, it publishes one of these messages and every replica (itself included)
receives it:

* ``SessionEnded`` / ``SessionChanged``: a session was ended (DELETE, the
  cap, the idle timeout) or its record changed (``logging/setLevel``,
  ``resources/subscribe``, ``notifications/initialized``): replicas close or
  refresh their copy of it;
* ``ClientMessage``: a client POSTed an answer to a server request, or
  ``notifications/cancelled``, to a replica that is not waiting for it - the
  replica that sent the request (or runs the cancelled one) takes it;
* ``StreamAppended``: events were added to a stream's log, for the replicas
  replaying it to a client (spec 2025-11-25, basic/transports,
  "Resumability and Redelivery");
* ``Notify``: a change notification (``list_changed``, ``resources/updated``)
  for the ``subscriptions/listen`` streams each replica holds (2026-07-28,
  basic/patterns/subscriptions);
* ``TaskChanged``: ``tasks/update`` or ``tasks/cancel`` reached a replica
  other than the task's runner (ext-tasks).

A message is delivered at most once and may be lost when a replica's
connection to the store drops, so nothing depends on the bus alone: it only
makes a replica look at the store sooner (a replica replaying a stream also
polls, a task's runner re-reads its record).  ``encode``/``decode`` are the
wire form, JSON with the kind and the publishing replica; a message this
version does not know decodes to ``None``.
"""

from __future__ import annotations

import json
from typing import Any, TypeAlias

import attrs

__all__ = [
    "BusMessage",
    "ClientMessage",
    "Notify",
    "SessionChanged",
    "SessionEnded",
    "StreamAppended",
    "TaskChanged",
    "decode",
    "encode",
]


@attrs.frozen
class SessionEnded:
    session_id: str


@attrs.frozen
class SessionChanged:
    session_id: str


@attrs.frozen
class ClientMessage:
    session_id: str
    #: One JSON-RPC message the client sent, as it sent it.
    data: str


@attrs.frozen
class StreamAppended:
    session_id: str
    key: str
    last_seq: int


@attrs.frozen
class Notify:
    method: str
    params: dict[str, Any] | None


@attrs.frozen
class TaskChanged:
    task_id: str


BusMessage: TypeAlias = SessionEnded | SessionChanged | ClientMessage | StreamAppended | Notify | TaskChanged

_KINDS: dict[str, type[BusMessage]] = {
    "ended": SessionEnded,
    "changed": SessionChanged,
    "client": ClientMessage,
    "appended": StreamAppended,
    "notify": Notify,
    "task": TaskChanged,
}
_KIND_OF = {cls: kind for kind, cls in _KINDS.items()}


def encode(message: BusMessage, origin: str) -> bytes:
    body = {"kind": _KIND_OF[type(message)], "from": origin, **attrs.asdict(message)}
    return json.dumps(body, separators=(",", ":")).encode()


def decode(data: bytes | str) -> tuple[BusMessage, str] | None:
    """``(message, publishing replica)``, or ``None`` for anything else."""
    try:
        body = json.loads(data)
        cls = _KINDS[body.pop("kind")]
        origin = str(body.pop("from"))
        return cls(**body), origin
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
