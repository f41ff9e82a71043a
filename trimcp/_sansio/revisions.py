"""What each MCP protocol revision contains.

Theory of operation
-------------------
Every revision is described as data: its era (handshake: ``initialize`` then a
session; stateless: 2026-07-28, ``server/discover`` and a ``_meta`` envelope on
every request), the methods each side may send, and the capability that gates
each method.  The Connection consults these tables instead of branching on
version strings, so adding a revision means adding a row here.

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
from collections.abc import Mapping
from typing import Any, Final

import attrs

from .connection.lifecycle import Role


class Era(enum.StrEnum):
    """The two eras of the protocol.  A ``StrEnum``: ``session.era == "handshake"``, as code
    written when ``ClientSession.era`` was a string compares, still holds."""

    HANDSHAKE = "handshake"
    STATELESS = "stateless"


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


@attrs.frozen
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
    #: The HTTP transport sends ``MCP-Protocol-Version`` on every request.
    protocol_version_header: bool = True

    def requests_from(self, role: Role) -> frozenset[str]:
        return self.client_requests if role is Role.CLIENT else self.server_requests

    def notifications_from(self, role: Role) -> frozenset[str]:
        return self.client_notifications if role is Role.CLIENT else self.server_notifications


REV_2024_11_05: Final = Revision(
    "2024-11-05",
    Era.HANDSHAKE,
    _BASE_CLIENT_REQUESTS,
    _BASE_SERVER_REQUESTS,
    _BASE_CLIENT_NOTIFICATIONS,
    _BASE_SERVER_NOTIFICATIONS,
    completions_capability=False,
    protocol_version_header=False,
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
)
REV_2025_06_18: Final = Revision(
    "2025-06-18",
    Era.HANDSHAKE,
    _BASE_CLIENT_REQUESTS,
    _BASE_SERVER_REQUESTS | {"elicitation/create"},
    _BASE_CLIENT_NOTIFICATIONS,
    _BASE_SERVER_NOTIFICATIONS,
)
REV_2025_11_25: Final = Revision(
    "2025-11-25",
    Era.HANDSHAKE,
    _BASE_CLIENT_REQUESTS | _TASK_REQUESTS,
    _BASE_SERVER_REQUESTS | {"elicitation/create"} | _TASK_REQUESTS,
    _BASE_CLIENT_NOTIFICATIONS | {"notifications/tasks/status"},
    _BASE_SERVER_NOTIFICATIONS | {"notifications/elicitation/complete", "notifications/tasks/status"},
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
)

REVISIONS: Final[Mapping[str, Revision]] = {
    r.name: r for r in (REV_2024_11_05, REV_2025_03_26, REV_2025_06_18, REV_2025_11_25, REV_2026_07_28)
}
#: Every revision trimcp knows, oldest first.
ALL_VERSIONS: Final = tuple(REVISIONS)
#: Handshake-era revisions, oldest first.
HANDSHAKE_VERSIONS: Final = tuple(n for n, r in REVISIONS.items() if r.era is Era.HANDSHAKE)
LATEST_HANDSHAKE: Final = HANDSHAKE_VERSIONS[-1]


def get_revision(name: str) -> Revision:
    try:
        return REVISIONS[name]
    except KeyError:
        raise ValueError(f"unknown MCP protocol revision {name!r}; known: {', '.join(ALL_VERSIONS)}") from None


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
