"""Judging what the feature tour received: content blocks, resource contents, logs, completions.

Theory of operation
-------------------
Spec: ``server/prompts`` (image and audio content "MUST be base64-encoded and
include a valid MIME type"; embedded resources "MUST include" a URI, the MIME
type and text or blob), ``server/resources`` (security: "Binary data MUST be
properly encoded"), ``server/utilities/logging`` and
``server/utilities/completion``.

Nothing here sends anything: ``judge_received`` reads every answer of the
recorded conversation once the tour is over, so every ``tools/call``,
``prompts/get`` and ``resources/read`` result is judged, whoever asked for it.
Base64 is decoded strictly (``validate=True``: no stray characters, padding
right); an image or audio ``mimeType`` must be a MIME type (RFC 6838 type/subtype
names, RFC 9110 parameters), of any top-level type: the sentence asks for a valid
one, not an ``image/`` one.  Every resource URI the server sent (listed on any
page, read, linked by a ``resource_link``, embedded) is matched against RFC 3986's
URI grammar (``_uri_grammar``, custom schemes included: "Custom URI schemes MUST
be in accordance with RFC3986"); templates are RFC 6570, not URIs, and not judged.  Log messages are judged after a ``logging/setLevel`` the server
accepted: none may be below the level set.  Completions: at most 100 values,
``total`` not below their number.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio.http.headers import InvalidToolHeaders, header_params
from ..._sansio.schema.tools import X_MCP_HEADER
from ..evidence import received
from ..results import Results, Tour

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _uri_grammar() -> re.Pattern[str]:
    """RFC 3986 section 3 (``URI = scheme ":" hier-part [ "?" query ] [ "#" fragment ]``), its
    ABNF spelled as a regular expression.  Every repetition starts with a distinct character
    class or a "/", so matching stays linear in the length of a peer's URI."""
    unreserved, sub_delims = r"A-Za-z0-9\-._~", r"!$&'()*+,;="
    pct = r"%[0-9A-Fa-f]{2}"
    pchar = rf"(?:[{unreserved}{sub_delims}:@]|{pct})"
    dec_octet = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9][0-9]|[0-9])"
    ipv4 = rf"{dec_octet}(?:\.{dec_octet}){{3}}"
    h16 = r"[0-9A-Fa-f]{1,4}"
    ls32 = rf"(?:{h16}:{h16}|{ipv4})"
    ipv6 = "|".join(
        (
            rf"(?:{h16}:){{6}}{ls32}",
            rf"::(?:{h16}:){{5}}{ls32}",
            rf"(?:{h16})?::(?:{h16}:){{4}}{ls32}",
            rf"(?:(?:{h16}:){{0,1}}{h16})?::(?:{h16}:){{3}}{ls32}",
            rf"(?:(?:{h16}:){{0,2}}{h16})?::(?:{h16}:){{2}}{ls32}",
            rf"(?:(?:{h16}:){{0,3}}{h16})?::{h16}:{ls32}",
            rf"(?:(?:{h16}:){{0,4}}{h16})?::{ls32}",
            rf"(?:(?:{h16}:){{0,5}}{h16})?::{h16}",
            rf"(?:(?:{h16}:){{0,6}}{h16})?::",
        )
    )
    ip_literal = rf"\[(?:{ipv6}|v[0-9A-Fa-f]+\.[{unreserved}{sub_delims}:]+)\]"
    reg_name = rf"(?:[{unreserved}{sub_delims}]|{pct})*"
    authority = rf"(?:(?:[{unreserved}{sub_delims}:]|{pct})*@)?(?:{ip_literal}|{reg_name})(?::[0-9]*)?"
    segment, segment_nz = f"{pchar}*", f"{pchar}+"
    hier_part = (
        rf"(?://{authority}(?:/{segment})*|/(?:{segment_nz}(?:/{segment})*)?"
        rf"|{segment_nz}(?:/{segment})*|)"
    )
    tail = rf"(?:{pchar}|[/?])*"
    return re.compile(rf"[A-Za-z][A-Za-z0-9+\-.]*:{hier_part}(?:\?{tail})?(?:#{tail})?", re.ASCII)


_URI = _uri_grammar()
#: RFC 6838 section 4.2 (type "/" subtype, restricted names), then RFC 9110 parameters.
_RESTRICTED_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&\-^_.+]{0,126}"
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_MIME = re.compile(
    rf"{_RESTRICTED_NAME}/{_RESTRICTED_NAME}"
    rf'(?:[ \t]*;[ \t]*(?:{_TOKEN}=(?:{_TOKEN}|"(?:[^"\\\x00-\x1f]|\\.)*"))?)*',
    re.ASCII,
)


def uri_problem(uri: Any) -> str | None:
    """Why ``uri`` is not an RFC 3986 URI, or ``None``."""
    if not isinstance(uri, str):
        return f"the uri is {type(uri).__name__}, not a string"
    return None if _URI.fullmatch(uri) else f"{uri[:200]!r} is not an RFC 3986 URI"


def mime_problem(mime: Any) -> str | None:
    """Why ``mime`` is not a valid MIME type (RFC 6838 type/subtype, optional parameters), or ``None``."""
    if not isinstance(mime, str) or not mime:
        return "no mimeType"
    return None if _MIME.fullmatch(mime) else f"mimeType {mime[:80]!r} is not type/subtype (RFC 6838)"


_CONTENT_CHECKS = ("content.base64", "content.embedded-resource", "resources.read-contents")


def judge_received(tour: Tour) -> None:
    rec, recording = tour.rec, tour.recording
    judged = {check: 0 for check in _CONTENT_CHECKS}
    uris: list[tuple[str, Any, rpc.Response]] = []
    echoed = 0
    completions = 0
    for request_id, (_, answer) in recording.answers().items():
        method = recording.sent_methods.get(request_id)
        if not isinstance(answer, rpc.Response):
            continue
        result = answer.result
        before = len(uris)
        if method == "tools/call":
            _blocks(rec, judged, uris, answer, result.get("content"), embedded_mime=False)
        elif method == "prompts/get":
            for message in result.get("messages") or ():
                if isinstance(message, dict):
                    _blocks(rec, judged, uris, answer, [message.get("content")], embedded_mime=True)
        elif method == "resources/read":
            for item in result.get("contents") or ():
                _resource(rec, judged, uris, answer, item, "resources.read-contents", need_mime=False)
        elif method == "completion/complete":
            completions += 1
            _completion(rec, answer)
        # A URI the harness itself sent as an argument (made up for a prompt's "resourceUri")
        # and the server embedded as given is the harness's value, not the server's scheme.
        sent_values = _argument_strings(recording.requests.get(request_id))
        kept = [item for item in uris[before:] if item[1] not in sent_values]
        echoed += len(uris) - before - len(kept)
        uris[before:] = kept
    for check, count in judged.items():
        if count:
            rec.ok(check, f"{count} items")
        else:
            rec.skip(check, "no such content was received")
    if not completions:
        rec.skip("completion.limits", "no completion/complete was answered")
    _logs(tour)
    _listed(tour, uris, echoed)


def _raw_listed(tour: Tour, method: str, key: str) -> list[tuple[rpc.Response, dict[str, Any]]]:
    recording = tour.recording
    return [
        (answer, item)
        for request_id, (_, answer) in recording.answers().items()
        if recording.sent_methods.get(request_id) == method and isinstance(answer, rpc.Response)
        for item in answer.result.get(key) or ()
        if isinstance(item, dict)
    ]


def _argument_strings(request: rpc.Request | None) -> set[str]:
    arguments = ((request.params or {}).get("arguments") if request is not None else None) or {}
    return {v for v in arguments.values() if isinstance(v, str)} if isinstance(arguments, dict) else set()


def _listed(tour: Tour, uris: list[tuple[str, Any, rpc.Response]], echoed: int = 0) -> None:
    """The tools and resources as the server listed them (the client leaves out tools it rejects)."""
    rec = tour.rec
    caps = tour.client.server_capabilities
    if "tools" in caps:
        tools = _raw_listed(tour, "tools/list", "tools")
        marked = 0
        for answer, tool in tools:
            schema = tool.get("inputSchema")
            if not (isinstance(schema, dict) and X_MCP_HEADER in json.dumps(schema)):
                continue
            marked += 1
            try:
                header_params(schema)
            except InvalidToolHeaders as exc:
                rec.fail("tools.x-mcp-header", f"{tool.get('name')}: {exc}", [received(answer)])
        if marked:
            rec.ok("tools.x-mcp-header", f"{marked} tools mark parameters with x-mcp-header")
        else:
            rec.skip("tools.x-mcp-header", "no tool marks a parameter with x-mcp-header")
    # Every resource URI the server sent: listed (every page), read, linked, embedded.  Templates
    # (RFC 6570) are not URIs until expanded: not judged.
    listed = [
        ("listed", resource.get("uri"), answer) for answer, resource in _raw_listed(tour, "resources/list", "resources")
    ]
    seen = listed + uris
    for where, uri, answer in seen:
        problem = uri_problem(uri)
        if problem is not None:
            rec.fail("resources.uri-syntax", f"{where} resource: {problem}", [received(answer)])
    not_judged = f"; {echoed} not judged: the harness's own argument, sent back" if echoed else ""
    if seen:
        kinds = Counter(where for where, _, _ in seen)
        rec.ok(
            "resources.uri-syntax",
            f"{len(seen)} URIs follow RFC 3986 ("
            + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
            + ")"
            + not_judged,
        )
    else:
        rec.skip(
            "resources.uri-syntax",
            "the server sent no resource URI (none listed, read, linked or embedded)" + not_judged,
        )


def _blocks(
    rec: Results,
    judged: dict[str, int],
    uris: list[tuple[str, Any, rpc.Response]],
    answer: rpc.Response,
    blocks: Any,
    *,
    embedded_mime: bool,
) -> None:
    for block in blocks or ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("image", "audio"):
            judged["content.base64"] += 1
            problem = _base64_problem(block.get("data")) or mime_problem(block.get("mimeType"))
            if problem:
                rec.fail("content.base64", f"{kind} content: {problem}", [received(answer)])
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            _resource(
                rec, judged, uris, answer, block["resource"], "content.embedded-resource", need_mime=embedded_mime
            )
        elif kind == "resource_link":
            uris.append(("linked", block.get("uri"), answer))


def _resource(
    rec: Results,
    judged: dict[str, int],
    uris: list[tuple[str, Any, rpc.Response]],
    answer: rpc.Response,
    item: Any,
    check: str,
    *,
    need_mime: bool,
) -> None:
    if not isinstance(item, dict):
        return
    judged[check] += 1
    uri = item.get("uri")
    if isinstance(uri, str) and uri:  # (a missing uri is the other checks' finding)
        uris.append(("read" if check == "resources.read-contents" else "embedded", uri, answer))
    has_text, has_blob = "text" in item, "blob" in item
    problem = None
    if not isinstance(uri, str) or not uri:
        problem = "no uri"
    elif has_text == has_blob:
        problem = f"{uri}: " + ("both text and blob" if has_text else "neither text nor blob")
    elif need_mime and not item.get("mimeType"):
        problem = f"{uri}: no mimeType"
    if problem:
        rec.fail(check, problem, [received(answer)])
    if has_blob:
        judged["content.base64"] += 1
        blob_problem = _base64_problem(item.get("blob"))
        if blob_problem:
            rec.fail("content.base64", f"blob of {uri}: {blob_problem}", [received(answer)])


def _base64_problem(data: Any) -> str | None:
    if not isinstance(data, str):
        return "data is not a string"
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        return f"not valid base64 ({exc})"
    return None


def _completion(rec: Results, answer: rpc.Response) -> None:
    completion = answer.result.get("completion")
    if not isinstance(completion, dict):
        return  # schema.messages says so
    values = completion.get("values") or []
    total = completion.get("total")
    if len(values) > 100:
        rec.fail("completion.limits", f"{len(values)} values, more than 100", [received(answer)])
    elif isinstance(total, int) and total < len(values):
        rec.fail("completion.limits", f"total {total} is below the {len(values)} values sent", [received(answer)])
    elif completion.get("hasMore") is True and not values:
        rec.warn("completion.limits", "hasMore is true with no values", [received(answer)])
    elif not values:
        rec.skip("completion.limits", "a completion/complete answered no values: no limit to judge")
    else:
        rec.ok("completion.limits", f"{len(values)} values" + (f", total {total}" if isinstance(total, int) else ""))


def _logs(tour: Tour) -> None:
    """After an accepted ``logging/setLevel``, every notifications/message at that level or above."""
    rec, recording = tour.rec, tour.recording
    check = "logging.below-level"
    set_ids = [i for i, m in recording.sent_methods.items() if m == "logging/setLevel"]
    answers = recording.answers()
    accepted = [
        (answers[i][0], recording.requests[i])
        for i in set_ids
        if i in answers and isinstance(answers[i][1], rpc.Response)
    ]
    if not accepted:
        rec.skip(check, "no logging/setLevel was accepted")
        return
    start, request = accepted[0]
    level = (request.params or {}).get("level")
    if level not in LOG_LEVELS:
        rec.skip(check, f"the level set, {level!r}, is not a log level")
        return
    floor = LOG_LEVELS.index(level)
    seen = 0
    for index, msg in recording.messages():
        if index <= start or not isinstance(msg, rpc.Notification) or msg.method != "notifications/message":
            continue
        seen += 1
        got = (msg.params or {}).get("level")
        if got in LOG_LEVELS and LOG_LEVELS.index(got) < floor:
            rec.fail(check, f"a {got} message after logging/setLevel {level}", [received(msg)])
            return
    if seen:
        rec.ok(check, f"{seen} messages at {level} or above")
    else:
        rec.skip(check, f"no notifications/message arrived after logging/setLevel {level}")
