"""OAuth 2.1 authorization for MCP clients over HTTP (public API).

``OAuthProvider`` goes to ``trimcp.open_client(url, auth=...)``; it is kept
out of ``trimcp`` itself so that httpx is imported only by those who use it.
The pure building blocks are in ``trimcp._sansio.auth``.  Interactive use:
``open_loopback_callback`` (the RFC 8252 loopback redirect server) and
``interactive_authorizer`` (prints the URL, opens the system browser).
"""

from ._sansio.auth import ClientIdentity, DiscoveryError, OAuthError, Tokens
from ._trio.oauth.provider import AuthorizeCallback, OAuthProvider, TokenStore
from ._trio.oauth.callback import (
    CallbackTimeout, LoopbackCallback, interactive_authorizer, open_loopback_callback,
)

__all__ = [
    "AuthorizeCallback", "CallbackTimeout", "ClientIdentity", "DiscoveryError", "LoopbackCallback",
    "OAuthError", "OAuthProvider", "TokenStore", "Tokens", "interactive_authorizer", "open_loopback_callback",
]
