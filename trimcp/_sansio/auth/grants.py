"""Assertion grants without a browser: token exchange (RFC 8693) and JWT bearer (RFC 7523 section 2.1).

Theory of operation
-------------------
Two MCP authorization extensions get an access token with no user agent:

* Enterprise-managed authorization (``io.modelcontextprotocol/enterprise-managed-authorization``,
  the Identity Assertion JWT Authorization Grant, "ID-JAG"): the client holds an
  identity assertion from the enterprise IdP (an OpenID Connect ID token or a
  SAML assertion).  ``token_exchange_form`` is the RFC 8693 request to the
  IdP's token endpoint asking for an ID-JAG (``requested_token_type``
  ``...:id-jag``) whose ``audience`` is the MCP server's authorization server
  (its issuer) and whose ``resource`` is the MCP server.
  ``parse_token_exchange_response`` accepts only what the profile says comes
  back: ``issued_token_type`` ``...:id-jag``, the grant in ``access_token``
  (for historical reasons), ``token_type`` ``N_A``.  The ID-JAG then goes to
  the authorization server in a JWT-bearer grant.
* Workload identity federation (``io.modelcontextprotocol/auth/wif``): the
  client presents a JWT its platform issued to the workload directly as the
  JWT-bearer ``assertion``.

``jwt_bearer_form`` is that RFC 7523 section 2.1 request (``grant_type``
``...:jwt-bearer``, one ``assertion``); client authentication is added by
``flow.token_request`` and the answer parsed by ``flow.parse_token_response``.

The client cannot verify an assertion's signature (it holds no key) and
need not: ``unverified_claims`` only reads the payload, so that
``check_assertion`` can refuse to send one that has already expired or names
another audience, failures the authorization server would only answer with
``invalid_grant``.  Nothing here retries: a rejected grant is an
``OAuthError`` for the caller.  No token or assertion enters a message.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .flow import OAuthError, parse_token_response

__all__ = [
    "ID_JAG",
    "JWT_BEARER_GRANT",
    "SUBJECT_TOKEN_TYPES",
    "TOKEN_EXCHANGE_GRANT",
    "IssuedToken",
    "check_assertion",
    "jwt_bearer_form",
    "parse_token_exchange_response",
    "subject_token_type_uri",
    "token_exchange_form",
    "unverified_claims",
]

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: The token type of an Identity Assertion JWT Authorization Grant.
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
#: Short names of the identity assertions an IdP exchanges (RFC 8693 section 3).
SUBJECT_TOKEN_TYPES = {
    "id_token": "urn:ietf:params:oauth:token-type:id_token",
    "saml2": "urn:ietf:params:oauth:token-type:saml2",
}


def subject_token_type_uri(kind: str) -> str:
    """The RFC 8693 URI of a subject token type (``id_token``, ``saml2``, or the URI itself)."""
    if kind in SUBJECT_TOKEN_TYPES:
        return SUBJECT_TOKEN_TYPES[kind]
    if kind in SUBJECT_TOKEN_TYPES.values():
        return kind
    raise ValueError(f"unsupported subject token type {kind!r} (id_token or saml2)")


def token_exchange_form(
    *,
    subject_token: str,
    subject_token_type: str = "id_token",
    audience: str,
    resource: str,
    scope: str | None = None,
) -> dict[str, str]:
    """The RFC 8693 request for an ID-JAG (before client authentication at the IdP)."""
    if not subject_token:
        raise OAuthError("invalid_request", "the token exchange needs an identity assertion (subject_token)")
    if not audience or not resource:
        raise OAuthError("invalid_request", "the token exchange needs the authorization server and the resource")
    form = {
        "grant_type": TOKEN_EXCHANGE_GRANT,
        "requested_token_type": ID_JAG,
        "audience": audience,
        "resource": resource,
        "subject_token": subject_token,
        "subject_token_type": subject_token_type_uri(subject_token_type),
    }
    if scope:
        form["scope"] = scope
    return form


@dataclass(frozen=True)
class IssuedToken:
    """A token-exchange answer: the issued token (kept out of ``repr``) and its type."""

    token: str = field(repr=False)
    issued_token_type: str
    scope: str | None = None
    expires_at: float | None = None


def parse_token_exchange_response(
    status: int,
    body: bytes,
    *,
    now: float,
    expected_type: str = ID_JAG,
) -> IssuedToken:
    """The issued token of an RFC 8693 answer, or ``OAuthError``."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or status != 200 or "error" in data:
        parse_token_response(status, body, now=now)  # raises the answer's OAuthError
        raise OAuthError("invalid_response", f"the token exchange answered {status}")  # pragma: no cover
    issued = data.get("issued_token_type")
    if issued != expected_type:
        raise OAuthError("invalid_response", f"the token exchange issued {issued!r}, not {expected_type}")
    token = data.get("access_token")
    if not isinstance(token, str) or not token:
        raise OAuthError("invalid_response", "the token exchange response has no access_token")
    token_type = data.get("token_type")
    # An ID-JAG is not an access token: the profile says N_A; anything else is a confused IdP.
    if expected_type == ID_JAG and (not isinstance(token_type, str) or token_type.upper() != "N_A"):
        raise OAuthError("invalid_response", f"an ID-JAG's token_type must be N_A, not {token_type!r}")
    expires = data.get("expires_in")
    expires_at = None
    if isinstance(expires, (int, float)) and not isinstance(expires, bool) and math.isfinite(expires):
        expires_at = now + float(expires)
    scope = data.get("scope")
    return IssuedToken(token, issued, scope if isinstance(scope, str) else None, expires_at)


def jwt_bearer_form(*, assertion: str, scope: str | None = None, resource: str | None = None) -> dict[str, str]:
    """The RFC 7523 section 2.1 grant: one JWT as ``assertion`` (before client authentication)."""
    if not assertion:
        raise OAuthError("invalid_request", "the JWT-bearer grant needs an assertion")
    form = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion}
    if scope:
        form["scope"] = scope
    if resource:
        form["resource"] = resource
    return form


def unverified_claims(jwt: str) -> dict[str, Any]:
    """The payload of a compact JWS, signature not checked (the client holds no key)."""
    parts = jwt.split(".")
    if len(parts) != 3:
        raise OAuthError("invalid_grant", "the assertion is not a compact JWT")
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
    except (ValueError, UnicodeError, RecursionError):
        raise OAuthError("invalid_grant", "the assertion's payload is not base64url JSON") from None
    if not isinstance(claims, dict):
        raise OAuthError("invalid_grant", "the assertion's payload is not a JSON object")
    return claims


def _strip(url: str) -> str:
    return url.rstrip("/")


def check_assertion(
    claims: Mapping[str, Any],
    *,
    now: float,
    audience: str | None = None,
    leeway: float = 0.0,
) -> None:
    """Refuse an assertion that has expired or is for another audience (``OAuthError``).

    The audience comparison ignores one trailing slash, as issuers are
    written both ways; a missing ``exp`` or ``aud`` is the server's to judge.
    """
    exp = claims.get("exp")
    if isinstance(exp, (int, float)) and not isinstance(exp, bool) and now >= exp - leeway:
        raise OAuthError("invalid_grant", "the assertion has expired")
    aud = claims.get("aud")
    if audience is not None and aud is not None:
        names = aud if isinstance(aud, list) else [aud]
        if _strip(audience) not in {_strip(a) for a in names if isinstance(a, str)}:
            raise OAuthError("invalid_grant", f"the assertion is not for the authorization server {audience}")
