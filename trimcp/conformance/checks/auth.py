"""Authorization checks: what a protected MCP server shows a client that has no token yet.

Theory of operation
-------------------
For an ``http(s)://`` target the harness first POSTs an ``initialize``
without credentials (``probe_unauthenticated``).  A server that answers
anything but 401 does not ask for authorization, and every ``auth.*`` check
is ``skip``.  For a 401 the checks walk discovery as a client would
(``trimcp._sansio.auth`` supplies the URL orders and the consistency rules),
with plain GETs that carry no credentials:

* ``auth.www-authenticate``: the 401 carries a ``Bearer`` challenge with
  ``resource_metadata`` - or, without it, the well-known protected-resource
  URL (path-aware first, then the root) answers;
* ``auth.protected-resource-metadata``: the metadata is reachable, its
  ``resource`` covers the server URL, ``authorization_servers`` is non-empty;
  ``auth.prm-resource``: that ``resource`` is exactly the identifier RFC 9728
  section 3.3 asks for (the server URL, or its origin at the root URL);
* ``auth.authorization-server-metadata``: the first authorization server's
  metadata is reachable through the RFC 8414 / OIDC URL order and names the
  same ``issuer``;
* ``auth.pkce``: ``code_challenge_methods_supported`` holds ``S256``.

A check whose input the previous one could not provide is ``skip``.  Only
URLs, status codes and metadata fields appear in the details, never a token.
In 2025-06-18 the challenge itself MUST name ``resource_metadata`` (the
well-known fallback arrives in 2025-11-25).  What discovery found then goes to
``checks/auth_tokens.py`` for the resource-server rules (forged tokens,
refusals without a token, scope guidance), ``checks/auth_binding.py`` for the
rules about the tokens the user handed over (audience, expiry, scope, task
binding) and ``checks/auth_redirect.py`` for
the authorization server's redirects; ``checks/auth_legacy.py`` holds the
2025-03-26 discovery (metadata at the server's own origin).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..._sansio import auth as sa
from ..._sansio.revisions import LATEST_HANDSHAKE
from ..evidence import exchange
from ..rawhttp import ProbeError, RawResponse, request
from ..results import Results
from .auth_binding import BINDING_CHECKS, AuthTokens, check_auth_binding
from .auth_legacy import LEGACY_CHECKS, check_legacy
from .auth_redirect import REDIRECT_CHECKS, check_redirects
from .auth_tokens import RULE_CHECKS, Discovered, bearer_token, check_auth_rules
from .probes import CLIENT_INFO

__all__ = ["AUTH_CHECKS", "check_auth", "probe_unauthenticated", "skip_auth"]

AUTH_CHECKS: Final = (
    "auth.www-authenticate",
    "auth.protected-resource-metadata",
    "auth.authorization-server-metadata",
    "auth.pkce",
)
_PROBE_HEADERS: Final = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


_PROBE_BODY: Final = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": LATEST_HANDSHAKE, "capabilities": {}, "clientInfo": CLIENT_INFO},
}


def skip_auth(rec: Results, reason: str) -> None:
    for check in (*AUTH_CHECKS, "auth.prm-resource", *RULE_CHECKS, *REDIRECT_CHECKS, *LEGACY_CHECKS, *BINDING_CHECKS):
        rec.skip(check, reason)


async def probe_unauthenticated(url: str, timeout: float) -> RawResponse:
    """POST an ``initialize`` without credentials (``ProbeError`` when unreachable)."""
    return await request(url, "POST", _PROBE_HEADERS, _PROBE_BODY, timeout=timeout, read_body=False)


def _probe_evidence(url: str, resp: RawResponse) -> list[dict[str, Any]]:
    return [
        exchange(
            "POST", url, _PROBE_HEADERS, json.dumps(_PROBE_BODY), status=resp.status, response_headers=resp.headers
        )
    ]


async def _get_json(url: str, timeout: float) -> tuple[dict[str, Any] | None, str]:
    """The JSON object at ``url``, else ``None`` and why."""
    try:
        resp = await request(url, "GET", {"Accept": "application/json"}, timeout=timeout)
    except ProbeError as exc:
        return None, str(exc)
    if resp.status != 200:
        return None, f"GET {url}: HTTP {resp.status}"
    try:
        data = json.loads(resp.body)
    except ValueError:
        return None, f"GET {url}: not JSON"
    if not isinstance(data, dict):
        return None, f"GET {url}: not a JSON object"
    return data, url


async def _first(urls: list[str], timeout: float) -> tuple[dict[str, Any] | None, str]:
    """The first of ``urls`` that serves a JSON object (and its URL), else the reasons."""
    reasons: list[str] = []
    for url in urls:
        data, where = await _get_json(url, timeout)
        if data is not None:
            return data, where
        reasons.append(where)
    return None, "; ".join(reasons)


def _prm_resource(rec: Results, url: str, where: str, resource: Any, evidence: list[dict[str, Any]]) -> None:
    """RFC 9728 section 3.3: ``resource`` is identical to the identifier the metadata URL was built
    from: the server URL for the path-aware URL (or one the challenge named), its origin for the
    root URL (where the server URL itself is accepted too: a challenge may name the root URL)."""
    root = sa.prm_urls(url, None)[-1]
    allowed = [url, sa.origin(url)] if where == root else [url]
    if not isinstance(resource, str):
        rec.skip("auth.prm-resource", "the metadata names no resource")
    elif sa.canonical_resource(resource) in {sa.canonical_resource(a) for a in allowed}:
        rec.ok("auth.prm-resource", f"resource {resource}")
    else:
        want = " or ".join(repr(sa.canonical_resource(a)) for a in allowed)
        rec.fail(
            "auth.prm-resource", f"{where} names resource {resource!r}; RFC 9728 section 3.3 wants {want}", evidence
        )


async def check_auth(
    rec: Results,
    url: str,
    unauthorized: RawResponse | None,
    timeout: float,
    credentials: tuple[tuple[str, str], ...] = (),
    tokens: AuthTokens | None = None,
) -> None:
    """Run the ``auth.*`` checks; ``unauthorized`` is the answer to a credential-less request,
    ``credentials`` the run's own ``Authorization`` (if it has one), ``tokens`` the ones the
    user handed over (``checks/auth_binding.py``)."""
    if unauthorized is None:
        skip_auth(rec, "the server could not be probed without credentials")
        return
    if unauthorized.status != 401:
        skip_auth(rec, f"the server did not ask for authorization (HTTP {unauthorized.status} without a token)")
        return
    found = await _discovery(rec, url, unauthorized, timeout)
    own = bearer_token(credentials)
    await check_auth_rules(rec, url, unauthorized, found, timeout, own)
    await check_auth_binding(rec, url, rec.revision or LATEST_HANDSHAKE, timeout, tokens or AuthTokens(), own)
    await check_redirects(rec, url, found, timeout)
    await check_legacy(rec, url, timeout)


async def _discovery(rec: Results, url: str, unauthorized: RawResponse, timeout: float) -> Discovered:
    """The discovery checks (``AUTH_CHECKS``); what they found, for the rules."""
    header = unauthorized.header("www-authenticate")
    challenge = sa.bearer_challenge([header]) if header else None
    hinted = challenge.resource_metadata if challenge is not None else None
    prm, where = await _first(sa.prm_urls(url, hinted), timeout)
    evidence = _probe_evidence(url, unauthorized)
    if challenge is None:
        rec.fail(
            "auth.www-authenticate",
            "the 401 carries no Bearer WWW-Authenticate challenge"
            if header
            else "the 401 carries no WWW-Authenticate header",
            evidence,
        )
    elif hinted:
        rec.ok("auth.www-authenticate", f"Bearer, resource_metadata={hinted}")
    elif rec.revision == "2025-06-18":  # (that page has no well-known fallback for the server)
        rec.fail("auth.www-authenticate", "the Bearer challenge names no resource_metadata", evidence)
    elif prm is not None:
        rec.ok("auth.www-authenticate", f"Bearer without resource_metadata; the well-known fallback {where} works")
    else:
        rec.fail(
            "auth.www-authenticate", f"Bearer without resource_metadata and no well-known fallback: {where}", evidence
        )

    if prm is None:
        rec.fail("auth.protected-resource-metadata", f"unreachable: {where}", evidence)
        for check in (*AUTH_CHECKS[2:], "auth.prm-resource"):
            rec.skip(check, "no protected-resource metadata")
        return Discovered(challenge)
    prm_url = where
    prm_evidence = [exchange("GET", where, status=200, response_body=json.dumps(prm))]
    resource = prm.get("resource")
    servers = prm.get("authorization_servers")
    problems = []
    if not isinstance(resource, str):
        problems.append("no resource")
    elif not sa.resource_matches(resource, url):
        problems.append(f"resource {resource!r} does not cover {url!r}")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        problems.append("authorization_servers is missing or empty")
    if problems:
        rec.fail("auth.protected-resource-metadata", f"{where}: {'; '.join(problems)}", prm_evidence)
    else:
        rec.ok("auth.protected-resource-metadata", where)
    _prm_resource(rec, url, where, resource, prm_evidence)
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        for check in AUTH_CHECKS[2:]:
            rec.skip(check, "no authorization server named")
        return Discovered(challenge, prm, prm_url)

    issuer = servers[0]
    metadata, where = await _first(sa.as_metadata_urls(issuer), timeout)
    if metadata is None:
        rec.fail("auth.authorization-server-metadata", f"unreachable for issuer {issuer}: {where}", prm_evidence)
        rec.skip("auth.pkce", "no authorization server metadata")
        return Discovered(challenge, prm, prm_url)
    as_evidence = [exchange("GET", where, status=200, response_body=json.dumps(metadata))]
    try:
        sa.check_issuer(metadata, issuer)
    except sa.DiscoveryError as exc:
        rec.fail("auth.authorization-server-metadata", f"{where}: {exc}", as_evidence)
    else:
        rec.ok("auth.authorization-server-metadata", where)
    try:
        sa.check_pkce(metadata)
    except sa.DiscoveryError:
        got = metadata.get("code_challenge_methods_supported")
        rec.fail("auth.pkce", f"code_challenge_methods_supported is {got!r}, without S256", as_evidence)
    else:
        rec.ok("auth.pkce", "S256")
    return Discovered(challenge, prm, prm_url, metadata, where)
