"""Report levels follow the specification's sentences (issue 14, "levels that don't match a sentence").

* the third level, best practice, for checks with no server-side MUST/SHOULD behind them: reported,
  never counted as a MUST failure, never failing the run (``Report.ok`` drives the exit code);
* the reclassified checks, each against the sentence (or its absence) in the spec pages.
"""

from __future__ import annotations

import io

import pytest

from trimcp.conformance import print_report
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.model import CheckResult, Level, Report, Status
from trimcp.conformance.results import Results


@pytest.mark.parametrize(
    "check_id",
    [
        "tools.unknown-tool",
        "pagination.cursors",
        "resources.templates",
        "tools.call-read-only",
    ],
)
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25", "2026-07-28"])
def test_no_sentence_checks_are_best_practice(check_id: str, revision: str) -> None:
    assert CATALOG[check_id].level_for(revision) is Level.BEST


def test_subscriptions_listen_is_must() -> None:
    # basic/patterns/subscriptions: the acknowledgment MUST come first, nothing MUST precede it.
    assert CATALOG["subscriptions.listen"].level_for("2026-07-28") is Level.MUST


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_stdio_shutdown_is_the_clients_rule_in_the_handshake_era(revision: str) -> None:
    assert CATALOG["stdio.shutdown"].level_for(revision) is Level.BEST
    assert CATALOG["stdio.shutdown"].level_for("2026-07-28") is Level.SHOULD


def _report_with(*results: CheckResult) -> Report:
    return Report(target="t", revision="2025-11-25", era="handshake", results=list(results))


def test_a_failed_best_practice_never_fails_the_run() -> None:
    rec = Results("2025-11-25")
    rec.fail("tools.unknown-tool", "answered {}")
    rec.fail("pagination.cursors", "cursor repeated")
    rows = [r for r in rec.finish("not reached") if r.status is Status.FAIL]
    assert {r.id: r.level for r in rows} == {"tools.unknown-tool": Level.BEST, "pagination.cursors": Level.BEST}
    report = _report_with(*rows)
    assert report.must_failures == [] and report.ok
    # Only a MUST fails the run; a SHOULD failure does not either.
    assert _report_with(CheckResult("x", Level.SHOULD, Status.FAIL)).ok
    assert not _report_with(CheckResult("x", Level.MUST, Status.FAIL)).ok


def test_console_shows_the_best_practice_level_whole() -> None:
    out = io.StringIO()
    print_report(
        _report_with(
            CheckResult("tools.unknown-tool", Level.BEST, Status.FAIL, "answered {}"),
            CheckResult("tools.list", Level.MUST, Status.PASS),
        ),
        out,
    )
    rows = [line.split() for line in out.getvalue().splitlines() if line.startswith("tools.")]
    assert rows == [["tools.unknown-tool", "BEST-PRACTICE", "advice", "answered", "{}"], ["tools.list", "MUST", "pass"]]
    assert "no MUST failures" in out.getvalue()


def test_json_report_carries_the_level_name() -> None:
    doc = _report_with(CheckResult("pagination.cursors", Level.BEST, Status.PASS)).to_json()
    assert doc["checks"][0]["level"] == "BEST-PRACTICE"
