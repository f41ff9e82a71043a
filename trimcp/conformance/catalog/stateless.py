"""Checks of the stateless era's patterns (2026-07-28): subscriptions, caching, versioning, input.

The first checks of this era (``discover.*``, ``stateless.*``, ``mrtr.input-required``,
``mrtr.tampered-state``, ``caching.hints``, ``subscriptions.listen``) live in ``core``;
these sharpen them, one sentence (or one group of sentences) of
``basic/patterns/subscriptions``, ``server/utilities/caching``, ``basic/versioning``,
``server/discover`` and ``basic/patterns/mrtr`` each.  Levels follow the sentences
(``requirements/data/stateless.json``).
"""

from __future__ import annotations

from typing import Final

from ..model import CheckSpec, Level
from .core import STATELESS

M, S, B = Level.MUST, Level.SHOULD, Level.BEST
SUBS: Final = "basic/patterns/subscriptions"
MRTR: Final = "basic/patterns/mrtr"

SPECS: Final[tuple[CheckSpec, ...]] = (
    # ---- subscriptions/listen
    # "reflects the subset the server agreed to honor" has no MUST/SHOULD: best practice.
    CheckSpec(
        "subscriptions.ack-subset", B, SUBS, "the acknowledged filter is a subset of the requested one", STATELESS
    ),
    CheckSpec(
        "subscriptions.tagged",
        M,
        SUBS,
        "every change notification carries the subscriptionId of the listen request it belongs to",
        STATELESS,
    ),
    CheckSpec(
        "subscriptions.filter",
        M,
        SUBS,
        "no change notification of a type (or resource URI) the subscription did not request",
        STATELESS,
    ),
    # ---- caching
    CheckSpec(
        "caching.scope-stable",
        M,
        "server/utilities/caching",
        "every page of one list carries the same cacheScope",
        STATELESS,
    ),
    CheckSpec(
        "caching.interim-no-hints",
        B,
        "server/utilities/caching",
        "InputRequiredResults carry no caching hints",
        STATELESS,
    ),
    # ---- versioning and discovery
    CheckSpec(
        "versioning.initialize-error",
        S,
        "basic/versioning",
        "a modern-only server names its supported revisions in the error it answers initialize with",
        STATELESS,
    ),
    CheckSpec(
        "discover.extension-ids",
        M,
        "basic/versioning",
        "extension identifiers in capabilities.extensions are _meta keys with a prefix",
        STATELESS,
    ),
    # ---- multi round-trip requests
    CheckSpec(
        "mrtr.no-server-requests",
        M,
        MRTR,
        "the server sends no JSON-RPC requests of its own (input goes through InputRequiredResult)",
        STATELESS,
    ),
    CheckSpec(
        "mrtr.missing-responses",
        S,
        MRTR,
        "a retry missing the requested inputResponses gets a new InputRequiredResult, not an error",
        STATELESS,
    ),
    CheckSpec("mrtr.extra-responses", S, MRTR, "unexpected extra keys in inputResponses are ignored", STATELESS),
    CheckSpec(
        "mrtr.invalid-responses",
        S,
        MRTR,
        "an inputResponses that is not an object is refused (or input asked again), never taken for input",
        STATELESS,
    ),
)
