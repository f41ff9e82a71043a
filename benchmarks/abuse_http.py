#!/usr/bin/env python3
"""Abuse ``trimcp serve --http`` and check that every limit holds and a fresh client is served.

Theory of operation
-------------------
One run starts ``python -m trimcp serve --http 127.0.0.1:0`` with the limits given on the
command line (loopback only; the server prints its URL on stderr, read here) and runs
five abuses against it, one after the other, each bounded in time:

  slow loris      a few connections drip their request head one byte at a time: each must
                  be answered 408 and closed when ``--header-timeout`` passes (not renewed
                  per byte).  A fresh client is checked while they drip.
  connections     an existing session is opened, then raw connections with a half-sent
                  head are opened up to ``--max-connections`` plus extra: the extra ones
                  must be refused (503) promptly and the existing session keep working;
                  then all are closed and a fresh client must be served (slots reused).
  sessions        ``--max-sessions`` plus extra sessions are initialized and never
                  deleted: the oldest must be gone (404, evicted) and the newest alive.
  big bodies      ``--bodies`` connections each POST a body of ``--max-body`` bytes at
                  once, three times: valid JSON-RPC (one big string param), invalid JSON
                  (that body without its last brace) and whitespace.  All must be
                  answered (400), and what the server's RSS grows by must stay within
                  the body budget plus 10% (the budget counts what parsing takes).
  oversize        a head declaring ten times ``--max-body`` with no body: 413 at once;
                  and a chunked body streamed past the cap: 413 when it passes.

After each, a fresh client (``trimcp.open_client`` + initialize + ``tools/call echo``)
must succeed; its latency is reported.  The server's RSS is sampled every 5 ms from
/proc (Linux) by a thread.  Absolute numbers swing on a shared machine; the pass/fail
criteria are the limits, not the timings.  The script exits 1 if a limit did not hold or
a fresh client failed, and stops by itself (``--smoke``: small sizes and tight limits,
< 30 s; full: < 2 min).

Run:   python benchmarks/abuse_http.py            (full)
       python benchmarks/abuse_http.py --smoke    (CI)
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import attrs
import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _abuse import fresh_client, fresh_text, stop_group

import trimcp
from trimcp.cli.serve import parse_size

MiB = 1024 * 1024


@attrs.define
class Row:
    abuse: str
    limit: str
    happened: str = ""
    refuse_s: str = "-"
    rss_mib: str = "-"
    fresh: str = "-"
    ok: bool = True


# ---------------------------------------------------------------- the server process


class ServerProcess:
    """``trimcp serve --http 127.0.0.1:0`` in its own process group, and its RSS."""

    def __init__(self, flags: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trimcp", "serve", "--http", "127.0.0.1:0", *flags],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stderr is not None
        stderr = self.proc.stderr
        threading.Thread(target=lambda: [lines.put(x.decode()) for x in stderr], daemon=True).start()
        deadline = time.monotonic() + 20
        self.url = ""
        while not self.url:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise SystemExit("abuse_http: the server printed no URL within 20 s") from None
            if " at http://" in line:
                self.url = line.rsplit(" at ", 1)[1].strip()
        self.port = int(self.url.split(":")[2].split("/")[0])
        self._peak = 0
        self._sampling = True
        threading.Thread(target=self._sample, daemon=True).start()

    def rss(self) -> int:
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def _sample(self) -> None:
        while self._sampling:
            self._peak = max(self._peak, self.rss())
            time.sleep(0.005)

    def reset_peak(self) -> int:
        self._peak = now = self.rss()
        return now

    @property
    def peak(self) -> int:
        return max(self._peak, self.rss())

    def stop(self) -> None:
        self._sampling = False
        stop_group(self.proc)


# ---------------------------------------------------------------- helpers


async def read_until_closed(stream: trio.SocketStream, limit: float) -> bytes:
    data = b""
    with trio.move_on_after(limit):
        while True:
            try:
                part = await stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                break
            if not part:
                break
            data += part
    return data


async def read_response(stream: trio.SocketStream, limit: float) -> bytes:
    """One response (head + Content-Length body), or what came before the close/limit."""
    data = b""
    with trio.move_on_after(limit):
        while True:
            end = data.find(b"\r\n\r\n")
            if end >= 0:
                length = 0
                for line in data[:end].lower().split(b"\r\n"):
                    if line.startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if len(data) >= end + 4 + length:
                    return data
            try:
                part = await stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                break
            if not part:
                break
            data += part
    return data


def status_of(answer: bytes) -> str:
    return answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.1 ") else "reset"


def post_head(port: int, length: int | None) -> bytes:
    framing = "transfer-encoding: chunked" if length is None else f"content-length: {length}"
    return (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\n{framing}\r\n\r\n"
    ).encode()


# ---------------------------------------------------------------- the abuses


async def slow_loris(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    row = Row("slow loris (3 conns, 1 byte per drip)", f"header-timeout {ns.header_timeout:g} s")
    drip = ns.header_timeout / 10
    times: list[float] = []
    answers: list[str] = []

    async def one() -> None:
        stream = await trio.open_tcp_stream("127.0.0.1", srv.port)
        began = time.perf_counter()

        async def send() -> None:
            for byte in b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: " + b"a" * 10_000:
                try:
                    await stream.send_all(bytes([byte]))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                await trio.sleep(drip)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send)
            answer = await read_until_closed(stream, ns.header_timeout * 3)
            times.append(time.perf_counter() - began)
            answers.append(status_of(answer))
            nursery.cancel_scope.cancel()
        await stream.aclose()

    fresh: tuple[bool, float] = (False, 0.0)

    async def fresh_midway() -> None:
        nonlocal fresh
        await trio.sleep(ns.header_timeout / 2)
        fresh = await fresh_client(srv.url, revision="2025-11-25")

    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(one)
        nursery.start_soon(fresh_midway)
    worst = max(times)
    row.happened = f"answered {'/'.join(sorted(set(answers)))}, closed"
    row.refuse_s = f"{worst:.2f}"
    row.fresh = fresh_text(fresh) + " (midway)"
    row.ok = set(answers) == {"408"} and worst <= ns.header_timeout + 2.0 and fresh[0]
    return row


async def connections(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    extra = ns.extra_connections
    row = Row(f"idle connections (cap + {extra})", f"max-connections {ns.max_connections}")
    held: list[trio.SocketStream] = []
    refusals: list[float] = []
    existing_ok = False
    async with trimcp.open_client(srv.url, revision="2025-11-25") as existing:
        # Two calls at once, so the client's pool holds two keep-alive connections: its GET
        # stream opens in the background and may take an idle one at any moment, and a call
        # at the cap with no idle connection left would need a new one, rightly refused.
        async with trio.open_nursery() as nursery:
            for text in ("before", "before, beside it"):
                nursery.start_soon(existing.call_tool, "echo", {"message": text})

        async def probe(stream: trio.SocketStream, began: float) -> None:
            # Accepted ones are answered 408 at the header deadline: only a 503 is a refusal.
            answer = await read_response(stream, ns.header_timeout / 2)
            if status_of(answer) == "503":
                refusals.append(time.perf_counter() - began)

        async with trio.open_nursery() as nursery:
            for _ in range(ns.max_connections + extra):
                began = time.perf_counter()
                stream = await trio.open_tcp_stream("127.0.0.1", srv.port)
                await stream.send_all(b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # half a head
                held.append(stream)
                nursery.start_soon(probe, stream, began)
            # While the cap is reached (before the held heads time out):
            with trio.move_on_after(ns.header_timeout / 2):
                await existing.call_tool("echo", {"message": "at the cap"})
                existing_ok = True
        for stream in held:
            await stream.aclose()
    await trio.sleep(0.2)  # the server notices the closes
    fresh = await fresh_client(srv.url, revision="2025-11-25")
    median = statistics.median(refusals) if refusals else float("nan")
    row.happened = (
        f"{len(refusals)} of {ns.max_connections + extra} refused with 503, "
        f"existing session {'ok' if existing_ok else 'FAILED'} at the cap"
    )
    row.refuse_s = f"{median:.3f} (median)"
    row.fresh = fresh_text(fresh) + " (after)"
    # The existing client holds 2-3 connections (two calls' and its GET stream's), so at
    # least `extra` are refused.
    row.ok = extra <= len(refusals) <= extra + 3 and existing_ok and fresh[0]
    return row


async def sessions(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    import httpx

    total = ns.max_sessions + ns.extra_sessions
    row = Row(f"sessions never deleted (cap + {ns.extra_sessions})", f"max-sessions {ns.max_sessions}")
    accept = {"accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "abuse", "version": "1"},
        },
    }
    ids: list[str] = []
    at_cap: list[float] = []
    async with httpx.AsyncClient(timeout=10) as client:
        for n in range(total):
            began = time.perf_counter()
            r = await client.post(srv.url, json=init, headers=accept)
            if n >= ns.max_sessions:
                at_cap.append(time.perf_counter() - began)
            if r.status_code != 200:
                row.happened, row.ok = f"initialize {n} got {r.status_code}", False
                return row
            ids.append(r.headers["mcp-session-id"])

        async def ping(sid: str) -> int:
            headers = {**accept, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
            r = await client.post(srv.url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers)
            return r.status_code

        oldest, newest = await ping(ids[0]), await ping(ids[-1])
    fresh = await fresh_client(srv.url, revision="2025-11-25")
    row.happened = f"oldest session {oldest} (evicted), newest {newest}"
    row.refuse_s = f"{statistics.median(at_cap) * 1000:.1f} ms/init at cap" if at_cap else "-"
    row.fresh = fresh_text(fresh)
    row.ok = oldest == 404 and newest == 200 and fresh[0]
    return row


def big_body(kind: str, size: int) -> bytes:
    """A body of ``size`` bytes: a valid JSON-RPC request with one big string param, or
    invalid JSON (the same, its last brace missing: parsed to the end, then refused), or
    only whitespace (refused at once)."""
    if kind == "whitespace":
        return b" " * size
    head, tail = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"', b'"}}'
    body = head + b"a" * (size - len(head) - len(tail)) + tail
    return body if kind == "valid" else body[:-1] + b" "


async def big_bodies(srv: ServerProcess, ns: argparse.Namespace, kind: str) -> Row:
    size, count = ns.max_body_bytes, ns.bodies
    budget = ns.budget_bytes
    row = Row(
        f"{count} parallel {size // MiB} MiB bodies ({kind})",
        f"max-body {size // MiB} MiB, budget {budget // MiB} MiB",
    )
    body = big_body(kind, size)
    statuses: list[str] = []
    base = srv.reset_peak()
    began = time.perf_counter()

    async def one() -> None:
        stream = await trio.open_tcp_stream("127.0.0.1", srv.port)

        async def send() -> None:
            try:
                await stream.send_all(post_head(srv.port, size) + body)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send)
            answer = await read_response(stream, 60)
            statuses.append(status_of(answer))
            nursery.cancel_scope.cancel()
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(one)
    elapsed = time.perf_counter() - began
    over = srv.peak - base
    fresh = await fresh_client(srv.url, revision="2025-11-25")
    tally = {s: statuses.count(s) for s in sorted(set(statuses))}
    row.happened = "answered " + ", ".join(f"{n}x {s}" for s, n in tally.items())
    row.refuse_s = f"{elapsed:.2f} all done"
    row.rss_mib = f"+{over / MiB:.0f} (base {base / MiB:.0f})"
    row.fresh = fresh_text(fresh)
    # The budget counts what parsing a body takes (its bytes, the text, the parsed tree:
    # jsonrpc.parse_cost), so the RSS the bodies add stays within it; a tenth more for
    # what the allocator keeps and the interpreter's own growth.  (Each body here is
    # answered 400: valid ones name no session, the others are not JSON.)
    bound = budget * 1.10
    row.ok = set(tally) == {"400"} and over <= bound and fresh[0]
    if over > bound:
        row.happened += f"; RSS over the bound {bound / MiB:.0f} MiB"
    return row


async def oversize(srv: ServerProcess, ns: argparse.Namespace) -> Row:
    size = ns.max_body_bytes
    row = Row("oversize Content-Length / chunked", f"max-body {size // MiB} MiB")
    stream = await trio.open_tcp_stream("127.0.0.1", srv.port)
    began = time.perf_counter()
    await stream.send_all(post_head(srv.port, 10 * size))
    declared = status_of(await read_until_closed(stream, 5))
    declared_s = time.perf_counter() - began
    await stream.aclose()
    stream = await trio.open_tcp_stream("127.0.0.1", srv.port)
    sent = 0
    chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
    answer = b""

    async def send() -> None:
        nonlocal sent
        await stream.send_all(post_head(srv.port, None))
        try:
            while sent < 4 * size:
                await stream.send_all(chunk)
                sent += 65536
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(send)
        answer = await read_until_closed(stream, 30)
        nursery.cancel_scope.cancel()
    await stream.aclose()
    chunked = status_of(answer)
    fresh = await fresh_client(srv.url, revision="2025-11-25")
    row.happened = (
        f"declared 10x: {declared} in {declared_s * 1000:.0f} ms; chunked: {chunked} after {sent / MiB:.1f} MiB sent"
    )
    row.refuse_s = f"{declared_s:.3f}"
    row.fresh = fresh_text(fresh)
    row.ok = declared == "413" and declared_s < 1.0 and chunked == "413" and fresh[0]
    return row


ABUSES: tuple[Callable[[ServerProcess, argparse.Namespace], Awaitable[Row]], ...] = (
    slow_loris,
    connections,
    sessions,
    *(partial(big_bodies, kind=kind) for kind in ("valid", "invalid", "whitespace")),
    oversize,
)


# ---------------------------------------------------------------- the run


def print_table(rows: list[Row]) -> None:
    head = ("abuse", "limit", "what happened", "close/refuse s", "RSS MiB", "fresh client", "")
    table = [head] + [
        (r.abuse, r.limit, r.happened, r.refuse_s, r.rss_mib, r.fresh, "ok" if r.ok else "FAIL") for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    for n, line in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


async def run(srv: ServerProcess, ns: argparse.Namespace, rows: list[Row]) -> None:
    for abuse in ABUSES:
        with trio.move_on_after(ns.per_abuse) as scope:
            rows.append(await abuse(srv, ns))
        if scope.cancelled_caught:
            name = getattr(getattr(abuse, "func", abuse), "__name__", "abuse")
            rows.append(Row(name, "-", f"did not finish within {ns.per_abuse:g} s", ok=False))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, tight limits (< 30 s)")
    parser.add_argument("--header-timeout", type=float)
    parser.add_argument("--max-connections", type=int)
    parser.add_argument("--extra-connections", type=int)
    parser.add_argument("--max-sessions", type=int)
    parser.add_argument("--extra-sessions", type=int)
    parser.add_argument("--max-body")
    parser.add_argument("--max-body-budget")
    parser.add_argument("--bodies", type=int, default=10)
    ns = parser.parse_args(argv)
    smoke: dict[str, object] = {
        "header_timeout": 1.0,
        "max_connections": 40,
        "extra_connections": 10,
        "max_sessions": 30,
        "extra_sessions": 10,
        "max_body": "4M",
        "max_body_budget": "16M",
    }
    full: dict[str, object] = {
        "header_timeout": 10.0,
        "max_connections": 300,
        "extra_connections": 50,
        "max_sessions": 500,
        "extra_sessions": 100,
        "max_body": "40M",
        "max_body_budget": "256M",
    }
    for key, value in (smoke if ns.smoke else full).items():
        if getattr(ns, key) is None:
            setattr(ns, key, value)
    ns.max_body_bytes = parse_size(ns.max_body)
    ns.budget_bytes = parse_size(ns.max_body_budget)
    ns.per_abuse = 12.0 if ns.smoke else 40.0
    srv = ServerProcess(
        [
            "--header-timeout",
            str(ns.header_timeout),
            "--max-connections",
            str(ns.max_connections),
            "--max-sessions",
            str(ns.max_sessions),
            "--max-body",
            ns.max_body,
            "--max-body-budget",
            ns.max_body_budget,
        ]
    )
    rows: list[Row] = []
    began = time.perf_counter()
    try:
        print(f"abuse_http: server at {srv.url} (pid {srv.proc.pid}), {'smoke' if ns.smoke else 'full'} run")
        trio.run(run, srv, ns, rows)
    finally:
        alive = srv.proc.poll() is None
        srv.stop()
    if not alive:
        rows.append(Row("server process", "-", "died during the run", ok=False))
    print_table(rows)
    failed = [r.abuse for r in rows if not r.ok]
    print(f"abuse_http: {len(rows) - len(failed)} held, {len(failed)} failed in {time.perf_counter() - began:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
