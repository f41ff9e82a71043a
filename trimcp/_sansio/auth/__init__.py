"""Sans-IO OAuth 2.1 for MCP clients (the Authorization part of the spec).

``challenge`` parses ``WWW-Authenticate``; ``discovery`` lists the metadata
URLs to try and validates what they return; ``flow`` holds PKCE, state,
scope selection, client identity, the authorization URL and callback, and
token request / response handling; ``assertion`` builds RFC 7523 client
assertions (signed by a callable) and the client-credentials grant form;
``dpop`` builds RFC 9449 proofs and handles server-supplied nonces;
``url_policy`` which URLs and addresses the flow may reach (https, no private
or link-local address a peer names); ``grants`` the RFC 8693 token exchange (for an ID-JAG) and the RFC 7523
JWT-bearer grant of enterprise-managed authorization and workload identity.
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
from .dpop import (
    DPOP_TYP,
    USE_DPOP_NONCE,
    Nonces,
    access_token_hash,
    authorization_value,
    dpop_challenge,
    htu,
    is_nonce_challenge,
    proof_claims,
    resource_wants_dpop,
    response_nonce,
    should_retry_with_nonce,
    sign_proof,
    supports_dpop,
)
from .flow import (
    ClientIdentity,
    CredentialsDecision,
    OAuthError,
    Pkce,
    Tokens,
    authorization_url,
    choose_auth_method,
    choose_identity,
    credentials_destination,
    make_state,
    parse_callback,
    parse_token_response,
    registration_body,
    select_resource,
    select_scope,
    token_request,
)
from .url_policy import UrlPolicy, UrlRefused, is_loopback_host

__all__ = [
    "DPOP_TYP",
    "JWT_BEARER_ASSERTION",
    "SUPPORTED_ALGORITHMS",
    "USE_DPOP_NONCE",
    "Challenge",
    "ClientIdentity",
    "CredentialsDecision",
    "DiscoveryError",
    "Nonces",
    "OAuthError",
    "Pkce",
    "Signer",
    "Tokens",
    "UrlPolicy",
    "UrlRefused",
    "access_token_hash",
    "as_metadata_urls",
    "assertion_claims",
    "authorization_url",
    "authorization_value",
    "bearer_challenge",
    "canonical_resource",
    "check_issuer",
    "check_pkce",
    "choose_auth_method",
    "choose_identity",
    "client_credentials_form",
    "credentials_destination",
    "dpop_challenge",
    "htu",
    "is_loopback_host",
    "is_nonce_challenge",
    "legacy_issuer",
    "legacy_metadata",
    "make_state",
    "origin",
    "parse_callback",
    "parse_challenges",
    "parse_token_response",
    "prm_urls",
    "proof_claims",
    "registration_body",
    "resource_matches",
    "resource_wants_dpop",
    "response_nonce",
    "select_resource",
    "select_scope",
    "should_retry_with_nonce",
    "sign_assertion",
    "sign_proof",
    "signing_input",
    "supports_dpop",
    "token_request",
]
