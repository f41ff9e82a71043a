"""One HTTP/1.1 client connection: h11 over a Trio stream.

Theory of operation
-------------------
Two clients in trimcp speak HTTP/1.1 by hand: the Streamable HTTP client's
keep-alive pool (``transports/http/h11_pool.py``) and the conformance
harness's raw probes (``trimcp.conformance.rawhttp``), which must send what a
correct client never sends.  Both open connections with ``open_connection``.
The probes run their exchanges on an ``H11ClientConnection``; the pool runs
on ``h1_client.H1ClientConnection`` (the same interface over trimcp's own,
cheaper codec).  What differs (pooling, which request to send, how far to
read the body) stays with them.

* ``open_connection(host, port, ssl_context=...)`` opens TCP, then TLS when
  given a context (SNI and certificate checks for ``host``), and returns the
  stream with its socket (the pool polls an idle socket for EOF).  Plain TCP
  is a ``tcp.FastTcpStream``: no scheduler pass per read or write that need
  not wait.  It raises
  ``ConnectError``: nothing was sent.
* ``send_request`` writes a whole request (head, body, end) in one
  ``send_all``; ``read_head`` reads until the response head, skipping 1xx
  answers; ``read_some`` returns the next piece of the body and ``b""`` at
  its end.  ``next_cycle`` readies a fully exchanged connection for the next
  request (keep-alive) and says whether it can carry one.

Everything that fails once the request may be on its way raises
``ConnectionLost``, whose ``before_response`` says that not one byte of an
answer had arrived (so a request on a reused keep-alive connection may be
retried on a fresh one).  The head is capped at ``max_head`` bytes (h11's
``max_incomplete_event_size``).
"""

from __future__ import annotations

import ssl
from typing import Any, Final

import h11
import trio

from .._errors import ConnectError
from .tcp import fast_stream
from .transports.http.executor import ConnectionLost

__all__ = ["MAX_HEAD_SIZE", "H11ClientConnection", "open_connection"]

READ_SIZE: Final = 64 * 1024
#: Longest response head (status line plus headers) accepted.
MAX_HEAD_SIZE: Final = 64 * 1024


async def open_connection(
    host: str, port: int, *, ssl_context: ssl.SSLContext | None = None, name: str | None = None
) -> tuple[trio.abc.Stream, Any]:
    """A TCP (TLS with ``ssl_context``) stream to ``host:port`` and its socket.

    Raises ``ConnectError`` naming ``name`` (default ``host:port``)."""
    name = name or f"{host}:{port}"
    try:
        tcp = await trio.open_tcp_stream(host, port)
    except OSError as exc:
        raise ConnectError(f"cannot connect to {name}: {exc}") from None
    if ssl_context is None:
        fast = fast_stream(tcp)  # no scheduler pass per send/receive that need not wait (tcp.py)
        return fast, fast.socket
    tls = trio.SSLStream(tcp, ssl_context, server_hostname=host, https_compatible=True)
    try:
        await tls.do_handshake()
    except (OSError, trio.BrokenResourceError, ssl.SSLError) as exc:
        await trio.aclose_forcefully(tcp)
        raise ConnectError(f"cannot connect to {name}: {exc}") from None
    except BaseException:
        await trio.aclose_forcefully(tcp)
        raise
    return tls, tcp.socket


class H11ClientConnection:
    """One client-side HTTP/1.1 connection (see the module docstring)."""

    def __init__(
        self, stream: trio.abc.Stream, name: str, *, max_head: int = MAX_HEAD_SIZE
    ) -> None:
        self.stream = stream
        #: Who is at the other end, for error messages (an origin, ``host:port``).
        self.name = name
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=max_head)
        #: Bytes received since the current request was sent.
        self.received = 0

    async def send_request(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes = b""
    ) -> None:
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
