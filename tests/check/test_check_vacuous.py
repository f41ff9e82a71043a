"""No vacuous results: a check that saw nothing to judge is skip, never pass (issue 14 item 4, issue 27 item 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import trio
from helpers.bad_http import StreamFake
from helpers.h11_fake import serve
from repo_paths import REPO

from trimcp.conformance import run_checks
from trimcp.conformance.checks.http import check_http_transport
from trimcp.conformance.checks.tasks import check_tasks
from trimcp.conformance.checks.tool_calls import call_outcome
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import CheckResult, Status
from trimcp.conformance.rawhttp import RawClient
from trimcp.conformance.results import Results

REPO = REPO
BAD_SERVER = str(REPO / "tests" / "helpers" / "bad_server.py")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp.cli", *args], capture_output=True, text=True, timeout=60, cwd=REPO, check=False
    )


def checks(*args: str) -> dict[str, dict[str, str]]:
    proc = cli("check", "--format", "json", *args)
    return {c["id"]: c for c in json.loads(proc.stdout)["checks"]}


def test_silent_server_passes_nothing() -> None:
    found = checks("--connect-timeout", "1", "--", sys.executable, "-c", "import time; time.sleep(80)")
    for check_id in ("jsonrpc.valid-messages", "jsonrpc.ids", "schema.messages", "stdio.clean-stdout"):
        assert found[check_id]["status"] == "skip", found[check_id]
    assert "no messages" in found["schema.messages"]["detail"]
    assert not [c for c in found.values() if c["status"] == "pass"]


def test_echoing_server_breaks_request_direction() -> None:
    found = checks("--connect-timeout", "5", "--", "cat")
    assert found["schema.messages"]["status"] == "fail"
    assert "request direction" in found["schema.messages"]["detail"]
    assert "initialize" in found["schema.messages"]["detail"]


def test_log_in_a_name_is_no_logging_tool() -> None:
    found = checks("--", sys.executable, BAD_SERVER, "--mode", "stateless-silent-log-tool")
    assert found["stateless.log-level"]["status"] == "skip", found["stateless.log-level"]
    assert "no notifications/message" in found["stateless.log-level"]["detail"]
    # The control: a tool seen to log still passes.
    good = checks("--", sys.executable, BAD_SERVER, "--mode", "stateless-good")
    assert good["stateless.log-level"]["status"] == "pass"


def test_all_is_error_calls_are_no_pass() -> None:
    found = checks("--", sys.executable, BAD_SERVER, "--mode", "all-is-error")
    row = found["tools.call-read-only"]
    assert row["status"] == "skip", row
    assert "1 returned isError" in row["detail"]
    good = checks("--", sys.executable, BAD_SERVER, "--mode", "good")
    assert good["tools.call-read-only"]["status"] == "pass"
    assert "0 returned isError" in good["tools.call-read-only"]["detail"]


def test_dead_or_missing_target_exits_4_with_one_line() -> None:
    for target in (
        ["/nonexistent/trimcp-no-such-server"],
        [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"],
    ):
        proc = cli("check", "--connect-timeout", "5", "--", *target)
        assert proc.returncode == 4, proc.stdout + proc.stderr
        assert proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith(("trimcp: cannot start MCP server ", "trimcp: stdio server ")), proc.stderr
    # The line says how the server ended, once, and ends with what it said last, once.
    assert proc.stderr.count("status 3") == 1 and proc.stderr.count("stderr: boom") == 1, proc.stderr
    assert proc.stderr.rstrip().endswith("exited with status 3 (stderr: boom)"), proc.stderr


def test_no_evidence_is_no_pass() -> None:
    """One page, no notification, no tool: each of these checks judged nothing."""
    found = checks("--", sys.executable, BAD_SERVER, "--mode", "good")
    assert found["pagination.cursors"]["status"] == "skip", found["pagination.cursors"]
    assert found["capabilities.notifications"]["status"] == "skip"
    # The control: a notification it should not send is still a failure.
    noisy = checks("--", sys.executable, BAD_SERVER, "--mode", "log-without-capability")
    assert noisy["capabilities.notifications"]["status"] == "fail"
    empty = checks("--", sys.executable, BAD_SERVER, "--mode", "no-tools")
    assert empty["tools.list"]["status"] == "pass"
    for check_id in ("tools.unique-names", "tools.name-format", "tools.input-schema"):
        assert empty[check_id]["status"] == "skip", empty[check_id]
        assert empty[check_id]["detail"] == "the server lists no tools"


# --------------------------------------------------------------------------- issue 27, item 2
# Each check below used to pass having judged nothing; each fake here is correct but gives the
# check nothing to judge, so the check must say skip, and why.  The harness runs in-process
# (``run_checks`` on ``connector_for``), the fakes as the subprocesses they are.

FEATURES = str(REPO / "tests" / "helpers" / "bad_features.py")


async def _run(*target: str, revision: str | None = None) -> dict[str, CheckResult]:
    with trio.fail_after(60):
        report = await run_checks(
            connector_for(list(target)), target="fake", revision=revision, connect_timeout=5, request_timeout=5
        )
    return {r.id: r for r in report.results}


def _skip(found: dict[str, CheckResult], check_id: str, words: str) -> None:
    assert found[check_id].status is Status.SKIP, found[check_id]
    assert words in found[check_id].detail, found[check_id]


async def test_two_empty_lists_are_not_stable_lists() -> None:
    found = await _run(sys.executable, BAD_SERVER, "--mode", "stateless-empty-lists")
    _skip(found, "features.stable-lists", "empty on both connections")
    good = await _run(sys.executable, BAD_SERVER, "--mode", "stateless-good")
    assert good["features.stable-lists"].status is Status.PASS
    assert "3 tools" in good["features.stable-lists"].detail or "1 resources" in good["features.stable-lists"].detail


async def test_a_tool_failing_whatever_it_gets_proves_no_input_validation() -> None:
    found = await _run(sys.executable, FEATURES, "--mode", "echo-always-fails", revision="2025-11-25")
    _skip(found, "tools.input-validation", "no call with valid arguments succeeded")
    good = await _run(sys.executable, FEATURES, "--mode", "good", revision="2025-11-25")
    assert good["tools.input-validation"].status is Status.PASS
    assert "valid arguments accepted" in good["tools.input-validation"].detail


async def test_a_text_reporting_an_error_is_no_successful_call() -> None:
    found = await _run(sys.executable, BAD_SERVER, "--mode", "fetch-failed")
    _skip(found, "tools.call-read-only", "1 answered a text reporting an error without isError")


def _text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def test_call_outcome_reads_the_text_not_only_is_error() -> None:
    text = _text
    assert call_outcome(text("fetch failed")) == "error-text"
    assert call_outcome(text("Error: no such file")) == "error-text"
    assert call_outcome({**text("boom"), "isError": True}) == "is-error"
    assert call_outcome(text("hello")) == "success"
    assert call_outcome(text("0 errors found in 3 files")) == "success"
    # Structured content is an answer of its own, whatever the text says.
    assert call_outcome({**text("Error: none"), "structuredContent": {"errors": 0}}) == "success"
    assert call_outcome({"content": [{"type": "image", "data": "", "mimeType": "image/png"}]}) == "success"


def test_no_valid_message_is_no_schema_pass() -> None:
    # Every line is JSON but none is JSON-RPC: nothing had a schema to meet.
    script = "import sys\nfor line in sys.stdin:\n    print('{\"hello\": 1}', flush=True)\n"
    found = checks("--connect-timeout", "2", "--", sys.executable, "-c", script)
    assert found["jsonrpc.valid-messages"]["status"] == "fail", found["jsonrpc.valid-messages"]
    assert found["schema.messages"]["status"] == "skip", found["schema.messages"]
    assert "valid JSON-RPC" in found["schema.messages"]["detail"]


async def test_no_completion_value_is_no_limit_pass() -> None:
    found = await _run(sys.executable, FEATURES, "--mode", "completion-empty", revision="2025-11-25")
    _skip(found, "completion.limits", "no values")
    good = await _run(sys.executable, FEATURES, "--mode", "good", revision="2025-11-25")
    assert good["completion.limits"].status is Status.PASS
    assert good["completion.limits"].detail == "2 values, total 2"


async def _streams(*modes: str) -> dict[str, CheckResult]:
    fake = StreamFake(*modes)
    async with serve(fake) as server:
        fake.port = server.port
        rec = Results("2025-11-25")
        with trio.fail_after(30):
            await check_http_transport(rec, server.url, "2025-11-25", RawClient(5.0), "streamable-http")
    return rec.results


async def test_http_stream_checks_need_something_to_judge() -> None:
    _skip(await _streams("no-replay"), "http.resume", "replayed no message")
    lonely = await _streams("get-ends-at-once", "serial-pings")
    _skip(lonely, "http.get-no-response", "ended before the pings were answered")
    _skip(lonely, "http.concurrent-streams", "one after the other")
    # The controls: the same fake with the GET stream open, and with history, passes them.
    good = await _streams()
    assert "the GET stream was open throughout" in good["http.concurrent-streams"].detail
    assert good["http.get-no-response"].status is Status.PASS
    assert good["http.resume"].status is Status.PASS
    assert "1 messages replayed" in good["http.resume"].detail


async def test_a_task_finished_before_tasks_result_tests_no_blocking() -> None:
    rec = Results("2025-11-25")
    fake = str(REPO / "tests" / "helpers" / "bad_tasks.py")
    caps: dict[str, Any] = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    with trio.fail_after(60):
        await check_tasks(
            rec, connector_for([sys.executable, fake, "--mode", "finishes-at-once"]), "2025-11-25", caps, 20.0
        )
    _skip(rec.results, "tasks.result", "had finished (completed) before tasks/result was sent")
