"""Opening an HTTP client transport: ``open_http_stream``.

Picks the executor (a keep-alive pool on trimcp's HTTP/1.1 codec by default, or a caller's
``httpx.AsyncClient``), builds the sans-IO planner, and runs an
``HttpClientStream`` (``client.py``) with its background tasks for as long as
the ``async with`` block lasts.  Those tasks run in a nursery of their own,
so that closing the stream cancels them and never the caller's code.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from ...._errors import ConnectError
from ...._sansio import jsonrpc as rpc
from ...._sansio.http.client.plan import HttpPlanner
from ...._sansio.http.client.policy import ReconnectPolicy
from ..._groups import collapse
from .client import HttpClientStream
from .executor import Executor
from .headers_helper import HeadersHelper

if TYPE_CHECKING:
    import httpx

    from ...oauth.provider import OAuthProvider

__all__ = ["open_http_stream"]


@asynccontextmanager
async def open_http_stream(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    headers_helper: HeadersHelper | None = None,
    http_client: httpx.AsyncClient | None = None,
    executor: Executor | None = None,
    post_timeout: float | None = 60.0,
    connect_timeout: float = 10.0,
    max_message_size: int = rpc.DEFAULT_MAX_MESSAGE_SIZE,
    legacy_fallback: bool = True,
    legacy_only: bool = False,
    standalone_stream: bool = True,
    reconnect: ReconnectPolicy | None = None,
    auth: OAuthProvider | None = None,
) -> AsyncIterator[HttpClientStream]:
    """A ``MessageStream`` to the MCP server at ``url`` (``http://`` or ``https://``).

    ``headers`` go on every request; ``headers_helper`` (a callable, or a
    command printing JSON or ``Name: value`` lines) adds headers computed when
    the stream opens and refreshed for each new session and after a 401.
    ``http_client`` runs the requests through a caller's ``httpx.AsyncClient``
    (which the caller closes); by default a keep-alive pool runs them (``pool.py``)
    (``connect_timeout`` bounds each TCP/TLS connect).  ``post_timeout`` bounds
    each POST exchange (``None``: no bound); ``legacy_fallback`` enables the
    2024-11-05 fallback; ``legacy_only`` speaks 2024-11-05 HTTP+SSE alone: the
    GET to ``url`` must announce the POST endpoint within ``connect_timeout``
    before the stream is yielded (else ``ConnectError``), and no Streamable
    HTTP request is ever sent.  ``standalone_stream`` the handshake-era GET stream.
    ``auth`` (an ``OAuthProvider``) authorizes with OAuth 2.1 on a 401, steps
    up the scope on a 403 ``insufficient_scope`` and refreshes tokens.
    """
    if auth is not None:
        auth.bind(url)
    planner = HttpPlanner(url, headers=list((headers or {}).items()))
    if executor is None:
        executor = default_executor(http_client, connect_timeout)
    with collapse():
        async with trio.open_nursery() as outer:
            tasks: trio.Nursery = await outer.start(_task_nursery)
            stream = HttpClientStream(
                planner,
                executor,
                tasks,
                post_timeout=post_timeout,
                max_message_size=max_message_size,
                legacy_fallback=legacy_fallback,
                standalone_stream=standalone_stream,
                reconnect=reconnect or ReconnectPolicy(),
                headers_helper=headers_helper,
                auth=auth,
            )
            try:
                await stream.refresh_headers()
                if legacy_only:
                    await _open_legacy(stream, url, connect_timeout)
                yield stream
            finally:
                await stream.aclose()


def default_executor(http_client: httpx.AsyncClient | None, connect_timeout: float) -> Executor:
    """The caller's ``httpx.AsyncClient`` as an executor, else the keep-alive pool (``pool.py``)."""
    if http_client is not None:
        from .httpx_executor import HttpxExecutor

        return HttpxExecutor(http_client)
    from .pool import PoolExecutor

    return PoolExecutor(connect_timeout=connect_timeout)


async def _open_legacy(stream: HttpClientStream, url: str, timeout: float) -> None:
    """Switch ``stream`` to 2024-11-05 HTTP+SSE before its first message, or fail the connect.

    The fallback a Streamable refusal would trigger, taken up front: the planner is in
    legacy mode before anything is posted, so the first POST goes to the announced endpoint.
    """
    with trio.move_on_after(timeout):
        if await stream.keeper.fall_back():
            return
    # The keeper logged why the GET failed (refused, ended, no endpoint event in time).
    last = stream.issues[-1] if stream.issues else ""
    if "2024-11-05" not in last:
        last = f"no 2024-11-05 HTTP+SSE transport at {url}: no endpoint event within {timeout} s"
    raise ConnectError(last)


async def _task_nursery(*, task_status: trio.TaskStatus[trio.Nursery] = trio.TASK_STATUS_IGNORED) -> None:
    """A nursery for the transport's tasks, alive until its cancel scope is cancelled."""
    async with trio.open_nursery() as nursery:
        task_status.started(nursery)
        await trio.sleep_forever()
