"""The ``"http"`` member of a recorded transcript's entries.

Theory of operation (basic/transports: Streamable HTTP, and 2024-11-05 HTTP+SSE)
--------------------------------------------------------------------------------
The transport rules speak of status codes and headers, which a message-level
transcript cannot show.  A recording over HTTP therefore runs its executor under
an ``HttpCapture`` and its stream under a ``RecordingStream(capture=...)``; the
first keeps every exchange, the second notes for every text received which
exchange's body was read last.  ``annotate`` joins the two:

* a sent message gets ``{"method", "url", "headers"}`` of the request whose JSON
  body it was, and ``"status"`` / ``"response_headers"`` of the answer (202 for a
  notification or a response, 200 for a request); a ``notifications/cancelled``
  that no request carried gets ``{"posted": false}`` (2026-07-28 cancels by closing
  the request's stream; the transcript keeps what the client decided);
* a received message gets ``{"via": "POST"|"GET", "status", "headers"}`` of the
  response that brought it.  On Streamable HTTP an answer arrives on the POST of
  its request, found by id; anything else (notifications, server requests, every
  message over HTTP+SSE) on the exchange read last, which is exact because one
  reader drains the stream.

The message entries themselves (``dir``, ``message``) are left as they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .recorder import Exchange, HttpCapture

__all__ = ["annotate"]


def annotate(
    entries: Iterable[Mapping[str, Any]],
    tags: Sequence[Exchange | None],
    capture: HttpCapture,
    transport: str | None,
) -> list[dict[str, Any]]:
    """``entries`` (a ``RecordingStream.transcript()``) with an ``"http"`` member where
    the evidence shows one; ``tags`` is that recorder's ``http_tags``."""
    taken: set[int] = set()
    received = iter(tags)
    out = []
    for original in entries:
        entry = dict(original)
        message = entry.get("message")
        if entry.get("dir") == "send":
            http = _sent(message, capture, taken)
        else:
            http = _received(message, next(received, None), capture, transport)
        if http is not None:
            entry["http"] = http
        out.append(entry)
    return out


def _sent(message: Any, capture: HttpCapture, taken: set[int]) -> dict[str, Any] | None:
    exchange = capture.carrying(message, taken) if isinstance(message, dict) else None
    if exchange is not None:
        http: dict[str, Any] = {"method": exchange.method, "url": exchange.url, "headers": exchange.request_headers}
        if exchange.status is not None:
            http["status"] = exchange.status
            http["response_headers"] = exchange.response_headers
        return http
    if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
        return {"posted": False}
    return None


def _received(message: Any, tag: Exchange | None, capture: HttpCapture, transport: str | None) -> dict[str, Any] | None:
    is_answer = isinstance(message, dict) and "method" not in message and "id" in message
    if is_answer and transport == "streamable-http":
        tag = capture.request_post(message["id"]) or tag
    if tag is None:
        return None
    return {"via": tag.method, "status": tag.status, "headers": tag.response_headers}
