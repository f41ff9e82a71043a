"""JWT client assertions (RFC 7523 section 2.2) and the client-credentials grant, as pure functions.

Theory of operation
-------------------
A client authenticating with ``private_key_jwt`` proves possession of its
private key by sending a short-lived signed JWT at the token endpoint
(``client_assertion``, with ``client_assertion_type`` naming the JWT-bearer
profile).  Everything but the signature itself is computed here:

* ``assertion_claims``: ``iss`` and ``sub`` are the client id, ``aud`` the
  authorization server (its issuer identifier, a single string, as the
  RFC 7523 update recommends against audience confusion), ``jti`` a fresh
  random identifier, ``iat`` now and ``exp`` shortly after.
* ``signing_input`` is ``base64url(header) "." base64url(claims)``;
  ``sign_assertion`` hands it to a *signer* callable (bytes in, the raw JWS
  signature out) and assembles the compact serialization.  The signer lives
  in the I/O layer (``trimcp._trio.oauth.jwt``), so this module needs no
  cryptography library, no clock and no randomness of its own.
* ``client_credentials_form`` is the form of the ``client_credentials``
  grant (OAuth 2.1 section 4.2): no user and no redirect, just ``resource``
  and the optional ``scope``.

Key material never reaches a ``repr`` or an exception message.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "JWT_BEARER_ASSERTION",
    "SUPPORTED_ALGORITHMS",
    "Signer",
    "assertion_claims",
    "client_credentials_form",
    "sign_assertion",
    "signing_input",
]

#: ``client_assertion_type`` of RFC 7523 client authentication.
JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

#: The JWS algorithms the bundled signer can produce.
SUPPORTED_ALGORITHMS = ("ES256", "ES384", "RS256", "EdDSA")

#: Signs the JWS signing input; returns the raw signature (ECDSA as ``r || s``).
Signer = Callable[[bytes], bytes]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _compact_json(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(obj), separators=(",", ":"), sort_keys=True).encode("utf-8")


def assertion_claims(
    *,
    client_id: str,
    audience: str,
    now: float,
    jti: bytes,
    lifetime: int = 60,
) -> dict[str, Any]:
    """The claims of a client assertion (``jti`` from 16+ random bytes)."""
    if len(jti) < 16:
        raise ValueError("a client assertion's jti needs at least 16 random bytes")
    if lifetime <= 0:
        raise ValueError("a client assertion's lifetime must be positive")
    issued = int(now)
    return {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "jti": _b64url(jti),
        "iat": issued,
        "exp": issued + lifetime,
    }


def signing_input(header: Mapping[str, Any], claims: Mapping[str, Any]) -> bytes:
    """``base64url(header) "." base64url(claims)``, the bytes a JWS signs."""
    return f"{_b64url(_compact_json(header))}.{_b64url(_compact_json(claims))}".encode("ascii")


def sign_assertion(claims: Mapping[str, Any], *, alg: str, sign: Signer, kid: str | None = None) -> str:
    """The compact JWS of ``claims`` signed by ``sign`` under algorithm ``alg``."""
    if alg not in SUPPORTED_ALGORITHMS:
        raise ValueError(f"unsupported client assertion algorithm {alg!r}")
    header: dict[str, Any] = {"alg": alg, "typ": "JWT"}
    if kid is not None:
        header["kid"] = kid
    data = signing_input(header, claims)
    return f"{data.decode('ascii')}.{_b64url(sign(data))}"


def client_credentials_form(*, resource: str, scope: str | None) -> dict[str, str]:
    """The body of a ``client_credentials`` token request (before client authentication)."""
    form = {"grant_type": "client_credentials", "resource": resource}
    if scope:
        form["scope"] = scope
    return form
