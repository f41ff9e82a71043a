"""Enterprise-managed authorization: identity assertion -> ID-JAG (RFC 8693) -> access token (RFC 7523).

The pure parts (the token-exchange form, the checks on its answer) are tested
directly; ``EnterpriseProvider`` runs against two h11 fakes, an enterprise
IdP that exchanges an ID token for an ID-JAG and an authorization server that
takes only the JWT-bearer grant with ``client_secret_basic``, in front of the
protected MCP fake of ``test_oauth_flow``.
"""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from helpers.h11_fake import Reply, Req, serve
from helpers.oauth_fakes import ProtectedMcp
from test_auth_wif import make_jwt

import trimcp
from trimcp._sansio import auth as sa
from trimcp._sansio.auth import grants as sg
from trimcp.oauth import EnterpriseProvider


def _trust_loopback(issuer: str) -> bool:
    """The host's ``trust_issuer``: the test's authorization server listens on another
    loopback port than its MCP server, so it is not on the server's origin."""
    return issuer.startswith("http://127.0.0.1:")


NOW = 1_800_000_000.0
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
CLIENT_ID, SECRET = "mcp-client", "mcp-secret"


# ----------------------------------------------------------- pure parts


def test_token_exchange_form() -> None:
    form = sg.token_exchange_form(
        subject_token="id.tok.en",
        audience="https://as.example/",
        resource="https://mcp.example/mcp",
        scope="read write",
    )
    assert form == {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "audience": "https://as.example/",
        "resource": "https://mcp.example/mcp",
        "scope": "read write",
        "subject_token": "id.tok.en",
        "subject_token_type": ID_TOKEN,
    }
    saml = sg.token_exchange_form(subject_token="PHNhbWw+", subject_token_type="saml2", audience="a", resource="r")
    assert saml["subject_token_type"] == "urn:ietf:params:oauth:token-type:saml2" and "scope" not in saml
    with pytest.raises(ValueError, match="unsupported subject token type"):
        sg.token_exchange_form(subject_token="x", subject_token_type="jwt", audience="a", resource="r")
    with pytest.raises(sa.OAuthError):
        sg.token_exchange_form(subject_token="", audience="a", resource="r")


def _answer(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


def test_token_exchange_response_checks() -> None:
    ok = sg.parse_token_exchange_response(
        200, _answer(access_token="the.id.jag", issued_token_type=ID_JAG, token_type="N_A", expires_in=300), now=NOW
    )
    assert ok.token == "the.id.jag" and ok.issued_token_type == ID_JAG and ok.expires_at == NOW + 300
    assert "the.id.jag" not in repr(ok)
    bad = {
        "wrong issued type": (200, _answer(access_token="t", issued_token_type="urn:x:access_token", token_type="N_A")),
        "an access token": (200, _answer(access_token="t", issued_token_type=ID_JAG, token_type="Bearer")),
        "no token": (200, _answer(issued_token_type=ID_JAG, token_type="N_A")),
        "not json": (200, b"<html>"),
    }
    for name, (status, body) in bad.items():
        with pytest.raises(sa.OAuthError) as info:
            sg.parse_token_exchange_response(status, body, now=NOW)
        assert info.value.error == "invalid_response", name
    with pytest.raises(sa.OAuthError) as info:
        sg.parse_token_exchange_response(
            400, _answer(error="invalid_target", error_description="no such audience"), now=NOW
        )
    assert info.value.error == "invalid_target" and info.value.description == "no such audience"
    with pytest.raises(sa.OAuthError) as info:
        sg.parse_token_exchange_response(200, _answer(error="access_denied"), now=NOW)
    assert info.value.error == "access_denied"


# ----------------------------------------------------------- against fakes


class Idp:
    def __init__(self, *, reject: str | None = None) -> None:
        self.base = ""
        self.reject = reject
        self.requests: list[tuple[dict[str, str], str | None]] = []

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        if path == "/.well-known/openid-configuration":
            await reply.json({"issuer": self.base, "token_endpoint": f"{self.base}/oauth2/token"})
        elif path == "/oauth2/token":
            form = {k: v[0] for k, v in parse_qs(req.body.decode()).items()}
            self.requests.append((form, req.header("authorization")))
            if self.reject:
                await reply.json({"error": self.reject}, 400)
                return
            jag = make_jwt(
                iss=self.base, aud=form["audience"], resource=form["resource"], client_id=CLIENT_ID, exp=NOW + 300
            )
            await reply.json({"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A"})
        else:
            await reply.text(404, "not found")


class JagAuthServer:
    def __init__(self) -> None:
        self.base = ""
        self.access: dict[str, set[str]] = {}
        self.token_requests: list[tuple[dict[str, str], str | None]] = []
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
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                }
            )
        elif path == "/token":
            form = {k: v[0] for k, v in parse_qs(req.body.decode()).items()}
            basic = req.header("authorization")
            self.token_requests.append((form, basic))
            access = f"jag-token-{next(self._n)}"
            self.access[access] = {"read"}
            await reply.json({"access_token": access, "token_type": "Bearer", "expires_in": 3600})
        else:
            await reply.text(404, "not found")


async def _run(idp: Idp, auth: JagAuthServer, *, by_issuer: bool = False, fails: bool = False) -> str:
    async with serve(idp) as idp_server, serve(auth) as as_server:
        idp.base = f"http://127.0.0.1:{idp_server.port}"
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)  # type: ignore[arg-type]  # duck-typed: issuer + access
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            where = {"idp_issuer": idp.base} if by_issuer else {"idp_token_endpoint": f"{idp.base}/oauth2/token"}
            provider = EnterpriseProvider(
                id_token=make_jwt(iss="idp", sub="alice", aud="idp-client", exp=NOW + 3600),
                **where,
                idp_client_id="idp-client",
                client_id=CLIENT_ID,
                client_secret=SECRET,
                clock=lambda: NOW,
                trust_issuer=_trust_loopback,
            )
            client = trimcp.open_client(
                mcp_server.url, revision="2025-11-25", auth=provider, timeouts=trimcp.Timeouts(connect=10)
            )
            if fails:
                with pytest.raises(trimcp.TrimcpError) as info:
                    async with client:
                        pass
                return str(info.value)
            async with client as session:
                assert [t.name for t in await session.list_tools()] == ["read_it", "write_it"]
            return f"{mcp.base}/mcp"


@pytest.mark.parametrize("by_issuer", [False, True])
async def test_id_token_becomes_an_id_jag_then_an_access_token(by_issuer: bool) -> None:
    idp, auth = Idp(), JagAuthServer()
    url = await _run(idp, auth, by_issuer=by_issuer)
    [(exchange, idp_auth)] = idp.requests
    assert idp_auth is None  # a public client at the IdP: client_id in the form
    assert exchange == {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "audience": auth.issuer,
        "resource": url,
        "scope": "read",
        "subject_token": exchange["subject_token"],
        "subject_token_type": ID_TOKEN,
        "client_id": "idp-client",
    }
    assert sg.unverified_claims(exchange["subject_token"])["sub"] == "alice"
    [(grant, basic)] = auth.token_requests
    assert set(grant) == {"grant_type", "assertion"} and grant["grant_type"] == JWT_BEARER
    assert sg.unverified_claims(grant["assertion"])["aud"] == auth.issuer
    assert basic == "Basic " + base64.b64encode(f"{CLIENT_ID}:{SECRET}".encode()).decode()


async def test_refused_exchange_never_reaches_the_authorization_server() -> None:
    idp, auth = Idp(reject="access_denied"), JagAuthServer()
    message = await _run(idp, auth, fails=True)
    assert len(idp.requests) == 1 and auth.token_requests == []
    assert "access_denied" in message


def test_configuration_errors_are_immediate() -> None:
    with pytest.raises(ValueError, match="idp_token_endpoint or idp_issuer"):
        EnterpriseProvider(id_token="x", client_id=CLIENT_ID)
    with pytest.raises(ValueError, match="subject token type"):
        EnterpriseProvider(id_token="x", client_id=CLIENT_ID, idp_issuer="https://idp", subject_token_type="jwt")
