"""Sans-IO OAuth 2.1 for MCP clients (the Authorization part of the spec).

``challenge`` parses ``WWW-Authenticate``; ``discovery`` lists the metadata
URLs to try and validates what they return; ``flow`` holds PKCE, state,
scope selection, client identity, the authorization URL and callback, and
token request / response handling; ``assertion`` builds RFC 7523 client
assertions (signed by a callable) and the client-credentials grant form.
The Trio driver is ``trimcp._trio.oauth.provider``.
"""

from .assertion import (
    JWT_BEARER_ASSERTION,
    SUPPORTED_ALGORITHMS,
    Signer,
    assertion_claims,
    client_credentials_form,
    sign_assertion,
    signing_input,
)
from .challenge import Challenge, bearer_challenge, parse_challenges
from .discovery import (
    DiscoveryError,
    as_metadata_urls,
    canonical_resource,
    check_issuer,
    check_pkce,
    legacy_issuer,
    legacy_metadata,
    origin,
    prm_urls,
    resource_matches,
)
from .flow import (
    ClientIdentity,
    OAuthError,
    Pkce,
    Tokens,
    authorization_url,
    choose_auth_method,
    choose_identity,
    make_state,
    parse_callback,
    parse_token_response,
    registration_body,
    select_scope,
    token_request,
)

__all__ = [
    "JWT_BEARER_ASSERTION",
    "SUPPORTED_ALGORITHMS",
    "Challenge",
    "ClientIdentity",
    "DiscoveryError",
    "OAuthError",
    "Pkce",
    "Signer",
    "Tokens",
    "as_metadata_urls",
    "assertion_claims",
    "authorization_url",
    "bearer_challenge",
    "canonical_resource",
    "check_issuer",
    "check_pkce",
    "choose_auth_method",
    "choose_identity",
    "client_credentials_form",
    "legacy_issuer",
    "legacy_metadata",
    "make_state",
    "origin",
    "parse_callback",
    "parse_challenges",
    "parse_token_response",
    "prm_urls",
    "registration_body",
    "resource_matches",
    "select_scope",
    "sign_assertion",
    "signing_input",
    "token_request",
]
