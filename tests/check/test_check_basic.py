"""The base-protocol checks (checks/negative.py) pass a correct server and fail each defect.

Each mode of tests/helpers/bad_basic.py has exactly one defect; ``trimcp check``
runs against it as a subprocess (bounded in time) and the check that rests on
the violated sentence must fail (or warn, for a SHOULD-style finding) with
evidence, while a correct server passes every new check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from repo_paths import REPO

from trimcp.conformance.checks.meta import check_meta_keys, key_problem, trace_problem
from trimcp.conformance.checks.negative import code_problem
from trimcp.conformance.checks.sent_by_server import SUBSCRIPTION_ID, check_subscription_ids
from trimcp.conformance.model import Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results

REPO = REPO
BAD = str(REPO / "tests" / "helpers" / "bad_basic.py")
NEW_CHECKS = (
    "jsonrpc.parse-error",
    "jsonrpc.invalid-request",
    "jsonrpc.invalid-params",
    "jsonrpc.notification-no-response",
    "jsonrpc.error-codes",
    "cancellation.ignored",
    "lifecycle.before-initialize",
    "jsonrpc.unknown-method",
    "cancellation.honoured",
    "progress.notifications",
    "lifecycle.connect",
    "lifecycle.init-first",
)


def run(mode: str) -> dict[str, dict[str, str]]:
    proc = subprocess.run(
        [sys.executable, "-m", "trimcp.cli", "check", "--format", "json", "--", sys.executable, BAD, "--mode", mode],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
        check=False,
    )
    doc = json.loads(proc.stdout)
    return {row["id"]: row for row in doc["checks"]}


def test_good_server_passes_every_basic_check() -> None:
    rows = run("good")
    assert {c: rows[c]["status"] for c in NEW_CHECKS} == dict.fromkeys(NEW_CHECKS, "pass")


@pytest.mark.parametrize(
    ("mode", "check", "status", "words"),
    [
        ("silent-on-parse-error", "jsonrpc.parse-error", "fail", "no answer"),
        ("wrong-parse-code", "jsonrpc.parse-error", "fail", "not -32700"),
        ("no-invalid-request", "jsonrpc.invalid-request", "fail", "no answer"),
        ("params-accepted", "jsonrpc.invalid-params", "fail", "answered with a result"),
        ("answers-notification", "jsonrpc.notification-no-response", "fail", "response(s) to notifications"),
        ("cancel-exits", "cancellation.ignored", "fail", "broke"),
        ("custom-reserved-code", "jsonrpc.error-codes", "warn", "-32500"),  # best practice here
        # An answer to a request before initialize is not judged (the lifecycle page names none).
        ("early-result", "lifecycle.before-initialize", "pass", "no request from the server"),
        ("request-before-initialized", "lifecycle.before-initialize", "warn", "sent roots/list before the initialized"),
        ("progress-after-response", "progress.notifications", "fail", "after the response"),
        ("progress-not-increasing", "progress.notifications", "fail", "went from 1 to 1"),
        ("cancel-ignored", "cancellation.honoured", "warn", "answered after its cancellation"),
        ("exit-after-first-line", "lifecycle.connect", "fail", "no JSON-RPC answer"),
        ("bad-meta-key", "meta.key-names", "fail", "'-bad/key'"),
        ("reused-request-id", "jsonrpc.server-request-ids", "fail", "reused request id 'srv-1'"),
        ("cancels-unknown", "cancellation.server-sent", "fail", "no request the server had sent"),
        ("notifies-before-init", "lifecycle.init-first", "fail", "notifications/tools/list_changed before answering"),
        ("float-progress-token", "progress.server-tokens", "fail", "progressToken 0.5, not a string or integer"),
    ],
)
def test_each_defect_is_found(mode: str, check: str, status: str, words: str) -> None:
    rows = run(mode)
    assert rows[check]["status"] == status, rows[check]
    assert words in rows[check]["detail"]


def test_meta_key_rules() -> None:
    good = ("io.modelcontextprotocol/serverInfo", "progressToken", "", "a", "com.example-x/a_b.c", "traceparent")
    assert [key_problem(k) for k in good] == [None] * len(good)
    for bad in ("-x/a", "io./a", "1io/a", "io.x-/a", "a/_b", "a/b-", "/a"):
        assert key_problem(bad) is not None, bad


def test_code_problem_rules() -> None:
    assert code_problem(-32601, "2026-07-28") is None
    assert code_problem(-1, "2026-07-28") is None
    assert code_problem(-32050, "2025-11-25") is None  # JSON-RPC's implementation-defined range
    assert code_problem(-32042, "2025-11-25") is None
    assert code_problem(-32500, "2025-11-25") == (True, code_problem(-32500, "2025-11-25")[1])  # type: ignore[index]
    assert code_problem(-32002, "2026-07-28") is not None and code_problem(-32002, "2026-07-28")[0]  # type: ignore[index]
    assert code_problem(-32050, "2026-07-28")[0] is True  # type: ignore[index]
    assert code_problem(-32010, "2026-07-28")[0] is False  # type: ignore[index]
    assert code_problem(-32500, "2026-07-28")[0] is False  # type: ignore[index]
    assert code_problem(-32021, "2026-07-28") is None


def _recording(*texts: dict[str, Any], sent: dict[Any, str] | None = None) -> RecordingStream:
    recording = RecordingStream(None)  # type: ignore[arg-type]
    recording.received.extend(json.dumps(t).encode() for t in texts)
    recording.sent_methods.update(sent or {})
    return recording


def _note(method: str, meta: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": {"_meta": meta}}


def test_subscription_notifications_name_their_subscription() -> None:
    good = _recording(
        _note("notifications/tools/list_changed", {SUBSCRIPTION_ID: "s1"}), sent={"s1": "subscriptions/listen"}
    )
    bad = _recording(_note("notifications/tools/list_changed", {}), sent={"s1": "subscriptions/listen"})
    wrong = _recording(_note("notifications/tools/list_changed", {SUBSCRIPTION_ID: "t"}), sent={"t": "tools/list"})
    for recording, status in ((good, Status.PASS), (bad, Status.FAIL), (wrong, Status.FAIL)):
        rec = Results("2026-07-28")
        check_subscription_ids(rec, [recording])
        assert rec.results["meta.subscription-id"].status is status
        if status is Status.FAIL:
            assert rec.results["meta.subscription-id"].evidence
    rec = Results("2026-07-28")
    check_subscription_ids(rec, [_recording()])
    assert rec.results["meta.subscription-id"].status is Status.SKIP


def test_traceparent_format() -> None:
    ok = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    for value, status in ((ok, Status.PASS), ("not-a-trace", Status.FAIL), (ok.upper(), Status.FAIL)):
        rec = Results("2026-07-28")
        check_meta_keys(rec, [_recording(_note("notifications/message", {"traceparent": value}))])
        assert rec.results["meta.key-names"].status is status, value


TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("traceparent", TRACEPARENT),
        ("traceparent", "01" + TRACEPARENT[2:] + "-future-field"),  # a later version may append fields
        ("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"),
        ("tracestate", "tenant@vendor=a b, ,x=1"),  # a multi-tenant key; inner spaces; an empty member
        ("baggage", "userId=alice,serverNode=DF%2028;region=eu;flag, b = 2"),
        ("progressToken", "anything"),  # no trace key: no format
    ],
)
def test_trace_context_values_that_follow_the_w3c_formats(key: str, value: str) -> None:
    assert trace_problem(key, value) is None


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("traceparent", "ff" + TRACEPARENT[2:], "version ff"),
        ("traceparent", TRACEPARENT.replace("0af7651916cd43dd8448eb211c80319c", "0" * 32), "all-zero trace-id"),
        ("traceparent", TRACEPARENT.replace("b7ad6b7169203331", "0" * 16), "all-zero parent-id"),
        ("traceparent", TRACEPARENT + "-01", "version 00 and fields"),
        ("traceparent", TRACEPARENT.upper(), "lowercase hex"),
        ("tracestate", "Vendor=1", "'Vendor=1'"),
        ("tracestate", "rojo=a=b", "'rojo=a=b'"),
        ("tracestate", ",".join(f"k{i}=v" for i in range(33)), "33 list-members"),
        ("baggage", "userId=alice smith", "'userId=alice smith'"),
        ("baggage", "user id=alice", "'user id=alice'"),
        ("baggage", 'k="quoted"', "'k=\"quoted\"'"),
        ("baggage", 42, "not a string"),
    ],
)
def test_trace_context_values_that_break_the_w3c_formats(key: str, value: object, why: str) -> None:
    problem = trace_problem(key, value)
    assert problem is not None and why in problem, problem


def test_trace_context_formats_bind_from_2026_07_28_on() -> None:
    bad = _recording(_note("notifications/message", {"tracestate": "Vendor=1"}))
    for revision, status in (("2025-11-25", Status.PASS), ("2026-07-28", Status.FAIL)):
        rec = Results(revision)
        check_meta_keys(rec, [bad], revision)
        assert rec.results["meta.key-names"].status is status, revision
