"""One HTTP/1.1 client connection: trimcp's own codec (``_sansio.http.client.h1``) over a Trio stream.

Theory of operation
-------------------
The keep-alive pool (``transports/http/pool.py``) runs each exchange on an
``H1ClientConnection``, over a stream from ``tcp.connect_tcp``; the rules of
RFC 9112 are ``H1Client``'s, this class only moves bytes:

* ``send_request`` writes a whole request (head, body) in one ``send_all``;
  ``read_head`` reads until the response head (the codec skips 1xx answers);
  ``read_some`` returns the next piece of the body and ``b""`` at its end;
  ``next_cycle`` readies a fully exchanged connection for the next request
  (keep-alive) and says whether it can carry one.

Everything that fails once the request may be on its way raises
``ConnectionLost``; ``before_response`` says not one byte of an answer had
arrived, so a request on a reused connection may be retried on a fresh one.
"""

from __future__ import annotations

from typing import Final

import trio

from ..._errors import TransportError
from ..._sansio.http.client.h1 import (
    CLOSED,
    MAX_HEAD_SIZE,
    NEED_DATA,
    Data,
    EndOfMessage,
    H1Client,
    H1LocalError,
    H1RemoteError,
    Response,
)

__all__ = ["H1ClientConnection"]

READ_SIZE: Final = 64 * 1024
_FAILED: Final = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class ConnectionLost(TransportError):
    """An HTTP connection failed after the request was (possibly) sent.

    ``before_response``: not one byte of a response had arrived.
    """

    def __init__(self, message: str, *, before_response: bool = False) -> None:
        super().__init__(message)
        self.before_response = before_response


class H1ClientConnection:
    """One client-side HTTP/1.1 connection (see the module docstring)."""

    def __init__(self, stream: trio.abc.Stream, name: str, *, max_head: int = MAX_HEAD_SIZE) -> None:
        self.stream = stream
        #: Who is at the other end, for error messages (an origin, ``host:port``).
        self.name = name
        self.codec = H1Client(max_head=max_head)
        #: Bytes received since the current request was sent.
        self.received = 0

    async def send_request(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        """Write one whole request (``headers`` must name ``Host``)."""
        try:
            wire = self.codec.send_request(method, target, headers, body)
        except H1LocalError as exc:
            raise ConnectionLost(f"cannot send this request: {exc}") from None
        self.received = 0
        try:
            await self.stream.send_all(wire)
        except _FAILED as exc:
            raise ConnectionLost(
                f"connection to {self.name} failed while sending: {exc}", before_response=True
            ) from None

    async def next_event(self) -> Response | Data | EndOfMessage | object:
        codec = self.codec
        while True:
            try:
                event = codec.next_event()
            except H1RemoteError as exc:
                raise ConnectionLost(
                    f"invalid HTTP from {self.name}: {exc}", before_response=not self.received
                ) from None
            if event is not NEED_DATA:
                return event
            try:
                data = await self.stream.receive_some(READ_SIZE)
            except _FAILED as exc:
                raise ConnectionLost(
                    f"connection to {self.name} failed: {exc}", before_response=not self.received
                ) from None
            self.received += len(data)
            try:
                codec.receive_data(data)
            except H1RemoteError as exc:
                raise ConnectionLost(
                    f"invalid HTTP from {self.name}: {exc}", before_response=not self.received
                ) from None

    async def read_head(self) -> Response:
        """The response head (informational 1xx answers are skipped by the codec)."""
        event = await self.next_event()
        if isinstance(event, Response):
            return event
        if event is CLOSED:
            raise ConnectionLost(
                f"{self.name} closed the connection without answering",
                before_response=not self.received,
            )
        raise ConnectionLost(f"unexpected {event!r} from {self.name} before the response head")

    async def read_some(self) -> bytes:
        """The next piece of the body; ``b""`` at its end."""
        while True:
            event = await self.next_event()
            if isinstance(event, Data):
                if event.data:
                    return event.data
            elif isinstance(event, EndOfMessage):
                return b""
            else:  # CLOSED: the codec raises for a body cut short, so this is after the end
                raise ConnectionLost(f"{self.name} closed the connection mid-body")

    def next_cycle(self) -> bool:
        """After a complete exchange: ready the connection for another request (or say it can't)."""
        codec = self.codec
        if codec.done and codec.reusable:
            codec.start_next_cycle()
            return True
        return False

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)
