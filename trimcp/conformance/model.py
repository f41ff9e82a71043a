"""The harness's vocabulary: checks, levels, statuses, reports.

Every check has a stable id, an RFC 2119 level taken from the sentence of the
specification it tests, the spec section that sentence lives in, and the
revisions that sentence belongs to.  The catalog (the ``catalog`` package) lists them
all, so a report always shows every check: the ones a revision does not have
are ``skip`` with the detail "not in <revision>", the ones the server lacks the
feature for are ``skip`` with a reason.

A few sentences changed strength between revisions (resource-not-found is a
SHOULD with -32002 up to 2025-11-25 and a MUST with -32602 in 2026-07-28):
``CheckSpec.stateless_level`` holds the stateless era's level,
``CheckSpec.levels`` a level for single revisions where a sentence changed
strength within an era (2024-11-05 says "Both parties SHOULD respect the
negotiated protocol version", 2025-06-18 says MUST), and
``CheckSpec.level_for(revision)`` is what a report row carries.

A check with no MUST/SHOULD sentence behind it (a habit of good servers, or a
rule the spec puts on the client) is at ``Level.BEST``: it is reported, and
never counted as a MUST failure, so it never fails the run.  Only a failed
MUST row (``Report.must_failures``) makes ``Report.ok`` false.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import attrs

from .._sansio.revisions import ALL_VERSIONS, Era, get_revision
from .selection import Selection


class Level(enum.Enum):
    """How strongly the sentence behind a check binds (RFC 2119), or BEST-PRACTICE where none does."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"
    #: No MUST or SHOULD sentence stands behind the check: advice, never failing a run.
    BEST = "BEST-PRACTICE"


class Status(enum.Enum):
    """A check's outcome: pass, fail, warn (a SHOULD not met, or advice), or skip (not judged, with the reason)."""

    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"


@attrs.frozen
class CheckSpec:
    id: str
    level: Level
    section: str
    title: str
    #: The revisions whose specification holds the sentence this check tests.
    revisions: tuple[str, ...] = ALL_VERSIONS
    #: The level in the stateless era, when it differs from ``level``.
    stateless_level: Level | None = None
    #: ``(revision, level)`` pairs overriding both, for the revisions named.
    levels: tuple[tuple[str, Level], ...] = ()

    def applies_to(self, revision: str) -> bool:
        return revision in self.revisions

    def level_for(self, revision: str | None) -> Level:
        for named, level in self.levels:
            if named == revision:
                return level
        if revision is not None and self.stateless_level is not None and _is_stateless(revision):
            return self.stateless_level
        return self.level

    @property
    def eras(self) -> tuple[str, ...]:
        """The eras (``"handshake"``, ``"stateless"``) of the revisions this check applies to."""
        found = {get_revision(r).era for r in self.revisions}
        return tuple(e.value for e in Era if e in found)


def _is_stateless(revision: str) -> bool:
    try:
        return get_revision(revision).era is Era.STATELESS
    except ValueError:
        return False


@attrs.frozen
class CheckResult:
    """The verdict of one check on one run: its status, why, and what it rests on."""

    id: str
    level: Level
    status: Status
    detail: str = ""
    #: What the verdict rests on, JSON-ready: messages sent and received (``{"sent": msg}``,
    #: ``{"received": msg}``), raw HTTP exchanges (``{"request": ..., "response": ...}``).
    evidence: tuple[Any, ...] = ()
    #: Seconds the check took (``Results``' clock); ``None`` for a row nothing recorded.
    duration: float | None = None


@attrs.define
class Report:
    """One run of ``run_checks``: what was checked, what was negotiated, and every check's result."""

    target: str
    revision: str | None = None
    #: ``"handshake"`` or ``"stateless"``; ``None`` when nothing was negotiated.
    era: str | None = None
    server_info: dict[str, Any] | None = None
    results: list[CheckResult] = attrs.field(factory=list)
    #: The transport the run actually spoke: ``stdio``, ``streamable-http``, ``http+sse``
    #: (the 2024-11-05 transport, after the fallback), ``websocket``; ``None``: unknown.
    transport: str | None = None
    #: The main conversation in the ``spec/`` corpus format (``RecordingStream.transcript``),
    #: for ``--record``; not part of ``to_json``.
    conversation: list[dict[str, Any]] = attrs.field(factory=list)
    #: The run's ``--only`` / ``--skip``: with ``only`` the reports show the selected rows alone.
    selection: Selection = attrs.field(factory=Selection)

    @property
    def must_failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.status is Status.FAIL and r.level is Level.MUST]

    @property
    def ok(self) -> bool:
        return not self.must_failures

    @property
    def not_checked(self) -> str | None:
        """Why this report judged nothing (the CLI's exit 4), or ``None`` when the server was checked.

        Nothing was negotiated and the only failed MUST, if any, is ``lifecycle.connect``: the
        server never answered the first request (silent, or gone first).  A server that did
        answer, or that broke another MUST on the way (noise on stdout), was judged."""
        if self.revision is not None:
            return None
        if any(r.id != "lifecycle.connect" for r in self.must_failures):
            return None
        connect = next((r for r in self.results if r.id == "lifecycle.connect"), None)
        if connect is not None and connect.status is Status.SKIP and connect.detail.startswith("not reached"):
            return connect.detail.removeprefix("not reached: ")  # answered, but after --timeout
        why = "the server never answered the first request"
        if connect is not None and connect.detail and connect.status is Status.FAIL:
            why += " (" + connect.detail.removeprefix("the first request got no JSON-RPC answer: ") + ")"
        return why

    def to_json(self) -> dict[str, Any]:
        """The ``trimcp-check/1`` document (``report_json.py``; its JSON Schema ships alongside)."""
        if render_json is None:  # (only before trimcp.conformance finished importing)
            return {
                "target": self.target,
                "transport": self.transport,
                "revision": self.revision,
                "era": self.era,
                "checks": [
                    {"id": r.id, "level": r.level.value, "status": r.status.value, "detail": r.detail}
                    for r in self.results
                ],
            }
        return render_json(self)


#: Renders ``Report.to_json``: ``report_json`` installs its document here when imported
#: (as ``trimcp.conformance`` always does).  The reporters import this module, and the
#: document needs the catalogues, which do too: this hook keeps the arrows one way.
render_json: Callable[[Report], dict[str, Any]] | None = None
