"""Real replicas for the replica tests: ``trimcp serve`` processes behind a round-robin TCP proxy.

``RoundRobinProxy`` listens on 127.0.0.1 and hands each TCP connection it accepts to the next
backend in turn, as a load balancer without sticky sessions does; a backend that refuses the
connection (a replica that died) is skipped, as a load balancer's health check would.  Every
request the tests send goes on a connection of its own (``Connection: close`` semantics via
``exchange``), so consecutive requests reach different replicas.

``replica_set`` starts ``trimcp serve --http 127.0.0.1:0 --store URL`` N times (each prints
its URL on stderr), puts the proxy in front and kills every process (SIGKILL) at the end;
``ReplicaSet.kill(i)`` kills one with SIGKILL mid-test.  ``exchange`` sends one request on a
connection of its own (h11, ``Connection: close``) and reads the answer as it comes - SSE events
(id, parsed data) or the whole body.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import h11
import httpx
import trio
from repo_paths import REPO

_URL = re.compile(rb"http://127\.0\.0\.1:(\d+)/mcp")


class RoundRobinProxy:
    """Forwards each accepted connection to the next live backend (see the module docstring)."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = list(ports)
        self._next = 0
        #: The backend port each accepted connection went to, in order.
        self.routed: list[int] = []

    def avoid(self, port: int) -> None:
        """Let the next connection go anywhere but ``port`` (the rotation moves on past it)."""
        if self.ports and self.ports[self._next % len(self.ports)] == port:
            self._next += 1

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = int(listeners[0].socket.getsockname()[1])
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, self._handle, listeners)
            task_status.started(port)

    async def _connect(self) -> tuple[int, trio.SocketStream] | None:
        for _ in range(len(self.ports)):
            port = self.ports[self._next % len(self.ports)]
            self._next += 1
            try:
                return port, await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                continue  # a dead replica: the next one
        return None

    async def _handle(self, client: trio.SocketStream) -> None:
        found = await self._connect()
        if found is None:
            await client.aclose()
            return
        port, upstream = found
        self.routed.append(port)

        async def pump(src: trio.SocketStream, dst: trio.SocketStream, scope: trio.CancelScope) -> None:
            try:
                async for data in src:
                    await dst.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            scope.cancel()  # one side ended: the connection is over

        async with client, upstream, trio.open_nursery() as nursery:
            nursery.start_soon(pump, client, upstream, nursery.cancel_scope)
            nursery.start_soon(pump, upstream, client, nursery.cancel_scope)


@attrs.define
class ReplicaSet:
    procs: list[trio.Process]
    ports: list[int]
    proxy: RoundRobinProxy
    url: str

    def port_of(self, index: int) -> int:
        return self.ports[index]

    def index_of(self, port: int) -> int:
        return self.ports.index(port)

    def kill(self, index: int) -> None:
        """SIGKILL replica ``index`` (no clean-up of any kind)."""
        proc = self.procs[index]
        if proc.returncode is None:
            os.kill(proc.pid, signal.SIGKILL)

    async def wait_dead(self, index: int) -> None:
        await self.procs[index].wait()


async def _start_replica(store: str, extra: list[str]) -> tuple[trio.Process, int]:
    command = [sys.executable, "-m", "trimcp.cli", "serve", "--http", "127.0.0.1:0", "--store", store, *extra]
    proc = await trio.lowlevel.open_process(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=str(REPO),
    )
    assert proc.stderr is not None
    seen = b""
    with trio.fail_after(30):
        while True:
            chunk = await proc.stderr.receive_some(4096)
            if not chunk:
                raise RuntimeError(f"replica exited before listening: {seen.decode(errors='replace')[-500:]}")
            seen += chunk
            found = _URL.search(seen)
            if found:
                return proc, int(found.group(1))


async def _drain(proc: trio.Process) -> None:
    # Keep reading its stderr (logs) so that the pipe never fills and blocks the replica.
    assert proc.stderr is not None
    try:
        async for _ in proc.stderr:
            pass
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        pass


@asynccontextmanager
async def replica_set(store: str, count: int = 3, extra: list[str] | None = None) -> AsyncIterator[ReplicaSet]:
    """``count`` ``trimcp serve`` replicas sharing ``store``, behind a round-robin proxy."""
    procs: list[trio.Process] = []
    try:
        async with trio.open_nursery() as nursery:
            proxy = RoundRobinProxy([])
            proxy_port = await nursery.start(proxy.serve)
            # The replicas answer the name clients reach them by: the proxy's.
            options = ["--allowed-host", f"127.0.0.1:{proxy_port}", *(extra or [])]
            for _ in range(count):
                proc, port = await _start_replica(store, options)
                procs.append(proc)
                proxy.ports.append(port)
                nursery.start_soon(_drain, proc)
            yield ReplicaSet(procs, proxy.ports, proxy, f"http://127.0.0.1:{proxy_port}/mcp")
            nursery.cancel_scope.cancel()
    finally:
        for proc in procs:
            if proc.returncode is None:
                os.kill(proc.pid, signal.SIGKILL)
        with trio.CancelScope(shield=True), trio.move_on_after(10):
            for proc in procs:
                await proc.wait()


# ---------------------------------------------------------------- talking to them


@attrs.define
class Event:
    id: str | None
    data: Any


class Response:
    """One HTTP/1.1 exchange on a connection of its own (h11), its body read as it comes."""

    def __init__(self, stream: trio.SocketStream, conn: h11.Connection, head: h11.Response) -> None:
        self._stream = stream
        self._conn = conn
        self.status_code = head.status_code
        self.headers = {k.decode().lower(): v.decode() for k, v in head.headers}
        self._buffer = ""
        self._ended = False
        #: The id of the last SSE event seen, priming events included (what ``Last-Event-ID`` says).
        self.last_id: str | None = None

    async def _more(self) -> bool:
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    data = await self._stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    self._ended = True  # cut short (the replica died): what came is kept
                    return False
                self._conn.receive_data(data)
                continue
            if isinstance(event, h11.Data):
                self._buffer += bytes(event.data).decode()
                return True
            if isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                self._ended = True
                return False

    async def text(self) -> str:
        while not self._ended and await self._more():
            pass
        return self._buffer

    async def json(self) -> Any:
        return json.loads(await self.text())

    async def next_event(self) -> Event | None:
        """The next SSE event with data (a priming event has none: skipped); ``None`` at the end."""
        event_id: str | None = None
        data: list[str] = []
        while True:
            line, sep, rest = self._buffer.partition("\n")
            if not sep:
                if self._ended or not await self._more():
                    return None
                continue
            self._buffer = rest
            if line == "":
                if data:
                    return Event(event_id, json.loads("\n".join(data)))
                event_id, data = None, []
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "id":
                event_id = self.last_id = value
            elif field == "data" and value:
                data.append(value)


@asynccontextmanager
async def exchange(url: str, method: str, headers: dict[str, str], body: Any = None) -> AsyncIterator[Response]:
    """Send one request on a new connection; the response, for the block (then it is closed)."""
    parts = httpx.URL(url)
    stream = await trio.open_tcp_stream(parts.host, parts.port or 80)
    try:
        conn = h11.Connection(h11.CLIENT)
        data = json.dumps(body).encode() if body is not None else b""
        fields = [("host", f"{parts.host}:{parts.port}"), ("connection", "close"), *headers.items()]
        if body is not None:
            fields.append(("content-length", str(len(data))))
        out = conn.send(h11.Request(method=method, target=parts.raw_path, headers=fields)) or b""
        out += (conn.send(h11.Data(data=data)) or b"") if data else b""
        out += conn.send(h11.EndOfMessage()) or b""
        await stream.send_all(out)
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    raise ConnectionError("the server closed the connection before answering")
                conn.receive_data(chunk)
                continue
            if isinstance(event, h11.Response):
                yield Response(stream, conn, event)
                return
            if isinstance(event, h11.InformationalResponse):
                continue
            raise ConnectionError(f"unexpected {event!r}")
    finally:
        await stream.aclose()


async def _serve_proxy(listen: int, ports: list[int]) -> None:
    proxy = RoundRobinProxy(ports)
    listeners = await trio.open_tcp_listeners(listen, host="127.0.0.1")
    print(f"PORT {listeners[0].socket.getsockname()[1]}", flush=True)
    await trio.serve_listeners(proxy._handle, listeners)


if __name__ == "__main__":
    # python tests/helpers/replica_set.py LISTEN_PORT BACKEND_PORT... : the proxy alone, in a
    # process of its own (benchmarks/bench_store.py), on 127.0.0.1, until killed.
    try:
        trio.run(_serve_proxy, int(sys.argv[1]), [int(p) for p in sys.argv[2:]])
    except KeyboardInterrupt:
        pass
