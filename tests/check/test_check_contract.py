"""The 2026-07-28 error contract (``checks/contract26.py``): partial envelopes, -32021 data.

``stateless.partial-envelope`` against ``tests/helpers/bad_stateless.py``: the good mode refuses a
request lacking either required ``_meta`` field with -32602, ``partial-envelope-served`` serves
one lacking ``protocolVersion``.  ``stateless.missing-capability-data`` reads recorded -32021
errors: with ``data.requiredCapabilities`` it passes, without (or empty) it fails, and with no
-32021 at all it skips, never passes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import trio
from repo_paths import HELPERS

from trimcp.conformance import Status
from trimcp.conformance.checks.contract26 import CAPABILITY_DATA, PARTIAL, check_capability_errors
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results
from trimcp.conformance.runner import run_checks

SERVER = str(HELPERS / "bad_stateless.py")


async def _verdict(mode: str) -> Any:
    connect = connector_for([sys.executable, SERVER, "--mode", mode], connect_timeout=20)
    with trio.fail_after(60):
        report = await run_checks(connect, target=f"bad_stateless {mode}", connect_timeout=20, request_timeout=20)
    return {r.id: r for r in report.results}[PARTIAL]


async def test_partial_envelope_refused_passes() -> None:
    result = await _verdict("good")
    assert result.status is Status.PASS, result
    assert "without protocolVersion / without clientCapabilities: -32602 each" in result.detail


async def test_partial_envelope_served_fails() -> None:
    result = await _verdict("partial-envelope-served")
    assert result.status is Status.FAIL, result
    assert "without protocolVersion: answered with a result" in result.detail
    assert result.evidence


def _recording(*answers: dict[str, Any]) -> RecordingStream:
    recording = RecordingStream(inner=None)  # type: ignore[arg-type]  # only its received texts are read
    for n, answer in enumerate(answers):
        recording.sent_methods[n] = "tools/call"
        recording.received.append(json.dumps({"jsonrpc": "2.0", "id": n, **answer}).encode())
    return recording


def _capability_verdict(*answers: dict[str, Any]) -> Any:
    rec = Results("2026-07-28")
    check_capability_errors(rec, [_recording(*answers)])
    return rec.results[CAPABILITY_DATA]


def test_capability_error_with_required_capabilities_passes() -> None:
    result = _capability_verdict(
        {"result": {"resultType": "complete", "content": []}},
        {
            "error": {
                "code": -32021,
                "message": "needs elicitation",
                "data": {"requiredCapabilities": {"elicitation": {}}},
            }
        },
    )
    assert result.status is Status.PASS and "1 -32021" in result.detail


@pytest.mark.parametrize("data", [None, {"missing": ["elicitation"]}, {"requiredCapabilities": {}}])
def test_capability_error_without_the_list_fails(data: Any) -> None:
    error: dict[str, Any] = {"code": -32021, "message": "needs elicitation"}
    if data is not None:
        error["data"] = data
    result = _capability_verdict({"error": error})
    assert result.status is Status.FAIL and result.evidence


def test_no_capability_error_skips() -> None:
    result = _capability_verdict({"error": {"code": -32602, "message": "bad"}})
    assert result.status is Status.SKIP and "no -32021" in result.detail
