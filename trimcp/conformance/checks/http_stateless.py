"""The 2026-07-28 Streamable HTTP checks (``http26.*``): request headers against the body.

Theory of operation
-------------------
For an ``http(s)://`` target that negotiated a stateless revision
(``basic/transports/streamable-http`` of 2026-07-28), ``check_http26`` sends
hand-made POSTs, each on its own TCP connection (a raw HTTP server costs no
process per connection), with the run's credentials:

* "Protocol Version Header": no ``MCP-Protocol-Version`` (400, -32020,
  unless the server also serves 2025-03-26 clients, which it MAY treat it
  as); a header that differs from the body's protocolVersion (400, -32020);
  an unsupported version in both (400, -32022 with ``data.supported``); a
  method the revision lacks (an unknown one, ``ping``, ``initialize``: 404
  with -32601);
* "Case Sensitivity": the request headers all lowercase and all uppercase;
* "Standard Request Headers" / "Server Validation": ``Mcp-Name`` left out
  or naming something else (400, -32020), Base64-encoded (decoded, so
  accepted); the target is a listed resource, a read-only tool or prompt
  whose arguments can be made up, or else a tool name nobody has (a refused
  probe runs nothing);
* "Custom Headers from Tool Parameters": every tool's ``x-mcp-header``
  declarations (``http26.param-declarations``), and for a read-only tool
  with one: the header left out, mismatched, holding a non-ASCII byte
  (400, -32020 each), Base64-encoded (accepted), and when the parameter is
  optional, left out or null with no header (not refused); an integer one
  sent as ``42.0`` for 42 (SHOULD be compared as a number);
* the error classes the schema gives HTTP 400 (-32020, -32021, -32022):
  every such answer of these probes must carry 400; up to three read-only
  tools that look like asking the client for input (by name or
  description) are called with no client capabilities to meet a -32021;
* "Backward Compatibility": a request with ``Mcp-Session-Id`` and
  ``Last-Event-ID`` is answered as usual, and no answer carries a session id.

The answer shapes (one response per POST, SSE streams, notifications,
concurrency) are ``http_streams.py``'s.  A check whose probe could not be
made (no tool with an ``x-mcp-header``, say) is ``skip`` with the reason.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any, Final

from ..._sansio.http import header_names as hn
from ..._sansio.http import headers as hh
from ..._sansio.revisions import LATEST_HANDSHAKE, Era, get_revision, revisions_where
from ..evidence import exchange, received
from ..rawhttp import ProbeError, RawClient
from ..results import Results
from .http26_envelope import check_envelope_status
from .http26_wire import Answer, Prober
from .http_streams import check_streams, make_arguments, read_only
from .probes import BOGUS_REVISION
from .versions import ServerVersions, http_initialize

__all__ = ["HTTP26_CHECKS", "check_http26"]

HTTP26_CHECKS: Final = (
    "http26.missing-version",
    "http26.version-match",
    "http26.unsupported-version",
    "http26.unknown-method",
    "http26.header-case",
    "http26.name-header",
    "http26.param-declarations",
    "http26.param-header",
    "http26.notification",
    "http26.stream-shape",
    "http26.stream-end",
    "http26.accel-buffering",
    "http26.legacy-headers",
    "http26.concurrent",
    "http26.integer-header",
    "http26.error-status",
    "http26.envelope-400",
)
#: The stateless era's errors that HTTP answers with 400 (schema: HeaderMismatchError,
#: MissingRequiredClientCapabilityError, UnsupportedProtocolVersionError).
ERRORS_400: Final = {
    -32020: "HeaderMismatch",
    -32021: "MissingRequiredClientCapability",
    -32022: "UnsupportedProtocolVersion",
}
#: Words in a tool's name or description that suggest it asks the client for input.
_ASKS: Final = re.compile(r"elicit|sampl|roots|input", re.IGNORECASE)
NO_SUCH_TOOL: Final = "trimcp-check-no-such-tool"
#: A placeholder replaced on the wire by a byte no header value may hold.
_INVALID: Final = "trimcp-invalid-value"


def _ok(answer: Answer) -> bool:
    return answer.status == 200 and any("result" in m for m in answer.responses)


def _refused(answer: Answer, status: int, code: int) -> bool:
    return answer.status == status and answer.error_code() == code


def _said(answer: Answer) -> str:
    return f"HTTP {answer.status}, error {answer.error_code()}"


def skip_http26(rec: Results, reason: str) -> None:
    for check in HTTP26_CHECKS:
        rec.skip(check, reason)


async def check_http26(
    rec: Results, url: str, revision: str, raw: RawClient, versions: ServerVersions | None = None
) -> None:
    """Run the ``http26.*`` checks against ``url`` (a stateless revision over HTTP only).

    ``versions`` is what the run learnt of the revisions the server implements (``versions.py``);
    without it the probes offer ``initialize`` in raw POSTs of their own."""
    if not url.startswith(("http://", "https://")):
        skip_http26(rec, "not an HTTP target")
        return
    if get_revision(revision).era is not Era.STATELESS:
        return  # each check is "not in <revision>"
    probe = Prober(url, revision, raw)
    try:
        discover = await probe.call(probe.body("server/discover"))
        supported = _supported(discover)
        if versions is None:
            versions = ServerVersions.of(supported, revision, http_initialize(url, raw.timeout, raw.extra_headers))
        tools = await _listed(probe, "tools/list", "tools")
        resources = await _listed(probe, "resources/list", "resources")
        await _version_header(rec, probe, supported, versions)
        await _unknown_methods(rec, probe)
        await _header_case(rec, probe)
        await _name_header(rec, probe, tools, resources)
        await _param_headers(rec, probe, tools)
        await _integer_header(rec, probe, tools)
        await check_streams(rec, probe, tools)
        await _legacy_headers(rec, probe, versions)
        await _error_statuses(rec, probe, tools)
        await check_envelope_status(rec, probe, discover.responses)
    except ProbeError as exc:
        rec.fail("http26.stream-shape", f"a probe broke: {exc}", [exchange("POST", url)])


def _supported(answer: Answer) -> list[str]:
    for msg in answer.responses:
        versions = (msg.get("result") or {}).get("supportedVersions")
        if isinstance(versions, list):
            return [v for v in versions if isinstance(v, str)]
    return []


async def _listed(probe: Prober, method: str, key: str) -> list[dict[str, Any]]:
    """A list, raw, up to 20 pages; empty when the server has none (or refuses)."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(20):
        answer = await probe.call(probe.body(method, {"cursor": cursor} if cursor else {}))
        result = next((m.get("result") for m in answer.responses if isinstance(m.get("result"), dict)), None)
        if result is None or not isinstance(result.get(key), list):
            break
        out += [i for i in result[key] if isinstance(i, dict)]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return out


# --------------------------------------------------------------------------- protocol version


#: The revisions before 2025-06-18, whose clients sent no MCP-Protocol-Version header, newest first.
_HEADERLESS: Final = tuple(reversed(revisions_where(lambda r: not r.protocol_version_header)))


async def _version_header(rec: Results, probe: Prober, supported: list[str], versions: ServerVersions) -> None:
    body = probe.body("server/discover")
    headers = {k: v for k, v in probe.headers(body).items() if k != hn.VERSION_HEADER}
    answer = await probe.send(headers, body)
    # The MUST is for "a server that does not support such clients"; one that does MAY take the
    # request for a 2025-03-26 one (and then answer it as that revision would).
    if _refused(answer, 400, -32020):
        rec.ok("http26.missing-version", "no MCP-Protocol-Version: 400, -32020")
        older = None
    else:
        older = next((v for v in _HEADERLESS if v in supported), None) or await versions.first_implemented(_HEADERLESS)
    if older is not None:
        rec.skip(
            "http26.missing-version",
            f"the server serves {older} clients (initialize offering it was "
            f"answered), as which it MAY treat a request without the header ({_said(answer)})",
        )
    elif not _refused(answer, 400, -32020):
        rec.fail(
            "http26.missing-version",
            f"no MCP-Protocol-Version: {_said(answer)}, expected 400 with -32020",
            [answer.evidence],
        )
    other = next((v for v in supported if v != probe.revision), LATEST_HANDSHAKE)
    body = probe.body("server/discover", version=other)
    answer = await probe.send(probe.headers(body), body)
    if _refused(answer, 400, -32020):
        rec.ok("http26.version-match", f"header {probe.revision}, body {other}: 400, -32020")
    else:
        rec.fail(
            "http26.version-match",
            f"header {probe.revision}, body {other}: {_said(answer)}, expected 400 with -32020",
            [answer.evidence],
        )
    body = probe.body("server/discover", version=BOGUS_REVISION)
    answer = await probe.send(probe.headers(body, **{hn.VERSION_HEADER: BOGUS_REVISION}), body)
    data = next((m["error"].get("data") for m in answer.responses if isinstance(m.get("error"), dict)), None)
    listed = data.get("supported") if isinstance(data, dict) else None
    if _refused(answer, 400, -32022) and isinstance(listed, list) and listed:
        rec.ok("http26.unsupported-version", f"{BOGUS_REVISION}: 400, -32022, supported {listed}")
    else:
        why = "" if not _refused(answer, 400, -32022) else ", without data.supported"
        rec.fail(
            "http26.unsupported-version",
            f"{BOGUS_REVISION}: {_said(answer)}{why}, expected 400 with -32022 listing the supported versions",
            [answer.evidence],
        )


async def _unknown_methods(rec: Results, probe: Prober) -> None:
    init = {
        "protocolVersion": probe.revision,
        "capabilities": {},
        "clientInfo": {"name": "trimcp-check", "version": "0"},
    }
    for method, params in (("trimcp-check/no-such-method", {}), ("ping", {}), ("initialize", init)):
        answer = await probe.call(probe.body(method, params))
        if _refused(answer, 404, -32601):
            rec.ok("http26.unknown-method", f"{method}: 404, -32601")
        else:
            rec.fail(
                "http26.unknown-method",
                f"{method} under {probe.revision}: {_said(answer)}, expected 404 with -32601",
                [answer.evidence],
            )


# --------------------------------------------------------------------------- header names


async def _header_case(rec: Results, probe: Prober) -> None:
    for how, change in (("lowercase", str.lower), ("uppercase", str.upper)):
        body = probe.body("server/discover")
        headers = [(change(k), v) for k, v in probe.headers(body).items()]
        answer = await probe.send(headers, body)
        if _ok(answer):
            rec.ok("http26.header-case", f"{how} header names: answered")
        else:
            rec.fail("http26.header-case", f"{how} header names: {_said(answer)}", [answer.evidence])


# --------------------------------------------------------------------------- Mcp-Name


def _name_target(tools: list[dict[str, Any]], resources: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The params of a harmless call the server can answer: a resource read, or a read-only tool."""
    for res in resources:
        if isinstance(res.get("uri"), str):
            return {"method": "resources/read", "params": {"uri": res["uri"]}}
    for tool in tools:
        args = make_arguments(tool.get("inputSchema"))
        if read_only(tool) and args is not None and isinstance(tool.get("name"), str):
            try:
                if hh.header_params(tool.get("inputSchema")):
                    continue
            except hh.InvalidToolHeaders:
                continue
            return {"method": "tools/call", "params": {"name": tool["name"], "arguments": args}}
    return None


async def _name_header(
    rec: Results, probe: Prober, tools: list[dict[str, Any]], resources: list[dict[str, Any]]
) -> None:
    target = _name_target(tools, resources)
    if target is None:  # refused probes run nothing, so a name nobody has will do for them
        target = {"method": "tools/call", "params": {"name": NO_SUCH_TOOL, "arguments": {}}}
    method, params = target["method"], target["params"]
    value = params.get("name", params.get("uri"))
    body = probe.body(method, params)
    missing = {k: v for k, v in probe.headers(body).items() if k != hn.NAME_HEADER}
    for what, answer in (
        ("without Mcp-Name", await probe.send(missing, body)),
        ("with Mcp-Name naming something else", await probe.call(body, **{hn.NAME_HEADER: "trimcp-check-other"})),
    ):
        if _refused(answer, 400, -32020):
            rec.ok("http26.name-header", f"{method} {what}: 400, -32020")
        else:
            rec.fail(
                "http26.name-header",
                f"{method} {value!r} {what}: {_said(answer)}, expected 400 with -32020",
                [answer.evidence],
            )
    if params.get("name") == NO_SUCH_TOOL:
        return
    encoded = f"{hh.SENTINEL_PREFIX}{base64.b64encode(str(value).encode()).decode()}{hh.SENTINEL_SUFFIX}"
    body = probe.body(method, params)
    answer = await probe.call(body, **{hn.NAME_HEADER: encoded})
    if answer.status == 200 and answer.responses:
        rec.ok("http26.name-header", f"{method} with a Base64-encoded Mcp-Name: decoded")
    else:
        rec.fail(
            "http26.name-header",
            f"{method} with Mcp-Name {encoded} (the Base64 form of {value!r}): {_said(answer)}",
            [answer.evidence],
        )


# --------------------------------------------------------------------------- Mcp-Param-*


def _declaration_problem(schema: Any) -> str | None:
    try:
        params = hh.header_params(schema)
    except hh.InvalidToolHeaders as exc:
        return str(exc)
    for param in params:
        node: Any = schema
        for key in param.path:
            node = node["properties"][key]
        if node.get("type") is None:  # the page allows only integer, string and boolean parameters
            return f"x-mcp-header {param.name!r} on {'/'.join(param.path)} has no type"
    return None


def _param_tool(
    tools: list[dict[str, Any]], kind: str = "string"
) -> tuple[dict[str, Any], hh.HeaderParam, dict[str, Any]] | None:
    """A read-only tool with a top-level ``kind`` x-mcp-header parameter, and arguments for a call."""
    sample: Any = "trimcp-check" if kind == "string" else 42
    for tool in tools:
        if not read_only(tool) or _declaration_problem(tool.get("inputSchema")) is not None:
            continue
        schema = tool.get("inputSchema")
        args = make_arguments(schema)
        if args is None:
            continue
        for param in hh.header_params(schema):
            node: Any = schema
            for key in param.path:
                node = node["properties"][key]
            if len(param.path) == 1 and node.get("type") == kind and not {"enum", "const"} & node.keys():
                return tool, param, {**args, param.path[0]: sample}
    return None


async def _param_headers(rec: Results, probe: Prober, tools: list[dict[str, Any]]) -> None:
    declared = 0
    for tool in tools:
        problem = _declaration_problem(tool.get("inputSchema"))
        if problem is not None:
            rec.fail("http26.param-declarations", f"tool {tool.get('name')!r}: {problem}", [received(json.dumps(tool))])
        elif hh.header_params(tool.get("inputSchema")):
            declared += 1
    if declared:
        rec.ok("http26.param-declarations", f"{declared} tools declare x-mcp-header parameters")
    elif "http26.param-declarations" not in rec.results:
        rec.skip("http26.param-declarations", "no tool declares an x-mcp-header parameter")
    found = _param_tool(tools)
    if found is None:
        rec.skip("http26.param-header", "no read-only tool with a string x-mcp-header parameter to call")
        return
    tool, param, args = found
    params = {"name": tool["name"], "arguments": args}
    good = {param.header: "trimcp-check"}
    for what, extra, raw_values in (
        ("left out", {}, None),
        ("naming another value", {param.header: "trimcp-check-other"}, None),
        ("holding a non-ASCII byte", {param.header: _INVALID}, {_INVALID: b"trimcp-check\xe9"}),
        ("holding a control character", {param.header: _INVALID}, {_INVALID: b"trimcp\x01check"}),
        # The header name in lowercase: the server must still find it and see the mismatch.
        ("naming another value, name in lowercase", {param.header.lower(): "trimcp-check-other"}, None),
    ):
        body = probe.body("tools/call", params)
        answer = await probe.send(probe.headers(body, **extra), body, raw_values=raw_values)
        if _refused(answer, 400, -32020):
            rec.ok("http26.param-header", f"{param.header} {what}: 400, -32020")
        else:
            rec.fail(
                "http26.param-header",
                f"tools/call {tool['name']!r} with {param.header} {what}: {_said(answer)}, expected 400 with -32020",
                [answer.evidence],
            )
    for what, extra in (("plain", good), ("Base64-encoded", {param.header: "=?base64?dHJpbWNwLWNoZWNr?="})):
        body = probe.body("tools/call", params)
        answer = await probe.call(body, **extra)
        if answer.status == 200 and answer.responses and answer.error_code() is None:
            rec.ok("http26.param-header", f"{param.header} {what}, matching the argument: answered")
        else:
            rec.fail(
                "http26.param-header",
                f"tools/call {tool['name']!r} with a matching {what} {param.header}: {_said(answer)}",
                [answer.evidence],
            )
    if param.path[0] in (tool["inputSchema"].get("required") or ()):
        return
    # An argument left out, or null, has no header, and the server must not ask for one.
    name = param.path[0]
    for what, arguments in (("left out", {k: v for k, v in args.items() if k != name}), ("null", {**args, name: None})):
        body = probe.body("tools/call", {"name": tool["name"], "arguments": arguments})
        answer = await probe.call(body)
        if answer.error_code() == -32020:
            rec.fail(
                "http26.param-header",
                f"tools/call {tool['name']!r} with {name!r} {what} and no {param.header}: refused with -32020",
                [answer.evidence],
            )
        else:
            rec.ok("http26.param-header", f"{name!r} {what}, no {param.header}: not expected")


async def _integer_header(rec: Results, probe: Prober, tools: list[dict[str, Any]]) -> None:
    found = _param_tool(tools, "integer")
    if found is None:
        rec.skip("http26.integer-header", "no read-only tool with an integer x-mcp-header parameter to call")
        return
    tool, param, args = found
    body = probe.body("tools/call", {"name": tool["name"], "arguments": args})
    answer = await probe.call(body, **{param.header: "42.0"})
    if answer.error_code() == -32020:
        rec.warn(
            "http26.integer-header",
            f"{param.header}: 42.0 for the argument 42 refused with -32020 (the spec "
            "advises comparing integers numerically)",
            [answer.evidence],
        )
    else:
        rec.ok("http26.integer-header", f"{param.header}: 42.0 for the argument 42 accepted")


# --------------------------------------------------------------------------- error statuses


async def _error_statuses(rec: Results, probe: Prober, tools: list[dict[str, Any]]) -> None:
    """Every -32020/-32021/-32022 seen came with 400; a few tools that look like asking the client
    for input are called first with no client capabilities, to meet a -32021."""
    asking = [
        t
        for t in tools
        if read_only(t)
        and isinstance(t.get("name"), str)
        and _ASKS.search(f"{t['name']} {t.get('description') or ''}")
        and make_arguments(t.get("inputSchema")) is not None
    ]
    for tool in asking[:3]:
        await probe.call(
            probe.body("tools/call", {"name": tool["name"], "arguments": make_arguments(tool["inputSchema"])})
        )
    seen: set[int] = set()
    for answer in probe.answers:
        code = answer.error_code()
        if code not in ERRORS_400:
            continue
        seen.add(code)
        if answer.status != 400:
            rec.fail(
                "http26.error-status",
                f"{ERRORS_400[code]} ({code}) came with HTTP {answer.status}, not 400",
                [answer.evidence],
            )
    if seen:
        rec.ok("http26.error-status", "400 with each of " + ", ".join(str(c) for c in sorted(seen)))
    else:
        rec.skip("http26.error-status", "the server sent none of -32020, -32021, -32022")


# --------------------------------------------------------------------------- no sessions


async def _legacy_headers(rec: Results, probe: Prober, versions: ServerVersions) -> None:
    if await versions.serves_legacy():
        # "A server that supports only this revision ... SHOULD": a dual-era one serves such
        # traffic as the older revision says (sessions and all).
        rec.skip(
            "http26.legacy-headers",
            f"the server also serves legacy clients "
            f"({(await versions.legacy_probe()).said}); the advice is for a server that supports only 2026-07-28",
        )
        return
    body = probe.body("server/discover")
    answer = await probe.call(body, **{hn.SESSION_HEADER: "trimcp-check-session", hn.LAST_EVENT_ID_HEADER: "1"})
    sid = answer.header(hn.SESSION_HEADER)
    minted = next((a for a in probe.answers if a.header(hn.SESSION_HEADER) is not None), None)
    if not _ok(answer):
        rec.warn(
            "http26.legacy-headers",
            f"with Mcp-Session-Id and Last-Event-ID: {_said(answer)}, the spec advises ignoring them",
            [answer.evidence],
        )
    elif sid is not None:
        rec.warn("http26.legacy-headers", f"the answer echoes Mcp-Session-Id {sid!r}", [answer.evidence])
    elif minted is not None:
        rec.warn(
            "http26.legacy-headers",
            f"an answer carries Mcp-Session-Id {minted.header(hn.SESSION_HEADER)!r}",
            [minted.evidence],
        )
    else:
        rec.ok("http26.legacy-headers", "Mcp-Session-Id and Last-Event-ID ignored, no session id echoed")
