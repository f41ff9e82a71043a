"""No vacuous results: a check that saw nothing to judge is skip, never pass (issue 14, item 4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BAD_SERVER = str(REPO / "tests" / "helpers" / "bad_server.py")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trimcp.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO, check=False)


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
    for target in (["/nonexistent/trimcp-no-such-server"],
                   [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"]):
        proc = cli("check", "--connect-timeout", "5", "--", *target)
        assert proc.returncode == 4, proc.stdout + proc.stderr
        assert proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert proc.stderr.startswith("trimcp: cannot reach the server:")
    # The line ends with what the dying server said last.
    assert proc.stderr.rstrip().endswith("(stderr: boom)"), proc.stderr


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
