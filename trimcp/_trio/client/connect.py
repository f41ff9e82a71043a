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
handlers given to ``open_client``, at most ``max_concurrent_requests`` at once;
in the stateless era the same handlers answer the server's ``inputRequests``
(``mrtr.py``, handed to the driver as its ``answer_input``).  The logging and
notification handlers run in the session's callback task, in order, at most
``max_pending_callbacks`` queued (see ``driver.py``).

Eras (spec: basic/versioning, transports/stdio "Backward Compatibility").
With ``revision=None`` the client is dual-era: it probes with
``server/discover`` under ``probe_timeout``; a DiscoverResult makes a
stateless (2026-07-28) session, an ordinary error or silence a handshake-era
one (``initialize`` follows, offering the revision the server named if it
named one), and a modern refusal with no revision in common fails the
connect.  A server that only missed the probe's deadline (still starting) and
refuses ``initialize`` with -32022 naming a stateless revision is probed again.  Pinning a stateless revision probes with no fallback; pinning a
handshake revision only runs ``initialize``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Union

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
from ..._sansio.connection.health import DEFAULT_MAX_CONSECUTIVE_FAILURES
from ..._sansio.connection.lifecycle import Role
from ..._sansio.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from ..._sansio.revisions import ALL_VERSIONS, Era, get_revision
from ...config import RemoteServerConfig, ServerConfig, ShutdownPolicy, StdioServerConfig
from .._groups import collapse
from ..callbacks import DEFAULT_MAX_PENDING_CALLBACKS
from ..driver import NotificationHandler, RequestContext, RequestHandler, SessionDriver
from ..heartbeat import DEFAULT_HEARTBEAT_TIMEOUT, run_heartbeat
from ..request_slots import DEFAULT_MAX_CONCURRENT_REQUESTS
from ..stream import MessageStream
from ..transports.registry import Target, TransportOptions, resolve, transport_for
from ..transports.stdio import StdioProcessStream
from .client_session import ClientSession, UrlElicitation
from .mrtr import answer_input_requests

if TYPE_CHECKING:
    import httpx

    from ..oauth.provider import OAuthProvider
    from ..transports.http.headers_helper import HeadersHelper

logger = logging.getLogger("trimcp")

#: Default ``clientInfo``.
CLIENT_INFO: dict[str, Any] = {"name": "trimcp", "version": "0.1.0"}

SamplingHandler = Callable[[s.CreateMessageRequestParams], Awaitable[Any]]
ElicitationHandler = Callable[[s.ElicitRequestParams], Awaitable[Any]]
RootsProvider = Union[Sequence[s.Root], Callable[[], Awaitable[Sequence[s.Root]]]]
LoggingHandler = Callable[[s.LoggingMessageNotificationParams], Awaitable[None] | None]


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


@asynccontextmanager
async def open_client(
    target: Target | ServerConfig,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    revision: str | None = None,
    client_info: Mapping[str, Any] | None = None,
    connect_timeout: float = 30.0,
    probe_timeout: float = 5.0,
    request_timeout: float | None = 60.0,
    sampling_handler: SamplingHandler | None = None,
    elicitation_handler: ElicitationHandler | None = None,
    elicitation_modes: Sequence[str] = ("form",),
    sampling_tools: bool = False,
    url_elicitation: UrlElicitation | None = None,
    roots: RootsProvider | None = None,
    logging_handler: LoggingHandler | None = None,
    notification_handler: NotificationHandler | None = None,
    max_pages: int = 100,
    max_input_rounds: int = 8,
    extensions: Mapping[str, Mapping[str, Any]] | None = None,
    on_stderr: Callable[[str], None] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    headers: Mapping[str, str] | None = None,
    headers_helper: HeadersHelper | None = None,
    http_client: httpx.AsyncClient | None = None,
    auth: OAuthProvider | None = None,
    max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
    max_pending_callbacks: int = DEFAULT_MAX_PENDING_CALLBACKS,
    transport: str | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    heartbeat_interval: float | None = None,
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
    reset_timeout_on_progress: bool = True,
    max_total_timeout: float | None = None,
    shutdown: ShutdownPolicy | None = None,
) -> AsyncIterator[ClientSession]:
    """Connect to an MCP server and yield an operating ``ClientSession``.

    ``target`` is a command line (a list of arguments, or a string split like a
    shell would) for a server speaking stdio, an ``http://``/``https://`` URL
    (Streamable HTTP, falling back to 2024-11-05 HTTP+SSE; ``headers``,
    ``headers_helper``, ``http_client`` and ``auth`` -- an ``OAuthProvider`` -- are
    for it, see ``open_http_stream``),
    a ``ws://``/``wss://`` URL (WebSocket, subprotocol ``mcp``; ``headers`` apply),
    a ready ``MessageStream``, or an entry of an mcpServers file
    (``trimcp.config``: its command, args, env and cwd, or its URL, headers,
    headersHelper and transport type; what the caller passes wins).  The
    transport is chosen by the registry
    (``transports/registry.py``): ``register_transport`` adds a kind, with URL
    schemes of its own; ``transport`` names the kind instead of resolving the
    target (``"sse"``: 2024-11-05 HTTP+SSE only, no Streamable HTTP attempt).
    A URL scheme no transport registered is a ``ValueError``.
    ``revision=None`` speaks either era: a ``server/discover`` probe answered
    within ``probe_timeout`` (at most ``connect_timeout``) makes a stateless
    session, otherwise ``initialize`` follows.  A stateless ``revision`` (e.g.
    ``"2026-07-28"``) refuses handshake-era servers; a handshake one only runs
    ``initialize``.  ``connect_timeout`` bounds the whole connect.
    ``elicitation_modes`` (``"form"``, ``"url"``) are declared with the
    ``elicitation_handler``: form alone as ``elicitation: {}``, otherwise each mode.
    ``sampling_tools`` declares ``sampling.tools`` with the ``sampling_handler``: the
    server may then offer tools, and the handler answers their use (2025-11-25).
    ``url_elicitation`` (e.g. ``trimcp.host.Elicitation().for_server(...)``) is told
    of ``notifications/elicitation/complete`` and, when a ``tools/call`` is refused
    with -32042 (URL elicitation required), elicits the listed URLs and the call is
    sent once more (``ClientSession.call_tool``); without it the ``McpError`` is raised.
    ``max_input_rounds`` bounds the InputRequiredResults one request may get.
    ``extensions`` declares the extensions the client speaks, id -> settings (e.g.
    ``trimcp.apps.client_extension()`` for MCP Apps), among its capabilities: the
    handshake's, and every 2026-07-28 request's envelope.
    ``max_message_size`` caps one incoming message in bytes (the stdio line cap
    too); a bigger one breaks the connection and fails every pending request.
    ``max_concurrent_requests`` bounds the server's requests (sampling, ...)
    handled at once; ``max_pending_callbacks`` the notifications waiting for the
    logging and notification handlers (which never run in the reader task: see
    the module docstring).
    ``max_consecutive_failures`` terminal transport failures in a row (requests the
    transport lost for good, unanswered heartbeats, the HTTP event stream given up;
    ``None``: never) close the session and fail every pending request at once.
    ``heartbeat_interval`` (default off; an mcpServers entry's ``heartbeat`` when not
    given): after that many seconds without a message from the server, send a
    ``ping`` (stateless era: ``server/discover``); no answer within
    ``heartbeat_timeout`` counts as a terminal failure (``_trio/heartbeat.py``).
    ``reset_timeout_on_progress``: progress for a request pushes its deadline to now
    + its timeout, never past its start + ``max_total_timeout`` (``None``: 10 x the
    timeout); ``call_tool`` then always asks for progress.
    ``shutdown`` (a ``ShutdownPolicy``) says how a stdio server is stopped on
    close: the grace after stdin is closed, then the waits after SIGINT and
    SIGTERM before SIGKILL (default 0.5 s, 100 ms, 400 ms); an mcpServers entry's
    ``"shutdown"`` object is used when this is not given.
    """
    where: Target
    if isinstance(target, StdioServerConfig):
        # An entry of an mcpServers file: its fields, under what the caller passed.
        env = {**target.env, **(env or {})} or None
        cwd = cwd if cwd is not None else target.cwd
        shutdown = shutdown if shutdown is not None else target.shutdown
        where = [target.command, *target.args]
    elif isinstance(target, RemoteServerConfig):
        if target.oauth is not None and auth is None:
            raise ValueError(f"server {target.name!r} uses OAuth: pass auth=OAuthProvider(...)")
        headers = {**target.headers, **(headers or {})} or None
        headers_helper = headers_helper if headers_helper is not None else target.headers_helper
        transport = transport or target.transport
        where = target.url
    else:
        where = target
    if isinstance(target, (StdioServerConfig, RemoteServerConfig)) and heartbeat_interval is None \
            and target.heartbeat is not None:
        heartbeat_interval, heartbeat_timeout = target.heartbeat.interval, target.heartbeat.timeout
    # Which transport, and is it one we have: a usage error before anything starts.
    factory = transport_for(resolve(where) if transport is None else transport)
    options = TransportOptions(
        env=env, cwd=cwd, on_stderr=on_stderr, max_message_size=max_message_size,
        connect_timeout=connect_timeout, headers=headers, headers_helper=headers_helper,
        http_client=http_client, auth=auth, shutdown=shutdown,
    )
    versions: tuple[str, ...] = ALL_VERSIONS
    if revision is not None:
        if revision not in versions:
            raise LocalProtocolError(f"revision {revision!r} is not one this client speaks ({', '.join(versions)})")
        versions = (revision,)
    connection = Connection(
        Role.CLIENT,
        info=dict(client_info or CLIENT_INFO),
        capabilities=_client_capabilities(sampling_handler, elicitation_handler, elicitation_modes, roots,
                                          extensions, sampling_tools),
        supported_versions=versions,
        max_message_size=max_message_size,
    )
    with collapse():
        async with AsyncExitStack() as stack:
            stream = await stack.enter_async_context(factory(where, options))
            driver = SessionDriver(
                connection,
                stream,
                request_handlers=_request_handlers(sampling_handler, elicitation_handler, roots),
                notification_handler=_notification_handler(logging_handler, notification_handler),
                request_timeout=request_timeout,
                max_input_rounds=max_input_rounds,
                answer_input=answer_input_requests,
                max_concurrent_requests=max_concurrent_requests,
                max_pending_callbacks=max_pending_callbacks,
                reset_timeout_on_progress=reset_timeout_on_progress,
                max_total_timeout=max_total_timeout,
                max_consecutive_failures=max_consecutive_failures,
            )
            if url_elicitation is not None:
                driver.notification_taps.append(_completion_tap(url_elicitation))
            async with trio.open_nursery() as nursery:
                await nursery.start(driver.run)
                # The stream is ours to close on every way out, a failed handshake included.
                try:
                    handshake = await _negotiate(driver, revision, connect_timeout, probe_timeout)
                    if heartbeat_interval is not None:
                        nursery.start_soon(run_heartbeat, driver, heartbeat_interval, heartbeat_timeout)
                    yield ClientSession(driver, handshake, max_pages, url_elicitation=url_elicitation)
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
        raise ConnectTimeout(
            _explain(driver.stream, f"no answer to {phase} within {connect_timeout} s"),
            phase=phase, seconds=connect_timeout,
        ) from None
    except TransportClosed as exc:
        # The transport's own account (the process exited with status 3, the port refused
        # us), not the "session is closed" wrapper a request sees.
        cause = driver.closed_error if driver.closed_error is not None else exc
        raise ConnectError(f"{phase} failed: {cause}") from exc
    except (McpError, RemoteProtocolError) as exc:
        # A refused or unusable handshake is a failure to connect, whatever its cause;
        # the peer's error (with its code and data) stays reachable as __cause__.
        raise ConnectError(f"{phase} failed: {exc}") from exc


def _explain(stream: MessageStream, message: str) -> str:
    if isinstance(stream, StdioProcessStream):
        tail = stream.stderr_tail()
        if tail:
            return f"{message}\n--- last stderr lines ---\n{tail}"
    return message
