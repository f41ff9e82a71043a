"""What one side knows about the session: the state the Connection's parts share.

Theory of operation
-------------------
A ``Connection`` is composed of parts (h11's Connection holds a
``ConnectionState`` the same way).  This object is what the Negotiator
(negotiation.py) and the admission rules (admission.py) are given of it: our
role, the revisions we speak, the lifecycle state (lifecycle.py), what
negotiation agreed - the protocol revision and the peer's identity,
capabilities and instructions (spec: basic/lifecycle for the handshake era,
server/discover for 2026-07-28) - and whether a server is answering
stateless-era requests.  The request tables (requests.py) need none of it.

Only the Connection and the Negotiator write it (a harness may overwrite the
peer's fields through the Connection's properties), and the lifecycle state
only moves through ``advance``: one move of the transitions table.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..revisions import Era, Revision, get_revision
from .lifecycle import IDLE, LifecycleEvent, Role, State, transition


@attrs.define
class ConnectionState:
    role: Role
    #: Newest first.
    supported_versions: tuple[str, ...]
    lifecycle: type[State] = IDLE
    #: The negotiated revision (client: from initialize or discover; server: from initialize).
    protocol_version: str | None = None
    peer_info: dict[str, Any] | None = None
    peer_capabilities: dict[str, Any] | None = None
    peer_instructions: str | None = None
    #: Server role: it has accepted an enveloped (stateless-era) request, so it is
    #: serving without a handshake and may notify as if operating.
    serves_stateless: bool = False

    def advance(self, event: LifecycleEvent) -> None:
        """Make one move of the lifecycle table (``LocalProtocolError`` if there is none)."""
        self.lifecycle = transition(self.role, self.lifecycle, event)

    @property
    def peer_role(self) -> Role:
        return Role.SERVER if self.role is Role.CLIENT else Role.CLIENT

    @property
    def revision(self) -> Revision:
        """The negotiated revision, or (before negotiation) the newest we support."""
        return get_revision(self.protocol_version or self.supported_versions[0])

    def versions_of(self, era: Era) -> tuple[str, ...]:
        """The revisions of ``era`` we support, newest first."""
        return tuple(v for v in self.supported_versions if get_revision(v).era is era)

    def candidate_revisions(self) -> list[Revision]:
        """The revision a message may belong to: the negotiated one, or before
        negotiation any we speak (initialize and discover offer different ones)."""
        if self.protocol_version:
            return [get_revision(self.protocol_version)]
        return [get_revision(v) for v in self.supported_versions]
