"""OAuth 2.1 for the HTTP client (the public face is ``trimcp.oauth``).

``provider`` (``OAuthProvider``: tokens, refresh, when to authorize) runs the
HTTP steps in ``flow`` and keeps its records in a ``store``; ``callback`` is
the loopback redirect server for interactive use, ``jwt`` the
``private_key_jwt`` signer, ``grants`` the browserless assertion-grant
providers (enterprise-managed authorization, workload identity),
``auth_cache`` the cross-process record of servers that answered 401, and
``hook`` how the Streamable HTTP client consults the provider.  The decisions themselves are sans-IO, in ``trimcp._sansio.auth``.
"""
