"""Checks of the server features: negative probes, capability honesty, content, tool inputs.

Pages: ``server/tools``, ``server/resources``, ``server/prompts``,
``server/utilities/{completion,logging,pagination}`` of every revision.  The
levels follow the sentences in ``requirements/data/features.json``; a check
with no MUST/SHOULD sentence behind it is ``BEST-PRACTICE`` (``B``).
"""

from __future__ import annotations

from typing import Final

from ..._sansio.revisions import ALL_VERSIONS, HANDSHAKE_VERSIONS
from ..model import CheckSpec, Level

M, S, B = Level.MUST, Level.SHOULD, Level.BEST

SPECS: Final[tuple[CheckSpec, ...]] = (
    CheckSpec("pagination.invalid-cursor", S, "server/utilities/pagination",
              "an invalid cursor on every offered list is refused with -32602"),
    CheckSpec("prompts.unknown-name", S, "server/prompts", "prompts/get of an unknown prompt name gets -32602"),
    CheckSpec("prompts.missing-argument", S, "server/prompts",
              "prompts/get without a required argument gets -32602"),
    # "Malformed requests" are protocol errors (server/tools, error handling), without a MUST/SHOULD.
    CheckSpec("tools.call-without-name", B, "server/tools", "tools/call without a name is refused with -32602"),
    CheckSpec("tools.input-validation", M, "server/tools",
              "a tool called with arguments of the wrong type refuses them (an error or an isError result)"),
    CheckSpec("content.base64", M, "server/prompts",
              "image/audio data and resource blobs are strict base64; image and audio carry a mimeType"),
    CheckSpec("content.embedded-resource", M, "server/prompts",
              "embedded resources in prompt messages carry uri, mimeType and exactly one of text/blob"),
    CheckSpec("resources.read-contents", B, "server/resources",
              "every resource content read carries uri and exactly one of text/blob"),
    # No sentence bounds the levels sent after logging/setLevel (the page describes it only).
    CheckSpec("logging.below-level", B, "server/utilities/logging",
              "after logging/setLevel no notifications/message below that level arrives", HANDSHAKE_VERSIONS),
    CheckSpec("completion.limits", B, "server/utilities/completion",
              "completion values are at most 100, and total is not below their number", ALL_VERSIONS),
)
