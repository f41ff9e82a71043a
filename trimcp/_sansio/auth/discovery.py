"""Where the OAuth metadata lives, and whether what comes back can be trusted.

Theory of operation
-------------------
Discovery runs in two hops (RFC 9728, then RFC 8414 / OpenID Connect
Discovery), each a list of URLs tried in order until one answers 200 with a
JSON object:

1. Protected-resource metadata (PRM): the ``resource_metadata`` URL of the
   401 challenge; without one, ``/.well-known/oauth-protected-resource/<path>``
   then ``/.well-known/oauth-protected-resource`` on the MCP server's origin
   (``prm_urls``).  The PRM's ``resource`` must name the server being talked
   to (``resource_matches``): a PRM for another resource aborts the flow.
2. Authorization-server metadata for ``authorization_servers[0]``
   (``as_metadata_urls``): for an issuer with a path, the RFC 8414 form, the
   OIDC form with the path appended, then the OIDC form with the path
   prepended; for a bare origin, RFC 8414 then OIDC.  The document's
   ``issuer`` must equal the issuer it was looked up for, by simple string
   comparison (``check_issuer``).

A server with no PRM at all is a 2025-03-26 one: its authorization server is
its own origin (``legacy_issuer``), and when even that has no metadata the
endpoints default to ``/authorize``, ``/token`` and ``/register``
(``legacy_metadata``).

``canonical_resource`` gives the RFC 8707 ``resource`` value for a server
URL: lower-case scheme and host, no fragment, no default port, no trailing
slash on a bare origin.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..._errors import AuthError
from ..bounded.echo import quote

__all__ = [
    "DiscoveryError",
    "as_metadata_urls",
    "canonical_resource",
    "check_issuer",
    "check_pkce",
    "legacy_issuer",
    "legacy_metadata",
    "origin",
    "prm_urls",
    "resource_matches",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}


class DiscoveryError(AuthError):
    """Discovery found something the client must not go on with."""


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def canonical_resource(url: str) -> str:
    """The RFC 8707 / MCP canonical URI of the server at ``url``."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = parts.path
    if path == "/":
        path = ""
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def prm_urls(server_url: str, header_url: str | None) -> list[str]:
    """Protected-resource metadata URLs to try, in order."""
    if header_url:
        return [header_url]
    parts = urlsplit(server_url)
    base = origin(server_url)
    path = parts.path.rstrip("/")
    urls = []
    if path:
        urls.append(f"{base}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{base}/.well-known/oauth-protected-resource")
    return urls


def as_metadata_urls(issuer: str) -> list[str]:
    """Authorization-server metadata URLs for ``issuer``, in order.

    ``issuer`` comes from the protected-resource metadata: one that is no URL is a
    ``DiscoveryError``, not a ``ValueError``.
    """
    try:
        parts = urlsplit(issuer)
        base = origin(issuer)
    except ValueError as exc:
        raise DiscoveryError(f"the authorization server {quote(issuer)} is not a URL ({exc})") from None
    path = parts.path.rstrip("/")
    if not path:
        return [f"{base}/.well-known/oauth-authorization-server", f"{base}/.well-known/openid-configuration"]
    return [
        f"{base}/.well-known/oauth-authorization-server{path}",
        f"{base}/.well-known/openid-configuration{path}",
        f"{base}{path}/.well-known/openid-configuration",
    ]


def resource_matches(prm_resource: str, server_url: str) -> bool:
    """Does the PRM's ``resource`` cover ``server_url`` (same origin, path prefix by segment)?

    A ``resource`` that is no URL (a bad port, an unclosed ``[``) covers nothing.
    """
    try:
        a = urlsplit(canonical_resource(prm_resource))
    except ValueError:
        return False
    b = urlsplit(canonical_resource(server_url))
    if (a.scheme, a.netloc) != (b.scheme, b.netloc):
        return False
    want = a.path.rstrip("/")
    have = b.path.rstrip("/")
    return have == want or have.startswith(want + "/")


def check_issuer(metadata: dict[str, Any], issuer: str) -> None:
    """Raise unless the metadata's ``issuer`` is exactly ``issuer`` (RFC 8414 section 3.3)."""
    got = metadata.get("issuer")
    if got != issuer:
        raise DiscoveryError(f"authorization server metadata names issuer {quote(got)}, expected {quote(issuer)}")


def check_pkce(metadata: dict[str, Any]) -> None:
    """Raise unless the authorization server advertises PKCE ``S256``."""
    methods = metadata.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        raise DiscoveryError("the authorization server does not advertise PKCE S256 support; refusing to go on")


def legacy_issuer(server_url: str) -> str:
    """2025-03-26: the authorization server is the MCP server's own origin."""
    return origin(server_url)


def legacy_metadata(server_url: str) -> dict[str, Any]:
    """2025-03-26 defaults when the MCP server's origin publishes no metadata."""
    base = origin(server_url)
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "code_challenge_methods_supported": ["S256"],
    }
