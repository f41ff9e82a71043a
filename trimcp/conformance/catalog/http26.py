"""Checks of the 2026-07-28 Streamable HTTP transport (``basic/transports/streamable-http``).

The stateless era's transport mirrors the body into request headers
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``),
which the server must hold against the body (400 with -32020 HeaderMismatch),
answers each POST on its own JSON object or event stream, and has no
sessions.  ``checks/http_stateless.py`` runs these against ``http(s)://``
targets that negotiated a stateless revision; the transport checks that came
first (``http.origin``, ``http.method-header``, ...) stay in ``core``.
Levels follow the sentences of ``requirements/data/streamable-http-2026.json``.
"""

from __future__ import annotations

from typing import Final

from ..model import CheckSpec, Level
from .core import HTTP_2026, STATELESS

M, S, B = Level.MUST, Level.SHOULD, Level.BEST

SPECS: Final[tuple[CheckSpec, ...]] = (
    CheckSpec(
        "http26.missing-version",
        M,
        HTTP_2026,
        "a POST without MCP-Protocol-Version gets 400 with -32020 (unless the server serves pre-2025-06-18 clients)",
        STATELESS,
    ),
    CheckSpec(
        "http26.version-match",
        M,
        HTTP_2026,
        "an MCP-Protocol-Version header that differs from the body's protocolVersion gets 400 with -32020",
        STATELESS,
    ),
    CheckSpec(
        "http26.unsupported-version",
        M,
        HTTP_2026,
        "an unsupported MCP-Protocol-Version gets 400 with an UnsupportedProtocolVersionError (-32022) "
        "listing the supported versions",
        STATELESS,
    ),
    CheckSpec(
        "http26.unknown-method",
        M,
        HTTP_2026,
        "a method the revision lacks (an unknown one, ping, initialize) gets 404 with -32601",
        STATELESS,
    ),
    CheckSpec(
        "http26.header-case",
        M,
        HTTP_2026,
        "header names are matched case-insensitively (mcp-method, MCP-METHOD, mcp-param-*)",
        STATELESS,
    ),
    CheckSpec(
        "http26.name-header",
        M,
        HTTP_2026,
        "a missing or mismatched Mcp-Name gets 400 with -32020; a Base64-encoded one is decoded",
        STATELESS,
    ),
    CheckSpec(
        "http26.param-declarations",
        M,
        HTTP_2026,
        "every x-mcp-header declaration is a unique HTTP token on a primitive property reached through "
        "properties alone",
        STATELESS,
    ),
    CheckSpec(
        "http26.param-header",
        M,
        HTTP_2026,
        "a missing, mismatched or invalid Mcp-Param-* header gets 400 with -32020; a Base64-encoded one is decoded",
        STATELESS,
    ),
    CheckSpec(
        "http26.integer-header",
        S,
        HTTP_2026,
        "an integer Mcp-Param-* header is compared with the argument as a number (42.0 matches 42)",
        STATELESS,
    ),
    CheckSpec(
        "http26.error-status",
        M,
        HTTP_2026,
        "HeaderMismatch (-32020), MissingRequiredClientCapability (-32021) and UnsupportedProtocolVersion "
        "(-32022) errors come with HTTP 400",
        STATELESS,
    ),
    # Rests on basic/index (_meta): "On HTTP, the response status MUST be 400 Bad Request".
    CheckSpec(
        "http26.envelope-400",
        M,
        HTTP_2026,
        "a request whose _meta lacks protocolVersion or clientCapabilities gets HTTP 400",
        STATELESS,
    ),
    CheckSpec(
        "http26.notification",
        M,
        HTTP_2026,
        "a POSTed notification gets 202 with no body, or an HTTP error status",
        STATELESS,
    ),
    CheckSpec(
        "http26.stream-shape",
        M,
        HTTP_2026,
        "a request is answered with one JSON response, or an SSE stream of related notifications and one "
        "response, never a request",
        STATELESS,
    ),
    CheckSpec("http26.stream-end", S, HTTP_2026, "the response ends the SSE stream", STATELESS),
    CheckSpec("http26.accel-buffering", S, HTTP_2026, "an SSE response carries X-Accel-Buffering: no", STATELESS),
    CheckSpec(
        "http26.legacy-headers",
        S,
        HTTP_2026,
        "Mcp-Session-Id and Last-Event-ID are ignored; no session id is minted or echoed",
        STATELESS,
    ),
    # BEST: the page says each request is its own POST answered on its own stream, with no MUST on
    # the server's concurrency; a server that serialises requests still answers each.
    CheckSpec(
        "http26.concurrent",
        B,
        HTTP_2026,
        "several POSTs in flight at once are each answered with their own id",
        STATELESS,
    ),
)
