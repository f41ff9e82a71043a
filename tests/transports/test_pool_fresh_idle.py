"""The keep-alive pool reuses a connection released a moment ago without polling it, and still
survives a server that closed it meanwhile (``transports/http/pool.py``: ``FRESH_IDLE``)."""

from __future__ import annotations

from functools import partial

import pytest
import trio

from trimcp._sansio.http.client.plan import HttpRequest
from trimcp._trio.transports.http import pool as pool_module
from trimcp._trio.transports.http.pool import PoolExecutor

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}"


async def _one_answer_then_close(accepted: list[trio.Event], stream: trio.SocketStream) -> None:
    """Answer one request, then close the connection without saying so (no Connection: close)."""
    closed = trio.Event()
    accepted.append(closed)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return
        data += chunk
    await stream.send_all(ANSWER)
    await stream.aclose()
    closed.set()


async def _get(pool: PoolExecutor, url: str) -> int:
    response = await pool.open(HttpRequest("GET", url, (("Accept", "application/json"),)))
    while await response.read():
        pass
    await response.aclose()
    return response.status


async def test_a_fresh_idle_connection_closed_by_the_server_is_retried_on_a_new_one() -> None:
    accepted: list[trio.Event] = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                partial(trio.serve_tcp, partial(_one_answer_then_close, accepted), 0, host="127.0.0.1")
            )
            url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/mcp"
            pool = PoolExecutor()
            assert await _get(pool, url) == 200
            await accepted[0].wait()  # the server has closed the pooled connection
            assert await _get(pool, url) == 200  # taken without a poll: fails, then retried
            assert pool.connections_opened == 2 and len(accepted) == 2
            await pool.aclose()
            nursery.cancel_scope.cancel()


async def test_an_older_idle_connection_is_polled_and_dropped_before_use(monkeypatch: pytest.MonkeyPatch) -> None:
    accepted: list[trio.Event] = []
    polled: list[bool] = []
    original = pool_module._PooledConnection.looks_dead

    def spy(self: pool_module._PooledConnection) -> bool:
        polled.append(dead := original(self))
        return dead

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                partial(trio.serve_tcp, partial(_one_answer_then_close, accepted), 0, host="127.0.0.1")
            )
            url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/mcp"
            pool = PoolExecutor()
            monkeypatch.setattr(pool_module._PooledConnection, "looks_dead", spy)
            monkeypatch.setattr(pool_module, "FRESH_IDLE", -1.0)  # every idle connection counts as older
            assert await _get(pool, url) == 200
            await accepted[0].wait()
            assert await _get(pool, url) == 200
            assert polled == [True]  # seen dead: never written to
            assert pool.connections_opened == 2
            await pool.aclose()
            nursery.cancel_scope.cancel()
