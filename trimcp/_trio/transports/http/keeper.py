"""Keeping the HTTP client's session usable: re-initialization and the 2024-11-05 fallback.

Theory of operation
-------------------
Two policy actions (``_sansio/http/client/policy.py``) replace the session the
transport talks in, for every exchange at once; ``SessionKeeper`` carries them
out, each under its own lock so that one run serves every request that asked.

* **Re-initialization** (spec 2025-11-25 basic/transports "Session
  Management": a 404 to a request with a session id means the server forgot
  the session).  The client's own ``initialize`` is repeated under a private
  id (its answer is kept from the session, which already has one: the
  ``Inbox`` holds it), the new session id and revision are adopted,
  ``notifications/initialized`` follows, and the standalone stream is
  reopened.  ``generation`` (the planner's, when the failed request was
  planned) tells a request that hit the session just replaced from one that
  hit the new one.  While it runs, ``ready`` is clear: new POSTs wait for it.
* **2024-11-05 fallback** ("Backwards Compatibility": ``initialize`` refused
  with 400, 404 or 405).  GET the URL and wait (bounded) for the ``endpoint``
  event; from then on that GET stream carries every server message, and its
  end ends the transport (``Inbox.die``).
"""

from __future__ import annotations

import itertools
import math
from typing import Final

import trio

from ...._errors import TransportError
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.client import response as hr
from ...._sansio.http.client.plan import HttpPlanner, Mode, PostPlan
from .executor import Executor
from .follower import StreamFollower
from .headers_helper import DynamicHeaders
from .inbox import Inbox, IssueLog
from .pump import Pump, PumpResult, reader_for

__all__ = ["LEGACY_ENDPOINT_TIMEOUT", "SessionKeeper"]

#: How long the 2024-11-05 fallback waits for the ``endpoint`` event.
LEGACY_ENDPOINT_TIMEOUT: Final = 10.0

_reinit_ids = itertools.count(1)


def _describe(end: hr.Terminal | None) -> str:
    if end is None or isinstance(end, hr.StreamEnded):
        return "the stream ended"
    return end.detail


class SessionKeeper:
    def __init__(
        self,
        planner: HttpPlanner,
        executor: Executor,
        pump: Pump,
        inbox: Inbox,
        follower: StreamFollower,
        headers: DynamicHeaders,
        issues: IssueLog,
        nursery: trio.Nursery,
        *,
        post_timeout: float | None,
        max_message_size: int,
        legacy_endpoint_timeout: float = LEGACY_ENDPOINT_TIMEOUT,
    ) -> None:
        self.planner = planner
        self.executor = executor
        self.pump = pump
        self.inbox = inbox
        self.follower = follower
        self.headers = headers
        self.issues = issues
        self.nursery = nursery
        self.post_timeout = post_timeout
        self.max_message_size = max_message_size
        self.legacy_endpoint_timeout = legacy_endpoint_timeout
        #: Clear while a new session is being set up.
        self.ready = trio.Event()
        self.ready.set()
        self._reinit_lock = trio.Lock()
        self._legacy_lock = trio.Lock()

    # -- a new session -------------------------------------------------------------------

    async def reinitialize(self, generation: int) -> bool:
        """Start a new session after a 404 (see the module docstring); ``True`` on success."""
        async with self._reinit_lock:
            if self.planner.generation != generation:
                # Another request already replaced that session.
                return self.planner.session_id is not None or self.planner.mode is Mode.LEGACY_SSE
            if self.planner.initialize_params is None:
                return False
            self.ready = trio.Event()
            try:
                return await self._new_session()
            finally:
                self.ready.set()

    async def _new_session(self) -> bool:
        self.planner.session_expired()
        self.follower.stop_standalone()
        try:
            await self.headers.refresh()
        except TransportError as exc:
            self.issues(f"re-initializing: {exc}")
            return False
        plan = self.planner.plan_reinitialize(f"trimcp-reinit-{next(_reinit_ids)}")
        answer = await self._private_exchange(plan)
        result = answer.messages[0] if answer is not None and answer.messages else None
        version = result.result.get("protocolVersion") if isinstance(result, rpc.Response) else None
        if not isinstance(version, str):
            self.issues(f"re-initializing failed: {result or answer!r}"[:300])
            return False
        self.planner.initialized(version)
        await self._private_exchange(self.planner.plan_post(rpc.Notification("notifications/initialized")))
        self.follower.start_standalone()
        return True

    async def _private_exchange(self, plan: PostPlan) -> rpc.ParsedPayload | None:
        """POST on the transport's own behalf; return the answer (kept from the session)."""
        reader = reader_for(plan, legacy_fallback=False, max_message_size=self.max_message_size)
        with self.inbox.private(plan.wire_id) as holder:
            try:
                with trio.move_on_after(math.inf if self.post_timeout is None else self.post_timeout):
                    response = await self.executor.open(plan.request)
                    try:
                        await self.pump.read(reader, response, linger=True)
                    finally:
                        await response.aclose()
            except TransportError as exc:
                self.issues(f"{plan.method} failed: {exc}")
        return holder[0] if holder else None

    # -- 2024-11-05 ------------------------------------------------------------------------

    async def fall_back(self) -> bool:
        """Switch to the HTTP+SSE transport if the server offers it; ``True`` on success."""
        async with self._legacy_lock:
            if self.planner.mode is Mode.LEGACY_SSE:
                return True
            url = await self.nursery.start(self._legacy_task)
            return url is not None

    async def _legacy_task(self, *, task_status: trio.TaskStatus[str | None] = trio.TASK_STATUS_IGNORED) -> None:
        announced = False
        request = self.planner.plan_legacy_get()
        wait = trio.CancelScope(deadline=trio.current_time() + self.legacy_endpoint_timeout)

        def on_endpoint(url: str) -> None:
            nonlocal announced
            if not announced:
                announced = True
                wait.deadline = math.inf
                self.planner.use_legacy(url)
                task_status.started(url)

        try:
            result: PumpResult | None = None
            with wait:
                response = await self.executor.open(request)
                reader = hr.ResponseReader(
                    hr.Purpose.LEGACY_SSE, max_message_size=self.max_message_size, url=request.url
                )
                try:
                    result = await self.pump.read(reader, response, on_endpoint=on_endpoint)
                finally:
                    await response.aclose()
            what = "no endpoint event in time" if result is None else _describe(result.end)
            if announced:
                self.inbox.die(f"the 2024-11-05 event stream ended: {what}")
            else:
                self.issues(f"no 2024-11-05 HTTP+SSE transport at {request.url}: {what}")
        except TransportError as exc:
            if announced:
                self.inbox.die(f"the 2024-11-05 event stream failed: {exc}")
            else:
                self.issues(f"no 2024-11-05 HTTP+SSE transport at {request.url}: {exc}")
        finally:
            if not announced:
                task_status.started(None)
