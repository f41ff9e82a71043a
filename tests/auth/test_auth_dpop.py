"""DPoP (RFC 9449): proofs, token binding and server-supplied nonces.

The pure pieces (``trimcp._sansio.auth.dpop``) are checked directly; proofs
are verified independently with PyJWT against the public JWK they carry.
The whole flow runs against h11 fakes: an authorization server that binds
the token to the proof's key (and may demand a nonce, RFC 9449 section 8)
and an MCP server that checks scheme, proof, ``ath`` and binding on every
request (and may demand a nonce, section 9).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest
from helpers.h11_fake import McpFake, Reply, Req, serve

import trimcp
from trimcp._sansio import auth as sa
from trimcp._trio.oauth.jwt import DpopKey
from trimcp.oauth import OAuthProvider

REDIRECT = "http://127.0.0.1:1/callback"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 thumbprint of an EC key, computed here independently."""
    canon = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(canon.encode()).digest())


def verify(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, claims) of a proof whose signature verifies with its own public JWK."""
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"]).key
    claims = jwt.decode(proof, key, algorithms=["ES256"], options={"verify_aud": False})
    return header, claims


# -- sans-IO ----------------------------------------------------------------------------


def test_proof_header_claims_and_signature() -> None:
    key = DpopKey.generate()
    claims = sa.proof_claims(
        method="POST",
        url="https://AS.example:443/token?x=1#frag",
        now=1700000000.7,
        jti=b"\x01" * 16,
        nonce="n-1",
        access_token="tok",
    )
    proof = sa.sign_proof(claims, alg=key.alg, jwk=key.jwk, sign=key.sign)
    header, got = verify(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert set(header["jwk"]) == {"kty", "crv", "x", "y"} and header["jwk"]["crv"] == "P-256"
    assert got == {
        "jti": _b64(b"\x01" * 16),
        "htm": "POST",
        "htu": "https://as.example/token",
        "iat": 1700000000,
        "nonce": "n-1",
        "ath": _b64(hashlib.sha256(b"tok").digest()),
    }
    # Tampering with the claims breaks the signature.
    h, _, s = proof.split(".")
    forged = _b64(json.dumps({**got, "htm": "GET"}).encode())
    with pytest.raises(jwt.InvalidSignatureError):
        verify(f"{h}.{forged}.{s}")


def test_proof_without_token_or_nonce_has_neither_claim() -> None:
    claims = sa.proof_claims(method="GET", url="http://h/mcp", now=1, jti=bytes(16))
    assert set(claims) == {"jti", "htm", "htu", "iat"}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://Example.COM/a/b?q=1#f", "https://example.com/a/b"),
        ("http://localhost:80/mcp", "http://localhost/mcp"),
        ("http://localhost:3000/mcp", "http://localhost:3000/mcp"),
        ("https://h:443", "https://h/"),
        ("http://[::1]:8080/x?y", "http://[::1]:8080/x"),
    ],
)
def test_htu_normalisation(url: str, expected: str) -> None:
    assert sa.htu(url) == expected


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="http"):
        sa.htu("ftp://h/x")
    with pytest.raises(ValueError, match="16 random bytes"):
        sa.proof_claims(method="POST", url="http://h/", now=1, jti=b"short")
    with pytest.raises(ValueError, match="upper-case"):
        sa.proof_claims(method="post", url="http://h/", now=1, jti=bytes(16))
    with pytest.raises(ValueError, match="public JWK"):
        sa.sign_proof({}, alg="ES256", jwk={"kty": "EC", "d": "secret"}, sign=lambda b: b"")


def test_nonce_parsing_and_retry_rule() -> None:
    assert sa.response_nonce([("DPoP-Nonce", " abc ")]) == "abc"
    assert sa.response_nonce([("dpop-nonce", 'bad"quote')]) is None
    assert sa.response_nonce([("x", "y")]) is None
    www = ['DPoP error="use_dpop_nonce", resource_metadata="http://h/prm"']
    assert sa.is_nonce_challenge(401, www)
    assert not sa.is_nonce_challenge(403, www)
    assert not sa.is_nonce_challenge(401, ['Bearer error="use_dpop_nonce"'])
    assert sa.dpop_challenge(www) is not None and sa.dpop_challenge(www).resource_metadata == "http://h/prm"
    retry = sa.should_retry_with_nonce
    assert retry(error="use_dpop_nonce", nonce="n", sent_nonce=None, retried=False)
    assert not retry(error="use_dpop_nonce", nonce="n", sent_nonce=None, retried=True)  # once only
    assert not retry(error="use_dpop_nonce", nonce="n", sent_nonce="n", retried=False)  # nothing new
    assert not retry(error="use_dpop_nonce", nonce=None, sent_nonce=None, retried=False)
    assert not retry(error="invalid_grant", nonce="n", sent_nonce=None, retried=False)
    nonces = sa.Nonces()
    nonces.remember("http://a:1/token", "n1")
    assert nonces.get("HTTP://a:1/other") == "n1" and nonces.get("http://a:2/token") is None


def test_metadata_and_token_type() -> None:
    assert sa.supports_dpop({"dpop_signing_alg_values_supported": ["RS256", "ES256"]})
    assert not sa.supports_dpop({"dpop_signing_alg_values_supported": ["RS256"]})
    assert not sa.supports_dpop({})
    body = b'{"access_token": "x", "token_type": "dpop"}'
    assert sa.parse_token_response(200, body, now=0, dpop=True).token_type == "DPoP"
    with pytest.raises(sa.OAuthError, match="not Bearer"):
        sa.parse_token_response(200, body, now=0)  # not asked for: refused
    assert sa.authorization_value("DPoP", "t") == "DPoP t"
    assert sa.authorization_value("Bearer", "t") == "Bearer t"


def test_key_round_trips_through_pem() -> None:
    key = DpopKey.generate()
    again = DpopKey.from_pem(key.to_pem())
    assert again.jwk == key.jwk
    assert "d" not in key.jwk and key.to_pem() not in repr(key)


# -- the flow against fakes -------------------------------------------------------------


class DpopAuthServer:
    """Issues DPoP tokens bound (``cnf.jkt``-style, kept here) to the proof's key."""

    def __init__(self) -> None:
        self.base = ""
        self.codes: dict[str, dict[str, str]] = {}
        self.bound: dict[str, str] = {}  # access token -> key thumbprint
        self.advertise = True
        self.nonce_mode = "none"  # "none" | "once" (section 8 demand, then accept) | "always"
        self.nonce = "as-nonce-1"
        self.proofs: list[dict[str, Any]] = []
        self.token_posts = 0
        self._n = itertools.count(1)

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        if path == "/.well-known/oauth-authorization-server":
            meta = {
                "issuer": self.base,
                "authorization_endpoint": f"{self.base}/authorize",
                "token_endpoint": f"{self.base}/token",
                "registration_endpoint": f"{self.base}/register",
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }
            if self.advertise:
                meta["dpop_signing_alg_values_supported"] = ["ES256"]
            await reply.json(meta)
        elif path == "/register":
            await reply.json({"client_id": f"c{next(self._n)}", "token_endpoint_auth_method": "none"}, 201)
        elif path == "/authorize":
            q = {k: v[0] for k, v in parse_qs(urlsplit(req.target).query).items()}
            code = f"code-{next(self._n)}"
            self.codes[code] = q
            await reply.empty(
                302, headers=[("Location", q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]}))]
            )
        elif path == "/token":
            self.token_posts += 1
            proof = req.header("dpop")
            access = f"AT-{next(self._n)}"
            if proof is None:
                await reply.json({"access_token": access, "token_type": "Bearer", "expires_in": 3600})
                return
            header, claims = verify(proof)
            self.proofs.append(claims)
            assert claims["htm"] == "POST" and claims["htu"] == f"{self.base}/token" and "ath" not in claims
            if self.nonce_mode == "always" or (self.nonce_mode == "once" and claims.get("nonce") != self.nonce):
                if self.nonce_mode == "always":
                    self.nonce = f"as-nonce-{self.token_posts}"
                await reply.json(
                    {"error": "use_dpop_nonce", "error_description": "nonce please"},
                    400,
                    headers=[("DPoP-Nonce", self.nonce)],
                )
                return
            self.bound[access] = thumbprint(header["jwk"])
            await reply.json({"access_token": access, "token_type": "DPoP", "expires_in": 3600})
        else:
            await reply.text(404, "not found")


class DpopMcp(McpFake):
    """Checks ``Authorization: DPoP`` plus a valid, fresh, bound proof on every request."""

    def __init__(self, auth: DpopAuthServer) -> None:
        super().__init__()
        self.auth = auth
        self.base = ""
        self.nonce_mode = "none"  # "none" | "require" | "always"
        self.nonce = "rs-nonce-1"
        self.jtis: list[str] = []
        self.schemes: list[str] = []
        self.verified: list[str] = []  # methods whose proof checked out
        self.challenges = 0

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        prm = f"{self.base}/.well-known/oauth-protected-resource/mcp"
        if path == "/.well-known/oauth-protected-resource/mcp":
            # RFC 9728: the resource says it takes (here: requires) DPoP-bound tokens.
            await reply.json(
                {
                    "resource": f"{self.base}/mcp",
                    "authorization_servers": [self.auth.base],
                    "dpop_bound_access_tokens_required": True,
                }
            )
            return
        authorization = req.header("authorization")
        if authorization is None:
            await reply.json(
                {"error": "unauthorized"}, 401, headers=[("WWW-Authenticate", f'DPoP resource_metadata="{prm}"')]
            )
            return
        scheme, _, token = authorization.partition(" ")
        self.schemes.append(scheme)
        proof = req.header("dpop")
        assert scheme == "DPoP" and proof is not None, "a DPoP token goes with the DPoP scheme and a proof"
        header, claims = verify(proof)
        assert claims["htm"] == req.method and claims["htu"] == f"{self.base}/mcp"
        assert claims["ath"] == _b64(hashlib.sha256(token.encode()).digest())
        assert self.auth.bound[token] == thumbprint(header["jwk"]), "proof key is the token's key"
        assert claims["jti"] not in self.jtis, "a proof is never replayed"
        self.jtis.append(claims["jti"])
        self.verified.append(req.method)
        if self.nonce_mode == "always" or (self.nonce_mode == "require" and claims.get("nonce") != self.nonce):
            self.challenges += 1
            if self.nonce_mode == "always":
                self.nonce = f"rs-nonce-{self.challenges}"
            await reply.json(
                {"error": "use_dpop_nonce"},
                401,
                headers=[
                    ("WWW-Authenticate", f'DPoP error="use_dpop_nonce", resource_metadata="{prm}"'),
                    ("DPoP-Nonce", self.nonce),
                ],
            )
            return
        await super().__call__(req, reply)


async def headless(url: str) -> str:
    async with httpx.AsyncClient(follow_redirects=False) as http:
        response = await http.get(url)
    return response.headers["location"]


async def run_session(
    as_mode: str = "none", rs_mode: str = "none", *, fails: str | None = None, **provider_kw: Any
) -> tuple[DpopAuthServer, DpopMcp, OAuthProvider]:
    """One client session against the fakes (``fails``: the error it must end with instead)."""
    auth = DpopAuthServer()
    auth.nonce_mode = as_mode
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = DpopMcp(auth)
        mcp.nonce_mode = rs_mode
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            provider = OAuthProvider(authorize=headless, redirect_uri=REDIRECT, revision="2025-11-25", **provider_kw)
            if fails is not None:
                with pytest.raises(trimcp.TrimcpError, match=fails):
                    async with trimcp.open_client(f"{mcp.base}/mcp", revision="2025-11-25", auth=provider):
                        pass
            else:
                async with trimcp.open_client(f"{mcp.base}/mcp", revision="2025-11-25", auth=provider) as session:
                    await session.list_tools()
                    await session.call_tool("echo", {})
    return auth, mcp, provider


async def test_flow_without_nonces_binds_and_presents_dpop() -> None:
    auth, mcp, provider = await run_session()
    assert auth.token_posts == 1 and auth.proofs[0].get("nonce") is None
    assert set(mcp.schemes) == {"DPoP"} and len(mcp.jtis) >= 3  # initialize, initialized, list, call
    assert mcp.challenges == 0
    # The standalone GET stream and the closing DELETE carry their own proofs too.
    assert {"POST", "GET", "DELETE"} <= set(mcp.verified)
    stored = await provider.store.load(f"tokens:{provider.resource}")
    assert stored is not None and stored["token_type"] == "DPoP"
    assert thumbprint(DpopKey.from_pem(stored["_dpop_key"]).jwk) == auth.bound[stored["access_token"]]


async def test_token_endpoint_nonce_is_retried_once() -> None:
    auth, mcp, _ = await run_session(as_mode="once")
    assert auth.token_posts == 2
    first, second = auth.proofs
    assert "nonce" not in first and second["nonce"] == "as-nonce-1" and first["jti"] != second["jti"]
    assert set(mcp.schemes) == {"DPoP"}


async def test_resource_nonce_is_retried_once_and_remembered() -> None:
    auth, mcp, _ = await run_session(rs_mode="require")
    assert mcp.challenges == 1  # the first request with a token; every later proof carries the nonce
    assert auth.token_posts == 1  # a nonce demand is not a reason to authorize again


async def test_second_token_endpoint_nonce_demand_fails_clearly() -> None:
    auth, _, provider = await run_session(
        as_mode="always", fails=r"use_dpop_nonce: .*/token demanded a DPoP nonce again after the retry"
    )
    assert auth.token_posts == 2  # the first demand retried once, the second ended it
    assert await provider.stored_tokens() is None


async def test_second_resource_nonce_demand_fails_clearly() -> None:
    auth, mcp, _ = await run_session(
        rs_mode="always", fails="use_dpop_nonce: the MCP server demanded a DPoP nonce again after the retry"
    )
    assert mcp.challenges == 2 and auth.token_posts == 1  # one retry, no loop, no re-authorization


async def test_bearer_when_the_server_does_not_offer_dpop() -> None:
    auth = DpopAuthServer()
    auth.advertise = False
    provider = OAuthProvider(authorize=headless, redirect_uri=REDIRECT, dpop=True)
    assert provider.begin_dpop({"issuer": "x"}, None) is False
    assert provider.proof_headers("POST", "http://h/mcp", "Bearer t") == []
    offered = {"dpop_signing_alg_values_supported": ["ES256"]}
    no = OAuthProvider(authorize=headless, redirect_uri=REDIRECT, dpop=False)
    assert no.begin_dpop(offered, {"dpop_bound_access_tokens_required": True}) is False
    # The default asks for DPoP only when the resource says it takes DPoP tokens too:
    # an authorization server offering DPoP says nothing of a Bearer-only resource.
    default = OAuthProvider(authorize=headless, redirect_uri=REDIRECT)
    assert default.begin_dpop(offered, None) is False
    assert default.begin_dpop(offered, {"resource": "http://h/mcp"}) is False
    assert default.begin_dpop(offered, {"dpop_signing_alg_values_supported": ["RS256"]}) is False
    assert default.begin_dpop(offered, {"dpop_bound_access_tokens_required": True}) is True
    assert default.begin_dpop(offered, {"dpop_signing_alg_values_supported": ["ES256"]}) is True


async def test_key_is_kept_with_the_stored_tokens() -> None:
    from trimcp.oauth import MemoryStore

    store = MemoryStore()
    auth, mcp, first = await run_session(store=store)
    again = OAuthProvider(authorize=headless, redirect_uri=REDIRECT, store=store)
    again.bind(first.server_url or "")
    (authorization,) = await again.headers()
    assert authorization[1].startswith("DPoP ")
    ((name, proof),) = again.proof_headers("POST", f"{mcp.base}/mcp", authorization[1])
    header, _ = verify(proof)
    assert name == "DPoP" and thumbprint(header["jwk"]) == auth.bound[authorization[1][5:]]
