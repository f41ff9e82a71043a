"""The checks that came first: handshake, discovery, JSON-RPC, features, stdio, HTTP, auth.

Levels follow the sentence in the specification: "MUST" where the spec says
MUST, "SHOULD" where it says SHOULD; "BEST-PRACTICE" (``B``) where no
server-side MUST/SHOULD sentence stands behind the check (it never fails a
run).  Sections name pages under
``docs/specification/<revision>/``.  ``revisions`` says which revisions hold
the sentence: the handshake-era lifecycle (``initialize``, ``ping``,
``logging/setLevel``) is gone from 2026-07-28, whose own rules (discovery, the
per-request envelope, ``resultType``, multi-round-trip input, cache hints,
``subscriptions/listen``) did not exist before it; tool-name rules arrived in
2025-11-25 and ``outputSchema`` in 2025-06-18.
"""

from __future__ import annotations

from typing import Final

from ..._sansio.revisions import (
    HANDSHAKE_VERSIONS,
    STATELESS_VERSIONS,
    HttpTransport,
    at_least,
    revisions_from,
    revisions_where,
)
from ..model import CheckSpec, Level

M, S, B = Level.MUST, Level.SHOULD, Level.BEST
HANDSHAKE: Final = HANDSHAKE_VERSIONS
STATELESS: Final = STATELESS_VERSIONS
FROM_2025_06_18: Final = revisions_from("2025-06-18")
FROM_2025_11_25: Final = revisions_from("2025-11-25")
#: Streamable HTTP (2025-03-26 on); 2024-11-05 had the HTTP+SSE transport only.
STREAMABLE: Final = revisions_where(lambda r: r.http_transport is HttpTransport.STREAMABLE)
STREAMABLE_HANDSHAKE: Final = tuple(v for v in STREAMABLE if v in HANDSHAKE_VERSIONS)
FROM_2025_06_18_HANDSHAKE: Final = tuple(v for v in STREAMABLE_HANDSHAKE if at_least(v, "2025-06-18"))
HTTP_2025: Final = "basic/transports"
HTTP_2026: Final = "basic/transports/streamable-http"
AUTH: Final = "basic/authorization"

_CHECKS: Final[tuple[CheckSpec, ...]] = (
    # ---- handshake era: the initialize lifecycle
    CheckSpec(
        "lifecycle.initialize", M, "basic/lifecycle", "server answers initialize with an InitializeResult", HANDSHAKE
    ),
    CheckSpec(
        "lifecycle.version",
        M,
        "basic/lifecycle",
        "every initialize is answered with a known revision, the requested one whenever the server "
        "is known to support it",
        HANDSHAKE,
    ),
    CheckSpec("lifecycle.server-info", M, "basic/lifecycle", "serverInfo carries name and version", HANDSHAKE),
    CheckSpec(
        "lifecycle.unsupported-version",
        M,
        "basic/lifecycle",
        "an unknown requested revision is answered with a supported one",
        HANDSHAKE,
    ),
    CheckSpec("lifecycle.ping", M, "basic/utilities/ping", "ping is answered promptly with an empty result", HANDSHAKE),
    # ---- stateless era: discovery and the per-request rules
    CheckSpec(
        "discover.result",
        M,
        "server/discover",
        "server/discover answers a DiscoverResult: supportedVersions holding the revision in use, "
        "capabilities, ttlMs, cacheScope",
        STATELESS,
    ),
    CheckSpec(
        "discover.server-info",
        S,
        "server/discover",
        "the DiscoverResult names the server in _meta io.modelcontextprotocol/serverInfo",
        STATELESS,
    ),
    CheckSpec(
        "stateless.result-type",
        M,
        "basic",
        "every result carries resultType (input_required only on tools/call, prompts/get, resources/read)",
        STATELESS,
    ),
    CheckSpec(
        "stateless.server-info", S, "basic", "results carry io.modelcontextprotocol/serverInfo in _meta", STATELESS
    ),
    CheckSpec(
        "stateless.unsupported-version",
        M,
        "basic/versioning",
        "a request for an unknown revision gets -32022 with data.supported and data.requested",
        STATELESS,
    ),
    CheckSpec(
        "stateless.missing-envelope",
        M,
        "basic",
        "a request without the _meta protocolVersion/clientCapabilities envelope is rejected with -32602",
        STATELESS,
    ),
    # basic/index, _meta: "A request missing any required field is malformed; the server MUST
    # reject it with JSON-RPC error code -32602", and -32021 "whose data.requiredCapabilities
    # lists the missing capabilities" (checks/contract26.py).
    CheckSpec(
        "stateless.partial-envelope",
        M,
        "basic",
        "a request whose _meta lacks protocolVersion, or clientCapabilities, is rejected with -32602",
        STATELESS,
    ),
    CheckSpec(
        "stateless.missing-capability-data",
        M,
        "basic",
        "every -32021 error lists the missing capabilities in data.requiredCapabilities",
        STATELESS,
    ),
    CheckSpec(
        "stateless.log-level",
        M,
        "server/utilities/logging",
        "no notifications/message for a request that carries no logLevel",
        STATELESS,
    ),
    # ---- every revision
    CheckSpec("jsonrpc.valid-messages", M, "basic", "every message received is valid JSON-RPC 2.0"),
    CheckSpec("jsonrpc.unknown-method", M, "basic", "an unknown method is answered with error -32601"),
    CheckSpec("jsonrpc.ids", M, "basic", "every response answers a request id that was sent, once"),
    # The schema is "the authoritative protocol requirements" (index); the sentences behind the
    # check are "Respect the negotiated protocol version" (lifecycle: SHOULD in 2024-11-05 and
    # 2025-03-26, MUST from 2025-06-18) and, in 2026-07-28, the result/error shape MUSTs of basic.
    CheckSpec(
        "schema.messages",
        M,
        "schema",
        "every result and notification matches the revision's schema",
        levels=(("2024-11-05", S), ("2025-03-26", S)),
    ),
    CheckSpec(
        "schema.dialect",
        M,
        "basic",
        "every JSON Schema the server sends (tool input and output schemas, "
        "elicitation requestedSchema) is valid in its declared dialect, 2020-12 by default",
        FROM_2025_11_25,
    ),
    CheckSpec(
        "capabilities.notifications",
        M,
        "basic/lifecycle",
        "the server sends only notifications its capabilities declare",
    ),
    # BEST: "Only use capabilities that were successfully negotiated" binds the sender; no sentence
    # says how a server answers a method of a capability it did not advertise.
    CheckSpec("capabilities.gating", B, "basic/lifecycle", "a method whose capability was not advertised is refused"),
    # tools/prompts/resources list: a MUST only in 2026-07-28 ("Servers that declare the `tools` capability
    # MUST respond to `tools/list`"); before, no sentence stands behind it.
    CheckSpec("tools.list", B, "server/tools", "tools/list succeeds and pages end", stateless_level=M),
    CheckSpec(
        "tools.input-schema",
        M,
        "server/tools",
        "every tool's inputSchema (every page) is a JSON Schema object of type object, valid in its dialect",
        FROM_2025_11_25,
    ),
    CheckSpec("tools.unique-names", S, "server/tools", "tool names are unique", FROM_2025_11_25),
    CheckSpec("tools.name-format", S, "server/tools", "tool names use 1-128 of A-Z a-z 0-9 _ - .", FROM_2025_11_25),
    # BEST: no sentence makes a server's tools callable by a harness, nor names the answer to an unknown
    # tool (server/tools lists it among protocol errors as an example), nor requires templates/list;
    # pagination only says servers SHOULD "provide stable cursors", not that they never repeat.
    CheckSpec("tools.call-read-only", B, "server/tools", "read-only tools can be called and return a CallToolResult"),
    CheckSpec(
        "tools.structured-output",
        M,
        "server/tools",
        "every successful call of a tool with an outputSchema returns structuredContent that conforms",
        FROM_2025_06_18,
    ),
    CheckSpec("tools.unknown-tool", B, "server/tools", "calling an unknown tool is an error (-32602 or isError)"),
    CheckSpec("resources.list", B, "server/resources", "resources/list succeeds and pages end", stateless_level=M),
    CheckSpec("resources.templates", B, "server/resources", "resources/templates/list succeeds and pages end"),
    CheckSpec(
        "resources.read", B, "server/resources", "every listed resource can be read; contents carry text or blob"
    ),
    CheckSpec(
        "resources.unknown",
        S,
        "server/resources",
        "reading an unknown URI is an error: -32002 (or -32602) up to 2025-11-25, -32602 and never -32002 "
        "in 2026-07-28",
        stateless_level=M,
    ),
    CheckSpec("prompts.list", B, "server/prompts", "prompts/list succeeds and pages end", stateless_level=M),
    # No sentence makes listed prompts fetchable, resources readable, completion answer, setLevel succeed.
    CheckSpec("prompts.get", B, "server/prompts", "every listed prompt can be fetched"),
    CheckSpec(
        "logging.set-level",
        B,
        "server/utilities/logging",
        "logging/setLevel is answered with an empty result",
        HANDSHAKE,
    ),
    CheckSpec("completion.complete", B, "server/utilities/completion", "completion/complete returns values"),
    CheckSpec("pagination.cursors", B, "server/utilities/pagination", "cursors do not repeat"),
    # ---- stateless era: patterns
    CheckSpec(
        "mrtr.input-required",
        M,
        "basic/patterns/mrtr",
        "InputRequiredResults are well-formed, ask only for declared capabilities, and the retry completes",
        STATELESS,
    ),
    # The MUSTs behind it ("MUST protect its integrity", "MUST reject state that fails verification")
    # bind only when requestState influences authorization, resource access or business logic,
    # which a black box cannot see: advice (requirements/data/stateless.json lists them untestable).
    CheckSpec(
        "mrtr.tampered-state", B, "basic/patterns/mrtr", "a modified requestState is rejected, not trusted", STATELESS
    ),
    CheckSpec(
        "caching.hints",
        M,
        "server/utilities/caching",
        "cacheable complete results carry ttlMs >= 0 and cacheScope public/private",
        STATELESS,
    ),
    # "The server MUST send notifications/subscriptions/acknowledged as the first message [...] and
    # MUST NOT send any notification on the subscription before it." (basic/patterns/subscriptions)
    CheckSpec(
        "subscriptions.listen",
        M,
        "basic/patterns/subscriptions",
        "subscriptions/listen is acknowledged, and nothing on the subscription precedes the acknowledgment",
        STATELESS,
    ),
    # ---- stdio transport
    CheckSpec("stdio.clean-stdout", M, "basic/transports", "stdout carries only MCP messages"),
    # Up to 2025-11-25 the sentence is the client's ("the client SHOULD initiate shutdown by first
    # closing the input stream"); 2026-07-28 puts it on the server: "Servers SHOULD exit promptly
    # when their standard input is closed or reads return end-of-file." (basic/transports/stdio)
    CheckSpec("stdio.shutdown", B, "basic/transports", "the server exits when its stdin closes", stateless_level=S),
    # ---- Streamable HTTP transport (HTTP targets only)
    CheckSpec("http.origin", M, HTTP_2025, "a request with a foreign Origin is refused with 403", STREAMABLE),
    CheckSpec(
        "http.content-type",
        M,
        HTTP_2025,
        "a POSTed request is answered with application/json or text/event-stream",
        STREAMABLE,
    ),
    CheckSpec(
        "http.notification-202",
        M,
        HTTP_2025,
        "an accepted POSTed notification gets 202 with no body",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec(
        "http.session-id", M, HTTP_2025, "Mcp-Session-Id holds only visible ASCII (0x21-0x7E)", STREAMABLE_HANDSHAKE
    ),
    # The MUST is for a session the server terminated ("after which it MUST respond to requests
    # containing that session ID with HTTP 404 Not Found"): http.delete tests it.  An id never
    # issued has no sentence; 404 is what a client can act on.
    CheckSpec(
        "http.unknown-session",
        B,
        HTTP_2025,
        "a request naming a session id never issued gets 404",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec(
        "http.delete",
        M,
        HTTP_2025,
        "DELETE ends the session (then 404 for it) or is refused with 405",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec("http.get-stream", M, HTTP_2025, "GET is answered with text/event-stream or 405", STREAMABLE_HANDSHAKE),
    CheckSpec(
        "http.protocol-version",
        M,
        HTTP_2025,
        "an invalid MCP-Protocol-Version header gets 400",
        FROM_2025_06_18_HANDSHAKE + STATELESS,
    ),
    CheckSpec(
        "http.method-header",
        M,
        HTTP_2026,
        "a missing or mismatched Mcp-Method header gets 400 with error -32020 (HeaderMismatch)",
        STATELESS,
    ),
    CheckSpec("http.no-get", S, HTTP_2026, "GET and DELETE to the endpoint get 405", STATELESS),
    # ---- authorization (HTTP targets that answer 401 without a token).  Protected-resource
    # metadata arrives in 2025-06-18; the 2025-03-26 page has none of these rules for servers.
    CheckSpec(
        "auth.www-authenticate",
        M,
        AUTH,
        "a 401 carries a Bearer WWW-Authenticate with resource_metadata (or the well-known URL works)",
        FROM_2025_06_18,
    ),
    CheckSpec(
        "auth.protected-resource-metadata",
        M,
        AUTH,
        "protected-resource metadata is reachable, its resource is the server, authorization_servers is non-empty",
        FROM_2025_06_18,
    ),
    CheckSpec(
        "auth.authorization-server-metadata",
        M,
        AUTH,
        "authorization-server metadata is reachable in the RFC 8414 / OIDC URL order and names the issuer",
        FROM_2025_06_18,
    ),
    CheckSpec(
        "auth.pkce",
        M,
        AUTH,
        "the authorization server advertises PKCE S256 (code_challenge_methods_supported)",
        FROM_2025_06_18,
    ),
)

SPECS: Final[tuple[CheckSpec, ...]] = _CHECKS
