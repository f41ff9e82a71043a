"""An in-process MessageStream pair, linked by Trio memory channels.

Theory of operation
-------------------
``memory_stream_pair()`` returns two ``MemoryMessageStream`` ends; what one end
sends, the other receives.  Each direction is a bounded
``trio.open_memory_channel(max_buffer)`` carrying *bytes*: ``send`` really runs
``jsonrpc.serialize`` (and the stdio framing check, so a message that could not
travel over stdio cannot travel here either) and ``receive`` hands back the
JSON text, so in-process tests exercise the same wire format and the same
parsing path as a real transport.  A full buffer blocks the sender
(backpressure), as a full pipe would.

Closing an end closes both channels it owns:

* its outgoing send channel, so the peer's ``receive`` first drains what was
  already sent and then raises ``TransportClosed``;
* its incoming receive channel, so the peer's ``send`` (even one blocked on a
  full buffer) raises ``TransportClosed``.

Any later call on the closed end itself raises ``TransportClosed`` too.
"""

from __future__ import annotations

import itertools
from typing import Self

import trio

from .._errors import TransportClosed
from .._sansio import jsonrpc
from .._sansio.framing.lines import frame
from .stream import NO_META, Received, SendMeta, parse_received

_pair_ids = itertools.count(1)


class MemoryMessageStream:
    """One end of an in-process pair.  Use ``memory_stream_pair`` to make one."""

    def __init__(
        self,
        name: str,
        outgoing: trio.MemorySendChannel[bytes],
        incoming: trio.MemoryReceiveChannel[bytes],
    ) -> None:
        self.name = name
        self._outgoing = outgoing
        self._incoming = incoming
        self._closed = False

    def describe(self) -> str:
        return f"in-memory stream {self.name}"

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<MemoryMessageStream {self.name} {state}>"

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        payload = jsonrpc.serialize(message)
        frame(payload)  # validation only: the same rule as stdio (no raw newline)
        try:
            await self._outgoing.send(payload)
        except trio.ClosedResourceError:
            raise TransportClosed(f"{self.describe()} is closed") from None
        except trio.BrokenResourceError:
            raise TransportClosed(f"peer of {self.describe()} closed") from None

    async def receive(self) -> Received:
        try:
            return parse_received(await self._incoming.receive())
        except trio.ClosedResourceError:
            raise TransportClosed(f"{self.describe()} is closed") from None
        except trio.EndOfChannel:
            raise TransportClosed(f"peer of {self.describe()} closed") from None

    async def aclose(self) -> None:
        # Channel close() is synchronous and idempotent; it wakes blocked tasks
        # on both sides.  Still a checkpoint, as every trio aclose is.
        self._closed = True
        self._outgoing.close()
        self._incoming.close()
        await trio.lowlevel.checkpoint()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def memory_stream_pair(max_buffer: int = 64) -> tuple[MemoryMessageStream, MemoryMessageStream]:
    """Two linked in-process streams; ``max_buffer`` messages may wait in each direction."""
    a_to_b_send, a_to_b_recv = trio.open_memory_channel[bytes](max_buffer)
    b_to_a_send, b_to_a_recv = trio.open_memory_channel[bytes](max_buffer)
    n = next(_pair_ids)
    return (
        MemoryMessageStream(f"#{n}a", a_to_b_send, b_to_a_recv),
        MemoryMessageStream(f"#{n}b", b_to_a_send, a_to_b_recv),
    )
