"""How HTTP requests are carried out for the MCP client: the executor seam.

Theory of operation
-------------------
The Streamable HTTP driver (``client.py``) decides *what* to send with the
sans-IO planner and hands each ``HttpRequest`` to an *executor*, which only
moves bytes.  Two executors sit behind the same ``Executor`` protocol and pass
the same tests:

* ``PoolExecutor`` (``pool.py``, the default) speaks HTTP/1.1 over Trio streams with trimcp's own
  codec (``_trio/http1/client.py`` over ``_sansio/http/client/h1.py``).
  It keeps a small pool of idle keep-alive connections per origin, so a
  session's sequential requests reuse one TCP connection instead of opening
  one per request; a response that is still being read (a long SSE stream)
  holds its own connection, so every concurrent stream gets its own.  TLS is
  set up only for ``https`` origins, with an ``ssl`` context created on first
  use.  A connection taken from the pool may have been closed by the server
  meanwhile: an idle connection that has become readable (EOF) is discarded
  before use, and a request on a reused connection that fails before any
  response byte arrived is retried once on a fresh connection.
* ``HttpxExecutor`` (``httpx_executor.py``) wraps a caller's ``httpx.AsyncClient`` (its proxies,
  certificates, auth and transports), overriding only the read timeout, since
  the MCP driver sets its own deadlines and an event stream may be quiet for
  minutes.

Both map failures at this one boundary: ``ConnectError`` when the server could
not be reached (nothing was sent), ``ConnectionLost`` when a connection failed
after the request went out.  ``open`` returns once the response head arrived;
the caller reads the body with ``read`` (``b""`` at its end) and must
``aclose`` the response, which returns a fully read connection to the pool
and closes one abandoned mid-body (this is how an event stream is closed).
``sent`` is called once the request has been handed to the network; the
driver uses it to keep messages in order without waiting for answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ...._sansio.http.client.plan import HttpRequest
from ...http1.client import ConnectionLost  # the error every executor raises; defined with the connection

__all__ = ["ConnectionLost", "Executor", "HttpResponse", "noop"]


class HttpResponse(Protocol):
    status: int
    #: Header names lowercased, values decoded as Latin-1.
    headers: list[tuple[str, str]]

    async def read(self) -> bytes:
        """The next piece of the body, ``b""`` at its end; raises ``ConnectionLost``."""
        ...

    async def aclose(self) -> None:
        """Release the connection (pooled when the body was read to its end); idempotent."""
        ...


class Executor(Protocol):
    async def open(self, request: HttpRequest, *, sent: Callable[[], None] | None = None) -> HttpResponse:
        """Send ``request`` and return once the response head arrived."""
        ...

    async def aclose(self) -> None: ...


def noop() -> None:
    """The default ``sent`` callback."""
