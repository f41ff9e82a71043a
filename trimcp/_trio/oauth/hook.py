"""How the Streamable HTTP client stream consults an OAuth provider.

Theory of operation
-------------------
The transport owns one ``AuthHook`` when it was given a provider; the hook
needs only what ``AuthProvider`` names (``OAuthProvider`` is one; so is any
test double).  Before each POST, ``authorize`` puts the provider's current
``Authorization`` header on the planned request and notes the provider's
token generation; when the headers changed it also reports them
(``on_headers``: the transport's dynamic headers, for the GET streams and
every later plan).  On a 401, or a 403 with ``insufficient_scope``, the
exchange policy (``_sansio/http/client/policy.py``) asks whether the provider
``wants`` the challenge and, at most ``max_rounds`` times per request, lets
``challenge`` hand the ``WWW-Authenticate`` values and that generation to the
provider, which refreshes or re-authorizes (or sees that another request
already did).  The outcome is a fact for the policy: ``Authorized(ok)``, or
the provider's ``AuthError`` when its flow failed; its texts never carry a token.

DPoP (RFC 9449): ``authorize`` also adds the provider's fresh ``DPoP`` proof
for the request's method and URL (none for a Bearer token), ``observe``
hands every ``DPoP-Nonce`` a response carries to the provider, and a 401
``DPoP error="use_dpop_nonce"`` (section 9) is answered here, not by a new
authorization: the request is sent again once with the nonce; a second such
challenge within the same request fails it (``AuthRound`` remembers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import attrs

from ..._errors import AuthError
from ..._sansio import auth as sa
from ..._sansio.http.client.plan import HttpRequest
from ..._sansio.http.client.policy import Authorized

__all__ = ["AuthHook", "AuthProvider", "AuthRound"]


class AuthProvider(Protocol):
    """What the HTTP transport needs of an OAuth provider."""

    @property
    def generation(self) -> int:
        """Bumped whenever the tokens change."""
        ...

    @property
    def max_attempts(self) -> int:
        """Authorization rounds one request may trigger."""
        ...

    async def headers(self) -> list[tuple[str, str]]:
        """The headers to send now (``Authorization: Bearer ...`` once there is a token)."""
        ...

    def wants(self, www_authenticate: Iterable[str], status: int) -> bool:
        """Whether a 401/403 with these challenges is the provider's to handle."""
        ...

    async def handle_challenge(self, status: int, www_authenticate: Iterable[str], generation: int) -> bool:
        """Refresh or authorize; ``True``: send the request again."""
        ...

    @property
    def uses_dpop(self) -> bool:
        """Whether the current tokens are DPoP-bound (RFC 9449)."""
        ...

    def proof_headers(self, method: str, url: str, authorization: str | None) -> list[tuple[str, str]]:
        """The ``DPoP`` proof header for a request sent with this ``Authorization`` (or none)."""
        ...

    def remember_nonce(self, url: str, nonce: str | None) -> None:
        """A ``DPoP-Nonce`` the server at ``url`` handed out."""
        ...


@attrs.define
class AuthRound:
    """What one request's authorization rounds remember: whether a nonce retry was spent."""

    nonce_retried: bool = False


def challenges(headers: Sequence[tuple[str, str]]) -> list[str]:
    """The ``WWW-Authenticate`` values of a response (names lowercased)."""
    return [value for name, value in headers if name == "www-authenticate"]


class AuthHook:
    def __init__(self, provider: AuthProvider, on_headers: Callable[[list[tuple[str, str]]], None]) -> None:
        self.provider = provider
        self._on_headers = on_headers
        self._current: list[tuple[str, str]] = []

    @property
    def max_rounds(self) -> int:
        return self.provider.max_attempts

    async def headers(self) -> list[tuple[str, str]]:
        """The provider's headers now (reported through ``on_headers`` when they changed)."""
        current = await self.provider.headers()
        if current != self._current:
            self._current = current
            self._on_headers(current)
        return current

    async def authorize(self, request: HttpRequest) -> tuple[HttpRequest, int]:
        """``request`` with the current ``Authorization``, and the token generation it used."""
        auth = await self.headers()
        if auth:
            kept = tuple((n, v) for n, v in request.headers if n.lower() != "authorization")
            request = self.stamp(attrs.evolve(request, headers=kept + tuple(auth)))
        return request, self.provider.generation

    def stamp(self, request: HttpRequest) -> HttpRequest:
        """``request`` with a fresh ``DPoP`` proof for its ``Authorization`` (unchanged for Bearer).

        Synchronous, so the proof's ``ath`` is for the very token the request carries.
        """
        proof = self.provider.proof_headers(request.method, request.url, request.header("authorization"))
        if not proof:
            return request
        kept = tuple((n, v) for n, v in request.headers if n.lower() != "dpop")
        return attrs.evolve(request, headers=kept + tuple(proof))

    def observe(self, url: str, headers: Sequence[tuple[str, str]]) -> None:
        """Remember a ``DPoP-Nonce`` a response from ``url`` carries (RFC 9449 section 9)."""
        if self.provider.uses_dpop:
            self.provider.remember_nonce(url, sa.response_nonce(headers))

    def wants(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        return status in (401, 403) and self.provider.wants(challenges(headers), status)

    async def challenge(
        self,
        status: int,
        headers: Sequence[tuple[str, str]],
        generation: int,
        auth_round: AuthRound | None = None,
    ) -> Authorized:
        www = challenges(headers)
        if self.provider.uses_dpop and sa.is_nonce_challenge(status, www):
            nonce = sa.response_nonce(headers)
            if auth_round is not None and auth_round.nonce_retried:
                return Authorized(
                    False,
                    sa.OAuthError(
                        sa.USE_DPOP_NONCE, "the MCP server demanded a DPoP nonce again after the retry with its nonce"
                    ),
                )
            if nonce is None:
                return Authorized(
                    False,
                    sa.OAuthError(sa.USE_DPOP_NONCE, "the MCP server demanded a DPoP nonce but sent no DPoP-Nonce"),
                )
            if auth_round is not None:
                auth_round.nonce_retried = True
            return Authorized(True)  # (``observe`` already remembered the nonce)
        try:
            ok = await self.provider.handle_challenge(status, challenges(headers), generation)
        except AuthError as exc:  # OAuthError, DiscoveryError: their texts never carry a token
            return Authorized(False, exc)
        return Authorized(ok)
