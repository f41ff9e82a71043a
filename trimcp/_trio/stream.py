"""The one seam every transport sits behind.

Theory of operation
-------------------
A ``MessageStream`` moves whole JSON-RPC messages between this process and one
peer, whatever the transport (stdio, Streamable HTTP, WebSocket, in-memory).
Messages cross the seam *with their metadata*, so that no layer has to read or
rewrite another layer's payload:

* ``send(message, meta)`` takes a parsed ``jsonrpc.Message`` and its
  ``SendMeta`` (``_sansio/connection/send_meta.py``, made by the Connection that
  queued the message): the protocol revision it is sent under (for the
  ``MCP-Protocol-Version`` header), the request it belongs to (a server's
  progress, log or nested request sent while it handles a client request
  travels on that request's HTTP stream), the request a cancellation cancels,
  whether it opens a session, the id a re-issued request had.  A transport
  acts on the meta and never reads the payload; it serializes the message with
  ``jsonrpc.serialize`` and frames it.  (The sans-IO HTTP planner does read the
  method, name and ``_meta`` revision of what it POSTs: the 2026-07-28 headers
  must mirror the body.)  A caller holding hand-written messages makes their
  meta with ``meta_for``.
* ``receive()`` returns an ``Inbound`` item: ``Received`` is one complete JSON
  text (a stdio line, an HTTP body, an SSE ``data`` field, a WebSocket frame),
  parsed exactly once, by the transport, with the one strict parser
  (``parse_received`` = ``jsonrpc.parse_payload``); the session hands the
  ``ParsedPayload`` to its Connection as it is.  ``RequestFailed`` is the
  transport's own word that the answer to one request is lost (its HTTP
  exchange failed for good, say): the session fails that waiter at once with
  the ``TransportError`` it carries instead of letting it wait for its deadline.
  ``StreamLost`` says a stream the peer could talk on without being asked (the
  standalone HTTP GET stream) was given up; nothing waits on it, but the session
  counts it as a terminal failure (``_sansio/connection/health.py``).
* When the peer is gone ``receive`` (and ``send``) raise ``TransportClosed``,
  carrying the exit status and stderr tail for a process.  A framing violation
  (e.g. an oversize stdio line) raises ``RemoteProtocolError`` and closes the
  stream, since byte framing cannot be resynchronised reliably.
* ``aclose`` is idempotent and safe to call from any task; it wakes any task
  blocked in ``send``/``receive`` on this stream with ``TransportClosed``.

Only one task should call ``receive`` at a time (the session's single reader
task); ``send`` may be called concurrently, writes are serialised.

A transport whose answer to a request comes back on that request's own
exchange (Streamable HTTP: the response to its POST) may also offer
``begin_request(request, meta)``, which the session calls in the place of
``send`` for a request whose caller waits for the answer: it takes the request
in the order of sends and returns a ``RequestExchange`` that the caller
``run``s in its own task, outside the write lock (no task is spawned for it,
and the answer needs no hop through the reader task).  ``run`` returns the
answer when the caller is to hand it to the session itself (the transport
checked that the session's reader had taken everything before it), else
``None`` (it came through ``receive``); a caller cancelled while it runs ends
that exchange, and must then tell the peer as usual.  ``abandon`` releases
one that will never run.  ``request_starter(stream)`` looks it up on the
stream's class, not the instance: a wrapper that forwards unknown attributes to
the stream it wraps (a recorder) must not be bypassed.

A transport may declare what it does with a message's metadata as a class
attribute: ``mirrors_tool_headers = True`` (Streamable HTTP) says it mirrors
``SendMeta.header_params`` into ``Mcp-Param-*`` headers, so the client must
leave tools with invalid ``x-mcp-header`` annotations out of its tool list
(spec 2026-07-28 basic/transports/streamable-http, "Custom Headers from Tool
Parameters"); ``mirrors_tool_headers(stream)`` reads it, through transparent
wrappers too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, TypeAlias, runtime_checkable

from .._errors import AuthError, TransportError
from .._sansio import jsonrpc
from .._sansio.connection.send_meta import NO_META, SendMeta, meta_for
from .._sansio.shared_methods import frozen

__all__ = [
    "NO_META",
    "Inbound",
    "MessageStream",
    "Received",
    "RequestExchange",
    "RequestFailed",
    "SendMeta",
    "StreamLost",
    "meta_for",
    "mirrors_tool_headers",
    "parse_received",
    "request_starter",
]


class Received(NamedTuple):
    """One JSON text from the peer, parsed once (by the transport); a ``NamedTuple``,
    like ``SendMeta``, because one is made for every message received."""

    data: bytes
    payload: jsonrpc.ParsedPayload
    #: The request on whose stream this arrived, when the transport knows (HTTP).
    related_request: jsonrpc.RequestId | None = None


@frozen
class RequestFailed:
    """The transport knows the answer to ``request_id`` will never arrive."""

    request_id: jsonrpc.RequestId
    #: What the waiter gets (``AuthError`` when authorization failed).
    error: TransportError | AuthError
    #: The session may send the request again under a new id instead of failing it.
    may_reissue: bool = False


@frozen
class StreamLost:
    """The transport gave up a stream the peer sends on unasked (after its reconnects)."""

    error: TransportError


Inbound: TypeAlias = Received | RequestFailed | StreamLost


def parse_received(
    data: bytes,
    *,
    max_size: int = jsonrpc.DEFAULT_MAX_MESSAGE_SIZE,
    related_request: jsonrpc.RequestId | None = None,
) -> Received:
    """Parse one JSON text with the strict parser (raises ``RemoteProtocolError``
    only when it is larger than ``max_size``)."""
    return Received(data, jsonrpc.parse_payload(data, max_size=max_size), related_request)


def mirrors_tool_headers(stream: object) -> bool:
    """Whether ``stream`` mirrors ``SendMeta.header_params`` into request headers."""
    return getattr(stream, "mirrors_tool_headers", False) is True


class RequestExchange(Protocol):
    """One request's exchange, run by the caller that waits for its answer (see the module docstring)."""

    async def run(self) -> Received | None:
        """Send the request and read its response; the answer, when the caller is to hand
        it to the session (else ``None``: it comes through ``receive``)."""
        ...

    def abandon(self) -> None:
        """This exchange will never run (what was sent after it goes on without it)."""
        ...


#: A transport's optional ``begin_request``, unbound: ``(stream, request, meta)``.
RequestStarter: TypeAlias = Callable[[Any, jsonrpc.Request, SendMeta], RequestExchange]


def request_starter(stream: object) -> RequestStarter | None:
    """``stream``'s ``begin_request``, looked up on its class (see the module docstring)."""
    starter: RequestStarter | None = getattr(type(stream), "begin_request", None)
    return starter


@runtime_checkable
class MessageStream(Protocol):
    """One transport to one peer, message by message: what every transport gives the session."""

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        """Serialize, frame and write one message (or raise ``TransportClosed``)."""
        ...

    async def receive(self) -> Inbound:
        """Return the next item from the peer: one parsed JSON text, or a lost answer.

        Raises ``TransportClosed`` when the peer is gone and ``RemoteProtocolError``
        for a framing violation (after which the stream is closed).
        """
        ...

    async def aclose(self) -> None:
        """Close the stream; idempotent."""
        ...
