"""A transparent MessageStream wrapper that remembers the whole conversation.

The harness validates *everything* the server sent, not only what the typed
client helpers happened to parse.  Wrapping the transport (rather than hooking
the Connection) keeps the recorder independent of transport and era: it sees
the raw JSON texts as they arrived and the messages as they left.

``sent_at`` orders the two directions: a request sent when ``n`` texts had
been received was sent after ``received[n - 1]`` and before ``received[n]``
(the stateless checks use it to follow a multi-round-trip request from its
InputRequiredResult to the retry).  ``transcript()`` is both directions in the
order they crossed, in the ``spec/`` corpus format (``transcript.py`` writes it).
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import RemoteProtocolError
from .._sansio import jsonrpc as rpc
from .._trio.stream import NO_META, Inbound, MessageStream, Received, SendMeta


class RecordingStream:
    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner
        #: Every JSON text received, in order.
        self.received: list[bytes] = []
        #: Method of every request we sent, by id (to type the answers).
        self.sent_methods: dict[rpc.RequestId, str] = {}
        self.sent: list[rpc.Message] = []
        #: Every request sent, by id.
        self.requests: dict[rpc.RequestId, rpc.Request] = {}
        #: How many texts had been received when each request was sent.
        self.sent_at: dict[rpc.RequestId, int] = {}
        self._parsed: list[tuple[int, rpc.Message]] = []
        self._parsed_upto = 0
        #: Both directions in order: ("send", index into ``sent``) or ("recv", index into ``received``).
        self._order: list[tuple[str, int]] = []

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if isinstance(message, rpc.Request):
            self.sent_methods[message.id] = message.method
            self.requests[message.id] = message
            self.sent_at[message.id] = len(self.received)
        self._order.append(("send", len(self.sent)))
        self.sent.append(message)
        await self.inner.send(message, meta)

    async def receive(self) -> Inbound:
        item = await self.inner.receive()
        if isinstance(item, Received):
            self._order.append(("recv", len(self.received)))
            self.received.append(item.data)
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()

    def messages(self) -> list[tuple[int, rpc.Message]]:
        """Every well-formed message received so far, with the index of its text."""
        while self._parsed_upto < len(self.received):
            index = self._parsed_upto
            self._parsed_upto += 1
            try:
                parsed = rpc.parse_payload(self.received[index])
            except RemoteProtocolError:
                continue
            self._parsed.extend((index, msg) for msg in parsed.messages)
        return self._parsed

    def answers(self) -> dict[rpc.RequestId, tuple[int, rpc.Response | rpc.ErrorResponse]]:
        """The first answer to each request id, with the index of its text."""
        out: dict[rpc.RequestId, tuple[int, rpc.Response | rpc.ErrorResponse]] = {}
        for index, msg in self.messages():
            if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id is not None:
                out.setdefault(msg.id, (index, msg))
        return out

    def transcript(self) -> list[dict[str, Any]]:
        """``[{"dir": "send"|"recv", "message": obj}]`` in crossing order; a received text that
        is not JSON is kept as ``{"dir": "recv", "raw": text}``."""
        out: list[dict[str, Any]] = []
        for direction, index in self._order:
            if direction == "send":
                out.append({"dir": "send", "message": rpc.message_to_obj(self.sent[index])})
                continue
            data = self.received[index]
            try:
                out.append({"dir": "recv", "message": json.loads(data)})
            except ValueError:
                out.append({"dir": "recv", "raw": data.decode("utf-8", "replace")})
        return out

    def __getattr__(self, name: str) -> Any:
        # Expose the wrapped transport's extras (stderr_tail, returncode, ...).
        return getattr(self.inner, name)
