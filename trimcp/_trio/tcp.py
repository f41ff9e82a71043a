"""TCP under trimcp's HTTP/1.1 layers: the client's opener, and a stream that yields only when it has to.

Theory of operation
-------------------
``connect_tcp(host, port, ssl_context=...)`` is how trimcp's HTTP clients
reach a server (the keep-alive pool, ``transports/http/pool.py``, and the
conformance harness's raw probes): TCP, then TLS when given a context (SNI and
certificate checks for ``host``; ``https_compatible``, so a peer that closes
without ``close_notify`` is an end of stream, as HTTPS servers commonly do).
It returns the stream with its socket (the pool polls an idle socket for EOF)
and raises ``ConnectError``: nothing was sent.  Plain TCP comes back as a
``FastTcpStream``, as do the connections the HTTP server accepts:

``trio.SocketStream`` makes every ``send_all`` and ``receive_some`` a full
checkpoint: even when the kernel takes or hands over the bytes at once, the
task goes back through the run loop (one more task step and one more
``epoll_wait`` each).  An HTTP/1.1 request/response exchange of the MCP client
makes two such calls that rarely need to wait for the socket, so those passes
were a large share of its CPU per call (``benchmarks/bench_http.py``).

``FastTcpStream`` owns the connected socket (taken from the ``SocketStream``
that ``trio.open_tcp_stream`` opened, so address resolution and happy eyeballs
stay trio's) and calls ``send``/``recv`` on it directly, waiting with
``trio.lowlevel.wait_writable``/``wait_readable`` only when the kernel says it
would block.  Trio's two promises are kept: every call raises ``Cancelled`` at
its start if the caller is cancelled (``checkpoint_if_cancelled``), and a task
whose socket never blocks still yields every ``FAIR_STREAK`` calls, so a fast
peer cannot starve the other tasks.  Failures map as trio's do: a reset or
broken pipe is ``BrokenResourceError``, use after ``aclose`` is
``ClosedResourceError``; ``aclose`` wakes any task waiting on the socket.
Only plain TCP takes this path; TLS stays on ``trio.SSLStream``.  The stdio
pipe reader shares the fairness count (``ReadyStreak``).
"""

from __future__ import annotations

import os
import socket
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, Final

import trio

from .._errors import ConnectError

__all__ = ["FAIR_STREAK", "FastTcpStream", "ReadyStreak", "connect_tcp", "fast_stream"]

#: Calls that did not wait for the socket after which one yields anyway.
FAIR_STREAK: Final = 8
_DEFAULT_READ: Final = 64 * 1024


class ReadyStreak:
    """Operations in a row that found the fd ready: one yield every ``FAIR_STREAK`` of them
    (the stdio line reader shares it)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def waited(self) -> None:
        """The operation had to wait for the fd (and so yielded)."""
        self.count = 0

    async def ready(self) -> None:
        """The operation did not wait: yield if the streak is long enough."""
        self.count += 1
        if self.count >= FAIR_STREAK:
            self.count = 0
            await trio.lowlevel.cancel_shielded_checkpoint()


async def connect_tcp(
    host: str, port: int, *, ssl_context: ssl.SSLContext | None = None, name: str | None = None
) -> tuple[trio.abc.Stream, Any]:
    """A TCP (TLS with ``ssl_context``) stream to ``host:port`` and its socket.

    Raises ``ConnectError`` naming ``name`` (default ``host:port``)."""
    name = name or f"{host}:{port}"
    try:
        tcp = await trio.open_tcp_stream(host, port)
    except OSError as exc:
        raise ConnectError(f"cannot connect to {name}: {connect_failure(exc)}") from None
    if ssl_context is None:
        fast = fast_stream(tcp)
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


def connect_failure(exc: BaseException) -> str:
    """Why a TCP connect failed, in the system's words, without what the caller already says.

    ``trio.open_tcp_stream`` raises "all attempts to connect to HOST:PORT failed" from a
    group of each address's ``OSError``: the host and port are the caller's to name (it
    names the server), so the reason is their errors ("Connection refused"), each once."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [exc.__cause__] if isinstance(exc.__cause__, BaseExceptionGroup) else []
    while pending:
        group = pending.pop()
        for inner in group.exceptions:  # type: ignore[attr-defined]
            (pending if isinstance(inner, BaseExceptionGroup) else leaves).append(inner)
    reasons: list[str] = []
    for leaf in leaves or [exc]:
        # trio's "Error connecting to ('127.0.0.1', 1): Connection refused" names the
        # address again: the errno's own words are the reason.
        if isinstance(leaf, OSError) and not isinstance(leaf, socket.gaierror) and leaf.errno and leaf.errno > 0:
            text = os.strerror(leaf.errno)
        else:
            text = (leaf.strerror if isinstance(leaf, OSError) else None) or str(leaf)
        if text and text not in reasons:
            reasons.append(text)
    return "; ".join(reasons) or type(exc).__name__


def fast_stream(tcp: trio.SocketStream) -> FastTcpStream:
    """Take over the socket of a connected ``trio.SocketStream`` (which is left closed)."""
    fd = tcp.socket.detach()
    return FastTcpStream(socket.socket(fileno=fd))


class FastTcpStream(trio.abc.HalfCloseableStream):
    """A connected TCP socket as a Trio stream (see the module docstring)."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.socket = sock
        self._streak = ReadyStreak()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the stream is closed")

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self._check_open()
        await trio.lowlevel.checkpoint_if_cancelled()
        view = memoryview(data)
        while view:
            try:
                sent = self.socket.send(view)
            except BlockingIOError:
                self._streak.waited()
                await self._wait(trio.lowlevel.wait_writable)
                continue
            except OSError as exc:
                raise self._broken(exc) from exc
            view = view[sent:]
        await self._streak.ready()

    async def wait_send_all_might_not_block(self) -> None:
        self._check_open()
        await self._wait(trio.lowlevel.wait_writable)

    async def send_eof(self) -> None:
        self._check_open()
        await trio.lowlevel.checkpoint()
        try:
            self.socket.shutdown(socket.SHUT_WR)
        except OSError as exc:
            raise self._broken(exc) from exc

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        self._check_open()
        await trio.lowlevel.checkpoint_if_cancelled()
        size = _DEFAULT_READ if max_bytes is None else max_bytes
        while True:
            try:
                data = self.socket.recv(size)
            except BlockingIOError:
                self._streak.waited()
                await self._wait(trio.lowlevel.wait_readable)
                continue
            except OSError as exc:
                raise self._broken(exc) from exc
            await self._streak.ready()
            return data

    async def _wait(self, wait: Callable[[socket.socket], Awaitable[None]]) -> None:
        try:
            await wait(self.socket)
        except trio.ClosedResourceError:
            raise trio.ClosedResourceError("the stream was closed while waiting") from None

    def _broken(self, exc: OSError) -> BaseException:
        if self._closed:
            return trio.ClosedResourceError("the stream is closed")
        return trio.BrokenResourceError(f"socket error: {exc}")

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            trio.lowlevel.notify_closing(self.socket)
            self.socket.close()
        await trio.lowlevel.checkpoint()
