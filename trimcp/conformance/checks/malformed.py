"""Deliver one malformed message to a server and hear what it said about it, on any transport.

Theory of operation
-------------------
The malformed-input probes (``checks/negative.py``: invalid JSON, invalid
requests, invalid params) have one definition and one oracle each; this module
only carries their bytes and brings back a ``Heard``, whatever the transport:

* an ordered stream (stdio, WebSocket, anything with ``send_raw``): the bytes
  go out as one line or one text frame, followed by a well-formed *sentinel*
  request with a fresh id (``ping``, or ``server/discover`` in the stateless
  era).  A connection delivers its messages in order and a server reads them in
  order, so by the time the sentinel's answer arrives whatever the server had
  to say about the malformed message has arrived too: silence is proven in one
  round trip, not by waiting.  (A server that dispatches each message to a task
  of its own could in principle answer the sentinel first; a parse error or an
  invalid request is found while reading, before any dispatch, in every
  implementation known.)
* Streamable HTTP: each POST has its own response, so that response *is* the
  answer (2025-03-26 .. 2026-07-28 basic/transports): a JSON-RPC error in its
  body, an HTTP error status (the transport's refusal of input it cannot
  accept), or ``202 Accepted`` (taken as a notification or a response: nothing
  will ever answer).  The POST carries the session's own headers
  (``Mcp-Session-Id`` and ``MCP-Protocol-Version`` of the handshake era, or the
  2026-07-28 ``MCP-Protocol-Version``, ``Mcp-Method`` when the body names a
  method, the run's credentials), taken from the connection's ``HttpPlanner``.
* HTTP+SSE (2024-11-05): the POST goes to the announced endpoint; a refusal
  is the answer, an accepted POST is answered on the SSE stream, read with a
  sentinel as for an ordered stream.

Either way the wait is bounded (the run's ``--timeout``): neither an answer
nor the sentinel's within it is ``timed_out`` (the probe was not reached, not
passed); a closed connection raises ``Broken`` (the server died on it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import trio

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio.http.client.plan import Mode
from ..._trio.stream import RequestFailed, StreamLost, meta_for
from ..evidence import exchange, received, sent
from ..rawhttp import ProbeError, RawResponse, request
from ..recorder import RecordingStream

__all__ = ["Broken", "Heard", "deliver", "is_http"]


class Broken(Exception):
    """The probe connection closed or went silent; the rest runs on a new one.  ``seconds``:
    the time limit the silence outlasted, when silence broke it (``Results.failed``)."""

    def __init__(self, message: str, *, seconds: float | None = None) -> None:
        super().__init__(message)
        self.seconds = seconds


@attrs.frozen
class Heard:
    """What the server said about one malformed message."""

    #: Its JSON-RPC answer (an error, or wrongly a result), if one came.
    answer: rpc.Message | None = None
    #: HTTP: the status of the POST that carried it.
    status: int | None = None
    #: No answer came and the sentinel behind it was answered (ordered streams), or the
    #: POST was accepted with no answer (HTTP): the server is silent on it.
    silent: bool = False
    #: Neither an answer nor the sentinel's within the bound: not judged.
    timed_out: bool = False
    evidence: tuple[dict[str, Any], ...] = ()

    @property
    def code(self) -> int | None:
        return self.answer.error.code if isinstance(self.answer, rpc.ErrorResponse) else None


def is_http(stream: RecordingStream) -> bool:
    """Whether the connection is HTTP (its messages go as POSTs the harness can make itself)."""
    return getattr(stream.inner, "planner", None) is not None


Sentinel = Callable[[], rpc.Request]


async def deliver(
    stream: RecordingStream,
    data: bytes,
    ids: tuple[rpc.RequestId | None, ...],
    sentinel: Sentinel,
    wait: float,
    sentinels: set[rpc.RequestId],
) -> Heard:
    """Send ``data`` (one malformed message); what answered it (an id in ``ids``), within ``wait``.

    ``sentinel`` makes the well-formed request that follows it; its id joins ``sentinels``
    so that a late answer to it is never mistaken for an answer to something else."""
    if is_http(stream):
        return await _post(stream, data, ids, sentinel, wait, sentinels)
    try:
        await stream.inner.send_raw(data)  # type: ignore[attr-defined]
    except TrimcpError as exc:
        raise Broken(f"writing failed: {exc}") from exc
    return await _behind_sentinel(stream, [sent(data)], ids, sentinel, wait, sentinels)


async def _behind_sentinel(
    stream: RecordingStream,
    evidence: list[dict[str, Any]],
    ids: tuple[rpc.RequestId | None, ...],
    sentinel: Sentinel,
    wait: float,
    sentinels: set[rpc.RequestId],
) -> Heard:
    probe = sentinel()
    sentinels.add(probe.id)
    try:
        await stream.send(probe, meta_for(probe))
    except TrimcpError as exc:
        raise Broken(f"writing failed: {exc}") from exc
    evidence.append(sent(probe))
    found: rpc.Message | None = None
    with trio.move_on_after(wait):
        while True:
            try:
                item = await stream.receive()
            except TrimcpError as exc:
                raise Broken(f"the connection closed: {exc}") from exc
            if isinstance(item, StreamLost):
                continue
            if isinstance(item, RequestFailed):
                if item.request_id == probe.id:
                    raise Broken(f"the sentinel {probe.method} failed: {item.error}")
                continue
            for msg in item.payload.messages:
                if not isinstance(msg, (rpc.Response, rpc.ErrorResponse)):
                    continue
                if msg.id == probe.id:
                    evidence.append(received(msg))
                    return Heard(answer=found, silent=found is None, evidence=tuple(evidence))
                if msg.id in ids and found is None:
                    found = msg
                    evidence.append(received(msg))
    return Heard(answer=found, timed_out=found is None, evidence=tuple(evidence))


#: Request headers whose values are credentials: shown by name only in the evidence.
_CREDENTIALS = frozenset({"authorization", "dpop", "cookie", "proxy-authorization"})


def _shown(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` for a report: the session's own credentials never reach the evidence."""
    return {k: ("<credentials>" if k.lower() in _CREDENTIALS else v) for k, v in headers.items()}


async def _post(
    stream: RecordingStream,
    data: bytes,
    ids: tuple[rpc.RequestId | None, ...],
    sentinel: Sentinel,
    wait: float,
    sentinels: set[rpc.RequestId],
) -> Heard:
    planner = stream.inner.planner  # type: ignore[attr-defined]
    # A stand-in response plans the POST with no Mcp-Method; a body that names a method gets one.
    plan = planner.plan_post(rpc.Response("trimcp-check-raw", {}), body=data)
    headers = {k: v for k, v in plan.request.headers if k.lower() != "content-length"}
    method = _method_of(data)
    if method is not None:
        headers.update(planner.metadata_headers(method, None))
    url = plan.request.url
    response: RawResponse | None = None
    with trio.move_on_after(wait):
        try:
            response = await request(url, "POST", headers, data, timeout=wait + 1)
        except ProbeError as exc:
            raise Broken(str(exc)) from exc
    shown = _shown(headers)
    if response is None:
        return Heard(timed_out=True, evidence=(exchange("POST", url, shown, data),))
    evidence = [
        exchange(
            "POST",
            url,
            shown,
            data,
            status=response.status,
            response_headers=response.headers,
            response_body=response.body or None,
        )
    ]
    answer = _answer_in(response, ids)
    if answer is not None:
        # So that the conversation checks (error codes, schema) judge it like any other answer.
        stream.received.append(rpc.serialize(answer))
        return Heard(answer=answer, status=response.status, evidence=tuple(evidence))
    if response.status >= 400 or plan.mode is not Mode.LEGACY_SSE:
        return Heard(status=response.status, silent=response.status < 300, evidence=tuple(evidence))
    # HTTP+SSE: an accepted POST is answered on the event stream.
    heard = await _behind_sentinel(stream, evidence, ids, sentinel, wait, sentinels)
    return attrs.evolve(heard, status=response.status)


def _method_of(data: bytes) -> str | None:
    try:
        obj = json.loads(data)
    except ValueError:
        return None
    method = obj.get("method") if isinstance(obj, dict) else None
    return method if isinstance(method, str) else None


def _answer_in(response: RawResponse, ids: tuple[rpc.RequestId | None, ...]) -> rpc.Message | None:
    for obj in response.messages:
        msg = rpc.message_from_obj(obj)
        if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id in ids:
            return msg
    return None
