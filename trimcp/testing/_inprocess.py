"""A ``Server`` served in the caller's Trio run, over an in-memory stream: no sockets.

Theory of operation
-------------------
``serve_in_process(server)`` makes a ``memory_stream_pair`` (``_trio/memory.py``:
each direction a bounded memory channel of *bytes*, so messages are really
serialized, framed-checked and parsed as on a wire), runs ``serve_stream`` on
one end in a nursery of its own and yields the other end, the client's.
``connect(server, **client_options)`` hands that end to ``open_client`` and
yields the ``ClientSession``, the same object ``open_client`` yields for a
subprocess or a URL; every keyword goes to ``open_client`` as it is.

On exit the client end is closed first, under a shield: a checkpoint in the
cancelled nursery would raise ``Cancelled``, which the nursery then swallows,
and with it whatever the caller's block raised.  Closing the client end ends
``serve_stream`` (the server sees ``TransportClosed``); the nursery is then
cancelled so that a server still busy with a handler does not hold the exit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from .._trio._groups import collapse
from .._trio.client import ClientSession, open_client
from .._trio.memory import memory_stream_pair
from .._trio.stream import MessageStream
from ..server import Server, serve_stream

__all__ = ["connect", "serve_in_process"]


@asynccontextmanager
async def serve_in_process(server: Server, *, max_buffer: int = 64) -> AsyncIterator[MessageStream]:
    """Serve ``server`` in this Trio run and yield the client's end of the stream.

    ``max_buffer`` messages may wait in each direction (then the sender blocks,
    as on a full pipe).  For a test that speaks raw JSON-RPC, wraps the stream,
    or passes it to ``open_client`` or the conformance runner itself."""
    client_end, server_end = memory_stream_pair(max_buffer)
    with collapse():
        async with trio.open_nursery() as nursery:
            await nursery.start(serve_stream, server, server_end)
            try:
                yield client_end
            finally:
                with trio.CancelScope(shield=True):
                    await client_end.aclose()
                nursery.cancel_scope.cancel()


@asynccontextmanager
async def connect(server: Server, **client_options: Any) -> AsyncIterator[ClientSession]:
    """Connect a client to ``server`` in-process and yield its ``ClientSession``.

    ``client_options`` are ``open_client``'s keywords (``revision=``, handlers,
    timeouts, ...); transport options for a subprocess or a URL do not apply."""
    async with serve_in_process(server) as stream, open_client(stream, **client_options) as client:
        yield client
