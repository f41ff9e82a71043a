"""Notification routing and ``subscriptions/listen`` streams (client side).

Theory of operation
-------------------
Every notification the server sends reaches ``NotificationRouter`` (one of
the driver's ``notification_taps``, run in the reader task before the
application's handler is queued).  It first runs its own *taps* - synchronous
observers such as the list cache, which must see ``list_changed`` before
anything else - then hands the notification to the ``Subscription`` named by
``_meta["io.modelcontextprotocol/subscriptionId"]``, if one is open.  The
application's own handler, which sees every notification, is the driver's
``notification_handler`` and runs in the session's callback task.

2026-07-28 (spec: basic/patterns/subscriptions): the client opens a stream
with a long-lived ``subscriptions/listen`` request whose ``notifications``
filter says which events it wants; the server first sends
``notifications/subscriptions/acknowledged`` (the subset it will honour), then
every matching notification, each tagged with the listen request's JSON-RPC id.
``open_subscription`` runs that request in a background task (``timeout=None``:
the stream lives until the block is left), learns its id before it is sent so
no notification can slip by, waits for the acknowledgment under the request
timeout, and yields the ``Subscription``.  Leaving the block cancels the
request, which sends ``notifications/cancelled``; a server that ends the stream
answers the request, which ends the iteration.

The router runs in the driver's reader task, so it must never block: a
subscription buffers up to ``max_buffer`` notifications and counts (and logs)
the ones it had to drop when its reader falls behind (the iteration is the
application's own back-pressure, a buffer per subscription).
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import trio

from ..._errors import RequestTimeout
from ..._sansio import jsonrpc as rpc
from ..._sansio.connection import stateless as sl
from .._groups import collapse
from ..driver import USE_DEFAULT, NotificationTap, SessionDriver, UseDefault

logger = logging.getLogger("trimcp")

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: A notification on a stream: its method and params (``_meta`` included).
Notification = tuple[str, dict[str, Any]]


def subscription_id(params: dict[str, Any]) -> rpc.RequestId | None:
    meta = params.get("_meta")
    value = meta.get(sl.SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None
    return value if rpc.is_valid_id(value) and value is not None else None


class Subscription:
    """An open ``subscriptions/listen`` stream: ``async for method, params in sub``.

    ``acknowledged`` is the filter the server agreed to honour; the iteration
    ends when the server closes the stream (``result`` holds its final answer)
    and raises ``error`` if the stream broke instead."""

    def __init__(self, requested: dict[str, Any], max_buffer: int) -> None:
        self.id: rpc.RequestId | None = None
        #: The ``notifications`` filter sent.
        self.requested = requested
        #: The filter the server acknowledged (None until it does).
        self.acknowledged: dict[str, Any] | None = None
        #: The server's answer to the listen request when it ended the stream.
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        #: Notifications lost because the reader fell behind (buffer: ``max_buffer``).
        self.dropped = 0
        self._send, self._receive = trio.open_memory_channel[Notification](max_buffer)
        self._ready = trio.Event()

    @property
    def ended(self) -> bool:
        return self.result is not None or self.error is not None

    def _deliver(self, method: str, params: dict[str, Any]) -> None:
        if method == ACKNOWLEDGED:
            granted = params.get("notifications")
            self.acknowledged = granted if isinstance(granted, dict) else {}
            self._ready.set()
            return
        try:
            self._send.send_nowait((method, params))
        except trio.WouldBlock:
            self.dropped += 1
            logger.warning("subscription %r: reader too slow, dropped %s", self.id, method)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # the stream has ended; a straggler

    def _end(self, result: dict[str, Any] | None, error: BaseException | None) -> None:
        self.result, self.error = result, error
        self._send.close()
        self._ready.set()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Notification:
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            if self.error is not None:
                raise self.error from None
            raise StopAsyncIteration from None


class NotificationRouter:
    """A driver notification tap: its own taps, then the subscription a notification names."""

    def __init__(self, taps: Sequence[NotificationTap] = ()) -> None:
        self.taps: tuple[NotificationTap, ...] = tuple(taps)
        self.subscriptions: dict[rpc.RequestId, Subscription] = {}

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        for tap in self.taps:
            tap(method, params)
        sub_id = subscription_id(params)
        sub = self.subscriptions.get(sub_id) if sub_id is not None else None
        if sub is not None:
            sub._deliver(method, params)


@asynccontextmanager
async def open_subscription(
    driver: SessionDriver,
    router: NotificationRouter,
    requested: dict[str, Any],
    *,
    max_buffer: int = 256,
    ack_timeout: float | None | UseDefault = USE_DEFAULT,
) -> AsyncIterator[Subscription]:
    """Run ``subscriptions/listen`` with the ``notifications`` filter ``requested``."""
    sub = Subscription(requested, max_buffer)

    def registered(request_id: rpc.RequestId) -> None:
        sub.id = request_id
        router.subscriptions[request_id] = sub

    async def listen() -> None:
        result: dict[str, Any] | None = None
        error: BaseException | None = None
        try:
            result = await driver.request(
                "subscriptions/listen", {"notifications": requested}, timeout=None, on_sent=registered
            )
        except Exception as exc:
            error = exc
        finally:
            if sub.id is not None:
                router.subscriptions.pop(sub.id, None)
            sub._end(result, error)

    limit = driver.request_timeout if isinstance(ack_timeout, UseDefault) else ack_timeout
    with collapse():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(listen)
            try:
                with trio.move_on_after(math.inf if limit is None else limit):
                    await sub._ready.wait()
                if not sub._ready.is_set():
                    raise RequestTimeout(f"subscriptions/listen was not acknowledged within {limit} s", seconds=limit)
                if sub.error is not None and sub.acknowledged is None:
                    raise sub.error  # refused; once acknowledged, errors come out of the iteration
                yield sub
            finally:
                nursery.cancel_scope.cancel()
