"""Where what the HTTP client transport learns goes: to the session, or to the logs.

Theory of operation
-------------------
An ``Exchange`` is one message the session sent, in flight: the message and
its ``SendMeta``, its ``ExchangePolicy`` (which holds the current POST plan),
the event set once its answer (or its failure) reached the session, and the
cancel scope that closes its streams.

``Inbox`` owns the channel ``HttpClientStream.receive`` reads.  Every JSON text
a response carried goes in as ``Received``, with the payload the response
reader parsed (the one parse); every request the policy gave up on goes in as
``RequestFailed`` with a typed error, and the standalone stream given up as
``StreamLost`` (the session counts it towards declaring the server gone).  The inbox knows the exchanges by request
id, so an answer arriving on any stream (its own POST stream, a resumption,
the standalone GET, the 2024-11-05 event stream) marks its exchange answered,
once handed over.  The transport's own requests (the ``initialize`` of a
re-initialization) are *private*: their answers are kept from the session,
which has its own.  ``die`` ends the transport: ``receive`` then raises
``TransportClosed`` naming the reason.

The answer to an exchange run by its caller (``inline``) skips the channel when
it answers that request alone and the session has taken everything that came
before it: its reader waits on an empty channel.  The answer is then kept on
the exchange (``direct``) for the caller to hand to the session itself, which
saves the reader task a wake-up and the caller one more; the session sees the
same messages in the same order either way.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

import attrs
import trio

from ...._errors import AuthError, TransportError
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.client import response as hr
from ...._sansio.http.client.plan import PostPlan
from ...._sansio.http.client.policy import ExchangePolicy
from ...stream import Inbound, Received, RequestFailed, SendMeta, StreamLost

__all__ = ["Exchange", "Inbox", "IssueLog"]

logger = logging.getLogger("trimcp.http")

#: How many ``closed_by_caller`` ids are kept waiting for their cancellation.
MAX_CLOSED_BY_CALLER: Final = 256


@attrs.define(eq=False)
class Exchange:
    """One message on its way: its POSTs, and the answer it waits for."""

    message: rpc.Message
    meta: SendMeta
    body: bytes
    policy: ExchangePolicy
    answered: trio.Event = attrs.field(factory=trio.Event)
    scope: trio.CancelScope | None = None
    #: Closed on purpose (2026-07-28 cancellation): nothing is reported for it.
    cancelled: bool = False
    #: Run in the task of the caller that waits for its answer (``begin_request``).
    inline: bool = False
    #: An inline exchange's answer, handed back to its caller rather than through the channel.
    direct: Received | None = None

    @property
    def plan(self) -> PostPlan:
        return self.policy.plan

    @property
    def request_id(self) -> rpc.RequestId | None:
        return self.message.id if isinstance(self.message, rpc.Request) else None

    @property
    def method(self) -> str | None:
        return self.policy.plan.method

    @property
    def expects_answer(self) -> bool:
        return self.policy.expects_answer

    def close(self) -> None:
        """Stop this exchange's streams without reporting anything."""
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()


class IssueLog:
    """What went wrong on the way (kept for the harness, newest last; also logged)."""

    def __init__(self, describe: Callable[[], str], size: int = 200) -> None:
        self.describe = describe
        self.entries: deque[str] = deque(maxlen=size)

    def __call__(self, detail: str, level: int = logging.WARNING) -> None:
        self.entries.append(detail)
        logger.log(level, "%s: %s", self.describe(), detail)


class Inbox:
    """The transport's side of the channel to the session (see the module docstring)."""

    def __init__(self, issues: IssueLog, capacity: int = 64) -> None:
        self.issues = issues
        self._to_session, self.from_server = trio.open_memory_channel[Inbound](capacity)
        self._exchanges: dict[rpc.RequestId, Exchange] = {}
        self._private: dict[rpc.RequestId, list[rpc.ParsedPayload]] = {}
        #: Items in the channel not yet returned by ``take``; tasks waiting in ``take``.
        self._on_the_way = 0
        self._waiting = 0
        #: Why the transport is unusable, once it is.
        self.fatal: str | None = None
        #: 2026-07-28 requests whose inline exchange ended with its caller's cancellation
        #: (see ``closed_by_caller``).
        self._closed_by_caller: set[rpc.RequestId] = set()

    # -- exchanges -------------------------------------------------------------------

    def register(self, ex: Exchange) -> None:
        if ex.request_id is not None:
            self._exchanges[ex.request_id] = ex

    def unregister(self, ex: Exchange) -> None:
        rid = ex.request_id
        if rid is not None and self._exchanges.get(rid) is ex:
            del self._exchanges[rid]

    def exchange(self, request_id: object) -> Exchange | None:
        if isinstance(request_id, (int, str)) and rpc.is_valid_id(request_id):
            return self._exchanges.get(request_id)
        return None

    def closed_by_caller(self, ex: Exchange) -> None:
        """``ex``'s caller was cancelled while running it: its stream is closed, which is
        how 2026-07-28 cancels, so the ``notifications/cancelled`` that follows is dropped
        (``was_closed_by_caller``)."""
        if ex.request_id is not None:
            if len(self._closed_by_caller) >= MAX_CLOSED_BY_CALLER:
                self._closed_by_caller.clear()  # never told of them: their sessions moved on
            self._closed_by_caller.add(ex.request_id)

    def was_closed_by_caller(self, request_id: rpc.RequestId) -> bool:
        """Whether ``request_id``'s stream was closed by its caller (forgotten once asked)."""
        if request_id in self._closed_by_caller:
            self._closed_by_caller.discard(request_id)
            return True
        return False

    @contextmanager
    def private(self, request_id: rpc.RequestId | None) -> Iterator[list[rpc.ParsedPayload]]:
        """Keep the answers to ``request_id`` (the transport's own request) from the session."""
        holder: list[rpc.ParsedPayload] = []
        if request_id is None:
            yield holder
            return
        self._private[request_id] = holder
        try:
            yield holder
        finally:
            del self._private[request_id]

    # -- to the session --------------------------------------------------------------

    async def deliver(self, event: hr.MessageReceived, origin: Exchange | None = None, *, inline: bool = False) -> None:
        """Hand one parsed JSON text to the session (``origin``: the exchange whose stream it
        came on; ``inline``: read by that exchange's caller, who may take its answer)."""
        if inline and origin is not None and origin.direct is None and self._reader_idle():
            rid = origin.request_id
            if rid is not None and event.answers == (rid,) and not origin.answered.is_set():
                origin.direct = Received(event.data, event.payload, rid)
                origin.answered.set()
                return
        private = False
        answered: list[Exchange] = []
        for answer_id in event.answers:
            holder = self._private.get(answer_id)
            if holder is not None:
                holder.append(event.payload)
                private = True
                continue
            ex = self._exchanges.get(answer_id)
            if ex is not None and not ex.answered.is_set():
                answered.append(ex)
        if not private:
            related = origin.request_id if origin is not None else None
            # Only once it is handed over does an answer count (a cancelled hand-over
            # leaves the exchange to fail the request instead).
            await self._send(Received(event.data, event.payload, related))
        for ex in answered:
            ex.answered.set()

    async def fail(self, ex: Exchange, error: TransportError | AuthError, *, may_reissue: bool = False) -> None:
        """Tell the session that ``ex``'s answer is lost (or that it may re-issue it)."""
        rid = ex.request_id
        if rid is None or ex.answered.is_set() or ex.cancelled:
            return
        quiet = ex.method == "server/discover" or may_reissue
        self.issues(f"{ex.method} failed: {error}", logging.DEBUG if quiet else logging.WARNING)
        await self._send(RequestFailed(rid, error, may_reissue))
        ex.answered.set()  # after the hand-over, as in deliver()

    async def lost(self, error: TransportError) -> None:
        """Tell the session a stream it did not ask for (the standalone GET) was given up."""
        await self._send(StreamLost(error))

    def _reader_idle(self) -> bool:
        """Whether the session has taken and handled everything sent to it: its reader
        waits in ``take`` with nothing on the way (counted here: the channel's statistics
        cost as much as the hop they spare)."""
        return self._waiting > 0 and self._on_the_way == 0

    async def take(self) -> Inbound:
        """The next item for the session (what ``HttpClientStream.receive`` returns)."""
        self._waiting += 1
        try:
            item = await self.from_server.receive()
        finally:
            self._waiting -= 1
        self._on_the_way -= 1
        return item

    def die(self, reason: str) -> None:
        if self.fatal is None:
            self.fatal = reason
            self._to_session.close()

    def close(self) -> None:
        self._to_session.close()
        self.from_server.close()

    async def _send(self, item: Inbound) -> None:
        self._on_the_way += 1  # (before: the reader may take it before this task runs again)
        try:
            # Hot path: a free buffer slot takes the item without a scheduler pass (the
            # exchange yields soon enough, when it next waits for the network).
            self._to_session.send_nowait(item)
        except trio.WouldBlock:
            try:
                await self._to_session.send(item)
            except BaseException as exc:
                self._on_the_way -= 1
                if not isinstance(exc, (trio.ClosedResourceError, trio.BrokenResourceError)):
                    raise
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self._on_the_way -= 1
