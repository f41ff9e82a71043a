"""The whole headless OAuth flow against a local authorization server and a protected MCP server.

Both servers are h11 fakes on 127.0.0.1 (``tests/helpers/oauth_fakes.py``): the
authorization server's issuer has a path (so discovery must walk the
path-aware RFC 8414 / OIDC order), the MCP server answers 401 without a valid
bearer token and 403 ``insufficient_scope`` for a tool needing ``write``.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from helpers.h11_fake import Reply, Req, serve
from helpers.oauth_fakes import REDIRECT, AuthServer, ProtectedMcp

import trimcp
from trimcp.oauth import OAuthProvider


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def headless(url: str) -> str:
    async with httpx.AsyncClient(follow_redirects=False) as http:
        response = await http.get(url)
    assert response.status_code == 302
    return response.headers["location"]


def _random() -> Any:
    counter = itertools.count()

    def rnd(n: int) -> bytes:
        return bytes([next(counter) % 256]) * n

    return rnd


def _no_secrets(caplog: pytest.LogCaptureFixture, auth: AuthServer, extra: str = "") -> None:
    secrets = [
        *auth.access,
        *auth.refresh,
        *auth.clients.values(),
        *(f.get("code_verifier", "") for f in auth.token_requests),
    ]
    secrets = [s for s in secrets if s]
    for record in caplog.records:
        text = record.getMessage() + (logging.Formatter().formatException(record.exc_info) if record.exc_info else "")
        for s in secrets:
            assert s not in text, f"secret leaked in log record {record.name}"
    for s in secrets:
        assert s not in extra


async def test_full_flow_discovery_pkce_refresh_step_up(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    auth = AuthServer()
    clock = Clock()
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            provider = OAuthProvider(
                authorize=headless, redirect_uri=REDIRECT, random=_random(), clock=clock, revision="2025-11-25"
            )
            async with trimcp.open_client(mcp_server.url, revision="2025-11-25", auth=provider) as session:
                assert [t.name for t in await session.list_tools()] == ["read_it", "write_it"]
                # Discovery walked the path-aware order: RFC 8414 form first (404), then OIDC.
                as_paths = [urlsplit(r.target).path for r in as_server.requests if r.method == "GET"]
                assert as_paths[:2] == [
                    "/.well-known/oauth-authorization-server/tenant",
                    "/.well-known/openid-configuration/tenant",
                ]
                (first,) = auth.auth_requests
                assert first["code_challenge_method"] == "S256" and first["resource"] == mcp_server.url
                assert first["scope"] == "read" and first["state"]
                assert auth.token_requests[0]["resource"] == mcp_server.url

                # Step-up: 403 insufficient_scope -> re-authorize with the wider scope, retry.
                await session.call_tool("write_it", {})
                assert auth.auth_requests[-1]["scope"] == "read write"

                # Expiry: a stale token is refreshed before use, and the refresh token rotates.
                before = dict(auth.refresh)
                clock.now += 7200
                await session.call_tool("read_it", {})
                assert auth.token_requests[-1]["grant_type"] == "refresh_token"
                assert auth.token_requests[-1]["refresh_token"] in before
                assert auth.token_requests[-1]["refresh_token"] not in auth.refresh  # rotated

                # A revoked access token (401) with a refresh token: refresh, then retry.
                auth.access.clear()
                await session.call_tool("read_it", {})
                assert auth.token_requests[-1]["grant_type"] == "refresh_token"
                assert len(auth.auth_requests) == 2
    _no_secrets(caplog, auth)


async def test_discovery_without_header_and_bad_iss(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    auth = AuthServer()
    auth.wrong_iss = True
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        mcp.prm_header = False
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            provider = OAuthProvider(authorize=headless, redirect_uri=REDIRECT)
            with pytest.raises(trimcp.TrimcpError) as info:
                async with trimcp.open_client(
                    mcp_server.url, revision="2025-11-25", auth=provider, timeouts=trimcp.Timeouts(connect=10)
                ):
                    pass
            assert "/.well-known/oauth-protected-resource/mcp" in mcp.seen[1]
            assert not auth.token_requests  # the code was never redeemed
    _no_secrets(caplog, auth, extra=str(info.value) + repr(info.value))


async def test_step_up_is_bounded_and_failed_refresh_reauthorizes(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    auth = AuthServer()
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            clock = Clock()
            provider = OAuthProvider(authorize=headless, redirect_uri=REDIRECT, clock=clock)
            async with trimcp.open_client(mcp_server.url, revision="2025-11-25", auth=provider) as session:
                # An expired token whose refresh token the server forgot (it answers the
                # non-standard invalid_refresh_token): the client authorizes afresh.
                auth.refresh.clear()
                clock.now += 7200
                await session.call_tool("read_it", {})
                assert auth.token_requests[-2]["grant_type"] == "refresh_token"
                assert auth.token_requests[-1]["grant_type"] == "authorization_code"
                assert len(auth.auth_requests) == 2
                # The server never grants "write": the client gives up after max_attempts rounds.
                mcp.auth.access.clear()
                real_call = ProtectedMcp.__call__

                async def stingy(self: ProtectedMcp, req: Req, reply: Reply) -> None:
                    msg = req.json if req.method == "POST" and req.body else None
                    if isinstance(msg, dict) and msg.get("method") == "tools/call":
                        await reply.json(
                            {"error": "forbidden"},
                            403,
                            headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="read admin"')],
                        )
                        return
                    await real_call(self, req, reply)

                mcp_server.handler = stingy.__get__(mcp)
                before = len(auth.auth_requests)
                with pytest.raises(trimcp.TrimcpError) as info:
                    await session.call_tool("write_it", {})
                assert 1 <= len(auth.auth_requests) - before <= provider.max_attempts
    _no_secrets(caplog, auth, extra=str(info.value))


async def test_resource_mismatch_aborts() -> None:
    auth = AuthServer()
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            mcp.prm_resource = "http://127.0.0.1:1/mcp"  # the PRM names another resource
            provider = OAuthProvider(authorize=headless, redirect_uri=REDIRECT)
            with pytest.raises(trimcp.TrimcpError) as info:
                async with trimcp.open_client(
                    mcp_server.url, revision="2025-11-25", auth=provider, timeouts=trimcp.Timeouts(connect=10)
                ):
                    pass
            assert "not for" in str(info.value)
            assert not auth.auth_requests
