"""OAuth 2.1 authorization for MCP clients over HTTP (public API).

``OAuthProvider`` goes to ``trimcp.open_client(url, auth=...)``.  Interactive
use: ``open_loopback_callback`` (the RFC 8252 loopback redirect server) and
``interactive_authorizer`` (prints the URL, opens the system browser).
Without a browser: ``EnterpriseProvider`` (enterprise-managed authorization:
an SSO identity assertion exchanged for an ID-JAG, RFC 8693 + RFC 7523) and
``WorkloadIdentityProvider`` (a workload platform's JWT as the grant;
``assertion_from_file`` re-reads a projected token).  Tokens
and client registrations live in a ``TokenStore``: ``default_store()`` (the
system keyring, else memory), ``FileStore`` or ``MemoryStore``; a store that
cannot be used raises ``StoreUnavailable``.  ``AuthNeededCache`` remembers, for
a while and across processes, which servers answered 401.  ``UrlPolicy`` says
what the flow may reach (``OAuthProvider(url_policy=...)``; a refusal is a
``UrlRefused``).  The pure building blocks are in ``trimcp._sansio.auth``.

This module is kept out of ``trimcp`` itself, and the names that need httpx or
h11 (the provider, the loopback callback) are imported on first use
(``__getattr__``), so that the errors and stores cost no HTTP stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._sansio.auth import ClientIdentity, DiscoveryError, OAuthError, Tokens, UrlPolicy, UrlRefused
from ._trio.oauth.auth_cache import AuthNeededCache
from ._trio.oauth.store import FileStore, MemoryStore, StoreUnavailable, TokenStore, default_store

if TYPE_CHECKING:
    from ._trio.oauth.callback import (
        CallbackTimeout,
        LoopbackCallback,
        interactive_authorizer,
        open_loopback_callback,
    )
    from ._trio.oauth.grants import (
        AssertionSource,
        EnterpriseProvider,
        WorkloadIdentityProvider,
        assertion_from_file,
    )
    from ._trio.oauth.provider import AuthorizeCallback, OAuthProvider

_FROM_PROVIDER = frozenset({"AuthorizeCallback", "OAuthProvider"})
_FROM_GRANTS = frozenset({"AssertionSource", "EnterpriseProvider", "WorkloadIdentityProvider", "assertion_from_file"})
_FROM_CALLBACK = frozenset({"CallbackTimeout", "LoopbackCallback", "interactive_authorizer", "open_loopback_callback"})


def __getattr__(name: str) -> Any:
    """The names that import httpx (the provider) or h11 (the callback), on first use."""
    if name in _FROM_PROVIDER:
        from ._trio.oauth import provider

        value = getattr(provider, name)
    elif name in _FROM_GRANTS:
        from ._trio.oauth import grants

        value = getattr(grants, name)
    elif name in _FROM_CALLBACK:
        from ._trio.oauth import callback

        value = getattr(callback, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "AssertionSource",
    "AuthNeededCache",
    "AuthorizeCallback",
    "CallbackTimeout",
    "ClientIdentity",
    "DiscoveryError",
    "EnterpriseProvider",
    "FileStore",
    "LoopbackCallback",
    "MemoryStore",
    "OAuthError",
    "OAuthProvider",
    "StoreUnavailable",
    "TokenStore",
    "Tokens",
    "UrlPolicy",
    "UrlRefused",
    "WorkloadIdentityProvider",
    "assertion_from_file",
    "default_store",
    "interactive_authorizer",
    "open_loopback_callback",
]
