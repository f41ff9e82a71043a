"""A ``MessageStream`` whose far end is the test: it replays what the test scripts.

Theory of operation
-------------------
``ScriptedStream`` stands where a transport would, in front of a client (or a
server) under test.  Whatever the session sends is kept, with its ``SendMeta``,
in a bounded memory channel that the test reads with ``expect`` (wait for the
next request of a method) or ``requests`` (drain what was sent so far); what
the session receives is whatever the test puts in: a JSON text (``give``,
``answer``, ``progress``, parsed once by the same strict parser every transport
uses), or the transport's own verdicts, ``RequestFailed`` (``lose``) and
``StreamLost`` (``lose_stream``).  Nothing is timed, so a test drives it in
virtual time (``autojump_clock``) with no wall-clock wait.

It keeps the ``MessageStream`` contract where the contract is the stream's own:
``aclose`` is idempotent and wakes a blocked ``receive`` with
``TransportClosed``; ``send`` and ``receive`` after ``aclose`` raise it.
"""

from __future__ import annotations

from typing import Any, Final

import trio

from .._errors import AuthError, TransportClosed, TransportError
from .._sansio import jsonrpc
from .._trio.stream import NO_META, Inbound, RequestFailed, SendMeta, StreamLost, parse_received

__all__ = ["ScriptedStream"]

#: How many items may wait in either direction before the sender blocks.
DEFAULT_BUFFER: Final = 1000


class ScriptedStream:
    """A ``MessageStream`` for a test that plays the peer by hand."""

    def __init__(self, max_buffer: int = DEFAULT_BUFFER) -> None:
        self._sent_in, self._sent_out = trio.open_memory_channel[tuple[jsonrpc.Message, SendMeta]](max_buffer)
        self._inbound_in, self._inbound_out = trio.open_memory_channel[Inbound](max_buffer)
        #: Set by ``aclose``.
        self.closed = False

    def describe(self) -> str:
        return "scripted stream"

    # -- the MessageStream the session sees -------------------------------------------

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        if self.closed:
            await trio.lowlevel.checkpoint()
            raise TransportClosed("the scripted stream is closed")
        await self._sent_in.send((message, meta))

    async def receive(self) -> Inbound:
        try:
            return await self._inbound_out.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the scripted stream is closed") from None

    async def aclose(self) -> None:
        self.closed = True
        self._inbound_out.close()  # wakes a blocked receive
        await trio.lowlevel.checkpoint()

    # -- the test's side ---------------------------------------------------------------

    async def expect(self, method: str) -> tuple[jsonrpc.Request, SendMeta]:
        """The next request sent, with its metadata; it must be a ``method`` request
        (notifications and responses sent before it are skipped)."""
        while True:
            message, meta = await self._sent_out.receive()
            if isinstance(message, jsonrpc.Request):
                if message.method != method:
                    raise AssertionError(f"expected a {method!r} request, the session sent {message!r}")
                return message, meta

    def sent(self) -> list[tuple[jsonrpc.Message, SendMeta]]:
        """Every message sent and not yet read, with its metadata, without waiting."""
        out: list[tuple[jsonrpc.Message, SendMeta]] = []
        while True:
            try:
                out.append(self._sent_out.receive_nowait())
            except trio.WouldBlock:
                return out

    def requests(self) -> list[jsonrpc.Request]:
        """The requests among ``sent()`` (what else was sent is dropped)."""
        return [message for message, _ in self.sent() if isinstance(message, jsonrpc.Request)]

    async def put(self, item: Inbound) -> None:
        """Hand the session one inbound item as it is."""
        await self._inbound_in.send(item)

    async def give(self, obj: dict[str, Any]) -> None:
        """Hand the session one JSON-RPC message (``"jsonrpc": "2.0"`` is added)."""
        await self.put(parse_received(jsonrpc.dumps({"jsonrpc": "2.0", **obj})))

    async def answer(self, request: jsonrpc.Request, result: dict[str, Any]) -> None:
        await self.give({"id": request.id, "result": result})

    async def progress(self, request: jsonrpc.Request, value: float) -> None:
        """A progress notification for ``request`` (which must carry a progress token)."""
        token = (request.params or {})["_meta"]["progressToken"]
        await self.give({"method": "notifications/progress", "params": {"progressToken": token, "progress": value}})

    async def lose(
        self, request: jsonrpc.Request, error: TransportError | AuthError, *, may_reissue: bool = False
    ) -> None:
        """Say, as a transport would, that the answer to ``request`` will never arrive."""
        await self.put(RequestFailed(request.id, error, may_reissue))

    async def lose_stream(self, error: TransportError) -> None:
        """Say, as a transport would, that a stream the peer sent on unasked was given up."""
        await self.put(StreamLost(error))
