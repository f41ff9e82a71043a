"""The 2025-11-25 tasks checks (``checks/tasks.py``) against a fake with tasks and one defect per mode.

``tests/helpers/bad_tasks.py`` implements the tasks utility correctly in
``good`` (and ``tool-fails``, ``no-tools-call``); every other mode has exactly
one defect, which must show in exactly its check (and, where the defect
rightly breaks two rules, in both).  A server without the ``tasks``
capability, the reference server included, gets every tasks check skipped,
never passed; outside 2025-11-25 they are "not in <revision>".
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any

import pytest
import trio
from repo_paths import HELPERS

from trimcp._trio.stream import MessageStream
from trimcp.conformance import run_checks
from trimcp.conformance.checks.task_probe import CHECKS, NO_TOOLS_CALL, TOOL_CHECKS, task_problem
from trimcp.conformance.checks.tasks import check_tasks
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import CheckResult, Status
from trimcp.conformance.results import Results
from trimcp.reference.server import build_server
from trimcp.testing import serve_in_process

FAKE = HELPERS / "bad_tasks.py"
REVISION = "2025-11-25"


def _fake() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bad_tasks", FAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BAD_TASKS = _fake()


async def _run(mode: str) -> dict[str, CheckResult]:
    """The tasks checks alone, against the fake in ``mode`` (with the capabilities it declares)."""
    rec = Results(REVISION)
    connect = connector_for([sys.executable, str(FAKE), "--mode", mode])
    caps = BAD_TASKS.Server(mode).capabilities()
    with trio.fail_after(60):
        await check_tasks(rec, connect, REVISION, caps, 20.0)
    return {r.id: r for r in rec.finish("never reached") if r.id in CHECKS}


#: Passes that need a failing task or a server without tools.call support.
SKIPPED_ON_GOOD = {"tasks.failed-message", "tasks.not-augmentable"}


async def test_good_passes_every_check_it_can_judge() -> None:
    results = await _run("good")
    for check_id, result in results.items():
        expected = Status.SKIP if check_id in SKIPPED_ON_GOOD else Status.PASS
        assert result.status is expected, result
        assert result.detail, result
    assert results["tasks.failed-message"].detail == "no task failed"
    assert "listed on page" in results["tasks.list"].detail
    assert "still cancelled later" in results["tasks.cancel"].detail
    assert "named in its _meta, was not" in results["tasks.cancel"].detail
    assert "5 tasks created, each with its own taskId; tasks/list: " in results["tasks.create"].detail
    assert "2 notifications/progress" in results["tasks.progress"].detail
    assert "equal to the call without a task" in results["tasks.result"].detail
    assert "gave the plain call's error -32602" in results["tasks.result"].detail


async def test_a_failed_task_with_a_status_message_passes() -> None:
    results = await _run("tool-fails")
    assert results["tasks.failed-message"].status is Status.PASS, results["tasks.failed-message"]
    assert results["tasks.result"].status is Status.PASS, results["tasks.result"]
    flagged = {r.id for r in results.values() if r.status in (Status.FAIL, Status.WARN)}
    assert flagged == set()


async def test_without_tools_call_support_the_task_field_is_ignored() -> None:
    results = await _run("no-tools-call")
    assert results["tasks.not-augmentable"].status is Status.PASS, results["tasks.not-augmentable"]
    assert results["tasks.errors"].status is Status.PASS
    for check_id in TOOL_CHECKS:
        assert (results[check_id].status, results[check_id].detail) == (Status.SKIP, NO_TOOLS_CALL)


#: mode -> ({check id: status}, a fragment of the first check's detail).
DEFECTS: dict[str, tuple[dict[str, Status], str]] = {
    "augments-undeclared": ({"tasks.not-augmentable": Status.FAIL}, "CreateTaskResult"),
    "create-not-working": (
        # It began "completed" and was "working" when asked next (its progress went on): three rules broken.
        {"tasks.create": Status.FAIL, "tasks.status-flow": Status.FAIL, "tasks.progress": Status.FAIL},
        "not working",
    ),
    "no-timestamps": ({"tasks.task-fields": Status.FAIL}, "lastUpdatedAt"),
    "wrong-status-flow": ({"tasks.status-flow": Status.FAIL}, "from completed to working"),
    "result-not-blocking": ({"tasks.result": Status.FAIL}, "still working"),
    "result-without-related-meta": ({"tasks.result-meta": Status.FAIL}, "no _meta"),
    "meta-over-param": (
        # Each operation answers about the real task its _meta names; tasks/result's _meta says so.
        {
            "tasks.get": Status.FAIL,
            "tasks.result": Status.FAIL,
            "tasks.cancel": Status.FAIL,
            "tasks.result-meta": Status.FAIL,
        },
        "must be ignored in favour of taskId",
    ),
    "list-missing": ({"tasks.list": Status.FAIL}, "in none of"),
    # The cursor ignored, every page is the first: the listing repeats a task.
    "bad-cursor-ok": ({"tasks.errors": Status.FAIL, "tasks.create": Status.FAIL}, "unknown cursor"),
    "unknown-task-wrong-code": ({"tasks.errors": Status.FAIL}, "-32600, not -32602"),
    "cancel-terminal-ok": (
        {"tasks.cancel-terminal": Status.FAIL, "tasks.status-flow": Status.FAIL},
        "answered with a result",
    ),
    "cancel-not-cancelled": ({"tasks.cancel": Status.FAIL}, "not cancelled"),
    "cancel-not-sticky": ({"tasks.cancel": Status.FAIL, "tasks.status-flow": Status.FAIL}, "then became 'completed'"),
    "required-without-task-ok": ({"tasks.required": Status.FAIL}, "without a task was answered with a result"),
    "forbidden-task-ok": ({"tasks.forbidden": Status.WARN}, "with a task was answered with a result"),
    "related-meta-on-get": ({"tasks.no-related-meta": Status.WARN}, "tasks/get result carries"),
    "empty-error-message": ({"tasks.error-messages": Status.WARN}, "empty message"),
    "failed-no-message": ({"tasks.failed-message": Status.WARN}, "without a statusMessage"),
    "input-without-related-meta": ({"tasks.input-meta": Status.FAIL}, "lacks io.modelcontextprotocol/related-task"),
    "asks-with-task": ({"tasks.requestor-capability": Status.WARN}, "carries a task"),
    "undeclared-creates": ({"tasks.not-augmentable": Status.FAIL}, "declares no tasks capability"),
    "undeclared-refuses": ({"tasks.not-augmentable": Status.FAIL}, "refused (-32602)"),
    "progress-other-token": ({"tasks.progress": Status.FAIL}, "progressToken 'trimcp-audit-other-token'"),
    "progress-after-terminal": ({"tasks.progress": Status.FAIL}, "after the task was seen terminal"),
    # The reused id names a task that was completed and is now working: both rules broken.
    "reused-task-id": ({"tasks.create": Status.FAIL, "tasks.status-flow": Status.FAIL}, "the same taskId"),
    "list-duplicates": ({"tasks.create": Status.FAIL}, "twice"),
    "result-differs": ({"tasks.result": Status.FAIL}, "differs from what the same call without a task returns"),
    "task-error-other-code": ({"tasks.result": Status.FAIL}, "gave error -32603"),
}


def test_every_defect_mode_is_tested() -> None:
    correct = {
        "good",
        "no-tasks",
        "no-tools-call",
        "tool-fails",
        "finishes-at-once",
        "bad-timestamps",
        "result-meta-other-task",
    }  # (wrong-value mutants: tests/check/test_check_audit.py)
    assert set(BAD_TASKS.MODES) == correct | set(DEFECTS)


@pytest.mark.parametrize("mode", sorted(DEFECTS))
async def test_each_defect_is_flagged_where_it_belongs(mode: str) -> None:
    expected, fragment = DEFECTS[mode]
    results = await _run(mode)
    flagged = {r.id: r.status for r in results.values() if r.status in (Status.FAIL, Status.WARN)}
    assert flagged == expected, {k: results[k].detail for k in flagged}
    first = results[next(iter(expected))]
    assert fragment in first.detail, first
    for check_id in expected:
        assert results[check_id].evidence, results[check_id]  # the messages behind the verdict


async def test_a_server_without_tasks_gets_every_tasks_check_skipped() -> None:
    connect = connector_for([sys.executable, str(FAKE), "--mode", "no-tasks"])
    with trio.fail_after(120):
        report = await run_checks(connect, target="no tasks", revision=REVISION)
    rows = {r.id: r for r in report.results if r.id in CHECKS}
    assert len(rows) == len(CHECKS)
    # A task on tools/call is still tried: it must be ignored.
    judged = rows.pop("tasks.not-augmentable")
    assert judged.status is Status.PASS, judged
    assert "declares no tasks capability" in judged.detail and "the same result" in judged.detail
    assert {(r.status, r.detail) for r in rows.values()} == {(Status.SKIP, "the server does not declare tasks")}


async def test_the_good_fake_passes_a_whole_run() -> None:
    connect = connector_for([sys.executable, str(FAKE), "--mode", "good"])
    with trio.fail_after(120):
        report = await run_checks(connect, target="good", revision=REVISION)
    assert report.ok, [(r.id, r.detail) for r in report.must_failures]
    rows = {r.id: r for r in report.results if r.id in CHECKS}
    assert rows["tasks.create"].status is Status.PASS
    assert rows["tasks.cancel"].status is Status.PASS


@asynccontextmanager
async def _reference() -> AsyncIterator[MessageStream]:
    async with serve_in_process(build_server()) as stream:
        yield stream


@pytest.mark.parametrize(
    ("revision", "detail"),
    [
        ("2025-11-25", "the server does not declare tasks"),
        ("2025-06-18", "not in 2025-06-18"),
        ("2026-07-28", "not in 2026-07-28"),
    ],
)
async def test_the_reference_server_skips_every_tasks_check(
    autojump_clock: trio.abc.Clock, revision: str, detail: str
) -> None:
    with trio.fail_after(300):
        report = await run_checks(_reference, target="reference", revision=revision)
    rows = {r.id: r for r in report.results if r.id in CHECKS}
    if revision == REVISION:  # its read-only tool is called with a task, which it must ignore
        judged = rows.pop("tasks.not-augmentable")
        assert judged.status is Status.PASS and "echo (the same result)" in judged.detail, judged
    assert {(r.status, r.detail) for r in rows.values()} == {(Status.SKIP, detail)}


GOOD_TASK: dict[str, Any] = {
    "taskId": "t-1",
    "status": "working",
    "createdAt": "2025-11-25T10:30:00Z",
    "lastUpdatedAt": "2025-11-25T10:40:00.5+01:00",
    "ttl": 60000,
    "pollInterval": 5000,
}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({}, None),
        ({"ttl": None}, None),
        ({"taskId": 7}, "taskId"),
        ({"taskId": ""}, "taskId"),
        ({"status": "done"}, "status"),
        ({"createdAt": "yesterday"}, "createdAt"),
        ({"createdAt": "2025-11-25"}, "createdAt"),  # a date is not a timestamp
        ({"lastUpdatedAt": None}, "lastUpdatedAt"),
        ({"ttl": "60000"}, "ttl"),
        ({"ttl": True}, "ttl"),
        ({"pollInterval": 0.5}, "pollInterval"),
    ],
)
def test_task_problem(change: dict[str, Any], problem: str | None) -> None:
    found = task_problem({**GOOD_TASK, **change})
    if problem is None:
        assert found is None
    else:
        assert found is not None and found.startswith(problem), found


def test_a_task_without_ttl_is_a_problem() -> None:
    task = {k: v for k, v in GOOD_TASK.items() if k != "ttl"}
    assert task_problem(task) == "no ttl (an integer, or null for unlimited)"
