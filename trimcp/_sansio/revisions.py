"""What each MCP protocol revision contains: one row per revision, every per-revision fact.

Theory of operation
-------------------
Every revision is described as data, one ``Revision`` row each: its era (handshake:
``initialize`` then a session; stateless: 2026-07-28, ``server/discover`` and a
``_meta`` envelope on every request), the methods each side may send, and every
other fact that differs between revisions: JSON-RPC batches (2025-03-26 only),
the ``completions`` capability gate, which HTTP transport and headers the
revision uses (basic/transports: HTTP+SSE in 2024-11-05, Streamable HTTP from
2025-03-26; ``MCP-Protocol-Version`` from 2025-06-18; ``Mcp-Session-Id`` in the
handshake era's Streamable HTTP; ``Mcp-Method``/``Mcp-Name`` request metadata in
2026-07-28), whether SSE streams open with a priming event (2025-11-25,
SEP-1699), the ``resultType`` values (2026-07-28), task augmentation
(2025-11-25 core tasks), the optional object members and content types the
schema of the revision has (``members``, ``content_types``: what a server trims
for an older client), the ``application_type`` of dynamic client registration
the reserved trace-context ``_meta`` keys (2026-07-28) and the error codes each
revision defines.

Consumers read the row (``get_revision(v).primes_sse``) and never compare version
strings, so adding a revision means adding a row here (``tests/sansio/test_revisions.py``
walks the table and looks for comparisons elsewhere).  Where a conformance check
states "from revision X on" as the spec words it, ``at_least`` answers by the
row's position in the table, not by comparing the strings.

Capability gates are paths into a capabilities object: ``("tools",)`` means the
peer must advertise ``tools``; ``("resources", "subscribe")`` means
``resources.subscribe`` must be truthy.  ``peer_gate`` answers: to *send*
method M, whose capabilities must contain which path?  ``own_gate``: which of
the sender's own capabilities must it have advertised?

The two sides are ``Role.CLIENT`` and ``Role.SERVER`` (``connection/lifecycle.py``,
public as ``trimcp.Role``): one enum for "who sends this" here and "whose state
machine this is" there.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

from . import jsonrpc as rpc
from .connection.lifecycle import Role
from .result_type import ResultType
from .shared_methods import frozen


class Era(enum.StrEnum):
    """The two eras of the protocol.  A ``StrEnum``: ``session.era == "handshake"``, as code
    written when ``ClientSession.era`` was a string compares, still holds."""

    HANDSHAKE = "handshake"
    STATELESS = "stateless"


class HttpTransport(enum.StrEnum):
    """The HTTP transport of a revision (basic/transports)."""

    #: 2024-11-05: a GET event stream names the URL to POST to.
    HTTP_SSE = "http+sse"
    #: 2025-03-26 on: one endpoint, a POST per message.
    STREAMABLE = "streamable-http"


_BASE_CLIENT_REQUESTS = frozenset(
    {
        "initialize",
        "ping",
        "completion/complete",
        "logging/setLevel",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "tools/call",
        "tools/list",
    }
)
_BASE_SERVER_REQUESTS = frozenset({"ping", "sampling/createMessage", "roots/list"})
_BASE_CLIENT_NOTIFICATIONS = frozenset(
    {
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/roots/list_changed",
    }
)
_BASE_SERVER_NOTIFICATIONS = frozenset(
    {
        "notifications/cancelled",
        "notifications/progress",
        "notifications/message",
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
    }
)
_TASK_REQUESTS = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})


def _members(base: Mapping[str, frozenset[str]], **more: Iterable[str]) -> Mapping[str, frozenset[str]]:
    """``base`` with members added per object kind."""
    out = dict(base)
    for kind, names in more.items():
        out[kind] = out.get(kind, frozenset()) | frozenset(names)
    return MappingProxyType(out)


# The optional members each revision's schema has, per object kind (a member every revision
# has is not listed: it is trimmed only where some revision lacks it).
_MEMBERS_2024_11_05: Final[Mapping[str, frozenset[str]]] = MappingProxyType({})
_MEMBERS_2025_03_26: Final = _members(_MEMBERS_2024_11_05, tool={"annotations"})
_META_TITLE: Final = ("_meta", "title")
_MEMBERS_2025_06_18: Final = _members(
    _MEMBERS_2025_03_26,
    tool={*_META_TITLE, "outputSchema"},
    resource=_META_TITLE,
    resource_template=_META_TITLE,
    prompt=_META_TITLE,
    prompt_argument={"title"},
    annotations={"lastModified"},
    content={"_meta"},
    resource_contents={"_meta"},
    call_tool_result={"structuredContent"},
    # completion/complete's ``context`` (the values of the other arguments)
    complete_request={"context"},
)
_MEMBERS_2025_11_25: Final = _members(
    _MEMBERS_2025_06_18,
    tool={"icons", "execution"},
    resource={"icons"},
    resource_template={"icons"},
    prompt={"icons"},
)
# The tool ``execution`` member went with core tasks.
_MEMBERS_2026_07_28: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {**_MEMBERS_2025_11_25, "tool": _MEMBERS_2025_11_25["tool"] - {"execution"}}
)


@frozen
class Revision:
    name: str
    era: Era
    client_requests: frozenset[str]
    server_requests: frozenset[str]
    client_notifications: frozenset[str]
    server_notifications: frozenset[str]
    #: JSON-RPC batches are part of the revision (2025-03-26 only).
    batches: bool = False
    #: ``completion/complete`` is gated by the ``completions`` capability (2025-03-26+).
    completions_capability: bool = True
    #: The HTTP transport sends ``MCP-Protocol-Version`` on every request (2025-06-18+).
    protocol_version_header: bool = True
    #: Which HTTP transport the revision defines.
    http_transport: HttpTransport = HttpTransport.STREAMABLE
    #: POSTs mirror ``method`` and ``params.name`` into ``Mcp-Method``/``Mcp-Name`` (2026-07-28).
    metadata_headers: bool = False
    #: A server's SSE stream opens with a priming event, an id and empty data (2025-11-25).
    primes_sse: bool = False
    #: The ``resultType`` values a result may carry; empty: results carry none (handshake era).
    result_types: frozenset[ResultType] = frozenset()
    #: Requests may be task-augmented (``params.task``; 2025-11-25 core tasks).
    task_augmentation: bool = False
    #: Dynamic client registration names an ``application_type`` (2026-07-28).
    registers_application_type: bool = False
    #: ``traceparent``, ``tracestate`` and ``baggage`` are reserved ``_meta`` keys (2026-07-28).
    trace_meta_keys: bool = False
    #: Object kind -> the optional members its schema has (``GATED_MEMBERS``: all of them).
    members: Mapping[str, frozenset[str]] = _MEMBERS_2025_11_25
    #: The content block types it has of those not every revision has (``GATED_CONTENT_TYPES``).
    content_types: frozenset[str] = frozenset({"audio", "resource_link"})
    #: The error codes it defines in JSON-RPC's reserved range, besides JSON-RPC's own.
    error_codes: frozenset[int] = frozenset({rpc.RESOURCE_NOT_FOUND_LEGACY})

    def requests_from(self, role: Role) -> frozenset[str]:
        return self.client_requests if role is Role.CLIENT else self.server_requests

    def notifications_from(self, role: Role) -> frozenset[str]:
        return self.client_notifications if role is Role.CLIENT else self.server_notifications

    @property
    def session_header(self) -> bool:
        """Whether the HTTP transport carries a session in ``Mcp-Session-Id``."""
        return self.era is Era.HANDSHAKE and self.http_transport is HttpTransport.STREAMABLE

    @property
    def input_required(self) -> bool:
        """Whether a server asks its questions inside an ``InputRequiredResult`` (then
        ``server_requests`` never travel as JSON-RPC requests of their own)."""
        return ResultType.INPUT_REQUIRED in self.result_types

    @property
    def wire_requests(self) -> frozenset[str]:
        """The methods that travel as JSON-RPC requests, either direction."""
        return self.client_requests | (frozenset() if self.input_required else self.server_requests)

    @property
    def notifications(self) -> frozenset[str]:
        """The notifications of the revision, either direction."""
        return self.client_notifications | self.server_notifications

    def has_member(self, kind: str, member: str) -> bool:
        """Whether objects of ``kind`` may carry ``member`` in this revision."""
        return member not in GATED_MEMBERS.get(kind, ()) or member in self.members.get(kind, ())

    def has_content_type(self, kind: str) -> bool:
        return kind not in GATED_CONTENT_TYPES or kind in self.content_types


REV_2024_11_05: Final = Revision(
    "2024-11-05",
    Era.HANDSHAKE,
    _BASE_CLIENT_REQUESTS,
    _BASE_SERVER_REQUESTS,
    _BASE_CLIENT_NOTIFICATIONS,
    _BASE_SERVER_NOTIFICATIONS,
    completions_capability=False,
    protocol_version_header=False,
    http_transport=HttpTransport.HTTP_SSE,
    members=_MEMBERS_2024_11_05,
    content_types=frozenset(),
)
REV_2025_03_26: Final = Revision(
    "2025-03-26",
    Era.HANDSHAKE,
    _BASE_CLIENT_REQUESTS,
    _BASE_SERVER_REQUESTS,
    _BASE_CLIENT_NOTIFICATIONS,
    _BASE_SERVER_NOTIFICATIONS,
    batches=True,
    protocol_version_header=False,
    members=_MEMBERS_2025_03_26,
    content_types=frozenset({"audio"}),
)
REV_2025_06_18: Final = Revision(
    "2025-06-18",
    Era.HANDSHAKE,
    _BASE_CLIENT_REQUESTS,
    _BASE_SERVER_REQUESTS | {"elicitation/create"},
    _BASE_CLIENT_NOTIFICATIONS,
    _BASE_SERVER_NOTIFICATIONS,
    members=_MEMBERS_2025_06_18,
)
REV_2025_11_25: Final = Revision(
    "2025-11-25",
    Era.HANDSHAKE,
    _BASE_CLIENT_REQUESTS | _TASK_REQUESTS,
    _BASE_SERVER_REQUESTS | {"elicitation/create"} | _TASK_REQUESTS,
    _BASE_CLIENT_NOTIFICATIONS | {"notifications/tasks/status"},
    _BASE_SERVER_NOTIFICATIONS | {"notifications/elicitation/complete", "notifications/tasks/status"},
    primes_sse=True,
    task_augmentation=True,
    error_codes=frozenset({rpc.RESOURCE_NOT_FOUND_LEGACY, rpc.URL_ELICITATION_REQUIRED}),
)
REV_2026_07_28: Final = Revision(
    "2026-07-28",
    Era.STATELESS,
    frozenset(
        {
            "server/discover",
            "subscriptions/listen",
            "completion/complete",
            "prompts/get",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "tools/call",
            "tools/list",
        }
    ),
    # Server-to-client requests travel inside InputRequiredResult in this era.
    frozenset({"sampling/createMessage", "roots/list", "elicitation/create"}),
    frozenset({"notifications/cancelled"}),
    frozenset(
        {
            "notifications/cancelled",
            "notifications/progress",
            "notifications/message",
            "notifications/resources/updated",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/subscriptions/acknowledged",
        }
    ),
    metadata_headers=True,
    result_types=frozenset({ResultType.COMPLETE, ResultType.INPUT_REQUIRED}),
    registers_application_type=True,
    trace_meta_keys=True,
    members=_MEMBERS_2026_07_28,
    error_codes=frozenset(
        {
            rpc.HEADER_MISMATCH,
            rpc.MISSING_CLIENT_CAPABILITY,
            rpc.UNSUPPORTED_PROTOCOL_VERSION,
        }
    ),
)

REVISIONS: Final[Mapping[str, Revision]] = {
    r.name: r for r in (REV_2024_11_05, REV_2025_03_26, REV_2025_06_18, REV_2025_11_25, REV_2026_07_28)
}
#: Every revision trimcp knows, oldest first.
ALL_VERSIONS: Final = tuple(REVISIONS)
#: Handshake-era revisions, oldest first.
HANDSHAKE_VERSIONS: Final = tuple(n for n, r in REVISIONS.items() if r.era is Era.HANDSHAKE)
LATEST_HANDSHAKE: Final = HANDSHAKE_VERSIONS[-1]
#: Stateless-era revisions, oldest first.
STATELESS_VERSIONS: Final = tuple(n for n, r in REVISIONS.items() if r.era is Era.STATELESS)
#: Object kind -> the members some revision lacks (``Revision.members``: which it has).
GATED_MEMBERS: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        kind: frozenset().union(*(r.members.get(kind, frozenset()) for r in REVISIONS.values()))
        for kind in sorted({k for r in REVISIONS.values() for k in r.members})
    }
)
#: The content block types some revision lacks.
GATED_CONTENT_TYPES: Final[frozenset[str]] = frozenset().union(*(r.content_types for r in REVISIONS.values()))


def get_revision(name: str) -> Revision:
    try:
        return REVISIONS[name]
    except KeyError:
        raise ValueError(f"unknown MCP protocol revision {name!r}; known: {', '.join(ALL_VERSIONS)}") from None


def at_least(version: str, first: str) -> bool:
    """Whether revision ``version`` is ``first`` or later, by the table's order (for checks
    that state a rule "from ``first`` on" as the spec words it); ``ValueError`` for a name
    not in the table."""
    get_revision(version)
    get_revision(first)
    return ALL_VERSIONS.index(version) >= ALL_VERSIONS.index(first)


def revisions_from(first: str) -> tuple[str, ...]:
    """The revisions from ``first`` on, oldest first."""
    return tuple(v for v in ALL_VERSIONS if at_least(v, first))


def revisions_where(fact: Callable[[Revision], Any]) -> tuple[str, ...]:
    """The revisions whose row satisfies ``fact``, oldest first."""
    return tuple(n for n, r in REVISIONS.items() if fact(r))


# To send METHOD, the *receiver's* capabilities must contain PATH.
_PEER_GATES: Final[Mapping[str, tuple[str, ...]]] = {
    # client -> server requests
    "completion/complete": ("completions",),
    "logging/setLevel": ("logging",),
    "prompts/get": ("prompts",),
    "prompts/list": ("prompts",),
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "tools/call": ("tools",),
    "tools/list": ("tools",),
    # server -> client requests
    "sampling/createMessage": ("sampling",),
    "roots/list": ("roots",),
    "elicitation/create": ("elicitation",),
}
# To send METHOD, the *sender's own* capabilities must contain PATH.
_OWN_GATES: Final[Mapping[str, tuple[str, ...]]] = {
    "notifications/message": ("logging",),
    "notifications/resources/updated": ("resources", "subscribe"),
    "notifications/resources/list_changed": ("resources", "listChanged"),
    "notifications/tools/list_changed": ("tools", "listChanged"),
    "notifications/prompts/list_changed": ("prompts", "listChanged"),
    "notifications/roots/list_changed": ("roots", "listChanged"),
}
# Task methods are gated per direction in 2025-11-25 (tasks.list, tasks.cancel, ...).
_TASK_GATES: Final[Mapping[str, tuple[str, ...]]] = {
    "tasks/get": ("tasks",),
    "tasks/result": ("tasks",),
    "tasks/list": ("tasks", "list"),
    "tasks/cancel": ("tasks", "cancel"),
}


def peer_gate(method: str, revision: Revision) -> tuple[str, ...] | None:
    """The capability path the receiver must advertise before we send ``method``."""
    if method == "completion/complete" and not revision.completions_capability:
        return None
    return _PEER_GATES.get(method) or _TASK_GATES.get(method)


def own_gate(method: str) -> tuple[str, ...] | None:
    """The capability path the sender itself must have advertised to send ``method``."""
    return _OWN_GATES.get(method)


def has_capability(capabilities: Mapping[str, Any] | None, path: tuple[str, ...]) -> bool:
    node: Any = capabilities or {}
    for key in path:
        # (``type(node) is dict`` first: capabilities come from JSON, and an ABC check is
        # slow; this runs for every request sent.)
        if (type(node) is not dict and not isinstance(node, Mapping)) or key not in node:
            return False
        node = node[key]
        # A present-but-false flag (``"subscribe": false``) does not grant the feature.
        if node is False or node is None:
            return False
    return True
