"""The host pool against real peers: 50 stdio subprocesses and 50 HTTP servers on 127.0.0.1.

The stdio servers (tests/helpers/pool_server.py) log when they start and when they are
ready, on the machine's monotonic clock, so the limit of 3 stdio connects in flight is
measured from the servers' side, not taken from the pool's word.  The HTTP servers are
trimcp ``serve_http`` servers in this process, one port each.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio
from helpers.ports import free_port  # a port nothing listens on
from repo_paths import HELPERS

from trimcp.config import RemoteServerConfig, StdioServerConfig
from trimcp.host import ServerState, open_pool
from trimcp.server import Context, Server, serve_http

HELPER = HELPERS / "pool_server.py"
LIMIT = 120


def http_server(name: str) -> Server:
    server = Server(name, "1")

    @server.tool(annotations={"readOnlyHint": True})
    async def whoami(ctx: Context) -> str:
        return name

    return server


@asynccontextmanager
async def http_servers(count: int) -> AsyncIterator[list[str]]:
    async with trio.open_nursery() as nursery:
        urls = []
        for i in range(count):
            bound = await nursery.start(
                lambda task_status, i=i: serve_http(http_server(f"web{i}"), "127.0.0.1", 0, task_status=task_status)
            )
            urls.append(bound.url)
        yield urls
        nursery.cancel_scope.cancel()


def max_overlap(log: Path) -> int:
    """The most servers between their start and their first tools/list at one time."""
    edges = []
    for line in log.read_text().splitlines():
        _, what, at = line.split()
        edges.append((float(at), 1 if what == "start" else -1))
    edges.sort(key=lambda e: (e[0], e[1]))  # at equal times, an end before a start
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


async def test_fifty_stdio_and_fifty_http_servers(tmp_path: Path) -> None:
    log = tmp_path / "pool.log"
    env = {"POOL_LOG": str(log), "POOL_DELAY": "0.05"}
    entries: dict[str, StdioServerConfig | RemoteServerConfig] = {
        f"local{i}": StdioServerConfig(name=f"local{i}", command=sys.executable, args=(str(HELPER),), env=env)
        for i in range(50)
    }
    entries["crashes"] = StdioServerConfig(name="crashes", command=sys.executable, args=("-c", "raise SystemExit(3)"))
    entries["missing"] = StdioServerConfig(name="missing", command="/nonexistent/mcp-server")
    with trio.fail_after(LIMIT):
        async with http_servers(50) as urls:
            for i, url in enumerate(urls):
                entries[f"web{i}"] = RemoteServerConfig(name=f"web{i}", transport="http", url=url)
            entries["refused"] = RemoteServerConfig(
                name="refused", transport="http", url=f"http://127.0.0.1:{free_port()}/mcp"
            )
            async with open_pool(entries) as pool:
                statuses = await pool.connect_all()
                states = {n: st.state for n, st in statuses.items()}
                failed = {n for n, st in states.items() if st is ServerState.FAILED}
                assert failed == {"crashes", "missing", "refused"}, {n: statuses[n].reason for n in failed}
                assert "status 3" in (statuses["crashes"].reason or "")
                assert "not found" in (statuses["missing"].reason or "")
                assert sum(st is ServerState.CONNECTED for st in states.values()) == 100
                # Measured from the servers' own clocks: never more than 3 stdio connects at
                # once, and the limit was used.
                assert max_overlap(log) == 3
                assert (await pool.call_tool("web7", "whoami")).text == "web7"

                # A stdio server killed from outside is noticed by the pool (no call needed)
                # and started again on next use.
                pid = int((await pool.call_tool("local5", "pid")).text)
                os.kill(pid, signal.SIGKILL)
                with trio.fail_after(5):
                    while pool.status("local5")["local5"].state is not ServerState.FAILED:
                        await trio.sleep(0.01)
                new_pid = int((await pool.call_tool("local5", "pid")).text)
                assert new_pid != pid
                assert pool.status("local5")["local5"].connects == 2
                # The others were not touched.
                assert pool.status("local6")["local6"].connects == 1
