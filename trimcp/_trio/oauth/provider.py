"""OAuth 2.1 for the Streamable HTTP client: the Trio driver of ``trimcp._sansio.auth``.

Theory of operation
-------------------
An ``OAuthProvider`` is handed to ``open_client(url, auth=provider)`` (or
``open_http_stream``).  The transport asks it for headers before each POST
(``headers``: ``Authorization: Bearer ...`` once there is a token, refreshed
first when it is about to expire) and tells it about every 401 and every 403
(``handle_challenge``); a ``True`` answer means "send the request again".

On a 401 the provider first tries the refresh token, if it has one and the
failed request used the current access token; otherwise, and on a 403 with
``error="insufficient_scope"`` (step-up, the scope widened with the
challenge's), it runs the whole flow (``flow.authorize``):
protected-resource metadata, authorization-server metadata (with the
2025-03-26 fallbacks), a client identity (stored per issuer, so a change of
authorization server means a fresh registration), PKCE + ``state`` +
``resource``, the headless ``authorize`` callback (receives the
authorization URL, returns the redirect URL it ended at), the callback
checks (``state``, RFC 9207 ``iss``) and the token exchange.  The transport
allows at most ``max_attempts`` authorization rounds per request.

With ``grant="client_credentials"`` the whole flow is instead
``flow.client_credentials``: the same discovery, then one token request
authenticated by the client's secret or by a ``private_key_jwt`` assertion
(signed by ``jwt.pem_signer``, the one place that imports ``cryptography``).

DPoP (RFC 9449): when the authorization server advertises
``dpop_signing_alg_values_supported`` with ES256 (and ``dpop`` is ``True``, or
``None`` with the resource's metadata naming DPoP too and ``cryptography``
installed: a Bearer-only resource would refuse a DPoP token), a fresh
P-256 key is made for the authorization and every token request carries a
proof of it.  A ``DPoP`` token is then sent as ``Authorization: DPoP ...``
with a fresh proof (``ath`` bound to the token) on every request
(``proof_headers``); nonces the servers hand out are remembered per origin.
The key lives as long as the tokens it is bound to: it is saved with them in
the store (a PEM under ``_dpop_key``) and replaced only when new tokens come
from a new authorization (a refresh keeps it).

What the provider reaches is bounded (``guarded``): each URL a peer names goes
through ``url_policy`` (https only, except loopback; no private, link-local or
unspecified address unless allowed; checked again on the addresses a name
resolves to), each body is capped at ``max_response_bytes`` and each exchange at
30 s.  Pre-registered credentials (a secret, a signing key) go only to the issuer
named by ``client_issuer``, else to one on the MCP server's own origin, else to
one the ``trust_issuer`` hook accepts.

The flow sees the provider only as ``flow.FlowSettings`` (what it reads and
the two calls it makes back), so ``flow`` does not import this module.

Tokens and client secrets live in a ``TokenStore`` (``store``; in memory by
default), keyed by the canonical server URI (tokens) and by issuer (client
identities).  No token or secret is ever logged or put into an exception
message: only OAuth error codes, URLs and descriptions are.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpx
import trio

from ..._sansio import auth as sa
from .flow import FlowContext, authorize, client_credentials, refresh
from .guarded import DEFAULT_MAX_BYTES, guarded_client
from .jwt import DpopKey, dpop_available
from .store import MemoryStore, TokenStore

__all__ = ["AuthorizeCallback", "OAuthProvider", "TokenStore"]

log = logging.getLogger("trimcp.oauth")

#: Receives the authorization URL; returns the redirect URL the user agent ended at.
AuthorizeCallback = Callable[[str], Awaitable[str]]


class OAuthProvider:
    """Authorization for one MCP server URL (bound by the transport).

    Subclasses adding a grant (``grants``) extend ``_GRANTS`` and ``_flow``.

    ``authorize``: the headless user agent (see ``AuthorizeCallback``); not
    needed with ``grant="client_credentials"`` (machine to machine: no user,
    no browser), which needs ``client_id`` and either ``client_secret``
    (``client_secret_basic``/``_post``) or ``private_key_pem`` (``private_key_jwt``:
    an RFC 7523 assertion signed with ``signing_algorithm``, inferred from the
    key type, via the optional ``cryptography`` package).  ``scope``: what the
    client-credentials grant asks for when neither challenge nor PRM names one.
    ``client_id`` / ``client_secret`` / ``token_endpoint_auth_method``:
    pre-registered credentials (optionally only for ``client_issuer``).
    ``dpop``: DPoP-bound tokens (RFC 9449) when the authorization server
    offers them (``True``); ``None``: only when the protected resource's metadata
    also asks for them and ``cryptography`` is installed; ``False``: never.
    ``client_metadata_url``: an https Client ID Metadata Document URL, used
    when the authorization server supports them.  ``revision``: the protocol
    revision the client speaks (2026-07-28 registration wants
    ``application_type``).  ``url_policy`` (a ``UrlPolicy``): what the flow may reach;
    the default refuses plain http beyond loopback and private or link-local
    addresses (``UrlPolicy(allow_private=True)`` for an authorization server on the
    company network).  ``max_response_bytes``: the cap on any metadata, registration
    or token answer (1 MiB).  ``trust_issuer``: ``(issuer) -> bool`` (sync or async),
    asked before the pre-registered credentials go to an issuer that ``client_issuer``
    does not name and that is not on the MCP server's origin.  ``random`` and
    ``clock`` are injectable for tests.
    """

    #: The grants this class knows how to run (see ``_flow``).
    _GRANTS: tuple[str, ...] = ("authorization_code", "client_credentials")

    def __init__(
        self,
        *,
        authorize: AuthorizeCallback | None = None,
        grant: str = "authorization_code",
        redirect_uri: str = "http://127.0.0.1:33418/callback",
        client_id: str | None = None,
        client_secret: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_issuer: str | None = None,
        private_key_pem: str | bytes | None = None,
        signing_algorithm: str | None = None,
        assertion_lifetime: int = 60,
        scope: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "trimcp",
        revision: str | None = None,
        store: TokenStore | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_attempts: int = 3,
        dpop: bool | None = None,
        url_policy: sa.UrlPolicy | None = None,
        max_response_bytes: int = DEFAULT_MAX_BYTES,
        trust_issuer: Callable[[str], bool | Awaitable[bool]] | None = None,
        random: Callable[[int], bytes] = secrets.token_bytes,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if grant not in self._GRANTS:
            raise ValueError(f"unsupported grant {grant!r}")
        if grant == "authorization_code" and authorize is None:
            raise ValueError("the authorization-code grant needs an authorize callback")
        if grant == "client_credentials" and not (client_id and (client_secret or private_key_pem)):
            raise ValueError("the client-credentials grant needs client_id and client_secret or private_key_pem")
        self.authorize_callback = authorize
        self.grant = grant
        self.redirect_uri = redirect_uri
        if private_key_pem is not None and token_endpoint_auth_method in (None, "private_key_jwt"):
            token_endpoint_auth_method = "private_key_jwt"
            client_secret = None  # the key authenticates the client; a secret is not sent as well
        self.pre_registered = (
            sa.ClientIdentity(client_id, client_secret, token_endpoint_auth_method) if client_id else None
        )
        self._signer: tuple[str, sa.Signer] | None = None
        if private_key_pem is not None:
            from .jwt import pem_signer  # imports 'cryptography' only now

            self._signer = pem_signer(private_key_pem, signing_algorithm)
        self.assertion_lifetime = assertion_lifetime
        #: Requested by the client-credentials grant when neither the challenge nor the PRM names a scope.
        self.default_scope = scope
        self.client_issuer = client_issuer
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.revision = revision
        self.store: TokenStore = store if store is not None else MemoryStore()
        self.http_client = http_client
        self.max_attempts = max_attempts
        self.random = random
        self.clock = clock
        self.base_url_policy = url_policy if url_policy is not None else sa.UrlPolicy()
        self.max_response_bytes = max_response_bytes
        self.trust_issuer = trust_issuer
        #: DPoP: ``None`` when the AS offers it and ``cryptography`` is installed, ``True``
        #: whenever the AS offers it, ``False`` never.
        self.dpop = dpop
        self._dpop_key: DpopKey | None = None  # bound to the current tokens
        self._pending_key: DpopKey | None = None  # made for the authorization under way
        self._nonces = sa.Nonces()
        self.server_url: str | None = None
        #: Bumped whenever the access token changes (the transport compares it).
        self.generation = 0
        self._tokens: sa.Tokens | None = None
        self._loaded = False
        self._scope: str | None = None
        self._token_endpoint: dict[str, Any] | None = None
        self._lock = trio.Lock()

    def client_assertion(self, audience: str) -> str:
        """A fresh signed RFC 7523 client assertion for ``audience`` (``private_key_jwt``)."""
        if self._signer is None or self.pre_registered is None:
            raise sa.OAuthError("invalid_client", "private_key_jwt needs a configured private key")
        alg, sign = self._signer
        claims = sa.assertion_claims(
            client_id=self.pre_registered.client_id,
            audience=audience,
            now=self.clock(),
            jti=self.random(16),
            lifetime=self.assertion_lifetime,
        )
        return sa.sign_assertion(claims, alg=alg, sign=sign)

    def __repr__(self) -> str:
        return f"<OAuthProvider for {self.server_url!r}, generation {self.generation}>"

    def bind(self, server_url: str) -> None:
        """The MCP server URL this provider authorizes for (set by the transport)."""
        self.server_url = server_url

    @property
    def url_policy(self) -> sa.UrlPolicy:
        """``base_url_policy`` with the URLs the user configured trusted (``trusted_urls``)."""
        return self.base_url_policy.trusting(*self.trusted_urls())

    def trusted_urls(self) -> tuple[str | None, ...]:
        """URLs the user configured, whose origins the policy lets through (subclasses add theirs)."""
        return (self.server_url,)

    @property
    def resource(self) -> str:
        if self.server_url is None:
            raise RuntimeError("OAuthProvider is not bound to a server URL")
        return sa.canonical_resource(self.server_url)

    async def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            stored = await self.store.load(f"tokens:{self.resource}")
            if stored:
                self._tokens = sa.Tokens.from_dict(stored)
                self._scope = self._tokens.scope
                self._token_endpoint = stored.get("_endpoint")
                pem = stored.get("_dpop_key")
                self._dpop_key = DpopKey.from_pem(pem) if isinstance(pem, str) else None
                self.generation += 1

    async def _set_tokens(
        self,
        tokens: sa.Tokens | None,
        endpoint: dict[str, Any] | None,
        dpop_key: DpopKey | None = None,
    ) -> None:
        """New tokens (and the DPoP key they are bound to, kept with them)."""
        self._tokens = tokens
        self._token_endpoint = endpoint
        self._dpop_key = dpop_key if tokens is not None and (endpoint or {}).get("dpop") is True else None
        self.generation += 1
        key = f"tokens:{self.resource}"
        if tokens is None:
            await self.store.delete(key)
        else:
            record: dict[str, Any] = {**tokens.to_dict(), "_endpoint": endpoint}
            if self._dpop_key is not None:
                record["_dpop_key"] = self._dpop_key.to_pem()
            await self.store.save(key, record)

    async def stored_tokens(self) -> sa.Tokens | None:
        """The tokens the store holds for the bound server (``None``: not authorized yet)."""
        async with self._lock:
            await self._load()
            return self._tokens

    async def forget(self) -> bool:
        """Delete the bound server's tokens from the store; whether there were any."""
        async with self._lock:
            await self._load()
            had = self._tokens is not None
            await self._set_tokens(None, None)
            return had

    async def headers(self) -> list[tuple[str, str]]:
        """``Authorization`` for the next request (refreshing an expiring token first)."""
        async with self._lock:
            await self._load()
            tokens = self._tokens
            if tokens is not None and tokens.expired(self.clock()) and tokens.refresh_token:
                await self._try_refresh()
            tokens = self._tokens
        return [("Authorization", sa.authorization_value(tokens.token_type, tokens.access_token))] if tokens else []

    # -- DPoP (RFC 9449) ----------------------------------------------------------------

    def begin_dpop(self, as_metadata: dict[str, Any], prm: dict[str, Any] | None) -> bool:
        """A new authorization: a fresh key when it is to use DPoP (``True``), else none."""
        self._pending_key = None
        if self.dpop is False or not sa.supports_dpop(as_metadata, "ES256"):
            return False
        if self.dpop is None and not (sa.resource_wants_dpop(prm, "ES256") and dpop_available()):
            return False
        self._pending_key = DpopKey.generate()
        return True

    def _proof(self, key: DpopKey, method: str, url: str, access_token: str | None) -> tuple[str, str | None]:
        nonce = self._nonces.get(url)
        claims = sa.proof_claims(
            method=method, url=url, now=self.clock(), jti=self.random(16), nonce=nonce, access_token=access_token
        )
        return sa.sign_proof(claims, alg=key.alg, jwk=key.jwk, sign=key.sign), nonce

    def token_proof(self, url: str) -> tuple[str, str | None]:
        """A proof for a token request (the new authorization's key, else the tokens' for a refresh)."""
        key = self._pending_key or self._dpop_key
        if key is None:
            raise sa.OAuthError("invalid_dpop_proof", "no DPoP key for this token request")
        return self._proof(key, "POST", url, None)

    def remember_nonce(self, url: str, nonce: str | None) -> None:
        self._nonces.remember(url, nonce)

    def proof_headers(self, method: str, url: str, authorization: str | None) -> list[tuple[str, str]]:
        """The ``DPoP`` header for a request sent with ``authorization`` (none for a Bearer token)."""
        if authorization is None or self._dpop_key is None:
            return []
        scheme, _, token = authorization.partition(" ")
        if scheme != "DPoP" or not token:
            return []
        return [("DPoP", self._proof(self._dpop_key, method, url, token)[0])]

    @property
    def uses_dpop(self) -> bool:
        """Whether the current tokens are DPoP-bound."""
        return self._dpop_key is not None and self._tokens is not None and self._tokens.token_type == "DPoP"

    def wants(self, www_authenticate: Iterable[str], status: int) -> bool:
        """Is this 401/403 one to authorize for (a 403 only with ``insufficient_scope``)?"""
        if status == 401:
            return True
        challenge = sa.bearer_challenge(www_authenticate) or sa.dpop_challenge(www_authenticate)
        return status == 403 and challenge is not None and challenge.error == "insufficient_scope"

    async def handle_challenge(self, status: int, www_authenticate: Iterable[str], generation: int) -> bool:
        """React to a 401/403; ``True``: retry the request (with fresh ``headers()``)."""
        challenge = (
            sa.bearer_challenge(www_authenticate) or sa.dpop_challenge(www_authenticate) or sa.Challenge("Bearer")
        )
        if status == 403 and challenge.error != "insufficient_scope":
            return False
        async with self._lock:
            await self._load()
            if generation != self.generation:
                return True  # someone else already got a new token meanwhile
            refreshable = status == 401 and self._tokens is not None and self._tokens.refresh_token
            if refreshable and await self._try_refresh():
                return True
            scope = challenge.scope
            if status == 403:
                scope = _union(self._scope, challenge.scope)
            log.info("authorizing with %s (HTTP %d from the MCP server)", self.server_url, status)
            try:
                tokens, endpoint = await self._run(self._flow(challenge, scope, status))
            except httpx.HTTPError as exc:
                raise sa.OAuthError(
                    "server_error", f"{type(exc).__name__} talking to the authorization server"
                ) from None
            finally:
                pending, self._pending_key = self._pending_key, None
            await self._set_tokens(tokens, endpoint, pending)
            return True

    def _flow(self, challenge: sa.Challenge, scope: str | None, status: int) -> Callable[[FlowContext], Awaitable[Any]]:
        """The authorization step of ``self.grant``; returns ``(tokens, endpoint)``."""
        if self.grant == "client_credentials":
            return lambda ctx: client_credentials(ctx, challenge, scope)
        return lambda ctx: authorize(ctx, challenge, scope, status)

    async def _try_refresh(self) -> bool:
        tokens, endpoint = self._tokens, self._token_endpoint
        if tokens is None or not tokens.refresh_token or endpoint is None:
            return False
        self._pending_key = None  # a refresh proves the key the tokens are bound to
        try:
            new = await self._run(lambda ctx: refresh(ctx, tokens, endpoint))
        except (sa.OAuthError, httpx.HTTPError) as exc:
            log.info(
                "refreshing the access token failed (%s); authorizing afresh",
                type(exc).__name__ if not isinstance(exc, sa.OAuthError) else exc.error,
            )
            await self._set_tokens(None, None)
            return False
        if new.refresh_token is None:
            new.refresh_token = tokens.refresh_token
        await self._set_tokens(new, endpoint, self._dpop_key)
        return True

    async def _run(self, step: Callable[[FlowContext], Awaitable[Any]]) -> Any:
        if self.http_client is not None:
            return await step(FlowContext(self, self.http_client))
        async with guarded_client(self.url_policy) as client:
            return await step(FlowContext(self, client))

    def remember_scope(self, scope: str | None) -> None:
        self._scope = scope


def _union(a: str | None, b: str | None) -> str | None:
    out: list[str] = []
    for part in f"{a or ''} {b or ''}".split():
        if part not in out:
            out.append(part)
    return " ".join(out) or None
