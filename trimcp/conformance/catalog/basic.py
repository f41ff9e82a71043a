"""Checks of the base protocol: JSON-RPC messages, error codes, the lifecycle, cancellation.

The sentences behind them are on the ``basic`` page (Messages: "All messages
between MCP clients and servers MUST follow the JSON-RPC 2.0 specification",
notifications get no response, and in 2026-07-28 the Error Codes partition of
the reserved range), ``basic/lifecycle`` and the cancellation pages
(``basic/utilities/cancellation``, 2026-07-28 ``basic/patterns/cancellation``:
invalid cancellation notifications "SHOULD be ignored").  The probes are in
``checks/negative.py``; the catalogue of sentences is ``requirements/data/basic.json``.
"""

from __future__ import annotations

from typing import Final

from ..model import CheckSpec, Level
from .core import FROM_2025_06_18, HANDSHAKE, STATELESS

M, S, B = Level.MUST, Level.SHOULD, Level.BEST

SPECS: Final[tuple[CheckSpec, ...]] = (
    # Rests on "The server MUST respond with its own capabilities and information" (handshake) and
    # "All implementations MUST support the base protocol" (every revision): a refusal answers nothing.
    CheckSpec(
        "lifecycle.connect",
        M,
        "basic/lifecycle",
        "the transport accepts the connection and the first request gets a JSON-RPC answer",
    ),
    CheckSpec("jsonrpc.parse-error", M, "basic", "invalid JSON is answered with error -32700"),
    CheckSpec(
        "jsonrpc.invalid-request",
        M,
        "basic",
        "a request without method, and a non-object, are answered with error -32600",
    ),
    CheckSpec(
        "jsonrpc.invalid-params",
        M,
        "basic",
        "a request whose params is an array or a string is answered with an error (-32602)",
    ),
    CheckSpec("jsonrpc.notification-no-response", M, "basic", "no response is sent to a notification"),
    # Up to 2025-11-25 only JSON-RPC reserves the range (no MCP sentence); 2026-07-28 partitions it:
    # "Implementations MUST NOT emit any code from this sub-range that is not defined by this specification".
    CheckSpec(
        "jsonrpc.error-codes",
        B,
        "basic",
        "error codes in the reserved range -32768..-32000 are ones JSON-RPC or the revision defines",
        stateless_level=M,
    ),
    CheckSpec(
        "cancellation.ignored",
        M,
        "basic/utilities/cancellation",
        "cancelling an unknown or an already finished request is ignored: no answer, the connection works",
    ),
    CheckSpec(
        "cancellation.honoured",
        S,
        "basic/utilities/cancellation",
        "a request cancelled in flight gets no response, and the connection keeps working",
    ),
    CheckSpec(
        "progress.notifications",
        M,
        "basic/utilities/progress",
        "progress notifications name a token in flight, increase per token, stop with the response",
    ),
    CheckSpec(
        "meta.key-names",
        M,
        "basic",
        "every _meta key has a valid prefix (dot-separated labels, then /) and name",
        FROM_2025_06_18,
    ),
    CheckSpec(
        "jsonrpc.server-request-ids", M, "basic", "the server never reuses a request id within a session", HANDSHAKE
    ),
    CheckSpec(
        "cancellation.server-sent",
        M,
        "basic/utilities/cancellation",
        "the server cancels only its own requests (2026-07-28: only subscriptions/listen streams)",
    ),
    CheckSpec(
        "meta.subscription-id",
        M,
        "basic",
        "list-change and resource-update notifications name their subscriptions/listen request",
        STATELESS,
    ),
    # Read off the recordings by checks/progress_rules.py.
    CheckSpec(
        "lifecycle.init-first",
        M,
        "basic/lifecycle",
        "before its initialize answer the server starts nothing but ping and logging",
        HANDSHAKE,
    ),
    CheckSpec(
        "progress.server-tokens",
        M,
        "basic/utilities/progress",
        "a progressToken in a server request is a string or integer, unique among its requests in flight",
        HANDSHAKE,
    ),
    CheckSpec(
        "cancellation.task-requests",
        M,
        "basic/utilities/cancellation",
        "the server cancels none of its task-augmented requests with notifications/cancelled",
        ("2025-11-25",),
    ),
    CheckSpec(
        "jsonrpc.request-ids-in-flight", M, "basic", "no server request reuses the id of one still in flight", STATELESS
    ),
    CheckSpec(
        "mrtr.unique-keys",
        M,
        "basic/patterns/mrtr",
        "an InputRequiredResult names each inputRequests key once",
        STATELESS,
    ),
    # The lifecycle page names no answer to a request before initialize (the client SHOULD NOT
    # send one); what it asks of the server is this.
    CheckSpec(
        "lifecycle.before-initialize",
        S,
        "basic/lifecycle",
        "the server sends no request other than ping before the initialized notification",
        HANDSHAKE,
    ),
)
