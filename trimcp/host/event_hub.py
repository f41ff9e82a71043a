"""Publishing a pool's events to any number of subscribers without ever blocking the pool.

Theory of operation
-------------------
The pool publishes from wherever a change happens: a connect task, a session's
callback task, the task that noticed a session end.  None of them may wait for
a slow reader, so ``EventHub.publish`` is synchronous: each subscriber has a
bounded memory channel, an event that finds it full is dropped for that
subscriber alone and counted on its ``dropped`` (and logged once per burst).
A subscriber that needs every status can always re-read ``pool.status()``,
which is the truth; the events are the news.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from .status import PoolEvent

__all__ = ["EventHub", "EventStream"]

logger = logging.getLogger("trimcp.host")


class EventStream:
    """One subscriber's events, in the order they were published; iterate with ``async for``."""

    def __init__(self, max_buffer: int) -> None:
        self._send, self._receive = trio.open_memory_channel[PoolEvent](max_buffer)
        #: Events this subscriber missed because it fell ``max_buffer`` behind.
        self.dropped = 0

    def _offer(self, event: PoolEvent) -> None:
        try:
            self._send.send_nowait(event)
        except trio.WouldBlock:
            if self.dropped == 0:
                logger.warning("a pool event subscriber fell behind; dropping events")
            self.dropped += 1
        except trio.BrokenResourceError:
            pass  # the subscriber has left

    async def receive(self) -> PoolEvent:
        return await self._receive.receive()

    def __aiter__(self) -> AsyncIterator[PoolEvent]:
        return self._receive.__aiter__()

    def _close(self) -> None:
        self._send.close()


class EventHub:
    def __init__(self) -> None:
        self._streams: list[EventStream] = []

    def publish(self, event: PoolEvent) -> None:
        for stream in list(self._streams):
            stream._offer(event)

    @asynccontextmanager
    async def subscribe(self, max_buffer: int = 256) -> AsyncIterator[EventStream]:
        stream = EventStream(max_buffer)
        self._streams.append(stream)
        try:
            yield stream
        finally:
            self._streams.remove(stream)
            stream._close()

    def close(self) -> None:
        """End every subscriber's iteration (the pool is closing)."""
        for stream in self._streams:
            stream._close()
