"""Authorization checks on the resource server's rules: refusals, forged tokens, scope guidance.

Theory of operation
-------------------
``basic/authorization`` (2025-03-26 to 2026-07-28) makes the MCP server an
OAuth 2.1 resource server: "Invalid or expired tokens MUST receive a HTTP 401
response", the server validates tokens "before processing the request" so
that "no data is returned to unauthorized parties", and access tokens
"MUST NOT be included in the URI query string".  ``checks/auth.py`` walks
discovery and then hands what it found (``Discovered``) to
``check_auth_rules``, which sends a few raw HTTP requests (``rawhttp``) that
no correct client sends, each on its own connection:

* ``auth.no-token-refused``: a list request, a notification (handshake era),
  GET and DELETE, all without credentials: the POSTs must get 401 with a
  Bearer challenge, GET and DELETE 401 or 405 (a method the endpoint does
  not serve reveals nothing);
* ``auth.invalid-token`` / ``auth.invalid-token-error``: the opening request
  with ``Authorization: Bearer <forged>`` must get 401 with a Bearer
  challenge, and that challenge should say ``error="invalid_token"``;
* ``auth.query-token``: when the run holds a real token, the opening request
  with that token as ``?access_token=`` and no header must not be accepted;
* ``auth.scope-challenge`` (2025-11-25 on): the 401 names ``scope``;
* ``auth.no-offline-access`` (a SHOULD in 2026-07-28, advice before): ``offline_access`` is neither
  challenged nor listed in ``scopes_supported``;
* ``auth.https-endpoints`` (2025-06-18 on): the authorization servers and
  their metadata's endpoints use ``https``; loopback hosts are not judged
  (a developer's local server), a plain-``http`` public host fails;
* ``auth.dcr`` (2025-06-18) / ``auth.cimd`` (2025-11-25 on): the metadata
  names a ``registration_endpoint`` / ``client_id_metadata_document_supported``.

The requests take the shape of the negotiated revision (headers and
``_meta`` of the stateless era), so a 400 for a malformed request cannot be
mistaken for a refusal.  The run's token never appears in a detail or in
evidence: it is replaced by ``<token>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import attrs

from ..._sansio import auth as sa
from ..._sansio.http import header_names as hn
from ..._sansio.revisions import LATEST_HANDSHAKE, Era, get_revision
from ..evidence import exchange
from ..rawhttp import ProbeError, RawResponse, request
from ..results import Results
from .probes import CLIENT_INFO, envelope

__all__ = ["FORGED_TOKEN", "RULE_CHECKS", "Discovered", "bearer_token", "check_auth_rules", "opening_request"]

RULE_CHECKS: Final = (
    "auth.no-token-refused",
    "auth.invalid-token",
    "auth.invalid-token-error",
    "auth.query-token",
    "auth.scope-challenge",
    "auth.no-offline-access",
    "auth.https-endpoints",
    "auth.dcr",
    "auth.cimd",
)
FORGED_TOKEN: Final = "trimcp-check-forged-token"
_ACCEPT: Final = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "::1"})
#: Where a black box finds the authorization server's endpoints (RFC 8414 section 2).
_ENDPOINT_SUFFIX: Final = "_endpoint"


@attrs.frozen
class Discovered:
    """What discovery found (``None`` where it found nothing), with the URLs it came from."""

    challenge: sa.Challenge | None = None
    prm: Mapping[str, Any] | None = None
    prm_url: str = ""
    as_metadata: Mapping[str, Any] | None = None
    as_url: str = ""


def bearer_token(credentials: tuple[tuple[str, str], ...]) -> str | None:
    """The access token of an ``Authorization: Bearer`` among the run's credentials."""
    for name, value in credentials:
        if name.lower() == "authorization" and value[:7].lower() == "bearer ":
            return value[7:].strip() or None
    return None


def _revision(rec: Results) -> str:
    # Nothing negotiated (the 401 stopped the client): speak the newest handshake revision.
    return rec.revision or LATEST_HANDSHAKE


def is_stateless(revision: str) -> bool:
    """Whether ``revision`` is of the stateless era (no session, ``_meta`` envelope on every request)."""
    return get_revision(revision).era is Era.STATELESS


def shaped_request(revision: str, method: str, params: dict[str, Any], rid: int | None) -> tuple[dict[str, str], Any]:
    """The headers and body of a hand-made POST of ``method`` as a client of ``revision`` sends it."""
    headers = dict(_ACCEPT)
    if get_revision(revision).protocol_version_header:
        headers[hn.VERSION_HEADER] = revision
    if is_stateless(revision):
        headers[hn.METHOD_HEADER] = method
        params = {**params, "_meta": envelope(revision)}
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if rid is not None:
        body["id"] = rid
    return headers, body


def opening_request(revision: str) -> tuple[dict[str, str], Any]:
    """The first request of a session of ``revision`` (``initialize`` or ``server/discover``)."""
    if is_stateless(revision):
        return shaped_request(revision, "server/discover", {}, 1)
    params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return shaped_request(revision, "initialize", params, 1)


def _evidence(
    method: str, url: str, headers: Mapping[str, str], body: Any, resp: RawResponse | None, secret: str | None = None
) -> dict[str, Any]:
    def hide(text: str) -> str:
        return text.replace(secret, "<token>") if secret else text

    sent = None if body is None else json.dumps(body)
    if resp is None:
        return exchange(method, hide(url), headers, sent)
    return exchange(
        method,
        hide(url),
        headers,
        sent,
        status=resp.status,
        response_headers=resp.headers,
        response_body=hide(resp.body.decode("utf-8", "replace")),
    )


async def _send(
    url: str,
    method: str,
    headers: dict[str, str],
    body: Any,
    timeout: float,
) -> tuple[RawResponse | None, str]:
    try:
        return await request(url, method, headers, body, timeout=timeout, read_body=method == "POST"), ""
    except ProbeError as exc:
        return None, str(exc)


def _challenge(resp: RawResponse) -> sa.Challenge | None:
    value = resp.header("www-authenticate")
    return sa.bearer_challenge([value]) if value else None


async def _no_token(rec: Results, url: str, revision: str, timeout: float) -> None:
    check = "auth.no-token-refused"
    probes: list[tuple[str, str, dict[str, str], Any, tuple[int, ...]]] = []
    headers, body = shaped_request(revision, "tools/list", {}, 2)
    probes.append(("tools/list", "POST", headers, body, (401,)))
    if not is_stateless(revision):  # (the stateless era has no client notification to send unasked)
        headers, body = shaped_request(revision, "notifications/initialized", {}, None)
        probes.append(("notifications/initialized", "POST", headers, body, (401,)))
    plain = {
        k: v
        for k, v in shaped_request(revision, "tools/list", {}, None)[0].items()
        if k not in ("Content-Type", hn.METHOD_HEADER)
    }
    probes.append(("GET", "GET", {**plain, "Accept": "text/event-stream"}, None, (401, 405)))
    probes.append(("DELETE", "DELETE", plain, None, (401, 405)))
    seen: list[str] = []
    for what, method, headers, body, wanted in probes:
        resp, why = await _send(url, method, headers, body, timeout)
        if resp is None:
            rec.skip(check, f"{what} without a token: {why}")
            return
        if resp.status not in wanted:
            rec.fail(
                check,
                f"{what} without a token: HTTP {resp.status}, expected {' or '.join(map(str, wanted))}",
                evidence=[_evidence(method, url, headers, body, resp)],
            )
            return
        if resp.status == 401 and _challenge(resp) is None:
            rec.fail(
                check,
                f"{what} without a token: 401 without a Bearer WWW-Authenticate challenge",
                evidence=[_evidence(method, url, headers, body, resp)],
            )
            return
        seen.append(f"{what} {resp.status}")
    rec.ok(check, ", ".join(seen))


async def _forged(rec: Results, url: str, revision: str, timeout: float) -> None:
    headers, body = opening_request(revision)
    headers["Authorization"] = f"Bearer {FORGED_TOKEN}"
    method = body["method"]
    resp, why = await _send(url, "POST", headers, body, timeout)
    if resp is None:
        for check in ("auth.invalid-token", "auth.invalid-token-error"):
            rec.skip(check, f"{method} with a forged token: {why}")
        return
    evidence = [_evidence("POST", url, headers, body, resp)]
    challenge = _challenge(resp)
    if resp.status != 401:
        rec.fail(
            "auth.invalid-token", f"{method} with a forged token: HTTP {resp.status}, expected 401", evidence=evidence
        )
        rec.skip("auth.invalid-token-error", f"the forged token got HTTP {resp.status}, not 401")
        return
    if challenge is None:
        rec.fail(
            "auth.invalid-token",
            f"{method} with a forged token: 401 without a Bearer WWW-Authenticate challenge",
            evidence=evidence,
        )
        rec.fail(
            "auth.invalid-token-error",
            "the 401 for a forged token has no Bearer challenge to name an error",
            evidence=evidence,
        )
        return
    rec.ok("auth.invalid-token", f"{method} with a forged token: 401, Bearer challenge")
    if challenge.error == "invalid_token":
        rec.ok("auth.invalid-token-error", 'error="invalid_token"')
    else:
        rec.fail(
            "auth.invalid-token-error",
            f'the 401 for a forged token names error={challenge.error!r}, not "invalid_token"',
            evidence=evidence,
        )


async def _query(rec: Results, url: str, revision: str, timeout: float, token: str | None) -> None:
    check = "auth.query-token"
    if token is None:
        rec.skip(check, "the run holds no access token to put in the query string")
        return
    headers, body = opening_request(revision)
    sep = "&" if urlsplit(url).query else "?"
    target = f"{url}{sep}access_token={token}"
    resp, why = await _send(target, "POST", headers, body, timeout)
    if resp is None:
        rec.skip(check, why.replace(token, "<token>"))
        return
    if 200 <= resp.status < 300:
        rec.fail(
            check,
            f"{body['method']} with the token only in the query string: HTTP {resp.status}, accepted",
            evidence=[_evidence("POST", target, headers, body, resp, secret=token)],
        )
    else:
        rec.ok(check, f"the token in the query string alone: HTTP {resp.status}")


def _scopes(found: Discovered) -> tuple[list[str] | None, list[str] | None]:
    challenged = found.challenge.scope.split() if found.challenge is not None and found.challenge.scope else None
    listed = found.prm.get("scopes_supported") if found.prm is not None else None
    supported = [s for s in listed if isinstance(s, str)] if isinstance(listed, list) else None
    return challenged, supported


def _scope_rules(rec: Results, url: str, unauthorized: RawResponse, found: Discovered) -> None:
    headers, body = opening_request(LATEST_HANDSHAKE)
    evidence = [_evidence("POST", url, headers, body, unauthorized)]
    challenged, supported = _scopes(found)
    if challenged:
        rec.ok("auth.scope-challenge", f"scope={' '.join(challenged)!r}")
    else:
        rec.fail("auth.scope-challenge", "the 401 challenge names no scope", evidence=evidence)
    if challenged is None and supported is None:
        rec.skip("auth.no-offline-access", "neither the challenge nor the metadata lists scopes")
    elif "offline_access" in (challenged or []):
        rec.fail("auth.no-offline-access", "the 401 challenge asks for offline_access", evidence=evidence)
    elif "offline_access" in (supported or []):
        rec.fail(
            "auth.no-offline-access",
            f"{found.prm_url} lists offline_access in scopes_supported",
            evidence=[exchange("GET", found.prm_url, status=200, response_body=json.dumps(found.prm))],
        )
    else:
        rec.ok("auth.no-offline-access", "no offline_access among the scopes shown")


def _https(rec: Results, found: Discovered) -> None:
    check = "auth.https-endpoints"
    urls: list[tuple[str, str]] = []
    servers = found.prm.get("authorization_servers") if found.prm is not None else None
    if isinstance(servers, list):
        urls += [("authorization_servers", s) for s in servers if isinstance(s, str)]
    if found.as_metadata is not None:
        urls += [
            (k, v)
            for k, v in found.as_metadata.items()
            if isinstance(v, str) and (k == "issuer" or k.endswith(_ENDPOINT_SUFFIX))
        ]
    if not urls:
        rec.skip(check, "no authorization server endpoint was discovered")
        return
    plain = [(k, v) for k, v in urls if urlsplit(v).scheme != "https"]
    public = [(k, v) for k, v in plain if (urlsplit(v).hostname or "") not in _LOOPBACK]
    if public:
        where, doc = (found.as_url, found.as_metadata) if found.as_metadata is not None else (found.prm_url, found.prm)
        rec.fail(
            check,
            "not HTTPS: " + ", ".join(f"{k} {v}" for k, v in public),
            evidence=[exchange("GET", where, status=200, response_body=json.dumps(doc))],
        )
    elif plain:
        rec.skip(check, f"{len(plain)} endpoint(s) on a loopback host over plain HTTP: not judged")
    else:
        rec.ok(check, f"{len(urls)} URLs, all https")


def _registration(rec: Results, found: Discovered) -> None:
    if found.as_metadata is None:
        for check in ("auth.dcr", "auth.cimd"):
            rec.skip(check, "no authorization server metadata")
        return
    evidence = [exchange("GET", found.as_url, status=200, response_body=json.dumps(found.as_metadata))]
    endpoint = found.as_metadata.get("registration_endpoint")
    if isinstance(endpoint, str) and endpoint:
        rec.ok("auth.dcr", f"registration_endpoint {endpoint}")
    else:
        rec.fail("auth.dcr", f"{found.as_url} names no registration_endpoint", evidence)
    if found.as_metadata.get("client_id_metadata_document_supported") is True:
        rec.ok("auth.cimd", "client_id_metadata_document_supported: true")
    else:
        rec.fail("auth.cimd", f"{found.as_url} does not set client_id_metadata_document_supported: true", evidence)


async def check_auth_rules(
    rec: Results,
    url: str,
    unauthorized: RawResponse,
    found: Discovered,
    timeout: float,
    token: str | None,
) -> None:
    """Run the ``RULE_CHECKS`` against a server that answered ``unauthorized`` (a 401)."""
    revision = _revision(rec)
    await _no_token(rec, url, revision, timeout)
    await _forged(rec, url, revision, timeout)
    await _query(rec, url, revision, timeout, token)
    _scope_rules(rec, url, unauthorized, found)
    _https(rec, found)
    _registration(rec, found)
