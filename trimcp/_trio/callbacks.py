"""The session's callback queue: user code in order, off the reader task.

Theory of operation
-------------------
The reader task of a ``SessionDriver`` must always be free to read: the answer
to every pending request arrives through it.  So it never runs a notification
handler (``list_changed``, ``resources/updated``, ...), a progress callback
(spec: basic/utilities/progress) or a logging handler (spec:
server/utilities/logging) itself; it ``put``s a call
into this queue, and one task per session (``run``) makes the calls one after
the other, in the order the messages arrived.  A callback that raises is
logged and skipped; the session goes on.

The queue holds at most ``max_pending`` calls.  When it is full, ``put`` waits
for room: the reader stops reading, the transport's buffers fill and the peer's
writes block in turn (back-pressure; memory stays bounded).  Waiting would be a
deadlock in one case: the callback being run is itself waiting for an answer
from the peer (a ``list_changed`` handler that calls ``list_tools()``), which
only the reader can deliver.  The driver tells the queue when that is so
(``waiting_on_peer``); while it is, ``put`` does not wait, and a call that finds
the queue full is dropped, counted in ``dropped`` and logged.  The reader
therefore blocks only on a callback that is making progress of its own.

Every accepted call gets a sequence number (``accepted``); ``finished`` counts
the calls made.  ``wait_finished(n)`` returns once the first ``n`` calls were
made, which lets a request return only after the callbacks for everything
received before its answer have run (the order a reader that ran them inline
would give).

When the transport ends the driver ``close``s the queue: the calls already in
it are still made, then ``run`` returns.  Cancelling ``run`` drops them.
"""

from __future__ import annotations

import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import trio

logger = logging.getLogger("trimcp")

#: How many callback calls may wait for the callback task by default.
DEFAULT_MAX_PENDING_CALLBACKS = 256

Callback = Callable[..., Awaitable[None] | None]


class CallbackQueue:
    """Bounded, ordered calls of user callbacks, made by one task (``run``)."""

    def __init__(self, max_pending: int = DEFAULT_MAX_PENDING_CALLBACKS) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.max_pending = max_pending
        #: Calls accepted so far (the sequence number of the newest one).
        self.accepted = 0
        #: Calls made so far (raised or not).
        self.finished = 0
        #: Calls dropped because the queue was full while the callback waited for the peer.
        self.dropped = 0
        #: The task that makes the calls, once ``run`` started.
        self.task: trio.lowlevel.Task | None = None
        #: A callback is running right now.
        self.busy = False
        #: How many requests the running callback (or a task it started) waits on.
        self.waiting_on_peer = 0
        self._items: deque[tuple[str, Callback, tuple[Any, ...]]] = deque()
        self._closed = False
        self._stopped = False
        # Set and replaced on every change; waiters re-check their condition.
        self._changed = trio.Event()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    @property
    def pending(self) -> int:
        return len(self._items)

    async def put(self, what: str, callback: Callback, *args: Any) -> None:
        """Queue ``callback(*args)`` (``what`` names it in logs); waits while the
        queue is full unless the running callback waits for the peer."""
        while len(self._items) >= self.max_pending and not self._stopped:
            if self.waiting_on_peer:
                self.dropped += 1
                logger.warning(
                    "callback queue full (%d) while a callback waits for the peer: dropped %s",
                    self.max_pending,
                    what,
                )
                return
            await self._changed.wait()
        if self._stopped or self._closed:
            return
        self._items.append((what, callback, args))
        self.accepted += 1
        self._notify()

    def enter_peer_wait(self) -> None:
        self.waiting_on_peer += 1
        self._notify()  # a reader waiting for room must not wait any more

    def exit_peer_wait(self) -> None:
        self.waiting_on_peer -= 1

    async def wait_finished(self, upto: int) -> None:
        """Return once the first ``upto`` accepted calls were made (or the queue stopped)."""
        while self.finished < upto and not self._stopped:
            await self._changed.wait()

    def close(self) -> None:
        """Accept nothing more; ``run`` returns after the calls already queued."""
        self._closed = True
        self._notify()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self.task = trio.lowlevel.current_task()
        task_status.started()
        try:
            while True:
                while not self._items:
                    if self._closed:
                        return
                    await self._changed.wait()
                what, callback, args = self._items.popleft()
                self._notify()  # room for a reader waiting to put
                self.busy = True
                try:
                    result = callback(*args)
                    if inspect.isawaitable(result):
                        await result
                except Exception:
                    # A faulty callback must not end the session.
                    logger.exception("callback for %s raised", what)
                finally:
                    self.busy = False
                    self.finished += 1
                    self._notify()
        finally:
            self._stopped = True
            self._notify()
