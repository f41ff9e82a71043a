#!/usr/bin/env python3
"""Store benchmark: the reference server over HTTP with its state in memory, SQLite or Redis,
on one replica and on three behind a round-robin TCP proxy, side by side in one run (issue 30).

Theory of operation
-------------------
Every cell runs ``trimcp serve --http 127.0.0.1:0 --store URL`` (the bundled reference server's
``echo`` tool) and measures it with the load generator of ``bench_server.py``
(``server_load.py``: raw HTTP/1.1 clients, no MCP library, every answer checked):

  memory          the default store: this process's memory
  sqlite          a SQLite file (a fresh one per cell, in a temporary folder)
  redis           a real ``redis-server`` (Debian's package), started here on a free loopback
                  port with nothing kept on disk; a fresh key prefix per cell
  ... x3          three replicas sharing that store behind a round-robin TCP proxy
                  (tests/helpers/replica_set.py run as a process); the proxy hands each TCP
                  connection to the next replica, and each load session keeps its connection, so
                  its requests stay on one replica.  ``memory x3`` works only because of that
                  (its sessions are not shared): it is the baseline of the proxy's own cost.

Phases per cell: ``sequential`` (one session, calls back to back: calls/s, p50 and p99 per call)
and ``50 sessions`` (each on its own connection, ``--load-procs`` load processes, all at once:
calls/s, p50, p99).  Rounds are interleaved with the cell order rotated each round; a cell's
numbers are medians over rounds, a ratio is the median of the per-round ratios.  Goal (issue 30):
the Redis store costs at most 1.5x the in-memory store per call on loopback (sequential time per
call, redis / memory).

Noise: two shared cores carry the servers, Redis, the proxy and the load processes, and other
work may run on the machine too; compare numbers within one run only (the header prints the load).

Run:   python benchmarks/bench_store.py            (3 rounds, a few minutes)
       python benchmarks/bench_store.py --quick    (1 round)
       python benchmarks/bench_store.py --smoke    (tiny N: every cell answers correctly)
       ... --cells memory,redis  --json out.json
Exit status 1 when an answer was wrong, a cell failed, or redis-server is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests" / "helpers")]

from bench_server import _kill_group, _load, _ms, _pct, _result, _start_server
from ports import free_port
from redis_server import MISSING, redis_binary, running_redis

CELLS = ("memory", "sqlite", "redis", "memory x3", "sqlite x3", "redis x3")
SESSIONS = 50
GOAL = 1.5
PARAMS: dict[str, dict[str, Any]] = {
    "full": {"rounds": 3, "warmup": 50, "seq_calls": 500, "conc_calls": 40},
    "quick": {"rounds": 1, "warmup": 20, "seq_calls": 200, "conc_calls": 10},
    "smoke": {"rounds": 1, "warmup": 2, "seq_calls": 10, "conc_calls": 2},
}
CELL_TIMEOUT = 180.0


@contextmanager
def _replicas(cell: str, redis_url: str, workdir: Path, serial: int) -> Iterator[str]:
    """The cell's servers (and proxy), for the block; the MCP URL the load talks to."""
    kind, _, times = cell.partition(" x")
    count = int(times or 1)
    if kind == "sqlite":
        store = f"sqlite://{workdir}/cell{serial}.db"
    elif kind == "redis":
        store = f"{redis_url}?prefix=bench{serial}"
    else:
        store = "memory"
    proxy_port = free_port() if count > 1 else None
    with ExitStack() as stack:
        ports = []
        for n in range(count):
            cmd = [sys.executable, "-m", "trimcp.cli", "serve", "--http", "127.0.0.1:0", "--store", store]
            if proxy_port is not None:
                cmd += ["--allowed-host", f"127.0.0.1:{proxy_port}"]
            log = stack.enter_context(tempfile.NamedTemporaryFile("w+", prefix=f"bench_store_{n}_", suffix=".log"))
            proc, port = _start_server(cmd, log)
            stack.callback(_stop, proc)
            ports.append(port)
        if proxy_port is None:
            yield f"http://127.0.0.1:{ports[0]}/mcp"
            return
        log = stack.enter_context(tempfile.NamedTemporaryFile("w+", prefix="bench_store_proxy_", suffix=".log"))
        script = ROOT / "tests" / "helpers" / "replica_set.py"
        proxy, port = _start_server([sys.executable, str(script), str(proxy_port), *map(str, ports)], log)
        stack.callback(_stop, proxy)
        yield f"http://127.0.0.1:{port}/mcp"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    _kill_group(proc)
    proc.wait(timeout=10)


def run_cell(
    cell: str, redis_url: str, workdir: Path, serial: int, p: dict[str, Any], load_procs: int
) -> dict[str, Any]:
    deadline = time.monotonic() + CELL_TIMEOUT
    loads: list[subprocess.Popen[str]] = []
    try:
        with _replicas(cell, redis_url, workdir, serial) as url:
            job = {"kind": "http-seq", "url": url, "tool_arg": "message", "rounds": 1}
            seq = _result(_load({**job, "warmup": p["warmup"], "calls": p["seq_calls"]}), deadline)
            shares = [SESSIONS // load_procs + (i < SESSIONS % load_procs) for i in range(load_procs)]
            loads = [
                _load(
                    {"kind": "http-conc", "url": url, "tool_arg": "message", "sessions": n, "calls": p["conc_calls"]},
                    stdin=subprocess.PIPE,
                )
                for n in shares
            ]
            for proc in loads:
                assert proc.stdout is not None
                if proc.stdout.readline().strip() != "READY":
                    raise RuntimeError(f"load process not ready: {proc.stderr.read()[-300:] if proc.stderr else ''}")
            for proc in loads:
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            parts = [_result(proc, deadline) for proc in loads]
    except (RuntimeError, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
        return {"fatal": str(exc)[:300]}
    finally:
        for proc in loads:
            _kill_group(proc)
    lat = [x for part in parts for x in part["lat_us"]]
    calls = sum(part["calls"] for part in parts)
    span = max(part["end"] for part in parts) - min(part["start"] for part in parts)
    return {
        "seq_per_s": seq["seq_per_s"],
        "seq_p50_ms": _ms(_pct(seq["seq_lat_us"], 0.5)),
        "seq_p99_ms": _ms(_pct(seq["seq_lat_us"], 0.99)),
        "conc_per_s": calls / span if span > 0 else None,
        "p50_ms": _ms(_pct(lat, 0.5)),
        "p99_ms": _ms(_pct(lat, 0.99)),
        "errors": seq["errors"] + sum(part["errors"] for part in parts),
        "first_error": seq["first_error"] or next((x["first_error"] for x in parts if x["first_error"]), None),
    }


ROWS = (
    ("sequential calls/s", "seq_per_s", "{:,.0f}"),
    ("sequential p50 / p99 ms", ("seq_p50_ms", "seq_p99_ms"), "{:.2f}"),
    ("50 sessions calls/s", "conc_per_s", "{:,.0f}"),
    ("50 sessions p50 / p99 ms", ("p50_ms", "p99_ms"), "{:.1f}"),
)


def _median(rounds: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rounds if isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def _ratio(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str, *, inverse: bool = False) -> float | None:
    """Median over rounds of a/b (``inverse``: b/a, e.g. time per call from calls/s)."""
    out = []
    for x, y in zip(a, b):
        u, v = x.get(key), y.get(key)
        if isinstance(u, (int, float)) and isinstance(v, (int, float)) and u and v:
            out.append(v / u if inverse else u / v)
    return statistics.median(out) if out else None


def report(results: dict[str, list[dict[str, Any]]], cells: list[str]) -> str:
    lines = ["| | " + " | ".join(cells) + " |", "|---" * (len(cells) + 1) + "|"]
    for label, key, fmt in ROWS:
        cols = []
        for cell in cells:
            rounds = results[cell]
            fatal = next((r["fatal"] for r in rounds if "fatal" in r), None)
            if fatal:
                cols.append("failed")
                continue
            keys = key if isinstance(key, tuple) else (key,)
            values = [_median(rounds, k) for k in keys]
            cols.append(" / ".join("-" if v is None else fmt.format(v) for v in values))
        lines.append(f"| {label} | " + " | ".join(cols) + " |")
    if "memory" in results:
        base = results["memory"]
        cols = []
        for cell in cells:
            r = _ratio(results[cell], base, "seq_per_s", inverse=True)
            cols.append("-" if r is None else f"{r:.2f}x")
        lines.append("| time per call vs memory (sequential) | " + " | ".join(cols) + " |")
        cols = []
        for cell in cells:
            r = _ratio(results[cell], base, "p99_ms")
            cols.append("-" if r is None else f"{r:.2f}x")
        lines.append("| 50 sessions p99 vs memory | " + " | ".join(cols) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--smoke", action="store_true")
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument("--load-procs", type=int, default=2)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    p = PARAMS["smoke" if args.smoke else "quick" if args.quick else "full"]
    cells = [c.strip() for c in args.cells.split(",") if c.strip()]
    unknown = [c for c in cells if c not in CELLS]
    if unknown:
        parser.error(f"unknown cells {unknown} (known: {', '.join(CELLS)})")
    binary = redis_binary()
    if binary is None:
        print(f"bench_store: {MISSING}", file=sys.stderr)
        return 1
    load = os.getloadavg()
    print(
        f"bench_store: {platform.node()} {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {p['rounds']} round(s), "
        f"{p['seq_calls']} sequential calls, {SESSIONS} sessions x {p['conc_calls']} calls",
        flush=True,
    )
    results: dict[str, list[dict[str, Any]]] = {c: [] for c in cells}
    serial = 0
    with running_redis(binary) as redis_url, tempfile.TemporaryDirectory(prefix="bench_store_") as tmp:
        for n in range(p["rounds"]):
            order = cells[n % len(cells) :] + cells[: n % len(cells)]
            for cell in order:
                serial += 1
                started = time.monotonic()
                result = run_cell(cell, redis_url, Path(tmp), serial, p, args.load_procs)
                results[cell].append(result)
                took = time.monotonic() - started
                state = (
                    result.get("fatal")
                    or f"{result['seq_per_s']:,.0f} seq calls/s, {result['conc_per_s']:,.0f} conc calls/s"
                )
                print(f"  round {n + 1}: {cell:<10} {state} ({took:.0f} s)", flush=True)
    print()
    print(report(results, cells))
    failed = any("fatal" in r or r.get("errors") for rounds in results.values() for r in rounds)
    if "memory" in results and "redis" in results:
        ratio = _ratio(results["redis"], results["memory"], "seq_per_s", inverse=True)
        if ratio is not None:
            verdict = "met" if ratio <= GOAL else "NOT met"
            print(f"\nredis / memory time per call (sequential): {ratio:.2f}x (goal <= {GOAL}x: {verdict})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    for cell, rounds in results.items():
        for r in rounds:
            if "fatal" in r or r.get("errors"):
                print(f"{cell}: {r.get('fatal') or r.get('first_error')}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
