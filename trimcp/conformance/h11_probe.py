"""The raw probes' HTTP/1.1 client connection: h11 over a Trio stream.

Theory of operation
-------------------
The conformance harness's raw probes (``rawhttp.py``) must send what a correct
client never sends, so they run their exchanges on h11 rather than on trimcp's
own client codec (``_sansio/http/client/h1.py``, which the keep-alive pool runs
on): h11 takes header values as bytes, so a malformed value a server handed
out goes back unchanged, where trimcp's codec accepts only checked ``str``; and
a server's answers are read by a codec other than the one the pool trusts.
The connection comes from ``_trio.tcp.connect_tcp``.

* ``send_request`` writes a whole request (head, body, end) in one
  ``send_all``; ``read_head`` reads until the response head, skipping 1xx
  answers; ``read_some`` returns the next piece of the body and ``b""`` at
  its end.  ``next_cycle`` readies a fully exchanged connection for the next
  request (keep-alive) and says whether it can carry one.

Everything that fails once the request may be on its way raises
``ConnectionLost``, whose ``before_response`` says that not one byte of an
answer had arrived.  The head is capped at ``max_head`` bytes (h11's
``max_incomplete_event_size``).
"""

from __future__ import annotations

from typing import Any, Final

import h11
import trio

from .._trio.http1.client import ConnectionLost

__all__ = ["MAX_HEAD_SIZE", "H11ClientConnection"]

READ_SIZE: Final = 64 * 1024
#: Longest response head (status line plus headers) accepted.
MAX_HEAD_SIZE: Final = 64 * 1024


class H11ClientConnection:
    """One client-side HTTP/1.1 connection on h11, for the raw probes (see the module docstring)."""

    def __init__(self, stream: trio.abc.Stream, name: str, *, max_head: int = MAX_HEAD_SIZE) -> None:
        self.stream = stream
        #: Who is at the other end, for error messages (an origin, ``host:port``).
        self.name = name
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=max_head)
        #: Bytes received since the current request was sent.
        self.received = 0

    async def send_request(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        """Write one whole request (``headers`` must name ``Host``, and a body's length)."""
        h = self.h11
        try:
            wire = h.send(h11.Request(method=method, target=target, headers=headers))
            if body:
                wire += h.send(h11.Data(data=body))
            wire += h.send(h11.EndOfMessage())
        except h11.LocalProtocolError as exc:
            raise ConnectionLost(f"cannot send this request: {exc}") from None
        self.received = 0
        try:
            await self.stream.send_all(wire)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise ConnectionLost(
                f"connection to {self.name} failed while sending: {exc}", before_response=True
            ) from None

    async def next_event(self) -> Any:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise ConnectionLost(
                    f"invalid HTTP from {self.name}: {exc}", before_response=not self.received
                ) from None
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self.stream.receive_some(READ_SIZE)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise ConnectionLost(
                    f"connection to {self.name} failed: {exc}", before_response=not self.received
                ) from None
            self.received += len(data)
            try:
                self.h11.receive_data(bytes(data))
            except h11.RemoteProtocolError as exc:
                raise ConnectionLost(
                    f"invalid HTTP from {self.name}: {exc}", before_response=not self.received
                ) from None

    async def read_head(self) -> h11.Response:
        """The response head (informational 1xx answers are skipped)."""
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Response):
                return event
            if isinstance(event, h11.ConnectionClosed):
                raise ConnectionLost(
                    f"{self.name} closed the connection without answering",
                    before_response=not self.received,
                )
            # h11.InformationalResponse (1xx): keep reading.

    async def read_some(self) -> bytes:
        """The next piece of the body; ``b""`` at its end."""
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Data):
                if event.data:
                    return bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return b""
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionLost(f"{self.name} closed the connection mid-body")

    def next_cycle(self) -> bool:
        """After a complete exchange: ready the connection for another request (or say it can't)."""
        h = self.h11
        if h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            return True
        return False

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)
