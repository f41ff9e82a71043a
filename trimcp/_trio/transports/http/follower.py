"""Following a server's GET event stream: the standalone stream and resumptions, one loop.

Theory of operation
-------------------
Two GET streams exist in the handshake era (spec 2025-11-25 basic/transports):
the *standalone* stream, opened once ``notifications/initialized`` was
accepted, on which the server may send requests and notifications at any time
("Listening for Messages from the Server"); and the *resumption* of a POST's
event stream that broke before its answer, a GET with ``Last-Event-ID``
("Resumability and Redelivery").  Both are ``StreamFollower.follow``: connect,
read the stream to its end through the ``Pump``, and ask ``FollowPolicy``
(``_sansio/http/client/policy.py``) whether and when to connect again.  A resumption
also stops as soon as its request's answer reached the session, on whatever
stream, and it runs within its request's deadline; the standalone stream has
none and lives until the policy stops it, a new session replaces it, or the
transport closes.  When the server cannot be reached at all, both give up at
once: the policy says the server is gone.  A standalone stream given up (not
merely refused with 405) is also handed to the session as ``StreamLost``: it
counts as a terminal failure there (``_sansio/connection/health.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from ...._errors import ConnectError, TransportClosed, TransportError
from ...._sansio.http.client import response as hr
from ...._sansio.http.client.plan import HttpPlanner, HttpRequest
from ...._sansio.http.client.policy import (
    Connect,
    Done,
    FollowFact,
    FollowPolicy,
    GiveUp,
    Lost,
    ReconnectPolicy,
    Resume,
    Stop,
    StreamRead,
    Unreachable,
)
from .executor import Executor
from .inbox import Exchange, Inbox, IssueLog
from .pump import Pump

__all__ = ["StreamFollower"]


class StreamFollower:
    """Runs GET streams for one transport (see the module docstring)."""

    def __init__(
        self,
        planner: HttpPlanner,
        executor: Executor,
        pump: Pump,
        issues: IssueLog,
        nursery: trio.Nursery,
        inbox: Inbox | None = None,
        *,
        reconnect: ReconnectPolicy,
        max_message_size: int,
        standalone: bool,
        stamp: Callable[[HttpRequest], HttpRequest] | None = None,
    ) -> None:
        #: The auth hook's DPoP stamp for each GET (identity without OAuth).
        self.stamp = stamp or (lambda request: request)
        self.planner = planner
        self.executor = executor
        self.pump = pump
        self.issues = issues
        self.nursery = nursery
        #: Where a given-up standalone stream is reported (``None``: only logged).
        self.inbox = inbox
        self.reconnect = reconnect
        self.max_message_size = max_message_size
        #: Whether to open the standalone stream at all.
        self.standalone = standalone
        self._standalone_scope: trio.CancelScope | None = None

    # -- the standalone stream ---------------------------------------------------------

    def start_standalone(self) -> None:
        """(Re)open the standalone GET stream in the background."""
        if not self.standalone:
            return
        self.stop_standalone()
        scope = self._standalone_scope = trio.CancelScope()
        self.nursery.start_soon(self._standalone_task, scope)

    def stop_standalone(self) -> None:
        if self._standalone_scope is not None:
            self._standalone_scope.cancel()
            self._standalone_scope = None

    async def _standalone_task(self, scope: trio.CancelScope) -> None:
        with scope:
            end = await self.follow(FollowPolicy(self.reconnect))
            if isinstance(end, Stop) and end.detail is not None:
                self.issues(end.detail)
                if self.inbox is not None:
                    await self.inbox.lost(TransportClosed(end.detail))

    # -- resumption --------------------------------------------------------------------

    async def resume(self, ex: Exchange, broken: Resume) -> TransportError | None:
        """Resume ``ex``'s broken event stream; ``None`` once answered, else why not."""
        policy = FollowPolicy(
            self.reconnect,
            resuming=broken.detail,
            last_event_id=broken.last_event_id,
            retry_ms=broken.retry_ms,
        )
        end = await self.follow(policy, ex)
        if isinstance(end, GiveUp):
            assert isinstance(end.error, TransportError)  # FollowPolicy gives up with these only
            return end.error
        return None

    # -- the loop ----------------------------------------------------------------------

    async def follow(self, policy: FollowPolicy, ex: Exchange | None = None) -> Stop | GiveUp | Done:
        """Connect, read, and connect again while the policy says so (``ex``: the
        request whose stream this resumes)."""
        action: Connect | Stop | GiveUp | Done = policy.start()
        while isinstance(action, Connect):
            if ex is None:
                await trio.sleep(action.after)
            else:
                with trio.move_on_after(action.after):
                    await ex.answered.wait()
                if ex.answered.is_set():
                    return Done()
            action = policy.decide(await self._connect(action.last_event_id, policy.retry_ms, ex))
        return action

    async def _connect(self, last_event_id: str | None, retry_ms: int | None, ex: Exchange | None) -> FollowFact:
        request = self.stamp(self.planner.plan_get(last_event_id))
        try:
            response = await self.executor.open(request)
        except ConnectError as exc:
            return Unreachable(str(exc))
        except TransportError as exc:
            return Lost(str(exc))
        reader = hr.ResponseReader(
            hr.Purpose.STANDALONE if ex is None else hr.Purpose.RESUME,
            answer_id=None if ex is None else ex.request_id,
            expects_answer=ex is not None,
            sent_session=self.planner.session_id is not None,
            last_event_id=last_event_id,
            retry_ms=retry_ms,
            max_message_size=self.max_message_size,
            url=request.url,
        )
        try:
            result = await self.pump.read(reader, response, linger=ex is not None, origin=ex)
        finally:
            await response.aclose()
        answered = ex is not None and (reader.answered or ex.answered.is_set())
        return StreamRead(result.end, result.messages, reader.last_event_id, reader.retry_ms, answered)
