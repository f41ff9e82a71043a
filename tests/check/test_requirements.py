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


def _req(
    rid: str, strength: str, checks: dict[str, Coverage], revisions: tuple[str, ...] = ("2025-11-25",)
) -> Requirement:
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
    assert cat.coverage("2025-11-25")["core"] == {
        "MUST": {"total": 4, "full": 1, "partial": 1},
        "SHOULD": {"total": 1, "full": 1, "partial": 0},
    }
    assert cat.coverage("2026-07-28")["core"]["MUST"] == {"total": 1, "full": 1, "partial": 0}
    assert [r.id for r in cat.uncovered("2025-11-25")] == ["a.none", "a.other-era"]
    assert cat.check_level("lifecycle.ping", "2025-11-25") is Level.MUST
    assert cat.check_level("tools.unique-names", "2025-11-25") is Level.SHOULD
    assert cat.check_level("tools.list", "2025-11-25") is Level.BEST


def test_joint_links_are_full_only_when_every_joint_check_runs() -> None:
    joint = {"lifecycle.initialize": Coverage.JOINT, "discover.result": Coverage.JOINT}
    both = Requirement(
        "a.joint",
        "MUST",
        ("2025-11-25", "2026-07-28"),
        "basic/lifecycle",
        "",
        "A sentence.",
        joint,
        together="lifecycle.initialize: one kind; discover.result: the other",
    )
    cat = Catalogue((both,), ())
    # discover.result runs under 2026-07-28 only, lifecycle.initialize under the handshake era only:
    # in neither revision do both run, so each counts the sentence as partly covered.
    assert cat.coverage("2025-11-25")["core"]["MUST"] == {"total": 1, "full": 0, "partial": 1}
    assert cat.coverage("2026-07-28")["core"]["MUST"] == {"total": 1, "full": 0, "partial": 1}
    pair = {"lifecycle.initialize": Coverage.JOINT, "lifecycle.ping": Coverage.JOINT, "tools.list": Coverage.PARTIAL}
    ok = Requirement(
        "a.pair",
        "MUST",
        ("2025-11-25",),
        "basic/lifecycle",
        "",
        "A sentence.",
        pair,
        together="lifecycle.initialize: one kind; lifecycle.ping: the other",
    )
    assert Catalogue((ok,), ()).coverage("2025-11-25")["core"]["MUST"] == {"total": 1, "full": 1, "partial": 0}
    assert Catalogue((ok,), ()).sentences_of("tools.list")[0][1] is Coverage.PARTIAL


def test_joint_links_need_a_partner_and_say_what_each_sees() -> None:
    alone = Requirement(
        "a.alone",
        "MUST",
        ("2025-11-25",),
        "basic/lifecycle",
        "",
        "One.",
        {"lifecycle.initialize": Coverage.JOINT},
        together="lifecycle.initialize: all of it",
    )
    silent = Requirement(
        "a.silent",
        "MUST",
        ("2025-11-25",),
        "basic/lifecycle",
        "",
        "Two.",
        {"lifecycle.initialize": Coverage.JOINT, "lifecycle.ping": Coverage.JOINT},
    )
    vague = Requirement(
        "a.vague",
        "MUST",
        ("2025-11-25",),
        "basic/lifecycle",
        "",
        "Three.",
        {"lifecycle.initialize": Coverage.JOINT, "lifecycle.ping": Coverage.JOINT},
        together="between them, everything",
    )
    text = "\n".join(Catalogue((alone, silent, vague), ()).problems())
    assert "a.alone: a joint link needs another joint check" in text
    assert "a.silent: joint links and a 'together' text go together" in text
    assert "a.vague: 'together' must say what each joint check sees" in text


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


def test_extension_sentences_are_counted_apart() -> None:
    ext = Requirement(
        "apps.x",
        "MUST",
        ("2025-11-25",),
        "extensions/apps",
        "",
        "An app sentence.",
        {"lifecycle.initialize": Coverage.FULL},
    )
    cat = Catalogue((_req("a.core", "MUST", {}), ext), ())
    counts = cat.coverage("2025-11-25")
    assert counts["core"]["MUST"] == {"total": 1, "full": 0, "partial": 0}
    assert counts["extensions"]["MUST"] == {"total": 1, "full": 1, "partial": 0}


def test_no_sentence_is_listed_twice_in_a_revision() -> None:
    """Normalized text (and subject, where the same words govern different things) is unique per revision."""
    assert load().duplicates() == []
    twice = Catalogue(
        (
            _req("a.one", "MUST", {}),
            Requirement("b.one", "MUST", ("2025-11-25",), "basic/index", "", "a  SENTENCE!", {}),
            Requirement("c.one", "MUST", ("2025-11-25",), "server/tools", "", "A sentence.", {}, subject="tools"),
        ),
        (),
    )
    assert twice.duplicates() == ["2025-11-25: a.one and b.one quote the same sentence"]
    assert any("quote the same sentence" in p for p in twice.problems())


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_named_server_sentences_are_listed(revision: str) -> None:
    texts = " | ".join(r.text for r in load().for_revision(revision))
    wanted = {
        "2025-11-25": [
            "first interaction",
            "string or integer value",
            "unique across all active requests",
            "same `progressToken`",
            "after the task reaches a terminal status",
            "instead of the `notifications/cancelled`",
            "initiated the elicitation request",
            "`ToolResultContent` item with a matching `toolUseId`",
        ],
        "2026-07-28": [
            "set of supported `ResultType` values",
            "graceful",
            "data.requiredCapabilities",
            "A request missing any required field",
        ],
    }[revision]
    assert [w for w in wanted if w not in texts] == []
