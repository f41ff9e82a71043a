"""Streamable HTTP transport checks: raw exchanges against the target URL.

Theory of operation
-------------------
These run after the tour, for ``http://``/``https://`` targets only (for
every other target each ``http.*`` check is ``skip`` "not an HTTP target").
Each sends hand-made requests (``rawhttp.request``, one TCP connection each,
bounded by the run's timeout) to the endpoint, in the era the tour
negotiated:

* handshake era (2025-03-26 .. 2025-11-25; spec ``basic/transports``): a
  fresh ``initialize`` (``http.content-type`` for its answer,
  ``http.session-id`` for the id it hands out), ``notifications/initialized``
  (``http.notification-202``), ``ping`` with MCP-Protocol-Version 1999-01-01
  (``http.protocol-version``, 2025-06-18 on), ``ping`` naming a session
  nobody issued (``http.unknown-session``, best practice: the MUST of 404
  covers terminated sessions, which ``http.delete`` tests), GET (``http.get-stream``: an
  event stream or 405; only the head is read), DELETE (``http.delete``: 405,
  or 2xx and then 404 for the ended session);
* stateless era (2026-07-28; ``basic/transports/streamable-http``):
  ``server/discover`` with the mirrored headers (``http.content-type``),
  without ``Mcp-Method`` and with a wrong one (``http.method-header``: 400 and
  -32020), with MCP-Protocol-Version 1999-01-01 (``http.protocol-version``:
  400), GET and DELETE (``http.no-get``: 405);
* both: an ``initialize``/``server/discover`` carrying
  ``Origin: http://trimcp-check.invalid`` (``http.origin``: 403; before
  2025-11-25 the page names no status, any 4xx refusal counts).  In the
  handshake era the same ``initialize`` with the server's own origin goes first
  (``http.valid-host``): only a server that accepted it can pass ``http.origin``,
  and the second session id it hands out is compared with the first
  (``http.session-unique``).  Before the DELETE, ``checks/http_sessions.py``
  runs the session and stream checks in the raw session.

After a fallback to the 2024-11-05 HTTP+SSE transport (``transport ==
"http+sse"``) none of this applies to the URL, which is then the SSE endpoint:
``checks/sse_legacy.py`` runs instead.

The spec puts no rule on the *server* for a POST lacking the
``Accept: application/json, text/event-stream`` header (the MUST is the
client's), so there is no check for it.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..._sansio import jsonrpc as rpc
from ..._sansio.http import header_names as hn
from ..._sansio.revisions import Era, HttpTransport, at_least, get_revision
from ..evidence import exchange
from ..rawhttp import ProbeError, RawClient, RawResponse
from ..results import Results
from .http_sessions import SESSION_CHECKS, check_sessions
from .probes import BOGUS_REVISION, CLIENT_INFO, envelope
from .sse_legacy import SSE_CHECKS, check_sse_transport, own_origin, skip_sse

__all__ = ["HTTP_CHECKS", "check_http_transport", "is_http_target", "skip_http"]

HTTP_CHECKS: Final = (
    "http.origin",
    "http.content-type",
    "http.notification-202",
    "http.session-id",
    "http.unknown-session",
    "http.delete",
    "http.get-stream",
    "http.protocol-version",
    "http.method-header",
    "http.no-get",
)
FOREIGN_ORIGIN: Final = "http://trimcp-check.invalid"
UNKNOWN_SESSION: Final = "trimcp-check-no-such-session"
#: An MCP-Protocol-Version that is no revision at all (``transports.protocol-version-400``: "invalid").
MALFORMED_REVISION: Final = "not-a-revision"
#: The id of a JSON-RPC response posted to the server that answers no request of its own.
STRAY_ANSWER_ID: Final = "trimcp-check-no-such-request"
_ACCEPT: Final = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_ANSWER_TYPES: Final = ("application/json", "text/event-stream")


def is_http_target(target: str) -> bool:
    return target.startswith(("http://", "https://"))


#: The stdio checks that HTTP targets skip (besides the two the runner skips itself).
_STDIO_ONLY: Final = ("stdio.one-line-messages", "stdio.no-requests")


def skip_http(rec: Results, reason: str = "not an HTTP target") -> None:
    for check in (*HTTP_CHECKS, *SESSION_CHECKS, *SSE_CHECKS):
        rec.skip(check, reason)


async def check_http_transport(
    rec: Results, url: str, revision: str, raw: RawClient, transport: str | None = None
) -> None:
    """Run the ``http.*`` checks that apply to ``revision`` against ``url`` (the ``sse.*``
    ones instead when the run spoke HTTP+SSE)."""
    for check in _STDIO_ONLY:
        rec.skip(check, "not a stdio target")
    if transport == "http+sse":
        for check in (*HTTP_CHECKS, *SESSION_CHECKS):
            rec.skip(check, "the server speaks HTTP+SSE (2024-11-05), not Streamable HTTP")
        await check_sse_transport(rec, url, revision, raw)
        return
    skip_sse(rec, "the server speaks Streamable HTTP, not HTTP+SSE")
    if get_revision(revision).era is Era.STATELESS:
        await _stateless(rec, url, revision, raw)
    elif get_revision(revision).http_transport is HttpTransport.STREAMABLE:
        await _handshake(rec, url, revision, raw)


def _visible_ascii(value: str) -> bool:
    return bool(value) and all("\x21" <= c <= "\x7e" for c in value)


def _content_type(rec: Results, what: str, resp: RawResponse) -> None:
    if resp.status != 200:
        rec.fail("http.content-type", f"{what}: HTTP {resp.status}")
    elif resp.content_type in _ANSWER_TYPES:
        rec.ok("http.content-type", f"{what}: {resp.content_type}")
    else:
        rec.fail("http.content-type", f"{what}: Content-Type {resp.header('content-type')!r}")


def _expect(rec: Results, check: str, what: str, resp: RawResponse, *wanted: int) -> bool:
    if resp.status in wanted:
        rec.ok(check, f"{what}: {resp.status}")
        return True
    rec.fail(check, f"{what}: HTTP {resp.status}, expected {' or '.join(map(str, wanted))}")
    return False


# --------------------------------------------------------------------------- handshake era


async def _handshake(rec: Results, url: str, revision: str, raw: RawClient) -> None:
    init = rpc.message_to_obj(
        rpc.Request(
            1,
            "initialize",
            {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
        )
    )
    try:
        first = await raw.request(url, "POST", _ACCEPT, init)
    except ProbeError as exc:
        rec.fail("http.content-type", f"initialize: {exc}")
        await _origin(rec, url, init, {}, raw, revision)
        return
    _content_type(rec, "initialize", first)
    sid = first.header(hn.SESSION_HEADER)
    base = {**_ACCEPT}
    if get_revision(revision).protocol_version_header:
        base[hn.VERSION_HEADER] = revision
    if sid is None:
        rec.skip("http.session-id", "the server issues no session id")
        rec.skip("http.unknown-session", "the server issues no session id")
        rec.skip("http.delete", "the server issues no session id")
    elif _visible_ascii(sid):
        rec.ok("http.session-id", f"{len(sid)} characters")
        base[hn.SESSION_HEADER] = sid
    else:
        rec.fail("http.session-id", f"Mcp-Session-Id {sid!r}")
        base[hn.SESSION_HEADER] = sid
    try:
        await _handshake_steps(rec, url, revision, base, sid, raw)
    except ProbeError as exc:
        rec.fail("http.content-type", f"the session broke: {exc}")
    control = await _own_origin(rec, url, init, raw, sid)
    await _origin(rec, url, init, {}, raw, revision, control)


async def _handshake_steps(
    rec: Results, url: str, revision: str, base: dict[str, str], sid: str | None, raw: RawClient
) -> None:
    note = rpc.message_to_obj(rpc.Notification("notifications/initialized", None))
    resp = await raw.request(url, "POST", base, note)
    if _expect(rec, "http.notification-202", "notifications/initialized", resp, 202) and resp.body.strip():
        rec.fail("http.notification-202", f"202 with a body of {len(resp.body)} bytes")
    # "If the input is a JSON-RPC response or notification": a response too.  One that answers
    # no request of the server may be refused (an error status) or accepted (202, no body).
    answer = rpc.message_to_obj(rpc.Response(STRAY_ANSWER_ID, {}))
    resp = await raw.request(url, "POST", base, answer)
    if not (resp.status >= 400 or (resp.status == 202 and not resp.body.strip())):
        body = f" with a body of {len(resp.body)} bytes" if resp.body.strip() else ""
        rec.fail(
            "http.notification-202",
            f"a JSON-RPC response: HTTP {resp.status}{body}, expected 202 with no body or an error status",
            [
                exchange(
                    "POST",
                    url,
                    base,
                    json.dumps(answer),
                    status=resp.status,
                    response_headers=resp.headers,
                    response_body=resp.body,
                )
            ],
        )
    ping = rpc.message_to_obj(rpc.Request(2, "ping", None))
    if get_revision(revision).protocol_version_header:
        # "an invalid or unsupported MCP-Protocol-Version": a well-formed revision nobody
        # supports, then a value that is no revision at all; each must get 400.
        for version in (BOGUS_REVISION, MALFORMED_REVISION):
            headers = {**base, hn.VERSION_HEADER: version}
            resp = await raw.request(url, "POST", headers, ping)
            if resp.status != 400:
                rec.fail(
                    "http.protocol-version",
                    f"ping with MCP-Protocol-Version {version}: HTTP {resp.status}, expected 400",
                    [
                        exchange(
                            "POST",
                            url,
                            headers,
                            json.dumps(ping),
                            status=resp.status,
                            response_headers=resp.headers,
                            response_body=resp.body,
                        )
                    ],
                )
                break
            rec.ok("http.protocol-version", f"ping with MCP-Protocol-Version {version}: 400")
    if sid is not None:
        resp = await raw.request(url, "POST", {**base, hn.SESSION_HEADER: UNKNOWN_SESSION}, ping)
        _expect(rec, "http.unknown-session", "ping naming an unknown session", resp, 404)
    get_headers = {k: v for k, v in base.items() if k != "Content-Type"} | {"Accept": "text/event-stream"}
    resp = await raw.request(url, "GET", get_headers, read_body=False)
    if resp.status == 405:
        rec.ok("http.get-stream", "405: no standalone stream")
    elif resp.status == 200 and resp.content_type == "text/event-stream":
        rec.ok("http.get-stream", "text/event-stream")
    else:
        rec.fail("http.get-stream", f"HTTP {resp.status} {resp.header('content-type') or ''}".strip())
    await check_sessions(rec, url, revision, base, sid, raw)
    if sid is None:
        return
    resp = await raw.request(url, "DELETE", get_headers)
    if resp.status == 405:
        rec.ok("http.delete", "405: the client may not end sessions")
    elif 200 <= resp.status < 300:
        after = await raw.request(url, "POST", base, rpc.message_to_obj(rpc.Request(3, "ping", None)))
        _expect(rec, "http.delete", f"DELETE answered {resp.status}, then ping in the ended session", after, 404)
    else:
        rec.fail("http.delete", f"DELETE answered HTTP {resp.status}, expected 2xx or 405")


async def _own_origin(rec: Results, url: str, body: dict[str, Any], raw: RawClient, first: str | None) -> bool:
    """``http.valid-host``: the probe of ``http.origin`` with the server's own Origin and Host
    must be served, or refusing the foreign one proves nothing.  True when it was."""
    headers = {**_ACCEPT, "Origin": own_origin(url)}
    try:
        resp = await raw.request(url, "POST", headers, body)
    except ProbeError as exc:
        rec.fail("http.valid-host", str(exc), [exchange("POST", url, headers, str(body))])
        return False
    shown = [
        exchange(
            "POST", url, headers, str(body), status=resp.status, response_headers=resp.headers, response_body=resp.body
        )
    ]
    if resp.status != 200:
        rec.fail("http.valid-host", f"initialize with Origin {own_origin(url)}: HTTP {resp.status}", shown)
        return False
    rec.ok("http.valid-host", f"initialize with Origin {own_origin(url)}: 200")
    sid = resp.header(hn.SESSION_HEADER)
    if first is None or sid is None:
        rec.skip("http.session-unique", "the server issues no session id")
    elif sid == first:
        rec.warn("http.session-unique", "two initialize requests got the same Mcp-Session-Id", shown)
    else:
        rec.ok("http.session-unique", "two sessions, two ids")
    await _end(url, sid, raw)
    return True


async def _end(url: str, sid: str | None, raw: RawClient) -> None:
    if sid:  # a session opened only to probe: end it again (best effort)
        try:
            await raw.request(url, "DELETE", {hn.SESSION_HEADER: sid})
        except ProbeError:
            pass


async def _origin(
    rec: Results,
    url: str,
    body: dict[str, Any],
    extra: dict[str, str],
    raw: RawClient,
    revision: str,
    control: bool = True,
) -> None:
    headers = {**_ACCEPT, **extra, "Origin": FOREIGN_ORIGIN}
    try:
        resp = await raw.request(url, "POST", headers, body)
    except ProbeError as exc:
        rec.fail("http.origin", str(exc), [exchange("POST", url, headers, str(body))])
        return
    shown = [
        exchange(
            "POST", url, headers, str(body), status=resp.status, response_headers=resp.headers, response_body=resp.body
        )
    ]
    # 403 is named from 2025-11-25 on; before, the page asks only that the Origin be validated.
    refused = resp.status == 403 or (not at_least(revision, "2025-11-25") and 400 <= resp.status < 500)
    if not refused:
        wanted = "403" if at_least(revision, "2025-11-25") else "a 4xx refusal"
        rec.fail("http.origin", f"Origin {FOREIGN_ORIGIN}: HTTP {resp.status}, expected {wanted}", shown)
    elif control:
        rec.ok("http.origin", f"Origin {FOREIGN_ORIGIN}: {resp.status}")
    else:
        rec.skip("http.origin", "the server refused its own Origin too (http.valid-host): no evidence of validation")
    if resp.status == 200:
        await _end(url, resp.header(hn.SESSION_HEADER), raw)


# --------------------------------------------------------------------------- stateless era


async def _stateless(rec: Results, url: str, revision: str, raw: RawClient) -> None:
    body = rpc.message_to_obj(rpc.Request(1, "server/discover", {"_meta": envelope(revision)}))
    base = {**_ACCEPT, hn.VERSION_HEADER: revision, hn.METHOD_HEADER: "server/discover"}
    try:
        _content_type(rec, "server/discover", await raw.request(url, "POST", base, body))
        for what, headers in (
            ("without Mcp-Method", {k: v for k, v in base.items() if k != hn.METHOD_HEADER}),
            ("with Mcp-Method tools/list", {**base, hn.METHOD_HEADER: "tools/list"}),
        ):
            resp = await raw.request(url, "POST", headers, body)
            code = resp.error_code()
            if resp.status == 400 and code == rpc.HEADER_MISMATCH:
                rec.ok("http.method-header", f"server/discover {what}: 400, -32020")
            else:
                rec.fail("http.method-header", f"server/discover {what}: HTTP {resp.status}, error {code}")
        resp = await raw.request(url, "POST", {**base, hn.VERSION_HEADER: BOGUS_REVISION}, body)
        _expect(rec, "http.protocol-version", f"MCP-Protocol-Version {BOGUS_REVISION}", resp, 400)
        plain = {"Accept": "text/event-stream", hn.VERSION_HEADER: revision}
        for method in ("GET", "DELETE"):
            resp = await raw.request(url, method, plain, read_body=False)
            if resp.status == 405:
                rec.ok("http.no-get", "GET and DELETE: 405")
            else:
                rec.warn("http.no-get", f"{method}: HTTP {resp.status}, the spec advises 405")
    except ProbeError as exc:
        rec.fail("http.content-type", str(exc))
    await _origin(rec, url, body, {hn.VERSION_HEADER: revision, hn.METHOD_HEADER: "server/discover"}, raw, revision)
