"""Which URLs the OAuth client may fetch or open, and which addresses it may connect to.

Theory of operation
-------------------
Every URL of an OAuth flow but the MCP server's own comes from a peer: the 401's
``resource_metadata``, the protected-resource metadata's ``authorization_servers``,
and the authorization-server metadata's endpoints.  Spec "Authorization" (2025-06-18
onwards), "Communication Security": "All authorization server endpoints MUST be
served over HTTPS", with the loopback exception OAuth 2.1 makes for redirect URIs.
Unchecked, a hostile server points the client at ``http://169.254.169.254/`` (a cloud
metadata service) or at a private address only the client can reach, and the client
fetches it, registers there and posts its credentials (a server-side request forgery
with the user's machine as the proxy).

``UrlPolicy.check(url, what)`` decides, with no I/O:

* the scheme is ``https``; ``http`` only on a loopback host (``127.0.0.0/8``,
  ``[::1]``, ``localhost``) or when ``allow_http``; any other scheme (``file:``,
  ``javascript:``, ``data:``) is refused;
* no user information (``https://user@host``: a confusion, never a need);
* a literal address must be global unicast or loopback: private, link-local, shared
  (``100.64.0.0/10``), unspecified, reserved, multicast and documentation ranges
  are refused unless ``allow_private`` (IPv4-mapped IPv6 is judged as its IPv4);
* a URL on the origin of one the user configured (``trusted``: the MCP server's URL,
  an enterprise identity provider's) passes: the user chose that host.

A host name is only a name: ``address_allowed`` judges each address it resolves to
when the connection is made (``trimcp._trio.oauth.guarded``), so ``metadata.internal``
or a name whose DNS answer is ``10.0.0.5`` is refused at connect time too, and the
connection goes to the address that was checked (a second lookup could answer
otherwise).  A name that is loopback by spelling (``localhost``) must resolve to
loopback.
"""

from __future__ import annotations

import ipaddress
from typing import Final
from urllib.parse import urlsplit

import attrs

from ..._errors import AuthError
from ..bounded.echo import quote
from .discovery import canonical_resource, origin

__all__ = ["UrlPolicy", "UrlRefused", "is_loopback_host"]

_LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost."})

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlRefused(AuthError):
    """A URL (or the address a name resolved to) that the OAuth client will not use."""


def _address(host: str) -> Address | None:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a literal loopback address."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def _address_problem(address: Address) -> str | None:
    """Why ``address`` is not one to reach by default, or ``None`` (global or loopback)."""
    if address.is_loopback:
        return None
    if address.is_multicast:
        return "a multicast address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_link_local:
        return "a link-local address (cloud metadata services live there)"
    if not address.is_global:
        return "a private or reserved address"
    return None


@attrs.frozen
class UrlPolicy:
    """What the OAuth client may reach; see the module docstring.

    ``allow_http``: plain ``http`` beyond loopback.  ``allow_private``: private,
    link-local and other non-global addresses.  ``trusted``: URLs the user configured
    (the provider adds the MCP server's), whose origins always pass.
    """

    allow_http: bool = False
    allow_private: bool = False
    trusted: tuple[str, ...] = ()

    def trusting(self, *urls: str | None) -> UrlPolicy:
        """This policy with ``urls``' origins trusted too."""
        return attrs.evolve(self, trusted=(*self.trusted, *(u for u in urls if u)))

    def _trusted_url(self, url: str) -> bool:
        return any(_same_origin(url, known) for known in self.trusted)

    def _trusted_host(self, host: str) -> bool:
        host = host.lower()
        for known in self.trusted:
            try:
                if (urlsplit(known).hostname or "").lower() == host:
                    return True
            except ValueError:
                continue
        return False

    def check(self, url: str, what: str) -> str:
        """``url`` if the client may fetch (or open) it as ``what``; else ``UrlRefused``."""
        if not isinstance(url, str):
            raise UrlRefused(f"the {what} URL is not a string")
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
            parts.port  # noqa: B018 - a bad port raises here, not at connect time
        except ValueError:
            raise UrlRefused(f"the {what} URL {quote(url)} is not a URL") from None
        if parts.scheme in ("http", "https") and self._trusted_url(url):
            return url
        scheme = parts.scheme.lower()
        if scheme not in ("https", "http"):
            raise UrlRefused(f"the {what} URL {quote(url)} is not https")
        if not host:
            raise UrlRefused(f"the {what} URL {quote(url)} has no host")
        if parts.username is not None or parts.password is not None:
            raise UrlRefused(f"the {what} URL {quote(url)} carries user information")
        address = _address(host)
        if address is not None and not self.allow_private:
            problem = _address_problem(address)
            if problem is not None:
                raise UrlRefused(f"the {what} URL {quote(url)} names {problem}")
        if scheme == "http" and not (self.allow_http or is_loopback_host(host)):
            raise UrlRefused(
                f"the {what} URL {quote(url)} is not https (the spec requires https for authorization server endpoints)"
            )
        return url

    def address_allowed(self, host: str, address: str) -> str | None:
        """Why connecting to ``address`` (resolved from ``host``) is refused, or ``None``."""
        resolved = _address(address)
        if resolved is None:
            return f"{quote(address)} is not an IP address"
        if self._trusted_host(host):
            return None
        if host.lower() in _LOOPBACK_NAMES and not resolved.is_loopback:
            return f"{host} resolves to {address}, which is not loopback"
        if self.allow_private:
            return None
        problem = _address_problem(resolved)
        return None if problem is None else f"{host} resolves to {address}, {problem}"


def _same_origin(url: str, other: str) -> bool:
    try:
        return origin(canonical_resource(url)) == origin(canonical_resource(other))
    except ValueError:
        return False
