"""The 2026-07-28 Streamable HTTP answer shapes: one response per POST, on its own stream.

Theory of operation
-------------------
"Sending Messages" and "Receiving Messages" of the 2026-07-28
``basic/transports/streamable-http`` page: a POSTed notification gets 202
with no body, or an HTTP error status when the server cannot accept it (the
revision defines no client notifications over HTTP, so either is right); a
POSTed request gets ``application/json`` holding its one response, or
``text/event-stream`` carrying notifications related to the request, then
the response, which should end the stream; the server never sends a request
on it.  An SSE answer should carry ``X-Accel-Buffering: no``.

``check_streams`` POSTs ``notifications/cancelled``, ``server/discover``, and
a read-only tool call (the first one whose arguments can be made up,
preferring one named for progress or logging) with a ``progressToken`` and a
``logLevel``, so a server that streams has something to stream; then three
``server/discover`` POSTs at once, each of which must come back answered with
its own id (``http26.concurrent``, best practice: the page puts no MUST on
concurrency).  A notification "relates" when it is a ``notifications/progress``
with our token or a ``notifications/message`` (we asked for logging);
anything else on a request's stream is flagged.
"""

from __future__ import annotations

from typing import Any

import trio

from ..results import Results
from .http26_wire import Answer, Prober

__all__ = ["check_streams", "make_arguments", "read_only"]

_TOKEN = "trimcp-check-progress"


def read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return isinstance(annotations, dict) and annotations.get("readOnlyHint") is True


def make_arguments(schema: Any) -> dict[str, Any] | None:
    """Arguments for the required properties of ``schema`` (simple types only); None if impossible."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or ():
        prop = props.get(name) if isinstance(props, dict) else None
        kind = prop.get("type") if isinstance(prop, dict) else None
        if isinstance(prop, dict) and isinstance(prop.get("enum"), list) and prop["enum"]:
            out[name] = prop["enum"][0]
        elif kind == "string":
            out[name] = "trimcp-check"
        elif kind == "integer":
            out[name] = 1
        elif kind == "boolean":
            out[name] = True
        else:
            return None
    return out


def _streaming_call(tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    callable_ = [
        t
        for t in tools
        if read_only(t) and isinstance(t.get("name"), str) and make_arguments(t.get("inputSchema")) is not None
    ]
    callable_.sort(key=lambda t: not any(w in t["name"] for w in ("progress", "log")))
    for tool in callable_:
        return {"name": tool["name"], "arguments": make_arguments(tool.get("inputSchema"))}
    return None


async def check_streams(rec: Results, probe: Prober, tools: list[dict[str, Any]]) -> None:
    await _notification(rec, probe)
    body = probe.body("server/discover")
    _shape(rec, "server/discover", body["id"], await probe.call(body))
    params = _streaming_call(tools)
    if params is not None:
        meta = {"progressToken": _TOKEN, "io.modelcontextprotocol/logLevel": "debug"}
        body = probe.body("tools/call", params, meta=meta)
        _shape(rec, f"tools/call {params['name']!r}", body["id"], await probe.call(body))
    if "http26.accel-buffering" not in rec.results:
        rec.skip("http26.accel-buffering", "no answer came as an event stream")
    if "http26.stream-end" not in rec.results:
        rec.skip("http26.stream-end", "no answer came as an event stream")
    await _concurrent(rec, probe)


async def _notification(rec: Results, probe: Prober) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "trimcp check"}}
    answer = await probe.send(probe.headers(note), note)
    if answer.status == 202 and not answer.body.strip():
        rec.ok("http26.notification", "notifications/cancelled: 202, no body")
    elif answer.status >= 400:
        rec.ok("http26.notification", f"notifications/cancelled refused: HTTP {answer.status}")
    else:
        extra = f" with a body of {len(answer.body)} bytes" if answer.body.strip() else ""
        rec.fail(
            "http26.notification",
            f"notifications/cancelled: HTTP {answer.status}{extra}, expected 202 with no body or an error status",
            [answer.evidence],
        )


def _foreign(msg: Any) -> str | None:
    """Why a message before the response does not belong on this request's stream (None: it does)."""
    if not isinstance(msg, dict):
        return f"an event that is not a JSON-RPC message: {str(msg)[:80]!r}"
    method = msg.get("method")
    if "id" in msg and isinstance(method, str):
        return f"a {method} request"
    if method == "notifications/progress":
        token = (msg.get("params") or {}).get("progressToken")
        return None if token == _TOKEN else f"notifications/progress for token {token!r}"
    if method == "notifications/message":
        return None
    return f"a {method} notification"


def _shape(rec: Results, what: str, rid: int, answer: Answer) -> None:
    ev = [answer.evidence]
    responses = answer.responses
    mine = [m for m in responses if m.get("id") == rid]
    if answer.status != 200:
        # An error answer has a shape too: one JSON error response (what it says is other checks' business).
        if answer.content_type == "application/json" and len(answer.messages) == 1 and len(mine) == 1:
            rec.ok("http26.stream-shape", f"{what}: one JSON error response (HTTP {answer.status})")
        else:
            rec.fail("http26.stream-shape", f"{what}: HTTP {answer.status}, not one JSON-RPC response to id {rid}", ev)
        return
    if answer.content_type == "application/json":
        if len(answer.messages) == 1 and len(mine) == 1:
            rec.ok("http26.stream-shape", f"{what}: one JSON response")
        else:
            rec.fail("http26.stream-shape", f"{what}: the JSON body is not the one response to id {rid}", ev)
        return
    if answer.content_type != "text/event-stream":
        rec.fail("http26.stream-shape", f"{what}: Content-Type {answer.header('content-type')!r}", ev)
        return
    if answer.header("x-accel-buffering") == "no":
        rec.ok("http26.accel-buffering", f"{what}: X-Accel-Buffering: no")
    else:
        rec.warn("http26.accel-buffering", f"{what}: an event stream without X-Accel-Buffering: no", ev)
    stray = [why for why in map(_foreign, answer.messages[:-1] if mine else answer.messages) if why]
    if not mine:
        rec.fail("http26.stream-shape", f"{what}: the stream ended without the response to id {rid}", ev)
    elif len(responses) != 1:
        rec.fail("http26.stream-shape", f"{what}: {len(responses)} responses on one stream", ev)
    elif stray:
        rec.fail("http26.stream-shape", f"{what}: the stream carried {stray[0]}", ev)
    else:
        rec.ok("http26.stream-shape", f"{what}: {len(answer.messages) - 1} notifications, then the response")
    if answer.after_response:
        rec.warn("http26.stream-end", f"{what}: {len(answer.after_response)} events after the response", ev)
    elif not answer.ended:
        rec.warn("http26.stream-end", f"{what}: the stream stayed open after the response", ev)
    else:
        rec.ok("http26.stream-end", f"{what}: the response ended the stream")


async def _concurrent(rec: Results, probe: Prober) -> None:
    bodies = [probe.body("server/discover") for _ in range(3)]
    answers: dict[int, Answer] = {}

    async def one(body: dict[str, Any]) -> None:
        answers[body["id"]] = await probe.call(body)

    async with trio.open_nursery() as nursery:
        for body in bodies:
            nursery.start_soon(one, body)
    wrong = [rid for rid, a in answers.items() if [m.get("id") for m in a.responses] != [rid] or a.status != 200]
    if wrong:
        rec.warn(
            "http26.concurrent",
            f"of 3 POSTs at once, id {wrong[0]} was not answered on its own",
            [answers[wrong[0]].evidence],
        )
    else:
        rec.ok("http26.concurrent", "3 POSTs at once, each answered with its own id")
