"""The client-credentials grant and ``private_key_jwt`` client authentication.

Unit tests cover the pure claims / JWS assembly and the token request form;
the signer is checked by verifying its JWTs independently with PyJWT.  The
flow tests run ``OAuthProvider(grant="client_credentials")`` against an h11
fake authorization server (no authorization endpoint, no PKCE: neither is
needed without a user) and the protected MCP fake of ``test_oauth_flow``.
JWT tests skip when ``cryptography`` / PyJWT are not installed.
"""

from __future__ import annotations

import base64
import importlib.util
import itertools
import json
import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from helpers.h11_fake import Reply, Req, serve
from helpers.oauth_fakes import ProtectedMcp

import trimcp
from trimcp._sansio import auth as sa
from trimcp.oauth import OAuthProvider


def _trust_loopback(issuer: str) -> bool:
    """The host's ``trust_issuer``: the test's authorization server listens on another
    loopback port than its MCP server, so it is not on the server's origin."""
    return issuer.startswith("http://127.0.0.1:")


HAVE_JWT = importlib.util.find_spec("cryptography") is not None and importlib.util.find_spec("jwt") is not None
needs_jwt = pytest.mark.skipif(not HAVE_JWT, reason="needs cryptography and PyJWT")

CLIENT_ID = "machine-client"
SECRET = "s3cret-value-never-logged"


def _b64d(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _ec_pem(curve: str = "P-256") -> tuple[bytes, Any]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1() if curve == "P-256" else ec.SECP384R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem, key.public_key()


def _rsa_pem() -> tuple[bytes, Any]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem, key.public_key()


# ----------------------------------------------------------- pure parts


def test_assertion_claims() -> None:
    claims = sa.assertion_claims(
        client_id="c1", audience="https://as.example", now=1000.7, jti=b"\x01" * 16, lifetime=90
    )
    assert claims == {
        "iss": "c1",
        "sub": "c1",
        "aud": "https://as.example",
        "jti": "AQEBAQEBAQEBAQEBAQEBAQ",
        "iat": 1000,
        "exp": 1090,
    }
    with pytest.raises(ValueError):
        sa.assertion_claims(client_id="c1", audience="a", now=0, jti=b"short")
    with pytest.raises(ValueError):
        sa.assertion_claims(client_id="c1", audience="a", now=0, jti=b"\x00" * 16, lifetime=0)


def test_sign_assertion_assembles_a_compact_jws() -> None:
    seen: list[bytes] = []

    def signer(data: bytes) -> bytes:
        seen.append(data)
        return b"sig"

    token = sa.sign_assertion({"iss": "c1"}, alg="ES256", sign=signer, kid="k1")
    header, payload, signature = token.split(".")
    assert json.loads(_b64d(header)) == {"alg": "ES256", "typ": "JWT", "kid": "k1"}
    assert json.loads(_b64d(payload)) == {"iss": "c1"}
    assert _b64d(signature) == b"sig"
    assert seen == [f"{header}.{payload}".encode()]
    assert "=" not in token
    with pytest.raises(ValueError):
        sa.sign_assertion({}, alg="none", sign=signer)


def test_token_request_private_key_jwt_and_client_credentials_form() -> None:
    ident = sa.ClientIdentity(CLIENT_ID, None, "private_key_jwt")
    form = sa.client_credentials_form(resource="https://mcp.example/mcp", scope="read write")
    assert form == {"grant_type": "client_credentials", "resource": "https://mcp.example/mcp", "scope": "read write"}
    assert "scope" not in sa.client_credentials_form(resource="r", scope=None)
    out, headers = sa.token_request(form, ident, "private_key_jwt", assertion="a.b.c")
    assert out["client_assertion"] == "a.b.c" and out["client_id"] == CLIENT_ID
    assert out["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert "Authorization" not in headers and "client_secret" not in out
    with pytest.raises(sa.OAuthError):
        sa.token_request(form, ident, "private_key_jwt")


def test_provider_argument_checks() -> None:
    with pytest.raises(ValueError):
        OAuthProvider()  # the authorization-code grant needs an authorize callback
    with pytest.raises(ValueError):
        OAuthProvider(grant="client_credentials", client_id=CLIENT_ID)
    with pytest.raises(ValueError):
        OAuthProvider(grant="password", client_id=CLIENT_ID, client_secret=SECRET)
    provider = OAuthProvider(grant="client_credentials", client_id=CLIENT_ID, client_secret=SECRET)
    assert SECRET not in repr(provider) and SECRET not in repr(provider.pre_registered)


# ----------------------------------------------------------- the signer


@needs_jwt
@pytest.mark.parametrize("kind", ["ES256", "ES384", "RS256"])
def test_pem_signer_output_verifies_with_pyjwt(kind: str) -> None:
    import jwt

    from trimcp._trio.oauth.jwt import pem_signer

    pem, public = _rsa_pem() if kind == "RS256" else _ec_pem("P-384" if kind == "ES384" else "P-256")
    alg, sign = pem_signer(pem.decode())
    assert alg == kind
    claims = sa.assertion_claims(
        client_id=CLIENT_ID, audience="https://as.example", now=2_000_000_000, jti=b"\x07" * 16
    )
    token = sa.sign_assertion(claims, alg=alg, sign=sign)
    decoded = jwt.decode(
        token,
        public,
        algorithms=[kind],
        audience="https://as.example",
        options={"verify_exp": False, "verify_iat": False},
    )
    assert decoded == claims
    assert jwt.get_unverified_header(token)["alg"] == kind


@needs_jwt
def test_pem_signer_rejects_mismatch_and_garbage() -> None:
    from trimcp._trio.oauth.jwt import pem_signer

    pem, _ = _ec_pem()
    with pytest.raises(ValueError):
        pem_signer(pem, "RS256")
    with pytest.raises(ValueError) as info:
        pem_signer(b"-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    assert "not a key" not in str(info.value)


@needs_jwt
def test_provider_client_assertion_claims() -> None:
    import jwt

    pem, public = _ec_pem()
    provider = OAuthProvider(
        grant="client_credentials",
        client_id=CLIENT_ID,
        private_key_pem=pem,
        clock=lambda: 5000.0,
        random=lambda n: b"\x02" * n,
    )
    assert provider.pre_registered is not None and provider.pre_registered.auth_method == "private_key_jwt"
    token = provider.client_assertion("https://as.example/tenant")
    claims = jwt.decode(
        token,
        public,
        algorithms=["ES256"],
        audience="https://as.example/tenant",
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims["iss"] == claims["sub"] == CLIENT_ID
    assert claims["exp"] - claims["iat"] == 60 and claims["iat"] == 5000
    assert claims["jti"]
    assert pem.decode() not in repr(provider)


# ----------------------------------------------------------- the flow


class CcAuthServer:
    """An authorization server offering only the client-credentials grant."""

    def __init__(self, method: str, public_key: Any = None) -> None:
        self.method = method
        self.public_key = public_key
        self.base = ""
        self.access: dict[str, set[str]] = {}
        self.token_requests: list[dict[str, str]] = []
        self.assertions: list[dict[str, Any]] = []
        self._n = itertools.count(1)

    @property
    def issuer(self) -> str:
        return self.base

    def _authenticated(self, req: Req, form: dict[str, str]) -> bool:
        if self.method == "client_secret_basic":
            raw = base64.b64decode((req.header("authorization") or "Basic ")[6:]).decode()
            return raw == f"{CLIENT_ID}:{SECRET}" and "client_secret" not in form
        import jwt

        if form.get("client_assertion_type") != sa.JWT_BEARER_ASSERTION:
            return False
        try:
            claims = jwt.decode(
                form.get("client_assertion", ""), self.public_key, algorithms=["ES256", "RS256"], audience=self.issuer
            )
        except jwt.InvalidTokenError:
            return False
        self.assertions.append(claims)
        return bool(claims["iss"] == claims["sub"] == form.get("client_id") == CLIENT_ID)

    async def __call__(self, req: Req, reply: Reply) -> None:
        path = urlsplit(req.target).path
        if path == "/.well-known/oauth-authorization-server":
            await reply.json(
                {
                    "issuer": self.issuer,
                    "token_endpoint": f"{self.base}/token",
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": [self.method],
                }
            )
        elif path == "/token":
            form = {k: v[0] for k, v in parse_qs(req.body.decode()).items()}
            self.token_requests.append(form)
            if form.get("grant_type") != "client_credentials":
                await reply.json({"error": "unsupported_grant_type"}, 400)
            elif not self._authenticated(req, form):
                await reply.json({"error": "invalid_client"}, 401)
            else:
                access = f"CC-secret-token-{next(self._n)}"
                self.access[access] = set(form.get("scope", "").split())
                await reply.json({"access_token": access, "token_type": "Bearer", "expires_in": 3600})
        else:
            await reply.text(404, "not found")


def _assert_no_secrets(caplog: pytest.LogCaptureFixture, secrets: list[str]) -> None:
    for record in caplog.records:
        text = record.getMessage() + (logging.Formatter().formatException(record.exc_info) if record.exc_info else "")
        for secret in secrets:
            assert secret not in text, f"secret material leaked in log record {record.name}"


async def _run_flow(auth: CcAuthServer, provider: OAuthProvider) -> tuple[str, list[str]]:
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)  # type: ignore[arg-type]  # duck-typed: issuer + access
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            async with trimcp.open_client(mcp_server.url, revision="2025-11-25", auth=provider) as session:
                assert [t.name for t in await session.list_tools()] == ["read_it", "write_it"]
                # The token stops being valid: the next 401 runs the grant again (no refresh token).
                auth.access.clear()
                assert len(await session.list_tools()) == 2
            return mcp_server.url, list(auth.access)


async def test_client_credentials_basic_flow(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    auth = CcAuthServer("client_secret_basic")
    provider = OAuthProvider(
        grant="client_credentials", client_id=CLIENT_ID, client_secret=SECRET, trust_issuer=_trust_loopback
    )
    url, tokens = await _run_flow(auth, provider)
    assert len(auth.token_requests) == 2
    form = auth.token_requests[0]
    assert form == {"grant_type": "client_credentials", "resource": url, "scope": "read"}
    stored = await provider.stored_tokens()
    assert stored is not None and stored.access_token in tokens
    _assert_no_secrets(caplog, [SECRET, *tokens, base64.b64encode(f"{CLIENT_ID}:{SECRET}".encode()).decode()])


@needs_jwt
@pytest.mark.parametrize("kind", ["ES256", "RS256"])
async def test_client_credentials_private_key_jwt_flow(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    pem, public = _rsa_pem() if kind == "RS256" else _ec_pem()
    auth = CcAuthServer("private_key_jwt", public)
    provider = OAuthProvider(
        grant="client_credentials", client_id=CLIENT_ID, private_key_pem=pem.decode(), trust_issuer=_trust_loopback
    )
    url, tokens = await _run_flow(auth, provider)
    assert len(auth.assertions) == 2
    first, second = auth.assertions
    assert first["aud"] == auth.issuer and first["jti"] != second["jti"]
    assert first["exp"] - first["iat"] <= 60
    form = auth.token_requests[0]
    assert form["resource"] == url and form["scope"] == "read" and "client_secret" not in form
    body_lines = [line for line in pem.decode().splitlines() if not line.startswith("-----")]
    _assert_no_secrets(caplog, [*tokens, *body_lines, *(f["client_assertion"] for f in auth.token_requests)])
