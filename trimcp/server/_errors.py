"""Exceptions specific to the server role.

``ResourceNotFound`` is what a resource reader raises for a URI it cannot
serve; the server turns it into the JSON-RPC error the negotiated revision
uses (-32002 in the handshake era, -32602 from 2026-07-28), with the URI in
``data``.  ``ClientCapabilityError`` is raised by ``Context.sample``,
``elicit`` and ``list_roots`` when the client did not advertise the
capability (or its revision lacks the method), before anything is sent.
"""

from __future__ import annotations

from .._errors import LocalProtocolError, TrimcpError


class ResourceNotFound(TrimcpError):
    """The requested resource URI does not exist."""

    def __init__(self, uri: str, message: str = "Resource not found") -> None:
        super().__init__(f"{message}: {uri}")
        self.uri = uri
        self.message = message


class ClientCapabilityError(LocalProtocolError):
    """The client can't be asked this: it lacks the capability or the method."""
