"""Self-audit of the checks (issue 27, item 2): each check passes on a correct fake and fails on
a fake that breaks its sentence as a server author would (a wrong value, not only a missing field).

``AUDIT`` maps a check id to ``(family, pass mode, fail mode, status)``: the fake family (a
helper of tests/helpers and how the harness is pointed at it), the mode that is correct for
that sentence (the family's ``good`` mode, or a sibling mode where ``good`` gives the check
nothing to judge), the mode that breaks exactly that sentence, and what the check must say
of it (``fail``, or ``warn`` where the level or the sentence allows the server a choice).
Every fake runs once, all of them at the same time: the stdio fakes as subprocesses behind
the in-process harness (``run_checks`` on ``connector_for``), the HTTP fakes in-process
(``h11_fake``), the tasks fakes under ``check_tasks`` alone.

The meta-test: every catalog check is in ``AUDIT`` or in ``EXEMPT`` with the reason it is
not audited here; ``EXEMPT`` may only shrink (``MAX_EXEMPT``).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio
from helpers.bad_http import LegacyFake, StreamFake
from helpers.h11_fake import serve
from repo_paths import HELPERS

from trimcp.conformance import run_checks
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.checks.http import check_http_transport
from trimcp.conformance.checks.tasks import check_tasks
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import CheckResult, Status
from trimcp.conformance.rawhttp import RawClient
from trimcp.conformance.results import Results

HELPERS = HELPERS
F, S, ST, TL, F26, B, T, H, L = (
    "features",
    "server",
    "stateless",
    "tools",
    "features26",
    "basic",
    "tasks",
    "http",
    "sse",
)
FAIL, WARN = Status.FAIL, Status.WARN

#: check id -> (family, pass mode, fail mode, status of the fail mode)
AUDIT: dict[str, tuple[str, str, str, Status]] = {
    # server features (tests/helpers/bad_features.py, 2025-11-25)
    "pagination.invalid-cursor": (F, "good", "cursor-ignored", FAIL),
    "prompts.unknown-name": (F, "good", "prompt-unknown-code-0", WARN),
    "prompts.missing-argument": (F, "good", "prompt-missing-arg-ok", FAIL),
    "tools.call-without-name": (F, "good", "call-without-name-32603", WARN),
    "tools.input-validation": (F, "good", "wrong-types-ok", FAIL),
    "content.base64": (F, "good", "bad-base64", FAIL),
    "content.embedded-resource": (F, "good", "embedded-no-mime", FAIL),
    "logging.below-level": (F, "good", "logging-below-level", FAIL),
    "logging.invalid-level": (F, "good", "log-level-ok", FAIL),
    "completion.limits": (F, "good", "completion-too-many", FAIL),
    "completion.invalid-ref": (F, "good", "completion-unknown-ok", FAIL),
    "capabilities.notifications": (F, "good", "list-changed-undeclared", FAIL),
    "resources.uri-syntax": (F, "good", "bad-uri", FAIL),
    "resources.read-contents": (F, "good", "read-both", FAIL),
    "resources.invalid-uri": (F, "good", "invalid-uri-ok", FAIL),
    "tools.unique-names": (F, "good", "dup-names", WARN),
    "tools.name-format": (F, "good", "bad-tool-name", WARN),
    "tools.unknown-tool": (F, "good", "unknown-tool-ok", WARN),
    "resources.read": (F, "good", "read-error", FAIL),
    "resources.templates": (F, "good", "templates-error", FAIL),
    "prompts.get": (F, "good", "prompt-get-error", WARN),
    "completion.complete": (F, "good", "completion-error", FAIL),
    # handshake-era and dual-era server (tests/helpers/bad_server.py, negotiated)
    "stdio.clean-stdout": (S, "good", "garbage-stdout", FAIL),
    "jsonrpc.valid-messages": (S, "good", "garbage-stdout", FAIL),
    "lifecycle.version": (S, "good", "bad-version", FAIL),
    "tools.input-schema": (S, "good", "bad-tool-schema", FAIL),
    "schema.dialect": (F, "good", "output-schema-invalid", FAIL),
    "lifecycle.unsupported-version": (S, "good", "error-on-unknown-version", FAIL),
    "schema.messages": (S, "good", "bad-result-schema", FAIL),
    "tools.list": (S, "good", "bad-result-schema", FAIL),
    "tools.call-read-only": (S, "good", "call-internal-error", FAIL),
    "jsonrpc.ids": (S, "good", "answers-unknown-id", FAIL),
    "lifecycle.server-info": (S, "good", "bad-server-info", FAIL),
    "stateless.result-type": (S, "stateless-good", "stateless-no-result-type", FAIL),
    "stateless.unsupported-version": (S, "stateless-good", "stateless-wrong-unsupported-code", FAIL),
    "stateless.missing-envelope": (S, "stateless-good", "stateless-no-envelope-check", FAIL),
    "resources.unknown": (S, "stateless-good", "stateless-minus-32002", FAIL),
    "stateless.log-level": (S, "stateless-good", "stateless-log-without-level", FAIL),
    "mrtr.tampered-state": (S, "stateless-good", "stateless-trusts-state", WARN),
    "mrtr.input-required": (S, "stateless-good", "stateless-asks-undeclared", FAIL),
    "caching.hints": (S, "stateless-good", "stateless-no-cache-hints", FAIL),
    # a feature served undeclared: bad_server declares tools only, and refuses the rest
    "features.declared": (S, "good", "features:prompts-undeclared", FAIL),
    # modern-only server (tests/helpers/bad_stateless.py)
    "subscriptions.listen": (ST, "good", "notify-before-ack", FAIL),
    "subscriptions.ack-subset": (ST, "good", "ack-superset", WARN),
    "subscriptions.tagged": (ST, "good", "untagged-notification", FAIL),
    "meta.subscription-id": (ST, "good", "untagged-notification", FAIL),
    "subscriptions.filter": (ST, "good", "unrequested-notification", FAIL),
    "caching.scope-stable": (ST, "good", "scope-changes-between-pages", FAIL),
    "caching.interim-no-hints": (ST, "good", "input-required-hints", WARN),
    "versioning.initialize-error": (ST, "good", "initialize-error-silent", WARN),
    "stateless.partial-envelope": (ST, "good", "partial-envelope-served", FAIL),
    "mrtr.unique-keys": (ST, "good", "mrtr-duplicate-keys", FAIL),
    "lifecycle.init-first": (B, "good", "notifies-before-init", FAIL),
    "discover.extension-ids": (ST, "good", "bad-extension-id", FAIL),
    "mrtr.no-server-requests": (ST, "good", "server-request", FAIL),
    "stdio.no-requests": (ST, "good", "server-request", FAIL),
    "mrtr.missing-responses": (ST, "good", "mrtr-error-on-missing", WARN),
    "mrtr.extra-responses": (ST, "good", "mrtr-refuses-extra", WARN),
    "mrtr.invalid-responses": (ST, "good", "mrtr-takes-invalid", WARN),
    # the tool-calling policy (tests/helpers/bad_tools.py; legacy-* at 2025-06-18)
    "tools.structured-output": (TL, "good", "server:no-structured", FAIL),
    "tools.unique-names-legacy": (TL, "legacy-good", "legacy-dup-names", WARN),
    "tools.input-schema-legacy": (TL, "legacy-good", "legacy-bad-schema", FAIL),
    # stateless tool lists (tests/helpers/bad_features26.py, 2026-07-28)
    "tools.x-mcp-header": (F26, "good", "header-invalid", FAIL),
    "features.stable-lists": (F26, "good", "unstable-lists", FAIL),
    # base protocol (tests/helpers/bad_basic.py)
    "jsonrpc.parse-error": (B, "good", "wrong-parse-code", FAIL),
    "jsonrpc.invalid-request": (B, "good", "no-invalid-request", FAIL),
    "jsonrpc.invalid-params": (B, "good", "params-accepted", FAIL),
    "jsonrpc.notification-no-response": (B, "good", "answers-notification", FAIL),
    "jsonrpc.error-codes": (B, "good", "custom-reserved-code", FAIL),
    "cancellation.ignored": (B, "good", "cancel-exits", FAIL),
    "cancellation.honoured": (B, "good", "cancel-ignored", WARN),
    "progress.notifications": (B, "good", "progress-not-increasing", FAIL),
    # (bad_basic's good mode sends no _meta and no request: the pass fakes are siblings that do;
    # bad_stateless's good mode sends trace context in every result)
    "meta.key-names": (ST, "good", "basic:bad-meta-key", FAIL),
    "jsonrpc.server-request-ids": (F, "elicit-url", "basic:reused-request-id", FAIL),
    # server-to-client requests (tests/helpers/bad_features.py: good asks nothing, elicit-url and
    # sampling-tools do it right)
    "features.server-requests": (F, "elicit-url", "elicit-url-bad-url", FAIL),
    "features.sampling-tool-balance": (F, "sampling-tools", "sampling-tools-wrong-id", FAIL),
    # tasks, 2025-11-25 (tests/helpers/bad_tasks.py under check_tasks)
    "tasks.create": (T, "good", "create-not-working", FAIL),
    "tasks.task-fields": (T, "good", "no-timestamps", FAIL),
    "tasks.status-flow": (T, "good", "wrong-status-flow", FAIL),
    "tasks.result": (T, "good", "result-not-blocking", FAIL),
    "tasks.result-meta": (T, "good", "result-without-related-meta", FAIL),
    "tasks.get": (T, "good", "meta-over-param", FAIL),
    "tasks.list": (T, "good", "list-missing", FAIL),
    "tasks.errors": (T, "good", "unknown-task-wrong-code", FAIL),
    "tasks.cancel": (T, "good", "cancel-not-cancelled", FAIL),
    "tasks.cancel-terminal": (T, "good", "cancel-terminal-ok", FAIL),
    "tasks.required": (T, "good", "required-without-task-ok", FAIL),
    "tasks.forbidden": (T, "good", "forbidden-task-ok", WARN),
    "tasks.no-related-meta": (T, "good", "related-meta-on-get", WARN),
    "tasks.error-messages": (T, "good", "empty-error-message", WARN),
    "tasks.failed-message": (T, "tool-fails", "failed-no-message", WARN),
    "tasks.input-meta": (T, "good", "input-without-related-meta", FAIL),
    "tasks.requestor-capability": (T, "good", "asks-with-task", WARN),
    "tasks.not-augmentable": (T, "no-tools-call", "augments-undeclared", FAIL),
    "tasks.progress": (T, "good", "progress-other-token", FAIL),
    # Streamable HTTP, handshake era (tests/helpers/bad_http.py StreamFake, 2025-11-25)
    "http.valid-host": (H, "good", "refuses-valid-host", FAIL),
    "http.session-required": (H, "good", "no-session-required", WARN),
    "http.refused-notification": (H, "good", "accepts-unknown-notification", FAIL),
    "http.session-unique": (H, "good", "same-session-id", WARN),
    "http.get-no-response": (H, "good", "response-on-get", FAIL),
    "http.concurrent-streams": (H, "good", "response-on-get", FAIL),
    "http.event-ids": (H, "good", "duplicate-event-ids", FAIL),
    "http.sse-priming": (H, "good", "no-priming", WARN),
    "http.sse-response": (H, "good", "open-after-response", WARN),
    "http.resume": (H, "good", "replays-other-stream", FAIL),
    "http.session-id": (H, "good", "bad-session-id", FAIL),
    # HTTP+SSE (tests/helpers/bad_http.py LegacyFake, 2024-11-05)
    "sse.endpoint": (L, "good", "sse-no-endpoint", FAIL),
    "sse.exchange": (L, "good", "sse-answer-in-post", FAIL),
    "sse.origin": (L, "good", "sse-accepts-foreign-origin", FAIL),
}

#: More fail fakes for checks whose first one drops a field: the same sentence broken by a wrong
#: value, which only an oracle reading that value notices (the misses of the mutation test).
WRONG_VALUES: dict[str, tuple[str, str, Status]] = {
    "stateless.result-type": (S, "stateless-wrong-result-type", FAIL),
    "caching.hints": (S, "stateless-bad-cache-scope", FAIL),
    "subscriptions.tagged": (ST, "mis-tagged-notification", FAIL),
    "tasks.task-fields": (T, "bad-timestamps", FAIL),
    "tasks.result-meta": (T, "result-meta-other-task", FAIL),
    "tasks.result": (T, "result-differs", FAIL),
    "tasks.not-augmentable": (T, "undeclared-refuses", FAIL),
    "content.embedded-resource": (F, "embedded-both", FAIL),
    "tools.input-schema": (F, "input-schema-invalid", FAIL),
    "tools.structured-output": (TL, "wrong-structured", FAIL),
    "content.base64": (F, "bad-mime", FAIL),
    "resources.uri-syntax": (F, "bad-link-uri", FAIL),
    "meta.key-names": (ST, "bad-tracestate", FAIL),
}

_ = "no fake breaks this sentence yet: "
#: check id -> why it is not audited here.  Only ever shrinks (MAX_EXEMPT).
EXEMPT: dict[str, str] = {
    # owned elsewhere in issue 27 (false alarms), where the verdicts are being changed
    "lifecycle.connect": "issue 27.1 changes its verdict (Host allow-lists, echoing servers)",
    "lifecycle.before-initialize": "issue 27.1 changes who it applies to (stdio: the client's duty)",
    "stdio.shutdown": "its fail fake (bad_server ignore-stdin-close) takes 10 s; tests/check/test_check.py has it",
    # the handshake itself: a fail fake gets no session, so the rest of its run says nothing
    "lifecycle.initialize": "a broken initialize leaves nothing to compare (tests/check/test_check.py bad-version)",
    "lifecycle.ping": _ + "ping answered with a non-empty result",
    "discover.result": "tests/check/test_check.py has the fail fake (a discover result without supportedVersions)",
    "discover.server-info": _ + "a discover result with a serverInfo of the wrong shape",
    "stateless.server-info": _ + "a result _meta serverInfo of the wrong shape",
    "logging.set-level": _ + "logging/setLevel answered with a non-empty result",
    "jsonrpc.unknown-method": "its fail mode (unknown-method-wrong-code) also breaks discovery; tests/check/test_check.py pins it",
    "capabilities.gating": _ + "an unadvertised capability's method served",
    "resources.list": _ + "resources/list with a repeating cursor",
    "prompts.list": _ + "prompts/list answered with an error",
    "pagination.cursors": _ + "a list whose cursor repeats",
    "cancellation.server-sent": "bad_basic cancels-unknown breaks it; no fake sends a well-formed cancellation",
    "stdio.one-line-messages": "bad_stdio breaks it; tests/check/test_check_transport.py runs it behind the reference server",
    # Streamable HTTP rules without a StreamFake mode yet
    "http.origin": _ + "a foreign Origin accepted (StreamFake refuses every foreign one)",
    "http.content-type": _ + "a JSON answer with another Content-Type",
    "http.notification-202": _ + "a notification answered 200",
    "http.unknown-session": _ + "an unknown session id answered 200",
    "http.delete": _ + "DELETE answered 200 while the session lives on",
    "http.get-stream": _ + "GET answered 200 application/json",
    "http.protocol-version": _ + "an invalid MCP-Protocol-Version accepted",
    "http.method-header": "tests/check/test_check_http26.py (bad_http26) covers the 2026 header rules",
    "http.no-get": "tests/check/test_check_http26.py (bad_http26)",
    "cancellation.task-requests": "read off recordings: tests/check/test_check_progress_rules.py (the harness answers "
    "each server request before reading the next, so no live fake makes it certain)",
    "progress.server-tokens": "no good fake sends a server request with a progressToken: "
    "tests/check/test_check_progress_rules.py (and bad_basic float-progress-token)",
    "jsonrpc.request-ids-in-flight": "read off recordings: tests/check/test_check_progress_rules.py (as above)",
    "stateless.missing-capability-data": "read off recorded -32021 errors: tests/check/test_check_contract.py judges "
    "passing and failing recordings",
}
# The stateless HTTP rules (bad_http26), authorization (bad_auth: OAuth fakes with their own
# harness), the MCP Apps and tasks extensions, and the 2026 wire rules: their fakes run under
# harnesses of their own files, not wired into this table yet.
EXEMPT.update(
    {
        c: "tests/check/test_check_http26.py (bad_http26): not wired into this table yet"
        for c in CATALOG
        if c.startswith("http26.")
    }
)
EXEMPT.update(
    {
        c: "tests/check/test_check_auth_rules.py (bad_auth, OAuth fakes): not wired into this table yet"
        for c in CATALOG
        if c.startswith("auth.")
    }
)
EXEMPT.update({c: "tests/server/test_apps.py: not wired into this table yet" for c in CATALOG if c.startswith("apps.")})
EXEMPT.update(
    {
        c: "tests/check/test_check_tasks.py (the tasks extension of 2026-07-28): not wired into this table yet"
        for c in CATALOG
        if c.startswith("ext-tasks.")
    }
)
#: EXEMPT may only shrink: lower this when a check moves into AUDIT.
#: (72 -> 79: auth.token-audience, auth.expired-token, auth.insufficient-scope and
#: auth.task-binding came with fakes of their own, tests/check/test_check_auth_tokens.py;
#: http26.envelope-400 with bad_http26; three read-off checks with recorded conversations.)
MAX_EXEMPT = 80

Runner = Callable[[str], Awaitable[dict[str, CheckResult]]]


def _stdio(script: str, revision: str | None = None, **kwargs: Any) -> Runner:
    async def run(mode: str) -> dict[str, CheckResult]:
        rev = "2025-06-18" if mode.startswith("legacy-") else revision
        connect = connector_for([sys.executable, str(HELPERS / script), "--mode", mode], connect_timeout=20)
        report = await run_checks(
            connect, target=f"{script} {mode}", revision=rev, connect_timeout=20, request_timeout=20, **kwargs
        )
        return {r.id: r for r in report.results}

    return run


async def _tasks(mode: str) -> dict[str, CheckResult]:
    from helpers import bad_tasks

    rec = Results("2025-11-25")
    connect = connector_for([sys.executable, str(HELPERS / "bad_tasks.py"), "--mode", mode])
    await check_tasks(rec, connect, "2025-11-25", bad_tasks.Server(mode).capabilities(), 20.0)
    return rec.results


def _http(fake: type[Any], revision: str, transport: str) -> Runner:
    async def run(mode: str) -> dict[str, CheckResult]:
        server_fake = fake(*(() if mode == "good" else (mode,)))
        async with serve(server_fake) as server:
            server_fake.port = server.port
            url = server.url if transport != "http+sse" else f"http://127.0.0.1:{server.port}/sse"
            rec = Results(revision)
            # 20 s: the fakes share this loop with fifteen other runs' checks, and a busy loop
            # must not look like a server that never answered.
            await check_http_transport(rec, url, revision, RawClient(20.0), transport)
        return rec.results

    return run


RUNNERS: dict[str, Runner] = {
    F: _stdio("bad_features.py", "2025-11-25"),
    S: _stdio("bad_server.py"),
    ST: _stdio("bad_stateless.py"),
    TL: _stdio("bad_tools.py", "2025-11-25"),
    F26: _stdio("bad_features26.py", "2026-07-28"),
    B: _stdio("bad_basic.py"),
    T: _tasks,
    H: _http(StreamFake, "2025-11-25", "streamable-http"),
    L: _http(LegacyFake, "2024-11-05", "http+sse"),
}


def _fake(family: str, mode: str) -> tuple[str, str]:
    """A mode may name another family (``server:no-structured``): the same sentence, its fake elsewhere."""
    return tuple(mode.split(":", 1)) if ":" in mode else (family, mode)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], dict[str, CheckResult]]:
    """Every fake the table names, run once, all at the same time."""
    wanted = sorted(
        {_fake(f, m) for f, ok, bad, _ in AUDIT.values() for m in (ok, bad)}
        | {(f, m) for f, m, _ in WRONG_VALUES.values()}
    )
    found: dict[tuple[str, str], dict[str, CheckResult]] = {}

    async def one(key: tuple[str, str], limit: trio.CapacityLimiter) -> None:
        async with limit:
            found[key] = await RUNNERS[key[0]](key[1])

    async def main() -> None:
        limit = trio.CapacityLimiter(16)
        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                for key in wanted:
                    nursery.start_soon(one, key, limit)

    trio.run(main)
    return found


@pytest.mark.parametrize("check_id", sorted(AUDIT))
def test_check_passes_on_its_pass_fake_and_fails_on_its_fail_fake(
    check_id: str, outcomes: dict[tuple[str, str], dict[str, CheckResult]]
) -> None:
    family, ok, bad, status = AUDIT[check_id]
    passed = outcomes[_fake(family, ok)].get(check_id)
    assert passed is not None and passed.status is Status.PASS, (ok, passed)
    assert passed.detail, f"{check_id}: a pass says what it judged"
    failed = outcomes[_fake(family, bad)].get(check_id)
    assert failed is not None and failed.status is status, (bad, failed)


def test_every_check_is_audited_or_exempt_with_a_reason() -> None:
    assert set(AUDIT) <= set(CATALOG), set(AUDIT) - set(CATALOG)
    assert set(EXEMPT) <= set(CATALOG), set(EXEMPT) - set(CATALOG)
    assert not set(AUDIT) & set(EXEMPT), set(AUDIT) & set(EXEMPT)
    missing = set(CATALOG) - set(AUDIT) - set(EXEMPT)
    assert missing == set(), f"audit these checks (or exempt them, with a reason): {sorted(missing)}"
    assert all(reason.strip() for reason in EXEMPT.values())
    assert len(EXEMPT) <= MAX_EXEMPT, "EXEMPT only shrinks: a check left the audit"


@pytest.mark.parametrize("check_id", sorted(WRONG_VALUES))
def test_a_wrong_value_fails_like_a_missing_field(
    check_id: str, outcomes: dict[tuple[str, str], dict[str, CheckResult]]
) -> None:
    family, mode, status = WRONG_VALUES[check_id]
    failed = outcomes[(family, mode)].get(check_id)
    assert failed is not None and failed.status is status, (mode, failed)
