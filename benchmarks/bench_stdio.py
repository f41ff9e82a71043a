#!/usr/bin/env python3
"""stdio client benchmark: trimcp vs the official ``mcp`` SDK client vs a raw Trio floor.

Theory of operation
-------------------
One run measures every client against the same stdio servers and prints one table of
absolute numbers and ratios, then the issue's targets marked met / not met.

Clients (columns)
  floor       a minimal Trio client, no MCP library: ``trio.lowlevel.open_process``, JSON
              lines written and read by hand, one request at a time read inline (no reader
              task).  Concurrent calls need a reader task, so its concurrent row uses one.
  floor-mux   the same with a reader task + one ``trio.Event`` per request for everything
              (the architecture any real client needs: the server may send requests and
              notifications at any time).  Shows what the task hop costs.
  trimcp      ``trimcp.open_client`` + ``ClientSession.call_tool``.
  mcp/asyncio the official SDK client (``stdio_client`` + ``ClientSession``), asyncio backend.
  mcp/trio    the same under ``anyio.run(..., backend="trio")``.

Servers (sections)
  raw   benchmarks/raw_server.py, the primary server (dependency free, as fast as Python).
  sdk   tests/servers/mcp_sdk_server.py (official SDK ``MCPServer``), the secondary.

Metrics
  connect+init   spawn + initialize + notifications/initialized, median of N after one
                 warm-up connection (reported as "first connect"; the client library is
                 imported before it, import cost has its own table).  The floor's number is
                 spawn + the server's own startup + one round trip, so a client's own
                 connect cost is its "overhead vs floor" row.
  close          leaving the client context (stdin closed, child reaped), median.
  sequential     echo calls/s after a warm-up, in rounds (median round); client CPU per
                 call from ``time.process_time()`` deltas in the client process (the server is
                 a child process, so its CPU is not counted).
  concurrent     64 tasks sharing one session, N calls per round, median round.
  10 MB result   one tools/call whose text is 10,000,000 bytes; median of K; client CPU too.
                 (The SDK server also sends it as structuredContent, so its line is ~20 MB.)
  import         fresh ``python -c "<imports>"`` minus ``python -c "pass"``, median of M (also
                 the import's own in-process time); RSS = VmRSS after the import minus bare
                 python's.

Targets (from the issue; evaluated on the raw server): trimcp >= 3x the official client's
sequential calls/s (gate: the faster official backend); trimcp client CPU per call <= 1.5x
the floor's (gate: the inline floor; floor-mux shown for information); 10 MB result <= 2x
the floor's time; import <= 300 ms; RSS after import <= 40 MB over bare python.

Noise: round trips over pipes are scheduler-bound.  Unpinned (the default, the realistic
case) client and server sit on different CPUs and every round trip pays a cross-CPU wake-up;
on a VM an idle vCPU's wake-up is slow and is charged to the waking process, so per-call
numbers swing (the floor's CPU per call measured 26-72 us on the same 2-vCPU VM).  ``--pin
CPU`` puts each worker and its server on one CPU: round trips become plain context switches
and calls/s ~ 1 / (client + server CPU per call), reproducible to a few percent -- use it to
compare CPU costs.  The header prints the load average and flags a busy machine; ``--repeat
N`` runs every worker N times, interleaved, and reports medians.

Isolation and robustness: every (client, server) pair runs in its own worker process
(``--worker``), so imports, caches and the CPU clock never mix; the parent only
orchestrates.  Workers get a hard timeout and are killed by process group; every server is
spawned by the client under test (or by the floor) and exits on stdin EOF, so a killed worker
never leaves one behind.  Each phase has its own deadline, so one failure costs one row.
The table's structure is fixed: a failed or skipped cell prints ``n/a``, the reason follows
the table.

Modules: this file is the command and the parent side (workers, import probes,
orchestration); ``stdio_config`` holds the parameters and targets, ``stdio_clients`` the
clients, ``stdio_worker`` one worker's phases, ``stdio_report`` the table and the targets.

Run:   python benchmarks/bench_stdio.py            (full, ~2 minutes)
       python benchmarks/bench_stdio.py --quick    (CI smoke, < 60 s)
       ... --json out.json   also writes every raw number
       ... --repeat 3        medians over 3 interleaved runs of every worker
       ... --pin 1           client and server on CPU 1 (stable CPU-cost comparison)
       ... --clients trimcp,floor --servers raw   a subset (other cells print n/a)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from stdio_config import BASELINE, BIG, CLIENTS, CONCURRENCY, IMPORTS, PARAMS, SERVERS, server_argv
from stdio_report import _fmt, _ratio, evaluate_targets, render, summarize_repeats
from stdio_worker import run_worker

#: ``bench_http.py`` reuses these three.
__all__ = ["_fmt", "_kill_group", "_ratio", "main"]


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def spawn_worker(job: dict[str, Any], timeout: float, pythonpath: str | None = None) -> dict[str, Any]:
    """Run one worker in a fresh process (its own process group); kill it on timeout.
    ``pythonpath``: import trimcp from that checkout instead of ours."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)]
    env = None if pythonpath is None else {**os.environ, "PYTHONPATH": pythonpath}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        env=env,
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
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        return {"fatal": f"worker exit {proc.returncode}: {tail}"[:500]}
    return json.loads(lines[-1])


def measure_imports(runs: int) -> dict[str, Any]:
    """Fresh-interpreter import cost and RSS, interleaved so drift hits every row alike."""
    probe = (
        "import time as _t\n_t0=_t.perf_counter()\n{code}\n_t1=_t.perf_counter()\n"
        "import sys\nfor _l in open('/proc/self/status'):\n"
        "    if _l.startswith(('VmRSS', 'VmHWM')): sys.stdout.write(_l)\n"
        "sys.stdout.write('INPROC %f\\n' % ((_t1-_t0)*1e3))\n"
    )
    raw: dict[str, dict[str, list[float]]] = {
        k: {"wall_ms": [], "inproc_ms": [], "rss_kb": [], "hwm_kb": []} for k in IMPORTS
    }
    errors: dict[str, str] = {}
    for _ in range(runs):
        for name, code in IMPORTS.items():
            if name in errors:
                continue
            t0 = time.perf_counter()
            res = subprocess.run(
                [sys.executable, "-c", probe.format(code=code)],
                capture_output=True,
                text=True,
                timeout=60,
                cwd="/",
                check=False,
            )
            wall = (time.perf_counter() - t0) * 1e3
            if res.returncode != 0:
                errors[name] = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "failed"
                continue
            fields = dict(ln.split(None, 1) for ln in res.stdout.splitlines() if ln.strip())
            raw[name]["wall_ms"].append(wall)
            raw[name]["inproc_ms"].append(float(fields["INPROC"]))
            raw[name]["rss_kb"].append(float(fields["VmRSS:"].split()[0]))
            raw[name]["hwm_kb"].append(float(fields["VmHWM:"].split()[0]))
    base = raw["python"]
    summary: dict[str, Any] = {}
    for name, vals in raw.items():
        if name in errors or not vals["wall_ms"]:
            summary[name] = {"error": errors.get(name, "no data")}
            continue
        summary[name] = {
            "wall_ms": statistics.median(vals["wall_ms"]),
            "import_ms": statistics.median(vals["wall_ms"]) - statistics.median(base["wall_ms"]),
            "inproc_ms": statistics.median(vals["inproc_ms"]),
            "rss_mb": statistics.median(vals["rss_kb"]) / 1024,
            "rss_delta_mb": (statistics.median(vals["rss_kb"]) - statistics.median(base["rss_kb"])) / 1024,
        }
    return {"raw": raw, "summary": summary}


def _version(module: str) -> str:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return "absent"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small N; < 60 s (CI smoke)")
    ap.add_argument("--json", metavar="PATH", help="also write every raw number as JSON")
    ap.add_argument("--clients", default=",".join(CLIENTS), help="comma list (default: all)")
    ap.add_argument("--servers", default=",".join(SERVERS), help="comma list (default: all)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every (client, server) worker N times, interleaved; report medians",
    )
    ap.add_argument(
        "--pin",
        type=int,
        metavar="CPU",
        help="pin every worker and its server to this one CPU (stable CPU-cost numbers)",
    )
    ap.add_argument(
        "--against",
        metavar="CHECKOUT",
        help=f"also run the trimcp client with trimcp imported from CHECKOUT (e.g. a worktree at "
        f"the commit before a change) as client {BASELINE}, interleaved with the others: "
        "before and after measured in one run",
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)

    if ns.worker:
        print(json.dumps(run_worker(json.loads(ns.worker))), flush=True)
        return 0

    mode = "quick" if ns.quick else "full"
    p = PARAMS[mode]
    chosen_clients = [c for c in ns.clients.split(",") if c]
    chosen_servers = [s for s in ns.servers.split(",") if s]
    started = time.perf_counter()
    load_start = os.getloadavg()
    have_mcp = importlib.util.find_spec("mcp") is not None
    report: dict[str, Any] = {
        "meta": {
            "mode": mode,
            "python": platform.python_version(),
            "trio": _version("trio"),
            "mcp": _version("mcp"),
            "anyio": _version("anyio"),
            "cpus": os.cpu_count(),
            "params": p,
            "big_bytes": BIG,
            "concurrency": CONCURRENCY,
            "repeat": max(1, ns.repeat),
            "pin": ns.pin,
            "against": ns.against,
            "load_start": " ".join(f"{x:.2f}" for x in load_start),
        },
        "results": {},
    }
    for server in SERVERS:
        if server not in chosen_servers:
            continue
        argv_ = server_argv(server)
        label = {
            "raw": "benchmarks/raw_server.py",
            "sdk": "tests/servers/mcp_sdk_server.py (mcp MCPServer)",
        }[server]
        clients = CLIENTS + ((BASELINE,) if ns.against else ())
        block: dict[str, Any] = {"label": label, "raw": {c: [] for c in clients}, "summary": {}}
        for rep_i in range(max(1, ns.repeat)):  # interleaved: a noisy minute hits every client alike
            for client in clients:
                if client.removesuffix("@base") not in chosen_clients:
                    res: dict[str, Any] = {"fatal": "not selected"}
                elif argv_ is None:
                    res = {"fatal": "server not installed (pip install -e '.[bench]')"}
                elif client.startswith("mcp/") and not have_mcp:
                    res = {"fatal": "the mcp package is not installed"}
                else:
                    job = {
                        "client": client.removesuffix("@base"),
                        "server": server,
                        "phases": p["phases"][server],
                        "connect_runs": p["connect_runs"][server],
                        "warmup_calls": p["warmup_calls"],
                        "seq_calls": p["seq_calls"][server],
                        "seq_rounds": p["seq_rounds"],
                        "conc_calls": p["conc_calls"][server],
                        "conc_rounds": p["conc_rounds"],
                        "big_runs": p["big_runs"][server],
                        "phase_timeout": p["worker_timeout"] / 4,
                        "pin": ns.pin,
                    }
                    print(
                        f"  [{rep_i + 1}/{max(1, ns.repeat)}] {client:12} against the {server} server ...",
                        file=sys.stderr,
                        flush=True,
                    )
                    tree = ns.against if client == BASELINE else None
                    res = spawn_worker(job, p["worker_timeout"], tree)
                block["raw"][client].append(res)
        for client in clients:
            block["summary"][client] = summarize_repeats(block["raw"][client])
        report["results"][server] = block
    print("  measuring imports ...", file=sys.stderr, flush=True)
    report["imports"] = measure_imports(p["import_runs"])
    report["imports"]["runs"] = p["import_runs"]
    report["targets"] = evaluate_targets(report)
    report["meta"]["elapsed_s"] = time.perf_counter() - started
    load_end = os.getloadavg()
    report["meta"]["load_end"] = " ".join(f"{x:.2f}" for x in load_end)
    # 1-minute load above half the cores (ours is ~1 busy core at a time) means company.
    report["meta"]["busy"] = max(load_start[0], load_end[0]) > max(1.5, 0.75 * (os.cpu_count() or 1))
    print(render(report))
    if ns.json:
        Path(ns.json).write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
