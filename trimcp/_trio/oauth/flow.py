"""The HTTP steps of the OAuth flow (discovery, registration, code, token).

Theory of operation
-------------------
``authorize`` runs one full authorization for an ``OAuthProvider``, each
decision delegated to ``trimcp._sansio.auth``:

1. ``discover``: protected-resource metadata (challenge URL, path-aware
   well-known, root well-known), whose ``resource`` must match the server;
   then authorization-server metadata along the RFC 8414 / OIDC URL order,
   whose ``issuer`` must match.  No PRM: a 2025-03-26 server, whose origin is
   its authorization server (with default endpoints when it publishes no
   metadata).  PKCE S256 must be advertised.
2. ``identity``: stored per issuer; else pre-registered, a Client ID
   Metadata Document URL, or Dynamic Client Registration (then stored).
3. The authorization URL goes to the provider's ``authorize`` callback; the
   redirect it returns is checked (``state``, ``iss``) and the code is
   exchanged (PKCE verifier, ``resource``, ``redirect_uri``) at the token
   endpoint with the client's auth method.  When the authorization server
   advertises DPoP (RFC 9449) and the provider allows it, every token request
   carries a proof of a fresh key (``begin_dpop``) and one ``use_dpop_nonce``
   answer is retried with the nonce it handed out.

``client_credentials`` is the machine-to-machine alternative to steps 2-3:
discovery (PKCE and an authorization endpoint are not required), then one
``grant_type=client_credentials`` request with ``resource`` and the scope,
authenticated by the pre-registered secret (``client_secret_basic`` /
``client_secret_post``) or by a ``private_key_jwt`` assertion whose audience
is the issuer.

``refresh`` runs the refresh-token grant against the remembered token
endpoint.  Error messages carry URLs and OAuth error codes, never tokens.

Every request goes through ``guarded.fetch``: the URL through the provider's
``UrlPolicy`` (https, no private or link-local address a peer names), the body
capped (``max_response_bytes``) and the exchange bounded in time.  The authorization
URL is checked by the same policy before the browser sees it.  Pre-registered
credentials go only where ``credentials_destination`` allows: the issuer they were
configured for, an issuer on the MCP server's own origin, or one the host's
``trust_issuer`` hook accepts; otherwise the flow stops with an ``OAuthError``
naming the issuer that asked.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from ..._sansio import auth as sa
from ..._sansio.bounded.echo import quote
from .guarded import Fetched, fetch
from .store import TokenStore

__all__ = ["FlowContext", "FlowSettings", "authorize", "client_credentials", "refresh"]

log = logging.getLogger("trimcp.oauth")


class FlowSettings(Protocol):
    """What the flow reads from its caller (``provider.OAuthProvider`` is one).

    The flow does not import the provider: it gets this view of it, so the
    provider can import the flow and not the other way round.
    """

    @property
    def server_url(self) -> str | None: ...
    @property
    def resource(self) -> str: ...  # the canonical URI of server_url
    @property
    def store(self) -> TokenStore: ...
    @property
    def pre_registered(self) -> sa.ClientIdentity | None: ...
    @property
    def client_issuer(self) -> str | None: ...
    @property
    def client_metadata_url(self) -> str | None: ...
    @property
    def client_name(self) -> str: ...
    @property
    def redirect_uri(self) -> str: ...
    @property
    def revision(self) -> str | None: ...
    @property
    def default_scope(self) -> str | None: ...
    @property
    def authorize_callback(self) -> Callable[[str], Awaitable[str]] | None: ...
    @property
    def clock(self) -> Callable[[], float]: ...
    @property
    def random(self) -> Callable[[int], bytes]: ...
    @property
    def url_policy(self) -> sa.UrlPolicy: ...  # bound to server_url
    @property
    def max_response_bytes(self) -> int: ...
    @property
    def trust_issuer(self) -> Callable[[str], bool | Awaitable[bool]] | None: ...

    def client_assertion(self, audience: str) -> str:
        """A signed ``private_key_jwt`` assertion for ``audience``."""
        ...

    def remember_scope(self, scope: str | None) -> None:
        """The scope this authorization asked for (a later step-up widens it)."""
        ...

    def begin_dpop(self, as_metadata: dict[str, Any], prm: dict[str, Any] | None) -> bool:
        """A new authorization starts: whether its token requests carry DPoP proofs (a fresh key)."""
        ...

    def token_proof(self, url: str) -> tuple[str, str | None]:
        """A DPoP proof for a token request to ``url``, and the nonce it carries."""
        ...

    def remember_nonce(self, url: str, nonce: str | None) -> None:
        """A ``DPoP-Nonce`` the server at ``url`` handed out."""
        ...


@dataclass
class FlowContext:
    provider: FlowSettings
    client: httpx.AsyncClient


async def request(ctx: FlowContext, method: str, url: str, *, what: str, **options: Any) -> Fetched:
    """One request to a URL a peer named, checked and capped (``guarded.fetch``)."""
    p = ctx.provider
    return await fetch(ctx.client, p.url_policy, method, url, what=what, max_bytes=p.max_response_bytes, **options)


async def get_json(ctx: FlowContext, url: str, what: str = "metadata") -> dict[str, Any] | None:
    """The JSON object at ``url``, or ``None`` (not there: try the next URL).  A URL the
    policy refuses, or a body over the cap, is a ``UrlRefused``: the flow stops."""
    try:
        response = await request(ctx, "GET", url, what=what, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        log.debug("GET %s failed: %s", url, type(exc).__name__)
        return None
    log.debug("GET %s -> %d", url, response.status)
    if response.status != 200:
        return None
    try:
        data = json.loads(response.body)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class Discovered:
    prm: dict[str, Any] | None
    issuer: str
    metadata: dict[str, Any]


async def discover(ctx: FlowContext, challenge: sa.Challenge, *, interactive: bool = True) -> Discovered:
    server = ctx.provider.server_url or ""
    prm: dict[str, Any] | None = None
    for url in sa.prm_urls(server, challenge.resource_metadata):
        prm = await get_json(ctx, url, "protected-resource metadata")
        if prm is not None:
            break
    if prm is not None:
        resource = prm.get("resource")
        if isinstance(resource, str) and not sa.resource_matches(resource, server):
            raise sa.DiscoveryError(
                f"the protected-resource metadata is for {quote(resource)}, not for {server!r}; aborting"
            )
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise sa.DiscoveryError("the protected-resource metadata names no authorization server")
        issuer = servers[0]
    else:
        issuer = sa.legacy_issuer(server)
    metadata: dict[str, Any] | None = None
    for url in sa.as_metadata_urls(issuer):
        metadata = await get_json(ctx, url, "authorization server metadata")
        if metadata is not None:
            break
    if metadata is None:
        if prm is not None:
            raise sa.DiscoveryError(f"no authorization server metadata for {issuer}")
        metadata = sa.legacy_metadata(server)
    sa.check_issuer(metadata, issuer)
    if interactive:  # the client-credentials grant has no front channel, hence no PKCE
        sa.check_pkce(metadata)
    for name in ("authorization_endpoint", "token_endpoint") if interactive else ("token_endpoint",):
        if not isinstance(metadata.get(name), str):
            raise sa.DiscoveryError(f"the authorization server metadata has no {name}")
    return Discovered(prm, issuer, metadata)


async def trusted_credentials(ctx: FlowContext, issuer: str) -> sa.ClientIdentity | None:
    """The pre-registered credentials if they may go to ``issuer`` (``None``: they were
    configured for another issuer); raises when nobody vouched for this one."""
    p = ctx.provider
    if p.pre_registered is None:
        return None
    decision = sa.credentials_destination(issuer, configured_issuer=p.client_issuer, server_url=p.server_url)
    if decision == "send":
        return p.pre_registered
    if decision == "withhold":
        return None
    if p.trust_issuer is not None:
        verdict = p.trust_issuer(issuer)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if verdict is True:
            return p.pre_registered
    raise sa.OAuthError(
        "untrusted_issuer",
        f"the authorization server {quote(issuer)} asks for the client credentials, which are not "
        f"configured for it (client_issuer) and it is not on the MCP server's origin",
    )


async def identity(ctx: FlowContext, found: Discovered, scope: str | None) -> sa.ClientIdentity:
    p = ctx.provider
    key = f"client:{found.issuer}"
    stored = await p.store.load(key)
    if stored:
        return sa.ClientIdentity.from_dict(stored)
    pre = await trusted_credentials(ctx, found.issuer)
    how = sa.choose_identity(found.metadata, pre_registered=pre, metadata_url=p.client_metadata_url)
    if how == "pre-registered" and pre is not None:
        return pre
    if how == "cimd" and p.client_metadata_url:
        return sa.ClientIdentity(p.client_metadata_url, None, "none", "cimd")
    body = sa.registration_body(
        client_name=p.client_name,
        redirect_uri=p.redirect_uri,
        scope=scope,
        revision=p.revision,
        as_metadata=found.metadata,
    )
    endpoint = str(found.metadata["registration_endpoint"])
    response = await request(
        ctx, "POST", endpoint, what="registration endpoint", json=body, headers={"Accept": "application/json"}
    )
    try:
        data = json.loads(response.body)
    except (ValueError, RecursionError):
        data = None
    if response.status not in (200, 201) or not isinstance(data, dict) or not data.get("client_id"):
        error = data.get("error") if isinstance(data, dict) else None
        raise sa.OAuthError(str(error or "registration_failed"), f"{quote(endpoint)} answered {response.status}")
    secret = data.get("client_secret")
    ident = sa.ClientIdentity(
        str(data["client_id"]),
        secret if isinstance(secret, str) else None,
        data.get("token_endpoint_auth_method") or body["token_endpoint_auth_method"],
        "dcr",
    )
    if ident.client_secret is None:
        ident.auth_method = "none"
    log.info("registered client with %s", found.issuer)
    await p.store.save(key, ident.to_dict())
    return ident


async def token_call(
    ctx: FlowContext,
    endpoint: dict[str, Any],
    form: dict[str, str],
) -> sa.Tokens:
    """One token request; with DPoP it carries a proof and retries once on ``use_dpop_nonce``."""
    ident = sa.ClientIdentity.from_dict(endpoint["client"])
    method = sa.choose_auth_method(endpoint.get("metadata") or {}, ident.client_secret is not None, ident.auth_method)
    url = str(endpoint["url"])
    dpop = endpoint.get("dpop") is True
    retried = False
    while True:
        assertion = None
        if method == "private_key_jwt":  # a fresh one per attempt: its jti is single-use
            audience = str(endpoint.get("issuer") or url)
            assertion = ctx.provider.client_assertion(audience)
        body, headers = sa.token_request(form, ident, method, assertion=assertion)
        sent_nonce: str | None = None
        if dpop:
            headers["DPoP"], sent_nonce = ctx.provider.token_proof(url)
        response = await request(ctx, "POST", url, what="token endpoint", data=body, headers=headers)
        nonce = sa.response_nonce(response.headers.multi_items()) if dpop else None
        ctx.provider.remember_nonce(url, nonce)
        try:
            return sa.parse_token_response(response.status, response.body, now=ctx.provider.clock(), dpop=dpop)
        except sa.OAuthError as exc:
            if not dpop or exc.error != sa.USE_DPOP_NONCE:
                raise
            if sa.should_retry_with_nonce(error=exc.error, nonce=nonce, sent_nonce=sent_nonce, retried=retried):
                log.debug("the token endpoint wants a DPoP nonce; retrying once with it")
                retried = True
                continue
            why = "again after the retry with its nonce" if retried else "without a new nonce in DPoP-Nonce"
            raise sa.OAuthError(sa.USE_DPOP_NONCE, f"{url} demanded a DPoP nonce {why} (RFC 9449 section 8)") from None


def _with_offline(scope: str | None, metadata: dict[str, Any]) -> str | None:
    supported = metadata.get("scopes_supported")
    if isinstance(supported, list) and "offline_access" in supported:
        parts = (scope or "").split()
        if "offline_access" not in parts:
            return " ".join([*parts, "offline_access"])
    return scope


async def authorize(
    ctx: FlowContext,
    challenge: sa.Challenge,
    scope: str | None,
    status: int,
) -> tuple[sa.Tokens, dict[str, Any]]:
    """One full authorization; returns the tokens and how to reach the token endpoint."""
    p = ctx.provider
    found = await discover(ctx, challenge)
    if scope is None:
        scope = sa.select_scope(None, found.prm)
    scope = _with_offline(scope, found.metadata)
    p.remember_scope(scope)
    ident = await identity(ctx, found, scope)
    pkce = sa.Pkce.from_random(p.random(32))
    state = sa.make_state(p.random(16))
    resource = sa.select_resource(found.prm, p.resource)
    url = sa.authorization_url(
        p.url_policy.check(str(found.metadata["authorization_endpoint"]), "authorization endpoint"),
        client_id=ident.client_id,
        redirect_uri=p.redirect_uri,
        pkce=pkce,
        state=state,
        resource=resource,
        scope=scope,
    )
    if p.authorize_callback is None:
        raise sa.OAuthError("access_denied", "no authorize callback was given for the authorization-code grant")
    try:
        redirect = await p.authorize_callback(url)
    except sa.OAuthError:
        raise  # already an OAuth outcome (e.g. the loopback callback timed out): keep its words
    except Exception as exc:
        raise sa.OAuthError("access_denied", f"the authorize callback failed: {type(exc).__name__}") from exc
    code = sa.parse_callback(
        redirect,
        state=state,
        issuer=found.issuer,
        iss_required=found.metadata.get("authorization_response_iss_parameter_supported") is True,
    )
    endpoint = {
        "url": str(found.metadata["token_endpoint"]),
        "client": ident.to_dict(),
        "metadata": {k: found.metadata.get(k) for k in ("token_endpoint_auth_methods_supported",)},
        "resource": resource,
        "issuer": found.issuer,
        "dpop": p.begin_dpop(found.metadata, found.prm),
    }
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": p.redirect_uri,
        "code_verifier": pkce.verifier,
        "resource": resource,
    }
    tokens = await token_call(ctx, endpoint, form)
    if tokens.scope is None:
        tokens.scope = scope
    log.info("obtained an access token from %s", found.issuer)
    return tokens, endpoint


async def client_credentials(
    ctx: FlowContext,
    challenge: sa.Challenge,
    scope: str | None,
) -> tuple[sa.Tokens, dict[str, Any]]:
    """The client-credentials grant: discovery, then one token request (no user, no redirect)."""
    p = ctx.provider
    found = await discover(ctx, challenge, interactive=False)
    if scope is None:
        scope = sa.select_scope(None, found.prm) or p.default_scope
    p.remember_scope(scope)
    ident = await trusted_credentials(ctx, found.issuer)
    if ident is None:
        raise sa.OAuthError("no_client_identity", f"no client credentials are configured for {quote(found.issuer)}")
    resource = sa.select_resource(found.prm, p.resource)
    endpoint = {
        "url": str(found.metadata["token_endpoint"]),
        "client": ident.to_dict(),
        "metadata": {k: found.metadata.get(k) for k in ("token_endpoint_auth_methods_supported",)},
        "resource": resource,
        "issuer": found.issuer,
        "dpop": p.begin_dpop(found.metadata, found.prm),
    }
    tokens = await token_call(ctx, endpoint, sa.client_credentials_form(resource=resource, scope=scope))
    if tokens.scope is None:
        tokens.scope = scope
    log.info("obtained an access token from %s (client credentials)", found.issuer)
    return tokens, endpoint


async def refresh(ctx: FlowContext, tokens: sa.Tokens, endpoint: dict[str, Any]) -> sa.Tokens:
    """The refresh-token grant (the new refresh token, if any, replaces the old)."""
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens.refresh_token or "",
        "resource": str(endpoint.get("resource") or ctx.provider.resource),
    }
    new = await token_call(ctx, endpoint, form)
    if new.scope is None:
        new.scope = tokens.scope
    log.info("refreshed the access token")
    return new
