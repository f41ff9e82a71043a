"""``trimcp check URL`` against an OAuth-protected server (the fakes of ``test_oauth_flow``).

``--no-auth`` reports "authorization required" and exits 3 (and remembers the
server in the auth-needed cache); with ``--headless`` authorization the run
goes through and the ``auth.*`` checks pass; an authorization server that
does not advertise PKCE S256 fails ``auth.pkce``.  The ``auth.*`` checks are
also run directly (``check_auth``) on metadata with deliberate faults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers.bad_auth import BadAuthServer
from helpers.cli_oauth import protected_servers, run_cli
from helpers.h11_fake import Reply, Req, serve
from helpers.oauth_fakes import REDIRECT

from trimcp._trio.oauth.auth_cache import AuthNeededCache
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.checks.auth import AUTH_CHECKS, check_auth, probe_unauthenticated
from trimcp.conformance.model import Status
from trimcp.conformance.results import Results


def _checks(out: str) -> dict[str, dict[str, Any]]:
    report = json.loads(out)
    return {c["id"]: c for c in report["checks"]}


# BadAuthServer (no mode) is the flow tests' AuthServer that also takes the harness's own client
# registration (auth.redirect-uri registers a client with a redirect URI of its own).
AuthServer = BadAuthServer


class NoPkceAuthServer(AuthServer):
    async def __call__(self, req: Req, reply: Reply) -> None:
        if urlsplit(req.target).path == "/.well-known/openid-configuration/tenant":
            await reply.json(
                {
                    "issuer": self.issuer,
                    "authorization_endpoint": f"{self.base}/authorize",
                    "token_endpoint": f"{self.base}/token",
                    "registration_endpoint": f"{self.base}/register",
                }
            )
            return
        await super().__call__(req, reply)


def test_catalog_has_the_auth_checks() -> None:
    for check in AUTH_CHECKS:
        assert CATALOG[check].level.value == "MUST"


async def test_no_auth_reports_authorization_required(tmp_path: Path) -> None:
    async with protected_servers(AuthServer()) as servers:
        run = await run_cli(["check", servers.url, "--no-auth"], tmp_path)
        assert run.rc == 3, run.err
        assert "authorization required" in run.err
        assert run.prompted == 0 and not servers.auth.auth_requests
        cache = AuthNeededCache(tmp_path / "cache" / "trimcp" / "auth-needed.json")
        assert await cache.is_marked(servers.url)


async def test_check_authorizes_and_auth_checks_pass(tmp_path: Path) -> None:
    opts = ["--token-file", str(tmp_path / "tokens.json"), "--headless", "--redirect-uri", REDIRECT]
    async with protected_servers(AuthServer()) as servers:
        run = await run_cli(["check", servers.url, "--format", "json", "--revision", "2025-11-25", *opts], tmp_path)
        assert run.prompted == 1, run.err
        checks = _checks(run.out)
        for check in AUTH_CHECKS:
            assert checks[check]["status"] == "pass", (check, checks[check])
        assert checks["lifecycle.initialize"]["status"] == "pass"
        assert checks["tools.list"]["status"] == "pass"
        # The raw transport checks carried the token: none of them saw a 401.
        assert not any("401" in c["detail"] for c in checks.values() if c["id"].startswith("http."))
        servers.assert_no_secrets(run)


async def test_check_without_pkce_fails_auth_pkce(tmp_path: Path) -> None:
    opts = ["--token-file", str(tmp_path / "tokens.json"), "--headless", "--redirect-uri", REDIRECT]
    async with protected_servers(NoPkceAuthServer()) as servers:
        run = await run_cli(["check", servers.url, "--format", "json", *opts], tmp_path)
        assert run.rc == 3, run.err
        checks = _checks(run.out)
        assert checks["auth.pkce"]["status"] == "fail"
        assert checks["auth.www-authenticate"]["status"] == "pass"
        assert checks["auth.authorization-server-metadata"]["status"] == "pass"
        assert not servers.auth.auth_requests  # the client refused to go on without S256


async def test_unprotected_server_skips_auth_checks(tmp_path: Path) -> None:
    from helpers.h11_fake import McpFake

    async with serve(McpFake()) as server:
        run = await run_cli(["check", server.url, "--format", "json", "--no-auth"], tmp_path)
    checks = _checks(run.out)
    for check in AUTH_CHECKS:
        assert checks[check]["status"] == "skip"
        assert "did not ask" in checks[check]["detail"]


class BadIssuerAuthServer(AuthServer):
    async def __call__(self, req: Req, reply: Reply) -> None:
        if urlsplit(req.target).path == "/.well-known/openid-configuration/tenant":
            await reply.json(
                {
                    "issuer": f"{self.base}/other",
                    "authorization_endpoint": f"{self.base}/authorize",
                    "token_endpoint": f"{self.base}/token",
                    "code_challenge_methods_supported": ["S256"],
                }
            )
            return
        await super().__call__(req, reply)


_FAULTS = {
    "none": None,
    "no-header": "auth.www-authenticate",
    "no-resource-metadata": None,  # the well-known fallback still works
    "bad-resource": "auth.protected-resource-metadata",
    "no-servers": "auth.protected-resource-metadata",
    "bad-issuer": "auth.authorization-server-metadata",
    "no-pkce": "auth.pkce",
}


@pytest.mark.parametrize("fault", sorted(_FAULTS))
async def test_auth_check_faults(fault: str) -> None:
    auth = {"bad-issuer": BadIssuerAuthServer, "no-pkce": NoPkceAuthServer}.get(fault, AuthServer)()
    async with protected_servers(auth) as servers:
        mcp = servers.mcp
        mcp.prm_header = fault != "no-resource-metadata"
        if fault == "bad-resource":
            mcp.prm_resource = "http://127.0.0.1:1/mcp"

        async def faulty(req: Req, reply: Reply) -> None:
            path = urlsplit(req.target).path
            if fault == "no-header" and path == "/mcp":
                await reply.json({"error": "unauthorized"}, 401)
            elif fault == "no-servers" and path.startswith("/.well-known/oauth-protected-resource"):
                await reply.json({"resource": servers.url, "authorization_servers": []})
            else:
                await type(mcp).__call__(mcp, req, reply)

        servers.server.handler = faulty
        rec = Results("2025-11-25")
        probe = await probe_unauthenticated(servers.url, 5)
        assert probe.status == 401
        await check_auth(rec, servers.url, probe, 5)
        results = {r.id: r for r in rec.finish("-") if r.id in AUTH_CHECKS}
        failed = [r.id for r in results.values() if r.status is Status.FAIL]
        expected = _FAULTS[fault]
        assert failed == ([expected] if expected else []), results
        if fault == "no-servers":
            assert results["auth.pkce"].status is Status.SKIP
