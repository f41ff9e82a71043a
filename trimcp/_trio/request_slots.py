"""The concurrency limit on the peer's requests a session serves.

Theory of operation
-------------------
Each request the peer sends (a client's ``tools/call``, a server's
``sampling/createMessage``) is served by its own task, and at most ``limit``
of those tasks run user code at once.  The reader takes a slot before it starts
a handler; when none is free it waits (back-pressure: it stops reading, so the
peer's writes block in turn) and requests start in the order they arrived
(slots are handed over first come, first served).

A handler that waits for an answer from the peer - a server's ``tools/call``
handler asking the client for sampling is the normal case - ``lend``s its slot
back while it waits and ``take_back``s one when the answer (or its deadline)
has come.  Without that, ``limit`` such handlers would hold every slot while
the reader, waiting for a slot, could never read the answers they wait for.
The driver finds the handler (or the callback task, callbacks.py) a request
comes from with ``current_owner``: the handler's own task or any task it
started, found by walking up the Trio task tree.

Taking a free slot does not yield to the scheduler (the reader's own
``receive`` is its checkpoint), so the limit costs nothing on the request path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import attrs
import trio

from .callbacks import CallbackQueue

#: Peer requests served at once by default (HTTP/2 advises allowing at least 100
#: concurrent streams, RFC 9113 section 6.5.2; a request here is about as heavy).
DEFAULT_MAX_CONCURRENT_REQUESTS = 100

T = TypeVar("T")


@attrs.define
class Serving:
    """A task serving one of the peer's requests."""

    #: False while the handler waits for the peer (its slot lent back).
    holds_slot: bool = True


class RequestSlots:
    """A counting semaphore whose free ``acquire`` does not yield, and the handler tasks."""

    def __init__(self, limit: int = DEFAULT_MAX_CONCURRENT_REQUESTS) -> None:
        if limit < 1:
            raise ValueError("the concurrency limit must be at least 1")
        self.limit = limit
        self.in_use = 0
        #: The tasks serving a peer request right now.
        self.serving: dict[trio.lowlevel.Task, Serving] = {}
        self._waiters = trio.lowlevel.ParkingLot()

    async def acquire(self) -> None:
        if self.in_use < self.limit and not self._waiters:
            await trio.lowlevel.checkpoint_if_cancelled()
            self.in_use += 1
            return
        # Woken by ``release`` with the slot already ours (``in_use`` unchanged).
        await self._waiters.park()

    def release(self) -> None:
        if self._waiters:
            self._waiters.unpark()  # hand the slot straight to the oldest waiter
        else:
            self.in_use -= 1

    def enter(self) -> Serving:
        """The current task starts serving, with the slot the reader took for it."""
        serving = self.serving[trio.lowlevel.current_task()] = Serving()
        return serving

    def leave(self, serving: Serving) -> None:
        del self.serving[trio.lowlevel.current_task()]
        if serving.holds_slot:
            self.release()

    def lend(self, serving: Serving) -> bool:
        """Give the slot back while the handler waits for the peer; whether it held one."""
        if not serving.holds_slot:
            return False
        serving.holds_slot = False
        self.release()
        return True

    async def take_back(self, serving: Serving) -> None:
        await self.acquire()
        serving.holds_slot = True


def enclosing(task: trio.lowlevel.Task, owner_of: Callable[[trio.lowlevel.Task], T]) -> T | None:
    """The owner of ``task`` or of its nearest ancestor that has one."""
    current: trio.lowlevel.Task | None = task
    while current is not None:
        owner = owner_of(current)
        if owner is not None:
            return owner
        nursery = current.parent_nursery
        current = nursery.parent_task if nursery is not None else None
    return None


def current_owner(slots: RequestSlots, callbacks: CallbackQueue) -> CallbackQueue | Serving | None:
    """The callback task or the peer-request handler the current task belongs to, if any."""
    if not callbacks.busy and not slots.serving:
        return None  # the plain request path: nothing to look up
    callback_task = callbacks.task if callbacks.busy else None

    def owner_of(task: trio.lowlevel.Task) -> CallbackQueue | Serving | None:
        return callbacks if task is callback_task else slots.serving.get(task)

    return enclosing(trio.lowlevel.current_task(), owner_of)
