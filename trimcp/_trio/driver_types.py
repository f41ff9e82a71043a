"""The vocabulary of a ``SessionDriver``'s callers: sentinels, callback types, ``NeedInput``.

Kept apart from ``driver.py`` so that the driver module holds only the driver;
``driver`` re-exports every name here.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import Any

from .._sansio import events as ev
from .._sansio import jsonrpc as rpc


class UseDefault(enum.Enum):
    """Sentinel type: use the driver's default request timeout."""

    USE_DEFAULT = "use-default"


USE_DEFAULT = UseDefault.USE_DEFAULT

#: Called (in the session's callback task) with each progress notification of a request.
ProgressCallback = Callable[[ev.ProgressReceived], Awaitable[None] | None]
#: User code for every notification: runs in the session's callback task, in order.
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None] | None]
#: A layer's synchronous observer of notifications; runs in the reader task, must not block.
NotificationTap = Callable[[str, dict[str, Any]], None]
#: Called with the JSON-RPC id of each attempt of a request, before it is sent.
SentCallback = Callable[[rpc.RequestId], None]
#: How a ``server/discover`` probe ended.
ProbeOutcome = ev.Discovered | ev.LegacyServer | ev.HandshakeFailed


class NeedInput(Exception):
    """Raised by a request handler (server, stateless era) to answer with an
    InputRequiredResult: the client must fulfil ``input_requests`` and retry,
    echoing ``request_state`` (spec: basic/patterns/mrtr)."""

    def __init__(self, input_requests: dict[str, Any] | None, request_state: str | None = None) -> None:
        super().__init__("input required")
        self.input_requests = input_requests
        self.request_state = request_state
