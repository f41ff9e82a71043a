"""Evidence as every report shows it: JSON, never a Python ``repr``.

Theory of operation
-------------------
A check's evidence items are meant to be JSON-ready already (``evidence.py``:
``sent``, ``received``, ``exchange``), but a check may hand over a message
object, ``bytes`` or a tuple.  ``jsonable`` turns any of them into JSON values:
a JSON-RPC message into its wire object, ``bytes`` into a JSON string when
they are UTF-8 (JSON's own escapes then show control characters) and into
``{"base64": ..., "bytes": n}`` when not, attrs classes into objects, tuples
and sets into arrays, an enum into its value.  What is none of these is named
by its type and ``str`` text, so nothing falls back to ``repr``.

``shown`` is the one-line JSON text the console, Markdown and JUnit reports
print: an HTTP body that is itself a JSON object or array is shown parsed
(``"body": {...}`` instead of an escaped string), and the text is cut at
``limit`` characters.  The JSON report keeps the exact body strings.
"""

from __future__ import annotations

import base64
import enum
import json
from collections.abc import Mapping
from typing import Any

import attrs

from .._sansio import jsonrpc as rpc

__all__ = ["jsonable", "shown"]

_MESSAGES = (rpc.Request, rpc.Notification, rpc.Response, rpc.ErrorResponse)


def jsonable(value: Any) -> Any:
    """``value`` as JSON values (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(raw).decode("ascii"), "bytes": len(raw)}
    if isinstance(value, Mapping):
        return {str(jsonable(k)) if not isinstance(k, str) else k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, _MESSAGES):
        return rpc.message_to_obj(value)
    if attrs.has(type(value)):
        return jsonable(attrs.asdict(value, recurse=False))
    return {"type": type(value).__name__, "text": str(value)}


def _readable(value: Any) -> Any:
    """An HTTP exchange's JSON bodies parsed, for reading."""
    if isinstance(value, dict):
        out = {k: _readable(v) for k, v in value.items()}
        body = out.get("body")
        if isinstance(body, str) and body[:1] in ("{", "["):
            try:
                out["body"] = json.loads(body)
            except ValueError:
                pass
        return out
    if isinstance(value, list):
        return [_readable(v) for v in value]
    return value


def shown(item: Any, limit: int = 2000) -> str:
    """One evidence item as one line of JSON, for a reader."""
    text = json.dumps(_readable(jsonable(item)), ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
