#!/usr/bin/env python3
"""Streamable HTTP client benchmark: trimcp vs the official ``mcp`` client vs httpx vs a raw floor.

Theory of operation
-------------------
One run starts the floor server (``raw_http_server.py``: JSON-RPC over HTTP/1.1 on uvloop
and orjson, parsed by hand, no MCP library; it answers ``initialize`` with a session id,
``tools/call`` and ``ping`` with JSON, notifications with 202, GET with 405, DELETE with 200,
``server/discover`` with 400) on 127.0.0.1 and measures every client against it, each in its
own worker process (``--worker``, the structure of ``bench_stdio.py``, whose process helpers
it reuses).  The server spends a fraction of what even the floor client spends per call, so
the client is what the numbers see.

Clients (columns)
  floor        trio.open_tcp_stream and HTTP/1.1 by hand (the request formatted, the
               response head split and its Content-Length body read; no h11, no MCP
               library), one keep-alive connection per stream of calls (64 connections
               for the 64-in-flight row): the least a Trio client can do.
  floor/h11    the same with h11 doing the HTTP/1.1 (what h11 alone costs).
  httpx        ``httpx.AsyncClient`` POST loop under asyncio (no MCP either).
  mcp          the official SDK: ``streamable_http_client`` + ``ClientSession``, asyncio.
  trimcp/pool  ``trimcp.open_client(url)``, its default executor (keep-alive pool, trimcp's HTTP/1.1 codec).
  trimcp/httpx the same with ``http_client=httpx.AsyncClient()`` (httpx executor).

Metrics
  connect+init  TCP connect + initialize + notifications/initialized (and whatever the
                client does on open), median of N after a warm-up connection.
  sequential    tools/call round trips/s, median of rounds; client CPU per call
                (``time.process_time`` in the worker; the server is another process).
  8, 64 in flight  that many tasks sharing one session (floor: one connection and session
                per task), calls/s and client CPU per call.
  TCP conns     connections the server accepted during the sequential + 64-in-flight
                phases of that client (read from the server's ``/stats``).
  10 MB result  one tools/call whose answer is a 10 MiB text (about 10 MB of JSON), median
                ms of a few calls on the sequential session.

Targets (issues 15 and 29): trimcp >= 10x the official client's sequential and
64-in-flight calls/s; sequential >= 0.6x the floor's, 64 in flight >= 0.4x; client CPU per
call <= 2x the floor's alone and <= 3x at 64 in flight; a 10 MB result <= 1.5x the floor's
time and no slower than the official client; connect+init <= 3x the floor's; at most one TCP
connection per concurrent stream (<= 65 for the whole run: 64 + the sequential one).

Run:   python benchmarks/bench_http.py           (full, ~1-2 minutes)
       python benchmarks/bench_http.py --quick   (< 60 s)
       ... --json out.json   also writes every raw number
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# The trimcp to measure: this checkout, or the ``--against`` one a worker is told of.
sys.path.insert(0, os.environ.get("TRIMCP_BENCH_TREE", str(HERE.parent)))

from bench_stdio import _fmt, _kill_group, _ratio

CLIENTS = ("floor", "floor/h11", "httpx", "mcp", "trimcp/pool", "trimcp/httpx")
CONCURRENCY = 64
REVISION = "2025-11-25"
PARAMS: dict[str, dict[str, Any]] = {
    "full": {
        "connect_runs": 15,
        "warmup": 200,
        "seq_calls": 2000,
        "seq_rounds": 5,
        "conc_calls": 6400,
        "conc_rounds": 3,
        "big_calls": 5,
        "timeout": 240.0,
    },
    "quick": {
        "connect_runs": 3,
        "warmup": 20,
        "seq_calls": 200,
        "seq_rounds": 2,
        "conc_calls": 640,
        "conc_rounds": 1,
        "big_calls": 2,
        "timeout": 40.0,
    },
}
TARGETS = {
    "vs_official": 10.0,
    "vs_floor": 0.6,
    "conc_vs_floor": 0.4,
    "cpu_vs_floor": 2.0,
    "conc_cpu_vs_floor": 3.0,
    "big_vs_floor": 1.5,
    "connect_vs_floor": 3.0,
}
CALL = {"name": "echo", "arguments": {"text": "hi"}}
#: The big answer: a text of BIG_SIZE characters (``tools/call`` of tool ``big``).
BIG_SIZE = 10 * 1024 * 1024
BIG_CALL = {"name": "big", "arguments": {}}

# =========================================================================== the server

#: The floor server (``raw_http_server.py``): uvloop + orjson, far cheaper per request than any client.
SERVER = HERE / "raw_http_server.py"


# =========================================================================== clients (worker side)


class _Floor:
    """One keep-alive HTTP/1.1 connection, h11 by hand (``floor/h11``)."""

    def __init__(self, url: str) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "", parts.port or 80, parts.path
        self.sid: str | None = None
        self.ids = 0

    async def open(self) -> None:
        import h11
        import trio

        self.stream = await trio.open_tcp_stream(self.host, self.port)
        self.conn = h11.Connection(h11.CLIENT)

    async def post(self, msg: dict[str, Any]) -> tuple[int, bytes, Any]:
        import h11

        data = json.dumps(msg).encode()
        headers = [
            ("Host", f"{self.host}:{self.port}"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Content-Length", str(len(data))),
        ]
        if self.sid:
            headers += [("Mcp-Session-Id", self.sid), ("MCP-Protocol-Version", REVISION)]
        conn = self.conn
        await self.stream.send_all(
            conn.send(h11.Request(method="POST", target=self.path, headers=headers))
            + conn.send(h11.Data(data=data))
            + conn.send(h11.EndOfMessage())
        )
        status, body, sid = 0, b"", None
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await self.stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                status = event.status_code
                sid = dict(event.headers).get(b"mcp-session-id")
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                conn.start_next_cycle()
                return status, body, sid

    async def initialize(self) -> None:
        await self.open()
        _, _, sid = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": REVISION,
                    "capabilities": {},
                    "clientInfo": {"name": "floor", "version": "0"},
                },
            }
        )
        self.sid = sid.decode() if sid else None
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self) -> None:
        self.ids += 1
        status, body, _ = await self.post({"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": CALL})
        if status != 200 or b'"result"' not in body:
            raise RuntimeError(f"floor call failed: {status} {body[:100]!r}")

    async def call_big(self) -> None:
        self.ids += 1
        status, body, _ = await self.post(
            {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": BIG_CALL}
        )
        text = json.loads(body)["result"]["content"][0]["text"] if status == 200 else ""
        if len(text) != BIG_SIZE:
            raise RuntimeError(f"floor big call failed: {status}")

    async def aclose(self) -> None:
        await self.stream.aclose()


class _RawFloor(_Floor):
    """One keep-alive HTTP/1.1 connection, the bytes by hand (``floor``): no h11."""

    async def open(self) -> None:
        import trio

        self.stream = await trio.open_tcp_stream(self.host, self.port)
        self.buf = bytearray()
        self.prefix = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        )

    async def post(self, msg: dict[str, Any]) -> tuple[int, bytes, Any]:
        data = json.dumps(msg).encode()
        extra = f"Mcp-Session-Id: {self.sid}\r\nMCP-Protocol-Version: {REVISION}\r\n" if self.sid else ""
        head = f"{self.prefix}{extra}Content-Length: {len(data)}\r\n\r\n".encode("latin-1")
        await self.stream.send_all(head + data)
        buf = self.buf
        while (end := buf.find(b"\r\n\r\n")) < 0:
            buf += await self.stream.receive_some(65536)
        lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length, sid = 0, None
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.lower()
            if name == "content-length":
                length = int(value)
            elif name == "mcp-session-id":
                sid = value.strip().encode()
        need = end + 4 + length
        while len(buf) < need:
            buf += await self.stream.receive_some(max(65536, need - len(buf)))
        body = bytes(buf[end + 4 : need])
        del buf[:need]
        return status, body, sid


async def _stats(url: str) -> int:
    f = _Floor(url.rsplit("/", 1)[0] + "/stats")
    await f.open()
    _status, body, _ = await f.post({})
    await f.aclose()
    return int(json.loads(body)["accepted"])


async def trio_worker(job: dict[str, Any]) -> dict[str, Any]:
    client, url, p = job["client"], job["url"], job["params"]
    open_lanes = None

    if client in ("floor", "floor/h11"):
        kind = _RawFloor if client == "floor" else _Floor

        async def connect() -> tuple[Any, Any]:
            f = kind(url)
            await f.initialize()
            return f, f.aclose

        async def open_lanes(n: int) -> tuple[list[Any], Any]:
            """The floor's concurrency: one connection (and session) per lane."""
            lanes = []
            for _ in range(n):
                f = kind(url)
                await f.initialize()
                lanes.append(f)

            async def close() -> None:
                for f in lanes:
                    await f.aclose()

            return lanes, close
    else:
        import trimcp

        http_client = None
        if client == "trimcp/httpx":
            import httpx

            http_client = httpx.AsyncClient(limits=httpx.Limits(max_connections=100, max_keepalive_connections=100))

        async def connect() -> tuple[Any, Any]:
            cm = trimcp.open_client(url, revision=REVISION, http=trimcp.HttpOptions(http_client=http_client))
            session = await cm.__aenter__()

            class _S:
                async def call(self) -> None:
                    result = await session.call_tool("echo", CALL["arguments"])
                    if result.is_error:
                        raise RuntimeError("tool error")

                async def call_big(self) -> None:
                    result = await session.call_tool("big", {})
                    if len(result.content[0].text) != BIG_SIZE:
                        raise RuntimeError("big call failed")

            async def close() -> None:
                await cm.__aexit__(None, None, None)

            return _S(), close

    return await _measure({}, connect, open_lanes, url, p, trio_mode=True)


#: The concurrency levels measured: calls in flight at once (1 = sequential).
LEVELS = (1, 8, CONCURRENCY)


def level_keys(level: int) -> tuple[str, str]:
    """The result keys (calls/s, client CPU per call) of one concurrency level."""
    if level == 1:
        return "seq_per_s", "cpu_us"
    if level == CONCURRENCY:
        return "conc_per_s", "conc_cpu_us"
    return f"c{level}_per_s", f"c{level}_cpu_us"


async def _measure(
    out: dict[str, Any], connect: Any, open_lanes: Any, url: str, p: dict[str, Any], *, trio_mode: bool
) -> dict[str, Any]:
    """Every metric of one client.  ``open_lanes(n)`` gives n sessions of their own (the
    floor's concurrency); without it, the n lanes share the sequential session."""
    if trio_mode:
        import trio

        async def gather(fns: list[Any]) -> None:
            async with trio.open_nursery() as nursery:
                for fn in fns:
                    nursery.start_soon(fn)
    else:
        import asyncio

        async def gather(fns: list[Any]) -> None:
            await asyncio.gather(*(fn() for fn in fns))

    times = []
    for i in range(p["connect_runs"] + 1):
        t0 = time.perf_counter()
        s, close = await connect()
        t1 = time.perf_counter()
        await close()
        if i:
            times.append(t1 - t0)
        else:
            out["first_connect_ms"] = (t1 - t0) * 1e3
    out["connect_ms"] = statistics.median(times) * 1e3
    before = await _stats(url) if trio_mode else await _stats_asyncio(url)
    s, close = await connect()
    for _ in range(p["warmup"]):
        await s.call()
    for level in LEVELS:
        rate_key, cpu_key = level_keys(level)
        lanes, close_lanes = ([s] * level, None) if open_lanes is None or level == 1 else await open_lanes(level)
        calls = p["seq_calls"] if level == 1 else p["conc_calls"]
        per = calls // level

        def lane_of(one: Any, per: int = per) -> Any:
            async def lane() -> None:
                for _ in range(per):
                    await one.call()

            return lane

        rates, cpus = [], []
        for _ in range(p["seq_rounds"] if level == 1 else p["conc_rounds"]):
            c0, t0 = time.process_time(), time.perf_counter()
            if level == 1:
                await lane_of(s)()
            else:
                await gather([lane_of(one) for one in lanes])
            t1, c1 = time.perf_counter(), time.process_time()
            rates.append(per * level / (t1 - t0))
            cpus.append((c1 - c0) / (per * level) * 1e6)
        out[rate_key] = statistics.median(rates)
        out[cpu_key] = statistics.median(cpus)
        if close_lanes is not None:
            await close_lanes()
    await s.call_big()  # warm-up (the server builds its answer once)
    bigs = []
    for _ in range(p["big_calls"]):
        t0 = time.perf_counter()
        await s.call_big()
        bigs.append((time.perf_counter() - t0) * 1e3)
    out["big_ms"] = statistics.median(bigs)
    await close()
    after = await _stats(url) if trio_mode else await _stats_asyncio(url)
    out["tcp_conns"] = after - before - 1  # minus the second /stats connection
    if open_lanes is not None:
        out["tcp_note"] = f"1 + {' + '.join(str(n) for n in LEVELS[1:])} lanes"
    return out


async def _stats_asyncio(url: str) -> int:
    import asyncio

    host, port = url.split("//")[1].split("/")[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET /stats HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n".encode())
    await writer.drain()
    data = b""
    while b"}" not in data:
        data += await reader.read(4096)
    writer.close()
    return int(json.loads(data[data.index(b"{") :])["accepted"])


async def asyncio_worker(job: dict[str, Any]) -> dict[str, Any]:
    client, url, p = job["client"], job["url"], job["params"]
    if client == "httpx":
        import httpx

        http = httpx.AsyncClient(limits=httpx.Limits(max_connections=100, max_keepalive_connections=100))
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

        async def connect() -> tuple[Any, Any]:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": REVISION,
                    "capabilities": {},
                    "clientInfo": {"name": "httpx", "version": "0"},
                },
            }
            r = await http.post(url, json=init, headers=headers)
            h = {**headers, "Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": REVISION}
            await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)

            class _S:
                ids = 0

                async def call(self) -> None:
                    self.ids += 1
                    r = await http.post(
                        url, headers=h, json={"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": CALL}
                    )
                    if r.status_code != 200 or "result" not in r.json():
                        raise RuntimeError("httpx call failed")

                async def call_big(self) -> None:
                    self.ids += 1
                    r = await http.post(
                        url,
                        headers=h,
                        json={"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": BIG_CALL},
                    )
                    if len(r.json()["result"]["content"][0]["text"]) != BIG_SIZE:
                        raise RuntimeError("httpx big call failed")

            async def close() -> None:
                pass

            return _S(), close
    else:
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async def connect() -> tuple[Any, Any]:
            cm = streamable_http_client(url)
            read, write = await cm.__aenter__()
            sess_cm = ClientSession(read, write)
            session = await sess_cm.__aenter__()
            await session.initialize()

            class _S:
                async def call(self) -> None:
                    result = await session.call_tool("echo", CALL["arguments"])
                    if result.is_error:
                        raise RuntimeError("tool error")

                async def call_big(self) -> None:
                    result = await session.call_tool("big", {})
                    if len(result.content[0].text) != BIG_SIZE:  # type: ignore[union-attr]
                        raise RuntimeError("big call failed")

            async def close() -> None:
                await sess_cm.__aexit__(None, None, None)
                await cm.__aexit__(None, None, None)

            return _S(), close

    return await _measure({}, connect, None, url, p, trio_mode=False)


def run_worker(job: dict[str, Any]) -> dict[str, Any]:
    if job["client"] in ("httpx", "mcp"):
        import asyncio

        if job["client"] == "mcp":
            import mcp.client.session
            import mcp.client.streamable_http  # noqa: F401
        return asyncio.run(asyncio_worker(job))
    import trio

    import trimcp  # noqa: F401

    return trio.run(trio_worker, job)


# =========================================================================== parent side


#: The suffix of a client run from the ``--against`` checkout (the code before a change).
BASE_SUFFIX = "@base"


def worker_env(pythonpath: str | None) -> dict[str, str] | None:
    """The environment of a worker that imports trimcp from another checkout (None: ours)."""
    return None if pythonpath is None else {**os.environ, "PYTHONPATH": pythonpath, "TRIMCP_BENCH_TREE": pythonpath}


def spawn_worker(job: dict[str, Any], timeout: float, pythonpath: str | None = None) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        env=worker_env(pythonpath),
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return {"fatal": f"worker timed out after {timeout:.0f} s"}
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"fatal": f"worker exit {proc.returncode}: {' | '.join(stderr.strip().splitlines()[-3:])}"[:400]}
    return dict(json.loads(lines[-1]))


ROWS = (
    ("sequential calls/s", "seq_per_s", "{:,.0f}"),
    ("client CPU/call (us)", "cpu_us", "{:.1f}"),
    ("8 in flight calls/s", "c8_per_s", "{:,.0f}"),
    ("  CPU/call (us)", "c8_cpu_us", "{:.1f}"),
    ("64 in flight calls/s", "conc_per_s", "{:,.0f}"),
    ("  CPU/call (us)", "conc_cpu_us", "{:.1f}"),
    ("10 MB result (ms)", "big_ms", "{:.0f}"),
    ("connect+init (ms)", "connect_ms", "{:.2f}"),
    ("first connect (ms)", "first_connect_ms", "{:.2f}"),
    ("TCP conns accepted", "tcp_conns", "{:.0f}"),
)


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of every number over a client's runs (a failed run counts as missing)."""
    good = [r for r in runs if "fatal" not in r]
    if not good:
        return runs[0]
    out: dict[str, Any] = {}
    for key in good[0]:
        values = [r[key] for r in good if isinstance(r.get(key), (int, float))]
        out[key] = statistics.median(values) if values else good[0][key]
    return out


def render(results: dict[str, dict[str, Any]]) -> str:
    clients = list(results)
    width = max(14, *(len(c) + 2 for c in clients))
    lines = [f"{'':22}" + "".join(f"{c:>{width}}" for c in clients)]
    for label, key, fmt in ROWS:
        lines.append(f"{label:22}" + "".join(f"{_fmt(results[c].get(key), fmt):>{width}}" for c in clients))
    for c in clients:
        base = results.get(c + BASE_SUFFIX)
        if base is None:
            continue
        for label, key, _unused in ROWS[:7]:
            lines.append(f"  {c} / {c}{BASE_SUFFIX} {label}: {_ratio(results[c].get(key), base.get(key))}")
    for c in clients:
        if "fatal" in results[c]:
            lines.append(f"  {c}: {results[c]['fatal']}")
    return "\n".join(lines)


def targets(results: dict[str, dict[str, Any]]) -> list[str]:
    out = []
    floor, official = results["floor"], results["mcp"]
    for c in ("trimcp/pool", "trimcp/httpx"):
        r = results[c]
        checks = [
            ("sequential vs official", r.get("seq_per_s"), official.get("seq_per_s"), TARGETS["vs_official"], True),
            ("64-in-flight vs official", r.get("conc_per_s"), official.get("conc_per_s"), TARGETS["vs_official"], True),
            ("sequential vs floor", r.get("seq_per_s"), floor.get("seq_per_s"), TARGETS["vs_floor"], True),
            ("64-in-flight vs floor", r.get("conc_per_s"), floor.get("conc_per_s"), TARGETS["conc_vs_floor"], True),
            ("CPU/call vs floor", r.get("cpu_us"), floor.get("cpu_us"), TARGETS["cpu_vs_floor"], False),
            (
                "CPU/call @64 vs floor",
                r.get("conc_cpu_us"),
                floor.get("conc_cpu_us"),
                TARGETS["conc_cpu_vs_floor"],
                False,
            ),
            ("10 MB result vs floor", r.get("big_ms"), floor.get("big_ms"), TARGETS["big_vs_floor"], False),
            ("10 MB result vs official", r.get("big_ms"), official.get("big_ms"), 1.0, False),
            ("connect+init vs floor", r.get("connect_ms"), floor.get("connect_ms"), TARGETS["connect_vs_floor"], False),
        ]
        for name, a, b, limit, higher in checks:
            ratio = _ratio(a, b)
            met = a is not None and b is not None and b > 0 and ((a / b >= limit) if higher else (a / b <= limit))
            sign = ">=" if higher else "<="
            out.append(f"  {c:13} {name:26} {ratio:>9}  (target {sign} {limit}x)  {'met' if met else 'NOT MET'}")
        conns = r.get("tcp_conns")
        met = conns is not None and conns <= CONCURRENCY + 1
        out.append(
            f"  {c:13} {'TCP conns (seq + 64)':26} {_fmt(conns, '{:.0f}'):>9}  "
            f"(target <= {CONCURRENCY + 1})  {'met' if met else 'NOT MET'}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--clients", default=",".join(CLIENTS))
    ap.add_argument("--repeat", type=int, default=1, help="run every client N times, interleaved; report medians")
    ap.add_argument(
        "--against",
        metavar="CHECKOUT",
        help="also run the trimcp clients with trimcp imported from CHECKOUT (e.g. a worktree at "
        "the commit before a change), as trimcp/pool@base and trimcp/httpx@base, interleaved "
        "with the others: before and after measured in one run",
    )
    ap.add_argument("--worker")
    ns = ap.parse_args(argv)
    if ns.worker:
        print(json.dumps(run_worker(json.loads(ns.worker))))
        return 0
    mode = "quick" if ns.quick else "full"
    p = PARAMS[mode]
    port_file = f"/tmp/bench_http_port.{os.getpid()}"
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--port-file", port_file], stdout=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10
        while not (Path(port_file).exists() and Path(port_file).read_text()):
            if time.monotonic() > deadline:
                raise SystemExit("the benchmark server did not start")
            time.sleep(0.02)
        url = f"http://127.0.0.1:{Path(port_file).read_text()}/mcp"
        wanted = ns.clients.split(",")
        clients = list(CLIENTS)
        if ns.against:
            clients += [c + BASE_SUFFIX for c in CLIENTS if c.startswith("trimcp")]
        runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
        for rep in range(max(1, ns.repeat)):  # interleaved: a noisy minute hits every client alike
            for c in clients:
                name = c.removesuffix(BASE_SUFFIX)
                if name not in wanted:
                    runs[c].append({"fatal": "skipped"})
                    continue
                tree = ns.against if c.endswith(BASE_SUFFIX) else None
                runs[c].append(spawn_worker({"client": name, "url": url, "params": p}, p["timeout"], tree))
                print(f"  [{rep + 1}] {c}: done", file=sys.stderr, flush=True)
        results = {c: median_of(r) for c, r in runs.items()}
    finally:
        _kill_group(server)
        server.wait()
        Path(port_file).unlink(missing_ok=True)
    against = f"; @base = trimcp from {ns.against}" if ns.against else ""
    from raw_http_server import describe

    print(
        f"bench_http ({mode}); server {describe()}; python {sys.version.split()[0]}; "
        f"{os.cpu_count()} CPUs; loadavg {os.getloadavg()[0]:.2f}; "
        f"medians of {max(1, ns.repeat)}{against}"
    )
    print(render(results))
    print("targets:")
    print("\n".join(targets(results)))
    if ns.json:
        Path(ns.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
