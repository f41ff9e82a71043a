"""One server of a pool: its connect, the task that holds its session, and what it restores.

Theory of operation
-------------------
A ``ServerSlot`` is the pool's memo for one (name, config) pair.  Its session
is held by one task in the pool's nursery (``open_client`` is a context
manager: the task that enters it must leave it), so a caller never owns the
connection and a caller's cancellation never tears down a connect others wait
for:

1. ``session()`` returns the live session, or starts the holder task if none
   is running, and waits for the connect it makes.  Concurrent callers share
   that one connect.
2. The holder waits out the back-off (``_sansio/host/backoff.py``: nothing
   before the first connect; after n failures in a row a jittered, capped,
   exponential delay), skips a server marked as needing authorization
   (``AuthNeededCache``), then connects while holding its transport's
   connection limiter (so "at most 3 stdio servers connecting at once" holds
   for ``connect_all`` and lazy connects alike).
3. Once connected it lists the tools (when the server has them), restores what
   the pool was asked to keep across reconnects - resource subscriptions and
   the log level (handshake era), or the same through ``subscriptions/listen``
   and the per-request log level (stateless era) - and publishes the status.
4. It then waits for the session to end (``wait_closed``: the transport died,
   N consecutive transport failures, a heartbeat went unanswered) or for the
   pool to close it.  On the way out the memo and the cached lists are
   dropped, so the next use connects again.

``list_changed`` refreshes the cached list and publishes ``ToolsChanged``:
from the notification handler in the handshake era, from the pool's own listen
stream in the stateless era.  A session that ended within ``STABLE_SESSION``
seconds of its start counts as one more failure in a row (a server that
crashes on its first call must not be respawned in a loop); one that lived
longer starts the count afresh.
"""

from __future__ import annotations

import logging
import math
import traceback
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, Final

import attrs
import trio

from .._errors import AuthError, McpError, RemoteProtocolError, TrimcpError
from .._sansio import schema as s
from .._sansio.host.backoff import Backoff
from .._sansio.revisions import Era
from .._trio.client import ClientSession, open_client
from .._trio.client.options import Handlers, merge_options
from .._trio.oauth.auth_cache import AuthNeededCache
from ..config import Redactor, RemoteServerConfig, ServerConfig, StdioServerConfig
from .event_hub import EventHub
from .status import (
    ServerNotification,
    ServerState,
    ServerStatus,
    StatusChanged,
    ToolsChanged,
    config_key,
)

__all__ = ["ServerSlot", "ServerUnavailable", "SlotContext"]

logger = logging.getLogger("trimcp.host")

#: A session that lived at least this long (seconds) resets the failure count when it ends.
STABLE_SESSION: Final = 60.0
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
_LIST_CHANGED: Final = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class ServerUnavailable(TrimcpError):
    """The pool cannot give a session for this server now; ``status`` says why."""

    def __init__(self, status: ServerStatus) -> None:
        what = {
            ServerState.DISABLED: "is disabled",
            ServerState.NEEDS_AUTH: "needs authorization",
        }.get(status.state, "is unavailable")
        detail = f": {status.reason}" if status.reason else ""
        super().__init__(f"server {status.name!r} {what}{detail}")
        self.status = status


@attrs.define
class SlotContext:
    """What every slot of one pool shares."""

    nursery: trio.Nursery
    hub: EventHub
    limits: Mapping[str, trio.CapacityLimiter]
    backoff: Backoff
    random: Callable[[], float]
    auth_cache: AuthNeededCache | None
    #: ``open_client`` keywords for one server (the pool's defaults with its overrides).
    client_options: Callable[[ServerConfig], dict[str, Any]]
    #: Hides what the entries' ``${VAR}``s expanded to in statuses and the pool's log lines
    #: (``trimcp.config``): the pool's text reaches people.
    redact: Redactor = attrs.field(factory=Redactor)


def transport_of(config: ServerConfig) -> str:
    return config.transport


@attrs.define(eq=False)
class _Attempt:
    """One holder task: its connect, then the session it holds until that ends."""

    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    connected: trio.Event = attrs.field(factory=trio.Event)  # the connect ended, either way
    finished: trio.Event = attrs.field(factory=trio.Event)  # the holder task is done
    session: ClientSession | None = None
    error: BaseException | None = None
    reset: bool = False
    connected_for_long: bool = False


class ServerSlot:
    """The pool's memo for one server: at most one session, held by one task."""

    def __init__(self, ctx: SlotContext, config: ServerConfig, *, disabled: str | None = None) -> None:
        self.ctx = ctx
        self.config = config
        self.name = config.name
        self.key = config_key(config)
        self.session: ClientSession | None = None
        #: Cached lists by kind ("tools", "prompts", "resources"); dropped with the session.
        self.lists: dict[str, tuple[Any, ...]] = {}
        #: Kept across reconnects: restored on every new session.
        self.resource_uris: set[str] = set()
        self.log_level: str | None = None
        self.status = ServerStatus(self.name, ServerState.PENDING, transport_of(config))
        if disabled is not None:
            self.status = attrs.evolve(self.status, state=ServerState.DISABLED, reason=disabled)
        self._streak = 0
        self._attempt: _Attempt | None = None
        self._listen_scope: trio.CancelScope | None = None
        self._serving: trio.Nursery | None = None
        self._closed = False

    # ------------------------------------------------------------------ status

    def _set(self, **changes: Any) -> None:
        old, self.status = self.status, attrs.evolve(self.status, **changes)
        if old != self.status:
            self.ctx.hub.publish(StatusChanged(self.name, old, self.status))

    def _text(self, exc: BaseException) -> str:
        """An exception's text as the pool shows it (statuses, log lines): redacted."""
        return self.ctx.redact(str(exc))

    @property
    def remote_url(self) -> str | None:
        return self.config.url if isinstance(self.config, RemoteServerConfig) else None

    # ------------------------------------------------------------------ use

    async def session_now(self) -> ClientSession:
        """The live session, connecting (or waiting for the connect in flight) if needed."""
        for round in range(2):
            if self.status.state is ServerState.DISABLED or self._closed:
                await trio.lowlevel.checkpoint()
                raise ServerUnavailable(self.status)
            attempt = self._attempt or self._start()
            if attempt.scope.cancel_called:  # being closed (disabled, reset): let it finish
                await attempt.finished.wait()
                continue
            await attempt.connected.wait()  # (already set once it is serving: a checkpoint)
            session = attempt.session
            if session is not None and not session.is_closed:
                return session
            if session is not None:
                # It ended (a moment ago, or while we woke up): once its holder has
                # cleaned up, the next round connects again.
                await attempt.finished.wait()
                if round == 0:
                    continue
                assert session.closed_error is not None
                raise session.closed_error
            if attempt.error is not None:
                raise attempt.error
            raise ServerUnavailable(self.status)
        raise AssertionError("unreachable")

    def _start(self) -> _Attempt:
        attempt = self._attempt = _Attempt()
        self.ctx.nursery.start_soon(self._hold, attempt)
        return attempt

    async def reset(self, session: ClientSession) -> None:
        """Close ``session`` (e.g. after its HTTP session expired) so the next use reconnects
        at once: a reset is not a failure."""
        attempt = self._attempt
        if attempt is None or attempt.session is not session:
            return
        attempt.reset = True
        attempt.scope.cancel()
        await attempt.finished.wait()

    async def close(self) -> None:
        """Close for good (the pool closes, or the config changed)."""
        self._closed = True
        attempt = self._attempt
        if attempt is not None:
            attempt.scope.cancel()
            await attempt.finished.wait()

    def set_disabled(self, reason: str | None) -> None:
        if reason is None:
            if self.status.state is ServerState.DISABLED:
                self._set(state=ServerState.PENDING, reason=None)
            return
        self._set(state=ServerState.DISABLED, reason=reason)
        if self._attempt is not None:
            self._attempt.scope.cancel()

    async def logged_in(self) -> None:
        """The user authorized: forget the auth-needed mark and connect on next use."""
        url = self.remote_url
        if url is not None and self.ctx.auth_cache is not None:
            await self.ctx.auth_cache.clear(url)
        if self.status.state is ServerState.NEEDS_AUTH:
            self._streak = 0
            self._set(state=ServerState.PENDING, reason=None)

    # ------------------------------------------------------------------ the holder task

    async def _hold(self, attempt: _Attempt) -> None:
        started_at = math.inf
        try:
            with attempt.scope:
                async with AsyncExitStack() as stack:
                    session = await self._connect(stack, attempt)
                    if session is None:
                        return
                    started_at = trio.current_time()
                    attempt.session = self.session = session
                    await self._serve(session, attempt.connected)
        except Exception as exc:
            logger.warning("server %r: %s", self.name, self._text(exc))
            if logger.isEnabledFor(logging.DEBUG):
                # Formatted here, not by the handler: the traceback quotes the exception too.
                trace = "".join(traceback.format_exception(exc))
                logger.debug("server %r failed:\n%s", self.name, self.ctx.redact(trace).rstrip())
            attempt.error = exc
            if attempt.session is None:
                self._streak += 1
                self._set(state=ServerState.FAILED, reason=self._text(exc), failures=self._streak)
        finally:
            session = attempt.session
            self.session = None
            self.lists.clear()
            self._listen_scope = self._serving = None
            if session is not None:
                lived = trio.current_time() - started_at
                attempt.connected_for_long = lived >= STABLE_SESSION
                if attempt.reset:
                    pass  # closed on purpose to reconnect at once: not a failure
                elif attempt.connected_for_long:
                    self._streak = 1
                else:
                    self._streak += 1
                closed = session.closed_error
                if self._closed or self.status.state is ServerState.DISABLED:
                    pass
                elif attempt.scope.cancel_called:
                    self._set(state=ServerState.PENDING, reason=None, revision=None)
                else:
                    reason = self._text(closed) if closed is not None else "session closed"
                    self._set(state=ServerState.FAILED, reason=reason, revision=None, failures=self._streak)
            elif self.status.state is ServerState.CONNECTING:
                self._set(state=ServerState.PENDING, reason=None)  # cancelled while connecting
            if self._attempt is attempt:
                self._attempt = None
            attempt.connected.set()
            attempt.finished.set()

    async def _connect(self, stack: AsyncExitStack, attempt: _Attempt) -> ClientSession | None:
        delay = self.ctx.backoff.delay(self._streak, self.ctx.random)
        if delay > 0:
            await trio.sleep(delay)
        url = self.remote_url
        if url is not None and self.ctx.auth_cache is not None and await self.ctx.auth_cache.is_marked(url):
            self._unavailable(attempt, ServerState.NEEDS_AUTH, "marked as needing authorization (auth-needed cache)")
            return None
        options = self.ctx.client_options(self.config)
        if (
            isinstance(self.config, RemoteServerConfig)
            and self.config.oauth is not None
            and options.get("auth") is None
        ):
            self._unavailable(
                attempt, ServerState.NEEDS_AUTH, "the entry uses OAuth and the pool has no auth provider for it"
            )
            return None
        limiter = self.ctx.limits["stdio" if isinstance(self.config, StdioServerConfig) else "remote"]
        async with limiter:
            # "connecting" once it holds a place under the limit: until then it is queued (pending).
            self._set(state=ServerState.CONNECTING, reason=None)
            began = trio.current_time()
            try:
                session = await stack.enter_async_context(
                    open_client(
                        self.config,
                        **merge_options(options, {"handlers": Handlers(notification=self._on_notification)}),
                    )
                )
            except AuthError as exc:
                if url is not None and self.ctx.auth_cache is not None:
                    await self.ctx.auth_cache.mark(url)
                self._unavailable(attempt, ServerState.NEEDS_AUTH, self._text(exc), cause=exc)
                return None
            except Exception as exc:
                self._streak += 1
                attempt.error = exc
                self._set(state=ServerState.FAILED, reason=self._text(exc), failures=self._streak)
                return None
            # Listing and restoring is part of the connect: it stays under the limit, so a
            # "connecting" status always holds a place and "connected" is ready for use.
            tools = await self._restore(session)
            took = trio.current_time() - began
        self._set(
            state=ServerState.CONNECTED,
            reason=None,
            revision=session.protocol_version,
            tools=None if tools is None else len(tools),
            connect_seconds=took,
            failures=0,
            connects=self.status.connects + 1,
        )
        if tools is not None:
            self.ctx.hub.publish(ToolsChanged(self.name, tools))
        return session

    def _unavailable(
        self, attempt: _Attempt, state: ServerState, reason: str, cause: BaseException | None = None
    ) -> None:
        self._set(state=state, reason=reason)
        attempt.error = ServerUnavailable(self.status)
        attempt.error.__cause__ = cause

    async def _restore(self, session: ClientSession) -> tuple[s.Tool, ...] | None:
        """List the tools and put back what the pool keeps across reconnects."""
        if session.era is Era.STATELESS:
            session.log_level = self.log_level  # travels in every request; the listen stream
        else:  # carries the resource subscriptions
            try:
                if self.log_level is not None:
                    await session.set_logging_level(self.log_level)
                for uri in sorted(self.resource_uris):
                    await session.subscribe_resource(uri)
            except (McpError, RemoteProtocolError) as exc:
                logger.warning("server %r: could not restore its subscriptions: %s", self.name, self._text(exc))
        if "tools" not in session.server_capabilities:
            return None
        try:
            tools = tuple(await session.list_tools())
        except (McpError, RemoteProtocolError) as exc:
            # A server whose tools/list fails is still connected: its other features may work.
            logger.warning("server %r: tools/list failed: %s", self.name, self._text(exc))
            return None
        self.lists["tools"] = tools
        return tools

    async def _serve(self, session: ClientSession, connected: trio.Event) -> None:
        """Hold the session until it ends (or the pool cancels us).  Callers get it once the
        stateless-era listen stream is acknowledged: a ``list_changed`` sent right after the
        connect is then not lost."""
        async with trio.open_nursery() as nursery:
            self._serving = nursery
            if session.era is Era.STATELESS:
                await self.relisten(session)
            connected.set()
            await session.wait_closed()
            nursery.cancel_scope.cancel()

    # ------------------------------------------------------------------ notifications

    async def relisten(self, session: ClientSession) -> None:
        """Stateless era: (re)open the pool's ``subscriptions/listen`` stream for what the
        server can send and the resources subscribed to.  The new stream is acknowledged
        before the old one closes, so no notification falls between them."""
        caps = session.server_capabilities
        flags = [bool((caps.get(kind) or {}).get("listChanged")) for kind in ("tools", "prompts", "resources")]
        uris = sorted(self.resource_uris)
        old, self._listen_scope = self._listen_scope, None
        if (any(flags) or uris) and self._serving is not None:
            ready = trio.Event()
            scope = self._listen_scope = trio.CancelScope()
            self._serving.start_soon(self._listen, session, flags, uris, scope, ready)
            await ready.wait()
        if old is not None:
            old.cancel()

    async def _listen(
        self,
        session: ClientSession,
        flags: list[bool],
        uris: list[str],
        scope: trio.CancelScope,
        ready: trio.Event,
    ) -> None:
        with scope:
            try:
                async with session.listen(
                    tools_list_changed=flags[0],
                    prompts_list_changed=flags[1],
                    resources_list_changed=flags[2],
                    resource_uris=uris,
                ) as stream:
                    ready.set()
                    async for _ in stream:
                        pass  # each one also reaches _on_notification, as every notification does
            except TrimcpError as exc:
                if not session.is_closed:
                    logger.warning("server %r: subscriptions/listen failed: %s", self.name, self._text(exc))
            finally:
                ready.set()

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        kind = _LIST_CHANGED.get(method)
        session = self.session
        if kind is not None:
            self.lists.pop(kind, None)
            if kind == "tools" and session is not None and not session.is_closed:
                try:
                    tools = tuple(await session.list_tools(refresh=True))
                except TrimcpError as exc:
                    logger.warning("server %r: tools/list after list_changed failed: %s", self.name, self._text(exc))
                else:
                    self.lists["tools"] = tools
                    self._set(tools=len(tools))
                    self.ctx.hub.publish(ToolsChanged(self.name, tools))
        if method != ACKNOWLEDGED:  # the pool's own listen stream, not news
            self.ctx.hub.publish(ServerNotification(self.name, method, params))
