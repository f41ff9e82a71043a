"""What the driver takes from its Connection to write: each message with its ``SendMeta``.

Theory of operation
-------------------
The sans-IO ``Connection`` queues each message with the ``SendMeta`` it knows
(``_sansio/connection/send_meta.py``: the revision, the request it answers or cancels,
whether it opens a session, the id a re-issued request replaces).  The driver adds what
only it knows: the peer request a handler was serving when it sent a notification
(``related``) and a ``tools/call``'s ``x-mcp-header`` parameters.  ``Outbox.take`` is
called right after every call that queued on the Connection, so the labels it is given
mark exactly the messages that call produced.  The driver's ``flush`` writes them in
order under its write lock.
"""

from __future__ import annotations

from collections import deque

from .._sansio import jsonrpc as rpc
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

    def take(self, related: rpc.RequestId | None = None, header_params: tuple[HeaderParam, ...] = ()) -> None:
        """Move the Connection's queued messages here, labelled: ``related`` for those that
        answer nothing themselves, ``header_params`` for the request among them."""
        queued = self.connection.outgoing_with_meta()
        if related is None and not header_params:
            self._items.extend(queued)  # the common case: the Connection's labels are all
            return
        for message, meta in queued:
            if related is not None and meta.related_request is None:
                meta = meta._replace(related_request=related)
            if header_params and isinstance(message, rpc.Request):
                meta = meta._replace(header_params=header_params)
            self._items.append((message, meta))
