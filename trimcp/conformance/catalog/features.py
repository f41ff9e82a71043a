"""Checks of the server features: negative probes, capability honesty, content, tool inputs.

Pages: ``server/tools``, ``server/resources``, ``server/prompts``,
``server/utilities/{completion,logging,pagination}`` of every revision.  The
levels follow the sentences in ``requirements/data/features.json``; a check
with no MUST/SHOULD sentence behind it is ``BEST-PRACTICE`` (``B``).
"""

from __future__ import annotations

from typing import Final

from ..._sansio.revisions import ALL_VERSIONS, HANDSHAKE_VERSIONS, STATELESS_VERSIONS, at_least, revisions_from
from ..model import CheckSpec, Level

M, S, B = Level.MUST, Level.SHOULD, Level.BEST
STATELESS: Final = STATELESS_VERSIONS
BEFORE_2025_11_25: Final = tuple(v for v in ALL_VERSIONS if not at_least(v, "2025-11-25"))

SPECS: Final[tuple[CheckSpec, ...]] = (
    CheckSpec(
        "pagination.invalid-cursor",
        S,
        "server/utilities/pagination",
        "an invalid cursor on every offered list is refused with -32602",
    ),
    CheckSpec("prompts.unknown-name", S, "server/prompts", "prompts/get of an unknown prompt name gets -32602"),
    CheckSpec("prompts.missing-argument", S, "server/prompts", "prompts/get without a required argument gets -32602"),
    # "Malformed requests" are protocol errors (server/tools, error handling), without a MUST/SHOULD.
    CheckSpec("tools.call-without-name", B, "server/tools", "tools/call without a name is refused with -32602"),
    CheckSpec(
        "tools.input-validation",
        M,
        "server/tools",
        "a tool called with arguments of the wrong type refuses them (an error or an isError result)",
    ),
    CheckSpec(
        "content.base64",
        M,
        "server/prompts",
        "image/audio data and resource blobs are strict base64; image and audio carry a valid MIME type "
        "(RFC 6838 type/subtype)",
    ),
    CheckSpec(
        "content.embedded-resource",
        M,
        "server/prompts",
        "embedded resources in prompt messages carry uri, mimeType and exactly one of text/blob",
    ),
    CheckSpec(
        "resources.read-contents",
        B,
        "server/resources",
        "every resource content read carries uri and exactly one of text/blob",
    ),
    # No sentence bounds the levels sent after logging/setLevel (the page describes it only).
    CheckSpec(
        "logging.below-level",
        B,
        "server/utilities/logging",
        "after logging/setLevel no notifications/message below that level arrives",
        HANDSHAKE_VERSIONS,
    ),
    CheckSpec(
        "features.declared",
        M,
        "server/tools",
        "a feature whose capability is not declared (tools, prompts, resources, completions) is not served",
    ),
    CheckSpec("features.stable-lists", M, "server/tools", "tools/list is the same on another connection", STATELESS),
    CheckSpec(
        "logging.invalid-level",
        S,
        "server/utilities/logging",
        "an unknown log level (setLevel, or the logLevel of _meta) is refused with -32602",
    ),
    CheckSpec(
        "completion.invalid-ref",
        S,
        "server/utilities/completion",
        "completion/complete of an unknown prompt gets -32602",
        revisions_from("2025-03-26"),
    ),
    CheckSpec(
        "tools.x-mcp-header",
        M,
        "server/tools",
        "x-mcp-header names are non-empty HTTP tokens, unique, on statically reachable primitive properties",
        STATELESS,
    ),
    CheckSpec(
        "resources.uri-syntax",
        M,
        "server/resources",
        "every resource URI sent (listed, read, linked, embedded) follows the RFC 3986 URI grammar",
        revisions_from("2025-06-18"),
    ),
    # The name and schema rules became sentences in 2025-11-25; before, they are habits (core keeps
    # tools.input-schema and tools.unique-names for the revisions with the sentence).
    CheckSpec(
        "tools.input-schema-legacy",
        B,
        "server/tools",
        "every tool's inputSchema is a JSON Schema object of type object",
        BEFORE_2025_11_25,
    ),
    CheckSpec("tools.unique-names-legacy", B, "server/tools", "tool names are unique", BEFORE_2025_11_25),
    CheckSpec(
        "features.server-requests",
        M,
        "client/sampling",
        "sampling and elicitation requests ask only for what the client declared and are well-formed "
        "(modes, message, requestedSchema, url, elicitationId; -32042 data; completion ids)",
        revisions_from("2025-11-25"),
    ),
    CheckSpec(
        "features.sampling-tool-balance",
        M,
        "client/sampling",
        "after a stopReason toolUse answer, the server's next sampling request answers every tool_use "
        "id with a tool_result, in a user message holding only tool results",
        revisions_from("2025-11-25"),
    ),
    CheckSpec("resources.invalid-uri", M, "server/resources", "resources/read of a malformed URI is an error"),
    CheckSpec(
        "completion.limits",
        B,
        "server/utilities/completion",
        "completion values are at most 100, and total is not below their number",
        ALL_VERSIONS,
    ),
)
