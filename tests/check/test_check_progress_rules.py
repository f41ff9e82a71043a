"""checks/progress_rules.py on recorded conversations: each rule passes a correct one, fails a wrong one
(a server author's realistic mistake), and skips, with the reason, when there is nothing to judge.

The conversations are played through a real ``RecordingStream`` (its ``send`` / ``receive``), so
the order the texts crossed in is the recorder's own.  The end-to-end fakes are in
tests/check/test_check_basic.py (``notifies-before-init``, ``float-progress-token``) and
tests/check/test_check_stateless.py (``mrtr-duplicate-keys``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import trio

from trimcp._sansio import jsonrpc as rpc
from trimcp._trio.stream import NO_META, Received, SendMeta
from trimcp.conformance.checks.progress_rules import (
    check_init_first,
    check_input_request_keys,
    check_request_ids_in_flight,
    check_server_progress_tokens,
    check_task_cancellations,
)
from trimcp.conformance.model import CheckResult, Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results

Step = tuple[str, Any]


class _Inner:
    def __init__(self) -> None:
        self.pending: list[bytes] = []

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        pass

    async def receive(self) -> Received:
        data = self.pending.pop(0)
        return Received(data, rpc.parse_payload(data))


def play(*steps: Step) -> RecordingStream:
    """``("send", message)`` / ``("recv", obj or raw text)``, in the order they cross."""
    inner = _Inner()
    recording = RecordingStream(inner)  # type: ignore[arg-type]

    async def go() -> None:
        for direction, item in steps:
            if direction == "send":
                await recording.send(item)
            else:
                inner.pending.append(item.encode() if isinstance(item, str) else json.dumps(item).encode())
                await recording.receive()

    trio.run(go)
    return recording


def judge(check: Callable[[Results, Sequence[RecordingStream]], None], *recordings: RecordingStream) -> CheckResult:
    rec = Results()
    check(rec, list(recordings))
    [result] = rec.results.values()
    return result


INIT = rpc.Request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}})
INIT_ANSWER = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}},
}


def _ping(rid: Any, token: Any = None) -> dict[str, Any]:
    params = {"_meta": {"progressToken": token}} if token is not None else {}
    return {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": params}


# --------------------------------------------------------------------------- lifecycle.init-first


def test_init_first() -> None:
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "up"}}
    good = play(
        ("send", INIT),
        ("recv", log),
        ("recv", _ping("s1")),
        ("send", rpc.Response("s1", {})),
        ("recv", INIT_ANSWER),
        ("recv", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
    )
    assert judge(check_init_first, good).status is Status.PASS
    # Announcing the tools before answering initialize: the phase was not first.
    early = play(
        ("send", INIT),
        ("recv", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ("recv", INIT_ANSWER),
    )
    found = judge(check_init_first, early)
    assert found.status is Status.FAIL and "before answering initialize" in found.detail and found.evidence
    roots = play(("send", INIT), ("recv", {"jsonrpc": "2.0", "id": "r", "method": "roots/list"}), ("recv", INIT_ANSWER))
    assert judge(check_init_first, roots).status is Status.FAIL
    # The answer to a request the client sent too early is the client's doing.
    probe = play(
        ("send", rpc.Request(9, "tools/list", {})),
        ("recv", {"jsonrpc": "2.0", "id": 9, "error": {"code": -32600, "message": "not yet"}}),
        ("send", INIT),
        ("recv", INIT_ANSWER),
    )
    assert judge(check_init_first, probe).status is Status.PASS
    unanswered = play(("send", INIT), ("recv", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
    found = judge(check_init_first, unanswered)
    assert found.status is Status.SKIP and "no initialize" in found.detail


# --------------------------------------------------------------------------- progress.server-tokens


def test_server_progress_tokens() -> None:
    # Two requests with the same token, the first answered before the second arrived: fine.
    good = play(
        ("recv", _ping("a", "t")), ("send", rpc.Response("a", {})), ("recv", _ping("b", "t")), ("recv", _ping("c", 7))
    )
    assert judge(check_server_progress_tokens, good).status is Status.PASS
    floating = play(("recv", _ping("a", 0.5)))
    found = judge(check_server_progress_tokens, floating)
    assert found.status is Status.FAIL and "0.5, not a string or integer" in found.detail
    assert judge(check_server_progress_tokens, play(("recv", _ping("a", True)))).status is Status.FAIL
    # One counter shared by two requests in flight at once.
    shared = play(("recv", _ping("a", "t")), ("recv", _ping("b", "t")), ("send", rpc.Response("a", {})))
    found = judge(check_server_progress_tokens, shared)
    assert found.status is Status.FAIL and "still in flight" in found.detail and len(found.evidence) == 2
    # "1" and 1 are different tokens.
    assert (
        judge(check_server_progress_tokens, play(("recv", _ping("a", "1")), ("recv", _ping("b", 1)))).status
        is Status.PASS
    )
    found = judge(check_server_progress_tokens, play(("recv", _ping("a"))))
    assert found.status is Status.SKIP and "progressToken" in found.detail


# --------------------------------------------------------------------------- cancellation.task-requests


def _sampling(rid: Any, task: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"messages": [], "maxTokens": 1}
    if task:
        params["task"] = {"ttl": 1000}
    return {"jsonrpc": "2.0", "id": rid, "method": "sampling/createMessage", "params": params}


def _cancel(rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}


def test_task_cancellations() -> None:
    good = play(("recv", _sampling("t1", True)), ("recv", _sampling("p1", False)), ("recv", _cancel("p1")))
    assert judge(check_task_cancellations, good).status is Status.PASS
    bad = play(("recv", _sampling("t1", True)), ("recv", _cancel("t1")))
    found = judge(check_task_cancellations, bad)
    assert found.status is Status.FAIL and "tasks/cancel is due" in found.detail
    found = judge(check_task_cancellations, play(("recv", _sampling("p1", False)), ("recv", _cancel("p1"))))
    assert found.status is Status.SKIP and "task-augmented" in found.detail


# --------------------------------------------------------------------------- jsonrpc.request-ids-in-flight


def test_request_ids_in_flight() -> None:
    # An id reused once the first request was answered is fine in 2026-07-28.
    good = play(
        ("recv", _ping("s1")),
        ("send", rpc.Response("s1", {})),
        ("recv", _ping("s1")),
        ("recv", _ping(1)),
        ("recv", _ping("1")),
    )
    assert judge(check_request_ids_in_flight, good).status is Status.PASS
    # A counter that is not incremented: two requests with id 's1' before any answer.
    bad = play(("recv", _ping("s1")), ("recv", _ping("s1")))
    found = judge(check_request_ids_in_flight, bad)
    assert found.status is Status.FAIL and "still in flight" in found.detail and found.evidence
    found = judge(check_request_ids_in_flight, play(("recv", INIT_ANSWER)))
    assert found.status is Status.SKIP and "no requests" in found.detail


# --------------------------------------------------------------------------- mrtr.unique-keys


def _input_required(keys: str) -> str:
    ask = '{"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {"type": "object"}}}'
    body = ", ".join(f'"{k}": {ask}' for k in keys.split())
    return '{"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {' + body + "}}}"


def test_input_request_keys() -> None:
    assert judge(check_input_request_keys, play(("recv", _input_required("name age")))).status is Status.PASS
    found = judge(check_input_request_keys, play(("recv", _input_required("name age name"))))
    assert found.status is Status.FAIL and "'name' more than once" in found.detail and found.evidence
    # A key repeated elsewhere in the result (each request's params) is no inputRequests key.
    twice_inside = play(("recv", _input_required("a b").replace('"message": "?"', '"message": "?", "message": "!"')))
    assert judge(check_input_request_keys, twice_inside).status is Status.PASS
    found = judge(check_input_request_keys, play(("recv", INIT_ANSWER)))
    assert found.status is Status.SKIP and "InputRequiredResult" in found.detail
