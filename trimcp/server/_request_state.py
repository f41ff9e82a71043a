"""Sealing and opening the MRTR ``requestState`` (2026-07-28 stateless era).

Theory of operation
-------------------
When a handler needs input from the client (elicitation, sampling, roots),
the server answers with an ``InputRequiredResult`` and forgets the request;
the client re-sends it with ``inputResponses`` and echoes ``requestState``
(spec: basic/patterns/mrtr).  Everything the server must remember between
the rounds - the answers the client gave in *earlier* rounds - therefore
travels inside ``requestState``, through the client, and the spec says to
treat what comes back as attacker-controlled.

A token is ``v1.<payload>.<tag>``, both parts base64url without padding:

* ``payload`` is compact JSON: format version ``v``, the request's ``method``,
  ``digest`` (SHA-256 over the canonical JSON of the request's salient
  params: tool name and arguments, prompt name and arguments, or resource
  URI), optional ``principal``, expiry ``exp`` (Unix seconds), a random
  ``nonce`` (so every round's token differs), and ``answers`` (input key to
  the client's result);
* ``tag`` is HMAC-SHA256 over a domain-separation label plus the payload
  bytes, keyed with the server's secret (random per ``Server`` unless the
  deployment shares one across instances).

``open`` checks, in order: the shape, the tag (constant-time), the method
and digest (so state minted for one call can't be replayed on another tool,
other arguments, or another method), the principal, and the expiry.  Any
failure raises ``InvalidRequestState``; the server answers -32602.  The
token is integrity-protected, not encrypted: the client can read the answers
it gave itself, nothing more.  Nothing makes a token single-use; a server
needing that must keep its own record (the spec says as much).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from .._errors import TrimcpError

_VERSION: Final = 1
_PREFIX: Final = "v1"
_LABEL: Final = b"trimcp/mrtr-request-state/v1\x00"
#: The params of each MRTR-capable method that identify "the same request".
_SALIENT: Final[Mapping[str, tuple[str, ...]]] = {
    "tools/call": ("name", "arguments"),
    "prompts/get": ("name", "arguments"),
    "resources/read": ("uri",),
}


class InvalidRequestState(TrimcpError, ValueError):
    """A ``requestState`` that fails verification (tampered, stale or misplaced)."""


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not text or not text.isascii():
        raise InvalidRequestState("requestState is not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise InvalidRequestState("requestState is not base64url") from None


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def request_digest(method: str, params: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of what makes ``params`` the same request for ``method``."""
    salient = {k: params.get(k) for k in _SALIENT.get(method, ())}
    if "arguments" in salient and salient["arguments"] is None:
        salient["arguments"] = {}  # absent and empty arguments are the same call
    return hashlib.sha256(canonical_json([method, salient])).hexdigest()


class StateSealer:
    """Mints and verifies ``requestState`` tokens under one secret."""

    def __init__(
        self,
        secret: bytes | None = None,
        *,
        ttl: float = 600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if secret is not None and len(secret) < 16:
            raise ValueError("the requestState secret must be at least 16 bytes")
        if ttl <= 0:
            raise ValueError("the requestState ttl must be positive")
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        #: Seconds a token stays valid (wall clock, so it survives a hop to another instance).
        self.ttl = ttl
        self.clock = clock

    def _tag(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, _LABEL + payload, hashlib.sha256).digest()

    def seal(self, method: str, digest: str, answers: Mapping[str, Any], principal: str | None = None) -> str:
        body: dict[str, Any] = {
            "v": _VERSION,
            "method": method,
            "digest": digest,
            "exp": int(self.clock() + self.ttl) + 1,
            "nonce": secrets.token_hex(8),
            "answers": dict(answers),
        }
        if principal is not None:
            body["principal"] = principal
        payload = canonical_json(body)
        return f"{_PREFIX}.{_b64encode(payload)}.{_b64encode(self._tag(payload))}"

    def open(self, token: str, method: str, digest: str, principal: str | None = None) -> dict[str, Any]:
        """The answers sealed in ``token``; raises ``InvalidRequestState``."""
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != _PREFIX:
            raise InvalidRequestState("requestState is not one this server issued")
        payload, tag = _b64decode(parts[1]), _b64decode(parts[2])
        if not hmac.compare_digest(tag, self._tag(payload)):
            raise InvalidRequestState("requestState failed its integrity check")
        try:
            body = json.loads(payload)
        except ValueError:  # pragma: no cover - only reachable with a leaked secret
            raise InvalidRequestState("requestState payload is not JSON") from None
        if not isinstance(body, dict) or body.get("v") != _VERSION or not isinstance(body.get("answers"), dict):
            raise InvalidRequestState("requestState has an unknown format")
        if body.get("method") != method or not hmac.compare_digest(str(body.get("digest")), digest):
            raise InvalidRequestState("requestState belongs to a different request")
        if body.get("principal") != principal:
            raise InvalidRequestState("requestState belongs to a different principal")
        exp = body.get("exp")
        if not isinstance(exp, int) or self.clock() >= exp:
            raise InvalidRequestState("requestState has expired")
        answers: dict[str, Any] = body["answers"]
        return answers
