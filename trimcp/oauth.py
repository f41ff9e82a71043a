"""OAuth 2.1 authorization for MCP clients over HTTP (public API).

``OAuthProvider`` goes to ``trimcp.open_client(url, auth=...)``; it is kept
out of ``trimcp`` itself so that httpx is imported only by those who use it.
The pure building blocks are in ``trimcp._sansio.auth``.
"""

from ._sansio.auth import ClientIdentity, DiscoveryError, OAuthError, Tokens
from ._trio.oauth import AuthorizeCallback, OAuthProvider, TokenStore

__all__ = ["AuthorizeCallback", "ClientIdentity", "DiscoveryError", "OAuthError", "OAuthProvider", "TokenStore", "Tokens"]
