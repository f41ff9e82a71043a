"""DPoP proofs and nonces (RFC 9449), as pure functions.

Theory of operation
-------------------
With DPoP the client binds its tokens to a key pair it holds: every token
request and every request to the resource server carries a fresh signed
*proof* in the ``DPoP`` header (RFC 9449 section 4.2), a JWT whose header
is ``typ: dpop+jwt``, the signing ``alg`` and the *public* ``jwk``, and
whose claims are ``jti`` (unique per proof), ``htm`` (the HTTP method),
``htu`` (the target URI without query and fragment), ``iat``, the
server-supplied ``nonce`` when there is one, and, on a resource request,
``ath`` = base64url(SHA-256(access token)) (section 4.1).

* ``supports_dpop``: the authorization server advertises
  ``dpop_signing_alg_values_supported`` (section 5.1) and lists our ``alg``.
* ``htu`` normalises a request URL for the ``htu`` claim; ``proof_claims``
  and ``sign_proof`` build and sign the proof (the signature itself comes
  from a *signer* callable, as for client assertions).
* A token issued with ``token_type: DPoP`` is presented as
  ``Authorization: DPoP <token>`` (section 7.1), a Bearer one as before.
* Nonces (sections 8 and 9): a server may answer ``use_dpop_nonce`` (a 400
  ``error`` at the token endpoint, a ``WWW-Authenticate: DPoP
  error="use_dpop_nonce"`` challenge at the resource server) with a
  ``DPoP-Nonce`` header; ``response_nonce`` reads that header and
  ``Nonces`` remembers the latest nonce per server origin, so later proofs
  carry it.  The client retries *once* with the new nonce
  (``should_retry_with_nonce``); a second ``use_dpop_nonce`` for the same
  request is a failure, never a loop.

No clock, randomness or key material of its own: ``now`` and ``jti`` bytes
come in; the private key stays behind the signer.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .assertion import Signer, signing_input
from .challenge import Challenge, scheme_challenge

__all__ = [
    "DPOP_TYP",
    "USE_DPOP_NONCE",
    "Nonces",
    "access_token_hash",
    "authorization_value",
    "dpop_challenge",
    "htu",
    "is_nonce_challenge",
    "proof_claims",
    "resource_wants_dpop",
    "response_nonce",
    "should_retry_with_nonce",
    "sign_proof",
    "supports_dpop",
]

DPOP_TYP = "dpop+jwt"
#: The error code of a nonce demand (token endpoint body, resource server challenge).
USE_DPOP_NONCE = "use_dpop_nonce"

_DEFAULT_PORTS = {"http": 80, "https": 443}
# NQCHAR of RFC 9449 section 8.1: visible ASCII except '"' and '\\'.
_NQCHAR = frozenset(chr(c) for c in range(0x21, 0x7F)) - {'"', "\\"}


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def supports_dpop(as_metadata: Mapping[str, Any], alg: str = "ES256") -> bool:
    """Whether the authorization server takes DPoP proofs signed with ``alg``."""
    values = as_metadata.get("dpop_signing_alg_values_supported")
    return isinstance(values, list) and alg in values


def resource_wants_dpop(prm: Mapping[str, Any] | None, alg: str = "ES256") -> bool:
    """Whether the protected resource's metadata (RFC 9728 section 2) says it takes
    DPoP-bound tokens: ``dpop_bound_access_tokens_required``, or ``alg`` among its
    ``dpop_signing_alg_values_supported``.  An authorization server that issues DPoP
    tokens says nothing about the resource: a Bearer-only resource refuses them."""
    if not prm:
        return False
    if prm.get("dpop_bound_access_tokens_required") is True:
        return True
    values = prm.get("dpop_signing_alg_values_supported")
    return isinstance(values, list) and alg in values


def htu(url: str) -> str:
    """The ``htu`` of a request to ``url``: no query, no fragment (section 4.2).

    Scheme and host are lowercased and a default port dropped (RFC 3986
    section 6.2.3), so the claim compares equal to what the server normalises.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"a DPoP proof needs an http(s) URL with a host, not {url!r}")
    host = parts.hostname
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    port = parts.port
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", "", ""))


def access_token_hash(access_token: str) -> str:
    """``ath``: base64url of the SHA-256 of the ASCII access token (section 4.1)."""
    return _b64url(hashlib.sha256(access_token.encode("ascii")).digest())


def proof_claims(
    *,
    method: str,
    url: str,
    now: float,
    jti: bytes,
    nonce: str | None = None,
    access_token: str | None = None,
) -> dict[str, Any]:
    """The claims of one proof (``jti`` from 16+ random bytes, ``ath`` when a token goes along)."""
    if len(jti) < 16:
        raise ValueError("a DPoP proof's jti needs at least 16 random bytes")
    if not method or not method.isupper():
        raise ValueError(f"a DPoP proof's htm is an upper-case HTTP method, not {method!r}")
    claims: dict[str, Any] = {"jti": _b64url(jti), "htm": method, "htu": htu(url), "iat": int(now)}
    if nonce is not None:
        claims["nonce"] = nonce
    if access_token is not None:
        claims["ath"] = access_token_hash(access_token)
    return claims


def sign_proof(claims: Mapping[str, Any], *, alg: str, jwk: Mapping[str, Any], sign: Signer) -> str:
    """The compact JWS of a proof; ``jwk`` must be the public key only."""
    if "d" in jwk or not jwk.get("kty"):
        raise ValueError("a DPoP proof carries the public JWK only")
    header = {"typ": DPOP_TYP, "alg": alg, "jwk": dict(jwk)}
    data = signing_input(header, claims)
    return f"{data.decode('ascii')}.{_b64url(sign(data))}"


def authorization_value(token_type: str, access_token: str) -> str:
    """``Authorization`` for a token: ``DPoP <token>`` for a bound one, else ``Bearer <token>``."""
    return f"{'DPoP' if token_type.lower() == 'dpop' else 'Bearer'} {access_token}"


def response_nonce(headers: Iterable[tuple[str, str]]) -> str | None:
    """The ``DPoP-Nonce`` of a response (``None``: absent or not a valid nonce)."""
    for name, value in headers:
        if name.lower() == "dpop-nonce":
            value = value.strip()
            if value and all(ch in _NQCHAR for ch in value):
                return value
            return None
    return None


def dpop_challenge(www_authenticate: Iterable[str]) -> Challenge | None:
    """The first ``DPoP`` challenge among a response's ``WWW-Authenticate`` values."""
    return scheme_challenge(www_authenticate, "DPoP")


def is_nonce_challenge(status: int, www_authenticate: Iterable[str]) -> bool:
    """A resource server's demand for a nonce (section 9): 401 + ``DPoP error="use_dpop_nonce"``."""
    challenge = dpop_challenge(www_authenticate)
    return status == 401 and challenge is not None and challenge.error == USE_DPOP_NONCE


def should_retry_with_nonce(*, error: str | None, nonce: str | None, sent_nonce: str | None, retried: bool) -> bool:
    """Retry a request after ``use_dpop_nonce``?  Once, and only with a new nonce to send."""
    return error == USE_DPOP_NONCE and nonce is not None and nonce != sent_nonce and not retried


class Nonces:
    """The latest nonce each server (by origin) handed out; a later proof to it carries it."""

    def __init__(self) -> None:
        self._by_origin: dict[str, str] = {}

    @staticmethod
    def _origin(url: str) -> str:
        parts = urlsplit(htu(url))
        return f"{parts.scheme}://{parts.netloc}"

    def get(self, url: str) -> str | None:
        return self._by_origin.get(self._origin(url))

    def remember(self, url: str, nonce: str | None) -> None:
        if nonce is not None:
            self._by_origin[self._origin(url)] = nonce
