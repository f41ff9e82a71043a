"""A ``Server`` served in-process over a memory stream: the client end, for a test.

The close is shielded: a checkpoint in the cancelled nursery would raise
``Cancelled``, which the nursery then swallows, and with it whatever the test raised.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.stream import MessageStream
from trimcp.server import Server, serve_stream


@asynccontextmanager
async def served(server: Server) -> AsyncIterator[MessageStream]:
    client_end, server_end = memory_stream_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_stream, server, server_end)
        try:
            yield client_end
        finally:
            with trio.CancelScope(shield=True):
                await client_end.aclose()
            nursery.cancel_scope.cancel()
