"""Workload identity federation: the platform's JWT as an RFC 7523 JWT-bearer grant.

The pure parts (the form, reading and checking an assertion's claims) are
tested directly; the provider runs against an h11 fake authorization server
that records every token request, behind the protected MCP fake of
``test_oauth_flow``.  The client holds no key, so the test JWTs carry a dummy
signature: only their claims matter to it.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from helpers.h11_fake import Reply, Req, serve
from helpers.oauth_fakes import ProtectedMcp

import trimcp
from trimcp._sansio import auth as sa
from trimcp._sansio.auth import grants as sg
from trimcp.oauth import WorkloadIdentityProvider, assertion_from_file


def _trust_loopback(issuer: str) -> bool:
    """The host's ``trust_issuer``: the test's authorization server listens on another
    loopback port than its MCP server, so it is not on the server's origin."""
    return issuer.startswith("http://127.0.0.1:")


NOW = 1_800_000_000.0
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def _b64(obj: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def make_jwt(**claims: Any) -> str:
    return f"{_b64({'alg': 'ES256'})}.{_b64(claims)}.c2lnbmF0dXJl"


# ----------------------------------------------------------- pure parts


def test_jwt_bearer_form_is_rfc7523_section_2_1() -> None:
    assert sg.jwt_bearer_form(assertion="a.b.c") == {"grant_type": JWT_BEARER, "assertion": "a.b.c"}
    assert sg.jwt_bearer_form(assertion="a.b.c", scope="read", resource="https://mcp.example/mcp") == {
        "grant_type": JWT_BEARER,
        "assertion": "a.b.c",
        "scope": "read",
        "resource": "https://mcp.example/mcp",
    }
    with pytest.raises(sa.OAuthError) as info:
        sg.jwt_bearer_form(assertion="")
    assert info.value.error == "invalid_request"


def test_unverified_claims_reads_the_payload_and_refuses_garbage() -> None:
    assert sg.unverified_claims(make_jwt(sub="w", aud="x")) == {"sub": "w", "aud": "x"}
    for bad in ("not-a-jwt", "a.b", "a.!!!.c", f"x.{base64.urlsafe_b64encode(b'[1]').decode()}.y"):
        with pytest.raises(sa.OAuthError) as info:
            sg.unverified_claims(bad)
        assert info.value.error == "invalid_grant"


def test_check_assertion_expiry_and_audience() -> None:
    sg.check_assertion({"exp": NOW + 60, "aud": "https://as.example"}, now=NOW, audience="https://as.example/")
    sg.check_assertion(
        {"exp": NOW + 60, "aud": ["other", "https://as.example/"]}, now=NOW, audience="https://as.example"
    )
    sg.check_assertion({}, now=NOW, audience="https://as.example")  # nothing to judge: the server decides
    with pytest.raises(sa.OAuthError, match="expired"):
        sg.check_assertion({"exp": NOW - 1}, now=NOW)
    with pytest.raises(sa.OAuthError, match="not for the authorization server"):
        sg.check_assertion({"exp": NOW + 60, "aud": "https://wrong.example"}, now=NOW, audience="https://as.example")


# ----------------------------------------------------------- against fakes


class WifAuthServer:
    """An authorization server that accepts only the JWT-bearer grant (auth method ``none``)."""

    def __init__(self, *, reject: str | None = None) -> None:
        self.base = ""
        self.reject = reject
        self.access: dict[str, set[str]] = {}
        self.token_requests: list[dict[str, str]] = []
        self._n = itertools.count(1)

    @property
    def issuer(self) -> str:
        return self.base

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        if path == "/.well-known/oauth-authorization-server":
            await reply.json(
                {
                    "issuer": self.issuer,
                    "token_endpoint": f"{self.base}/token",
                    "grant_types_supported": [JWT_BEARER],
                    "token_endpoint_auth_methods_supported": ["none"],
                }
            )
        elif path == "/token":
            form = {k: v[0] for k, v in parse_qs(req.body.decode()).items()}
            self.token_requests.append(form)
            if self.reject:
                await reply.json({"error": self.reject, "error_description": "no"}, 400)
                return
            claims = sg.unverified_claims(form.get("assertion", ""))
            if form.get("grant_type") != JWT_BEARER or claims.get("aud") != self.issuer or claims["exp"] <= NOW:
                await reply.json({"error": "invalid_grant"}, 400)
                return
            access = f"wif-token-{next(self._n)}"
            self.access[access] = set(form.get("scope", "").split())
            await reply.json({"access_token": access, "token_type": "Bearer", "expires_in": 3600})
        else:
            await reply.text(404, "not found")


async def _run(
    auth: WifAuthServer,
    make_provider: Callable[[WifAuthServer], WorkloadIdentityProvider],
    *,
    fails: bool = False,
) -> str:
    """Connect and list the tools; with ``fails``, return the connection error's text instead."""
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)  # type: ignore[arg-type]  # duck-typed: issuer + access
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            client = trimcp.open_client(
                mcp_server.url, revision="2025-11-25", auth=make_provider(auth), timeouts=trimcp.Timeouts(connect=10)
            )
            if fails:
                with pytest.raises(trimcp.TrimcpError) as info:
                    async with client:
                        pass
                return str(info.value)
            async with client as session:
                assert [t.name for t in await session.list_tools()] == ["read_it", "write_it"]
            return f"{mcp.base}/mcp"


async def test_workload_jwt_is_the_grant() -> None:
    jwts: dict[str, str] = {}

    def provider(auth: WifAuthServer) -> WorkloadIdentityProvider:
        jwts["valid"] = make_jwt(iss="https://platform", sub="wl", aud=auth.issuer, exp=NOW + 300)
        return WorkloadIdentityProvider(
            assertion=jwts["valid"], client_id="wl-client", clock=lambda: NOW, trust_issuer=_trust_loopback
        )

    auth = WifAuthServer()
    url = await _run(auth, provider)
    assert auth.token_requests == [
        {
            "grant_type": JWT_BEARER,
            "assertion": jwts["valid"],
            "scope": "read",
            "resource": url,
            "client_id": "wl-client",
        }
    ]


async def test_expired_assertion_is_fetched_once_more() -> None:
    calls: list[int] = []

    def provider(auth: WifAuthServer) -> WorkloadIdentityProvider:
        def source() -> str:
            calls.append(1)
            exp = NOW - 60 if len(calls) == 1 else NOW + 300
            return make_jwt(aud=auth.issuer, exp=exp, n=len(calls))

        return WorkloadIdentityProvider(assertion=source, clock=lambda: NOW)

    auth = WifAuthServer()
    await _run(auth, provider)
    assert len(calls) == 2
    assert len(auth.token_requests) == 1  # the expired one never left the client
    assert sg.unverified_claims(auth.token_requests[0]["assertion"])["n"] == 2
    assert "client_id" not in auth.token_requests[0]  # no client id configured: the assertion identifies


@pytest.mark.parametrize("case", ["expired", "wrong-audience"])
async def test_unusable_assertion_is_refused_before_sending(case: str) -> None:
    calls: list[int] = []

    def provider(auth: WifAuthServer) -> WorkloadIdentityProvider:
        async def source() -> str:
            calls.append(1)
            if case == "expired":
                return make_jwt(aud=auth.issuer, exp=NOW - 60)
            return make_jwt(aud="https://wrong.example", exp=NOW + 300)

        return WorkloadIdentityProvider(assertion=source, clock=lambda: NOW)

    auth = WifAuthServer()
    message = await _run(auth, provider, fails=True)
    assert auth.token_requests == []
    assert len(calls) == (2 if case == "expired" else 1)  # one refetch for expiry, none for a wrong audience
    assert ("expired" if case == "expired" else "not for the authorization server") in message


@pytest.mark.parametrize("error", ["invalid_scope", "unauthorized_client", "invalid_grant"])
async def test_rejected_grant_is_surfaced_without_retry(error: str) -> None:
    def provider(auth: WifAuthServer) -> WorkloadIdentityProvider:
        return WorkloadIdentityProvider(assertion=make_jwt(aud=auth.issuer, exp=NOW + 300), clock=lambda: NOW)

    auth = WifAuthServer(reject=error)
    message = await _run(auth, provider, fails=True)
    assert len(auth.token_requests) == 1  # no second attempt, no other grant
    assert error in message


async def test_assertion_from_file_rereads_the_file(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first.jwt.x\n")
    read = assertion_from_file(token)
    assert await read() == "first.jwt.x"
    token.write_text("second.jwt.x")
    assert await read() == "second.jwt.x"

    def provider(auth: WifAuthServer) -> WorkloadIdentityProvider:
        token.write_text(make_jwt(aud=auth.issuer, exp=NOW + 300))
        return WorkloadIdentityProvider(assertion=read, clock=lambda: NOW)

    auth = WifAuthServer()
    await _run(auth, provider)
    assert auth.token_requests[0]["assertion"] == token.read_text()

    missing = assertion_from_file(tmp_path / "absent")
    with pytest.raises(sa.OAuthError, match="could not obtain"):
        from trimcp._trio.oauth.grants import fresh_assertion

        await fresh_assertion(missing, now=lambda: NOW, audience=None, what="workload identity assertion")
