"""The alternative HTTP executor: a caller's ``httpx.AsyncClient``.

Theory of operation
-------------------
See ``executor.py`` for the seam.  The caller's client brings its proxies,
certificates, auth and transports; only the read timeout is overridden per
request (the MCP driver keeps its own deadlines, and an event stream may be
quiet for minutes).  The request body is handed over as a one-chunk async
iterator with an explicit ``Content-Length``, so that ``sent`` fires when
httpx has consumed it.  httpx's exceptions are mapped here, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import trio

from ...._errors import ConnectError
from ...._sansio.http.client.plan import HttpRequest
from ...http1.client import ConnectionLost
from .executor import HttpResponse, noop

__all__ = ["HttpxExecutor"]


class _HttpxResponse:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        self.headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in response.headers.raw]
        self._chunks = response.aiter_bytes()

    async def read(self) -> bytes:
        try:
            return await self._chunks.__anext__()
        except StopAsyncIteration:
            return b""
        except (httpx.TransportError, httpx.StreamError, httpx.DecodingError) as exc:
            raise ConnectionLost(f"reading the response failed: {type(exc).__name__}: {exc}") from None

    async def aclose(self) -> None:
        try:
            await self._response.aclose()
        except (httpx.HTTPError, httpx.StreamError, OSError):
            return  # closing an already broken response must not mask the real error


class HttpxExecutor:
    """Runs requests through a caller's ``httpx.AsyncClient`` (which the caller closes)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def open(self, request: HttpRequest, *, sent: Callable[[], None] | None = None) -> HttpResponse:
        notify = sent or noop
        body = request.body

        async def content() -> Any:
            yield body
            notify()

        base = self.client.timeout
        timeout = httpx.Timeout(connect=base.connect, read=None, write=base.write, pool=base.pool)
        req = self.client.build_request(
            request.method,
            request.url,
            headers=list(request.headers),
            content=content() if body else None,
            timeout=timeout,
        )
        if not body:
            notify()
        try:
            response = await self.client.send(req, stream=True, follow_redirects=False)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise ConnectError(f"cannot connect to {request.url}: {type(exc).__name__}: {exc}") from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise ConnectionLost(f"{request.method} {request.url} failed: {type(exc).__name__}: {exc}") from None
        return _HttpxResponse(response)

    async def aclose(self) -> None:
        """The client belongs to the caller: leave it open."""
        await trio.lowlevel.checkpoint()
