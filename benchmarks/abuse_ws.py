#!/usr/bin/env python3
"""Abuse ``trimcp serve --ws`` and check that every limit holds and a fresh client is served.

Theory of operation
-------------------
Each abuse starts its own ``python -m trimcp serve --ws 127.0.0.1:0`` with the one limit
it tests set tight (loopback only; the server prints its URL on stderr, read here), so
an abuse measures one limit and a server that does not know a flag fails only its row.
``--trimcp-path`` serves another checkout's ``trimcp`` (e.g. before a change).

  idle            ``--connections`` WebSocket connections (TCP + upgrade, bare
                  trio-websocket clients) sit idle, and one more calls the reference
                  server's ``slow`` tool (one silent step) for longer than
                  ``--idle-timeout``: when the timeout has passed (plus slack) every
                  idle one must have been closed by the server with 1001, and the busy
                  one must still be open and get its result.
  connections     ``--max-connections`` connections are opened, then ``--extra`` more:
                  the extra ones must be refused with 503 promptly, the first one keep
                  working, and once one closes a fresh client must be served (slot reused).
  slow handshake  a few TCP connections send half an upgrade request and nothing more:
                  each must be dropped when ``--header-timeout`` passes (not 10 s later).
  oversize        a message twice ``--max-message`` must close the connection with 1009.

After each, a fresh client (``trimcp.open_client`` + initialize + ``tools/call echo``)
must succeed; its latency is reported.  The pass/fail criteria are the limits, not the
timings.  The script exits 1 if a limit did not hold or a fresh client failed, and stops
by itself (``--smoke``: < 30 s; full: < 1 min).

Run:   python benchmarks/abuse_ws.py            (full)
       python benchmarks/abuse_ws.py --smoke    (CI)
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import trio
import trio_websocket

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _abuse import fresh_client, fresh_text, stop_group

from trimcp.cli.serve import parse_size

KiB = 1024
UPGRADE_START = b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"


@attrs.define
class Row:
    abuse: str
    limit: str
    happened: str = ""
    close_s: str = "-"
    fresh: str = "-"
    ok: bool = True


# ---------------------------------------------------------------- the server process


class ServerStartFailed(Exception):
    pass


class ServerProcess:
    """``trimcp serve --ws 127.0.0.1:0 FLAGS`` in its own process group."""

    def __init__(self, flags: list[str], trimcp_path: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(trimcp_path)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trimcp", "serve", "--ws", "127.0.0.1:0", *flags],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=trimcp_path,
            start_new_session=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stderr is not None
        stderr = self.proc.stderr

        def pump() -> None:
            for line in stderr:
                lines.put(line.decode())
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + 20
        self.url = ""
        said: list[str] = []
        while not self.url:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                self.stop()
                last = said[-1].strip() if said else "no URL within 20 s"
                raise ServerStartFailed(f"server did not start: {last}")
            said.append(line)
            if " at ws://" in line:
                self.url = line.rsplit(" at ", 1)[1].strip()
        self.port = int(self.url.split(":")[2].split("/")[0])

    def stop(self) -> None:
        stop_group(self.proc)


# ---------------------------------------------------------------- helpers


class Clients:
    """Bare trio-websocket clients sharing one nursery for their reader tasks."""

    def __init__(self, nursery: trio.Nursery, port: int) -> None:
        self.nursery = nursery
        self.port = port
        self.sockets: list[trio.SocketStream] = []

    async def open(self) -> trio_websocket.WebSocketConnection:
        tcp = await trio.open_tcp_stream("127.0.0.1", self.port)
        self.sockets.append(tcp)
        return await trio_websocket.wrap_client_stream(
            self.nursery, tcp, f"127.0.0.1:{self.port}", "/", subprotocols=["mcp"]
        )

    async def aclose(self) -> None:
        for tcp in self.sockets:
            await trio.aclose_forcefully(tcp)
        self.nursery.cancel_scope.cancel()


@asynccontextmanager
async def clients(port: int) -> AsyncIterator[Clients]:
    async with trio.open_nursery() as nursery:
        group = Clients(nursery, port)
        try:
            yield group
        finally:
            with trio.CancelScope(shield=True):
                await group.aclose()


async def ping(ws: trio_websocket.WebSocketConnection, rid: int = 1) -> bool:
    try:
        with trio.fail_after(5):
            await ws.send_message(f'{{"jsonrpc":"2.0","id":{rid},"method":"ping"}}')
            await ws.get_message()
    except (trio_websocket.ConnectionClosed, trio.TooSlowError):
        return False
    return True


async def upgrade_status(port: int) -> str:
    """The HTTP status a complete upgrade request gets (``reset`` if none)."""
    tcp = await trio.open_tcp_stream("127.0.0.1", port)
    try:
        await tcp.send_all(
            UPGRADE_START + b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"sec-websocket-version: 13\r\nsec-websocket-protocol: mcp\r\n\r\n"
        )
        data = b""
        with trio.move_on_after(5):
            while b"\r\n" not in data:
                part = await tcp.receive_some(4096)
                if not part:
                    break
                data += part
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return "reset"
    finally:
        await trio.aclose_forcefully(tcp)
    return data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1 ") else "reset"


# ---------------------------------------------------------------- the abuses


async def idle(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    row = Row(f"idle ({ns.connections} conns + 1 busy)", f"idle-timeout {ns.idle_timeout:g} s")
    busy_result: list[str] = []
    async with clients(srv.port) as group:
        conns = [await group.open() for _ in range(ns.connections)]
        opened = time.perf_counter()

        async def busy() -> None:
            ws = await group.open()
            call = (
                '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow",'
                f'"arguments":{{"seconds":{ns.idle_timeout + 1.5},"steps":1}}}}}}'
            )
            init = (
                '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                '"2025-11-25","capabilities":{},"clientInfo":{"name":"abuse","version":"1"}}}'
            )
            try:
                await ws.send_message(init)
                await ws.get_message()
                await ws.send_message('{"jsonrpc":"2.0","method":"notifications/initialized"}')
                await ws.send_message(call)
                answer = await ws.get_message()
                busy_result.append("answered" if '"id":7' in str(answer) else "other")
            except trio_websocket.ConnectionClosed as exc:
                busy_result.append(f"closed {exc.reason.code if exc.reason else '?'}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(busy)
            await trio.sleep(ns.idle_timeout + 2.0)
            still = sum(1 for ws in conns if ws.closed is None)
            codes = sorted({ws.closed.code for ws in conns if ws.closed is not None})
            waited = time.perf_counter() - opened
        fresh = await fresh_client(srv.url)
    row.happened = (
        f"{still} of {ns.connections} still open after {waited:.1f} s"
        + (f", closed with {'/'.join(map(str, codes))}" if codes else "")
        + f"; busy one: {busy_result[0] if busy_result else 'no answer'}"
    )
    row.close_s = f"{waited:.1f}"
    row.fresh = fresh_text(fresh)
    row.ok = still == 0 and codes == [1001] and busy_result == ["answered"] and fresh[0]
    return row


async def connections(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    row = Row(f"connections (cap + {ns.extra})", f"max-connections {ns.max_connections}")
    async with clients(srv.port) as group:
        conns = [await group.open() for _ in range(ns.max_connections)]
        began = time.perf_counter()
        statuses = [await upgrade_status(srv.port) for _ in range(ns.extra)]
        refuse_s = (time.perf_counter() - began) / max(1, ns.extra)
        first_ok = await ping(conns[0])
        await conns[-1].aclose()
        await trio.sleep(0.2)
        fresh = await fresh_client(srv.url)
    counts = {s: statuses.count(s) for s in sorted(set(statuses))}
    row.happened = (
        f"extra got {', '.join(f'{n}x {s}' for s, n in counts.items())}; first {'works' if first_ok else 'BROKEN'}"
    )
    row.close_s = f"{refuse_s:.3f}"
    row.fresh = fresh_text(fresh) + " (after one closed)"
    row.ok = counts == {"503": ns.extra} and first_ok and refuse_s < 1.0 and fresh[0]
    return row


async def slow_handshake(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    row = Row("slow handshake (5 half upgrades)", f"header-timeout {ns.header_timeout:g} s")
    times: list[float] = []
    answers: list[bytes] = []

    async def one() -> None:
        tcp = await trio.open_tcp_stream("127.0.0.1", srv.port)
        began = time.perf_counter()
        got = b""
        try:
            await tcp.send_all(UPGRADE_START)  # the head never ends
            with trio.move_on_after(ns.header_timeout + 12):
                while part := await tcp.receive_some(4096):
                    got += part
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        times.append(time.perf_counter() - began)
        answers.append(got)
        await trio.aclose_forcefully(tcp)

    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(one)
    fresh = await fresh_client(srv.url)
    worst = max(times)
    row.happened = f"dropped after {min(times):.2f}-{worst:.2f} s" + (" (with an answer)" if any(answers) else "")
    row.close_s = f"{worst:.2f}"
    row.fresh = fresh_text(fresh)
    row.ok = worst <= ns.header_timeout + 1.5 and fresh[0]
    return row


async def oversize(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    limit = parse_size(ns.max_message)
    row = Row(f"oversize ({2 * limit // KiB} KiB message)", f"max-message {ns.max_message}")
    async with clients(srv.port) as group:
        ws = await group.open()
        began = time.perf_counter()
        pad = "x" * (2 * limit)
        code = "open"
        try:
            with trio.fail_after(5):
                await ws.send_message(f'{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"p":"{pad}"}}}}')
                await ws.get_message()
        except trio_websocket.ConnectionClosed as exc:
            code = str(exc.reason.code) if exc.reason else "?"
        except trio.TooSlowError:
            code = "no answer"
        took = time.perf_counter() - began
        fresh = await fresh_client(srv.url)
    row.happened = f"closed with {code}" if code.isdigit() else code
    row.close_s = f"{took:.3f}"
    row.fresh = fresh_text(fresh)
    row.ok = code == "1009" and fresh[0]
    return row


def flags_of(abuse: str, ns: argparse.Namespace) -> list[str]:
    return {
        "idle": ["--idle-timeout", str(ns.idle_timeout)],
        "connections": ["--max-connections", str(ns.max_connections)],
        "slow_handshake": ["--header-timeout", str(ns.header_timeout)],
        "oversize": ["--max-message", ns.max_message],
    }[abuse]


ABUSES: tuple[Callable[[ServerProcess, argparse.Namespace], Awaitable[Row]], ...] = (
    idle,
    connections,
    slow_handshake,
    oversize,
)


# ---------------------------------------------------------------- the run


def print_table(rows: list[Row]) -> None:
    head = ("abuse", "limit", "what happened", "close/refuse s", "fresh client", "")
    table = [head] + [(r.abuse, r.limit, r.happened, r.close_s, r.fresh, "ok" if r.ok else "FAIL") for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    for n, line in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def run_one(abuse: Callable[[ServerProcess, argparse.Namespace], Awaitable[Row]], ns: argparse.Namespace) -> Row:
    name = abuse.__name__
    try:
        srv = ServerProcess(flags_of(name, ns), ns.trimcp_path)
    except ServerStartFailed as exc:
        return Row(name, " ".join(flags_of(name, ns)), str(exc), ok=False)
    try:

        async def bounded() -> Row | None:
            with trio.move_on_after(ns.per_abuse):
                return await abuse(srv, ns)
            return None

        row = trio.run(bounded)
        if row is None:
            row = Row(name, "-", f"did not finish within {ns.per_abuse:g} s", ok=False)
    finally:
        alive = srv.proc.poll() is None
        srv.stop()
    if not alive:
        row.happened += "; the server process died"
        row.ok = False
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tight limits (< 30 s)")
    parser.add_argument("--connections", type=int, default=300, help="idle connections (300)")
    parser.add_argument("--idle-timeout", type=float)
    parser.add_argument("--max-connections", type=int)
    parser.add_argument("--extra", type=int, default=20, help="connections over the cap (20)")
    parser.add_argument("--header-timeout", type=float)
    parser.add_argument("--max-message")
    parser.add_argument(
        "--trimcp-path",
        type=Path,
        default=ROOT,
        help="the checkout whose trimcp is served (default: this one)",
    )
    ns = parser.parse_args(argv)
    smoke: dict[str, object] = {
        "idle_timeout": 3.0,
        "max_connections": 50,
        "header_timeout": 1.0,
        "max_message": "64K",
    }
    full: dict[str, object] = {
        "idle_timeout": 5.0,
        "max_connections": 300,
        "header_timeout": 2.0,
        "max_message": "1M",
    }
    for key, value in (smoke if ns.smoke else full).items():
        if getattr(ns, key) is None:
            setattr(ns, key, value)
    ns.per_abuse = ns.idle_timeout + 15.0
    rows: list[Row] = []
    began = time.perf_counter()
    print(f"abuse_ws: serving {ns.trimcp_path}, {'smoke' if ns.smoke else 'full'} run")
    for abuse in ABUSES:
        rows.append(run_one(abuse, ns))
    print_table(rows)
    failed = [r.abuse for r in rows if not r.ok]
    print(f"abuse_ws: {len(rows) - len(failed)} held, {len(failed)} failed in {time.perf_counter() - began:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
