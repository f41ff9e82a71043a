"""Every check the harness knows, with its level and the spec section it tests.

Levels follow the sentence in the specification (handshake-era revisions,
2024-11-05 to 2025-11-25): "MUST" where the spec says MUST, "SHOULD" where it
says SHOULD.  Sections name pages under ``docs/specification/<revision>/``.
"""

from __future__ import annotations

from typing import Final, Mapping

from .model import CheckSpec, Level

M, S = Level.MUST, Level.SHOULD

_CHECKS: Final = (
    CheckSpec("lifecycle.initialize", M, "basic/lifecycle", "server answers initialize with an InitializeResult"),
    CheckSpec("lifecycle.version", M, "basic/lifecycle", "negotiated protocolVersion is one the client offered or a known revision"),
    CheckSpec("lifecycle.server-info", M, "basic/lifecycle", "serverInfo carries name and version"),
    CheckSpec("lifecycle.unsupported-version", M, "basic/lifecycle", "an unknown requested revision is answered with a supported one"),
    CheckSpec("lifecycle.ping", M, "basic/utilities/ping", "ping is answered promptly with an empty result"),
    CheckSpec("jsonrpc.valid-messages", M, "basic", "every message received is valid JSON-RPC 2.0"),
    CheckSpec("jsonrpc.unknown-method", M, "basic", "an unknown method is answered with error -32601"),
    CheckSpec("jsonrpc.ids", M, "basic", "every response answers a request id that was sent, once"),
    CheckSpec("schema.messages", M, "schema", "every result and notification matches the revision's schema"),
    CheckSpec("capabilities.notifications", M, "basic/lifecycle", "the server sends only notifications its capabilities declare"),
    CheckSpec("capabilities.gating", S, "basic/lifecycle", "a method whose capability was not advertised is refused"),
    CheckSpec("tools.list", M, "server/tools", "tools/list succeeds and pages end"),
    CheckSpec("tools.input-schema", M, "server/tools", "every tool's inputSchema is a JSON Schema object of type object"),
    CheckSpec("tools.unique-names", S, "server/tools", "tool names are unique"),
    CheckSpec("tools.name-format", S, "server/tools", "tool names use 1-128 of A-Z a-z 0-9 _ - ."),
    CheckSpec("tools.call-read-only", M, "server/tools", "read-only tools can be called and return a CallToolResult"),
    CheckSpec("tools.structured-output", M, "server/tools", "a tool with an outputSchema returns structuredContent that conforms"),
    CheckSpec("tools.unknown-tool", S, "server/tools", "calling an unknown tool is an error (-32602 or isError)"),
    CheckSpec("resources.list", M, "server/resources", "resources/list succeeds and pages end"),
    CheckSpec("resources.templates", M, "server/resources", "resources/templates/list succeeds and pages end"),
    CheckSpec("resources.read", M, "server/resources", "every listed resource can be read; contents carry text or blob"),
    CheckSpec("resources.unknown", S, "server/resources", "reading an unknown URI is an error (-32002, or -32602)"),
    CheckSpec("prompts.list", M, "server/prompts", "prompts/list succeeds and pages end"),
    CheckSpec("prompts.get", M, "server/prompts", "every listed prompt can be fetched"),
    CheckSpec("logging.set-level", M, "server/utilities/logging", "logging/setLevel is answered with an empty result"),
    CheckSpec("completion.complete", M, "server/utilities/completion", "completion/complete returns values"),
    CheckSpec("pagination.cursors", M, "server/utilities/pagination", "cursors do not repeat"),
    CheckSpec("stdio.clean-stdout", M, "basic/transports", "stdout carries only MCP messages"),
    CheckSpec("stdio.shutdown", S, "basic/lifecycle", "the server exits when its stdin closes"),
)

CATALOG: Final[Mapping[str, CheckSpec]] = {c.id: c for c in _CHECKS}
