"""The authorization-code grant with PKCE, as pure functions.

Theory of operation
-------------------
Randomness comes in as bytes (``Pkce.from_random``, ``make_state``), the
clock as a number, so every function here is deterministic and testable.

* ``select_scope``: the challenge's ``scope``; else every ``scopes_supported``
  of the PRM; else nothing (the ``scope`` parameter is then omitted).
* ``select_resource``: the PRM's ``resource`` as published, else the server's
  own URL (RFC 8707; every grant names the same one).
* ``choose_identity``: pre-registered credentials; else a Client ID Metadata
  Document URL when the server sets ``client_id_metadata_document_supported``;
  else Dynamic Client Registration when there is a ``registration_endpoint``
  (``registration_body``; 2026-07-28 wants ``application_type``); else an
  error asking the user for credentials.
* ``authorization_url`` builds the front-channel URL (``response_type=code``,
  PKCE ``S256``, ``state``, ``resource``, optional ``scope``);
  ``parse_callback`` checks the redirect: an ``error`` fails, ``state`` must
  match, and ``iss`` (RFC 9207) must equal the issuer whenever it is present,
  and must be present when the server advertises
  ``authorization_response_iss_parameter_supported``.
* ``token_request`` builds the form and headers of a token request for the
  client's auth method (``client_secret_basic``, ``client_secret_post``,
  ``private_key_jwt`` with a signed assertion, ``none``); ``parse_token_response`` turns the answer into ``Tokens`` or an
  ``OAuthError`` (non-standard refresh-failure codes become ``invalid_grant``;
  a 200 carrying ``error`` is a failure).

Secrets and tokens never enter a ``repr`` or an exception message.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from ..._errors import AuthError
from ..bounded.echo import clip
from ..revisions import REVISIONS
from .assertion import JWT_BEARER_ASSERTION
from .discovery import canonical_resource, origin

__all__ = [
    "ClientIdentity",
    "CredentialsDecision",
    "OAuthError",
    "Pkce",
    "Tokens",
    "authorization_url",
    "choose_auth_method",
    "choose_identity",
    "credentials_destination",
    "make_state",
    "parse_callback",
    "parse_token_response",
    "registration_body",
    "select_resource",
    "select_scope",
    "token_request",
]

_REFRESH_FAILURES = frozenset({"invalid_refresh_token", "expired_refresh_token", "token_expired"})


class OAuthError(AuthError):
    """An OAuth step failed; ``error`` is the (normalised) OAuth error code."""

    def __init__(self, error: str, description: str | None = None) -> None:
        # Both may come from the authorization server: cut and escaped before they reach
        # a message, a log line or a terminal (an error_description of 300 MB, or ANSI).
        self.error = clip(error, 100)
        self.description = clip(description, 500) if description is not None else None
        super().__init__(f"{self.error}: {self.description}" if self.description else self.error)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Pkce:
    """A PKCE verifier and its S256 challenge (RFC 7636)."""

    verifier: str = field(repr=False)
    challenge: str
    method: str = "S256"

    @classmethod
    def from_random(cls, random: bytes) -> Pkce:
        """From 32+ random bytes: a 43+ character verifier."""
        if len(random) < 32:
            raise ValueError("PKCE needs at least 32 random bytes")
        verifier = _b64url(random)[:128]
        return cls(verifier, _b64url(hashlib.sha256(verifier.encode("ascii")).digest()))


def make_state(random: bytes) -> str:
    return _b64url(random)


@dataclass
class ClientIdentity:
    """How the client identifies itself to one authorization server."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str | None = None
    #: "pre-registered", "cimd" or "dcr"
    source: str = "pre-registered"

    def to_dict(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "auth_method": self.auth_method,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClientIdentity:
        return cls(
            str(data["client_id"]),
            data.get("client_secret"),
            data.get("auth_method"),
            str(data.get("source") or "pre-registered"),
        )


@dataclass
class Tokens:
    """A token response; the token strings are kept out of ``repr``."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None

    def expired(self, now: float, leeway: float = 30.0) -> bool:
        return self.expires_at is not None and now >= self.expires_at - leeway

    def to_dict(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scope": self.scope,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Tokens:
        return cls(
            str(data["access_token"]),
            str(data.get("token_type") or "Bearer"),
            data.get("refresh_token"),
            data.get("expires_at"),
            data.get("scope"),
        )


def select_resource(prm: Mapping[str, Any] | None, fallback: str) -> str:
    """The RFC 8707 ``resource`` to name: the protected resource metadata's exactly as
    published (discovery checked that it covers the server), else ``fallback``."""
    published = (prm or {}).get("resource")
    return published if isinstance(published, str) and published else fallback


def select_scope(challenge_scope: str | None, prm: Mapping[str, Any] | None) -> str | None:
    if challenge_scope:
        return challenge_scope
    supported = (prm or {}).get("scopes_supported")
    if isinstance(supported, list) and supported:
        return " ".join(str(s) for s in supported)
    return None


CredentialsDecision = Literal["send", "withhold", "ask"]


def credentials_destination(
    issuer: str,
    *,
    configured_issuer: str | None,
    server_url: str | None,
) -> CredentialsDecision:
    """May the pre-registered client credentials (a secret, a signing key) go to ``issuer``?

    ``send``: they were configured for this issuer (``client_issuer``), or none was named
    and the issuer is on the MCP server's own origin.  ``withhold``: they were configured
    for another issuer (the flow goes on without them).  ``ask``: none was named and the
    issuer is elsewhere: only the host (a ``trust_issuer`` hook) may say yes.  The PRM
    names the issuer, so without this rule any server could collect the client's secret.
    """
    if configured_issuer is not None:
        return "send" if issuer == configured_issuer else "withhold"
    if server_url is not None:
        try:
            same = origin(canonical_resource(issuer)) == origin(canonical_resource(server_url))
        except ValueError:
            same = False
        if same:
            return "send"
    return "ask"


def choose_identity(
    as_metadata: Mapping[str, Any],
    *,
    pre_registered: ClientIdentity | None,
    metadata_url: str | None,
) -> str:
    """Which way to get a client identity: ``pre-registered``, ``cimd`` or ``dcr``."""
    if pre_registered is not None:
        return "pre-registered"
    if metadata_url and as_metadata.get("client_id_metadata_document_supported") is True:
        if not metadata_url.startswith("https://"):
            raise OAuthError("invalid_client_metadata", "a Client ID Metadata Document URL must be https")
        return "cimd"
    if as_metadata.get("registration_endpoint"):
        return "dcr"
    raise OAuthError(
        "no_client_identity",
        "the authorization server offers neither Client ID Metadata Documents nor Dynamic Client "
        "Registration; give pre-registered client credentials",
    )


def choose_auth_method(as_metadata: Mapping[str, Any], has_secret: bool, registered: str | None = None) -> str:
    """The token-endpoint auth method: the registered one, else the best advertised one."""
    if registered:
        return registered
    if not has_secret:
        return "none"
    supported = as_metadata.get("token_endpoint_auth_methods_supported")
    if not isinstance(supported, list) or not supported:
        return "client_secret_basic"  # RFC 8414 default
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "none" if "none" in supported else "client_secret_basic"


def registration_body(
    *,
    client_name: str,
    redirect_uri: str,
    scope: str | None,
    revision: str | None,
    as_metadata: Mapping[str, Any],
    application_type: str = "native",
) -> dict[str, Any]:
    """An RFC 7591 registration request."""
    supported = as_metadata.get("token_endpoint_auth_methods_supported")
    method = "client_secret_basic"
    if isinstance(supported, list) and supported and method not in supported:
        method = "client_secret_post" if "client_secret_post" in supported else str(supported[0])
    body: dict[str, Any] = {
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    if scope:
        body["scope"] = scope
    # (No revision, or one the table does not know: the newest rules.)
    row = REVISIONS.get(revision) if revision is not None else None
    if row is None or row.registers_application_type:
        body["application_type"] = application_type
    return body


def authorization_url(
    endpoint: str,
    *,
    client_id: str,
    redirect_uri: str,
    pkce: Pkce,
    state: str,
    resource: str,
    scope: str | None,
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": pkce.method,
        "state": state,
        "resource": resource,
    }
    if scope:
        params["scope"] = scope
    sep = "&" if urlsplit(endpoint).query else "?"
    return endpoint + sep + urlencode(params, quote_via=quote)


def parse_callback(redirect: str, *, state: str, issuer: str, iss_required: bool) -> str:
    """The authorization code from the redirect URL, after the ``state`` / ``iss`` checks."""
    query = parse_qs(urlsplit(redirect).query, keep_blank_values=True)

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    iss = one("iss")
    if iss is not None and iss != issuer:
        raise OAuthError("invalid_issuer", "the authorization response came from another issuer (RFC 9207)")
    if iss is None and iss_required:
        raise OAuthError("invalid_issuer", "the authorization response lacks the advertised iss (RFC 9207)")
    if one("state") != state:
        raise OAuthError("invalid_state", "the authorization response's state does not match")
    error = one("error")
    if error:
        raise OAuthError(error, one("error_description"))
    code = one("code")
    if not code:
        raise OAuthError("invalid_response", "the authorization response carries no code")
    return code


def token_request(
    form: dict[str, str],
    identity: ClientIdentity,
    method: str,
    *,
    assertion: str | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """``(form, headers)`` of a token request authenticated by ``method``.

    ``private_key_jwt`` needs the signed ``assertion`` (see ``assertion.sign_assertion``).
    """
    form = dict(form)
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if method == "private_key_jwt":
        if assertion is None:
            raise OAuthError("invalid_client", "private_key_jwt needs a signed client assertion")
        form["client_id"] = identity.client_id
        form["client_assertion_type"] = JWT_BEARER_ASSERTION
        form["client_assertion"] = assertion
    elif method == "client_secret_basic" and identity.client_secret is not None:
        raw = f"{quote(identity.client_id, safe='')}:{quote(identity.client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(raw.encode()).decode("ascii")
    elif method == "client_secret_post" and identity.client_secret is not None:
        form["client_id"] = identity.client_id
        form["client_secret"] = identity.client_secret
    else:
        form["client_id"] = identity.client_id
    return form, headers


def parse_token_response(status: int, body: bytes, *, now: float, dpop: bool = False) -> Tokens:
    """``Tokens`` from a token endpoint answer, or raise ``OAuthError``.

    ``dpop``: the request carried a DPoP proof, so ``token_type`` may be
    ``DPoP`` (RFC 9449 section 5) as well as ``Bearer``.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the stack
        data = None
    if not isinstance(data, dict):
        raise OAuthError("invalid_response", f"the token endpoint answered {status} without a JSON object")
    error = data.get("error")
    if error is not None or status != 200:
        code = str(error or "invalid_response")
        if code in _REFRESH_FAILURES:
            code = "invalid_grant"
        desc = data.get("error_description")
        raise OAuthError(code, str(desc) if isinstance(desc, str) else f"HTTP {status}")
    access = data.get("access_token")
    token_type = data.get("token_type", "Bearer")
    if not isinstance(access, str) or not access:
        raise OAuthError("invalid_response", "the token response has no access_token")
    kinds = ("bearer", "dpop") if dpop else ("bearer",)
    if not isinstance(token_type, str) or token_type.lower() not in kinds:
        raise OAuthError(
            "invalid_response", "the token response's token_type is not " + ("Bearer or DPoP" if dpop else "Bearer")
        )
    token_type = "DPoP" if token_type.lower() == "dpop" else "Bearer"
    expires = data.get("expires_in")
    expires_at: float | None = None
    if isinstance(expires, (int, float)) and not isinstance(expires, bool):
        try:
            expires_at = now + float(expires)
        except OverflowError:
            expires_at = None
        if expires_at is not None and not math.isfinite(expires_at):
            expires_at = None
    refresh = data.get("refresh_token")
    scope = data.get("scope")
    return Tokens(
        access,
        token_type,
        refresh if isinstance(refresh, str) else None,
        expires_at,
        scope if isinstance(scope, str) else None,
    )
