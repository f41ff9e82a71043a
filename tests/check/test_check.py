"""The conformance harness (``trimcp check``) and the inspector commands.

* ``run_checks`` in-process against the reference server (memory streams);
  the reference's read-only ``slow`` tool sleeps 10 s by default, so those
  tests run on pytest-trio's autojump clock.
* ``run_checks`` in auto mode negotiates like a dual-era client: the reference
  server ends up stateless (2026-07-28); pinned to any of the five revisions it
  speaks that one, and every check of another revision is skipped "not in <rev>".
* The CLI end to end, as a subprocess, against the reference server and
  against ``tests/helpers/bad_server.py`` with one defect per ``--mode``
  (handshake-era defects, and ``stateless-*`` defects of 2026-07-28).
* Unit tests for ``values.example_arguments``, ``validate.validate_conversation``
  (per revision), the catalog's revisions and levels, and the probe helpers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
from repo_paths import REPO

from trimcp import ConnectError
from trimcp._trio.stream import MessageStream
from trimcp.conformance import run_checks
from trimcp.conformance.catalog import CATALOG, HANDSHAKE, STATELESS, core
from trimcp.conformance.checks.probes import tamper
from trimcp.conformance.model import Level, Report, Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.runner import TargetUnreachable
from trimcp.conformance.validate import validate_conversation
from trimcp.conformance.values import example_arguments
from trimcp.reference.server import build_server
from trimcp.server import Context, Server
from trimcp.testing import serve_in_process

REPO = REPO
BAD_SERVER = str(REPO / "tests" / "helpers" / "bad_server.py")
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
CLI_TIMEOUT = 60


# --------------------------------------------------------------------------- in-process


@asynccontextmanager
async def reference_connector() -> AsyncIterator[MessageStream]:
    async with serve_in_process(build_server()) as stream:
        yield stream


def _by_id(report_results: list) -> dict:  # type: ignore[type-arg]
    return {r.id: r for r in report_results}


def _assert_complete_report(report: Report) -> None:
    """Every catalog row, in order, at the level of the negotiated revision; others skipped as such."""
    assert [r.id for r in report.results] == list(CATALOG)
    for r in report.results:
        spec = CATALOG[r.id]
        assert r.level is spec.level_for(report.revision), r
        if report.revision is not None and not spec.applies_to(report.revision):
            assert r.status is Status.SKIP and r.detail == f"not in {report.revision}", r


STATELESS_PASSES = (
    "discover.result",
    "discover.server-info",
    "stateless.result-type",
    "stateless.server-info",
    "stateless.unsupported-version",
    "stateless.missing-envelope",
    "stateless.log-level",
    "mrtr.input-required",
    "mrtr.tampered-state",
    "caching.hints",
    "subscriptions.listen",
)
COMMON_PASSES = (
    "jsonrpc.valid-messages",
    "jsonrpc.unknown-method",
    "jsonrpc.ids",
    "schema.messages",
    "capabilities.notifications",
    "tools.list",
    "tools.input-schema",
    "tools.unique-names",
    "tools.unknown-tool",
    "resources.list",
    "resources.templates",
    "resources.read",
    "resources.unknown",
    "prompts.list",
    "prompts.get",
    "completion.complete",
    "pagination.cursors",
)
HANDSHAKE_PASSES = (
    "lifecycle.initialize",
    "lifecycle.version",
    "lifecycle.server-info",
    "lifecycle.unsupported-version",
    "lifecycle.ping",
    "logging.set-level",
)


async def test_run_checks_reference_in_process(autojump_clock: trio.abc.Clock) -> None:
    with trio.fail_after(300):
        report = await run_checks(reference_connector, target="reference (in-process)")
    assert report.target == "reference (in-process)"
    # Auto mode: the dual-era client probes server/discover, and the reference answers it.
    assert (report.era, report.revision) == ("stateless", "2026-07-28")
    assert report.server_info is not None and report.server_info["name"] == "trimcp-reference"
    _assert_complete_report(report)
    bad = [r for r in report.results if r.status in (Status.FAIL, Status.WARN)]
    assert bad == []
    assert report.ok and report.must_failures == []
    results = _by_id(report.results)
    for check_id in STATELESS_PASSES + COMMON_PASSES + ("tools.call-read-only", "tools.structured-output"):
        assert results[check_id].status is Status.PASS, results[check_id]
    for check_id in HANDSHAKE_PASSES:
        assert results[check_id].detail == "not in 2026-07-28"
    # Resource-not-found is a MUST (-32602) in 2026-07-28.
    assert results["resources.unknown"].level is Level.MUST
    assert results["resources.unknown"].detail == "error -32602"
    assert "refused" in results["mrtr.tampered-state"].detail
    assert "log_levels" in results["stateless.log-level"].detail
    # Not a stdio transport: the stdio checks do not apply.
    assert results["stdio.clean-stdout"].status is Status.SKIP
    assert results["stdio.shutdown"].status is Status.SKIP
    # The reference advertises tools, resources and prompts: nothing to probe for gating.
    assert results["capabilities.gating"].status is Status.SKIP
    assert report.to_json()["era"] == "stateless"


@pytest.mark.parametrize("revision", REVISIONS)
async def test_run_checks_reference_pinned(revision: str, autojump_clock: trio.abc.Clock) -> None:
    with trio.fail_after(300):
        report = await run_checks(reference_connector, target="reference", revision=revision)
    assert report.revision == revision
    assert report.era == ("stateless" if revision in STATELESS else "handshake")
    assert report.ok, report.must_failures
    _assert_complete_report(report)
    assert not [r for r in report.results if r.status in (Status.FAIL, Status.WARN)]
    results = _by_id(report.results)
    expected = COMMON_PASSES + (STATELESS_PASSES if revision in STATELESS else HANDSHAKE_PASSES)
    if revision == "2024-11-05":
        # No tool is known read-only, none is called, nothing provokes a notification.
        expected = tuple(c for c in expected if c != "capabilities.notifications")
        assert results["capabilities.notifications"].status is Status.SKIP
        assert results["capabilities.notifications"].detail == "the server sent no notifications"
    if revision < "2025-11-25":  # the schema and uniqueness rules are sentences from 2025-11-25 on
        expected = tuple(c + "-legacy" if c in ("tools.input-schema", "tools.unique-names") else c for c in expected)
    for check_id in expected:
        assert results[check_id].status is Status.PASS, results[check_id]
    if revision in HANDSHAKE:
        # Every initialize of the run was judged (handshake.check_version_same), the pinned one too.
        assert (
            f"asking {revision}" in results["lifecycle.version"].detail
            or f", {revision}" in results["lifecycle.version"].detail
        )
        assert "answered with itself whenever asked" in results["lifecycle.version"].detail
        assert results["resources.unknown"].level is Level.SHOULD
    assert results["schema.messages"].detail.endswith(f"({revision})")
    # Revision-specific rules: tool-name format from 2025-11-25, outputSchema from 2025-06-18;
    # 2024-11-05 has no tool annotations, so no tool is known to be read-only.
    assert (results["tools.name-format"].status is Status.PASS) == (revision >= "2025-11-25")
    assert (results["tools.structured-output"].status is Status.PASS) == (revision >= "2025-06-18")
    assert (results["tools.call-read-only"].status is Status.PASS) == (revision >= "2025-03-26")


def _tools_only_server() -> Server:
    server = Server("tools-only", "0.0.1")

    @server.tool(annotations={"readOnlyHint": True})
    async def echo(ctx: Context, text: str = "") -> str:
        return text

    return server


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_gating_probe_runs_on_its_own_connection(revision: str) -> None:
    """The client's session never sends a method the server did not advertise (the harness
    once widened ``Connection.peer_capabilities`` to let it through): a fresh connection does."""
    connections: list[RecordingStream] = []

    @asynccontextmanager
    async def connector() -> AsyncIterator[MessageStream]:
        async with serve_in_process(_tools_only_server()) as stream:
            recording = RecordingStream(stream)
            connections.append(recording)
            yield recording

    with trio.fail_after(60):
        report = await run_checks(connector, target="tools only", revision=revision)
    gating = _by_id(report.results)["capabilities.gating"]
    assert (gating.status, gating.detail) == (Status.PASS, "prompts/list refused with -32601")

    def methods(recording: RecordingStream) -> list[str | None]:
        return [getattr(m, "method", None) for m in recording.sent]

    main, *probes = connections
    assert "prompts/list" not in methods(main)
    # The gating probe's connection comes first (the feature probes ask prompts/list too, later).
    gating_probe = next(c for c in probes if "prompts/list" in methods(c))
    opening = ["server/discover"] if revision == "2026-07-28" else ["initialize", "notifications/initialized"]
    assert methods(gating_probe) == [*opening, "prompts/list"]


async def test_run_checks_rejects_unknown_revision() -> None:
    with pytest.raises(ValueError, match="1999-01-01"):
        await run_checks(reference_connector, target="reference", revision="1999-01-01")


async def test_run_checks_unreachable_connector() -> None:
    @asynccontextmanager
    async def nowhere() -> AsyncIterator[MessageStream]:
        raise ConnectError("no such server")
        yield  # pragma: no cover

    # Nothing could be tested: no table of skips, one error naming the cause.
    for revision in (None, "2026-07-28"):
        with trio.fail_after(10), pytest.raises(TargetUnreachable, match="no such server"):
            await run_checks(nowhere, target="nowhere", revision=revision)


# --------------------------------------------------------------------------- CLI


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp.cli", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        cwd=REPO,
        check=False,
    )


def bad(mode: str) -> list[str]:
    return ["--", sys.executable, BAD_SERVER, "--mode", mode]


def _check_json_shape(doc: dict) -> None:  # type: ignore[type-arg]
    assert {"target", "transport", "revision", "era", "checks"} <= set(doc)
    assert isinstance(doc["target"], str) and doc["target"]
    assert doc["era"] in ("handshake", "stateless", None)
    assert (doc["era"] is None) == (doc["revision"] is None)
    assert [c["id"] for c in doc["checks"]] == list(CATALOG)
    for c in doc["checks"]:
        assert {"id", "level", "status", "detail"} <= set(c)
        assert c["level"] == CATALOG[c["id"]].level_for(doc["revision"]).value
        assert c["status"] in {s.value for s in Status}
        assert isinstance(c["detail"], str)


def test_cli_check_reference_json() -> None:
    proc = cli("check", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    _check_json_shape(doc)
    assert (doc["era"], doc["revision"]) == ("stateless", "2026-07-28")
    assert "-m trimcp.reference" in doc["target"]
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert "fail" not in statuses.values() and "warn" not in statuses.values()
    # Over stdio the transport checks run too.
    assert statuses["stdio.clean-stdout"] == "pass"
    assert statuses["stdio.shutdown"] == "pass"


def test_cli_check_table_good_server() -> None:
    proc = cli("check", "--show-skipped", *bad("good"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    # A handshake-only server: the discover probe gets -32601 and the client falls back.
    assert "era:      handshake" in lines
    assert "revision: 2025-11-25" in lines
    assert "server:   bad-server-good 0.0.1" in lines
    for check_id, spec in CATALOG.items():
        rows = [line for line in lines if line.split()[:1] == [check_id]]
        assert len(rows) == 1, check_id
        assert rows[0].split()[1] == spec.level_for("2025-11-25").value
        assert rows[0].split()[2] in {"pass", "skip"}
    assert "no MUST failures" in lines[-1]


def test_cli_check_table_stateless_server() -> None:
    proc = cli("check", "--show-skipped", *bad("stateless-good"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[2:4] == ["era:      stateless", "revision: 2026-07-28"]
    rows = {line.split()[0]: line.split()[2] for line in lines if line.split()[:1] and line.split()[0] in CATALOG}
    assert set(rows) == set(CATALOG)
    assert set(rows.values()) <= {"pass", "skip"}
    for check_id in STATELESS_PASSES + ("stdio.clean-stdout", "stdio.shutdown", "capabilities.gating"):
        assert rows[check_id] == "pass", check_id
    assert proc.stderr == ""  # the client's protocol-issue warnings stay out of the report


@pytest.mark.parametrize("revision", ["2024-11-05", "auto"])
def test_cli_check_pinned_revision_json(revision: str) -> None:
    proc = cli("check", "--format", "json", "--revision", revision, *bad("good"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    _check_json_shape(doc)
    assert doc["era"] == "handshake"
    assert doc["revision"] == ("2025-11-25" if revision == "auto" else revision)


def test_cli_check_dual_era_server_pinned_handshake() -> None:
    proc = cli("check", "--format", "json", "--revision", "2025-06-18", *bad("stateless-good"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    _check_json_shape(doc)
    assert (doc["era"], doc["revision"]) == ("handshake", "2025-06-18")
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert statuses["lifecycle.version"] == "pass"
    assert statuses["discover.result"] == "skip"


def test_cli_check_stateless_pin_on_handshake_server() -> None:
    proc = cli("check", "--format", "json", "--revision", "2026-07-28", *bad("good"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    _check_json_shape(doc)
    assert doc["era"] is None and doc["revision"] is None
    checks = {c["id"]: c for c in doc["checks"]}
    assert checks["discover.result"]["status"] == "fail"
    assert "handshake era" in checks["discover.result"]["detail"]
    assert [c["id"] for c in doc["checks"] if c["status"] == "fail"] == ["discover.result"]


def test_cli_check_revision_choices() -> None:
    proc = cli("check", "--revision", "1999-01-01")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr and "2026-07-28" in proc.stderr and "auto" in proc.stderr


# mode -> (check ids expected to fail/warn, expected status, exit code)
BAD_MODES = {
    "garbage-stdout": ({"stdio.clean-stdout", "jsonrpc.valid-messages"}, "fail", 1),
    # The client refuses an unknown revision during the handshake.
    "bad-version": ({"lifecycle.initialize", "lifecycle.version"}, "fail", 1),
    "bad-tool-schema": ({"tools.input-schema"}, "fail", 1),
    "log-without-capability": ({"capabilities.notifications"}, "fail", 1),
    "error-on-unknown-version": ({"lifecycle.unsupported-version"}, "fail", 1),
    "ignore-stdin-close": ({"stdio.shutdown"}, "warn", 0),
    "bad-result-schema": ({"schema.messages"}, "fail", 1),
    "unknown-method-wrong-code": ({"jsonrpc.unknown-method"}, "fail", 1),
    "no-structured": ({"tools.structured-output"}, "fail", 1),
    # 2026-07-28 defects (the server is dual-era; auto mode speaks the stateless era to it).
    "stateless-no-result-type": ({"stateless.result-type", "schema.messages"}, "fail", 1),
    "stateless-wrong-unsupported-code": ({"stateless.unsupported-version"}, "fail", 1),
    "stateless-no-envelope-check": ({"stateless.missing-envelope"}, "fail", 1),
    "stateless-minus-32002": ({"resources.unknown"}, "fail", 1),
    "stateless-log-without-level": ({"stateless.log-level"}, "fail", 1),
    "stateless-trusts-state": ({"mrtr.tampered-state"}, "warn", 0),
    "stateless-asks-undeclared": ({"mrtr.input-required"}, "fail", 1),
    "stateless-no-cache-hints": ({"caching.hints", "schema.messages"}, "fail", 1),
}


# This server answers *every* unknown method with {}, server/discover included, which a
# dual-era client cannot take for a DiscoverResult: test its defect at a pinned revision.
PINNED = {"unknown-method-wrong-code": "2025-11-25"}
# Defects that, rightly, show in more than one check.
ALSO_FLAGGED = {
    # tools.list is best practice in the handshake era: its finding is advice (warn), not fail.
    "bad-result-schema": {"tools.list"},
    # prompts/list without the prompts capability gets {}: not refused.
    "unknown-method-wrong-code": {"capabilities.gating", "features.declared"},
    # 2026-07-28 forbids emitting the retired -32002 (basic: Error Codes).
    "stateless-minus-32002": {"jsonrpc.error-codes"},
    # A server that never reads the envelope serves a partial one too.
    "stateless-no-envelope-check": {"stateless.partial-envelope"},
}


@pytest.mark.parametrize("mode", sorted(BAD_MODES))
def test_cli_check_bad_server(mode: str) -> None:
    expected_ids, expected_status, expected_exit = BAD_MODES[mode]
    pin = ("--revision", PINNED[mode]) if mode in PINNED else ()
    proc = cli("check", "--format", "json", *pin, *bad(mode))
    assert proc.returncode == expected_exit, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    _check_json_shape(doc)
    checks = {c["id"]: c for c in doc["checks"]}
    for check_id in expected_ids:
        assert checks[check_id]["status"] == expected_status, checks[check_id]
        assert checks[check_id]["detail"]
    must_fail = [c["id"] for c in doc["checks"] if c["status"] == "fail" and c["level"] == "MUST"]
    assert bool(must_fail) == (expected_exit == 1)
    # Exactly the defect, nothing else.
    flagged = {c["id"] for c in doc["checks"] if c["status"] in ("fail", "warn")}
    assert flagged == expected_ids | ALSO_FLAGGED.get(mode, set()), flagged
    if mode.startswith("stateless-"):
        assert (doc["era"], doc["revision"]) == ("stateless", "2026-07-28")


def test_bad_server_mode_details() -> None:
    """Spot-check that the details name the defect, and unrelated checks still pass."""
    doc = json.loads(cli("check", "--format", "json", *bad("bad-version")).stdout)
    checks = {c["id"]: c for c in doc["checks"]}
    assert "2000-01-01" in checks["lifecycle.initialize"]["detail"]
    assert checks["lifecycle.version"]["detail"] == "server chose '2000-01-01'"
    assert doc["revision"] is None
    # Nothing negotiated: the rest of the tour is skipped, not failed.
    assert checks["tools.list"]["status"] == "skip"

    # In auto mode a result {} to the server/discover probe is no DiscoverResult.
    doc = json.loads(cli("check", "--format", "json", *bad("unknown-method-wrong-code")).stdout)
    checks = {c["id"]: c for c in doc["checks"]}
    assert [c["id"] for c in doc["checks"] if c["status"] not in ("skip", "pass")] == ["discover.result"]
    assert "invalid DiscoverResult" in checks["discover.result"]["detail"]

    doc = json.loads(cli("check", "--format", "json", *bad("error-on-unknown-version")).stdout)
    checks = {c["id"]: c for c in doc["checks"]}
    assert checks["lifecycle.initialize"]["status"] == "pass"
    assert checks["tools.call-read-only"]["status"] == "pass"
    assert "error" in checks["lifecycle.unsupported-version"]["detail"]


# --------------------------------------------------------------------------- inspector


def test_cli_tools_list() -> None:
    proc = cli("tools", "list")
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names[0] == "echo"
    assert {"echo", "add", "fail", "slow"} <= set(names)


def test_cli_tools_list_json() -> None:
    proc = cli("tools", "list", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    tools = json.loads(proc.stdout)
    echo = next(t for t in tools if t["name"] == "echo")
    assert echo["inputSchema"]["required"] == ["message"]
    assert echo["annotations"]["readOnlyHint"] is True


def test_cli_tools_call_echo() -> None:
    proc = cli("tools", "call", "echo", "--tool-arg", "message=hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hi\n"


def test_cli_tools_call_structured_json() -> None:
    proc = cli("tools", "call", "add", "--tool-arg", "a=2", "--tool-arg", "b=3", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["structuredContent"] == {"sum": 5}


def test_cli_tools_call_error_result() -> None:
    proc = cli("tools", "call", "fail")
    assert proc.returncode == 5
    assert "this tool always fails" in proc.stdout
    # An argument the schema does not name is refused before the call (exit 2); sent anyway
    # (--force), the server's refusal is a tool error too (isError), not a crash.
    proc = cli("tools", "call", "echo", "--tool-arg", "text=hi")
    assert proc.returncode == 2 and 'tool "echo" has no argument "text"' in proc.stderr
    proc = cli("tools", "call", "echo", "--tool-arg", "text=hi", "--force")
    assert proc.returncode == 5
    assert "message" in proc.stdout


def test_cli_resources_read() -> None:
    proc = cli("resources", "read", "test://static-text")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Static text served by the trimcp reference server.\n"


def test_cli_prompts_get() -> None:
    proc = cli("prompts", "get", "test_prompt_with_arguments", "--prompt-arg", "arg1=a", "--prompt-arg", "arg2=b")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "First argument: a; second argument: b\n"


@pytest.mark.parametrize(
    "args",
    [
        ("tools", "call"),  # missing tool name (checked after connecting)
        ("tools", "frobnicate"),  # argparse: invalid choice
        ("nonsense",),  # argparse: unknown command
        ("tools", "call", "echo", "--tool-arg", "no-equals-sign"),
    ],
    ids=["no-name", "bad-action", "bad-command", "bad-kv"],
)
def test_cli_usage_error(args: tuple[str, ...]) -> None:
    proc = cli(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip()
    assert proc.stdout == ""


def test_cli_unreachable_server() -> None:
    proc = cli("tools", "list", "--", "/nonexistent/trimcp-no-such-server")
    assert proc.returncode == 4
    assert "not found" in proc.stderr
    proc = cli("check", "--format", "json", "--", "/nonexistent/trimcp-no-such-server")
    assert proc.returncode == 4
    assert proc.stdout == "" and "not found" in proc.stderr


# --------------------------------------------------------------------------- values


def test_example_arguments_simple_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": ["x", "y"]},
            "count": {"type": "integer", "default": 7},
            "fixed": {"const": "k"},
            "low": {"type": "integer", "minimum": 3},
            "ratio": {"type": "number", "minimum": 0.5},
            "text": {"type": "string"},
            "long": {"type": "string", "minLength": 10},
            "flag": {"type": "boolean"},
            "items": {"type": "array"},
            "maybe": {"type": ["null", "integer"]},
            "optional": {"type": "string"},
        },
        "required": ["choice", "count", "fixed", "low", "ratio", "text", "long", "flag", "items", "maybe"],
    }
    assert example_arguments(schema) == {
        "choice": "x",
        "count": 7,
        "fixed": "k",
        "low": 3,
        "ratio": 0.5,
        "text": "test",
        "long": "t" * 10,
        "flag": False,
        "items": [],
        "maybe": 1,
    }


def test_example_arguments_no_required() -> None:
    assert example_arguments({"type": "object"}) == {}
    assert example_arguments({"type": "object", "properties": {"a": {"type": "string"}}}) == {}


def test_example_arguments_nested_object() -> None:
    schema = {
        "type": "object",
        "properties": {
            "outer": {
                "type": "object",
                "properties": {"n": {"type": "number"}, "skip": {"type": "string"}},
                "required": ["n"],
            }
        },
        "required": ["outer"],
    }
    assert example_arguments(schema) == {"outer": {"n": 1}}


@pytest.mark.parametrize(
    "schema",
    [
        None,
        "not a schema",
        {
            "type": "object",
            "properties": {"x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
            "required": ["x"],
        },
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}, "required": ["x"]},
        {"type": "object", "required": ["undeclared"]},
        {
            "type": "object",
            "properties": {"o": {"type": "object", "properties": {"z": {"anyOf": []}}, "required": ["z"]}},
            "required": ["o"],
        },
    ],
    ids=["none", "string", "oneOf", "ref", "undeclared", "nested-unsupported"],
)
def test_example_arguments_unsupported(schema: object) -> None:
    assert example_arguments(schema) is None


# --------------------------------------------------------------------------- validate


def _msg(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_validate_clean_conversation() -> None:
    received = [
        _msg({"jsonrpc": "2.0", "id": 1, "result": {}}),
        _msg({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}),
        _msg({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}),
        _msg({"jsonrpc": "2.0", "method": "vendor/extension", "params": {"anything": 1}}),
        _msg({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "nope"}}),
    ]
    outcome = validate_conversation(received, {1: "ping", 2: "tools/list", 3: "trimcp/x"})
    assert outcome.checked == 5
    assert outcome.invalid_jsonrpc == []
    assert outcome.schema_errors == []
    assert outcome.unknown_ids == []
    assert outcome.duplicate_ids == []


def test_validate_unknown_id() -> None:
    outcome = validate_conversation([_msg({"jsonrpc": "2.0", "id": 99, "result": {}})], {1: "ping"})
    assert len(outcome.unknown_ids) == 1
    assert "99" in outcome.unknown_ids[0]
    assert outcome.duplicate_ids == [] and outcome.schema_errors == []


def test_validate_duplicate_answer() -> None:
    answer = _msg({"jsonrpc": "2.0", "id": 1, "result": {}})
    error = _msg({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "late"}})
    outcome = validate_conversation([answer, error], {1: "ping"})
    assert len(outcome.duplicate_ids) == 1
    assert "ping" in outcome.duplicate_ids[0]
    assert outcome.unknown_ids == []


def test_validate_schema_error_path() -> None:
    received = [
        _msg(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "tools": [{"name": "ok", "inputSchema": {"type": "object"}}, {"inputSchema": {"type": "object"}}]
                },
            }
        ),
        _msg({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "no level"}}),
    ]
    outcome = validate_conversation(received, {1: "tools/list"})
    assert len(outcome.schema_errors) == 2
    assert outcome.schema_errors[0].startswith("tools/list result: ")
    assert "tools[1].name" in outcome.schema_errors[0]
    assert outcome.schema_errors[1].startswith("notifications/message params: ")
    assert "level" in outcome.schema_errors[1]


def test_validate_server_request_params() -> None:
    received = [_msg({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}})]
    outcome = validate_conversation(received, {})
    assert len(outcome.schema_errors) == 1
    assert outcome.schema_errors[0].startswith("sampling/createMessage request params: ")


def test_validate_invalid_jsonrpc() -> None:
    received = [
        b"this is not json",
        _msg({"jsonrpc": "1.0", "id": 1, "result": {}}),
        _msg({"jsonrpc": "2.0", "id": 2, "result": {}}),
    ]
    outcome = validate_conversation(received, {1: "ping", 2: "ping"})
    assert len(outcome.invalid_jsonrpc) == 2
    assert "this is not json" in outcome.invalid_jsonrpc[0]
    assert outcome.checked == 1
    assert outcome.unknown_ids == [] and outcome.duplicate_ids == []


def test_validate_per_revision() -> None:
    """The negotiated revision's tables and rules apply, not the union's."""
    discover = {"supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 0, "cacheScope": "public"}
    tools = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    received = [
        _msg({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", **discover}}),
        _msg({"jsonrpc": "2.0", "id": 2, "result": tools}),  # no resultType, no cache hints
        _msg({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}),  # a server request in 2026
        _msg({"jsonrpc": "2.0", "method": "notifications/initialized"}),  # not a 2026 notification
    ]
    sent = {1: "server/discover", 2: "tools/list"}
    outcome = validate_conversation(received, sent, "2026-07-28")
    assert outcome.server_requests == ["roots/list"]
    assert len(outcome.schema_errors) == 3
    assert outcome.schema_errors[0] == "tools/list result: result.resultType: required member missing"
    assert "roots/list does not exist in revision 2026-07-28" in outcome.schema_errors[1]
    assert "notifications/initialized does not exist" in outcome.schema_errors[2]
    # The same tools/list answer is fine in a handshake revision...
    outcome = validate_conversation(received[1:2], sent, "2025-11-25")
    assert outcome.schema_errors == []
    # ...but a task notification is not one of 2025-06-18's.
    task = {
        "taskId": "t",
        "status": "working",
        "createdAt": "2025-01-01T00:00:00Z",
        "lastUpdatedAt": "2025-01-01T00:00:00Z",
        "ttl": None,
    }
    note = _msg({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task})
    assert validate_conversation([note], {}, "2025-06-18").schema_errors == [
        "notifications/tasks/status does not exist in revision 2025-06-18"
    ]


def test_catalog_levels() -> None:
    assert len(CATALOG) == len(set(CATALOG))
    assert all(spec.level in (Level.MUST, Level.SHOULD, Level.BEST) for spec in CATALOG.values())
    # The client's sentence up to 2025-11-25; the server's SHOULD in 2026-07-28.
    assert CATALOG["stdio.shutdown"].level_for("2025-11-25") is Level.BEST
    assert CATALOG["stdio.shutdown"].level_for("2026-07-28") is Level.SHOULD
    unknown = CATALOG["resources.unknown"]
    assert unknown.level_for("2025-11-25") is Level.SHOULD
    assert unknown.level_for("2026-07-28") is Level.MUST
    assert unknown.level_for(None) is Level.SHOULD


def test_catalog_revisions() -> None:
    assert STATELESS == ("2026-07-28",)
    assert HANDSHAKE == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    eras = {spec.id: spec.eras for spec in core.SPECS}  # (the area modules' checks are tested with their area)
    for check_id in ("lifecycle.initialize", "lifecycle.ping", "lifecycle.unsupported-version", "logging.set-level"):
        assert eras[check_id] == ("handshake",), check_id
    # The first checks (catalog/core.py); the area modules test their own revisions.
    stateless_only = [c for c, e in eras.items() if e == ("stateless",) and c in {s.id for s in core.SPECS}]
    assert set(stateless_only) == {
        "discover.result",
        "discover.server-info",
        "stateless.result-type",
        "stateless.server-info",
        "stateless.unsupported-version",
        "stateless.missing-envelope",
        "stateless.log-level",
        "mrtr.input-required",
        "mrtr.tampered-state",
        "caching.hints",
        "subscriptions.listen",
        "http.method-header",
        "http.no-get",
        "stateless.partial-envelope",
        "stateless.missing-capability-data",
    }
    assert CATALOG["tools.name-format"].revisions == ("2025-11-25", "2026-07-28")
    assert CATALOG["tools.structured-output"].revisions == ("2025-06-18", "2025-11-25", "2026-07-28")
    # Every revision has checks of its own to run.
    for revision in REVISIONS:
        assert sum(spec.applies_to(revision) for spec in CATALOG.values()) >= 25


def test_tamper_changes_one_character() -> None:
    for state in ("v1.abcdef.sig", "A", "AAAA", "x" * 101):
        changed = tamper(state)
        assert changed != state and len(changed) == len(state)
        assert sum(a != b for a, b in zip(state, changed)) == 1
