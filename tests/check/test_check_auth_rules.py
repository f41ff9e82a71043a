"""The resource-server ``auth.*`` checks (``checks/auth_tokens.py``) against ``helpers.bad_auth``.

Each mode of ``AuthFake`` has exactly one authorization defect; the checks are
run directly (``check_auth`` on a credential-less probe, with a valid token
the fake issued as the run's credentials) and exactly the check for that
defect must fail, with evidence.  The correct fake passes them all (the
HTTPS rule is not judged on loopback), and a whole ``trimcp check`` run that
authorizes itself hands its token to ``auth.query-token``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from helpers.bad_auth import MODES, AuthFake, BadAuthServer
from helpers.cli_oauth import Servers, run_cli
from helpers.h11_fake import serve
from helpers.oauth_fakes import REDIRECT

from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.checks.auth import AUTH_CHECKS, check_auth, probe_unauthenticated
from trimcp.conformance.checks.auth_legacy import LEGACY_CHECKS
from trimcp.conformance.checks.auth_redirect import REDIRECT_CHECKS, REGISTERED_REDIRECT
from trimcp.conformance.checks.auth_tokens import FORGED_TOKEN, RULE_CHECKS, Discovered, _https
from trimcp.conformance.model import CheckResult, Level, Status
from trimcp.conformance.results import Results

ALL = (*AUTH_CHECKS, "auth.prm-resource", *RULE_CHECKS, *REDIRECT_CHECKS, *LEGACY_CHECKS)
TOKEN = "AT-test-valid"


@asynccontextmanager
async def auth_servers(mode: str = "") -> AsyncIterator[Servers]:
    auth = BadAuthServer(mode)
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        auth.access[TOKEN] = {"read"}
        mcp = AuthFake(auth, mode)
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            yield Servers(auth, mcp, mcp_server.url, mcp_server)


async def _run(mode: str, revision: str) -> dict[str, CheckResult]:
    async with auth_servers(mode) as servers:
        rec = Results(revision)
        probe = await probe_unauthenticated(servers.url, 5)
        assert probe.status == 401
        await check_auth(rec, servers.url, probe, 5, (("Authorization", f"Bearer {TOKEN}"),))
    return {r.id: r for r in rec.finish("-") if r.id in ALL}


def test_catalog_levels() -> None:
    levels = {check: CATALOG[check].level for check in RULE_CHECKS}
    assert levels["auth.invalid-token"] is Level.MUST
    assert levels["auth.no-token-refused"] is Level.MUST
    assert levels["auth.scope-challenge"] is Level.SHOULD
    assert levels["auth.invalid-token-error"] is Level.BEST


@pytest.mark.parametrize("revision", ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
async def test_correct_protected_server_passes(revision: str) -> None:
    results = await _run("", revision)
    for check, result in results.items():
        if not CATALOG[check].applies_to(revision):
            assert result.status is Status.SKIP and result.detail == f"not in {revision}"
        elif check == "auth.https-endpoints":
            assert result.status is Status.SKIP and "loopback" in result.detail, result
        else:
            assert result.status is Status.PASS, result
    refused = results["auth.no-token-refused"].detail
    assert "tools/list 401" in refused and "GET 401" in refused and "DELETE 401" in refused
    if revision != "2026-07-28":
        assert "notifications/initialized 401" in refused


_FAILS: dict[str, str | list[str]] = {
    "accepts-bad-token": "auth.invalid-token",
    "no-invalid-token-error": "auth.invalid-token-error",
    "open-list-without-token": "auth.no-token-refused",
    "open-notification": "auth.no-token-refused",
    "open-get": "auth.no-token-refused",
    "no-bearer-on-list": "auth.no-token-refused",
    "token-in-query": "auth.query-token",
    "prm-wrong-resource": ["auth.protected-resource-metadata", "auth.prm-resource"],
    "prm-origin-resource": "auth.prm-resource",
    "no-scope": "auth.scope-challenge",
    "offline-access": "auth.no-offline-access",
    "http-endpoints": "auth.https-endpoints",
    # 2025-06-18 has no well-known fallback: the challenge itself must name the metadata.
    "no-resource-metadata": "auth.www-authenticate",
    "no-registration": "auth.dcr",
    "no-cimd": "auth.cimd",
    "loose-redirect": "auth.redirect-uri",
    "prefix-redirect": "auth.redirect-uri",
    "iss-unadvertised": "auth.iss-advertised",
    "iss-errors-unadvertised": "auth.iss-advertised",
    "legacy-defaults": "auth.legacy-metadata",
    "legacy-none": ["auth.legacy-metadata", "auth.legacy-discovery"],
}
_REVISION = {
    "offline-access": "2026-07-28",
    "no-resource-metadata": "2025-06-18",
    "no-registration": "2025-06-18",
    "iss-unadvertised": "2026-07-28",
    "iss-errors-unadvertised": "2026-07-28",
    "legacy-defaults": "2025-03-26",
    "legacy-none": "2025-03-26",
}


def test_every_mode_is_tested() -> None:
    assert sorted(_FAILS) == sorted(MODES)


@pytest.mark.parametrize("mode", sorted(_FAILS))
async def test_defect_fails_its_check(mode: str) -> None:
    revision = _REVISION.get(mode, "2025-11-25")
    results = await _run(mode, revision)
    failed = sorted(r.id for r in results.values() if r.status is Status.FAIL)
    expected = _FAILS[mode]
    assert failed == sorted([expected] if isinstance(expected, str) else expected), results
    bad = results[failed[-1]]
    assert bad.evidence, bad
    text = json.dumps(bad.evidence)
    assert TOKEN not in text and TOKEN not in bad.detail  # the run's token never reaches a report
    if mode == "accepts-bad-token":
        assert FORGED_TOKEN in text and "HTTP 200" in bad.detail
    if mode == "token-in-query":
        assert "access_token=<token>" in text
    if mode == "prefix-redirect":
        assert REGISTERED_REDIRECT + "-other" in bad.detail
    if mode == "iss-errors-unadvertised":  # only the error response shows iss
        assert bad.detail.startswith("the error response carries iss"), bad.detail


def test_https_endpoints_pass_and_fail() -> None:
    ok = Results("2025-11-25")
    _https(
        ok,
        Discovered(
            prm={"authorization_servers": ["https://as.example.com"]},
            as_metadata={"issuer": "https://as.example.com", "token_endpoint": "https://as.example.com/token"},
        ),
    )
    [row] = [r for r in ok.finish("-") if r.id == "auth.https-endpoints"]
    assert row.status is Status.PASS and "3 URLs" in row.detail
    bad = Results("2025-11-25")
    _https(bad, Discovered(prm={"authorization_servers": ["http://as.example.com"]}, prm_url="http://x/prm"))
    [row] = [r for r in bad.finish("-") if r.id == "auth.https-endpoints"]
    assert row.status is Status.FAIL and "http://as.example.com" in row.detail and row.evidence


async def test_without_resource_metadata_the_well_known_url_serves_from_2025_11_25() -> None:
    results = await _run("no-resource-metadata", "2025-11-25")
    assert results["auth.www-authenticate"].status is Status.PASS
    assert "well-known fallback" in results["auth.www-authenticate"].detail


async def test_check_run_hands_its_token_to_the_query_check(tmp_path: Path) -> None:
    opts = ["--token-file", str(tmp_path / "tokens.json"), "--headless", "--redirect-uri", REDIRECT]
    async with auth_servers("token-in-query") as servers:
        run = await run_cli(["check", servers.url, "--format", "json", "--revision", "2025-11-25", *opts], tmp_path)
        checks = {c["id"]: c for c in json.loads(run.out)["checks"]}
        assert checks["auth.query-token"]["status"] == "fail", checks["auth.query-token"]
        assert checks["auth.invalid-token"]["status"] == "pass"
        servers.assert_no_secrets(run)
