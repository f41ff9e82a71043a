"""The 2026-07-28 Streamable HTTP checks (``http26.*``): the reference server passes them, and a
hand-written server with exactly one defect (``helpers/bad_http26.py``) fails exactly the
check for it.  Loopback only; every run bounded in time.
"""

from __future__ import annotations

import pytest
import trio
from helpers.bad_http26 import serve26

from trimcp.conformance import run_checks
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.checks.http_stateless import HTTP26_CHECKS, check_http26
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import Status
from trimcp.conformance.rawhttp import RawClient
from trimcp.conformance.results import Results
from trimcp.reference.server import build_server
from trimcp.server.transports.http.app import BoundHttpServer, serve_http

REVISION = "2026-07-28"


async def _http26(url: str) -> Results:
    rec = Results(REVISION)
    with trio.fail_after(30):
        await check_http26(rec, url, REVISION, RawClient(5.0))
    return rec


def _bad(rec: Results) -> dict[str, str]:
    return {
        k: f"{r.status.value}: {r.detail}" for k, r in rec.results.items() if r.status in (Status.FAIL, Status.WARN)
    }


def test_checks_are_in_the_catalog() -> None:
    for check_id in HTTP26_CHECKS:
        spec = CATALOG[check_id]
        assert spec.section == "basic/transports/streamable-http"
        assert spec.revisions == (REVISION,)


async def test_reference_server_passes(nursery: trio.Nursery) -> None:
    bound: BoundHttpServer = await nursery.start(serve_http, build_server())
    with trio.fail_after(120):
        report = await run_checks(connector_for([bound.url]), target=bound.url, request_timeout=10)
    assert report.revision == REVISION
    results = {r.id: r for r in report.results}
    for check_id in HTTP26_CHECKS:
        # Every probe could be made against the reference server (it has no integer x-mcp-header
        # parameter; it serves 2025-11-25 clients too, so the modern-only advice on legacy headers
        # is not for it): nothing else skipped, nothing flagged.
        expected = Status.SKIP if check_id in ("http26.integer-header", "http26.legacy-headers") else Status.PASS
        assert results[check_id].status is expected, results[check_id]
    assert "Mcp-Param-Region" in results["http26.param-header"].detail


async def test_good_fake_passes() -> None:
    async with serve26("good") as fake:
        rec = await _http26(fake.url)
    assert _bad(rec) == {}
    assert {k for k, r in rec.results.items() if r.status is Status.PASS} == set(HTTP26_CHECKS)


@pytest.mark.parametrize(
    ("mode", "check_id", "status", "words"),
    [
        ("header-case-sensitive", "http26.header-case", Status.FAIL, "lowercase header names: HTTP 400"),
        ("name-mismatch-accepted", "http26.name-header", Status.FAIL, "without Mcp-Name: HTTP 200"),
        ("base64-not-decoded", "http26.name-header", Status.FAIL, "Base64 form"),
        ("param-header-ignored", "http26.param-header", Status.FAIL, "Mcp-Param-Region left out: HTTP 200"),
        ("param-expected-when-absent", "http26.param-header", Status.FAIL, "'region' left out and no Mcp-Param"),
        ("bad-declaration", "http26.param-declarations", Status.FAIL, "'bad_header'"),
        ("issues-session-id", "http26.legacy-headers", Status.WARN, "Mcp-Session-Id 'fake-session-1'"),
        ("initialize-200", "http26.unknown-method", Status.FAIL, "initialize under 2026-07-28: HTTP 200"),
        ("missing-version-ok", "http26.missing-version", Status.FAIL, "no MCP-Protocol-Version: HTTP 200"),
        ("version-mismatch-ok", "http26.version-match", Status.FAIL, "body 2025-11-25: HTTP 200, error None"),
        ("unsupported-no-data", "http26.unsupported-version", Status.FAIL, "without data.supported"),
        ("notification-200", "http26.notification", Status.FAIL, "HTTP 200 with a body"),
        ("sse-request", "http26.stream-shape", Status.FAIL, "a roots/list request"),
        ("stream-stays-open", "http26.stream-end", Status.WARN, "stayed open after the response"),
        ("integer-as-string", "http26.integer-header", Status.WARN, "42.0 for the argument 42 refused"),
        (
            "capability-200",
            "http26.error-status",
            Status.FAIL,
            "MissingRequiredClientCapability (-32021) came with HTTP 200",
        ),
        ("no-accel-buffering", "http26.accel-buffering", Status.WARN, "without X-Accel-Buffering"),
        (
            "envelope-error-200",
            "http26.envelope-400",
            Status.FAIL,
            "tools/list without protocolVersion in _meta: HTTP 200 (error -32602), not 400",
        ),
    ],
)
async def test_one_defect_one_finding(mode: str, check_id: str, status: Status, words: str) -> None:
    async with serve26(mode) as fake:
        rec = await _http26(fake.url)
    found = rec.results[check_id]
    assert found.status is status, found
    assert words in found.detail, found.detail
    assert found.evidence, "a finding shows the exchange it rests on"
    # Not decoding Base64 breaks Mcp-Name and Mcp-Param-* alike; every other defect is one check's.
    also = {"http26.param-header"} if mode == "base64-not-decoded" else set()
    assert set(_bad(rec)) == {check_id} | also, _bad(rec)


async def test_not_http_and_not_stateless() -> None:
    rec = Results(REVISION)
    await check_http26(rec, "python server.py", REVISION, RawClient(1.0))
    assert {r.detail for r in rec.results.values()} == {"not an HTTP target"}
    rec = Results("2025-11-25")
    await check_http26(rec, "http://127.0.0.1:1/mcp", "2025-11-25", RawClient(1.0))
    assert rec.results == {}  # the catalog marks each "not in 2025-11-25"
