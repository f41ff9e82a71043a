"""The ``auth.*`` checks on tokens the user hands over (``checks/auth_binding.py``) against ``helpers.bad_tokens``.

Each mode of ``TokenFake`` has one defect, and exactly the check for it must
fail, with evidence that shows no token; the correct fake passes all four.  A
token not given makes its check ``skip`` "needs --auth-token-...", never a
pass; a whole ``trimcp check`` run reads the tokens from ``env:VAR`` and
``@FILE`` and shows none of them in any format.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from helpers.bad_auth import BadAuthServer
from helpers.bad_tokens import TOKEN_MODES, TokenFake
from helpers.cli_oauth import Servers, run_cli
from helpers.h11_fake import serve

from trimcp.cli.check import _auth_tokens
from trimcp.cli.command_line import UsageError
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.checks.auth import check_auth, probe_unauthenticated
from trimcp.conformance.checks.auth_binding import BINDING_CHECKS, AuthTokens
from trimcp.conformance.model import CheckResult, Level, Status
from trimcp.conformance.results import Results

EVERY = AuthTokens(
    valid="AT-alice",
    other_resource="AT-other-aud",
    expired="AT-expired",
    insufficient_scope="AT-narrow",
    second="AT-bob",
)
SECRETS = ("AT-alice", "AT-other-aud", "AT-expired", "AT-narrow", "AT-bob")


@asynccontextmanager
async def token_servers(mode: str = "") -> AsyncIterator[Servers]:
    auth = BadAuthServer()
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = TokenFake(auth, mode)
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            yield Servers(auth, mcp, mcp_server.url, mcp_server)


async def _run(mode: str, tokens: AuthTokens, own: tuple[tuple[str, str], ...] = ()) -> dict[str, CheckResult]:
    async with token_servers(mode) as servers:
        rec = Results("2025-11-25")
        probe = await probe_unauthenticated(servers.url, 5)
        assert probe.status == 401
        await check_auth(rec, servers.url, probe, 5, own, tokens)
    return {r.id: r for r in rec.finish("-") if r.id in BINDING_CHECKS}


def _clean(result: CheckResult) -> None:
    text = result.detail + json.dumps(result.evidence)
    for secret in SECRETS:
        assert secret not in text, (secret, result)


def test_catalog_levels() -> None:
    assert CATALOG["auth.token-audience"].level is Level.MUST
    assert CATALOG["auth.expired-token"].level is Level.MUST
    # "the server SHOULD respond with: HTTP 403 Forbidden ..." (Runtime Insufficient Scope Errors)
    assert CATALOG["auth.insufficient-scope"].level is Level.SHOULD
    assert CATALOG["auth.task-binding"].level is Level.MUST
    assert CATALOG["auth.task-binding"].revisions == ("2025-11-25",)


async def test_correct_server_passes_every_token_check() -> None:
    results = await _run("", EVERY)
    assert sorted(results) == sorted(BINDING_CHECKS)
    for result in results.values():
        assert result.status is Status.PASS, result
        _clean(result)
    assert "401" in results["auth.token-audience"].detail
    assert 'error="insufficient_scope"' in results["auth.insufficient-scope"].detail
    bound = results["auth.task-binding"].detail
    assert "tasks/get refused" in bound and "tasks/list without it" in bound
    assert "tasks/cancel refused (JSON-RPC error -32602) while the task was working" in bound
    assert "tasks/result refused" in bound


_FAILS = {
    "accepts-any-audience": "auth.token-audience",
    "accepts-expired": "auth.expired-token",
    "scope-401": "auth.insufficient-scope",
    "tasks-shared": "auth.task-binding",
    "list-shared": "auth.task-binding",
    "result-shared": "auth.task-binding",
    "cancel-then-refuse": "auth.task-binding",
}


def test_every_mode_is_tested() -> None:
    assert sorted(_FAILS) == sorted(TOKEN_MODES)


@pytest.mark.parametrize("mode", sorted(_FAILS))
async def test_defect_fails_its_check(mode: str) -> None:
    results = await _run(mode, EVERY)
    failed = sorted(r.id for r in results.values() if r.status is Status.FAIL)
    assert failed == [_FAILS[mode]], results
    bad = results[_FAILS[mode]]
    assert bad.evidence, bad
    for result in results.values():
        _clean(result)
    shown = json.dumps(bad.evidence)
    assert "Bearer <" in shown  # the Authorization is shown by its label
    if mode == "scope-401":
        assert "HTTP 401, expected 403" in bad.detail
    if mode == "tasks-shared":
        assert "tasks/get" in bad.detail
    if mode == "list-shared":
        assert "tasks/list" in bad.detail
    if mode == "result-shared":  # asked once the owner's task has ended: no wait to excuse it
        assert "from tasks/result" in bad.detail
    if mode == "cancel-then-refuse":
        assert "yet identity A's task is now cancelled" in bad.detail


@pytest.mark.parametrize(
    ("field", "option"),
    [
        ("other_resource", "--auth-token-other-resource"),
        ("expired", "--auth-token-expired"),
        ("insufficient_scope", "--auth-token-insufficient-scope"),
        ("second", "--auth-token-second"),
    ],
)
async def test_absent_token_skips_its_check(field: str, option: str) -> None:
    given = {f: getattr(EVERY, f) for f in ("valid", "other_resource", "expired", "insufficient_scope", "second")}
    del given[field]
    results = await _run("", AuthTokens(**given))
    for result in results.values():
        if result.status is Status.SKIP:
            assert result.detail == f"needs {option}", result
        else:
            assert result.status is Status.PASS, result
    assert sum(r.status is Status.SKIP for r in results.values()) == 1


async def test_without_a_valid_token_nothing_is_judged() -> None:
    for tokens in (AuthTokens(expired="AT-expired"), AuthTokens(valid="AT-nobody", expired="AT-expired")):
        results = await _run("accepts-expired", tokens)
        assert all(r.status is Status.SKIP for r in results.values()), results
    # The run's own OAuth token serves as the valid one.
    results = await _run("", AuthTokens(expired="AT-expired"), (("Authorization", "Bearer AT-alice"),))
    assert results["auth.expired-token"].status is Status.PASS


async def test_a_token_that_lacks_nothing_is_not_judged() -> None:
    results = await _run("", AuthTokens(valid="AT-alice", insufficient_scope="AT-bob"))
    row = results["auth.insufficient-scope"]
    assert row.status is Status.SKIP and "accepted" in row.detail, row


def test_token_values_from_env_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("T_SECOND", "AT-bob\n")
    (tmp_path / "tok").write_text("AT-expired\n")
    ns = argparse.Namespace(
        auth_token_valid="AT-alice", auth_token_second="env:T_SECOND", auth_token_expired=f"@{tmp_path / 'tok'}"
    )
    tokens = _auth_tokens(ns)
    assert (tokens.valid, tokens.second, tokens.expired, tokens.other_resource) == (
        "AT-alice",
        "AT-bob",
        "AT-expired",
        None,
    )
    assert "AT-" not in repr(tokens)
    with pytest.raises(UsageError, match="T_UNSET"):
        _auth_tokens(argparse.Namespace(auth_token_valid="env:T_UNSET"))
    with pytest.raises(UsageError, match="cannot read"):
        _auth_tokens(argparse.Namespace(auth_token_expired=f"@{tmp_path / 'missing'}"))


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "markdown"])
async def test_check_run_hides_every_token(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("T_VALID", "AT-alice")
    (tmp_path / "second").write_text("AT-bob")
    opts = [
        "--auth-token",
        "env:T_VALID",
        "--auth-token-second",
        f"@{tmp_path / 'second'}",
        "--auth-token-other-resource",
        "AT-other-aud",
        "--auth-token-expired",
        "AT-expired",
        "--auth-token-insufficient-scope",
        "AT-narrow",
    ]
    async with token_servers("tasks-shared") as servers:
        run = await run_cli(["check", servers.url, "--format", fmt, "--revision", "2025-11-25", *opts], tmp_path)
    assert run.out, run.err
    for secret in SECRETS:
        assert secret not in run.out and secret not in run.err, (secret, fmt)
    assert "auth.task-binding" in run.out
    if fmt == "json":
        checks = {c["id"]: c for c in json.loads(run.out)["checks"]}
        assert checks["lifecycle.initialize"]["status"] == "pass"  # the run was authorized by --auth-token
        assert checks["auth.task-binding"]["status"] == "fail"
        for check in ("auth.token-audience", "auth.expired-token", "auth.insufficient-scope", "auth.query-token"):
            assert checks[check]["status"] == "pass", checks[check]


async def test_config_run_takes_the_tokens_for_the_one_server_named(tmp_path: Path) -> None:
    """``check --config FILE NAME --auth-token...``: the tokens go to that server (they were
    dropped before); for the whole file they would reach servers they were not issued for."""
    opts = ["--auth-token", "AT-alice", "--auth-token-expired", "AT-expired"]
    async with token_servers("tasks-shared") as servers:
        config = tmp_path / "servers.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "guarded": {"type": "http", "url": servers.url},
                        "other": {"command": "true"},
                    }
                }
            )
        )
        run = await run_cli(
            ["check", "--config", str(config), "guarded", "--format", "json", "--revision", "2025-11-25", *opts],
            tmp_path,
        )
        whole = await run_cli(["check", "--config", str(config), *opts], tmp_path)
    checks = {c["id"]: c for c in json.loads(run.out)["checks"]}
    assert checks["lifecycle.initialize"]["status"] == "pass", run.err
    assert checks["auth.expired-token"]["status"] == "pass", checks["auth.expired-token"]
    assert "AT-alice" not in run.out and "AT-expired" not in run.out
    assert whole.rc == 2 and "one server's tokens" in whole.err, whole
