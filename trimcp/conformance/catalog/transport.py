"""The transport checks beyond the first ones: stdio framing, Streamable HTTP sessions and
streams (handshake era), and the HTTP+SSE transport of 2024-11-05.

Sections name ``basic/transports`` (up to 2025-11-25) and ``basic/transports/stdio``
(2026-07-28); levels follow the sentences of ``requirements/data/transports.json``.
The HTTP+SSE rows are MUST in 2024-11-05; no later page carries their sentences, so over the
old transport at a later revision they are best practice.
"""

from __future__ import annotations

from typing import Final

from ..._sansio.revisions import HttpTransport, revisions_where
from ..model import CheckSpec, Level
from .core import HANDSHAKE, HTTP_2025, STATELESS, STREAMABLE_HANDSHAKE

M, S, B = Level.MUST, Level.SHOULD, Level.BEST
LEGACY: Final = revisions_where(lambda r: r.http_transport is HttpTransport.HTTP_SSE)
PRIMING: Final = revisions_where(lambda r: r.primes_sse)

SPECS: Final[tuple[CheckSpec, ...]] = (
    # ---- stdio
    CheckSpec(
        "stdio.one-line-messages",
        M,
        "basic/transports",
        "every line on stdout is one whole JSON-RPC message (no message spans lines)",
    ),
    CheckSpec(
        "stdio.no-requests", M, "basic/transports/stdio", "the server writes no JSON-RPC request on stdout", STATELESS
    ),
    # ---- Streamable HTTP, handshake era
    CheckSpec(
        "http.valid-host",
        M,
        HTTP_2025,
        "the request refused with a foreign Origin is accepted with the server's own Origin and Host",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec(
        "http.session-required",
        S,
        HTTP_2025,
        "a server that issued Mcp-Session-Id answers a request without it with 400",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec(
        "http.refused-notification",
        M,
        HTTP_2025,
        "a notification for a session never issued is refused with an HTTP error status",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec("http.session-unique", S, HTTP_2025, "two sessions get different session ids", STREAMABLE_HANDSHAKE),
    CheckSpec(
        "http.get-no-response",
        M,
        HTTP_2025,
        "no JSON-RPC response arrives on the GET stream (the harness does not resume)",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec(
        "http.concurrent-streams",
        M,
        HTTP_2025,
        "concurrent POSTs each get their own answer, on their own stream only",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec(
        "http.event-ids", M, HTTP_2025, "SSE event ids are unique across the streams of a session", STREAMABLE_HANDSHAKE
    ),
    CheckSpec(
        "http.resume",
        M,
        HTTP_2025,
        "a GET with Last-Event-ID of one POST stream replays nothing of another stream",
        STREAMABLE_HANDSHAKE,
    ),
    CheckSpec(
        "http.sse-priming",
        S,
        HTTP_2025,
        "an SSE answer to a POST opens with an event holding an id and empty data",
        PRIMING,
    ),
    CheckSpec(
        "http.sse-response",
        S,
        HTTP_2025,
        "an SSE answer to a POST carries the response, then the stream ends",
        STREAMABLE_HANDSHAKE,
    ),
    # ---- HTTP+SSE (2024-11-05).  A later handshake revision may be spoken over the old transport
    # (a server kept for older clients, reached after the fallback); its rules are then still the
    # 2024-11-05 page's, which binds no later revision: best practice there, MUST in 2024-11-05.
    CheckSpec(
        "sse.endpoint",
        B,
        "basic/transports",
        "the SSE stream's first event is `endpoint`, naming the URI to POST to",
        HANDSHAKE,
        levels=((LEGACY[0], M),),
    ),
    CheckSpec(
        "sse.exchange",
        B,
        "basic/transports",
        "a message POSTed to the endpoint is accepted and answered on the SSE stream",
        HANDSHAKE,
        levels=((LEGACY[0], M),),
    ),
    # The Origin MUST of the later pages covers every incoming connection, the old transport's too.
    CheckSpec(
        "sse.origin",
        M,
        "basic/transports",
        "the SSE stream is refused to a foreign Origin and opened for the server's own",
        HANDSHAKE,
    ),
)
