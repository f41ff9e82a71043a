"""Authorization checks on the authorization server's redirects: exact redirect URIs, ``iss``.

Theory of operation
-------------------
``basic/authorization`` (2025-06-18 on, "Open Redirection"): "Authorization
servers MUST validate exact redirect URIs against pre-registered values";
2026-07-28 ("Authorization Response Validation"): an authorization server
that puts ``iss`` in its authorization responses "MUST advertise this by
setting ``authorization_response_iss_parameter_supported`` to ``true``".

Both show only in the answer to an authorization request, which needs a
client id (and PKCE S256 in the metadata: without it a client must not go on,
so neither does the harness).  When the metadata names a ``registration_endpoint``, the harness
registers one public client (RFC 7591; one registration per run, a side
effect the report's detail names) with a loopback redirect URI that nothing
listens on, and then sends three authorization requests with PKCE S256,
reading only the status and ``Location`` (nothing is followed):

* ``redirect_uri`` on a foreign host, and the registered URI with a longer
  path: a redirect to either fails ``auth.redirect-uri``; a 4xx for both
  passes; a page (a login form, say) decides nothing and is ``skip``;
* the registered URI, once as asked and once with an unsupported
  ``response_type`` (an error response, which the sentence names too): a
  redirect carrying ``iss`` while the metadata does not set
  ``authorization_response_iss_parameter_supported: true`` fails
  ``auth.iss-advertised``; ``iss`` with the flag passes; no redirect, or none
  with ``iss``, is ``skip`` (the ``iss`` itself is a SHOULD, and a login page
  hides the answer).

No token is requested: the code (if one comes back) is never redeemed.
"""

from __future__ import annotations

import json
from typing import Any, Final
from urllib.parse import parse_qs, urlencode, urlsplit

from ..._sansio import auth as sa
from ..evidence import exchange
from ..rawhttp import ProbeError, RawResponse, request
from ..results import Results
from .auth_tokens import Discovered

__all__ = ["REDIRECT_CHECKS", "REGISTERED_REDIRECT", "check_redirects"]

REDIRECT_CHECKS: Final = ("auth.redirect-uri", "auth.iss-advertised")
#: Loopback, port 9 (discard): nothing is meant to answer there.
REGISTERED_REDIRECT: Final = "http://127.0.0.1:9/trimcp-check/callback"
FOREIGN_REDIRECT: Final = "https://trimcp-check.invalid/callback"


def _skip(rec: Results, reason: str) -> None:
    for check in REDIRECT_CHECKS:
        rec.skip(check, reason)


async def _register(endpoint: str, timeout: float) -> tuple[str | None, str]:
    body = {
        "client_name": "trimcp check (redirect probe)",
        "redirect_uris": [REGISTERED_REDIRECT],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    try:
        resp = await request(
            endpoint, "POST", {"Content-Type": "application/json", "Accept": "application/json"}, body, timeout=timeout
        )
    except ProbeError as exc:
        return None, str(exc)
    try:
        client_id = json.loads(resp.body).get("client_id") if resp.status in (200, 201) else None
    except (ValueError, AttributeError):
        client_id = None
    if not isinstance(client_id, str) or not client_id:
        return None, f"registration at {endpoint} gave HTTP {resp.status} and no client_id"
    return client_id, ""


def _redirected_to(resp: RawResponse, prefix: str) -> str | None:
    location = resp.header("location") or ""
    return location if 300 <= resp.status < 400 and location.startswith(prefix) else None


async def check_redirects(rec: Results, url: str, found: Discovered, timeout: float) -> None:
    """Run ``REDIRECT_CHECKS`` on the authorization server discovery found."""
    meta = found.as_metadata
    if meta is None:
        _skip(rec, "no authorization server metadata")
        return
    try:
        sa.check_pkce(dict(meta))
    except sa.DiscoveryError:
        _skip(rec, "no PKCE S256 advertised: a client must not send an authorization request")
        return
    authorize, register = meta.get("authorization_endpoint"), meta.get("registration_endpoint")
    if not isinstance(authorize, str) or not isinstance(register, str):
        _skip(rec, "the metadata names no authorization_endpoint or no registration_endpoint to get a client id from")
        return
    client_id, why = await _register(register, timeout)
    if client_id is None:
        _skip(rec, why)
        return
    params: dict[str, str] = {
        "response_type": "code",
        "client_id": client_id,
        "state": "trimcp-check",
        "code_challenge": sa.Pkce.from_random(bytes(32)).challenge,
        "code_challenge_method": "S256",
        "resource": sa.canonical_resource(url),
    }

    async def authorize_with(redirect_uri: str, **extra: str) -> tuple[RawResponse | None, str, dict[str, Any]]:
        target = (
            authorize
            + ("&" if urlsplit(authorize).query else "?")
            + urlencode({**params, "redirect_uri": redirect_uri, **extra})
        )
        try:
            resp = await request(target, "GET", {"Accept": "text/html"}, timeout=timeout, read_body=False)
        except ProbeError as exc:
            return None, str(exc), exchange("GET", target)
        return resp, "", exchange("GET", target, status=resp.status, response_headers=resp.headers)

    outcomes: list[str] = []
    undecided: list[str] = []
    for what, uri in (
        ("a foreign redirect_uri", FOREIGN_REDIRECT),
        ("the registered redirect_uri with a longer path", REGISTERED_REDIRECT + "-other"),
    ):
        resp, why, evidence = await authorize_with(uri)
        if resp is None:
            undecided.append(f"{what}: {why}")
        elif _redirected_to(resp, uri):
            rec.fail(
                "auth.redirect-uri",
                f"{what} ({uri}) was redirected to (HTTP {resp.status}); client "
                f"{client_id} registered only {REGISTERED_REDIRECT}",
                [evidence],
            )
            break
        elif 400 <= resp.status < 500:
            outcomes.append(f"{what}: HTTP {resp.status}")
        else:
            undecided.append(f"{what}: HTTP {resp.status} without a redirect to it")
    else:
        if undecided:
            rec.skip("auth.redirect-uri", "not judged: " + "; ".join(undecided))
        else:
            rec.ok("auth.redirect-uri", f"registered client {client_id}; refused " + ", ".join(outcomes))
    await _iss(rec, meta, found.as_url, authorize_with)


async def _iss(rec: Results, meta: Any, as_url: str, authorize_with: Any) -> None:
    check = "auth.iss-advertised"
    # "in authorization responses, including error responses": a success and an error (an
    # unsupported response_type, which RFC 6749 4.1.2.1 redirects to a valid redirect_uri).
    carrying: list[tuple[str, dict[str, Any]]] = []
    unread: list[str] = []
    for what, extra in (
        ("the authorization response", {}),
        ("the error response", {"response_type": "trimcp-check-unsupported"}),
    ):
        resp, why, evidence = await authorize_with(REGISTERED_REDIRECT, **extra)
        location = _redirected_to(resp, REGISTERED_REDIRECT) if resp is not None else None
        if resp is None or location is None:
            unread.append(f"{what}: {why or f'HTTP {resp.status if resp else 0} without a redirect'}")
        elif parse_qs(urlsplit(location).query).get("iss"):
            carrying.append((what, evidence))
        else:
            unread.append(f"{what} carries no iss")
    if not carrying:
        rec.skip(check, "; ".join(unread))
    elif meta.get("authorization_response_iss_parameter_supported") is True:
        rec.ok(check, f"iss in {' and '.join(w for w, _ in carrying)}, advertised in the metadata")
    else:
        rec.fail(
            check,
            f"{' and '.join(w for w, _ in carrying)} carries iss but the metadata does not set "
            "authorization_response_iss_parameter_supported: true",
            [*(e for _, e in carrying), exchange("GET", as_url, status=200, response_body=json.dumps(meta))],
        )
