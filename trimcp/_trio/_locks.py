"""Taking a free trio lock without a scheduler pass.

``trio.Lock.acquire`` always yields, even when the lock is free.  On the
per-message write path that yield is a large share of a client's CPU (one
extra scheduler pass per lock per message).  A free lock has no waiters (a
release hands it straight to the next one), so taking it at once keeps FIFO
order; we still honour cancellation first, as a checkpoint would.
"""

from __future__ import annotations

from types import TracebackType

import trio


class held:
    """``async with held(lock):`` - a class, not a generator, to stay cheap per message."""

    __slots__ = ("_lock",)

    def __init__(self, lock: trio.StrictFIFOLock | trio.Lock) -> None:
        self._lock = lock

    async def __aenter__(self) -> None:
        lock = self._lock
        if lock.locked():
            await lock.acquire()
        else:
            await trio.lowlevel.checkpoint_if_cancelled()
            lock.acquire_nowait()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._lock.release()
