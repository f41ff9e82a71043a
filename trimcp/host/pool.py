"""Many MCP servers held at once, the way an agent (an MCP *host*) holds them.

Theory of operation
-------------------
``open_pool`` takes the servers of an mcpServers file (``trimcp.config``: an
``McpConfig``, a mapping of name to entry, or the entries) and yields a
``Pool``.  Nothing connects until asked: ``pool.session(name)`` connects
lazily and memoises the session; ``pool.connect_all()`` connects every enabled
server at once, under two limits - at most ``stdio_limit`` local servers (3)
and ``remote_limit`` remote ones (20) connecting at the same time.  A limiter
rather than fixed batches: a slow server holds one place, not a whole batch.
The limits come from the parameters, else from the environment variables
``MCP_SERVER_CONNECTION_BATCH_SIZE`` and ``MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE``,
else the defaults.

Each server is a ``ServerSlot`` (``slot.py``), keyed by its name and the hash
of its entry: ``configure()`` with a changed entry closes the old connection
and makes a new slot.  A server's failure stays in its slot (its status says
why); it never reaches another server or the pool.  Everything the pool learns
is an event (``status.py``) for ``pool.events()`` subscribers; ``pool.status()``
is the current truth.  A status's ``reason`` and the pool's own log lines are text for
people: what an entry's ``${VAR}`` expanded to shows there as ``${VAR}``
(``pool.redactor``, the rule of ``trimcp.config``).

Tool calls (``call_tool``) are never retried blindly: once after the server's
HTTP session expired (on a fresh session), and once after a transport failure
for a tool its server annotated ``readOnlyHint`` or ``idempotentHint`` - a call
that may have run must not run twice unless running it twice is harmless.

The tool layer (``tools.py``, ``batch.py``, ``outputs.py``) sits on the cached lists:
``tools()`` names every connected server's tools for a model, ``resolve`` and ``call``
take such a name back, ``call_batch`` runs reads together and writes alone, and
``call_tool`` checks ``structuredContent`` against the cached ``outputSchema``
(``validate_output``) without listing the tools again.
"""

from __future__ import annotations

import logging
import os
import random as _random
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

import trio

from .._errors import SessionExpired, TransportError, TrimcpError
from .._sansio import schema as s
from .._sansio.host.backoff import Backoff
from .._sansio.host.naming import DEFAULT_DESCRIPTION_CAP, DESCRIPTION_MARKER
from .._sansio.revisions import Era
from .._trio._groups import collapse
from .._trio.client import ClientSession
from .._trio.client.options import Handlers, merge_options
from .._trio.oauth.auth_cache import AuthNeededCache
from ..config import ConfigError, McpConfig, Redactor, ServerConfig
from .batch import BatchOutcome, Call, run_batch
from .client_handlers import log_to_python
from .elicitation import Elicitation
from .event_hub import EventHub, EventStream
from .outputs import OutputChecker, ValidateOutput, check_mode
from .slot import ServerSlot, ServerUnavailable, SlotContext
from .status import ServerState, ServerStatus, StatusChanged
from .tools import HostTool, Snapshot, ToolCatalog

__all__ = ["Pool", "ServerUnavailable", "UnknownServer", "open_pool"]

logger = logging.getLogger("trimcp.host")

DEFAULT_BACKOFF: Final = Backoff()
DEFAULT_STDIO_LIMIT: Final = 3
DEFAULT_REMOTE_LIMIT: Final = 20
STDIO_LIMIT_ENV: Final = "MCP_SERVER_CONNECTION_BATCH_SIZE"
REMOTE_LIMIT_ENV: Final = "MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE"

Servers = McpConfig | Mapping[str, ServerConfig] | Iterable[ServerConfig]


class UnknownServer(TrimcpError, LookupError):
    """No server of that name in the pool."""


def _limit(given: int | None, variable: str, default: int, environ: Mapping[str, str]) -> int:
    if given is not None:
        if given < 1:
            raise ValueError(f"a connection limit must be at least 1, not {given}")
        return given
    raw = environ.get(variable)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        logger.warning("ignoring %s=%r (not a positive integer); using %d", variable, raw, default)
        return default
    return value


def _redactor(servers: Servers, entries: Mapping[str, ServerConfig]) -> Redactor:
    """What hides the values the entries' ``${VAR}``s took (an McpConfig's broken ones' too)."""
    if isinstance(servers, McpConfig):
        return servers.redactor()
    return Redactor().merge(*(Redactor(entry.expanded) for entry in entries.values()))


def _entries(servers: Servers) -> tuple[dict[str, ServerConfig], dict[str, ConfigError]]:
    """Entries by name, and the errors of entries that could not be read (an McpConfig's)."""
    if isinstance(servers, McpConfig):
        return dict(servers.servers), dict(servers.errors)
    if isinstance(servers, Mapping):
        for name, entry in servers.items():
            if entry.name != name:
                raise ValueError(f"entry {entry.name!r} is filed under the name {name!r}")
        return dict(servers), {}
    out: dict[str, ServerConfig] = {}
    for entry in servers:
        if entry.name in out:
            raise ValueError(f"two entries are named {entry.name!r}")
        out[entry.name] = entry
    return out, {}


def _disabled_by_config(entry: ServerConfig) -> bool:
    return entry.disabled  # "disabled": true, as several hosts write it


class Pool:
    """The servers of one config, connected on use; see the module docstring."""

    def __init__(
        self,
        ctx: SlotContext,
        *,
        disabled: Iterable[str] = (),
        validate_output: ValidateOutput = "warn",
    ) -> None:
        self._ctx = ctx
        self._validate_output = check_mode(validate_output)
        self._outputs = OutputChecker()
        self._catalog = ToolCatalog()
        self._slots: dict[str, ServerSlot] = {}
        #: Entries that could not be read: a status each, never a connect.
        self._broken: dict[str, tuple[ConfigError, ServerStatus]] = {}
        self._disabled = set(disabled)

    # ------------------------------------------------------------------ config

    def configure(self, servers: Servers) -> None:
        """Take a new set of servers: new ones are added, removed ones closed, changed ones
        (same name, another entry) closed and added again; unchanged ones keep their session."""
        entries, errors = _entries(servers)
        # Kept with the old values: a retiring server may still report on its way out.
        self._ctx.redact = self._ctx.redact.merge(_redactor(servers, entries))
        for name in [n for n in self._slots if n not in entries]:
            self._retire(self._slots.pop(name))
        for name, entry in entries.items():
            old = self._slots.get(name)
            slot = ServerSlot(self._ctx, entry, disabled=self._why_disabled(entry))
            if old is not None and old.key == slot.key:
                continue
            if old is not None:
                self._retire(old)
            self._slots[name] = slot
            self._ctx.hub.publish(StatusChanged(name, None, slot.status))
        # An entry that cannot be read is a server that failed: the others still connect.
        self._broken = {
            name: (error, ServerStatus(name, ServerState.FAILED, "unknown", reason=self._ctx.redact(str(error))))
            for name, error in errors.items()
        }

    def _why_disabled(self, entry: ServerConfig) -> str | None:
        if entry.name in self._disabled:
            return "disabled by the caller"
        if _disabled_by_config(entry):
            return 'disabled in the config ("disabled": true)'
        return None

    def _retire(self, slot: ServerSlot) -> None:
        self._outputs.forget(slot.name)
        self._ctx.nursery.start_soon(slot.close)

    def set_disabled(self, name: str, disabled: bool = True) -> None:
        """Turn a server off (its session, if any, is closed) or back on."""
        slot = self._slot(name)
        if disabled:
            self._disabled.add(name)
            slot.set_disabled("disabled by the caller")
        else:
            self._disabled.discard(name)
            slot.set_disabled(None if not _disabled_by_config(slot.config) else slot.status.reason)

    # ------------------------------------------------------------------ state

    @property
    def redactor(self) -> Redactor:
        """Hides what the entries' ``${VAR}``s expanded to (``trimcp.config``): statuses and
        the pool's log lines are redacted already; apply it to an exception's text before
        showing it, and add ``redactor.log_filter()`` to a log handler for the lines of
        the transports, which never see the config.  A redactor is fixed: after
        ``configure`` brings new values, take the new one (it hides the old values too)."""
        return self._ctx.redact

    @property
    def names(self) -> list[str]:
        return [*self._slots, *self._broken]

    def config(self, name: str) -> ServerConfig:
        return self._slot(name).config

    def status(self, name: str | None = None) -> dict[str, ServerStatus]:
        """Every server's status (or one's), by name."""
        if name is not None:
            if name in self._broken:
                return {name: self._broken[name][1]}
            return {name: self._slot(name).status}
        statuses = {n: slot.status for n, slot in self._slots.items()}
        statuses.update((n, status) for n, (_, status) in self._broken.items())
        return statuses

    @asynccontextmanager
    async def events(self, max_buffer: int = 256) -> AsyncIterator[EventStream]:
        """Subscribe to status changes, tool lists and notifications (see ``event_hub.py``)."""
        async with self._ctx.hub.subscribe(max_buffer) as stream:
            yield stream

    def _slot(self, name: str) -> ServerSlot:
        try:
            return self._slots[name]
        except KeyError:
            if name in self._broken:
                raise self._broken[name][0] from None
            known = ", ".join(sorted(self.names)) or "none"
            raise UnknownServer(f"no server {name!r} in the pool (known: {known})") from None

    # ------------------------------------------------------------------ connecting

    async def session(self, name: str) -> ClientSession:
        """The server's live session, connecting if needed (concurrent callers share one
        connect).  Raises ``ServerUnavailable`` (disabled, needs auth, a bad entry) or the
        connect's error (``ConnectError``, ...)."""
        return await self._slot(name).session_now()

    async def connect_all(self) -> dict[str, ServerStatus]:
        """Connect every enabled server not yet connected, under the pool's limits; return
        every status once each connect has ended (a failure is a status, not an exception)."""

        async def one(slot: ServerSlot) -> None:
            try:
                await slot.session_now()
            except (TrimcpError, OSError, ValueError) as exc:
                logger.debug("server %r did not connect: %s", slot.name, self._ctx.redact(str(exc)))

        async with trio.open_nursery() as nursery:
            for slot in list(self._slots.values()):
                if slot.status.state not in (ServerState.DISABLED, ServerState.CONNECTED):
                    nursery.start_soon(one, slot)
        return self.status()

    async def reconnect(self, name: str) -> ClientSession:
        """Close the server's session (if any) and connect again now."""
        slot = self._slot(name)
        if slot.session is not None:
            await slot.reset(slot.session)
        return await slot.session_now()

    async def logged_in(self, name: str) -> None:
        """The user authorized the server: drop its auth-needed mark; the next use connects."""
        await self._slot(name).logged_in()

    # ------------------------------------------------------------------ lists and calls

    async def list_tools(self, name: str, *, refresh: bool = False) -> tuple[s.Tool, ...]:
        """The server's tools, from the pool's cache (filled on connect, dropped on close,
        refreshed on ``list_changed``) unless ``refresh``."""
        slot = self._slot(name)
        session = await slot.session_now()
        cached = slot.lists.get("tools")
        if cached is not None and not refresh:
            return cached
        tools = tuple(await session.list_tools(refresh=refresh))
        slot.lists["tools"] = tools
        return tools

    async def call_tool(
        self,
        name: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        validate_output: ValidateOutput | None = None,
        **options: Any,
    ) -> s.CallToolResult:
        """Call ``tool`` on server ``name``; retried at most once, as the module docstring says.

        ``validate_output`` (default: the pool's, itself ``"warn"`` unless ``open_pool`` says
        otherwise) checks ``structuredContent`` against the tool's cached ``outputSchema``:
        ``"warn"`` logs once per tool, ``"raise"`` raises ``OutputValidationError``,
        ``"ignore"`` checks nothing (``outputs.py``).  The other ``options`` go to
        ``ClientSession.call_tool`` (``timeout``, ``on_progress``, ...)."""
        mode = self._validate_output if validate_output is None else check_mode(validate_output)
        slot = self._slot(name)
        result = await self._call_once_more_if_harmless(slot, tool, arguments, options)
        return await self._outputs.check(name, slot.lists.get("tools"), tool, result, mode)

    async def _call_once_more_if_harmless(
        self, slot: ServerSlot, tool: str, arguments: Mapping[str, Any] | None, options: dict[str, Any]
    ) -> s.CallToolResult:
        session = await slot.session_now()
        try:
            return await session.call_tool(tool, arguments, **options)
        except SessionExpired:
            await slot.reset(session)
        except TransportError:
            if not self._harmless_twice(slot, tool):
                raise
            if not session.is_closed:
                await slot.reset(session)
        session = await slot.session_now()
        return await session.call_tool(tool, arguments, **options)

    @staticmethod
    def _harmless_twice(slot: ServerSlot, tool: str) -> bool:
        for known in slot.lists.get("tools", ()):
            if known.name == tool:
                notes = known.annotations
                return notes is not None and bool(notes.read_only_hint or notes.idempotent_hint)
        return False

    # ------------------------------------------------------------------ the tool layer

    def _snapshot(self) -> Snapshot:
        """Each connected server's cached tool list, in config order."""
        return [
            (name, slot.lists["tools"])
            for name, slot in self._slots.items()
            if slot.status.state is ServerState.CONNECTED and "tools" in slot.lists
        ]

    async def tools(
        self,
        *,
        refresh: bool = False,
        connect: bool = False,
        description_cap: int = DEFAULT_DESCRIPTION_CAP,
        marker: str = DESCRIPTION_MARKER,
    ) -> list[HostTool]:
        """Every tool of the connected servers as a model is shown it (``tools.py``).

        Only servers already connected count, from their cached lists: nothing is
        connected or listed unless asked.  ``connect=True`` first connects every enabled
        server (``connect_all``; one that fails is left out); ``refresh=True`` lists every
        connected server's tools again.  Descriptions are cut to ``description_cap``
        characters ending with ``marker``.  Names are stable while the set of tools is.
        """
        if connect:
            await self.connect_all()
        if refresh:
            async with trio.open_nursery() as nursery:
                for name, _ in self._snapshot():
                    nursery.start_soon(self._refresh_quietly, name)
        await trio.lowlevel.checkpoint()
        return self._catalog.tools(self._snapshot(), description_cap=description_cap, marker=marker)

    async def _refresh_quietly(self, name: str) -> None:
        try:
            await self.list_tools(name, refresh=True)
        except (TrimcpError, OSError) as exc:  # that server keeps its cached list, if any
            logger.warning("server %r: tools/list failed: %s", name, self._ctx.redact(str(exc)))

    def tool(self, full_name: str) -> HostTool:
        """The ``HostTool`` of a model-facing name (``UnknownTool`` when none)."""
        return self._catalog.lookup(self._snapshot(), full_name)

    def resolve(self, full_name: str) -> tuple[str, str]:
        """``(server, tool)`` of a model-facing name, through the name table (a name is
        never split on ``__``); ``UnknownTool`` (a ``LookupError``) when none."""
        found = self.tool(full_name)
        return found.server, found.tool.name

    async def call(
        self, full_name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> s.CallToolResult:
        """``call_tool`` on the tool a model-facing name resolves to (same ``options``)."""
        server, tool = self.resolve(full_name)
        return await self.call_tool(server, tool, arguments, **options)

    async def call_batch(
        self, calls: Sequence[Call], *, max_concurrency: int = 8, **options: Any
    ) -> list[BatchOutcome]:
        """Run ``[(full_name, arguments), ...]``: consecutive reads concurrently (at most
        ``max_concurrency`` at once), each write alone and in order (``batch.py``).

        One ``BatchOutcome`` per call, in call order: ``.result`` when the call returned,
        ``.error`` with the exception it raised otherwise (``.ok`` tells which;
        ``.unwrap()`` gives the result or raises).  ``options`` go to every ``call_tool``.
        """
        kinds = []
        for full_name, _ in calls:
            try:
                kinds.append(self.tool(full_name).kind)
            except LookupError:
                kinds.append("read")  # it will not run, so it cannot conflict with anything

        async def one(full_name: str, arguments: Mapping[str, Any] | None) -> s.CallToolResult:
            return await self.call(full_name, arguments, **options)

        return await run_batch(calls, kinds, one, max_concurrency=max_concurrency)

    async def subscribe_resource(self, name: str, uri: str) -> None:
        """Subscribe to ``notifications/resources/updated`` for ``uri``, kept across reconnects
        (``resources/subscribe`` in the handshake era, the pool's listen stream after)."""
        slot = self._slot(name)
        session = await slot.session_now()
        slot.resource_uris.add(uri)
        if session.era is Era.HANDSHAKE:
            await session.subscribe_resource(uri)
        else:
            await slot.relisten(session)

    async def set_log_level(self, name: str, level: str) -> None:
        """Ask the server for log messages at ``level`` and up, kept across reconnects."""
        slot = self._slot(name)
        session = await slot.session_now()
        slot.log_level = level
        if session.era is Era.HANDSHAKE:
            await session.set_logging_level(level)
        else:
            session.log_level = level

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for slot in self._slots.values():
                    nursery.start_soon(slot.close)
        self._ctx.hub.close()


@asynccontextmanager
async def open_pool(
    servers: Servers,
    *,
    stdio_limit: int | None = None,
    remote_limit: int | None = None,
    disabled: Iterable[str] = (),
    backoff: Backoff = DEFAULT_BACKOFF,
    random: Callable[[], float] = _random.random,
    auth_cache: AuthNeededCache | None = None,
    client_options: Mapping[str, Any] | None = None,
    server_options: Mapping[str, Mapping[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
    validate_output: ValidateOutput = "warn",
    elicitation: Elicitation | None = None,
    server_logs: bool = True,
) -> AsyncIterator[Pool]:
    """Hold the servers of an mcpServers config; see the module docstring.

    ``client_options`` are ``open_client`` keywords for every server (e.g.
    ``timeouts=Timeouts(request=10)``, ``handlers=Handlers(sampling=...)``);
    ``server_options[name]`` adds to them for one server (e.g. its ``auth=`` provider),
    a group combining field by field with the one below it (``merge_options``).  ``disabled`` names
    servers never to connect (an entry's ``"disabled": true`` does the same).
    ``backoff`` and ``random`` shape the waits before reconnecting.
    ``auth_cache`` (e.g. ``trimcp.oauth.AuthNeededCache()``) lets the pool skip
    servers known to need authorization and mark the ones it finds.
    ``validate_output`` is the default of ``Pool.call_tool``'s (``"warn"``, ``"raise"``
    or ``"ignore"``: what a ``structuredContent`` that breaks its ``outputSchema`` does).
    ``elicitation`` (a ``trimcp.host.Elicitation``) answers every server's elicitation
    requests, told which server asked; with ``server_logs`` each server's log messages
    go to the Python logger ``trimcp.server.<name>`` (``client_handlers.py``).  Either yields
    to a ``client_options`` / ``server_options`` handler of the same field.
    On exit every session is closed (stdio servers shut down, in parallel).
    """
    env = os.environ if environ is None else environ
    limits = {
        "stdio": trio.CapacityLimiter(_limit(stdio_limit, STDIO_LIMIT_ENV, DEFAULT_STDIO_LIMIT, env)),
        "remote": trio.CapacityLimiter(_limit(remote_limit, REMOTE_LIMIT_ENV, DEFAULT_REMOTE_LIMIT, env)),
    }
    common = dict(client_options or {})
    per_server = {name: dict(opts) for name, opts in (server_options or {}).items()}

    def options_for(entry: ServerConfig) -> dict[str, Any]:
        logs = {"handlers": Handlers(logging=log_to_python(entry.name))} if server_logs else {}
        elicits = elicitation.client_options(entry.name) if elicitation is not None else {}
        return merge_options(logs, elicits, common, per_server.get(entry.name, {}))

    with collapse():
        async with trio.open_nursery() as nursery:
            ctx = SlotContext(nursery, EventHub(), limits, backoff, random, auth_cache, options_for)
            pool = Pool(ctx, disabled=disabled, validate_output=validate_output)
            pool.configure(servers)
            try:
                yield pool
            finally:
                await pool.aclose()
                nursery.cancel_scope.cancel()
