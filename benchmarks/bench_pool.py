#!/usr/bin/env python3
"""Many servers held at once (issue 11): N HTTP sessions in one client, and a pool of stdio servers.

Theory of operation
-------------------
Part 1, sessions: for each N of ``--sessions`` (default 10,100,1000) a FRESH
``trimcp serve --http 127.0.0.1:0`` (the bundled reference server, Streamable HTTP,
spec 2025-11-25 basic/transports) is started, its URL read from its stderr, and a
fresh worker process (``pool_worker.sessions_job``) opens N ``trimcp.open_client(url)``
sessions, each in its own task holding its context manager, started together under
a connect concurrency of ``--connect-concurrency`` (50).  With all N open it reads
the client's and the server's VmRSS (per session = delta / N over a warm baseline),
the client's open fds, then makes ``--calls`` ``echo`` calls from ``--callers`` (8)
tasks picking sessions round-robin across all N, and reports p50/p99 per call.  The
issue's target: holding 1 000 idle sessions must not slow calls down, p50 and p99 at
the largest N within +-20% of the smallest N's.  Fresh server per N: the server's
RSS and its session table start clean each time.

Part 2, pool: ``trimcp.host.open_pool`` over ``--pool-servers`` (100) stdio servers
(``raw``: benchmarks/raw_server.py, which answers initialize and tools/list; ``ref``:
``python -m trimcp.reference``), with the pool's default stdio connect limit (3 at
once) and with ``stdio_limit=10``: ``connect_all()`` wall time, per-server connect
time, client RSS after, the summed RSS of its child processes, the pool's close time
and the children left after it.  When ``trimcp.host`` cannot be imported, part 2
prints "part 2 skipped: trimcp.host not available" and the run goes on.

Reading the numbers: the reference server costs ~2.2 ms of CPU per echo call and the
client ~1.1 ms, so 8 callers saturate a 2-CPU machine and p50/p99 are mostly queueing
(and whatever else runs on the machine: see the load average in the header).  The
CPU-per-call, idle-CPU and GC rows say where a difference between N comes from;
``--callers 1`` measures unsaturated latency, ``--gc-freeze`` freezes the client's
objects once the sessions are open.

Every worker and every server runs in its own process group with a hard timeout and
is killed by group at the end; everything listens and connects on 127.0.0.1 only.
Rounds (``--repeat R``) are interleaved over N; the table shows medians.

Run:   python benchmarks/bench_pool.py --quick        (1 round, 500 calls; ~1 minute without part 2)
       python benchmarks/bench_pool.py --repeat 3     (2000 calls a round)
       ... --sessions 10,1000 --calls 4000 --part 1   a subset
       ... --callers 1 --sessions 10,1000              unsaturated latency
       ... --part 2                                   the pool only (~2 minutes on 2 CPUs)
       ... --json out.json                            also writes every raw number
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_stdio import _fmt, _kill_group, _ratio

#: The issue's bound: p50/p99 at the largest N within this factor of the smallest N's.
LATENCY_BAND = 0.20
PARAMS: dict[str, dict[str, Any]] = {
    "full": {"calls": 2000, "warmup_calls": 200, "repeat": 1, "pool_servers": 100},
    "quick": {"calls": 500, "warmup_calls": 50, "repeat": 1, "pool_servers": 100},
}
SERVE = "import sys; from trimcp.cli import main; sys.exit(main(sys.argv[1:]))"


def start_server(log: Path, timeout: float = 15.0) -> tuple[subprocess.Popen[bytes], str]:
    """``trimcp serve --http 127.0.0.1:0``; returns it and the URL it announced on stderr.

    Its stderr goes to ``log`` (a pipe nobody reads could fill and block it, or break it)."""
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, "serve", "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            cwd=str(HERE.parent),
        )
    deadline = time.monotonic() + timeout
    while b"\n" not in (text := log.read_bytes()):
        if time.monotonic() > deadline or proc.poll() is not None:
            _kill_group(proc)
            proc.wait()
            raise SystemExit(f"trimcp serve did not announce its URL: {text.decode(errors='replace')!r}")
        time.sleep(0.02)
    line = text.decode().splitlines()[0]
    url = line.rsplit(" at ", 1)[1].strip()
    if not url.startswith("http://127.0.0.1:"):
        _kill_group(proc)
        proc.wait()
        raise SystemExit(f"unexpected announcement: {line!r}")
    return proc, url


def spawn_worker(job: dict[str, Any], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True, stdin=subprocess.DEVNULL
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return {"fatal": f"worker timed out after {timeout:.0f} s"}
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        _kill_group(proc)  # whatever it left in its group (a pool's children) goes too
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        return {"fatal": f"worker exit {proc.returncode}: {tail}"[:500]}
    return dict(json.loads(lines[-1]))


def run_sessions(n: int, ns: argparse.Namespace, p: dict[str, Any]) -> dict[str, Any]:
    log = Path(f"/tmp/bench_pool_server.{os.getpid()}.log")
    server, url = start_server(log)
    try:
        job = {
            "kind": "sessions",
            "url": url,
            "sessions": n,
            "server_pid": server.pid,
            "connect_concurrency": ns.connect_concurrency,
            "callers": ns.callers,
            "calls": ns.calls or p["calls"],
            "warmup_calls": p["warmup_calls"],
            "connect_timeout": 30.0,
            "open_timeout": 120.0,
            "settle": 0.5,
            "idle": 2.0,
            "gc_freeze": ns.gc_freeze,
            "calls_timeout": 120.0,
        }
        return spawn_worker(job, timeout=330.0)
    finally:
        _kill_group(server)
        server.wait()
        tail = log.read_text(errors="replace").splitlines()[1:]
        log.unlink(missing_ok=True)
        if tail:  # anything the server said past its announcement is worth seeing
            print(f"  server stderr ({n} sessions): {' | '.join(tail[-3:])[:300]}", file=sys.stderr)


def run_pool(kind: str, limit: int | None, servers: int) -> dict[str, Any]:
    job = {"kind": "pool", "server": kind, "servers": servers, "stdio_limit": limit, "pool_timeout": 240.0}
    return spawn_worker(job, timeout=300.0)


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of every number over the runs that did not fail; other fields from the first."""
    good = [r for r in runs if "fatal" not in r and "skipped" not in r]
    if not good:
        return runs[0] if runs else {"fatal": "no run"}
    out: dict[str, Any] = dict(good[0])
    for key, value in good[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = statistics.median(r[key] for r in good if isinstance(r.get(key), (int, float)))
    out["rounds"] = len(good)
    return out


SESSION_ROWS = (
    ("open all (s)", "open_s", "{:.2f}"),
    ("opened / failed", None, ""),
    ("client RSS/session (kB)", "rss_per_session_kb", "{:.1f}"),
    ("server RSS/session (kB)", "server_rss_per_session_kb", "{:.1f}"),
    ("client RSS after (MB)", "rss_after_kb", "{:.1f}"),
    ("client fds/session", "fds_per_session", "{:.2f}"),
    ("client CPU idle (%)", "idle_cpu_pct", "{:.1f}"),
    ("server CPU idle (%)", "server_idle_cpu_pct", "{:.1f}"),
    ("call p50 (ms)", "p50_ms", "{:.3f}"),
    ("call p99 (ms)", "p99_ms", "{:.3f}"),
    ("calls/s", "calls_per_s", "{:,.0f}"),
    ("client CPU/call (us)", "client_cpu_us", "{:.0f}"),
    ("server CPU/call (us)", "server_cpu_us", "{:.0f}"),
    ("client GC in calls (ms)", "gc_ms", "{:.1f}"),
    ("client GC max pause (ms)", "gc_max_pause_ms", "{:.2f}"),
    ("close all (s)", "close_s", "{:.2f}"),
)


def render_sessions(results: dict[int, dict[str, Any]]) -> list[str]:
    ns_ = list(results)
    lines = [f"{'sessions':26}" + "".join(f"{n:>12}" for n in ns_)]
    for label, key, fmt in SESSION_ROWS:
        cells = []
        for n in ns_:
            r = results[n]
            if key is None:
                cells.append(f"{_fmt(r.get('opened'), '{:.0f}')}/{_fmt(r.get('failed'), '{:.0f}')}")
            elif key == "rss_after_kb":
                v = r.get(key)
                cells.append(_fmt(None if v is None else v / 1024, fmt))
            else:
                cells.append(_fmt(r.get(key), fmt))
        lines.append(f"{label:26}" + "".join(f"{c:>12}" for c in cells))
    if len(ns_) >= 2:
        lo, hi = ns_[0], ns_[-1]
        for key, name in (("p50_ms", "p50"), ("p99_ms", "p99")):
            a, b = results[hi].get(key), results[lo].get(key)
            ok = a is not None and b is not None and b > 0 and abs(a / b - 1) <= LATENCY_BAND
            lines.append(
                f"  {name} at {hi} / at {lo}: {_ratio(a, b):>7}  (target within +-"
                f"{LATENCY_BAND:.0%})  {'met' if ok else 'NOT MET'}"
            )
    for n in ns_:
        r = results[n]
        for field in ("fatal", "errors", "call_errors"):
            if field in r:
                lines.append(f"  {n}: {field}: {r[field]}")
        if r.get("open_timed_out") or r.get("calls_timed_out"):
            lines.append(
                f"  {n}: a phase hit its timeout (open {r.get('open_timed_out')}, calls {r.get('calls_timed_out')})"
            )
    return lines


POOL_ROWS = (
    ("connect_all (s)", "connect_all_s", "{:.2f}"),
    ("connected", "connected", "{:.0f}"),
    ("per-server connect p50 (s)", "connect_p50_s", "{:.3f}"),
    ("client RSS after (MB)", "rss_after_kb", "{:.1f}"),
    ("children", "children", "{:.0f}"),
    ("children RSS total (MB)", "children_rss_kb", "{:.1f}"),
    ("close (s)", "close_s", "{:.2f}"),
    ("children left after close", "children_left", "{:.0f}"),
)


def render_pool(results: dict[str, dict[str, Any]]) -> list[str]:
    cols = list(results)
    width = max(14, *(len(c) + 2 for c in cols))
    lines = [f"{'':28}" + "".join(f"{c:>{width}}" for c in cols)]
    for label, key, fmt in POOL_ROWS:
        cells = []
        for c in cols:
            v = results[c].get(key)
            if key.endswith("_kb") and v is not None:
                v = v / 1024
            cells.append(_fmt(v, fmt))
        lines.append(f"{label:28}" + "".join(f"{x:>{width}}" for x in cells))
    for c in cols:
        r = results[c]
        if "fatal" in r:
            lines.append(f"  {c}: {r['fatal']}")
        elif r.get("states") and set(r["states"]) != {"connected"}:
            lines.append(f"  {c}: states {r['states']}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="fewer calls, one round")
    ap.add_argument("--json", metavar="PATH", help="also write every raw number as JSON")
    ap.add_argument("--sessions", default="10,100,1000", help="comma list of N (default 10,100,1000)")
    ap.add_argument("--calls", type=int, help="timed calls per N (default 2000; --quick 500)")
    ap.add_argument("--callers", type=int, default=8, help="concurrent callers, fixed for every N")
    ap.add_argument("--connect-concurrency", type=int, default=50, help="connects in flight at once")
    ap.add_argument("--repeat", type=int, help="rounds, interleaved over N; medians reported")
    ap.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() in the client once the sessions are open (shows the GC's share of p99)",
    )
    ap.add_argument("--part", default="1,2", help="which parts: 1 sessions, 2 pool (default both)")
    ap.add_argument("--pool-servers", type=int, help="stdio servers in the pool (default 100)")
    ap.add_argument("--pool-kinds", default="raw,ref", help="pool servers: raw (raw_server.py), ref (reference)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.worker:
        sys.path.insert(0, str(HERE.parent))
        from pool_worker import run_job

        print(json.dumps(run_job(json.loads(ns.worker))), flush=True)
        return 0
    mode = "quick" if ns.quick else "full"
    p = PARAMS[mode]
    repeat = max(1, ns.repeat or p["repeat"])
    parts = set(ns.part.split(","))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    report: dict[str, Any] = {
        "meta": {
            "mode": mode,
            "repeat": repeat,
            "python": sys.version.split()[0],
            "nofile": [soft, hard],
            "load_start": os.getloadavg()[0],
        }
    }
    out_lines: list[str] = []
    if "1" in parts:
        sizes = [int(x) for x in ns.sessions.split(",") if x]
        runs: dict[int, list[dict[str, Any]]] = {n: [] for n in sizes}
        for rep in range(repeat):
            for n in sizes:
                print(f"  [{rep + 1}/{repeat}] {n} sessions ...", file=sys.stderr, flush=True)
                runs[n].append(run_sessions(n, ns, p))
        results = {n: median_of(r) for n, r in runs.items()}
        report["sessions"] = {"raw": runs, "median": results}
        out_lines.append(
            f"part 1: N HTTP sessions in one client vs a fresh `trimcp serve --http` per N; "
            f"{ns.calls or p['calls']} echo calls from {ns.callers} callers round-robin; "
            f"connect concurrency {ns.connect_concurrency}; fd limit {soft}"
        )
        out_lines += render_sessions(results)
    if "2" in parts:
        servers = ns.pool_servers or p["pool_servers"]
        pool: dict[str, list[dict[str, Any]]] = {}
        skipped = False
        for rep in range(repeat):
            for kind in ns.pool_kinds.split(","):
                for limit in (None, 10):
                    col = f"{kind}/{'limit10' if limit else 'default'}"
                    print(f"  [{rep + 1}/{repeat}] pool of {servers} {col} ...", file=sys.stderr, flush=True)
                    res = run_pool(kind, limit, servers)
                    if "skipped" in res:
                        skipped = True
                        break
                    pool.setdefault(col, []).append(res)
                if skipped:
                    break
            if skipped:
                break
        if skipped:
            out_lines.append("part 2 skipped: trimcp.host not available")
            report["pool"] = {"skipped": "trimcp.host not available"}
        else:
            presults = {c: median_of(r) for c, r in pool.items()}
            report["pool"] = {"raw": pool, "median": presults}
            out_lines.append(f"part 2: a pool of {servers} stdio servers (trimcp.host.open_pool)")
            out_lines += render_pool(presults)
    report["meta"]["load_end"] = os.getloadavg()[0]
    print(
        f"bench_pool ({mode}); python {report['meta']['python']}; loadavg {report['meta']['load_start']:.2f}"
        f" -> {report['meta']['load_end']:.2f}; medians of {repeat}"
    )
    print("\n".join(out_lines))
    if ns.json:
        Path(ns.json).write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
