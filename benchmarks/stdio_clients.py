"""The clients ``bench_stdio.py`` compares, each behind the same small session interface.

Each client is an async context manager ``connect(argv, env)`` yielding an object with
``async call(name, arguments) -> str`` (the first text content): the raw Trio floor (inline
or with a reader task), ``trimcp.open_client`` and the official ``mcp`` SDK client.
Libraries are imported inside the connectors, so a worker loads only the one it measures.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any


class FloorSession:
    """The raw floor: JSON lines by hand over trio.lowlevel.open_process pipes."""

    def __init__(self, process: Any, mux: bool) -> None:
        import trio

        self._trio = trio
        self.process = process
        self.mux = mux
        self._buf = bytearray()
        self._scan = 0
        self._lines: deque[bytes] = deque()
        self._next_id = 0
        self._waiting: dict[int, Any] = {}  # mux: id -> [event, message]
        self._send_lock = trio.Lock()
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    async def _send(self, obj: dict[str, Any]) -> None:
        data = self._dumps(obj).encode() + b"\n"
        if self.mux:
            async with self._send_lock:  # FdStream.send_all is single-writer
                await self.process.stdin.send_all(data)
        else:
            await self.process.stdin.send_all(data)

    async def _read_line(self) -> bytes:
        while not self._lines:
            data = await self.process.stdout.receive_some(65536)
            if not data:
                raise EOFError("server closed stdout")
            buf = self._buf
            buf += data
            pos = buf.find(b"\n", self._scan)
            start = 0
            while pos != -1:
                if pos > start:
                    self._lines.append(bytes(buf[start:pos]))
                start = pos + 1
                pos = buf.find(b"\n", start)
            if start:
                del buf[:start]
            self._scan = len(buf)
        return self._lines.popleft()

    async def reader(self) -> None:
        """mux mode: the one task that reads; wakes the waiting request."""
        try:
            while True:
                msg = json.loads(await self._read_line())
                slot = self._waiting.pop(msg.get("id"), None)
                if slot is not None:
                    slot[1] = msg
                    slot[0].set()
        except EOFError:
            for slot in self._waiting.values():
                slot[0].set()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        req = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        if self.mux:
            slot = self._waiting[rid] = [self._trio.Event(), None]
            await self._send(req)
            await slot[0].wait()
            msg = slot[1]
            if msg is None:
                raise EOFError("server closed stdout")
        else:
            await self._send(req)
            while True:
                msg = json.loads(await self._read_line())
                if msg.get("id") == rid:
                    break
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.request("tools/call", {"name": name, "arguments": arguments})
        return result["content"][0]["text"]

    @asynccontextmanager
    async def muxed(self) -> AsyncIterator[None]:
        """Switch an inline session to reader-task mode for a while (concurrent calls)."""
        if self.mux:
            yield
            return
        async with self._trio.open_nursery() as nursery:
            self.mux = True
            nursery.start_soon(self.reader)
            try:
                yield
            finally:
                self.mux = False
                nursery.cancel_scope.cancel()


@asynccontextmanager
async def floor_connect(argv: list[str], env: dict[str, str], mux: bool) -> AsyncIterator[FloorSession]:
    import trio

    process = await trio.lowlevel.open_process(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        async with trio.open_nursery() as nursery:
            session = FloorSession(process, mux)
            if mux:
                nursery.start_soon(session.reader)
            await session.request(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "floor", "version": "0"},
                },
            )
            await session._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            try:
                yield session
            finally:
                await process.stdin.aclose()  # EOF: the server exits
                with trio.move_on_after(5):
                    await process.wait()
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.wait()
            await process.stdout.aclose()


class _TrimcpSession:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.client.call_tool(name, arguments)
        return result.content[0].text


@asynccontextmanager
async def trimcp_connect(argv: list[str], env: dict[str, str]) -> AsyncIterator[_TrimcpSession]:
    import trimcp

    async with trimcp.open_client(argv, stdio=trimcp.StdioOptions(env=env)) as client:
        yield _TrimcpSession(client)


class _McpSession:
    def __init__(self, session: Any) -> None:
        self.session = session

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.session.call_tool(name, arguments)
        if result.is_error:
            raise RuntimeError(f"tool error: {result.content}")
        return result.content[0].text


@asynccontextmanager
async def mcp_connect(argv: list[str], env: dict[str, str]) -> AsyncIterator[_McpSession]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 - /dev/null never blocks
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield _McpSession(session)


def connector(client: str) -> Callable[[list[str], dict[str, str]], Any]:
    if client == "floor":
        return lambda argv, env: floor_connect(argv, env, mux=False)
    if client == "floor-mux":
        return lambda argv, env: floor_connect(argv, env, mux=True)
    if client == "trimcp":
        return trimcp_connect
    return mcp_connect
