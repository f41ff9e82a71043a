"""Browserless assertion grants: enterprise-managed authorization (ID-JAG) and workload identity.

Theory of operation
-------------------
Both providers are ``OAuthProvider`` subclasses: the transport, the token
store, expiry and the 401 handling are the base class's; only the step that
gets a token (``_flow``) differs.  The messages are built and checked by
``trimcp._sansio.auth.grants``.

``WorkloadIdentityProvider`` (SEP-1933, RFC 7523 section 2.1): discovery as
for client credentials (protected-resource metadata, then the authorization
server's), then one JWT-bearer request whose ``assertion`` is a JWT from the
workload's platform.  That JWT comes from ``assertion``: a string, a callable
(sync or async; e.g. a cloud metadata endpoint), or ``assertion_from_file``
(a projected service-account token, re-read each time).  A JWT that has
already expired is fetched once more (platforms rotate them); a second
expired one, or one for another audience, is refused before it is sent.

``EnterpriseProvider`` (enterprise-managed authorization): discovery, then an
RFC 8693 token exchange at the enterprise IdP's token endpoint (given, or
found in the IdP's OpenID configuration) trading the user's identity
assertion (``id_token``: an ID token or SAML assertion, or a callable giving
one) for an ID-JAG meant for the authorization server (``audience`` = its
issuer) and the MCP server (``resource``), then the JWT-bearer grant with
the ID-JAG, authenticated with the client's credentials at that server.

A rejected grant is reported as the server's ``OAuthError``; nothing here
retries or falls back to another grant (the scenarios count a second token
request after a failure as a fault).  No token or assertion is logged.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ..._sansio import auth as sa
from ..._sansio.auth import grants as sg
from .flow import Discovered, FlowContext, discover, get_json, request, token_call, trusted_credentials
from .provider import OAuthProvider

__all__ = ["AssertionSource", "EnterpriseProvider", "WorkloadIdentityProvider", "assertion_from_file"]

log = logging.getLogger("trimcp.oauth")

_FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}

#: A JWT, or something that produces one on demand (sync or async).
AssertionSource = str | Callable[[], str | Awaitable[str]]


async def _discover_for_grant(
    provider: OAuthProvider, ctx: FlowContext, challenge: sa.Challenge, scope: str | None
) -> tuple[Discovered, str | None, str]:
    """What both grants start with: browserless discovery, the scope (the challenge's, the
    PRM's or the default; remembered for step-up) and the resource to name."""
    found = await discover(ctx, challenge, interactive=False)
    _warn_grant(found)
    if scope is None:
        scope = sa.select_scope(None, found.prm) or provider.default_scope
    provider.remember_scope(scope)
    return found, scope, sa.select_resource(found.prm, provider.resource)


def assertion_from_file(path: str | trio.Path) -> Callable[[], Awaitable[str]]:
    """An ``AssertionSource`` reading the JWT from ``path`` each time (platforms rotate the file)."""

    async def read() -> str:
        return (await trio.Path(path).read_text(encoding="utf-8")).strip()

    return read


async def _produce(source: AssertionSource, what: str) -> str:
    if isinstance(source, str):
        return source
    try:
        value = source()
        if inspect.isawaitable(value):
            value = await value
    except (OSError, ValueError) as exc:
        raise sa.OAuthError("invalid_grant", f"could not obtain the {what}: {type(exc).__name__}") from None
    if not isinstance(value, str) or not value.strip():
        raise sa.OAuthError("invalid_grant", f"the {what} source gave no token")
    return value.strip()


async def fresh_assertion(source: AssertionSource, *, now: Callable[[], float], audience: str | None, what: str) -> str:
    """A JWT from ``source`` that has not expired (asked for once more if the first had) and fits ``audience``.

    Tokens that are not JWTs (a SAML assertion) are passed through unread.
    """
    token = await _produce(source, what)
    for attempt in (1, 2):
        if token.count(".") != 2:
            return token
        claims = sg.unverified_claims(token)
        try:
            sg.check_assertion(claims, now=now(), audience=audience)
            return token
        except sa.OAuthError as exc:
            if attempt == 2 or exc.description != "the assertion has expired" or isinstance(source, str):
                raise sa.OAuthError(exc.error, f"the {what}: {exc.description}") from None
        log.info("the %s has expired; fetching a new one", what)
        token = await _produce(source, what)
    raise AssertionError("unreachable")  # pragma: no cover


def _endpoint(found: Discovered, ident: sa.ClientIdentity, resource: str) -> dict[str, Any]:
    return {
        "url": str(found.metadata["token_endpoint"]),
        "client": ident.to_dict(),
        "metadata": {k: found.metadata.get(k) for k in ("token_endpoint_auth_methods_supported",)},
        "resource": resource,
        "issuer": found.issuer,
    }


def _warn_grant(found: Discovered) -> None:
    supported = found.metadata.get("grant_types_supported")
    if isinstance(supported, list) and sg.JWT_BEARER_GRANT not in supported:
        log.info("%s does not list the JWT-bearer grant; trying it anyway", found.issuer)


class WorkloadIdentityProvider(OAuthProvider):
    """Workload identity federation: the platform's JWT is the grant (no user, no browser).

    ``assertion``: the workload JWT or its source (see ``AssertionSource``,
    ``assertion_from_file``); its ``aud`` must name the authorization server.
    ``client_id``: sent with the request when the server knows the workload
    by one (``client_secret`` too, when it wants client authentication).
    ``scope``: requested when neither the challenge nor the PRM names one.
    Other keywords are ``OAuthProvider``'s.
    """

    _GRANTS = ("jwt_bearer",)

    def __init__(self, *, assertion: AssertionSource, check_audience: bool = True, **options: Any) -> None:
        super().__init__(grant="jwt_bearer", **options)
        self.assertion_source = assertion
        self.check_audience = check_audience

    def _flow(self, challenge: sa.Challenge, scope: str | None, status: int) -> Callable[[FlowContext], Awaitable[Any]]:
        return lambda ctx: self._workload_grant(ctx, challenge, scope)

    async def _workload_grant(
        self,
        ctx: FlowContext,
        challenge: sa.Challenge,
        scope: str | None,
    ) -> tuple[sa.Tokens, dict[str, Any]]:
        found, scope, resource = await _discover_for_grant(self, ctx, challenge, scope)
        jwt = await fresh_assertion(
            self.assertion_source,
            now=self.clock,
            audience=found.issuer if self.check_audience else None,
            what="workload identity assertion",
        )
        form = sg.jwt_bearer_form(assertion=jwt, scope=scope, resource=resource)
        ident = await trusted_credentials(ctx, found.issuer)
        if ident is not None:
            endpoint = _endpoint(found, ident, resource)
            tokens = await token_call(ctx, endpoint, form)
        else:  # RFC 7523: client authentication is optional; the assertion identifies the workload
            endpoint = _endpoint(found, sa.ClientIdentity("", None, "none"), resource)
            response = await request(
                ctx, "POST", endpoint["url"], what="token endpoint", data=form, headers=_FORM_HEADERS
            )
            tokens = sa.parse_token_response(response.status, response.body, now=self.clock())
            # A refresh would need a client id; a fresh platform JWT is the way to a new token.
            tokens.refresh_token = None
        if tokens.scope is None:
            tokens.scope = scope
        log.info("obtained an access token from %s (workload identity)", found.issuer)
        return tokens, endpoint


class EnterpriseProvider(OAuthProvider):
    """Enterprise-managed authorization: identity assertion -> ID-JAG (IdP) -> access token (AS).

    ``id_token``: the user's identity assertion from single sign-on, or its
    source; ``subject_token_type``: ``"id_token"`` or ``"saml2"``.
    ``idp_token_endpoint`` (or ``idp_issuer``, whose OpenID configuration names
    it): where the token exchange goes; ``idp_client_id`` /
    ``idp_client_secret``: the client at the IdP.  ``client_id`` /
    ``client_secret``: the client at the MCP server's authorization server
    (the ID-JAG names that ``client_id``).  Other keywords are ``OAuthProvider``'s.
    """

    _GRANTS = ("id_jag",)

    def __init__(
        self,
        *,
        id_token: AssertionSource,
        client_id: str,
        subject_token_type: str = "id_token",
        idp_token_endpoint: str | None = None,
        idp_issuer: str | None = None,
        idp_client_id: str | None = None,
        idp_client_secret: str | None = None,
        **options: Any,
    ) -> None:
        if not (idp_token_endpoint or idp_issuer):
            raise ValueError("enterprise-managed authorization needs idp_token_endpoint or idp_issuer")
        sg.subject_token_type_uri(subject_token_type)  # a bad type fails now, not at the first 401
        super().__init__(grant="id_jag", client_id=client_id, **options)
        self.id_token_source = id_token
        self.subject_token_type = subject_token_type
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_issuer = idp_issuer
        self.idp_identity = sa.ClientIdentity(idp_client_id, idp_client_secret) if idp_client_id else None

    def _flow(self, challenge: sa.Challenge, scope: str | None, status: int) -> Callable[[FlowContext], Awaitable[Any]]:
        return lambda ctx: self._enterprise_grant(ctx, challenge, scope)

    def trusted_urls(self) -> tuple[str | None, ...]:
        # The identity provider is the user's choice, like the MCP server: a company IdP on
        # a private address is no peer's trick.
        return (*super().trusted_urls(), self.idp_token_endpoint, self.idp_issuer)

    async def _idp_endpoint(self, ctx: FlowContext) -> str:
        if self.idp_token_endpoint:
            return self.idp_token_endpoint
        assert self.idp_issuer is not None
        urls = sa.as_metadata_urls(self.idp_issuer)
        # An enterprise IdP is an OpenID provider first: its OpenID configuration, then RFC 8414.
        for url in sorted(urls, key=lambda u: "openid-configuration" not in u):
            metadata = await get_json(ctx, url, "identity provider metadata")
            if metadata is not None:
                sa.check_issuer(metadata, self.idp_issuer)
                endpoint = metadata.get("token_endpoint")
                if isinstance(endpoint, str):
                    self.idp_token_endpoint = endpoint
                    return endpoint
        raise sa.DiscoveryError(f"no token endpoint found for the identity provider {self.idp_issuer}")

    async def exchange(self, ctx: FlowContext, *, audience: str, resource: str, scope: str | None) -> str:
        """The RFC 8693 exchange at the IdP; returns the ID-JAG."""
        subject = await fresh_assertion(self.id_token_source, now=self.clock, audience=None, what="identity assertion")
        form = sg.token_exchange_form(
            subject_token=subject,
            subject_token_type=self.subject_token_type,
            audience=audience,
            resource=resource,
            scope=scope,
        )
        headers = dict(_FORM_HEADERS)
        if self.idp_identity is not None:
            method = "client_secret_basic" if self.idp_identity.client_secret else "none"
            form, headers = sa.token_request(form, self.idp_identity, method)
        url = await self._idp_endpoint(ctx)
        response = await request(ctx, "POST", url, what="identity provider token endpoint", data=form, headers=headers)
        issued = sg.parse_token_exchange_response(response.status, response.body, now=self.clock())
        log.info("obtained an ID-JAG from the identity provider")
        return issued.token

    async def _enterprise_grant(
        self,
        ctx: FlowContext,
        challenge: sa.Challenge,
        scope: str | None,
    ) -> tuple[sa.Tokens, dict[str, Any]]:
        found, scope, resource = await _discover_for_grant(self, ctx, challenge, scope)
        ident = await trusted_credentials(ctx, found.issuer)
        if ident is None:
            raise sa.OAuthError("no_client_identity", f"no client credentials are configured for {found.issuer}")
        id_jag = await self.exchange(ctx, audience=found.issuer, resource=resource, scope=scope)
        endpoint = _endpoint(found, ident, resource)
        # The ID-JAG carries the scope and resource; the profile's request is grant_type + assertion.
        tokens = await token_call(ctx, endpoint, sg.jwt_bearer_form(assertion=id_jag))
        if tokens.scope is None:
            tokens.scope = scope
        log.info("obtained an access token from %s (enterprise-managed authorization)", found.issuer)
        return tokens, endpoint
