"""The transport checks (``catalog/transport.py``): each passes against the reference
server and fails (or warns, at SHOULD level) against a server with exactly that defect.

HTTP fakes come from ``helpers/bad_http.py`` (h11 on loopback); the check functions run
straight against them, as the runner calls them after the tour.  The reference server
runs in process over Streamable HTTP and over HTTP+SSE (``serve_http(sse_path=...)``),
and over stdio behind ``helpers/bad_stdio.py`` for the framing defects.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import trio
from helpers.bad_http import LegacyFake, StreamFake
from helpers.h11_fake import serve
from repo_paths import HELPERS

from trimcp.conformance import run_checks
from trimcp.conformance.catalog import CATALOG, HANDSHAKE
from trimcp.conformance.checks.http import HTTP_CHECKS, check_http_transport
from trimcp.conformance.checks.http_sessions import SESSION_CHECKS
from trimcp.conformance.checks.sse_legacy import check_sse_transport
from trimcp.conformance.checks.stdio import check_stdio_lines
from trimcp.conformance.connectors import connector_for, transport_of
from trimcp.conformance.model import CheckResult, Level, Report, Status
from trimcp.conformance.rawhttp import RawClient
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results
from trimcp.reference.server import build_server
from trimcp.server.transports.http import app as http_app
from trimcp.server.transports.http.app import BoundHttpServer, serve_http

BAD_STDIO = str(HELPERS / "bad_stdio.py")


async def _http(fake: Any, revision: str = "2025-11-25", transport: str = "streamable-http") -> dict[str, CheckResult]:
    async with serve(fake) as server:
        fake.port = server.port
        url = server.url if transport != "http+sse" else f"http://127.0.0.1:{server.port}/sse"
        rec = Results(revision)
        with trio.fail_after(30):
            await check_http_transport(rec, url, revision, RawClient(5.0), transport)
    return rec.results


def _status(results: dict[str, CheckResult], check_id: str) -> Status:
    return results[check_id].status


# --------------------------------------------------------------------------- Streamable HTTP


async def test_good_stream_fake_passes() -> None:
    results = await _http(StreamFake())
    for check_id in (
        "http.origin",
        "http.valid-host",
        "http.session-required",
        "http.refused-notification",
        "http.session-unique",
        "http.get-no-response",
        "http.concurrent-streams",
        "http.event-ids",
        "http.sse-priming",
        "http.sse-response",
        "http.resume",
    ):
        assert _status(results, check_id) is Status.PASS, results[check_id]


@pytest.mark.parametrize(
    ("mode", "check_id", "status", "words"),
    [
        ("refuses-valid-host", "http.valid-host", Status.FAIL, "403"),
        ("no-session-required", "http.session-required", Status.WARN, "404"),
        ("accepts-unknown-notification", "http.refused-notification", Status.FAIL, "202"),
        ("same-session-id", "http.session-unique", Status.WARN, "same"),
        ("response-on-get", "http.get-no-response", Status.FAIL, "responses on the GET stream"),
        ("response-on-get", "http.concurrent-streams", Status.FAIL, "the same message on GET"),
        ("duplicate-event-ids", "http.event-ids", Status.FAIL, "'1'"),
        ("no-priming", "http.sse-priming", Status.WARN, "id-only"),
        ("open-after-response", "http.sse-response", Status.WARN, "still open"),
        ("replays-other-stream", "http.resume", Status.FAIL, "of another stream"),
        ("accepts-malformed-version", "http.protocol-version", Status.FAIL, "not-a-revision"),
        ("answer-200", "http.notification-202", Status.FAIL, "a JSON-RPC response: HTTP 200 with a body"),
    ],
)
async def test_stream_fake_defect_is_flagged(mode: str, check_id: str, status: Status, words: str) -> None:
    results = await _http(StreamFake(mode))
    found = results[check_id]
    assert found.status is status, found
    assert words in found.detail
    if status is Status.FAIL:
        assert found.evidence, "a failure shows the exchange it rests on"
    # The defect is the only one: the other session checks still pass (or skip for lack of input).
    others = {r.id for r in results.values() if r.status in (Status.FAIL, Status.WARN)} - {check_id}
    assert others <= ({"http.concurrent-streams", "http.get-no-response"} if mode == "response-on-get" else set())


async def test_malformed_session_id_is_sent_back_unchanged() -> None:
    # The session id fails http.session-id, and only that: the probes that follow carry it as
    # issued (the trimcp client would drop it), so the server still knows the session.
    results = await _http(StreamFake("bad-session-id"))
    assert _status(results, "http.session-id") is Status.FAIL
    for check_id in (
        "http.notification-202",
        "http.session-required",
        "http.get-no-response",
        "http.concurrent-streams",
        "http.delete",
        "http.resume",
    ):
        assert _status(results, check_id) is Status.PASS, results[check_id]


async def test_refusing_every_origin_does_not_pass_origin() -> None:
    results = await _http(StreamFake("refuses-valid-host"))
    assert _status(results, "http.origin") is Status.SKIP
    assert "own Origin" in results["http.origin"].detail


# --------------------------------------------------------------------------- HTTP+SSE


async def test_good_legacy_fake_passes() -> None:
    results = await _http(LegacyFake(), "2024-11-05", "http+sse")
    for check_id in ("sse.endpoint", "sse.exchange", "sse.origin"):
        assert _status(results, check_id) is Status.PASS, results[check_id]
    # 2024-11-05 has no Streamable HTTP rules at all: nothing is recorded for them (the report
    # says "not in 2024-11-05").
    assert not {*HTTP_CHECKS, *SESSION_CHECKS} & set(results)
    # A later revision spoken over HTTP+SSE: the Streamable HTTP checks do not run against the
    # SSE endpoint, and say why.
    later = await _http(LegacyFake(), "2025-11-25", "http+sse")
    applicable = [c for c in (*HTTP_CHECKS, *SESSION_CHECKS) if CATALOG[c].applies_to("2025-11-25")]
    assert len(applicable) > 10
    for check_id in applicable:
        assert _status(later, check_id) is Status.SKIP
        assert "HTTP+SSE" in later[check_id].detail


@pytest.mark.parametrize(
    ("mode", "check_id", "words"),
    [
        ("sse-no-endpoint", "sse.endpoint", "'message' event"),
        ("sse-post-refused", "sse.exchange", "400"),
        ("sse-answer-in-post", "sse.exchange", "did not come on the SSE stream"),
        ("sse-accepts-foreign-origin", "sse.origin", "200"),
    ],
)
async def test_legacy_fake_defect_is_flagged(mode: str, check_id: str, words: str) -> None:
    async with serve(LegacyFake(mode)) as server:
        server.handler.port = server.port  # type: ignore[attr-defined]
        rec = Results("2024-11-05")
        with trio.fail_after(30):
            await check_sse_transport(rec, f"http://127.0.0.1:{server.port}/sse", "2024-11-05", RawClient(2.0))
    found = rec.results[check_id]
    assert found.status is Status.FAIL, found
    assert words in found.detail and found.evidence


async def _run(url: str, revision: str | None) -> Report:
    with trio.fail_after(120):
        return await run_checks(connector_for([url]), target=url, revision=revision, request_timeout=10)


@pytest.mark.parametrize("revision", ["2024-11-05", None])
async def test_reference_over_http_sse(nursery: trio.Nursery, revision: str | None) -> None:
    bound: BoundHttpServer = await nursery.start(
        lambda task_status: serve_http(build_server(), path=None, sse_path="/sse", task_status=task_status)
    )
    report = await _run(bound.url, revision)
    assert report.transport == "http+sse"
    results = {r.id: r for r in report.results}
    assert report.must_failures == []
    for check_id in (*HTTP_CHECKS, *SESSION_CHECKS):
        assert results[check_id].status is Status.SKIP, results[check_id]
    # The old transport's rules run whatever revision it carries (unpinned: 2025-11-25).
    assert report.revision == (revision or "2025-11-25")
    for check_id in ("sse.endpoint", "sse.exchange", "sse.origin"):
        assert results[check_id].status is Status.PASS, results[check_id]


async def test_reference_over_streamable_http(nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch) -> None:
    # (a long window: a loaded machine cannot turn a ping's quick JSON answer into a stream)
    monkeypatch.setattr(http_app, "JSON_ANSWER_WINDOW", 60.0)
    bound: BoundHttpServer = await nursery.start(serve_http, build_server())
    report = await _run(bound.url, "2025-11-25")
    assert report.transport == "streamable-http"
    results = {r.id: r for r in report.results}
    assert [r for r in report.results if r.status in (Status.FAIL, Status.WARN)] == []
    # The server answers a ping, ready at once, as one JSON body (2025-11-25 lets it pick JSON or
    # SSE; its SSE streams, primed and resumable, are tested in tests/server): the checks that
    # judge SSE answer streams have none to judge and say so (issue 27: no vacuous pass).
    no_sse = {
        "http.resume": "no event id on a POST stream",
        "http.sse-priming": "answers POSTs with JSON",
        "http.sse-response": "answers POSTs with JSON",
    }
    for check_id in SESSION_CHECKS:
        if check_id in no_sse:
            assert results[check_id].status is Status.SKIP, results[check_id]
            assert no_sse[check_id] in results[check_id].detail
            continue
        assert results[check_id].status is Status.PASS, results[check_id]
    for check_id in ("sse.endpoint", "sse.exchange", "sse.origin", "stdio.one-line-messages"):
        assert results[check_id].status is Status.SKIP


# --------------------------------------------------------------------------- stdio


async def _stdio(command: list[str], revision: str) -> Report:
    with trio.fail_after(120):
        return await run_checks(connector_for(command), target=" ".join(command), revision=revision, request_timeout=10)


async def test_reference_over_stdio_passes_framing() -> None:
    report = await _stdio([sys.executable, "-m", "trimcp.reference"], "2026-07-28")
    results = {r.id: r for r in report.results}
    assert report.transport == "stdio"
    assert results["stdio.one-line-messages"].status is Status.PASS
    assert results["stdio.no-requests"].status is Status.PASS


@pytest.mark.parametrize(
    ("mode", "revision", "check_id", "words"),
    [
        ("pretty-notification", "2025-11-25", "stdio.one-line-messages", "span several lines"),
        ("request-on-stdout", "2026-07-28", "stdio.no-requests", "ping"),
    ],
)
async def test_stdio_defect_is_flagged(mode: str, revision: str, check_id: str, words: str) -> None:
    report = await _stdio([sys.executable, BAD_STDIO, "--mode", mode], revision)
    found = next(r for r in report.results if r.id == check_id)
    assert found.status is Status.FAIL, found
    assert words in found.detail and found.evidence


class _Lines:
    """A stand-in stream for the recorder: the lines are set by the test."""


def _recording(lines: list[bytes]) -> RecordingStream:
    rec = RecordingStream(_Lines())  # type: ignore[arg-type]
    rec.received.extend(lines)
    return rec


def test_one_line_messages_tells_log_lines_from_cut_messages() -> None:
    # Log text on stdout is stdio.clean-stdout's business; only a message cut by newlines fails here.
    rec = Results("2025-11-25")
    check_stdio_lines(rec, _recording([b'{"jsonrpc":"2.0","id":1,"result":{}}', b"starting up", b"{ oops"]), False)
    assert rec.results["stdio.one-line-messages"].status is Status.PASS
    rec = Results("2025-11-25")
    check_stdio_lines(rec, _recording([b"{", b'  "jsonrpc": "2.0",', b'  "id": 1, "result": {}', b"}"]), False)
    assert rec.results["stdio.one-line-messages"].status is Status.FAIL


def test_transport_of() -> None:
    class Proc:
        returncode = 0

    assert transport_of(Proc()) == "stdio"
    assert transport_of(object()) is None


def test_transport_catalog_revisions() -> None:
    from trimcp.conformance.catalog import transport

    eras = {spec.id: spec.eras for spec in transport.SPECS}
    assert [c for c, e in eras.items() if e == ("stateless",)] == ["stdio.no-requests"]
    assert {c for c, e in eras.items() if c.startswith("sse.")} == {"sse.endpoint", "sse.exchange", "sse.origin"}
    # The old transport may carry any handshake revision (a server kept for older clients); its
    # rules are MUST in 2024-11-05 only, except the Origin rule every later page repeats.
    sse = [s for s in transport.SPECS if s.id.startswith("sse.")]
    assert all(s.revisions == HANDSHAKE for s in sse)
    assert {s.id: s.level_for("2024-11-05") for s in sse} == dict.fromkeys(
        ("sse.endpoint", "sse.exchange", "sse.origin"), Level.MUST
    )
    assert {s.id: s.level_for("2025-11-25") for s in sse} == {
        "sse.endpoint": Level.BEST,
        "sse.exchange": Level.BEST,
        "sse.origin": Level.MUST,
    }
