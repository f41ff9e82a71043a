"""Server-to-client requests judged by ``trimcp check``: URL-mode elicitation, completions, sampling with tools.

Each fake (tests/helpers/bad_features.py, 2025-11-25 JSON-RPC requests; bad_stateless.py,
2026-07-28 inputRequests) does the exchange right in one mode and breaks one sentence with a
wrong value in the others; tests/check/test_check_audit.py holds one pass/fail pair per check, this
file the rest of the modes and both eras.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import trio
from repo_paths import HELPERS

from trimcp._sansio import schema as s
from trimcp.conformance import run_checks
from trimcp.conformance.checks.sampling_balance import MAX_TOOL_USES, ToolUseSampler, reply_problem
from trimcp.conformance.checks.server_requests import (
    _elicitation_problem,
    _url_required_problem,
    _valid_url,
)
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import Status

HELPERS = HELPERS
REQUESTS, BALANCE = "features.server-requests", "features.sampling-tool-balance"
PASS, FAIL, SKIP = Status.PASS, Status.FAIL, Status.SKIP

#: (script, mode) -> (status of features.server-requests, of features.sampling-tool-balance, words in the detail)
CASES: dict[tuple[str, str], tuple[Status, Status, str]] = {
    ("bad_features.py", "good"): (SKIP, SKIP, "did not sample with tools"),
    ("bad_features.py", "elicit-url"): (PASS, SKIP, "2 sampling/elicitation requests"),
    ("bad_features.py", "elicit-url-bad-url"): (FAIL, SKIP, "'example.com/verify' is not a valid absolute URL"),
    ("bad_features.py", "elicit-complete-unknown"): (FAIL, SKIP, "names 'e2', which no earlier URL-mode"),
    ("bad_features.py", "elicit-complete-early"): (FAIL, SKIP, "names 'e1', which no earlier URL-mode"),
    ("bad_features.py", "sampling-tools"): (PASS, PASS, "1 of 1 toolUse answers replied to"),
    ("bad_features.py", "sampling-tools-wrong-id"): (PASS, FAIL, "no user message with a tool_result"),
    ("bad_features.py", "sampling-tools-mixed"): (FAIL, FAIL, "also holds text"),
    ("bad_features.py", "elicit-url-regardless"): (FAIL, SKIP, "mode 'url', which the client did not declare"),
    ("bad_features.py", "sampling-tools-regardless"): (FAIL, PASS, "did not declare sampling.tools"),
    ("bad_stateless.py", "mrtr-url-regardless"): (FAIL, SKIP, "mode 'url', which the client did not declare"),
    ("bad_stateless.py", "mrtr-url-elicit"): (PASS, SKIP, "2 sampling/elicitation requests"),
    ("bad_stateless.py", "mrtr-url-bad-url"): (FAIL, SKIP, "'example.com/verify' is not a valid absolute URL"),
    ("bad_stateless.py", "mrtr-sampling-tools"): (PASS, PASS, "1 of 1 toolUse answers replied to"),
    ("bad_stateless.py", "mrtr-sampling-wrong-id"): (PASS, FAIL, "no user message with a tool_result"),
}


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}

    async def one(script: str, mode: str) -> None:
        connect = connector_for([sys.executable, str(HELPERS / script), "--mode", mode], connect_timeout=20)
        report = await run_checks(connect, target=f"{script} {mode}", connect_timeout=20, request_timeout=20)
        found[script, mode] = {r.id: r for r in report.results}

    async def main() -> None:
        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                for script, mode in CASES:
                    nursery.start_soon(one, script, mode)

    trio.run(main)
    return found


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: f"{c[0]}:{c[1]}")
def test_each_mode_gets_its_verdicts(case: tuple[str, str], outcomes: dict[tuple[str, str], dict[str, Any]]) -> None:
    requests, balance, words = CASES[case]
    got = outcomes[case]
    assert got[REQUESTS].status is requests, got[REQUESTS]
    assert got[BALANCE].status is balance, got[BALANCE]
    assert any(words in got[c].detail for c in (REQUESTS, BALANCE)), (got[REQUESTS], got[BALANCE])


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/verify?session=e1",
        "http://[::1]:8080/p",
        "HTTPS://EX.COM",
        "https://ex.com/ü",
        "urn:isbn:0451450523",
        "mailto:someone@example.com",
        "file:///tmp/x",
    ],
)
def test_valid_absolute_urls(url: str) -> None:
    assert _valid_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "example.com/verify",
        "/verify",
        "https://exa mple.com/",
        "http://h:xx/",
        "http://h:99999/",
        "https:",
        "http:///x",
        "https://ex.com/a|b",
        "https://ex.com/<b>",
        42,
        None,
        "",
    ],
)
def test_invalid_urls(url: Any) -> None:
    assert not _valid_url(url)


def test_url_mode_needs_the_declared_mode_message_and_id() -> None:
    ok = {"mode": "url", "message": "m", "url": "https://example.com/", "elicitationId": "e1"}
    both: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
    assert _elicitation_problem(ok, both) is None
    assert "did not declare" in str(_elicitation_problem(ok, {"elicitation": {}}))
    assert "no message" in str(_elicitation_problem({**ok, "message": 7}, both))
    assert "elicitationId" in str(_elicitation_problem({**ok, "elicitationId": 42}, both))
    # Without mode "url" it is a form-mode request, which has no requestedSchema.
    assert "requestedSchema" in str(_elicitation_problem({k: v for k, v in ok.items() if k != "mode"}, both))


def _results(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "a", "name": "t", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "t", "input": {}},
                ],
            },
            {"role": "user", "content": list(blocks)},
        ]
    }


def test_reply_problem_reads_every_tool_use_id() -> None:
    a, b = ({"type": "tool_result", "toolUseId": i, "content": []} for i in "ab")
    assert reply_problem(_results(a, b), ["a", "b"]) is None
    assert "'b'" in str(reply_problem(_results(a), ["a", "b"]))
    assert "also holds text" in str(reply_problem(_results(a, b, {"type": "text", "text": "x"}), ["a", "b"]))
    assert "no user message" in str(reply_problem(_results({**a, "toolUseId": "c"}), ["a", "b"]))
    assert "no user message" in str(reply_problem({"messages": "nope"}, ["a"]))


def _params(**extra: Any) -> s.CreateMessageRequestParams:
    obj = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10, **extra}
    params: s.CreateMessageRequestParams = s.from_wire(s.CreateMessageRequestParams, obj)
    return params


async def test_the_sampler_uses_an_offered_tool_a_bounded_number_of_times() -> None:
    sampler = ToolUseSampler()
    tools = [{"name": "lookup", "inputSchema": {"type": "object"}}]
    assert "stopReason" not in await sampler(_params())  # no tools offered: a text answer
    assert "stopReason" not in await sampler(_params(tools=tools, toolChoice={"mode": "none"}))
    first = await sampler(_params(tools=tools))
    assert first["stopReason"] == "toolUse" and first["content"][0]["name"] == "lookup"
    for _ in range(MAX_TOOL_USES + 1):
        await sampler(_params(tools=tools))
    assert sampler.uses == MAX_TOOL_USES


def test_the_url_required_error_lists_url_mode_elicitations_with_valid_urls() -> None:
    item = {"mode": "url", "message": "m", "url": "https://example.com/", "elicitationId": "e1"}
    assert _url_required_problem({"elicitations": [item]}) is None
    assert "not a valid absolute URL" in str(_url_required_problem({"elicitations": [{**item, "url": "/connect"}]}))
    assert "no message" in str(_url_required_problem({"elicitations": [{**item, "message": None}]}))
    assert "not URL mode" in str(_url_required_problem({"elicitations": [{**item, "mode": "form"}]}))
    assert "no list" in str(_url_required_problem({"elicitations": []}))
