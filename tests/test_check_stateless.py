"""The stateless era's pattern checks against ``tests/helpers/bad_stateless.py``.

Each ``--mode`` of that plain-Python stdio server has exactly one defect of
basic/patterns/subscriptions, server/utilities/caching, basic/versioning or
basic/patterns/mrtr; ``run_checks`` (in process, the server as a subprocess)
must flag exactly the checks of that defect, with evidence, and pass every
check of this area on the ``good`` mode.  The reference server's run is in
tests/test_check.py (no fail, no warn there).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from trimcp.conformance import run_checks
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.catalog import stateless as area
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import Level, Report, Status

SERVER = str(Path(__file__).resolve().parent / "helpers" / "bad_stateless.py")

#: mode -> {check id: expected status}; every other check must pass or skip.
DEFECTS = {
    "notify-before-ack": {"subscriptions.listen": Status.FAIL},
    "ack-superset": {"subscriptions.ack-subset": Status.WARN},
    "untagged-notification": {"subscriptions.tagged": Status.FAIL},
    "unrequested-notification": {"subscriptions.filter": Status.FAIL},
    "scope-changes-between-pages": {"caching.scope-stable": Status.FAIL},
    "input-required-hints": {"caching.interim-no-hints": Status.WARN},
    "initialize-error-silent": {"versioning.initialize-error": Status.WARN},
    "bad-extension-id": {"discover.extension-ids": Status.FAIL},
    "server-request": {"mrtr.no-server-requests": Status.FAIL},
    "serves-known-version": {"stateless.unsupported-version": Status.FAIL},
    "mrtr-error-on-missing": {"mrtr.missing-responses": Status.WARN},
    "mrtr-refuses-extra": {"mrtr.extra-responses": Status.WARN},
    "mrtr-takes-invalid": {"mrtr.invalid-responses": Status.WARN},
    "mrtr-duplicate-keys": {"mrtr.unique-keys": Status.FAIL},
}
#: Defects that, rightly, show in a check of another area too.
ALSO_FLAGGED = {
    # A server-to-client request is no message of the 2026-07-28 schema either.
    "server-request": {"schema.messages": Status.FAIL, "stdio.no-requests": Status.FAIL},
    # The basic area reads the same rule off every recording (basic/index, _meta).
    "untagged-notification": {"meta.subscription-id": Status.FAIL},
}
#: What the detail of each flagged check names.
DETAILS = {
    "notify-before-ack": "came before the acknowledgment",
    "ack-superset": "promptsListChanged",
    "untagged-notification": "subscriptionId None",
    "unrequested-notification": "bad://other",
    "scope-changes-between-pages": "'public', 'private'",
    "input-required-hints": "ttlMs/cacheScope",
    "initialize-error-silent": "does not name 2026-07-28",
    "bad-extension-id": "'thing'",
    "server-request": "elicitation/create",
    "serves-known-version": "declaring 2025-11-25: answered with a result",
    "mrtr-error-on-missing": "not a new InputRequiredResult",
    "mrtr-refuses-extra": "trimcp-check-unexpected",
    "mrtr-takes-invalid": "completed",
    "mrtr-duplicate-keys": "'name' more than once",
}


async def _run(mode: str) -> Report:
    connect = connector_for([sys.executable, SERVER, "--mode", mode], connect_timeout=20)
    with trio.fail_after(60):
        return await run_checks(connect, target=f"bad_stateless {mode}", connect_timeout=20, request_timeout=20)


async def test_good_mode_passes_every_check_of_the_area() -> None:
    report = await _run("good")
    assert (report.era, report.revision) == ("stateless", "2026-07-28")
    results = {r.id: r for r in report.results}
    for spec in area.SPECS:
        assert results[spec.id].status is Status.PASS, results[spec.id]
    for check_id in ("subscriptions.listen", "mrtr.input-required", "caching.hints", "discover.result",
                     "stateless.unsupported-version", "stateless.missing-envelope"):
        assert results[check_id].status is Status.PASS, results[check_id]
    assert [r for r in report.results if r.status in (Status.FAIL, Status.WARN)] == []


@pytest.mark.parametrize("mode", sorted(DEFECTS))
async def test_each_defect_is_flagged_with_evidence(mode: str) -> None:
    report = await _run(mode)
    assert report.revision == "2026-07-28"
    flagged = {r.id: r for r in report.results if r.status in (Status.FAIL, Status.WARN)}
    assert {k: v.status for k, v in flagged.items()} == {**DEFECTS[mode], **ALSO_FLAGGED.get(mode, {})}
    [result] = [flagged[check_id] for check_id in DEFECTS[mode]]
    assert DETAILS[mode] in result.detail, result.detail
    assert result.evidence, "a fail or warn carries the messages it rests on"
    # A failed MUST fails the run; a warn or a SHOULD never does.
    assert report.ok is not (result.status is Status.FAIL and result.level is Level.MUST)


def test_levels_follow_the_sentences() -> None:
    levels = {spec.id: spec.level for spec in area.SPECS}
    assert levels["subscriptions.tagged"] is levels["subscriptions.filter"] is Level.MUST
    assert levels["caching.scope-stable"] is levels["mrtr.no-server-requests"] is Level.MUST
    assert levels["versioning.initialize-error"] is levels["mrtr.missing-responses"] is Level.SHOULD
    # No keyword behind these, or a MUST that binds only in cases a black box cannot see.
    assert levels["subscriptions.ack-subset"] is levels["caching.interim-no-hints"] is Level.BEST
    assert CATALOG["mrtr.tampered-state"].level is Level.BEST
    assert CATALOG["subscriptions.listen"].level is Level.MUST
