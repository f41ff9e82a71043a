"""``subscriptions/listen``: the stateless era's notification streams (server side).

Theory of operation
-------------------
From 2026-07-28 a client that wants change notifications opens a long-lived
``subscriptions/listen`` request naming what it wants (spec:
basic/patterns/subscriptions): ``toolsListChanged``, ``promptsListChanged``,
``resourcesListChanged`` and ``resourceSubscriptions`` (URIs).  The server

1. agrees to the subset it can honour - what its capabilities advertise
   (``listChanged`` per list, ``resources.subscribe`` for URIs) - and says so
   in ``notifications/subscriptions/acknowledged``, the first message of the
   subscription;
2. registers a ``ListenStream`` with the ``Server`` (``Server.listeners``),
   whose ``notify_*`` methods deliver each matching notification to it, tagged with
   ``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen
   request's JSON-RPC id;
3. holds the request open until the client cancels it
   (``notifications/cancelled``: the driver cancels the handler, and the
   Connection suppresses the answer), the connection ends, or the server
   ends it with ``Server.end_subscriptions()``, which answers the listen
   request with an empty result carrying the subscription id (graceful
   closure).

A subscription is state of the request, not of the connection: one
connection may hold several, and nothing outlives the request.  So a
``ListenStream`` holds the connection's ``SessionDriver`` and the request id,
nothing of the session or the server: ``listen`` is handed the set to
register in, and this module imports nothing else of ``trimcp.server``.
(The client side of the same method is ``trimcp._trio.client.listen``, whose
``Subscription`` is what ``ClientSession.listen()`` yields.)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import trio

from .._errors import McpError, TrimcpError
from .._sansio import jsonrpc as rpc
from .._sansio.connection.stateless import SUBSCRIPTION_ID_KEY
from .._sansio.revisions import has_capability
from .._trio.driver import SessionDriver

logger = logging.getLogger("trimcp.server")

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: filter flag -> the capability path that lets the server honour it
_FLAGS = {
    "toolsListChanged": ("tools", "listChanged"),
    "promptsListChanged": ("prompts", "listChanged"),
    "resourcesListChanged": ("resources", "listChanged"),
}
#: notification method -> the filter flag that selects it
FLAG_OF = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}


def agree(wanted: Any, capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """The part of the filter ``wanted`` this server honours; -32602 if malformed."""
    if not isinstance(wanted, dict):
        raise McpError(rpc.INVALID_PARAMS, "params.notifications must be an object")
    agreed: dict[str, Any] = {}
    for flag, gate in _FLAGS.items():
        value = wanted.get(flag)
        if value is not None and not isinstance(value, bool):
            raise McpError(rpc.INVALID_PARAMS, f"params.notifications.{flag} must be a boolean")
        if value and has_capability(capabilities, gate):
            agreed[flag] = True
    uris = wanted.get("resourceSubscriptions")
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise McpError(rpc.INVALID_PARAMS, "params.notifications.resourceSubscriptions must be a list of URIs")
        if uris and has_capability(capabilities, ("resources", "subscribe")):
            agreed["resourceSubscriptions"] = list(dict.fromkeys(uris))
    return agreed


class ListenStream:
    """One open ``subscriptions/listen`` request: the notifications it agreed to, and where they go."""

    def __init__(self, driver: SessionDriver, request_id: rpc.RequestId, notifications: dict[str, Any]) -> None:
        self.driver = driver
        self.id = request_id
        #: The agreed filter (as acknowledged).
        self.notifications = notifications
        self._acknowledged = trio.Event()
        self._ended = trio.Event()

    def __repr__(self) -> str:
        return f"<ListenStream {self.id!r} {self.notifications}>"

    def wants(self, method: str, params: Mapping[str, Any] | None) -> bool:
        if method == "notifications/resources/updated":
            return (params or {}).get("uri") in self.notifications.get("resourceSubscriptions", ())
        flag = FLAG_OF.get(method)
        return flag is not None and bool(self.notifications.get(flag))

    def tagged(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        out = dict(params or {})
        meta = out.get("_meta")
        out["_meta"] = {**(meta if isinstance(meta, dict) else {}), SUBSCRIPTION_ID_KEY: self.id}
        return out

    async def deliver(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send one notification on this subscription; a vanished client is not an error."""
        await self._acknowledged.wait()  # nothing goes out before the acknowledgement
        if self.driver.is_closed or self._ended.is_set():
            return
        try:
            await self.driver.notify(method, self.tagged(params), related_request=self.id)
        except TrimcpError as exc:
            logger.debug("not sent to %r: %s: %s", self, method, exc)

    def end(self) -> None:
        """End the subscription gracefully: the listen request gets its (empty) result."""
        self._ended.set()

    async def wait_ended(self) -> None:
        await self._ended.wait()


async def listen(
    listeners: set[ListenStream], driver: SessionDriver, request_id: rpc.RequestId, params: dict[str, Any]
) -> dict[str, Any]:
    """Serve the ``subscriptions/listen`` request ``request_id`` arriving on ``driver``:
    acknowledge, stay in ``listeners`` (where the server's broadcasts find it), hold until the end."""
    agreed = agree(params.get("notifications"), driver.connection.capabilities)
    sub = ListenStream(driver, request_id, agreed)
    listeners.add(sub)
    try:
        # The acknowledgement is the subscription's first message: deliveries wait for it.
        await driver.notify(ACKNOWLEDGED, sub.tagged({"notifications": agreed}), related_request=request_id)
        sub._acknowledged.set()
        await sub.wait_ended()
    finally:
        listeners.discard(sub)
        sub._ended.set()
        sub._acknowledged.set()  # release deliveries still waiting: they see the end
    return {"_meta": {SUBSCRIPTION_ID_KEY: sub.id}}
