"""The JSON-RPC base rules read off every message of the run (checks/base_rules.py) and the
same-version rule read off every initialize of the run (checks/handshake.check_version_same).

Each fail mode of tests/helpers/bad_basic.py breaks one sentence as a server author would;
``trimcp check`` runs against it as a subprocess and the check must fail naming it, while the
correct modes (``good``, ``negotiates-down``) pass with a detail that says what was judged.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import trio
from repo_paths import REPO

from trimcp._sansio import jsonrpc as rpc
from trimcp.conformance.checks.base_rules import check_base_rules
from trimcp.conformance.checks.handshake import check_version_same
from trimcp.conformance.model import Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results

REPO = REPO
BAD = str(REPO / "tests" / "helpers" / "bad_basic.py")


def run(mode: str) -> dict[str, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "trimcp.cli", "check", "--format", "json", "--", sys.executable, BAD, "--mode", mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )
    doc = json.loads(proc.stdout)
    return {row["id"]: row for row in doc["checks"]}


def test_correct_server_passes_with_what_was_judged() -> None:
    rows = run("good")
    for check in ("jsonrpc.valid-messages", "jsonrpc.ids", "jsonrpc.notification-no-response", "lifecycle.version"):
        assert rows[check]["status"] == "pass", (check, rows[check])
    assert "connections" in rows["jsonrpc.ids"]["detail"]
    assert "proven by an answered request" in rows["jsonrpc.notification-no-response"]["detail"]
    # Every handshake revision was asked, each answered with itself.
    detail = rows["lifecycle.version"]["detail"]
    assert "asking 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25" in detail


def test_negotiating_down_an_unsupported_revision_is_no_violation() -> None:
    rows = run("negotiates-down")
    assert rows["lifecycle.version"]["status"] == "pass", rows["lifecycle.version"]


@pytest.mark.parametrize(
    ("mode", "check", "words"),
    [
        ("notification-with-id", "jsonrpc.valid-messages", "notifications/message with id 'srv-note'"),
        ("null-id-error", "jsonrpc.ids", "carries id None, not the request's"),
        ("answers-initialized", "jsonrpc.notification-no-response", "null id"),
        ("answers-initialized", "jsonrpc.ids", "null id"),
        ("version-by-capabilities", "lifecycle.version", "asking 2025-11-25 answered with 2025-06-18"),
    ],
)
def test_each_violation_fails(mode: str, check: str, words: str) -> None:
    row = run(mode)[check]
    assert row["status"] == "fail", row
    assert words in row["detail"], row


class _Pipe:
    """A stream that answers nothing: the recordings below are written by hand."""

    async def send(self, message: rpc.Message, meta: Any = None) -> None:
        await trio.lowlevel.checkpoint()


def _recording(steps: list[tuple[str, Any]]) -> RecordingStream:
    recording = RecordingStream(_Pipe())  # type: ignore[arg-type]

    async def play() -> None:
        for direction, item in steps:
            if direction == "send":
                await recording.send(item)
            elif direction == "raw":
                recording.note_raw(item)
            else:
                recording._order.append(("recv", len(recording.received)))
                recording.received.append(json.dumps(item).encode())

    trio.run(play)
    return recording


def _statuses(*recordings: RecordingStream) -> dict[str, tuple[Status, str]]:
    rec = Results(revision="2025-11-25")
    check_base_rules(rec, list(recordings), "2025-11-25")
    check_version_same(rec, list(recordings))
    return {k: (v.status, v.detail) for k, v in rec.results.items()}


def test_a_null_id_answers_one_unreadable_text_only() -> None:
    parse_error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
    ping = rpc.Request("p", "ping", {})
    one = _recording(
        [("raw", False), ("recv", parse_error), ("send", ping), ("recv", {"jsonrpc": "2.0", "id": "p", "result": {}})]
    )
    assert _statuses(one)["jsonrpc.ids"][0] is Status.PASS
    two = _recording([("raw", False), ("recv", parse_error), ("recv", parse_error)])
    status, detail = _statuses(two)["jsonrpc.ids"]
    assert status is Status.FAIL and "null id" in detail


def test_an_answer_to_a_notification_with_an_invented_id_fails() -> None:
    steps = [
        ("send", rpc.Notification("notifications/initialized")),
        ("recv", {"jsonrpc": "2.0", "id": 99, "result": {}}),
    ]
    results = _statuses(_recording(steps))
    assert results["jsonrpc.notification-no-response"][0] is Status.FAIL
    assert "never sent" in results["jsonrpc.notification-no-response"][1]


def test_a_revision_listed_in_one_answer_binds_every_other() -> None:
    def init(rid: int, version: str) -> rpc.Request:
        return rpc.Request(rid, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {}})

    def answer(rid: int, version: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "result": {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "x", "version": "0"}},
        }

    # Asked 2025-11-25, it answered 2025-06-18 (never answering 2025-11-25): the Otherwise clause.
    down = _recording(
        [
            ("send", init(0, "2025-11-25")),
            ("recv", answer(0, "2025-06-18")),
            ("send", init(1, "2025-06-18")),
            ("recv", answer(1, "2025-06-18")),
        ]
    )
    assert _statuses(down)["lifecycle.version"][0] is Status.PASS
    # Asked 2025-03-26 it answered 2025-06-18, though it answers 2025-03-26 on another connection.
    bad = _recording([("send", init(0, "2025-03-26")), ("recv", answer(0, "2025-06-18"))])
    other = _recording([("send", init(0, "2025-03-26")), ("recv", answer(0, "2025-03-26"))])
    status, detail = _statuses(bad, other)["lifecycle.version"]
    assert status is Status.FAIL and "asking 2025-03-26 answered with 2025-06-18" in detail
