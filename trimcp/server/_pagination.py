"""Opaque cursors for the ``*/list`` methods (spec: Utilities / Pagination).

Theory of operation
-------------------
Every list method (``tools/list``, ``resources/list``,
``resources/templates/list``, ``prompts/list``) may split its answer into
pages: the result carries ``nextCursor`` while more items follow, and the
client sends it back as ``params.cursor``.  The spec makes the cursor opaque
to the client and says an invalid cursor is error -32602.

Our cursor is base64url of ``"<list name>:<offset>"``.  Naming the list
refuses a ``tools/list`` cursor replayed to ``prompts/list``; the offset keeps
the server stateless across pages (a list that changes between pages may
shift by an item, which the spec tolerates: the server then announces
``list_changed``).  ``page_size=None`` means a single page.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, TypeVar

from .._errors import McpError
from .._sansio import jsonrpc as rpc

T = TypeVar("T")


def encode_cursor(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii")


def decode_cursor(kind: str, cursor: Any) -> int:
    """The offset a cursor stands for; ``McpError(-32602)`` if it is not one of ours."""
    if not isinstance(cursor, str):
        raise McpError(rpc.INVALID_PARAMS, "invalid cursor: must be a string")
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        name, _, number = text.rpartition(":")
        offset = int(number)
    except (ValueError, binascii.Error, UnicodeError):
        raise McpError(rpc.INVALID_PARAMS, f"invalid cursor {cursor!r}") from None
    if name != kind or offset < 0 or not number.isdigit():
        raise McpError(rpc.INVALID_PARAMS, f"invalid cursor {cursor!r} for {kind}")
    return offset


def paginate(
    kind: str, items: Sequence[T], params: dict[str, Any], page_size: int | None
) -> tuple[Sequence[T], str | None]:
    """The page ``params.cursor`` asks for and the cursor of the next one (if any)."""
    cursor = params.get("cursor")
    start = 0 if cursor is None else decode_cursor(kind, cursor)
    if page_size is None:
        return items[start:], None
    end = start + page_size
    return items[start:end], encode_cursor(kind, end) if end < len(items) else None
