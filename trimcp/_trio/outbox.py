"""What the driver takes from its Connection to write: each message with its ``SendMeta``.

Theory of operation
-------------------
The sans-IO ``Connection`` queues messages; the transport needs to know, for each, what
the Connection alone does not say (the seam's ``SendMeta``, ``stream.py``): the revision it
is sent under (a stateless-era request names its own), the request it relates to (an
answer's own id, or the peer request a handler was serving when it sent a notification),
a ``tools/call``'s ``x-mcp-header`` parameters, and the id a re-issued request replaces.
``Outbox.take`` is called right after every call that queued on the Connection, so the
labels it is given mark exactly the messages that call produced.  The driver's ``flush``
writes them in order under its write lock.
"""

from __future__ import annotations

from collections import deque

from .._sansio import jsonrpc as rpc
from .._sansio.connection import stateless as sl
from .._sansio.connection.core import Connection
from .._sansio.http.headers import HeaderParam
from .stream import SendMeta

__all__ = ["Outbox"]


class Outbox:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._items: deque[tuple[rpc.Message, SendMeta]] = deque()

    def __bool__(self) -> bool:
        return bool(self._items)

    def popleft(self) -> tuple[rpc.Message, SendMeta]:
        return self._items.popleft()

    def take(
        self,
        related: rpc.RequestId | None = None,
        header_params: tuple[HeaderParam, ...] = (),
        *,
        reissue: tuple[rpc.RequestId, rpc.RequestId] | None = None,
    ) -> None:
        """Move the Connection's queued messages here, labelled: ``related`` for all of them,
        ``header_params`` for the request among them; ``reissue=(new_id, old_id)`` marks the
        request ``new_id`` as the re-issue of ``old_id``."""
        for message in self.connection.outgoing():
            meta = self._meta_for(message, related)
            if isinstance(message, rpc.Request):
                if reissue is not None and message.id == reissue[0]:
                    meta = meta._replace(reissue_of=reissue[1], header_params=header_params)
                elif header_params and reissue is None:
                    meta = meta._replace(header_params=header_params)
            self._items.append((message, meta))

    def _meta_for(self, message: rpc.Message, related: rpc.RequestId | None) -> SendMeta:
        version = self.connection.protocol_version
        if isinstance(message, rpc.Request):
            # A stateless-era request names its own revision (the discover probe too).
            version = sl.envelope_version(message.params) or version
        elif isinstance(message, (rpc.Response, rpc.ErrorResponse)):
            related = message.id
        return SendMeta(version, related)
