"""A transparent MessageStream wrapper that remembers the whole conversation.

The harness validates *everything* the server sent, not only what the typed
client helpers happened to parse.  Wrapping the transport (rather than hooking
the Connection) keeps the recorder independent of transport and era: it sees
the raw JSON texts as they arrived and the messages as they left.
"""

from __future__ import annotations

from typing import Any

from .._sansio import jsonrpc as rpc
from .._trio.stream import MessageStream


class RecordingStream:
    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner
        #: Every JSON text received, in order.
        self.received: list[bytes] = []
        #: Method of every request we sent, by id (to type the answers).
        self.sent_methods: dict[rpc.RequestId, str] = {}
        self.sent: list[rpc.Message] = []

    async def send(self, message: rpc.Message) -> None:
        if isinstance(message, rpc.Request):
            self.sent_methods[message.id] = message.method
        self.sent.append(message)
        await self.inner.send(message)

    async def receive(self) -> bytes:
        data = await self.inner.receive()
        self.received.append(data)
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        # Expose the wrapped transport's extras (stderr_tail, returncode, ...).
        return getattr(self.inner, name)
