"""What a handler of a peer request is handed: ``RequestContext``.

Theory of operation
-------------------
The driver (``driver.py``) serves each request the peer sends with a handler
from its table; the handler gets the request's id, method and params, the
stateless-era envelope (spec 2026-07-28 basic/versioning: the request names its
own revision and capabilities), and a way to report progress on it (spec
basic/utilities/progress: only when the peer asked with a ``progressToken``).
Progress is sent labelled with the request it belongs to, so an HTTP server
transport routes it on that request's stream.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from .._sansio import jsonrpc as rpc
from .._sansio.connection.core import Connection
from .._sansio.connection.stateless import Envelope
from .outbox import Outbox


class _Driver(Protocol):
    """What of ``SessionDriver`` a context uses (a protocol: the driver imports this module)."""

    connection: Connection
    outbox: Outbox

    async def flush(self) -> None: ...


__all__ = ["RequestContext"]


@attrs.define
class RequestContext:
    """What a handler of a peer request gets besides its params."""

    driver: _Driver
    request_id: rpc.RequestId
    method: str
    params: dict[str, Any]
    #: Stateless era: the request's own protocol version, client capabilities, ...
    envelope: Envelope | None = None

    @property
    def progress_token(self) -> str | int | None:
        meta = self.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        return token if rpc.is_valid_id(token) else None

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send progress if the peer asked for it (no-op otherwise)."""
        token = self.progress_token
        if token is not None:
            self.driver.connection.send_progress(token, progress, total, message)
            self.driver.outbox.take(self.request_id)
            await self.driver.flush()
