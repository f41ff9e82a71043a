"""The sans-IO OAuth pieces: challenge parsing, discovery URLs, PKCE, callbacks, tokens."""

from __future__ import annotations

import base64
import hashlib
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trimcp._sansio import auth as sa

# ------------------------------------------------------------------ WWW-Authenticate


def test_bearer_challenge_params() -> None:
    value = (
        'Bearer realm="mcp", error="insufficient_scope", scope="a b", '
        'resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp"'
    )
    ch = sa.bearer_challenge([value])
    assert ch is not None
    assert ch.scope == "a b"
    assert ch.error == "insufficient_scope"
    assert ch.resource_metadata == "https://x.example/.well-known/oauth-protected-resource/mcp"


def test_multiple_challenges_and_token68() -> None:
    chs = sa.parse_challenges('Basic dXNlcjpwYXNz==, Bearer error=invalid_token, DPoP algs="ES256"')
    assert [c.scheme for c in chs] == ["Basic", "Bearer", "DPoP"]
    assert chs[0].token68 == "dXNlcjpwYXNz=="
    assert chs[1].error == "invalid_token"
    assert sa.bearer_challenge(["Basic realm=x", 'bearer scope="s"']) is not None


def test_quoted_escapes_and_case() -> None:
    (ch,) = sa.parse_challenges(r'Bearer SCOPE="a\"b", Error = "x"')
    assert ch.scope == 'a"b'
    assert ch.error == "x"


def test_no_bearer() -> None:
    assert sa.bearer_challenge(["Basic realm=x"]) is None
    assert sa.bearer_challenge([]) is None


@given(st.text())
def test_parse_never_raises(text: str) -> None:
    sa.parse_challenges(text)


_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_value = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30)


@given(st.dictionaries(_name, _value, max_size=5))
def test_quoted_params_roundtrip(params: dict[str, str]) -> None:
    def quote(v: str) -> str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'

    header = "Bearer " + ", ".join(f"{k}={quote(v)}" for k, v in params.items())
    (ch,) = sa.parse_challenges(header)
    assert ch.params == params


# ------------------------------------------------------------------ discovery


def test_prm_urls() -> None:
    assert sa.prm_urls("https://h/mcp", "https://h/meta") == ["https://h/meta"]
    assert sa.prm_urls("https://h:8443/a/mcp", None) == [
        "https://h:8443/.well-known/oauth-protected-resource/a/mcp",
        "https://h:8443/.well-known/oauth-protected-resource",
    ]
    assert sa.prm_urls("https://h/", None) == ["https://h/.well-known/oauth-protected-resource"]


def test_as_metadata_urls() -> None:
    assert sa.as_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert sa.as_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_canonical_resource() -> None:
    assert sa.canonical_resource("HTTPS://MCP.Example.com:443/mcp#frag") == "https://mcp.example.com/mcp"
    assert sa.canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    assert sa.canonical_resource("http://localhost:8080/mcp") == "http://localhost:8080/mcp"


def test_resource_matches() -> None:
    assert sa.resource_matches("https://h/mcp", "https://h/mcp")
    assert sa.resource_matches("https://h", "https://h/mcp")
    assert not sa.resource_matches("https://h/mc", "https://h/mcp")
    assert not sa.resource_matches("https://evil/mcp", "https://h/mcp")


def test_issuer_and_pkce_checks() -> None:
    sa.check_issuer({"issuer": "https://a"}, "https://a")
    with pytest.raises(sa.DiscoveryError):
        sa.check_issuer({"issuer": "https://a/"}, "https://a")
    sa.check_pkce({"code_challenge_methods_supported": ["plain", "S256"]})
    for bad in ({}, {"code_challenge_methods_supported": ["plain"]}):
        with pytest.raises(sa.DiscoveryError):
            sa.check_pkce(bad)


def test_legacy_defaults() -> None:
    meta = sa.legacy_metadata("http://127.0.0.1:9/some/mcp")
    assert meta["authorization_endpoint"] == "http://127.0.0.1:9/authorize"
    assert meta["token_endpoint"] == "http://127.0.0.1:9/token"
    assert meta["registration_endpoint"] == "http://127.0.0.1:9/register"
    assert sa.legacy_issuer("http://127.0.0.1:9/some/mcp") == "http://127.0.0.1:9"


# ------------------------------------------------------------------ PKCE, state, scope


def test_pkce_s256() -> None:
    pkce = sa.Pkce.from_random(bytes(range(32)))
    assert 43 <= len(pkce.verifier) <= 128
    digest = hashlib.sha256(pkce.verifier.encode()).digest()
    assert pkce.challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert pkce.verifier not in repr(pkce)
    with pytest.raises(ValueError):
        sa.Pkce.from_random(b"short")


def test_scope_selection() -> None:
    assert sa.select_scope("x y", {"scopes_supported": ["a"]}) == "x y"
    assert sa.select_scope(None, {"scopes_supported": ["a", "b"]}) == "a b"
    assert sa.select_scope(None, {}) is None
    assert sa.select_scope(None, None) is None


def test_identity_order() -> None:
    pre = sa.ClientIdentity("id", "secret")
    meta = {"client_id_metadata_document_supported": True, "registration_endpoint": "https://a/reg"}
    assert sa.choose_identity(meta, pre_registered=pre, metadata_url="https://c/m.json") == "pre-registered"
    assert sa.choose_identity(meta, pre_registered=None, metadata_url="https://c/m.json") == "cimd"
    assert sa.choose_identity(meta, pre_registered=None, metadata_url=None) == "dcr"
    with pytest.raises(sa.OAuthError):
        sa.choose_identity({}, pre_registered=None, metadata_url="https://c/m.json")
    with pytest.raises(sa.OAuthError):
        sa.choose_identity(
            {"client_id_metadata_document_supported": True}, pre_registered=None, metadata_url="http://c/m.json"
        )


def test_registration_body_application_type() -> None:
    body = sa.registration_body(
        client_name="c", redirect_uri="http://127.0.0.1/cb", scope=None, revision="2026-07-28", as_metadata={}
    )
    assert body["application_type"] == "native"
    old = sa.registration_body(
        client_name="c", redirect_uri="http://127.0.0.1/cb", scope="s", revision="2025-11-25", as_metadata={}
    )
    assert "application_type" not in old and old["scope"] == "s"


def test_auth_method_choice() -> None:
    assert sa.choose_auth_method({}, False) == "none"
    assert sa.choose_auth_method({}, True) == "client_secret_basic"
    assert sa.choose_auth_method({"token_endpoint_auth_methods_supported": ["client_secret_post"]}, True) == (
        "client_secret_post"
    )
    assert sa.choose_auth_method({}, True, "client_secret_post") == "client_secret_post"


def test_token_request_methods() -> None:
    ident = sa.ClientIdentity("my id", "s3cr:t")
    form, headers = sa.token_request({"grant_type": "x"}, ident, "client_secret_basic")
    assert "client_secret" not in form
    raw = base64.b64decode(headers["Authorization"].split()[1]).decode()
    assert raw == "my%20id:s3cr%3At"
    form, headers = sa.token_request({"grant_type": "x"}, ident, "client_secret_post")
    assert form["client_secret"] == "s3cr:t" and "Authorization" not in headers
    form, headers = sa.token_request({"grant_type": "x"}, ident, "none")
    assert form["client_id"] == "my id" and "client_secret" not in form


# ------------------------------------------------------------------ authorization URL + callback


def test_authorization_url() -> None:
    pkce = sa.Pkce.from_random(bytes(32))
    url = sa.authorization_url(
        "https://a/authorize?x=1",
        client_id="c",
        redirect_uri="http://127.0.0.1/cb",
        pkce=pkce,
        state="st",
        resource="https://h/mcp",
        scope=None,
    )
    q = parse_qs(urlsplit(url).query)
    assert q["x"] == ["1"] and q["code_challenge_method"] == ["S256"] and q["resource"] == ["https://h/mcp"]
    assert "scope" not in q and q["state"] == ["st"]


def test_callback_checks() -> None:
    ok = "http://127.0.0.1/cb?code=C&state=S&iss=https%3A%2F%2Fa"
    assert sa.parse_callback(ok, state="S", issuer="https://a", iss_required=True) == "C"
    assert sa.parse_callback("http://x/cb?code=C&state=S", state="S", issuer="https://a", iss_required=False) == "C"
    bad = [
        ("http://x/cb?code=C&state=T", False),
        ("http://x/cb?code=C&state=S", True),  # iss advertised but missing
        ("http://x/cb?code=C&state=S&iss=https://b", False),  # unexpected issuer
        ("http://x/cb?code=C&state=S&iss=https://a/", False),  # no normalisation
        ("http://x/cb?error=access_denied&state=S", False),
        ("http://x/cb?state=S", False),
    ]
    for url, required in bad:
        with pytest.raises(sa.OAuthError):
            sa.parse_callback(url, state="S", issuer="https://a", iss_required=required)


# ------------------------------------------------------------------ token responses


def test_token_response_ok() -> None:
    body = json.dumps(
        {"access_token": "AT", "token_type": "bearer", "expires_in": 60, "refresh_token": "RT", "scope": "a"}
    ).encode()
    tokens = sa.parse_token_response(200, body, now=100.0)
    assert tokens.access_token == "AT" and tokens.refresh_token == "RT" and tokens.expires_at == 160.0
    assert "AT" not in repr(tokens) and "RT" not in repr(tokens)
    assert tokens.expired(140.0) and not tokens.expired(100.0)


@pytest.mark.parametrize("code", ["invalid_refresh_token", "expired_refresh_token", "token_expired"])
def test_nonstandard_refresh_errors_normalised(code: str) -> None:
    with pytest.raises(sa.OAuthError) as info:
        sa.parse_token_response(400, json.dumps({"error": code}).encode(), now=0)
    assert info.value.error == "invalid_grant"


def test_token_response_failures() -> None:
    for status, body in [
        (200, b'{"error": "invalid_grant", "access_token": "x"}'),
        (200, b"not json"),
        (200, b'{"token_type": "Bearer"}'),
        (200, b'{"access_token": "x", "token_type": "mac"}'),
        (500, b'{"access_token": "x", "token_type": "Bearer"}'),
    ]:
        with pytest.raises(sa.OAuthError):
            sa.parse_token_response(status, body, now=0)


@given(st.binary(max_size=200), st.integers(100, 599))
def test_token_response_never_crashes(body: bytes, status: int) -> None:
    try:
        sa.parse_token_response(status, body, now=0)
    except sa.OAuthError:
        pass
