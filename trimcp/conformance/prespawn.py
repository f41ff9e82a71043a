"""A stdio server's next process, started while the current connection runs.

A run opens a dozen connections one after another (the tour, then each probe on a fresh
one, so that no probe sees another's state); over stdio each is a new server process,
and most of a probe's time is that process starting (an interpreter importing its MCP
package takes a second or more).  ``ahead(connect)`` keeps one spare: when a connection
is taken, the next process is spawned at once and waits, untouched, until the next
connection wants it.  The server sees the same thing as before (a fresh process, its
first message the client's first), only started earlier; connections still run one at
a time, and a spare never used is shut down as any connection is (stdin closed, then
signals: ``ShutdownPolicy``).

A spare that exited while it waited (a server that refuses a second instance, a port or
a lock held by the one before) is dropped and the connection is opened fresh, as it
would have been without a spare.  Only connectors marked ``ProcessConnector`` get a
spare: an HTTP or WebSocket connection is cheap, and opening one early would be a
session the server sees.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import attrs
import trio

from .._errors import TrimcpError
from .._trio._groups import collapse
from .._trio.stream import MessageStream
from .results import Connector

__all__ = ["ProcessConnector", "ahead"]


@attrs.frozen
class ProcessConnector:
    """A connector whose every connection is a new server process (stdio)."""

    open: Callable[[], AbstractAsyncContextManager[MessageStream]]

    def __call__(self) -> AbstractAsyncContextManager[MessageStream]:
        return self.open()


class _Spare:
    """One connection opened ahead, held open in the run's nursery until it is handed over."""

    def __init__(self) -> None:
        self.stream: MessageStream | None = None
        self.ready = trio.Event()
        self._done = trio.Event()
        self._closed = trio.Event()

    async def hold(self, open_one: Callable[[], AbstractAsyncContextManager[MessageStream]]) -> None:
        try:
            async with open_one() as stream:
                self.stream = stream
                self.ready.set()
                await self._done.wait()
        except TrimcpError:
            pass  # (the connection is opened afresh, and that one reports the failure)
        finally:
            self.ready.set()
            self._closed.set()

    def alive(self) -> bool:
        return self.stream is not None and getattr(self.stream, "returncode", None) is None

    async def release(self) -> None:
        """Close it as its own ``async with`` would, and wait until it is closed."""
        self._done.set()
        with trio.CancelScope(shield=True):  # (bounded: the shutdown policy ends in SIGKILL)
            await self._closed.wait()


@asynccontextmanager
async def ahead(connect: Connector) -> AsyncIterator[Connector]:
    """``connect``, each connection's process spawned while the one before runs (only for a
    ``ProcessConnector``; any other connector is yielded as it is)."""
    if not isinstance(connect, ProcessConnector):
        yield connect
        return
    spares: list[_Spare] = []
    # (the spares' tasks cannot fail: the body's own error comes out as itself, not a group)
    with collapse():
        async with trio.open_nursery() as nursery:
            try:
                yield _connector(connect, spares, nursery)
            finally:
                for spare in spares:
                    await spare.release()


def _connector(connect: ProcessConnector, spares: list[_Spare], nursery: trio.Nursery) -> Connector:
    def start_spare() -> None:
        spare = _Spare()
        spares.append(spare)
        nursery.start_soon(spare.hold, connect.open)

    @asynccontextmanager
    async def connect_ahead() -> AsyncIterator[MessageStream]:
        spare = spares.pop() if spares else None
        if spare is not None:
            await spare.ready.wait()
            if not spare.alive():
                await spare.release()
                spare = None
        start_spare()
        if spare is None:
            async with connect.open() as stream:
                yield stream
            return
        assert spare.stream is not None
        try:
            yield spare.stream
        finally:
            await spare.release()

    return connect_ahead
