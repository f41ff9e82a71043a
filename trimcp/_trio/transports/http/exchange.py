"""One POST exchange of the HTTP client: the actions of its policy, carried out.

Theory of operation
-------------------
``PostRunner.carry`` runs one message the session sent (spec 2025-11-25
basic/transports "Sending Messages to the Server"; 2026-07-28
basic/transports/streamable-http), either as a task of its own, which the
session starts without waiting for it (``send``), or in the task of the caller
that waits for the request's answer anyway (``begin_request``, see
``client.py``): each exchange waits until the one sent before it is on the
network (``after``), so messages leave in order while answers stream back
concurrently.  Then it is a loop: ask the ``ExchangePolicy`` (``_sansio/http/client/policy.py``) what to do,
do it, report the outcome as a fact, until the policy's action ends the
exchange.  Doing means: POST (with the OAuth provider's header), read the
response through the ``Pump``, authorize, ask the headers helper again,
re-initialize or fall back (``SessionKeeper``), resume (``StreamFollower``),
wait for an answer coming on another stream, open the standalone stream, tell
the session the request failed - with a typed error - or that it may re-issue it.

Each exchange runs under ``post_timeout`` (from the send until the answer),
except ``subscriptions/listen``, which lives as long as the session wants it.
An exchange run by its caller (*inline*) ends as soon as its answer is in: an
event stream the server keeps open after the answer is read to its end by a
task of the transport (``_linger``), and the answer itself comes back to the
caller when the session could take it at once (``Inbox.deliver``).
A re-issued request names the old one in ``SendMeta.reissue_of``; its
exchange starts with the re-issue count the old one reached.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ...._errors import AuthError, ConnectError, TransportError
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.client import policy as p
from ...._sansio.http.client import response as hr
from ...._sansio.http.client.plan import HttpPlanner
from ...oauth.hook import AuthHook, AuthRound
from ...stream import Received, SendMeta
from .executor import Executor, HttpResponse, noop
from .follower import StreamFollower
from .headers_helper import DynamicHeaders
from .inbox import Exchange, Inbox, IssueLog
from .keeper import SessionKeeper
from .pump import Pump, reader_for

__all__ = ["PostRunner"]


class PostRunner:
    def __init__(
        self,
        planner: HttpPlanner,
        executor: Executor,
        pump: Pump,
        inbox: Inbox,
        keeper: SessionKeeper,
        follower: StreamFollower,
        headers: DynamicHeaders,
        auth: AuthHook | None,
        issues: IssueLog,
        nursery: trio.Nursery,
        *,
        post_timeout: float | None,
        reconnect: p.ReconnectPolicy,
        legacy_fallback: bool,
        max_message_size: int,
    ) -> None:
        self.planner = planner
        self.executor = executor
        self.pump = pump
        self.inbox = inbox
        self.keeper = keeper
        self.follower = follower
        self.headers = headers
        self.auth = auth
        self.issues = issues
        #: Where an inline exchange's event stream is read after its answer (``_linger``).
        self.nursery = nursery
        self.post_timeout = post_timeout
        self.reconnect = reconnect
        self.legacy_fallback = legacy_fallback
        self.max_message_size = max_message_size
        #: Whether the server ever answered (before that, unreachable is fatal).
        self.reached_server = False
        #: Re-issue counts by the id of the request the session may send again.
        self._reissues: dict[rpc.RequestId, int] = {}
        #: What carries out each action that leads to a fact (built once: ``_run`` is per request).
        self._steps: dict[type, Callable[[Exchange, Any, _Attempt], Awaitable[p.ExchangeFact]]] = {
            p.Send: self._post,
            p.Authorize: self._authorize,
            p.RefreshHeaders: self._refresh_headers,
            p.ReadBody: self._read_body,
            p.Reinitialize: self._reinitialize,
            p.FallBack: self._fall_back,
            p.Resume: self._resume,
        }

    async def carry(
        self,
        message: rpc.Message,
        meta: SendMeta,
        body: bytes,
        *,
        after: trio.Event | None = None,
        on_sent: Callable[[], None] = noop,
        inline: bool = False,
    ) -> Received | None:
        """One message's exchange: in a task of its own, or (``inline``) in the task of
        the caller waiting for its answer.

        ``after`` is set once the message sent before this one is on the wire: this one
        goes out after it, so messages leave in the order they were sent although no
        caller waits for its POST.  ``on_sent`` is called once, when the request is on
        the wire or the exchange ended without sending it.  Returns the answer when an
        inline exchange got it back for its caller to hand to the session (see
        ``Inbox.deliver``), else ``None``: it went to the session through the inbox."""
        started = False

        def mark_sent() -> None:
            nonlocal started
            if not started:
                started = True
                on_sent()

        ex: Exchange | None = None
        try:
            if after is not None and not after.is_set():
                await after.wait()
            if not self.keeper.ready.is_set() and not meta.opens_session:
                # (Tested first: a set Event's wait() still yields.)  ``initialize`` starts a
                # session of its own: it waits for none being set up.
                await self.keeper.ready.wait()
            plan = self.planner.plan_post(message, body, header_params=meta.header_params)
            reissues = self._reissues.pop(meta.reissue_of, 0) if meta.reissue_of is not None else 0
            policy = p.ExchangePolicy(
                plan,
                self.reconnect,
                reissues=reissues,
                max_auth_rounds=0 if self.auth is None else self.auth.max_rounds,
                headers_helper=self.headers.helper_retries,
            )
            ex = Exchange(message, meta, body, policy, inline=inline)
            self.inbox.register(ex)
            unlimited = self.post_timeout is None or plan.method == p.LISTEN
            deadline = math.inf if unlimited else trio.current_time() + float(self.post_timeout or 0)
            with trio.CancelScope(deadline=deadline) as ex.scope:
                await self._run(ex, mark_sent)
            if ex.scope.cancelled_caught and not ex.cancelled:
                await self._end(ex, ex.policy.decide(p.TimedOut(float(self.post_timeout or 0))))
            elif ex.expects_answer and not ex.answered.is_set() and not ex.cancelled:
                # (Every way the policy ends an exchange answers or fails it; this is a backstop.)
                await self.inbox.fail(ex, TransportError(f"the exchange for {ex.method} ended without an answer"))
        except TransportError as exc:  # a backstop too: the executors map their failures to facts
            if ex is not None:
                await self.inbox.fail(ex, exc)
        except BaseException:
            if ex is not None and inline and ex.plan.stateless_version is not None and not ex.answered.is_set():
                # The caller was cancelled: closing its 2026-07-28 stream *is* the cancellation.
                self.inbox.closed_by_caller(ex)
            raise
        finally:
            mark_sent()
            if ex is not None:
                self.inbox.unregister(ex)
        return None if ex is None else ex.direct

    async def _run(self, ex: Exchange, mark_sent: Callable[[], None]) -> None:
        """Carry out the policy's actions until one ends the exchange."""
        steps = self._steps
        action: p.Action = p.Send()
        attempt = _Attempt(mark_sent)
        try:
            while not isinstance(action, p.ENDING):
                fact = await steps[type(action)](ex, action, attempt)
                action = ex.policy.decide(fact)
        finally:
            await attempt.close()
        await self._end(ex, action)

    async def _end(self, ex: Exchange, action: p.Action) -> None:
        """The actions that end an exchange."""
        if isinstance(action, p.GiveUp):
            await self.inbox.fail(ex, action.error)
        elif isinstance(action, p.Reissue):
            await trio.sleep(action.delay)
            if ex.request_id is not None:
                self._reissues[ex.request_id] = action.reissues
            await self.inbox.fail(ex, action.error, may_reissue=True)
        elif isinstance(action, p.AwaitElsewhere):
            await ex.answered.wait()
        elif isinstance(action, p.OpenStandalone):
            self.follower.start_standalone()
        elif isinstance(action, p.Report):
            self.issues(action.detail)
        elif isinstance(action, p.Die):
            ex.cancelled = True
            self.inbox.die(action.reason)

    # -- the actions that lead to a fact -----------------------------------------------

    async def _post(self, ex: Exchange, action: p.Send, attempt: _Attempt) -> p.ExchangeFact:
        """POST (planned afresh after the first time, for the new session or headers)."""
        if attempt.posts:
            ex.policy.plan = self.planner.plan_post(ex.message, ex.body, header_params=ex.meta.header_params)
        attempt.posts += 1
        request = ex.plan.request
        if self.auth is not None:
            try:
                request, attempt.generation = await self.auth.authorize(request)
            except AuthError as exc:
                return p.Authorized(False, exc)
        try:
            response = await self.executor.open(request, sent=attempt.mark_sent)
        except ConnectError as exc:
            attempt.mark_sent()
            return p.Unreachable(str(exc), self.reached_server)
        except TransportError as exc:  # ConnectionLost
            return p.Lost(str(exc))
        self.reached_server = True
        attempt.response = response
        if self.auth is not None:
            self.auth.observe(request.url, response.headers)
        if response.status in (401, 403):
            wants = self.auth is not None and self.auth.wants(response.status, response.headers)
            return p.Challenged(response.status, wants)
        return await self._read_body(ex, p.ReadBody(), attempt)

    async def _authorize(self, ex: Exchange, action: p.Authorize, attempt: _Attempt) -> p.ExchangeFact:
        assert self.auth is not None and attempt.response is not None
        status, headers = attempt.response.status, attempt.response.headers
        await attempt.close()
        return await self.auth.challenge(status, headers, attempt.generation, attempt.auth_round)

    async def _refresh_headers(self, ex: Exchange, action: p.RefreshHeaders, attempt: _Attempt) -> p.ExchangeFact:
        await attempt.close()
        try:
            await self.headers.refresh()
        except TransportError as exc:
            return p.HeadersRefreshed(exc)
        return p.HeadersRefreshed()

    async def _read_body(self, ex: Exchange, action: p.ReadBody, attempt: _Attempt) -> p.ExchangeFact:
        assert attempt.response is not None
        plan = ex.plan
        reader = reader_for(plan, legacy_fallback=self.legacy_fallback, max_message_size=self.max_message_size)
        quiet = plan.method == "server/discover"  # the era probe's refusal is expected
        level = logging.DEBUG if quiet else logging.WARNING
        try:
            result = await self.pump.read(
                reader, attempt.response, linger=True, level=level, origin=ex, inline=ex.inline
            )
            if result.detached:
                # An inline exchange: its caller goes on with the answer while a task of the
                # transport reads the rest of the event stream (``linger``), then closes it.
                response, attempt.response = attempt.response, None
                self.nursery.start_soon(self._linger, reader, response, ex, level)
        finally:
            await attempt.close()
        return p.Read(result.end, ex.answered.is_set(), result.elsewhere, result.accepted, result.messages)

    async def _linger(self, reader: hr.ResponseReader, response: HttpResponse, ex: Exchange, level: int) -> None:
        """The rest of an inline exchange's event stream, after its answer."""
        try:
            await self.pump.read(reader, response, linger=True, level=level, origin=ex)
        except TransportError as exc:
            self.issues(f"the event stream of {ex.method} failed after its answer: {exc}", logging.DEBUG)
        finally:
            await response.aclose()

    async def _reinitialize(self, ex: Exchange, action: p.Reinitialize, attempt: _Attempt) -> p.ExchangeFact:
        return p.Reinitialized(await self.keeper.reinitialize(action.generation))

    async def _fall_back(self, ex: Exchange, action: p.FallBack, attempt: _Attempt) -> p.ExchangeFact:
        return p.FellBack(await self.keeper.fall_back())

    async def _resume(self, ex: Exchange, action: p.Resume, attempt: _Attempt) -> p.ExchangeFact:
        return p.Resumed(await self.follower.resume(ex, action))


class _Attempt:
    """What one run of an exchange holds between actions: the open response, the OAuth
    token generation its last POST used, how many POSTs went out."""

    def __init__(self, mark_sent: Callable[[], None]) -> None:
        self.mark_sent = mark_sent
        self.response: HttpResponse | None = None
        self.generation = 0
        self.posts = 0
        self.auth_round = AuthRound()

    async def close(self) -> None:
        response, self.response = self.response, None
        if response is not None:
            await response.aclose()
