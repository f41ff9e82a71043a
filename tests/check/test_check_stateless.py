"""The stateless era's pattern checks against ``tests/helpers/bad_stateless.py``.

Each ``--mode`` of that plain-Python stdio server has exactly one defect of
basic/patterns/subscriptions, server/utilities/caching, basic/versioning or
basic/patterns/mrtr; ``run_checks`` (in process, the server as a subprocess)
must flag exactly the checks of that defect, with evidence, and pass every
check of this area on the ``good`` mode.  The reference server's run is in
tests/check/test_check.py (no fail, no warn there).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import trio
from repo_paths import HELPERS

from trimcp._sansio import jsonrpc as rpc
from trimcp.conformance import run_checks
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.catalog import stateless as area
from trimcp.conformance.checks.stateless import check_input_request_kinds
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import Level, Report, Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results

SERVER = str(HELPERS / "bad_stateless.py")

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
    # basic/patterns/mrtr: only ElicitRequest, CreateMessageRequest, ListRootsRequest, of declared kinds
    "asks-url-elicitation": {"mrtr.input-required": Status.FAIL},
    "asks-tool-sampling": {"mrtr.input-required": Status.FAIL},
    "asks-other-method": {"mrtr.input-required": Status.FAIL},
    # basic/index, _meta: the trace-context values, on every connection of the run
    "bad-tracestate": {"meta.key-names": Status.FAIL},
    "bad-baggage": {"meta.key-names": Status.FAIL},
    "probe-bad-traceparent": {"meta.key-names": Status.FAIL},
}
#: Defects that, rightly, show in a check of another area too.
ALSO_FLAGGED = {
    # A server-to-client request is no message of the 2026-07-28 schema either.
    "server-request": {"schema.messages": Status.FAIL, "stdio.no-requests": Status.FAIL},
    # The basic area reads the same rule off every recording (basic/index, _meta).
    "untagged-notification": {"meta.subscription-id": Status.FAIL},
    # The client side of the same rules (client/elicitation, client/sampling: what was declared).
    "asks-url-elicitation": {"features.server-requests": Status.FAIL},
    "asks-tool-sampling": {"features.server-requests": Status.FAIL},
    # No message of the schema either, and the client refuses the result (the tool call fails).
    "asks-other-method": {"schema.messages": Status.FAIL, "tools.call-read-only": Status.FAIL},
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
    "asks-url-elicitation": "'url' elicitation, a mode the client did not declare",
    "asks-tool-sampling": "did not declare sampling.tools",
    "asks-other-method": "'tools/list', which is not allowed there",
    "bad-tracestate": "'Vendor=1'",
    "bad-baggage": "'userId=alice smith'",
    # only a probe connection (a request declaring no capabilities) received it
    "probe-bad-traceparent": "all-zero trace-id",
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
    for check_id in (
        "subscriptions.listen",
        "mrtr.input-required",
        "caching.hints",
        "discover.result",
        "stateless.unsupported-version",
        "stateless.missing-envelope",
    ):
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


class _Sink:
    async def send(self, message: object, meta: object = None) -> None:
        pass


ELICIT_FORM = {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?", "requestedSchema": {}}}
ELICIT_URL = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e"},
}
SAMPLE_TOOLS = {
    "method": "sampling/createMessage",
    "params": {"messages": [], "maxTokens": 1, "tools": [{"name": "t"}]},
}


async def _asked(declared: dict[str, Any] | None, asks: dict[str, Any]) -> RecordingStream:
    """One probe connection: a tools/call declaring ``declared`` (``None``: no envelope at all),
    answered with an InputRequiredResult asking ``asks``."""
    recording = RecordingStream(_Sink())  # type: ignore[arg-type]
    meta = {} if declared is None else {"io.modelcontextprotocol/clientCapabilities": declared}
    await recording.send(rpc.Request("p-1", "tools/call", {"name": "ask", "arguments": {}, "_meta": meta}))
    result = {"resultType": "input_required", "inputRequests": asks, "requestState": "s"}
    recording.received.append(json.dumps({"jsonrpc": "2.0", "id": "p-1", "result": result}).encode())
    return recording


@pytest.mark.parametrize(
    ("declared", "asks", "status", "why"),
    [
        (
            {"elicitation": {}},
            {"n": ELICIT_FORM},
            Status.PASS,
            "2 InputRequiredResults on 2 connections asked 2 input requests",
        ),
        ({"elicitation": {"url": {}}}, {"n": ELICIT_URL}, Status.PASS, "each of a declared kind"),
        (
            {"sampling": {"tools": {}}, "roots": {}},
            {"s": SAMPLE_TOOLS, "r": {"method": "roots/list"}},
            Status.PASS,
            "3 input requests",
        ),
        # what each request itself declared counts, not what the tour's session did
        ({}, {"n": ELICIT_FORM}, Status.FAIL, "declaring no capabilities"),
        (None, {"n": ELICIT_FORM}, Status.FAIL, "elicitation capability the client did not declare"),
        ({"elicitation": {}}, {"n": ELICIT_URL}, Status.FAIL, "'url' elicitation"),
        ({"elicitation": {"url": {}}}, {"n": ELICIT_FORM}, Status.FAIL, "'form' elicitation"),
        ({"sampling": {}}, {"s": SAMPLE_TOOLS}, Status.FAIL, "sampling.tools"),
        ({"elicitation": {}}, {"p": {"method": "ping"}}, Status.FAIL, "'ping', which is not allowed"),
    ],
)
async def test_every_input_required_result_of_the_run_asks_declared_kinds_only(
    declared: dict[str, Any] | None,
    asks: dict[str, Any],
    status: Status,
    why: str,
) -> None:
    rec = Results("2026-07-28")
    check_input_request_kinds(
        rec, [await _asked({"elicitation": {}}, {"n": ELICIT_FORM}), await _asked(declared, asks)]
    )
    result = rec.results["mrtr.input-required"]
    assert result.status is status and why in result.detail, result
    if status is Status.FAIL:
        assert result.evidence


def test_a_run_without_input_required_results_leaves_the_check_to_the_tour() -> None:
    rec = Results("2026-07-28")
    check_input_request_kinds(rec, [RecordingStream(_Sink())])  # type: ignore[arg-type]
    assert "mrtr.input-required" not in rec.results
