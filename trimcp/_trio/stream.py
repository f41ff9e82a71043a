"""The one seam every transport sits behind.

Theory of operation
-------------------
A ``MessageStream`` moves whole JSON-RPC messages between this process and one
peer, whatever the transport (stdio, Streamable HTTP, WebSocket, in-memory).

* ``send`` takes a parsed ``jsonrpc.Message`` rather than bytes because some
  transports need to look at it (Streamable HTTP puts the method and id into
  headers and picks the request shape from the message kind); the transport
  serializes it with ``jsonrpc.serialize`` and frames it.
* ``receive`` hands back one complete JSON text as bytes (one stdio line without
  its newline, one HTTP body, one SSE ``data`` field).  Parsing is left to the
  sans-IO ``Connection`` so that it can answer a malformed payload with a
  precise JSON-RPC error instead of the transport guessing.
* When the peer is gone ``receive`` (and ``send``) raise ``TransportClosed``,
  carrying the exit status and stderr tail for a process.  A framing violation
  (e.g. an oversize stdio line) raises ``RemoteProtocolError`` and closes the
  stream, since byte framing cannot be resynchronised reliably.
* ``aclose`` is idempotent and safe to call from any task; it wakes any task
  blocked in ``send``/``receive`` on this stream with ``TransportClosed``.

Only one task should call ``receive`` at a time (the session's single reader
task); ``send`` may be called concurrently, writes are serialised.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .._sansio import jsonrpc


@runtime_checkable
class MessageStream(Protocol):
    async def send(self, message: jsonrpc.Message) -> None:
        """Serialize, frame and write one message (or raise ``TransportClosed``)."""
        ...

    async def receive(self) -> bytes:
        """Return one complete JSON text from the peer.

        Raises ``TransportClosed`` when the peer is gone and ``RemoteProtocolError``
        for a framing violation (after which the stream is closed).
        """
        ...

    async def aclose(self) -> None:
        """Close the stream; idempotent."""
        ...
