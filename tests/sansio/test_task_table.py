"""The sans-IO ext-tasks table (trimcp._sansio.task_table) and extension table."""

from __future__ import annotations

import pytest

from trimcp._sansio import extensions
from trimcp._sansio import task_table as tt

T0 = 1_764_000_000.0


def make(
    table: tt.TaskTable | None = None, task_id: str = "t1", ttl_ms: int | None = 1000
) -> tuple[tt.TaskTable, tt.TaskRecord]:
    table = tt.TaskTable() if table is None else table
    return table, table.create(task_id, T0, ttl_ms=ttl_ms, poll_interval_ms=100)


def test_create_result_is_a_flat_task_without_payloads() -> None:
    _, record = make()
    wire = record.to_wire(detailed=True)
    assert wire == {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2025-11-24T16:00:00.000Z",
        "lastUpdatedAt": "2025-11-24T16:00:00.000Z",
        "ttlMs": 1000,
        "pollIntervalMs": 100,
    }


def test_allowed_moves_follow_the_diagram() -> None:
    assert tt.TRANSITIONS[tt.WORKING] == {tt.INPUT_REQUIRED, tt.COMPLETED, tt.FAILED, tt.CANCELLED}
    assert tt.TRANSITIONS[tt.INPUT_REQUIRED] == {tt.WORKING, tt.COMPLETED, tt.FAILED, tt.CANCELLED}
    for status in tt.TERMINAL:
        assert tt.TRANSITIONS[status] == frozenset()


def test_terminal_task_never_moves_again() -> None:
    table, record = make()
    table.complete("t1", {"content": []}, T0 + 1)
    with pytest.raises(tt.TaskStateError, match="can't move task t1 from 'completed' to 'cancelled'"):
        table.cancel("t1", T0 + 2)
    assert record.to_wire(detailed=True)["result"] == {"content": []}
    assert record.to_wire(detailed=True)["lastUpdatedAt"] == "2025-11-24T16:00:01.000Z"


def test_failed_inlines_the_error_and_no_result() -> None:
    table, record = make()
    table.fail("t1", {"code": -32603, "message": "boom"}, T0)
    wire = record.to_wire(detailed=True)
    assert wire["status"] == "failed" and wire["error"]["code"] == -32603 and "result" not in wire


def test_questions_partial_answers_and_unknown_keys() -> None:
    table, record = make()
    req = {"method": "elicitation/create", "params": {"message": "?"}}
    table.ask("t1", {"a": req, "b": req}, T0)
    assert record.status == tt.INPUT_REQUIRED
    assert set(record.to_wire(detailed=True)["inputRequests"]) == {"a", "b"}
    assert table.answer("t1", {"zzz": {"action": "accept"}}, T0) == {}
    assert table.answer("t1", {"a": {"action": "accept"}}, T0) == {"a": {"action": "accept"}}
    assert record.status == tt.INPUT_REQUIRED and set(record.input_requests) == {"b"}
    # an answered key is no longer outstanding: a second answer is ignored
    assert table.answer("t1", {"a": {"action": "decline"}}, T0) == {}
    table.answer("t1", {"b": {"action": "accept"}}, T0)
    assert record.status == tt.WORKING and "inputRequests" not in record.to_wire(detailed=True)
    with pytest.raises(tt.TaskStateError, match="already used"):
        table.ask("t1", {"a": req}, T0)


def test_expired_terminal_tasks_are_dropped_but_not_before_ttl() -> None:
    table, _ = make(ttl_ms=1000)
    table.complete("t1", {}, T0)
    assert table.get("t1", T0 + 0.999) is not None
    assert table.get("t1", T0 + 1.001) is None
    table2, _ = make(ttl_ms=1000)
    assert table2.get("t1", T0 + 10) is not None  # a running task is not dropped


def test_full_table_drops_the_oldest_terminal_task_or_refuses() -> None:
    table = tt.TaskTable(max_tasks=2)
    make(table, "a", None)
    make(table, "b", None)
    with pytest.raises(tt.TaskStateError, match="too many tasks"):
        make(table, "c", None)
    table.complete("a", {}, T0)
    make(table, "c", None)
    assert table.get("a", T0) is None and len(table) == 2
    with pytest.raises(tt.TaskStateError, match="already in use"):
        make(table, "c", None)


def test_extension_table_gates_methods_per_request() -> None:
    ours = {"extensions": {extensions.TASKS.id: {}}}
    assert extensions.admits("tasks/get", "2026-07-28", ours)
    assert not extensions.admits("tasks/get", "2026-07-28", {})
    assert not extensions.admits("tasks/list", "2026-07-28", ours)
    assert not extensions.admits("tasks/get", "2025-11-25", ours)
    refused = extensions.refuse_method("tasks/cancel", "2026-07-28", {"elicitation": {}})
    assert refused is not None and refused.code == -32021
    assert refused.data == {"requiredCapabilities": {"extensions": {extensions.TASKS.id: {}}}}
    assert extensions.refuse_method("tasks/cancel", "2026-07-28", ours) is None
    assert extensions.refuse_method("tools/call", "2026-07-28", {}) is None


def test_capabilities_leave_extensions_out_of_revisions_without_them() -> None:
    caps = {"tools": {}, "extensions": {extensions.TASKS.id: {}}}
    assert extensions.capabilities_for(caps, "2026-07-28") == caps
    assert extensions.capabilities_for(caps, "2025-11-25") == {"tools": {}}
