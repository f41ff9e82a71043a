"""The ``trimcp`` exit statuses (``trimcp/cli/exits.py``), Ctrl-C, a closed stdout, and timed-out probes.

* Ctrl-C: a real ``trimcp`` subprocess sent SIGINT (bounded waits) - ``check`` against a
  silent server and against the reference server mid-run, ``serve --http`` - prints one
  line on stderr and exits 130.
* A closed stdout: the reader goes away after a few bytes (or before any); a run with
  MUST failures (``bad_basic.py --mode wrong-parse-code``) still exits 1, a clean one 0,
  with nothing on stderr.
* A server that is there but never answers exits 4 (its report kept, the reason on stderr,
  in ``--output``'s summary line, and as ``check --config``'s ``silent`` row); usage
  errors exit 2.
* In-process, on the autojump clock: probes that a time limit cut short are ``skip``
  "not reached: timed out after N s", never "not applicable to this server".
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from repo_paths import REPO

from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.stream import MessageStream
from trimcp.cli import exits
from trimcp.cli.check_many import Row, exit_code, run_check_many
from trimcp.cli.commands import main
from trimcp.conformance import run_checks
from trimcp.conformance.model import CheckResult, Level, Report, Status
from trimcp.conformance.results import Results, timed
from trimcp.conformance.runner import FEATURE_PROBE_CHECKS
from trimcp.conformance.timeouts import collect_timeouts, note_timeout
from trimcp.reference.server import build_server
from trimcp.testing import serve_in_process

REPO = REPO
BAD_BASIC = str(REPO / "tests" / "helpers" / "bad_basic.py")
SILENT = [sys.executable, "-c", "import time; time.sleep(120)"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
NOT_APPLICABLE = "not applicable to this server"


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "trimcp.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
        env=ENV,
    )


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - the defect this file exists for
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"trimcp did not stop within 30 s of SIGINT: {err[-2000:]}")
    return proc.returncode, out, err


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp.cli", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
        env=ENV,
        timeout=timeout,
        check=False,
    )


# --------------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_during_check_of_a_silent_server_is_one_line_and_130() -> None:
    with _spawn("check", "--timeout", "60", "--", *SILENT) as proc:
        time.sleep(2.0)  # connected, waiting for an answer that never comes
        code, out, err = _interrupt(proc)
    assert code == exits.EXIT_INTERRUPTED, err
    assert err == "trimcp: interrupted\n"
    assert out == ""


def test_ctrl_c_during_a_real_check_run_is_one_line_and_130() -> None:
    # The reference server answers: SIGINT lands somewhere in the tour or the probes.
    with _spawn("check", "--format", "json") as proc:
        time.sleep(3.0)
        code, _, err = _interrupt(proc)
    assert code == 130, err
    lines = err.splitlines()
    assert lines[-1] == '{"error": "interrupted", "exit": 130}', err
    assert "Traceback" not in err
    assert all(line.startswith("trimcp: no server given") for line in lines[:-1]), err


def test_ctrl_c_stops_serve_http_with_one_line_and_130() -> None:
    with _spawn("serve", "--http", "127.0.0.1:0") as proc:
        assert proc.stderr is not None
        announced = proc.stderr.readline()  # the server is up once it says where
        assert announced.startswith("trimcp: serving the reference server (Streamable HTTP) at http://127.0.0.1:")
        code, _, err = _interrupt(proc)
    assert code == 130
    assert err == "trimcp: interrupted\n"


def test_interrupted_finds_a_ctrl_c_inside_a_group() -> None:
    assert exits.interrupted(KeyboardInterrupt())
    assert exits.interrupted(BaseExceptionGroup("x", [ValueError(), BaseExceptionGroup("y", [KeyboardInterrupt()])]))
    assert not exits.interrupted(ExceptionGroup("x", [ValueError()]))
    assert not exits.interrupted(SystemExit(2))


# --------------------------------------------------------------------------- a closed stdout


@pytest.mark.parametrize(("mode", "expected"), [("wrong-parse-code", 1), ("good", 0)])
def test_a_closed_stdout_keeps_the_exit_status(mode: str, expected: int) -> None:
    # The JSON report (about 90 kB) is more than a pipe holds: writes go on after the close.
    with _spawn("check", "--format", "json", "--", sys.executable, BAD_BASIC, "--mode", mode) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(16).startswith("{")
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == expected, err
    assert err == ""


def test_a_stdout_closed_before_the_report_keeps_the_failure() -> None:
    with _spawn("check", "--", sys.executable, BAD_BASIC, "--mode", "wrong-parse-code") as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 1, err
    assert err == ""


# --------------------------------------------------------------------------- not checked (4)


def test_a_silent_server_exits_4_with_its_report_and_the_reason(tmp_path: Path) -> None:
    done = _run("check", "--connect-timeout", "1", "--timeout", "1", "--", *SILENT)
    assert done.returncode == exits.EXIT_NOT_CHECKED, done.stderr
    assert "lifecycle.connect" in done.stdout  # the report is still written
    assert done.stderr.splitlines()[-1].startswith(
        "trimcp: could not be checked: the server never answered the first request ("
    )
    report = tmp_path / "report.json"
    done = _run("check", "--format", "json", "--output", str(report), "--connect-timeout", "1", "--", *SILENT)
    assert done.returncode == 4, done.stderr
    assert "NOT CHECKED: the server never answered the first request" in done.stdout
    assert "FAILED" not in done.stdout
    line = json.loads(done.stderr.splitlines()[-1])
    assert line["exit"] == 4 and line["error"].startswith("could not be checked: the server never answered")
    assert json.loads(report.read_text())["summary"]["ok"] is False


async def test_check_many_counts_a_silent_server_as_not_checked(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "good": {"command": sys.executable, "args": [BAD_BASIC, "--mode", "good"]},
                    "quiet": {"command": SILENT[0], "args": SILENT[1:]},
                }
            }
        )
    )
    with trio.fail_after(120):
        rows = await run_check_many(str(config), [], revision=None, request_timeout=5, connect_timeout=1)
    by_name = {r.name: r for r in rows}
    assert by_name["good"].state == "checked"
    quiet = by_name["quiet"]
    assert quiet.state == "silent" and quiet.report is not None
    assert quiet.error.startswith("the server never answered the first request")
    assert quiet.verdict(lambda r: not r.ok).startswith("silent: the server never answered")
    assert exit_code(rows, lambda r: not r.ok) == 4
    # A server that failed a MUST outranks one that could not be checked.
    failing = Row(
        "bad",
        "checked",
        Report(
            target="bad",
            revision="2025-11-25",
            results=[CheckResult("tools.input-schema", Level.MUST, Status.FAIL, "no")],
        ),
    )
    assert exit_code([*rows, failing], lambda r: not r.ok) == 1


def _report(revision: str | None, *failed: str) -> Report:
    return Report(
        target="t", revision=revision, results=[CheckResult(i, Level.MUST, Status.FAIL, f"{i} broke") for i in failed]
    )


def test_not_checked_is_a_run_that_judged_nothing() -> None:
    assert (
        exits.not_checked(_report(None, "lifecycle.connect"))
        == "the server never answered the first request (lifecycle.connect broke)"
    )
    assert exits.not_checked(_report(None)) is not None  # --only left even lifecycle.connect out
    # Noise on stdout, or an answer that broke the handshake, was judged: exit 1.
    assert exits.not_checked(_report(None, "lifecycle.connect", "stdio.clean-stdout")) is None
    assert exits.not_checked(_report("2025-11-25", "lifecycle.connect")) is None


# --------------------------------------------------------------------------- usage errors (2)


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--bogus"],  # argparse
        ["check", "--only", "tols.*"],  # UsageError before anything starts
        ["tools", "list", "stray-word"],
        ["serve", "--http", "10.1.2.3:0"],  # not loopback without --allow-remote
    ],
)
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own exit
        code = int(exc.code or 0)
    assert code == exits.EXIT_USAGE == 2
    assert capsys.readouterr().err.strip()


def test_a_usage_error_in_json_mode_says_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "list", "stray", "--format", "json"]) == 2
    assert json.loads(capsys.readouterr().err)["exit"] == 2


# --------------------------------------------------------------------------- the one table


def test_every_help_and_the_readme_show_the_same_statuses() -> None:
    codes = re.findall(r"^\s+(\d+)  ", exits.EXIT_TABLE, re.MULTILINE)
    assert codes == ["0", "1", "2", "3", "4", "5", "130"]
    for args in (["--help"], ["check", "--help"], ["serve", "--help"], ["diff", "--help"]):
        done = _run(*args, timeout=60)
        assert done.returncode == 0 and exits.EXIT_TABLE in done.stdout, args
    readme = (REPO / "README.md").read_text()
    section = readme.split("### Exit status", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    assert re.findall(r"^\| `(\d+)` \|", section, re.MULTILINE) == codes


# --------------------------------------------------------------------------- timed-out probes


def _stalling_after(first: int) -> object:
    """The reference server for the first ``first`` connections; then connections nobody answers."""
    opened = 0

    @asynccontextmanager
    async def connect() -> AsyncIterator[MessageStream]:
        nonlocal opened
        opened += 1
        if opened > first:
            client_end, _silent_end = memory_stream_pair()
            yield client_end
            return
        async with serve_in_process(build_server()) as stream:
            yield stream

    return connect


@pytest.mark.parametrize("revision", [None, "2025-11-25"])
async def test_probes_cut_short_are_not_reached_never_not_applicable(
    revision: str | None, autojump_clock: trio.abc.Clock
) -> None:
    with trio.fail_after(600):
        good = await run_checks(
            _stalling_after(10_000),
            target="ref",
            revision=revision,  # type: ignore[arg-type]
            request_timeout=1,
            connect_timeout=1,
        )
        stalled = await run_checks(
            _stalling_after(1),
            target="ref",
            revision=revision,  # type: ignore[arg-type]
            request_timeout=1,
            connect_timeout=1,
        )
    before = {r.id: r for r in good.results}
    after = {r.id: r for r in stalled.results}
    # Only what was "not applicable" on the answering server may be so on the stalled one.
    assert {i for i, r in after.items() if r.detail == NOT_APPLICABLE} <= {
        i for i, r in before.items() if r.detail == NOT_APPLICABLE
    }
    reached = [i for i, r in after.items() if r.detail.startswith("not reached: timed out after ")]
    assert set(FEATURE_PROBE_CHECKS) & set(reached), reached
    for check_id in reached:
        assert after[check_id].status is Status.SKIP
        assert re.fullmatch(r"not reached: timed out after \d+ s( \(.+\))?", after[check_id].detail)
    assert after["prompts.unknown-name"].detail == "not reached: timed out after 1 s"
    assert before["prompts.unknown-name"].status is Status.PASS


def test_timed_marks_only_what_a_timeout_left_unjudged() -> None:
    rec = Results()
    with collect_timeouts():
        with timed(rec, "prompts.*"):
            rec.ok("prompts.unknown-name")
        assert "prompts.missing-argument" not in rec.results  # no timeout: nothing marked
        with timed(rec, "prompts.*"):
            note_timeout(2.5)
        with timed(rec, "tools.call-without-name"):
            pass
    assert rec.results["prompts.unknown-name"].status is Status.PASS
    assert rec.results["prompts.missing-argument"].detail == "not reached: timed out after 2.5 s"
    assert "tools.call-without-name" not in rec.results
    rows = {r.id: r for r in rec.finish(NOT_APPLICABLE)}
    assert rows["tools.call-without-name"].detail == NOT_APPLICABLE
    note_timeout(1)  # outside a run: noted nowhere, no error
