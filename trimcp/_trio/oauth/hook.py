"""How the Streamable HTTP client stream consults an ``OAuthProvider``.

Theory of operation
-------------------
``HttpClientStream`` mixes ``AuthTasks`` in.  Before each POST,
``_authorized`` puts the provider's current ``Authorization`` header on the
planned request (and into the planner's dynamic headers, for the GET
streams) and notes the provider's token generation.  When the answer is a
401, or a 403 with ``insufficient_scope``, ``_auth_challenge`` hands the
``WWW-Authenticate`` values and that generation to the provider, which
refreshes or re-authorizes (or sees that another request already did); the
POST is then sent again, at most ``max_attempts`` times.  A failed flow fails
just that request, with a message that never carries a token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ..._sansio.auth import DiscoveryError, OAuthError

if TYPE_CHECKING:
    from ..._sansio.http.plan import HttpPlanner, PostPlan
    from ..transports.http.executor import HttpResponse
    from ..transports.http.tasks import Exchange
    from .provider import OAuthProvider

__all__ = ["AuthTasks"]


class AuthTasks:
    if TYPE_CHECKING:
        auth: OAuthProvider | None
        planner: HttpPlanner
        _helper_headers: list[tuple[str, str]]
        _auth_headers: list[tuple[str, str]]

        async def fail_request(self, ex: Exchange, detail: str) -> None: ...

    async def _authorized(self, plan: PostPlan) -> tuple[PostPlan, int]:
        """``plan`` with the OAuth provider's current ``Authorization`` (and its generation)."""
        assert self.auth is not None
        auth_headers = await self.auth.headers()
        if auth_headers != self._auth_headers:
            self._auth_headers = auth_headers
            self.planner.set_dynamic_headers([*self._helper_headers, *auth_headers])
        if auth_headers:
            kept = tuple((n, v) for n, v in plan.request.headers if n.lower() != "authorization")
            plan = attrs.evolve(plan, request=attrs.evolve(plan.request, headers=kept + tuple(auth_headers)))
        return plan, self.auth.generation

    async def _auth_challenge(self, ex: Exchange, response: HttpResponse, generation: int) -> bool:
        """Authorize after a 401/403: ``True`` retry, ``False`` the request failed."""
        assert self.auth is not None
        challenges = [v for n, v in response.headers if n == "www-authenticate"]
        await response.aclose()
        ex.auth_attempts += 1
        try:
            if await self.auth.handle_challenge(response.status, challenges, generation):
                return True
            await self.fail_request(ex, f"HTTP {response.status}: not authorized")
            return False
        except (OAuthError, DiscoveryError) as exc:  # their texts never carry a token
            await self.fail_request(ex, f"authorization failed: {exc}")
            return False
