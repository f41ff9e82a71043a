"""One client connection, as the server sees it.

Theory of operation
-------------------
``serve_stream`` makes one ``ServerSession`` per transport: it wraps the
``SessionDriver`` (which owns the sans-IO ``Connection`` in the server role)
and holds the per-client state the handshake era asks for, namely the set of
resource URIs the client subscribed to (spec: Resources / Subscriptions).
The ``Server`` keeps the live sessions so that it can broadcast
``list_changed`` and ``resources/updated`` notifications; a notification is
only sent once the session is operating (after ``notifications/initialized``)
because the Connection forbids it earlier, and a session that dies meanwhile
is skipped rather than failing the broadcast.

A connection that carries 2026-07-28 stateless requests has no session state:
each request brings its own revision, capabilities and log level (read them
from the handler's ``Context``), its notifications go to open
``subscriptions/listen`` requests (``subscriptions.py``), and the
``protocol_version``/``client_*`` properties here only describe a handshake.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .._errors import TrimcpError
from .._sansio.connection.lifecycle import OPERATING
from .._sansio.connection.stateless import Envelope
from .._sansio.jsonrpc import RequestId
from .._sansio.revisions import LATEST_HANDSHAKE
from .._trio.driver import NotificationHandler, RequestHandler, SessionDriver
from .._trio.stream import MessageStream
from .definition import Server

logger = logging.getLogger("trimcp.server")


class ServerSession:
    """Per-client state of a running server."""

    def __init__(
        self,
        server: Server,
        stream: MessageStream,
        *,
        request_handlers: Callable[[ServerSession], Mapping[str, RequestHandler]],
        notification_handler: Callable[[ServerSession], NotificationHandler],
        max_concurrent_requests: int,
        max_pending_callbacks: int,
    ) -> None:
        """The session builds its driver whole: the handlers, bound to this session, are
        given at construction (``request_handlers(session)`` and ``notification_handler(session)``
        make them), never set on the driver afterwards."""
        self.server = server
        self.driver = SessionDriver(
            server.make_connection(),
            stream,
            request_handlers=request_handlers(self),
            notification_handler=notification_handler(self),
            request_timeout=server.request_timeout,
            max_concurrent_requests=max_concurrent_requests,
            max_pending_callbacks=max_pending_callbacks,
        )
        self.connection = self.driver.connection
        #: Resource URIs this client subscribed to.
        self.subscriptions: set[str] = set()
        #: Awaited after ``subscriptions`` changed (a transport that keeps the session in a
        #: store writes it there before the client is answered).
        self.on_change: Callable[[], Awaitable[None]] | None = None

    def __repr__(self) -> str:
        info = self.connection.peer_info or {}
        return f"<ServerSession client={info.get('name')!r} revision={self.connection.protocol_version}>"

    @property
    def protocol_version(self) -> str:
        """The negotiated handshake revision (the newest handshake one before, or without, a handshake)."""
        return self.connection.protocol_version or LATEST_HANDSHAKE

    @property
    def client_info(self) -> dict[str, Any]:
        return self.connection.peer_info or {}

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.connection.peer_capabilities or {}

    @property
    def is_operating(self) -> bool:
        return self.connection.state is OPERATING and not self.driver.is_closed

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe``: ``uri`` is watched for this client."""
        if uri not in self.subscriptions:
            self.subscriptions.add(uri)
            if self.on_change is not None:
                await self.on_change()

    async def unsubscribe(self, uri: str) -> None:
        """``resources/unsubscribe``."""
        if uri in self.subscriptions:
            self.subscriptions.discard(uri)
            if self.on_change is not None:
                await self.on_change()

    async def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request: RequestId | None = None,
    ) -> None:
        """Send a notification to this client (raises if the session can't carry it);
        ``related_request``: the client request it belongs to, if any."""
        await self.driver.notify(method, params, related_request=related_request)

    async def notify_quietly(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Broadcast helper: a session that went away meanwhile is not an error."""
        if not self.is_operating:
            return
        try:
            await self.driver.notify(method, params)
        except TrimcpError as exc:
            logger.debug("not sent to %r: %s: %s", self, method, exc)

    async def log(
        self,
        level: str,
        data: Any,
        logger_name: str | None = None,
        *,
        request_id: RequestId | None = None,
        envelope: Envelope | None = None,
    ) -> None:
        """Send ``notifications/message`` if ``level`` passes the client's threshold.

        Handshake era: the level set with ``logging/setLevel`` (everything before
        that).  Stateless era (``envelope`` given): the ``logLevel`` of request
        ``request_id``; a request without one gets no log messages (spec:
        server/utilities/logging, 2026-07-28).
        """
        if envelope is not None and envelope.log_level is None:
            return
        if not self.connection.should_log(level, request_id):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger_name is not None:
            params["logger"] = logger_name
        await self.driver.notify("notifications/message", params, related_request=request_id)
