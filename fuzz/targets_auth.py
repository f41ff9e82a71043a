"""Fuzz targets for the OAuth documents a client reads (see ``targets_host.py`` for the rules).

* ``oauth_metadata``: RFC 8414 authorization-server metadata and RFC 9728
  protected-resource metadata (``trimcp._sansio.auth.discovery`` and the flow
  functions reading metadata): only ``DiscoveryError`` / ``OAuthError``, and each
  check agrees with a direct reading of the document.
* ``token_response``: RFC 6749 section 5.1/5.2 (``parse_token_response``): ``Tokens``
  only from a 200 with a non-empty Bearer ``access_token``; else ``OAuthError``; no
  token in a ``repr`` or an error message.
* ``url_policy``: ``UrlPolicy`` (``trimcp._sansio.auth.url_policy``) on URLs and
  addresses built from the input: only ``UrlRefused``; an accepted URL is https (or
  http on loopback) with no user information, and a literal address in it is global
  or loopback, as an independent reading with ``ipaddress`` says; each allowance
  accepts a superset; ``address_allowed`` agrees likewise; the credentials rule sends
  only to the configured issuer or the server's own origin.
"""

from __future__ import annotations

import ipaddress
import json
import math
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from fuzz._inputs import Source, document, jsonable, strict_json
from trimcp._sansio.auth import discovery as disc
from trimcp._sansio.auth import flow
from trimcp._sansio.auth.url_policy import UrlPolicy, UrlRefused

# ------------------------------------------------------------------ oauth_metadata

OAUTH_VOCAB = (
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "code_challenge_methods_supported",
    "S256",
    "plain",
    "scopes_supported",
    "resource",
    "authorization_servers",
    "resource_metadata",
    "client_id_metadata_document_supported",
    "token_endpoint_auth_methods_supported",
    "client_secret_basic",
    "client_secret_post",
    "none",
    "private_key_jwt",
    "mcp:read",
    "mcp:write",
    "https://as.example.com",
    "https://as.example.com/tenant/1",
    "http://127.0.0.1:8080",
    "https://mcp.example.com/mcp",
    "https://mcp.example.com",
    "HTTPS://MCP.EXAMPLE.COM:443/mcp/sub",
    "http://[",
    "http://[::1]:8/x",
    "https://mcp.example.com:99999/",
    "http://h:abc/",
    "",
    "/",
    "https://",
    "mcp.example.com",
    "https://mcp.example.com/mcpx",
    "https://as.example.com/",
    "file:///etc",
)
_ISSUERS = ("https://as.example.com", "https://as.example.com/tenant/1", "http://127.0.0.1:8080")
_SERVERS = ("https://mcp.example.com/mcp", "https://mcp.example.com", "http://[::1]:8/x")
_AUTH_METHODS = frozenset({"client_secret_basic", "client_secret_post", "none"})


def fuzz_oauth_metadata(data: bytes) -> None:
    """The metadata checks raise only their AuthErrors and agree with the document."""
    _, doc = document(data, OAUTH_VOCAB)
    if not isinstance(doc, dict):  # put a non-object where every reader will look at it
        doc = {
            "issuer": doc,
            "resource": doc,
            "authorization_servers": [doc],
            "code_challenge_methods_supported": doc,
            "scopes_supported": doc,
        }
    issuer = _ISSUERS[len(data) % len(_ISSUERS)]
    server = _SERVERS[len(data) // 3 % len(_SERVERS)]
    issuers = [issuer] + ([doc["issuer"]] if isinstance(doc.get("issuer"), str) else [])
    for want in issuers:
        try:
            disc.check_issuer(doc, want)
            assert doc.get("issuer") == want
        except disc.DiscoveryError:
            assert doc.get("issuer") != want
    methods = doc.get("code_challenge_methods_supported")
    try:
        disc.check_pkce(doc)
        assert isinstance(methods, list) and "S256" in methods
    except disc.DiscoveryError:
        assert not isinstance(methods, list) or "S256" not in methods
    # Every string the document holds is, somewhere in the flow, a URL from the server.
    urls = [v for v in doc.values() if isinstance(v, str)]
    servers = doc.get("authorization_servers")
    if isinstance(servers, list):
        urls += [v for v in servers if isinstance(v, str)]
    for url in urls:
        matched = disc.resource_matches(url, server)
        assert isinstance(matched, bool)
        if matched:
            assert disc.origin(disc.canonical_resource(url)) == disc.origin(disc.canonical_resource(server))
        try:
            found = disc.as_metadata_urls(url)
        except disc.DiscoveryError:
            pass
        else:
            assert 2 <= len(found) <= 3 and all(isinstance(u, str) and "/.well-known/" in u for u in found)
        assert disc.prm_urls(server, url or None)[0] == (url or disc.prm_urls(server, None)[0])
    assert disc.resource_matches(server, server)
    _identity(doc)


def _identity(doc: dict[str, Any]) -> None:
    for metadata_url in (None, "https://client.example.com/meta.json", "http://client.example.com/m"):
        try:
            how = flow.choose_identity(doc, pre_registered=None, metadata_url=metadata_url)
        except flow.OAuthError as exc:
            assert exc.error in ("invalid_client_metadata", "no_client_identity")
            continue
        assert how in ("cimd", "dcr")
        assert how != "dcr" or doc.get("registration_endpoint")
    for has_secret in (False, True):
        assert flow.choose_auth_method(doc, has_secret) in _AUTH_METHODS
    body = flow.registration_body(
        client_name="fuzz",
        redirect_uri="http://127.0.0.1:1/cb",
        scope=flow.select_scope(None, doc),
        revision=None,
        as_metadata=doc,
    )
    assert isinstance(body["token_endpoint_auth_method"], str)
    json.dumps(body)
    scope = flow.select_scope(None, doc)
    assert scope is None or isinstance(scope, str)


# ------------------------------------------------------------------ token_response

TOKEN_VOCAB = (
    "access_token",
    "token_type",
    "expires_in",
    "refresh_token",
    "scope",
    "error",
    "error_description",
    "error_uri",
    "Bearer",
    "bearer",
    "BEARER",
    "DPoP",
    "mac",
    "s3cr3t-tok",
    "s3cr3t-ref",
    "invalid_grant",
    "invalid_refresh_token",
    "expired_refresh_token",
    "token_expired",
    "invalid_client",
    "mcp:read mcp:write",
    "",
)
_STATUSES = (200, 200, 200, 201, 400, 401, 500)
_NOWS = (0.0, 1.7e9, 1e308)


def fuzz_token_response(data: bytes) -> None:
    """parse_token_response gives Tokens for a good 200 and OAuthError for everything else."""
    was_json, _ = strict_json(data)
    if was_json or not data:
        status, body = 200, data
    elif data[0] % 4 == 0:
        status, body = _STATUSES[data[-1] % len(_STATUSES)], data[1:]
    else:
        src = Source(data[1:], TOKEN_VOCAB)
        doc = src.value() if data[0] % 4 == 1 else {src.string(): src.value() for _ in range(src.byte() % 7)}
        status = _STATUSES[data[0] % len(_STATUSES)]
        body = json.dumps(doc).encode()
    now = _NOWS[len(data) % len(_NOWS)]
    _, parsed = strict_json(body)
    try:
        tokens = flow.parse_token_response(status, body, now=now)
    except flow.OAuthError as exc:
        assert isinstance(exc.error, str) and exc.error
        assert exc.error not in ("invalid_refresh_token", "expired_refresh_token", "token_expired")
        if isinstance(parsed, dict):  # the vocabulary's tokens are marked, so they can be looked for
            shown = repr(parsed.get("error")) + repr(parsed.get("error_description"))
            for key in ("access_token", "refresh_token"):
                secret = parsed.get(key)
                if isinstance(secret, str) and "s3cr3t" in secret and secret not in shown:
                    assert secret not in str(exc), "a token in an error message"
        return
    assert status == 200
    assert isinstance(parsed, dict) and parsed.get("error") is None, parsed
    assert isinstance(tokens.access_token, str) and tokens.access_token == parsed["access_token"]
    assert tokens.token_type == "Bearer"
    assert tokens.refresh_token is None or isinstance(tokens.refresh_token, str)
    assert tokens.scope is None or isinstance(tokens.scope, str)
    assert tokens.expires_at is None or (isinstance(tokens.expires_at, float) and math.isfinite(tokens.expires_at))
    assert "access_token=" not in repr(tokens) and "refresh_token=" not in repr(tokens)
    jsonable(tokens.to_dict())
    assert flow.Tokens.from_dict(tokens.to_dict()) == tokens


# ------------------------------------------------------------------ url_policy

URL_VOCAB = (
    "https://",
    "http://",
    "file://",
    "javascript:",
    "HTTPS://",
    "hTtP://",
    "//",
    "@",
    ":",
    "/",
    "?",
    "#",
    "[",
    "]",
    "%",
    "%2e",
    "%40",
    ".",
    "user",
    "pw",
    "localhost",
    "LOCALHOST",
    "localhost.",
    "example.com",
    "as.example.com",
    "127.0.0.1",
    "127.255.0.9",
    "10.0.0.5",
    "169.254.169.254",
    "192.168.1.1",
    "172.16.0.1",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "8.8.8.8",
    "93.184.215.14",
    "::1",
    "::",
    "fe80::1",
    "fd00::1",
    "::ffff:169.254.169.254",
    "::ffff:127.0.0.1",
    "2606:4700::1111",
    "2130706433",
    "0x7f000001",
    "0177.0.0.1",
    ":443",
    ":80",
    ":99999",
    ":0",
    "/.well-known/x",
)
_SERVER_URLS = ("https://mcp.example.com/mcp", "http://10.0.0.5:8000/mcp", "http://127.0.0.1:9/mcp")


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _reachable(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_loopback or (address.is_global and not address.is_multicast)


def _accepts(policy: UrlPolicy, url: str) -> bool:
    try:
        assert policy.check(url, "fuzz") == url
    except UrlRefused as exc:
        assert len(str(exc)) < 600  # the URL is quoted cut, however long it is
        return False
    return True


def fuzz_url_policy(data: bytes) -> None:
    """Only UrlRefused; what the default policy accepts, an independent reading accepts."""
    source = Source(data, URL_VOCAB)
    url = "".join(source.string() for _ in range(1 + source.byte() % 8))
    server = _SERVER_URLS[source.byte() % len(_SERVER_URLS)]
    default, trusting = UrlPolicy(), UrlPolicy().trusting(server)
    accepted = _accepts(default, url)
    for wider in (
        UrlPolicy(allow_http=True),
        UrlPolicy(allow_private=True),
        trusting,
        UrlPolicy(allow_http=True, allow_private=True),
    ):
        assert not accepted or _accepts(wider, url), (wider, url)
    if accepted:
        parts = urlsplit(url)
        host = parts.hostname or ""
        assert parts.scheme.lower() == "https" or (
            parts.scheme.lower() == "http"
            and (
                host.lower() in ("localhost", "localhost.")
                or (_literal(host) or ipaddress.ip_address("0.0.0.0")).is_loopback
            )
        )
        assert parts.username is None and parts.password is None and host
        literal = _literal(host)
        assert literal is None or _reachable(literal), url
    if _accepts(trusting, url) and not accepted:
        assert disc.origin(disc.canonical_resource(url)) == disc.origin(disc.canonical_resource(server))
    # The address a name resolved to, judged on its own.
    address = source.string()
    verdict = default.address_allowed("as.example.com", address)
    literal = _literal(address)
    assert (verdict is None) == (literal is not None and _reachable(literal)), (address, verdict)
    # The credentials rule: "send" only to the configured issuer or the server's own origin.
    configured = source.pick((None, "https://as.example.com", url))
    decision = flow.credentials_destination(url, configured_issuer=configured, server_url=server)
    if decision == "send" and configured is None:
        assert disc.origin(disc.canonical_resource(url)) == disc.origin(disc.canonical_resource(server))
    if configured is not None:
        assert decision == ("send" if url == configured else "withhold")


TARGETS: dict[str, Callable[[bytes], None]] = {
    "oauth_metadata": fuzz_oauth_metadata,
    "token_response": fuzz_token_response,
    "url_policy": fuzz_url_policy,
}
