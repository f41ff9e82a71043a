"""The options of ``open_client``, grouped: what a connect waits for, bounds, answers and carries.

Theory of operation
-------------------
``open_client`` takes a handful of keywords (the target, the revision, the transport
kind, the extensions, the OAuth provider) and five groups, each a frozen value that
can be built once and shared by every connect of a host: ``Timeouts`` (how long each
wait may last), ``Limits`` (how much a peer may send or ask for at once), ``Handlers``
(the application's answers to the server's requests and its notifications),
``HttpOptions`` (what an HTTP or WebSocket transport sends along) and ``StdioOptions``
(how a server process is started and stopped).  A group left out is its defaults.

Before the grouping these were 32 flat keywords.  They still work, each with a
``DeprecationWarning`` naming the group field that replaces it (``OLD_KEYWORDS``,
``regroup``); type checkers see only the new signature.

``merge_options`` layers dictionaries of ``open_client`` keywords, as the host pool
does (its hooks, then ``client_options``, then a server's ``server_options``): a later
layer wins, and two groups of the same kind combine field by field, a field left at
its default yielding to the layer below.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..._deprecate import warn_deprecated
from ..._sansio import schema as s
from ..._sansio.connection.health import DEFAULT_MAX_CONSECUTIVE_FAILURES
from ..._sansio.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE
from ..._sansio.shared_methods import frozen
from ..._shutdown import ShutdownPolicy
from ..callbacks import DEFAULT_MAX_PENDING_CALLBACKS
from ..driver import NotificationHandler
from ..heartbeat import DEFAULT_HEARTBEAT_TIMEOUT
from ..request_slots import DEFAULT_MAX_CONCURRENT_REQUESTS
from .client_session import UrlElicitation

if TYPE_CHECKING:
    import httpx

    from ..transports.http.headers_helper import HeadersHelper

# Quoted: the schema classes are imported on first use, not by every ``open_client`` (cold start).
SamplingHandler = Callable[["s.CreateMessageRequestParams"], Awaitable[Any]]
ElicitationHandler = Callable[["s.ElicitRequestParams"], Awaitable[Any]]
RootsProvider = Sequence["s.Root"] | Callable[[], Awaitable[Sequence["s.Root"]]]
LoggingHandler = Callable[["s.LoggingMessageNotificationParams"], Awaitable[None] | None]


@frozen(kw_only=True)
class Timeouts:
    """How long each wait of a client session may last, in seconds.

    ``connect`` bounds the whole connect; ``probe`` the ``server/discover`` probe of a
    dual-era connect (at most ``connect``); ``request`` each request (``None``: no
    limit).  With ``reset_on_progress`` a request's progress pushes its deadline to now
    + ``request``, never past its start + ``max_total`` (``None``: 10 x ``request``);
    ``call_tool`` then always asks for progress.  ``heartbeat`` (default off; an
    mcpServers entry's ``heartbeat`` when not given): after that long without a message
    from the server a ``ping`` is sent (stateless era: ``server/discover``), and no
    answer within ``heartbeat_timeout`` counts as a terminal failure."""

    connect: float = 30.0
    probe: float = 5.0
    request: float | None = 60.0
    reset_on_progress: bool = True
    max_total: float | None = None
    heartbeat: float | None = None
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT


@frozen(kw_only=True)
class Limits:
    """How much the server may send, or ask of the client, at once.

    ``max_message_size`` caps one incoming message in bytes (the stdio line cap too); a
    bigger one breaks the connection.  ``max_pages`` bounds one ``*/list`` pagination,
    ``max_input_rounds`` the InputRequiredResults one request may get.
    ``max_concurrent_requests`` bounds the server's requests (sampling, ...) handled at
    once; ``max_pending_callbacks`` the notifications waiting for the handlers.
    ``max_consecutive_failures`` terminal transport failures in a row (requests lost for
    good, unanswered heartbeats, the HTTP event stream given up; ``None``: never) close
    the session and fail every pending request at once."""

    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_pages: int = 100
    max_input_rounds: int = 8
    max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS
    max_pending_callbacks: int = DEFAULT_MAX_PENDING_CALLBACKS
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES


@frozen(kw_only=True)
class Handlers:
    """The application's side of a session: what answers the server, and what it is told.

    The client declares exactly the capabilities it has a handler for.  ``sampling``
    answers ``sampling/createMessage`` (with ``sampling_tools`` it declares
    ``sampling.tools``: the server may offer tools, and the handler answers their use);
    ``elicitation`` answers ``elicitation/create`` in ``elicitation_modes`` (``"form"``,
    ``"url"``; form alone is declared as ``elicitation: {}``); ``roots`` is a sequence of
    ``Root`` or an async function returning one.  ``url_elicitation`` (e.g.
    ``trimcp.host.Elicitation().for_server(...)``) is told of
    ``notifications/elicitation/complete`` and, when a ``tools/call`` is refused with
    -32042, elicits the listed URLs before the call is sent once more.  ``logging``
    gets each ``notifications/message`` typed, ``notification`` every notification raw;
    both run in the session's callback task, in order, never in the reader."""

    sampling: SamplingHandler | None = None
    sampling_tools: bool = False
    elicitation: ElicitationHandler | None = None
    elicitation_modes: Sequence[str] = ("form",)
    url_elicitation: UrlElicitation | None = None
    roots: RootsProvider | None = None
    logging: LoggingHandler | None = None
    notification: NotificationHandler | None = None


@frozen(kw_only=True)
class HttpOptions:
    """What an HTTP (Streamable HTTP, HTTP+SSE) or WebSocket transport sends along.

    ``headers`` go with every request (and the WebSocket upgrade); ``headers_helper``
    computes more per connection (an mcpServers ``headersHelper``); ``http_client`` is
    an ``httpx.AsyncClient`` to reuse (HTTP only)."""

    headers: Mapping[str, str] | None = None
    headers_helper: HeadersHelper | None = None
    http_client: httpx.AsyncClient | None = None


@frozen(kw_only=True)
class StdioOptions:
    """How a server process is started and stopped.

    ``env`` and ``cwd`` for the process (an mcpServers entry's are used under these);
    ``on_stderr`` gets each line it writes to stderr; ``shutdown`` (a ``ShutdownPolicy``)
    how it is stopped on close: the grace after stdin is closed, then the waits after
    SIGINT and SIGTERM before SIGKILL (an mcpServers entry's ``"shutdown"`` when not given)."""

    env: Mapping[str, str] | None = None
    cwd: str | None = None
    on_stderr: Callable[[str], None] | None = None
    shutdown: ShutdownPolicy | None = None


#: The group keywords of ``open_client`` and the class of each.
GROUPS: dict[str, type[Any]] = {
    "timeouts": Timeouts,
    "limits": Limits,
    "handlers": Handlers,
    "http": HttpOptions,
    "stdio": StdioOptions,
}

#: The flat keywords ``open_client`` had before the groups: old name -> (group, field).
OLD_KEYWORDS: dict[str, tuple[str, str]] = {
    "connect_timeout": ("timeouts", "connect"),
    "probe_timeout": ("timeouts", "probe"),
    "request_timeout": ("timeouts", "request"),
    "reset_timeout_on_progress": ("timeouts", "reset_on_progress"),
    "max_total_timeout": ("timeouts", "max_total"),
    "heartbeat_interval": ("timeouts", "heartbeat"),
    "heartbeat_timeout": ("timeouts", "heartbeat_timeout"),
    "max_message_size": ("limits", "max_message_size"),
    "max_pages": ("limits", "max_pages"),
    "max_input_rounds": ("limits", "max_input_rounds"),
    "max_concurrent_requests": ("limits", "max_concurrent_requests"),
    "max_pending_callbacks": ("limits", "max_pending_callbacks"),
    "max_consecutive_failures": ("limits", "max_consecutive_failures"),
    "sampling_handler": ("handlers", "sampling"),
    "sampling_tools": ("handlers", "sampling_tools"),
    "elicitation_handler": ("handlers", "elicitation"),
    "elicitation_modes": ("handlers", "elicitation_modes"),
    "url_elicitation": ("handlers", "url_elicitation"),
    "roots": ("handlers", "roots"),
    "logging_handler": ("handlers", "logging"),
    "notification_handler": ("handlers", "notification"),
    "headers": ("http", "headers"),
    "headers_helper": ("http", "headers_helper"),
    "http_client": ("http", "http_client"),
    "env": ("stdio", "env"),
    "cwd": ("stdio", "cwd"),
    "on_stderr": ("stdio", "on_stderr"),
    "shutdown": ("stdio", "shutdown"),
}


def regroup(groups: dict[str, Any], old: Mapping[str, Any], *, stacklevel: int = 2) -> dict[str, Any]:
    """``groups`` (group keyword -> value or ``None``) with the old flat keywords folded in.

    Each old keyword warns, naming its replacement; an old keyword wins over the same
    field of a group passed alongside it.  An unknown keyword is a ``TypeError``, as
    Python would have raised it.  ``stacklevel`` as ``warn_deprecated``'s."""
    out = dict(groups)
    fields: dict[str, dict[str, Any]] = {}
    for name, value in old.items():
        where = OLD_KEYWORDS.get(name)
        if where is None:
            raise TypeError(f"open_client() got an unexpected keyword argument {name!r}")
        group, field = where
        warn_deprecated(
            f"open_client({name}=...)",
            f"open_client({group}={GROUPS[group].__name__}({field}=...))",
            stacklevel=stacklevel + 1,
        )
        fields.setdefault(group, {})[field] = value
    for group, values in fields.items():
        base = out.get(group)
        out[group] = attrs.evolve(base, **values) if base is not None else GROUPS[group](**values)
    return out


def _given(value: Any) -> dict[str, Any]:
    """The fields of a group that differ from their defaults."""
    defaults = type(value)()
    return {
        f.name: getattr(value, f.name)
        for f in attrs.fields(type(value))
        if getattr(value, f.name) != getattr(defaults, f.name)
    }


def merge_options(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Layer dictionaries of ``open_client`` keywords, a later one winning (see the module docstring)."""
    out: dict[str, Any] = {}
    for layer in layers:
        for name, value in layer.items():
            below = out.get(name)
            if name in GROUPS and isinstance(value, GROUPS[name]) and isinstance(below, GROUPS[name]):
                value = attrs.evolve(below, **_given(value))
            out[name] = value
    return out


__all__ = [
    "GROUPS",
    "OLD_KEYWORDS",
    "ElicitationHandler",
    "Handlers",
    "HttpOptions",
    "Limits",
    "LoggingHandler",
    "RootsProvider",
    "SamplingHandler",
    "StdioOptions",
    "Timeouts",
    "merge_options",
    "regroup",
]
