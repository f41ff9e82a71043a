"""HTTP+SSE transport checks (spec 2024-11-05, basic/transports, "HTTP with SSE").

Theory of operation
-------------------
They run instead of the Streamable HTTP checks when the run's client fell back
to the 2024-11-05 transport (``Report.transport == "http+sse"``): the URL is
then the SSE endpoint, where the Streamable HTTP probes would only collect
false failures.  On raw connections (``RawClient.stream``):

* ``sse.endpoint``: a GET with ``Accept: text/event-stream`` opens an event
  stream whose first event is ``endpoint``, its data a URI (resolved against
  the SSE URL) to POST to;
* ``sse.exchange``: an ``initialize`` POSTed to that URI is accepted (2xx) and
  its answer arrives as a ``message`` event on the still open SSE stream;
* ``sse.origin``: the same GET carrying a foreign ``Origin`` is refused, and
  with the server's own origin it is not (so a server that refuses every
  stream does not pass).  The 2024-11-05 page names no status: any 4xx counts.
"""

from __future__ import annotations

import json
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

from ..._sansio import jsonrpc as rpc
from ..evidence import exchange, received
from ..rawhttp import OpenStream, ProbeError, RawClient
from ..results import Results
from .probes import CLIENT_INFO

__all__ = ["SSE_CHECKS", "check_sse_transport", "own_origin", "skip_sse"]

SSE_CHECKS: Final = ("sse.endpoint", "sse.exchange", "sse.origin")
FOREIGN_ORIGIN: Final = "http://trimcp-check.invalid"
_GET: Final = {"Accept": "text/event-stream"}


def skip_sse(rec: Results, reason: str) -> None:
    for check in SSE_CHECKS:
        rec.skip(check, reason)


def own_origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _is_stream(resp: OpenStream) -> bool:
    return resp.status == 200 and resp.content_type == "text/event-stream"


async def check_sse_transport(rec: Results, url: str, revision: str, raw: RawClient) -> None:
    try:
        await _endpoint_and_exchange(rec, url, revision, raw)
    except ProbeError as exc:
        rec.fail("sse.endpoint", f"GET {url}: {exc}", [exchange("GET", url, _GET)])
    await _origin(rec, url, raw)


async def _endpoint_and_exchange(rec: Results, url: str, revision: str, raw: RawClient) -> None:
    async with raw.stream(url, "GET", _GET) as stream:
        shown = exchange("GET", url, _GET, status=stream.status, response_headers=stream.headers)
        if not _is_stream(stream):
            rec.fail("sse.endpoint", f"GET: HTTP {stream.status} {stream.content_type}".strip(), [shown])
            rec.skip("sse.exchange", "no SSE stream")
            return
        first = await stream.next_event()
        if first is None or first.event != "endpoint" or not first.data.strip():
            what = "nothing" if first is None else f"a {first.event!r} event"
            rec.fail(
                "sse.endpoint",
                f"the first event is {what}, not endpoint with a URI",
                [shown, received(first.data if first else "")],
            )
            rec.skip("sse.exchange", "no endpoint event")
            return
        endpoint = urljoin(url, first.data.strip())
        rec.ok("sse.endpoint", f"endpoint {first.data.strip()[:60]}")
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
        headers = {"Content-Type": "application/json"}
        posted = await raw.request(endpoint, "POST", headers, init, read_body=False)
        post_shown = exchange(
            "POST", endpoint, headers, str(init), status=posted.status, response_headers=posted.headers
        )
        if not 200 <= posted.status < 300:
            rec.fail("sse.exchange", f"POST initialize to the endpoint: HTTP {posted.status}", [post_shown])
            return
        answer = await _answer(stream, 1)
        if answer is None:
            rec.fail("sse.exchange", "the initialize answer did not come on the SSE stream", [post_shown])
        else:
            rec.ok("sse.exchange", f"POST {posted.status}, answer on the SSE stream")


async def _answer(stream: OpenStream, request_id: int) -> Any:
    while (event := await stream.next_event()) is not None:
        if event.event != "message":
            continue
        try:
            msg = json.loads(event.data)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("id") == request_id and ("result" in msg or "error" in msg):
            return msg
    return None


async def _origin(rec: Results, url: str, raw: RawClient) -> None:
    check = "sse.origin"
    results: dict[str, tuple[int | None, Any]] = {}
    for origin in (FOREIGN_ORIGIN, own_origin(url)):
        headers = {**_GET, "Origin": origin}
        try:
            async with raw.stream(url, "GET", headers) as stream:
                results[origin] = (
                    stream.status,
                    exchange("GET", url, headers, status=stream.status, response_headers=stream.headers),
                )
        except ProbeError as exc:
            results[origin] = (None, exchange("GET", url, headers) | {"error": str(exc)})
    foreign, own = results[FOREIGN_ORIGIN], results[own_origin(url)]
    if foreign[0] is not None and foreign[0] < 400:
        rec.fail(check, f"GET with Origin {FOREIGN_ORIGIN}: HTTP {foreign[0]}", [foreign[1]])
    elif own[0] is None or own[0] >= 400:
        rec.warn(
            check,
            f"the stream is refused to the server's own Origin too (HTTP {own[0]}): no evidence of validation",
            [own[1]],
        )
    else:
        rec.ok(check, f"foreign Origin: {foreign[0]}, own Origin: {own[0]}")
