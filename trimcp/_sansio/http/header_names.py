"""The names of the HTTP header fields of MCP's HTTP transports, spelled once.

Theory of operation
-------------------
Field names are case-insensitive (RFC 9110, section 5.1).  Each name is written
here in the spelling the MCP spec uses (basic/transports: ``Mcp-Session-Id``,
``MCP-Protocol-Version``, ``Last-Event-ID``; 2026-07-28
basic/transports/streamable-http, "Request Metadata": ``Mcp-Method``,
``Mcp-Name``, ``Mcp-Param-<Name>``), and that spelling is what trimcp sends.
A receiver compares lower-cased: the server's ``RequestHead`` and the client's
response reader lower-case what arrives and every lookup lower-cases its
argument (``lower``), so a peer that writes ``mcp-session-id`` or
``MCP-SESSION-ID`` is understood the same.

Which era uses which header is a fact of the revision
(``revisions.Revision``), not of this module.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "LAST_EVENT_ID_HEADER",
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "SESSION_HEADER",
    "VERSION_HEADER",
    "lower",
]

#: The session id a handshake-era Streamable HTTP server assigns (2025-03-26 .. 2025-11-25).
SESSION_HEADER: Final = "Mcp-Session-Id"
#: The revision a request is sent under (2025-06-18 on; every request from 2026-07-28).
VERSION_HEADER: Final = "MCP-Protocol-Version"
#: Resuming a broken SSE stream: the id of the last event received.
LAST_EVENT_ID_HEADER: Final = "Last-Event-ID"
#: 2026-07-28 request metadata: the JSON-RPC ``method``.
METHOD_HEADER: Final = "Mcp-Method"
#: 2026-07-28 request metadata: ``params.name`` (or ``uri``, ``taskId``; ``headers.NAME_SOURCES``).
NAME_HEADER: Final = "Mcp-Name"
#: 2026-07-28 request metadata: a tool argument marked ``x-mcp-header: <Name>``.
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"


def lower(name: str) -> str:
    """The form a received field name is compared in."""
    return name.lower()
