"""The default HTTP executor: HTTP/1.1 on trimcp's own codec over Trio streams, a keep-alive pool per origin.

Theory of operation
-------------------
See ``executor.py`` for the seam.  Idle connections wait in a per-origin
list (newest reused first, at most ``max_idle_per_origin`` kept, each for at
most ``keepalive_expiry`` seconds).  HTTP/1.1 carries one exchange at a time,
so N requests in flight hold N connections: the cap (64) keeps that many for
the next round instead of closing all but a few and connecting again.  A request takes an idle connection or
opens a new one (``tcp.connect_tcp``: TCP, then TLS with a lazily created
default ``ssl`` context for ``https``), writes the whole request in one
``send_all``, and reads until the response head; the body is then read through
the returned response.  The exchange runs on ``http1.client.H1ClientConnection``
(trimcp's own HTTP/1.1 codec, RFC 9112).  When that
response was read to its end and the codec says the connection can carry
another request, it goes back to the pool, otherwise it is closed.
An idle connection that became readable was closed by the server (or sent
garbage) and is dropped before use; a request on a reused connection that
fails before a single response byte arrived is retried once on a new one.
The readability test is a system call, so a connection idle for less than
``FRESH_IDLE`` seconds (the next request of a busy session) skips it: a server
that closed it that soon is caught by that retry.
"""

from __future__ import annotations

import functools
import select
import ssl
from collections.abc import Callable
from typing import Any

import trio

from ...._errors import ConnectError
from ...._sansio.http.client.plan import HttpRequest, Origin, ParsedUrl, parse_url
from ...http1.client import ConnectionLost, H1ClientConnection
from ...tcp import connect_tcp
from .executor import HttpResponse, noop

__all__ = ["PoolExecutor"]

#: An idle connection reused within this many seconds is not polled for EOF first.
FRESH_IDLE = 1.0


@functools.lru_cache(maxsize=64)
def _parse(url: str) -> ParsedUrl:
    return parse_url(url)


@functools.lru_cache(maxsize=64)
def _host_header(origin: Origin) -> str:
    return str(origin).split("://", 1)[1]


class _PooledConnection:
    """A pooled connection: the exchange itself is ``H1ClientConnection``'s."""

    def __init__(self, wire: H1ClientConnection, origin: Origin, sock: Any) -> None:
        self.wire = wire
        self.origin = origin
        self.sock = sock
        self.idle_since = 0.0
        self.requests = 0

    def looks_dead(self) -> bool:
        """An idle keep-alive connection that became readable was closed by the server."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    async def close(self) -> None:
        await self.wire.aclose()


class _PooledResponse:
    def __init__(self, pool: PoolExecutor, conn: _PooledConnection, head: Any) -> None:
        self._pool = pool
        self._conn: _PooledConnection | None = conn
        self.status: int = head.status_code
        # The codec's names are already lowercased.
        self.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in head.headers]
        self._done = False

    async def read(self) -> bytes:
        conn = self._conn
        if conn is None or self._done:
            return b""
        data = await conn.wire.read_some()
        if not data:
            self._done = True
        return data

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._done and conn.wire.next_cycle():
            await self._pool._release(conn)
        else:
            await conn.close()


class PoolExecutor:
    """HTTP/1.1 (trimcp's codec) over Trio streams with a keep-alive pool per origin (see the module docstring)."""

    def __init__(
        self,
        *,
        connect_timeout: float = 10.0,
        max_idle_per_origin: int = 64,
        keepalive_expiry: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.connect_timeout = connect_timeout
        self.max_idle_per_origin = max_idle_per_origin
        self.keepalive_expiry = keepalive_expiry
        self._ssl_context = ssl_context
        self._idle: dict[Origin, list[_PooledConnection]] = {}
        self._closed = False
        #: How many TCP connections this executor opened (for tests and benchmarks).
        self.connections_opened = 0

    def _ssl(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    async def _connect(self, origin: Origin, url: str) -> _PooledConnection:
        """A new connection to ``origin``; a failure names ``url``, the URL the caller gave."""
        context = self._ssl() if origin.scheme == "https" else None
        try:
            with trio.fail_after(self.connect_timeout):
                stream, sock = await connect_tcp(origin.host, origin.port, ssl_context=context, name=url)
        except trio.TooSlowError:
            raise ConnectError(f"connecting to {url} timed out after {self.connect_timeout} s") from None
        self.connections_opened += 1
        return _PooledConnection(H1ClientConnection(stream, str(origin)), origin, sock)

    async def _take_idle(self, origin: Origin) -> _PooledConnection | None:
        idle = self._idle.get(origin)
        now = trio.current_time()
        while idle:
            conn = idle.pop()
            idle_for = now - conn.idle_since
            if idle_for <= FRESH_IDLE or (idle_for <= self.keepalive_expiry and not conn.looks_dead()):
                return conn
            await conn.close()
        return None

    async def _release(self, conn: _PooledConnection) -> None:
        idle = self._idle.setdefault(conn.origin, [])
        if self._closed or len(idle) >= self.max_idle_per_origin:
            await conn.close()
            return
        conn.idle_since = trio.current_time()
        idle.append(conn)

    async def open(self, request: HttpRequest, *, sent: Callable[[], None] | None = None) -> HttpResponse:
        if self._closed:
            raise ConnectError("the HTTP executor is closed")
        parsed = _parse(request.url)
        origin = parsed.origin
        headers = [("Host", _host_header(origin)), *request.headers]
        for attempt in range(2):
            conn = await self._take_idle(origin) if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = await self._connect(origin, request.url)
            try:
                return await self._exchange(conn, request, parsed.target, headers, sent or noop)
            except ConnectionLost as exc:
                await conn.close()
                if reused and exc.before_response:
                    continue  # the server had closed this idle connection: try a fresh one
                raise
            except BaseException:
                await conn.close()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _exchange(
        self,
        conn: _PooledConnection,
        request: HttpRequest,
        target: str,
        headers: list[tuple[str, str]],
        sent: Callable[[], None],
    ) -> HttpResponse:
        conn.requests += 1
        await conn.wire.send_request(request.method, target, headers, request.body)
        sent()
        return _PooledResponse(self, conn, await conn.wire.read_head())

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                await conn.close()
