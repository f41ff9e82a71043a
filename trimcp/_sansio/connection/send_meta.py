"""What travels with each outgoing message besides its content: ``SendMeta``.

Theory of operation
-------------------
A transport must not read a payload to learn what it needs (issue 28: the
``MessageStream`` seam, ``_trio/stream.py``).  So the Connection, which queued
each message and knows why, labels it as it queues it: the revision it is sent
under (Streamable HTTP's ``MCP-Protocol-Version``, spec 2025-11-25
basic/transports "Protocol Version Header"; 2026-07-28 every request's own),
the request an answer answers, the request a ``notifications/cancelled``
cancels (2026-07-28 Streamable HTTP cancels by closing that request's stream
instead of posting it), whether the message opens a session (``initialize``:
it waits for no session to be set up, and no revision is agreed yet), and the
id a re-issued request replaces.  The driver adds what only it knows (the peer
request a handler was serving, a called tool's ``x-mcp-header`` parameters).

``meta_for`` derives the same labels from a message for callers that hold hand-
written messages (the conformance harness, the transport contract tests): the
one place outside the Connection that reads a message for them.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from .. import jsonrpc as rpc
from ..http.headers import HeaderParam
from .stateless import envelope_version

__all__ = ["NO_META", "SendMeta", "meta_for"]


class SendMeta(NamedTuple):
    """What a transport may need to know about a message besides its content.

    (A ``NamedTuple`` rather than a frozen attrs class: one is made for every message
    sent, and a tuple is built in a fifth of the time.)"""

    #: The protocol revision the message is sent under (``None`` before one is known).
    protocol_version: str | None = None
    #: The peer's request this message answers or was sent while handling.
    related_request: rpc.RequestId | None = None
    #: A request sent again under a new id: the id it had (see ``RequestFailed``).
    reissue_of: rpc.RequestId | None = None
    #: ``tools/call``: the called tool's ``x-mcp-header`` parameters (from its ``inputSchema``).
    header_params: tuple[HeaderParam, ...] = ()
    #: ``notifications/cancelled``: the id of the request it cancels.
    cancels: rpc.RequestId | None = None
    #: ``initialize``: the message starts a session (it is sent under no agreed revision).
    opens_session: bool = False


#: Metadata for a message that relates to nothing and precedes negotiation.
NO_META: Final = SendMeta()


def meta_for(message: rpc.Message, protocol_version: str | None = None) -> SendMeta:
    """The ``SendMeta`` of a hand-written ``message`` sent under ``protocol_version``
    (a request naming its own revision in its ``_meta`` envelope is sent under that one).

    For callers without a Connection (the harness sends messages as written); a session's
    messages are labelled by the Connection that queued them."""
    if isinstance(message, rpc.Request):
        version = envelope_version(message.params) or protocol_version
        return SendMeta(version, opens_session=message.method == "initialize")
    if isinstance(message, rpc.Notification):
        cancels = None
        if message.method == "notifications/cancelled" and isinstance(message.params, dict):
            target = message.params.get("requestId")
            cancels = target if rpc.is_valid_id(target) else None
        return SendMeta(protocol_version, cancels=cancels)
    return SendMeta(protocol_version, message.id)
