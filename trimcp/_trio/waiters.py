"""What a request we sent waits on: its waiter, and a deadline that progress can push.

Theory of operation
-------------------
Every request the driver sends has a ``Waiter`` (the reader task resolves it
with the answer or an error) and belongs to one ``Deadline``: the instant past
which the caller gets ``RequestTimeout``.  One deadline covers all the attempts
of a request (a stateless-era request re-sent with ``inputResponses``; a
re-issue), so it lives beside the waiter rather than in it.

Spec 2025-11-25 basic/utilities/progress (2026-07-28 basic/patterns/progress):
a receiver may report progress on a long request, and a sender may keep
waiting while progress arrives.  With ``reset`` on, each progress notification
for the request pushes the deadline to *now + timeout* -- the timeout then
means "silence for that long", not "that long in all" -- but never past
*start + max_total*, so a peer that reports progress for ever cannot keep a
caller waiting for ever.  ``max_total=None`` is ten times the timeout: enough
for a tool that reports every few seconds on a minute-long default, small
enough that a stuck loop of progress ends within the same order of magnitude as
what the caller asked for.  The deadline is pushed by moving the deadline of the
cancel scope the caller waits in (``scope``), so the waiting itself costs
nothing extra; the reader task does the pushing, synchronously, when it reads
the progress.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import trio

from .._sansio import events as ev
from .._sansio import jsonrpc as rpc
from .._sansio.http.headers import HeaderParam
from .driver_types import ProgressCallback, SentCallback

__all__ = ["TOTAL_FACTOR", "Deadline", "Waiter"]

#: ``max_total_timeout=None``: a deadline pushed by progress stays within this many timeouts of the start.
TOTAL_FACTOR = 10


class Deadline:
    """When a request (all its attempts) times out; progress may push it (see the module docstring)."""

    __slots__ = ("at", "cap", "extended", "limit", "reset", "scope", "total")

    def __init__(self, limit: float | None, reset: bool, max_total: float | None) -> None:
        #: The timeout the caller asked for (``None``: none).
        self.limit = limit
        if limit is None:
            self.at = self.cap = self.total = math.inf
            self.reset = False
        else:
            now = trio.current_time()
            self.at = now + limit
            #: How far past the start progress may push the deadline.
            self.total = limit * TOTAL_FACTOR if max_total is None else max_total
            self.cap = now + self.total
            self.reset = reset
        #: Whether progress pushed ``at`` (the timeout message says so).
        self.extended = False
        #: The cancel scope the current attempt waits in.
        self.scope: trio.CancelScope | None = None

    def progressed(self) -> None:
        """Progress arrived for the request: silence is measured from now."""
        if not self.reset:
            return
        assert self.limit is not None  # reset is off without a limit
        pushed = min(trio.current_time() + self.limit, self.cap)
        if pushed > self.at:
            self.at = pushed
            self.extended = True
            if self.scope is not None:
                self.scope.deadline = pushed

    def timed_out(self, method: str) -> str:
        """The ``RequestTimeout`` message."""
        if not self.extended:
            return f"{method} got no answer within {self.limit} s (the peer was told to cancel it)"
        bound = f" (and {self.total} s in all, the most progress may extend it to)" if self.at >= self.cap else ""
        return (
            f"{method} got no answer within {self.limit} s of the last progress{bound}; the peer was told to cancel it"
        )


@attrs.define
class Waiter:
    method: str
    #: The id its request has now (a re-issue gives it a new one).
    request_id: rpc.RequestId
    #: The request's deadline (shared by all its attempts).
    deadline: Deadline
    event: trio.Event = attrs.field(factory=trio.Event)
    result: dict[str, Any] | None = None
    error: BaseException | None = None
    on_progress: ProgressCallback | None = None
    #: Stateless era: the server wants input first (spec: mrtr).
    input_required: ev.InputRequired | None = None
    on_sent: SentCallback | None = None
    #: ``tools/call``: what the request's ``SendMeta`` carried, for a re-issue too.
    header_params: tuple[HeaderParam, ...] = ()
    #: ``CallbackQueue.accepted`` when the answer was read: the callbacks to run first.
    callbacks_before: int = 0
