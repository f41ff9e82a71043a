"""Authorization checks for 2025-03-26: metadata at the MCP server's own root, or the default endpoints.

Theory of operation
-------------------
The 2025-03-26 ``basic/authorization`` page has no protected-resource
metadata: the authorization server lives at the MCP server's origin (the
"authorization base URL"), "MCP servers SHOULD ... implement OAuth 2.0
Authorization Server Metadata (RFC8414)" at
``<origin>/.well-known/oauth-authorization-server``, and "Servers that do not
support Authorization Server Metadata MUST follow the default URI schema"
(``/authorize``, ``/token``, ``/register``).  Run only when 2025-03-26 was
negotiated, on a server that answered 401 without a token:

* ``auth.legacy-metadata`` (SHOULD): the root metadata URL serves a JSON object;
* ``auth.legacy-discovery`` (MUST): that metadata, or else the default
  ``/authorize`` and ``/token`` endpoints answer with anything but 404
  (a bare GET and an empty POST: an OAuth error is what a live endpoint says).
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..._sansio import auth as sa
from ..._sansio.http import header_names as hn
from ..evidence import exchange
from ..rawhttp import ProbeError, request
from ..results import Results

__all__ = ["LEGACY_CHECKS", "check_legacy"]

LEGACY_CHECKS: Final = ("auth.legacy-metadata", "auth.legacy-discovery")


async def _status(url: str, method: str, timeout: float) -> tuple[int | None, str]:
    headers = {"Accept": "application/json"}
    body = None
    if method == "POST":
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        resp = await request(url, method, headers, body, timeout=timeout, read_body=False)
    except ProbeError as exc:
        return None, str(exc)
    return resp.status, ""


async def check_legacy(rec: Results, url: str, timeout: float) -> None:
    """Run ``LEGACY_CHECKS`` (only for a 2025-03-26 session)."""
    if rec.revision != "2025-03-26":
        for check in LEGACY_CHECKS:
            rec.skip(check, "2025-03-26 only")
        return
    base = sa.legacy_issuer(url)
    where = f"{base}/.well-known/oauth-authorization-server"
    try:
        resp = await request(
            where, "GET", {"Accept": "application/json", hn.VERSION_HEADER: "2025-03-26"}, timeout=timeout
        )
    except ProbeError as exc:
        for check in LEGACY_CHECKS:
            rec.skip(check, str(exc))
        return
    doc: Any = None
    if resp.status == 200:
        try:
            doc = json.loads(resp.body)
        except ValueError:
            doc = None
    evidence = [exchange("GET", where, status=resp.status, response_headers=resp.headers, response_body=resp.body)]
    if isinstance(doc, dict):
        rec.ok("auth.legacy-metadata", where)
        rec.ok("auth.legacy-discovery", f"metadata at {where}")
        return
    rec.fail("auth.legacy-metadata", f"{where}: HTTP {resp.status}, no metadata object", evidence)
    missing = []
    for path, method in (("/authorize", "GET"), ("/token", "POST")):
        status, why = await _status(base + path, method, timeout)
        if status is None:
            rec.skip("auth.legacy-discovery", why)
            return
        evidence.append(exchange(method, base + path, status=status))
        if status == 404:
            missing.append(f"{method} {path}: 404")
    if missing:
        rec.fail("auth.legacy-discovery", "no metadata and no default endpoints: " + ", ".join(missing), evidence)
    else:
        rec.ok("auth.legacy-discovery", "no metadata; the default /authorize and /token endpoints answer")
