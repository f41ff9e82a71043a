"""A handshake-era Streamable HTTP session as every replica needs it.

Theory of operation
-------------------
Spec 2025-11-25, basic/lifecycle and basic/transports "Session Management":
a session begins with ``initialize`` on one HTTP request, and every later
request names it with ``Mcp-Session-Id``.  Behind a load balancer that is
not sticky the next request may reach another replica, which must serve it
as if it had negotiated the session itself.  What that takes is small and is
fixed at ``initialize`` or changed by the client explicitly: the negotiated
revision, the client's ``clientInfo`` and capabilities, whether
``notifications/initialized`` arrived, the ``logging/setLevel`` threshold,
and the resource URIs of ``resources/subscribe``.  ``SessionRecord`` is that,
plus the activity times the store's limits read; ``to_json``/``from_json``
are its stored form.  Requests in flight and the server's own requests to
the client are not in it: they live in the process that runs them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import attrs

from ..._errors import TrimcpError

__all__ = ["SessionRecord", "StoredRecordError"]


class StoredRecordError(TrimcpError):
    """A stored record that this version cannot read."""


@attrs.frozen
class SessionRecord:
    """One handshake-era session, as the store keeps it."""

    session_id: str
    created_at: float
    last_active: float
    protocol_version: str | None = None
    client_info: dict[str, Any] | None = None
    client_capabilities: dict[str, Any] | None = None
    #: ``notifications/initialized`` arrived (the session is operating).
    operating: bool = False
    #: The ``logging/setLevel`` threshold, if the client set one.
    log_level: str | None = None
    #: Resource URIs of ``resources/subscribe``, in the order subscribed.
    subscriptions: tuple[str, ...] = ()

    def with_subscriptions(self, uris: Iterable[str]) -> SessionRecord:
        return attrs.evolve(self, subscriptions=tuple(dict.fromkeys(uris)))

    def to_json(self) -> str:
        return json.dumps(
            {
                "id": self.session_id,
                "created": self.created_at,
                "active": self.last_active,
                "version": self.protocol_version,
                "info": self.client_info,
                "caps": self.client_capabilities,
                "operating": self.operating,
                "level": self.log_level,
                "subs": list(self.subscriptions),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> SessionRecord:
        try:
            data = json.loads(text)
            return cls(
                str(data["id"]),
                float(data["created"]),
                float(data["active"]),
                data["version"],
                data["info"],
                data["caps"],
                bool(data["operating"]),
                data["level"],
                tuple(str(u) for u in data["subs"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoredRecordError(f"not a stored session record: {exc!r}") from None
