"""Evidence: what a check's verdict rests on, in a form a report can keep.

A ``CheckResult`` carries a tuple of JSON-ready items: ``sent(msg)`` and
``received(msg)`` wrap JSON-RPC messages (a text that did not parse is kept as
the text), ``exchange(...)`` one raw HTTP request and its answer.  Bodies are
cut at ``MAX_TEXT`` characters so that a 10 MB answer does not become a 10 MB
report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._sansio import jsonrpc as rpc

MAX_TEXT: Final = 4000


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"... ({len(text)} characters)"


def _message(msg: rpc.Message | bytes | str) -> Any:
    if isinstance(msg, (bytes, str)):
        text = msg.decode("utf-8", "replace") if isinstance(msg, bytes) else msg
        try:
            value = json.loads(text)
        except ValueError:
            return _clip(text)
        return value if len(text) <= MAX_TEXT else _clip(text)
    obj = rpc.message_to_obj(msg)
    text = json.dumps(obj)
    return obj if len(text) <= MAX_TEXT else _clip(text)


def sent(msg: rpc.Message | bytes | str) -> dict[str, Any]:
    """A message the harness sent."""
    return {"sent": _message(msg)}


def received(msg: rpc.Message | bytes | str) -> dict[str, Any]:
    """A message (or raw text) the server sent."""
    return {"received": _message(msg)}


def exchange(
    method: str,
    url: str,
    request_headers: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    request_body: bytes | str | None = None,
    *,
    status: int | None = None,
    response_headers: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    response_body: bytes | str | None = None,
) -> dict[str, Any]:
    """One raw HTTP exchange; ``status=None`` when no answer came."""

    def body(value: bytes | str | None) -> str | None:
        if value is None:
            return None
        return _clip(value.decode("utf-8", "replace") if isinstance(value, bytes) else value)

    def headers(value: Mapping[str, str] | Sequence[tuple[str, str]]) -> list[list[str]]:
        pairs = value.items() if isinstance(value, Mapping) else value
        return [[str(k), str(v)] for k, v in pairs]

    request = {"method": method, "url": url, "headers": headers(request_headers), "body": body(request_body)}
    response = (
        None
        if status is None
        else {
            "status": status,
            "headers": headers(response_headers),
            "body": body(response_body),
        }
    )
    return {"request": request, "response": response}
