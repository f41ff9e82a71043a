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
right).  Log messages are judged after a ``logging/setLevel`` the server
accepted: none may be below the level set.  Completions: at most 100 values,
``total`` not below their number.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio.http.headers import InvalidToolHeaders, header_params
from ..._sansio.schema.tools import X_MCP_HEADER
from ..evidence import received
from ..results import Results, Tour

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: RFC 3986: a scheme, then only unreserved, reserved and percent-encoded characters.
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")
_CONTENT_CHECKS = ("content.base64", "content.embedded-resource", "resources.read-contents")


def judge_received(tour: Tour) -> None:
    rec, recording = tour.rec, tour.recording
    judged = {check: 0 for check in _CONTENT_CHECKS}
    completions = 0
    for request_id, (_, answer) in recording.answers().items():
        method = recording.sent_methods.get(request_id)
        if not isinstance(answer, rpc.Response):
            continue
        result = answer.result
        if method == "tools/call":
            _blocks(rec, judged, answer, result.get("content"), embedded_mime=False)
        elif method == "prompts/get":
            for message in result.get("messages") or ():
                if isinstance(message, dict):
                    _blocks(rec, judged, answer, [message.get("content")], embedded_mime=True)
        elif method == "resources/read":
            for item in result.get("contents") or ():
                _resource(rec, judged, answer, item, "resources.read-contents", need_mime=False)
        elif method == "completion/complete":
            completions += 1
            _completion(rec, answer)
    for check, count in judged.items():
        if count:
            rec.ok(check, f"{count} items")
        else:
            rec.skip(check, "no such content was received")
    if not completions:
        rec.skip("completion.limits", "no completion/complete was answered")
    _logs(tour)
    _listed(tour)


def _raw_listed(tour: Tour, method: str, key: str) -> list[tuple[rpc.Response, dict[str, Any]]]:
    recording = tour.recording
    return [
        (answer, item) for request_id, (_, answer) in recording.answers().items()
        if recording.sent_methods.get(request_id) == method and isinstance(answer, rpc.Response)
        for item in answer.result.get(key) or () if isinstance(item, dict)
    ]


def _listed(tour: Tour) -> None:
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
    if "resources" in caps:
        resources = _raw_listed(tour, "resources/list", "resources")
        for answer, resource in resources:
            uri = resource.get("uri")
            if not (isinstance(uri, str) and _URI.match(uri)):
                rec.fail("resources.uri-syntax", f"{uri!r} is not an RFC 3986 URI", [received(answer)])
        if resources:
            rec.ok("resources.uri-syntax", f"{len(resources)} URIs")
        else:
            rec.skip("resources.uri-syntax", "the server lists no resources")


def _blocks(rec: Results, judged: dict[str, int], answer: rpc.Response, blocks: Any, *, embedded_mime: bool) -> None:
    for block in blocks or ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("image", "audio"):
            judged["content.base64"] += 1
            problem = _base64_problem(block.get("data"))
            if problem is None and not block.get("mimeType"):
                problem = f"{kind} content without a mimeType"
            if problem:
                rec.fail("content.base64", f"{kind} content: {problem}", [received(answer)])
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            _resource(rec, judged, answer, block["resource"], "content.embedded-resource", need_mime=embedded_mime)


def _resource(rec: Results, judged: dict[str, int], answer: rpc.Response, item: Any, check: str, *,
              need_mime: bool) -> None:
    if not isinstance(item, dict):
        return
    judged[check] += 1
    uri = item.get("uri")
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
    accepted = [(answers[i][0], recording.requests[i]) for i in set_ids
                if i in answers and isinstance(answers[i][1], rpc.Response)]
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
