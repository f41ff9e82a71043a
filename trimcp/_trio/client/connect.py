"""Connecting a client: ``open_client`` and the negotiation of a revision.

Theory of operation
-------------------
``open_client`` builds a transport through the registry
(``transports/registry.py``: a subprocess speaking stdio, a Streamable HTTP,
HTTP+SSE or WebSocket URL, any ``MessageStream`` the caller passes, e.g. one
end of ``memory_stream_pair``, or a kind a user registered), a client-role ``Connection`` advertising exactly
the capabilities for which it has a handler, and a ``SessionDriver`` whose
reader task it starts; then ``_negotiate`` agrees on a revision under the
connect deadline and the ``ClientSession`` (``client_session.py``) is yielded.

Server-to-client requests (sampling, elicitation, roots) are answered by the
``Handlers`` given to ``open_client`` (``options.py``), at most
``Limits.max_concurrent_requests`` at once;
in the stateless era the same handlers answer the server's ``inputRequests``
(``mrtr.py``, handed to the driver as its ``answer_input``).  The logging and
notification handlers run in the session's callback task, in order, at most
``Limits.max_pending_callbacks`` queued (see ``driver.py``).  The router that feeds
the list cache and open subscriptions (``listen.py``) is among the driver's
notification taps from its construction: nothing is attached to the driver later.

Eras (spec: basic/versioning, transports/stdio "Backward Compatibility").
With ``revision=None`` the client is dual-era: it probes with
``server/discover`` under ``Timeouts.probe``; a DiscoverResult makes a
stateless (2026-07-28) session, an ordinary error or silence a handshake-era
one (``initialize`` follows, offering the revision the server named if it
named one), and a modern refusal with no revision in common fails the
connect.  A server that only missed the probe's deadline (still starting) and
refuses ``initialize`` with -32022 naming a stateless revision is probed again.  Pinning a stateless revision probes with no fallback; pinning a
handshake revision only runs ``initialize``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Never, cast

import attrs
import trio

from ..._errors import (
    ConnectError,
    ConnectTimeout,
    LocalProtocolError,
    McpError,
    RemoteProtocolError,
    TransportClosed,
)
from ..._sansio import events as ev
from ..._sansio import extensions as ext
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.connection.core import Connection
from ..._sansio.connection.lifecycle import Role
from ..._sansio.revisions import ALL_VERSIONS, Era, get_revision
from ..._version import __version__
from .._groups import collapse
from ..driver import (
    NotificationHandler,
    NotificationTap,
    RequestContext,
    RequestHandler,
    SessionDriver,
)
from ..heartbeat import run_heartbeat
from ..stream import MessageStream
from ..transports.registry import Target, TransportOptions, resolve, transport_for
from ..transports.stdio import StdioProcessStream
from .cache import ListCache
from .client_session import ClientSession, UrlElicitation
from .listen import NotificationRouter
from .mrtr import answer_input_requests
from .options import (
    ElicitationHandler,
    Handlers,
    HttpOptions,
    Limits,
    LoggingHandler,
    RootsProvider,
    SamplingHandler,
    StdioOptions,
    Timeouts,
    regroup,
)

if TYPE_CHECKING:
    from ...config import RemoteServerConfig, ServerConfig, StdioServerConfig
    from ..oauth.provider import OAuthProvider

logger = logging.getLogger("trimcp")

#: Default ``clientInfo``.
CLIENT_INFO: dict[str, Any] = {"name": "trimcp", "version": __version__}


#: The mcpServers file parser; its entries exist only once a program imported it.
_CONFIG_MODULE = __name__.split(".")[0] + ".config"


def _entry_classes() -> tuple[type[StdioServerConfig], type[RemoteServerConfig]] | None:
    """The config entry classes, or ``None`` when ``trimcp.config`` was never imported (then
    no target can be one): a client given a command or a URL does not pay for the parser."""
    config = sys.modules.get(_CONFIG_MODULE)
    return None if config is None else (config.StdioServerConfig, config.RemoteServerConfig)


def _params(cls: Any, ctx: RequestContext) -> Any:
    # Params that do not fit the schema are the peer's mistake: answer -32602, not -32603.
    try:
        return s.from_wire(cls, ctx.params)
    except s.SchemaError as exc:
        raise McpError(rpc.INVALID_PARAMS, f"invalid {ctx.method} params: {exc}") from exc


def _to_wire(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else s.to_wire(value)


def _client_capabilities(
    sampling: SamplingHandler | None,
    elicitation: ElicitationHandler | None,
    elicitation_modes: Sequence[str],
    roots: RootsProvider | None,
    extensions: Mapping[str, Mapping[str, Any]] | None = None,
    sampling_tools: bool = False,
) -> dict[str, Any]:
    caps: dict[str, Any] = {}
    if extensions:
        caps["extensions"] = ext.declaration(extensions)
    if roots is not None:
        caps["roots"] = {"listChanged": True}
    if sampling is not None:
        caps["sampling"] = {"tools": {}} if sampling_tools else {}
    if elicitation is not None:
        # Form mode alone is the empty object: 2025-11-25 client/elicitation "Capabilities"
        # makes {} equivalent to {"form": {}}, and a 2025-06-18 peer (or a strict
        # deserialiser, e.g. a Java SDK's) knows no members at all.
        modes = set(elicitation_modes)
        unknown = modes - {"form", "url"}
        if not modes or unknown:
            raise ValueError(f"elicitation_modes must name form and/or url, not {sorted(unknown) or 'nothing'}")
        caps["elicitation"] = {} if modes == {"form"} else {m: {} for m in ("form", "url") if m in modes}
    return caps


def _request_handlers(
    sampling: SamplingHandler | None,
    elicitation: ElicitationHandler | None,
    roots: RootsProvider | None,
) -> dict[str, RequestHandler]:
    handlers: dict[str, RequestHandler] = {}
    if sampling is not None:
        sample = sampling

        async def on_sampling(ctx: RequestContext) -> dict[str, Any]:
            return _to_wire(await sample(_params(s.CreateMessageRequestParams, ctx)))

        handlers["sampling/createMessage"] = on_sampling
    if elicitation is not None:
        elicit = elicitation

        async def on_elicitation(ctx: RequestContext) -> dict[str, Any]:
            return _to_wire(await elicit(_params(s.ElicitRequestParams, ctx)))

        handlers["elicitation/create"] = on_elicitation
    if roots is not None:
        provider = roots

        async def on_roots(ctx: RequestContext) -> dict[str, Any]:
            listed = await provider() if callable(provider) else provider
            return {"roots": [_to_wire(r) for r in listed]}

        handlers["roots/list"] = on_roots
    return handlers


def _completion_tap(url_elicitation: UrlElicitation) -> Callable[[str, dict[str, Any]], None]:
    """A driver tap handing ``notifications/elicitation/complete`` ids to ``url_elicitation``."""

    def tap(method: str, params: dict[str, Any]) -> None:
        if method != "notifications/elicitation/complete":
            return
        elicitation_id = params.get("elicitationId") if isinstance(params, dict) else None
        if isinstance(elicitation_id, str):
            url_elicitation.completed(elicitation_id)
        else:
            logger.warning("notifications/elicitation/complete without an elicitationId: %r", params)

    return tap


def _notification_handler(
    logging_handler: LoggingHandler | None, notification_handler: NotificationHandler | None
) -> NotificationHandler | None:
    """The application's handlers as one; runs in the session's callback task."""
    if logging_handler is None and notification_handler is None:
        return None  # nothing to queue

    async def handle(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message" and logging_handler is not None:
            try:
                typed = s.from_wire(s.LoggingMessageNotificationParams, params)
            except s.SchemaError as exc:
                # Still reaches the generic handler below, raw.
                logger.warning("malformed log notification from the server: %s", exc)
            else:
                result = logging_handler(typed)
                if result is not None:
                    await result
        if notification_handler is not None:
            result = notification_handler(method, params)
            if result is not None:
                await result

    return handle


def open_client(
    target: Target | ServerConfig,
    *,
    revision: str | None = None,
    transport: str | None = None,
    client_info: Mapping[str, Any] | None = None,
    extensions: Mapping[str, Mapping[str, Any]] | None = None,
    auth: OAuthProvider | None = None,
    timeouts: Timeouts | None = None,
    limits: Limits | None = None,
    handlers: Handlers | None = None,
    http: HttpOptions | None = None,
    stdio: StdioOptions | None = None,
    **deprecated: Never,  # (the flat keywords of before: they work, warn, and fail type checks)
) -> AbstractAsyncContextManager[ClientSession]:
    """Connect to an MCP server: ``async with open_client(target) as session: ...``.

    ``target`` is a command line (a list of arguments, or a string split like a
    shell would) for a server speaking stdio, an ``http://``/``https://`` URL
    (Streamable HTTP, falling back to 2024-11-05 HTTP+SSE), a ``ws://``/``wss://``
    URL (WebSocket, subprotocol ``mcp``), a ready ``MessageStream``, or an entry of
    an mcpServers file (``trimcp.config``: its command, args, env and cwd, or its
    URL, headers, headersHelper and transport type; what the caller passes wins).
    The transport is chosen by the registry (``transports/registry.py``):
    ``register_transport`` adds a kind, with URL schemes of its own; ``transport``
    names the kind instead of resolving the target (``"sse"``: 2024-11-05 HTTP+SSE
    only).  A URL scheme no transport registered is a ``ValueError``.

    ``revision=None`` speaks either era: a ``server/discover`` probe answered within
    ``timeouts.probe`` makes a stateless session, otherwise ``initialize`` follows.  A
    stateless ``revision`` (e.g. ``"2026-07-28"``) refuses handshake-era servers; a
    handshake one only runs ``initialize``.  ``client_info`` is the ``clientInfo`` sent;
    ``extensions`` declares the extensions the client speaks, id -> settings (e.g.
    ``trimcp.apps.client_extension()``), in its capabilities; ``auth`` (an
    ``OAuthProvider``) authorizes HTTP requests.

    The groups (``options.py``): ``timeouts`` (``Timeouts``: connect, probe, request,
    progress, heartbeat), ``limits`` (``Limits``: message size, pages, input rounds,
    concurrency, failures in a row), ``handlers`` (``Handlers``: sampling, elicitation,
    roots, logging, notifications; the client declares what it has a handler for),
    ``http`` (``HttpOptions``: headers, a headers helper, an httpx client) and
    ``stdio`` (``StdioOptions``: env, cwd, stderr, shutdown).  The flat keywords of
    before the groups still work and warn (``options.OLD_KEYWORDS``).
    """
    groups = regroup(
        {"timeouts": timeouts, "limits": limits, "handlers": handlers, "http": http, "stdio": stdio}, deprecated
    )
    return _open_client(
        target,
        revision=revision,
        transport=transport,
        client_info=client_info,
        extensions=extensions,
        auth=auth,
        timeouts=groups["timeouts"] or Timeouts(),
        limits=groups["limits"] or Limits(),
        handlers=groups["handlers"] or Handlers(),
        http=groups["http"] or HttpOptions(),
        stdio=groups["stdio"] or StdioOptions(),
    )


@asynccontextmanager
async def _open_client(
    target: Target | ServerConfig,
    *,
    revision: str | None,
    transport: str | None,
    client_info: Mapping[str, Any] | None,
    extensions: Mapping[str, Mapping[str, Any]] | None,
    auth: OAuthProvider | None,
    timeouts: Timeouts,
    limits: Limits,
    handlers: Handlers,
    http: HttpOptions,
    stdio: StdioOptions,
) -> AsyncIterator[ClientSession]:
    where: Target
    entries = _entry_classes()
    if entries is not None and isinstance(target, entries[0]):
        # An entry of an mcpServers file: its fields, under what the caller passed.
        stdio = attrs.evolve(
            stdio,
            env={**target.env, **(stdio.env or {})} or None,
            cwd=stdio.cwd if stdio.cwd is not None else target.cwd,
            shutdown=stdio.shutdown if stdio.shutdown is not None else target.shutdown,
        )
        where = [target.command, *target.args]
    elif entries is not None and isinstance(target, entries[1]):
        if target.oauth is not None and auth is None:
            raise ValueError(f"server {target.name!r} uses OAuth: pass auth=OAuthProvider(...)")
        http = attrs.evolve(
            http,
            headers={**target.headers, **(http.headers or {})} or None,
            headers_helper=http.headers_helper if http.headers_helper is not None else target.headers_helper,
        )
        transport = transport or target.transport
        where = target.url
    else:
        where = cast("Target", target)  # not an entry: no entry class exists, or it is none of them
    if (
        entries is not None
        and isinstance(target, entries)
        and timeouts.heartbeat is None
        and target.heartbeat is not None
    ):
        timeouts = attrs.evolve(
            timeouts, heartbeat=target.heartbeat.interval, heartbeat_timeout=target.heartbeat.timeout
        )
    # Which transport, and is it one we have: a usage error before anything starts.
    factory = transport_for(resolve(where) if transport is None else transport)
    options = TransportOptions(
        env=stdio.env,
        cwd=stdio.cwd,
        on_stderr=stdio.on_stderr,
        max_message_size=limits.max_message_size,
        connect_timeout=timeouts.connect,
        headers=http.headers,
        headers_helper=http.headers_helper,
        http_client=http.http_client,
        auth=auth,
        shutdown=stdio.shutdown,
    )
    versions: tuple[str, ...] = ALL_VERSIONS
    if revision is not None:
        if revision not in versions:
            raise LocalProtocolError(f"revision {revision!r} is not one this client speaks ({', '.join(versions)})")
        versions = (revision,)
    connection = Connection(
        Role.CLIENT,
        info=dict(client_info or CLIENT_INFO),
        capabilities=_client_capabilities(
            handlers.sampling,
            handlers.elicitation,
            handlers.elicitation_modes,
            handlers.roots,
            extensions,
            handlers.sampling_tools,
        ),
        supported_versions=versions,
        max_message_size=limits.max_message_size,
    )
    # The session's notification observers, in the reader task: URL elicitation's completions,
    # then the router (the list cache, then open subscriptions).
    cache: ListCache[Any] = ListCache()
    router = NotificationRouter(taps=[cache.on_notification])
    taps: list[NotificationTap] = [router]
    if handlers.url_elicitation is not None:
        taps.insert(0, _completion_tap(handlers.url_elicitation))
    with collapse():
        async with AsyncExitStack() as stack:
            stream = await stack.enter_async_context(factory(where, options))
            driver = SessionDriver(
                connection,
                stream,
                request_handlers=_request_handlers(handlers.sampling, handlers.elicitation, handlers.roots),
                notification_handler=_notification_handler(handlers.logging, handlers.notification),
                notification_taps=taps,
                request_timeout=timeouts.request,
                max_input_rounds=limits.max_input_rounds,
                answer_input=answer_input_requests,
                max_concurrent_requests=limits.max_concurrent_requests,
                max_pending_callbacks=limits.max_pending_callbacks,
                reset_timeout_on_progress=timeouts.reset_on_progress,
                max_total_timeout=timeouts.max_total,
                max_consecutive_failures=limits.max_consecutive_failures,
            )
            async with trio.open_nursery() as nursery:
                await nursery.start(driver.run)
                # The stream is ours to close on every way out, a failed handshake included.
                try:
                    handshake = await _negotiate(driver, revision, timeouts.connect, timeouts.probe)
                    if timeouts.heartbeat is not None:
                        nursery.start_soon(run_heartbeat, driver, timeouts.heartbeat, timeouts.heartbeat_timeout)
                    yield ClientSession(
                        driver,
                        handshake,
                        limits.max_pages,
                        router=router,
                        cache=cache,
                        url_elicitation=handlers.url_elicitation,
                    )
                finally:
                    await driver.aclose()
                    nursery.cancel_scope.cancel()


async def _negotiate(
    driver: SessionDriver, revision: str | None, connect_timeout: float, probe_timeout: float
) -> ev.Initialized | ev.Discovered:
    """Agree on a revision: probe and/or initialize, all within ``connect_timeout``."""
    pinned = None if revision is None else get_revision(revision).era
    phase = "server/discover"
    try:
        with trio.fail_after(connect_timeout):
            legacy_version: str | None = revision
            if pinned is not Era.HANDSHAKE:
                limit = None if pinned is Era.STATELESS else min(probe_timeout, connect_timeout)
                outcome = await driver.discover(protocol_version=revision, timeout=limit)
                if isinstance(outcome, ev.Discovered):
                    return outcome
                if isinstance(outcome, ev.HandshakeFailed):
                    raise ConnectError(f"server/discover failed: {outcome.reason}")
                if pinned is Era.STATELESS:
                    raise ConnectError(
                        f"the server speaks only the handshake era ({outcome.reason}), but revision "
                        f"{revision} was pinned; pass revision=None to fall back to initialize"
                    )
                legacy_version = outcome.version
            phase = "initialize"
            return await driver.initialize(protocol_version=legacy_version)
    except trio.TooSlowError:
        tail = _stderr_tail(driver.stream)
        message = f"no answer to {phase} within {connect_timeout} s"
        if tail:
            message += f"\n--- last stderr lines ---\n{tail}"
        raise ConnectTimeout(message, phase=phase, seconds=connect_timeout, stderr_tail=tail) from None
    except TransportClosed as exc:
        # The transport's own account (the process exited with status 3, the port refused
        # us), not the "session is closed" wrapper a request sees; it says what failed and
        # where, so it is the message as it is (a phase in front would only say "failed"
        # once more; __cause__ keeps the transport's error, its exit status and stderr).
        cause = driver.closed_error if driver.closed_error is not None else exc
        raise ConnectError(str(cause)) from exc
    except (McpError, RemoteProtocolError) as exc:
        # A refused or unusable handshake is a failure to connect, whatever its cause;
        # the peer's error (with its code and data) stays reachable as __cause__.
        raise ConnectError(f"{phase} failed: {exc}") from exc


def _stderr_tail(stream: MessageStream) -> str:
    """What a stdio server wrote to its stderr last (why it is silent, often)."""
    return stream.stderr_tail() if isinstance(stream, StdioProcessStream) else ""
