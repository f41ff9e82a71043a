#!/usr/bin/env python3
"""The load generator of ``bench_server.py``: raw JSON-RPC clients with no MCP library.

Theory of operation (MCP basic/transports: Streamable HTTP and stdio; basic/lifecycle)
-----------------------------------------------------------------------------------
One job per process (``python server_load.py '<job json>'``, printed result: one JSON line), so
the client of every server is the same code, runs beside the server (never inside it) and
costs the same for all of them.

HTTP (``http-seq``, ``http-conc``): asyncio streams, one HTTP/1.1 keep-alive connection per
session, requests written by hand (RFC 9112 section 3; Content-Length bodies) and answers read
by hand: a Content-Length or chunked body (RFC 9112 section 7.1), ``application/json`` or
``text/event-stream`` (the answer is the ``data`` of the SSE event whose JSON-RPC id is ours;
WHATWG HTML 9.2 field parsing, reduced to ``data:`` lines).  A session is what the spec asks
of a client: ``initialize``, its ``Mcp-Session-Id`` echoed on every later request with
``MCP-Protocol-Version``, ``notifications/initialized`` (202), then ``tools/call echo`` in a
loop, and a ``DELETE`` at the end.  ``http-conc`` opens all its sessions first, prints
``READY``, waits for a line on stdin (the parent starts every load process at once), then runs
``calls`` calls on every session concurrently; the parent takes the wall time from the
earliest start to the latest end (``time.monotonic`` is one clock for all processes).

stdio (``stdio``): the worker spawns the server itself (it owns the pipes), writes one JSON
line per request and reads one per answer: a sequential loop, then ``inflight`` requests kept
in flight on the same session (a pipelined window: one sent per answer read).  The server's
peak RSS (VmHWM) is read from /proc before its stdin is closed.

Every answer is checked: a result whose first content text is not the text sent (or an
error) counts in ``errors`` with the first one kept in ``first_error``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

REVISION = "2025-11-25"
TEXT = "hello, server"


def vm_hwm_kb(pid: int) -> int | None:
    """The peak resident set of ``pid`` in KiB (``VmHWM`` of /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int | None) -> float | None:
    """The CPU time (user + system) ``pid`` has used so far, from /proc/PID/stat."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def per_call_us(before: float | None, after: float | None, calls: int) -> float | None:
    """CPU microseconds per call between two ``cpu_seconds`` readings."""
    if before is None or after is None or calls <= 0:
        return None
    return (after - before) / calls * 1e6


def _call_body(rid: int, args: dict[str, Any]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "echo", "arguments": args}},
        separators=(",", ":"),
    ).encode()


def _check(msg: Any, rid: int) -> str | None:
    """None when ``msg`` is the right echo answer to ``rid``, else what is wrong."""
    try:
        if msg.get("id") != rid:
            return f"answer id {msg.get('id')!r}, expected {rid}"
        result = msg["result"]
        if result.get("isError"):
            return f"tool error: {json.dumps(result)[:200]}"
        text = result["content"][0]["text"]
    except (AttributeError, KeyError, IndexError, TypeError):
        return f"not an echo result: {json.dumps(msg)[:200]}"
    return None if text == TEXT else f"echoed {text!r}, expected {TEXT!r}"


# =========================================================================== HTTP


class HttpSession:
    """One MCP session on one keep-alive connection."""

    def __init__(self, host: str, port: int, path: str, tool_arg: str) -> None:
        self.host, self.port, self.path = host, port, path
        self.args = {tool_arg: TEXT}
        self.sid: str | None = None
        self.ids = 0

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._head = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        )
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": REVISION,
                "capabilities": {},
                "clientInfo": {"name": "bench-load", "version": "1"},
            },
        }
        status, headers, body = await self._exchange(self._post(json.dumps(init).encode()))
        if status != 200:
            raise RuntimeError(f"initialize: HTTP {status} {body[:200]!r}")
        self.sid = headers.get("mcp-session-id")
        if self.sid:
            self._head += f"Mcp-Session-Id: {self.sid}\r\n"
        self._head += f"MCP-Protocol-Version: {REVISION}\r\n"
        answer = self._message(headers, body, 0)
        if not isinstance(answer, dict) or "result" not in answer:
            raise RuntimeError(f"initialize answered {body[:200]!r}")
        status, _, body = await self._exchange(self._post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'))
        if status not in (200, 202, 204):
            raise RuntimeError(f"notifications/initialized: HTTP {status} {body[:200]!r}")

    async def join(self, other: HttpSession, lane: int) -> None:
        """Open a connection of its own for ``other``'s session (no new initialize)."""
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        self.writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sid, self._head = other.sid, other._head
        self.ids = lane * 1_000_000  # ids of its own: the lanes share one session

    def _post(self, body: bytes) -> bytes:
        return f"{self._head}Content-Length: {len(body)}\r\n\r\n".encode() + body

    async def _exchange(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        self.writer.write(request)
        reader = self.reader
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    break
                parts.append(await reader.readexactly(size + 2))
            body = b"".join(p[:-2] for p in parts)
        elif status in (202, 204, 304) or status < 200:
            body = b""
        else:
            raise RuntimeError(f"HTTP {status} answer without a length on a keep-alive connection")
        return status, headers, body

    @staticmethod
    def _message(headers: dict[str, str], body: bytes, rid: int) -> Any:
        if headers.get("content-type", "").startswith("text/event-stream"):
            for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
                data = b"\n".join(
                    line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")
                )
                if data:
                    msg = json.loads(data)
                    if isinstance(msg, dict) and msg.get("id") == rid:
                        return msg
            return None
        return json.loads(body) if body else None

    async def call(self) -> str | None:
        self.ids += 1
        rid = self.ids
        status, headers, body = await self._exchange(self._post(_call_body(rid, self.args)))
        if status != 200:
            return f"tools/call: HTTP {status} {body[:200]!r}"
        return _check(self._message(headers, body, rid), rid)

    async def close(self) -> None:
        try:
            if self.sid:
                head = self._head.replace("POST ", "DELETE ", 1)
                await self._exchange(f"{head}Content-Length: 0\r\n\r\n".encode())
        except (OSError, asyncio.IncompleteReadError, RuntimeError):
            pass  # a server may close instead of answering DELETE; the session is over either way
        self.writer.close()


def _split_url(url: str) -> tuple[str, int, str]:
    rest = url.split("//", 1)[1]
    authority, _, path = rest.partition("/")
    host, _, port = authority.rpartition(":")
    return host, int(port), "/" + path


class _Tally:
    def __init__(self) -> None:
        self.errors = 0
        self.first_error: str | None = None

    def note(self, problem: str | None) -> None:
        if problem is not None:
            self.errors += 1
            self.first_error = self.first_error or problem


async def http_seq(job: dict[str, Any]) -> dict[str, Any]:
    s = HttpSession(*_split_url(job["url"]), job["tool_arg"])
    await s.open()
    tally = _Tally()
    for _ in range(job["warmup"]):
        tally.note(await s.call())
    rates, lat = [], []
    clock = time.perf_counter
    server0 = cpu_seconds(job.get("server_pid"))
    c0 = time.process_time()
    for _ in range(job["rounds"]):
        t0 = clock()
        for _ in range(job["calls"]):
            t = clock()
            tally.note(await s.call())
            lat.append(clock() - t)
        rates.append(job["calls"] / (clock() - t0))
    cpu = (time.process_time() - c0) / max(1, job["calls"] * job["rounds"]) * 1e6
    server_cpu = per_call_us(server0, cpu_seconds(job.get("server_pid")), job["calls"] * job["rounds"])
    await s.close()
    return {
        "seq_per_s": statistics.median(rates),
        "seq_lat_us": [round(x * 1e6) for x in lat],
        "load_cpu_us": cpu,
        "server_cpu_us": server_cpu,
        "errors": tally.errors,
        "first_error": tally.first_error,
    }


async def http_conc(job: dict[str, Any]) -> dict[str, Any]:
    sessions = [HttpSession(*_split_url(job["url"]), job["tool_arg"]) for _ in range(job["sessions"])]
    for s in sessions:  # one at a time: the connect storm is not what is measured
        await s.open()
    print("READY", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    tally = _Tally()
    lat: list[float] = []
    clock = time.perf_counter

    async def lane(s: HttpSession) -> None:
        for _ in range(job["calls"]):
            t = clock()
            tally.note(await s.call())
            lat.append(clock() - t)

    c0 = time.process_time()
    start = time.monotonic()
    await asyncio.gather(*(lane(s) for s in sessions))
    end = time.monotonic()
    cpu = (time.process_time() - c0) / max(1, len(lat)) * 1e6
    for s in sessions:
        await s.close()
    return {
        "start": start,
        "end": end,
        "calls": len(lat),
        "lat_us": [round(x * 1e6) for x in lat],
        "load_cpu_us": cpu,
        "errors": tally.errors,
        "first_error": tally.first_error,
    }


async def http_inflight(job: dict[str, Any]) -> dict[str, Any]:
    """``inflight`` calls in flight at once on ONE session, each lane on a keep-alive
    connection of its own (HTTP/1.1 carries one exchange at a time per connection)."""
    host, port, path = _split_url(job["url"])
    first = HttpSession(host, port, path, job["tool_arg"])
    await first.open()
    lanes = [first]
    for i in range(1, job["inflight"]):
        lane = HttpSession(host, port, path, job["tool_arg"])
        await lane.join(first, i)
        lanes.append(lane)
    tally = _Tally()
    for s in lanes:  # every connection warm
        tally.note(await s.call())
    lat: list[float] = []
    clock = time.perf_counter

    async def run(s: HttpSession) -> None:
        for _ in range(job["calls"]):
            t = clock()
            tally.note(await s.call())
            lat.append(clock() - t)

    server0 = cpu_seconds(job.get("server_pid"))
    c0 = time.process_time()
    start = clock()
    await asyncio.gather(*(run(s) for s in lanes))
    elapsed = clock() - start
    cpu = (time.process_time() - c0) / max(1, len(lat)) * 1e6
    server_cpu = per_call_us(server0, cpu_seconds(job.get("server_pid")), len(lat))
    for s in lanes[1:]:
        s.writer.close()
    await first.close()
    return {
        "inflight_per_s": len(lat) / elapsed,
        "inflight_lat_us": [round(x * 1e6) for x in lat],
        "load_cpu_us": cpu,
        "server_cpu_us": server_cpu,
        "errors": tally.errors,
        "first_error": tally.first_error,
    }


# =========================================================================== stdio


def stdio(job: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.Popen(
        job["cmd"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **job.get("env", {})},
    )
    assert proc.stdin is not None and proc.stdout is not None
    w, r = proc.stdin, proc.stdout
    args = {job["tool_arg"]: TEXT}
    tally = _Tally()
    try:
        w.write(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": REVISION,
                        "capabilities": {},
                        "clientInfo": {"name": "bench-load", "version": "1"},
                    },
                }
            ).encode()
            + b"\n"
        )
        w.flush()
        first = json.loads(r.readline())
        if "result" not in first:
            raise RuntimeError(f"initialize answered {json.dumps(first)[:200]}")
        w.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        w.flush()
        rid = 0

        def one() -> None:
            nonlocal rid
            rid += 1
            w.write(_call_body(rid, args) + b"\n")
            w.flush()
            tally.note(_check(json.loads(r.readline()), rid))

        for _ in range(job["warmup"]):
            one()
        clock = time.perf_counter
        rates, lat = [], []
        for _ in range(job["rounds"]):
            t0 = clock()
            for _ in range(job["calls"]):
                t = clock()
                one()
                lat.append(clock() - t)
            rates.append(job["calls"] / (clock() - t0))
        # pipelined: keep `inflight` requests outstanding, one more sent per answer read
        sent_at: dict[int, float] = {}
        total, window = job["inflight"] * job["inflight_calls"], job["inflight"]
        conc_lat: list[float] = []
        start = clock()
        first_id = rid + 1
        while rid < first_id - 1 + min(window, total):
            rid += 1
            sent_at[rid] = clock()
            w.write(_call_body(rid, args) + b"\n")
        w.flush()
        done = 0
        while done < total:
            msg = json.loads(r.readline())
            got = msg.get("id") if isinstance(msg, dict) else None
            if got in sent_at:
                conc_lat.append(clock() - sent_at.pop(got))
                tally.note(_check(msg, got))
            else:
                tally.note(f"unexpected line {json.dumps(msg)[:200]}")
            done += 1
            if rid < first_id - 1 + total:
                rid += 1
                sent_at[rid] = clock()
                w.write(_call_body(rid, args) + b"\n")
                w.flush()
        elapsed = clock() - start
        rss = vm_hwm_kb(proc.pid)
    finally:
        try:
            w.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return {
        "seq_per_s": statistics.median(rates),
        "seq_lat_us": [round(x * 1e6) for x in lat],
        "conc_per_s": total / elapsed,
        "lat_us": [round(x * 1e6) for x in conc_lat],
        "rss_kb": rss,
        "errors": tally.errors,
        "first_error": tally.first_error,
    }


def main() -> int:
    job = json.loads(sys.argv[1])
    kind = job["kind"]
    if kind == "stdio":
        out = stdio(job)
    else:
        run: Any = asyncio.run
        try:  # the cheapest load generator there is: less of the two cores goes to the load
            import uvloop

            run = uvloop.run
        except ImportError:
            pass
        jobs = {"http-seq": http_seq, "http-conc": http_conc, "http-inflight": http_inflight}
        out = run(jobs[kind](job))
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
