"""The authorization checks beyond discovery: what a protected server shows a client from outside.

``core`` holds the four discovery checks (challenge, protected-resource
metadata, authorization-server metadata, PKCE); these are the resource-server
rules of ``basic/authorization`` that a client can provoke with raw HTTP
exchanges: refusals without a token, a forged token, a token in the query
string, the scope guidance of the challenge, and the transport security of
the authorization server's endpoints; and the rules about tokens only the user
can hand over (another resource's, an expired one, one short of a scope, a
second identity's).  Each row's level is the strongest of the
sentences behind it (``requirements/data/authorization.json``).
"""

from __future__ import annotations

from typing import Final

from ..model import CheckSpec, Level
from .core import AUTH, FROM_2025_06_18, FROM_2025_11_25, STREAMABLE

M, S, B = Level.MUST, Level.SHOULD, Level.BEST

SPECS: Final[tuple[CheckSpec, ...]] = (
    CheckSpec(
        "auth.prm-resource",
        M,
        AUTH,
        "the protected-resource metadata's resource is the server's canonical URI (RFC 9728 section 3.3: "
        "identical to the identifier its well-known URL was built from)",
        FROM_2025_06_18,
    ),
    CheckSpec(
        "auth.no-token-refused",
        M,
        AUTH,
        "without a token every request is refused: a list request and a notification get 401, "
        "GET and DELETE 401 or 405",
        STREAMABLE,
    ),
    CheckSpec(
        "auth.invalid-token",
        M,
        AUTH,
        "a request with a forged Bearer token gets 401 with a Bearer WWW-Authenticate challenge",
        STREAMABLE,
    ),
    # RFC 6750 section 3.1 (through OAuth 2.1 section 5.3) makes the error code a SHOULD; no MCP
    # sentence names it, so the row is advice.
    CheckSpec(
        "auth.invalid-token-error",
        B,
        AUTH,
        'the 401 for a forged token names error="invalid_token" (RFC 6750 section 3.1)',
        STREAMABLE,
    ),
    CheckSpec(
        "auth.query-token",
        M,
        AUTH,
        "the run's valid token sent in the URI query string (access_token=) is not accepted",
        STREAMABLE,
    ),
    CheckSpec("auth.scope-challenge", S, AUTH, "the 401 challenge names the scopes required (scope=)", FROM_2025_11_25),
    # The sentence arrives in 2026-07-28; before, keeping offline_access out is advice.
    CheckSpec(
        "auth.no-offline-access",
        B,
        AUTH,
        "offline_access is in neither the challenge's scope nor the metadata's scopes_supported",
        FROM_2025_06_18,
        stateless_level=S,
    ),
    CheckSpec(
        "auth.https-endpoints",
        M,
        AUTH,
        "the authorization server's endpoints are served over HTTPS (loopback hosts are not judged)",
        FROM_2025_06_18,
    ),
    # Dynamic Client Registration: a SHOULD for authorization servers in 2025-06-18 only (a MAY
    # from 2025-11-25, deprecated in 2026-07-28).
    CheckSpec("auth.dcr", S, AUTH, "the authorization server metadata names a registration_endpoint", ("2025-06-18",)),
    CheckSpec(
        "auth.redirect-uri",
        M,
        AUTH,
        "the authorization server redirects only to a client's registered redirect URI, exactly",
        FROM_2025_06_18,
    ),
    # The sentence arrives in 2026-07-28 (RFC 9207); before, advertising iss is advice.
    CheckSpec(
        "auth.iss-advertised",
        B,
        AUTH,
        "an authorization response carrying iss comes from a server whose metadata sets "
        "authorization_response_iss_parameter_supported",
        FROM_2025_06_18,
        stateless_level=M,
    ),
    # 2025-03-26: the authorization server is the MCP server's origin.
    CheckSpec(
        "auth.legacy-metadata",
        S,
        AUTH,
        "authorization server metadata at <origin>/.well-known/oauth-authorization-server",
        ("2025-03-26",),
    ),
    CheckSpec(
        "auth.legacy-discovery",
        M,
        AUTH,
        "that metadata, or else the default /authorize and /token endpoints, exist",
        ("2025-03-26",),
    ),
    CheckSpec(
        "auth.cimd",
        S,
        AUTH,
        "the authorization server advertises client_id_metadata_document_supported: true",
        FROM_2025_11_25,
    ),
    # The tokens the user hands over (--auth-token-*, checks/auth_binding.py).
    CheckSpec(
        "auth.token-audience",
        M,
        AUTH,
        "a token issued for another resource (--auth-token-other-resource) is refused with 401",
        FROM_2025_06_18,
    ),
    CheckSpec("auth.expired-token", M, AUTH, "an expired token (--auth-token-expired) gets 401", STREAMABLE),
    CheckSpec(
        "auth.insufficient-scope",
        S,
        AUTH,
        "a token lacking a scope (--auth-token-insufficient-scope) gets 403 with a Bearer challenge naming "
        'error="insufficient_scope" and the scope needed',
        FROM_2025_11_25,
    ),
    CheckSpec(
        "auth.task-binding",
        M,
        "basic/utilities/tasks",
        "a task created by the valid token's identity cannot be read, listed or cancelled by a second "
        "identity (--auth-token-second)",
        ("2025-11-25",),
    ),
)
