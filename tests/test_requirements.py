"""The requirements catalogue: its data is well formed, its links hold, levels follow sentences.

``trimcp/conformance/requirements/data/*.json`` quotes the specification's
server-side sentences and names the checks testing each.  These tests keep the
two catalogues (sentences and checks) consistent: every linked check exists and
runs under a revision of the sentence, and a check's level is the strongest
level among the sentences behind it in each revision it runs under
(BEST-PRACTICE when none).
"""

from __future__ import annotations

import pytest

from trimcp._sansio.revisions import ALL_VERSIONS
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.model import Level
from trimcp.conformance.requirements import (
    Catalogue,
    Coverage,
    Requirement,
    Untestable,
    load,
    spec_url,
)


def _req(rid: str, strength: str, checks: dict[str, Coverage], revisions: tuple[str, ...] = ("2025-11-25",)) -> Requirement:
    return Requirement(rid, strength, revisions, "basic/lifecycle", "initialization", "A sentence.", checks)


def test_data_has_no_problems() -> None:
    assert load().problems() == []


def test_problems_are_found() -> None:
    bad = Catalogue(
        (
            _req("a.one", "MUST", {"no.such-check": Coverage.FULL}),
            _req("a.one", "MAY", {}),
            # lifecycle.initialize is handshake-only: linking it to a 2026-07-28 sentence is a mistake.
            _req("a.two", "MUST", {"lifecycle.initialize": Coverage.FULL}, ("2026-07-28",)),
        ),
        (Untestable("MUST", ("2025-11-25",), "basic/lifecycle", "", "Text.", ""),),
    )
    text = "\n".join(bad.problems())
    assert "unknown check 'no.such-check'" in text
    assert "duplicate id" in text
    assert "level 'MAY'" in text
    assert "runs under none of" in text
    assert "no reason given" in text


def test_coverage_counts_full_partial_and_runs_under() -> None:
    cat = Catalogue(
        (
            _req("a.full", "MUST", {"lifecycle.initialize": Coverage.FULL, "lifecycle.ping": Coverage.PARTIAL}),
            _req("a.partial", "MUST NOT", {"lifecycle.ping": Coverage.PARTIAL}),
            _req("a.none", "MUST", {}),
            _req("a.should", "SHOULD NOT", {"tools.unique-names": Coverage.FULL}),
            # discover.result does not run under 2025-11-25: it covers nothing there.
            _req("a.other-era", "MUST", {"discover.result": Coverage.FULL}, ("2025-11-25", "2026-07-28")),
        ),
        (),
    )
    assert cat.coverage("2025-11-25") == {
        "MUST": {"total": 4, "full": 1, "partial": 1},
        "SHOULD": {"total": 1, "full": 1, "partial": 0},
    }
    assert cat.coverage("2026-07-28")["MUST"] == {"total": 1, "full": 1, "partial": 0}
    assert [r.id for r in cat.uncovered("2025-11-25")] == ["a.none", "a.other-era"]
    assert cat.check_level("lifecycle.ping", "2025-11-25") is Level.MUST
    assert cat.check_level("tools.unique-names", "2025-11-25") is Level.SHOULD
    assert cat.check_level("tools.list", "2025-11-25") is Level.BEST


def test_spec_url() -> None:
    assert spec_url("2025-11-25", "basic/lifecycle", "initialization") == (
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization"
    )


def _linked() -> set[str]:
    return {check_id for req in load().requirements for check_id in req.checks}


@pytest.mark.parametrize("revision", ALL_VERSIONS)
def test_every_check_level_follows_its_sentences(revision: str) -> None:
    """Every check, linked or not: a check with no sentence behind it is BEST-PRACTICE, never
    MUST or SHOULD; one with sentences takes the strongest of them in this revision."""
    cat = load()
    wrong = {
        check_id: (spec.level_for(revision).value, cat.check_level(check_id, revision).value)
        for check_id, spec in CATALOG.items()
        if spec.applies_to(revision) and spec.level_for(revision) is not cat.check_level(check_id, revision)
    }
    assert wrong == {}, "check: (declared level, level of its sentences)"


def test_most_checks_rest_on_sentences() -> None:
    assert len(_linked()) >= 0.8 * len(CATALOG)
