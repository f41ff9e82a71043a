"""Serving the peer's requests: one task each, under a concurrency limit, cancellable.

Theory of operation
-------------------
Each request the peer sends (spec: basic, "Requests") is served by its own task
in the session's nursery, with the handler the session registered for its
method (none: -32601).  ``admit`` is called by the reader: it takes a slot of
``RequestSlots`` first (at the limit the reader waits: back-pressure, see
request_slots.py), then starts the task.  Each task runs in its own cancel
scope so that ``notifications/cancelled`` (spec: basic/utilities/cancellation)
can stop it (``cancel``); when the session dies every handler is cancelled
(``cancel_all``).  How a handler ends becomes the answer: its result; a
``NeedInput`` (stateless era) an InputRequiredResult; an ``McpError`` its
error; a ``LocalProtocolError`` -32600; anything else -32603, logged.  A
handler cancelled by the peer gets no answer (the Connection suppresses it).

This object knows nothing of the driver: it is given the Connection, how to
build a handler's context and how to flush, so the driver composes it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import trio

from .._errors import LocalProtocolError, McpError, TransportClosed
from .._sansio import events as ev
from .._sansio import jsonrpc as rpc
from .._sansio.connection.core import Connection
from .driver_types import NeedInput
from .request_slots import RequestSlots

logger = logging.getLogger("trimcp")

C = TypeVar("C")


class PeerRequests(Generic[C]):
    """The peer's requests being served, and the handlers that serve them."""

    def __init__(
        self,
        connection: Connection,
        handlers: dict[str, Callable[[C], Awaitable[dict[str, Any]]]],
        slots: RequestSlots,
        *,
        context: Callable[[ev.RequestReceived], C],
        flush: Callable[[], Awaitable[None]],
        is_closed: Callable[[], bool],
    ) -> None:
        self.connection = connection
        #: Method -> handler (the driver's ``request_handlers``, the same dict).
        self.handlers = handlers
        self.slots = slots
        #: The cancel scope of every request being served, by its id.
        self.scopes: dict[rpc.RequestId, trio.CancelScope] = {}
        self._context = context
        self._flush = flush
        self._is_closed = is_closed

    async def admit(self, event: ev.RequestReceived, nursery: trio.Nursery) -> None:
        """Start serving ``event`` once a slot is free (the handler's task releases it)."""
        await self.slots.acquire()
        nursery.start_soon(self._serve_in_slot, event)

    def cancel(self, request_id: rpc.RequestId) -> None:
        scope = self.scopes.get(request_id)
        if scope is not None:
            scope.cancel()

    def cancel_all(self) -> None:
        for scope in self.scopes.values():
            scope.cancel()

    async def _serve_in_slot(self, event: ev.RequestReceived) -> None:
        serving = self.slots.enter()
        try:
            if not self._is_closed():  # (it may have closed before this task first ran)
                await self._serve(event)
        finally:
            self.slots.leave(serving)

    async def _serve(self, event: ev.RequestReceived) -> None:
        handler = self.handlers.get(event.method)
        conn = self.connection
        if handler is None:
            conn.send_error(event.id, rpc.METHOD_NOT_FOUND, f"method not found: {event.method}")
            await self._flush_quietly()
            return
        ctx = self._context(event)
        with trio.CancelScope() as scope:
            self.scopes[event.id] = scope
            try:
                result = await handler(ctx)
            except NeedInput as need:
                if not self._is_closed():
                    conn.send_input_required(event.id, need.input_requests, need.request_state)
            except McpError as exc:
                self._answer_error(event.id, exc.code, exc.message, exc.data)
            except LocalProtocolError as exc:
                self._answer_error(event.id, rpc.INVALID_REQUEST, str(exc))
            except Exception as exc:
                logger.exception("handler for %s failed", event.method)
                self._answer_error(event.id, rpc.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            else:
                if not self._is_closed():
                    conn.send_response(event.id, result)
            finally:
                del self.scopes[event.id]
        if scope.cancelled_caught and not self._is_closed() and conn.awaiting_answer(event.id):
            # Cancelled by the peer: the Connection suppresses the answer and counts it.
            conn.send_error(event.id, rpc.INTERNAL_ERROR, "request cancelled")
        await self._flush_quietly()

    def _answer_error(self, request_id: rpc.RequestId, code: int, message: str, data: Any = None) -> None:
        if not self._is_closed():
            self.connection.send_error(request_id, code, message, data)

    async def _flush_quietly(self) -> None:
        try:
            await self._flush()
        except TransportClosed:
            pass
