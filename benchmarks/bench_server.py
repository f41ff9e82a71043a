#!/usr/bin/env python3
"""Server benchmark: trimcp vs the official ``mcp`` 2.3.0 ``MCPServer`` vs fastmcp, one echo tool.

Theory of operation
-------------------
Every server offers the same tool, ``echo(text) -> text`` (``benchmarks/servers/``), with its
own defaults and its own HTTP stack (the official server and fastmcp: their Streamable HTTP
Starlette apps under uvicorn, as their documentation says; trimcp: ``serve_http``, its own HTTP/1.1 codec on
Trio).  One run measures every (server, transport) cell:

  servers   trimcp        ``trimcp.server.Server`` (servers/trimcp_echo.py)
            trimcp serve  ``trimcp serve --http``: the bundled reference server (its echo
                          takes ``message``; many more tools registered), HTTP only
            official      ``mcp.server.mcpserver.MCPServer`` (servers/mcp_echo.py)
            fastmcp       ``fastmcp.FastMCP`` (servers/fastmcp_echo.py), from its own venv
                          (``--setup`` makes .venv-fastmcp: fastmcp==4.2.3, mcp==2.3.0)
  HTTP      a fresh server per cell and round on 127.0.0.1 port 0; ``sequential``: one
            session, one keep-alive connection, calls back to back; ``50 sessions``: 50
            sessions, each on its own connection, ``calls`` each, all concurrently, from
            ``--load-procs`` (2) load processes started together; calls/s = all calls /
            (latest end - earliest start).  p50/p99: per-call latency of that phase.
  stdio     the load process spawns the server; sequential calls, then 50 requests kept in
            flight on the one session (pipelined; stdio has one session per process).
  RSS       the server's peak resident set (VmHWM, /proc/PID/status) at the end of the cell.

The load generator is ``server_load.py``: raw asyncio HTTP/1.1 and a raw line client, no MCP
library, the same code for every server, never in the server's process; it checks every answer
(the echoed text).  Rounds are interleaved with the cell order rotated each round; a cell's
numbers are medians over rounds, and a ratio is the median of the per-round ratios.

Goal (issue 15): trimcp >= 5x the official server's 50-session calls/s at a p99 no worse.

Noise: 2 shared cores carry the server and the load processes; absolute numbers swing ~2x
between runs, so compare only within one run (the header prints the load average).

``--against CHECKOUT`` adds the trimcp cells once more with trimcp imported from another checkout
(``trimcp@base``, ``trimcp serve@base``: the same server script, ``PYTHONPATH=CHECKOUT``), in the
same interleaved rounds, and a ``trimcp/@base`` ratio column: a before/after in one run.

Run:   python benchmarks/bench_server.py --setup    (once: the fastmcp venv)
       python benchmarks/bench_server.py            (full: 3 rounds, a few minutes)
       python benchmarks/bench_server.py --quick    (1 round, < 90 s)
       python benchmarks/bench_server.py --smoke    (tiny N, < 30 s: every server answers
                                                      correctly and the table prints)
       ... --json out.json  --servers trimcp,official  --transports http
Exit status 1 when any answer was wrong or a cell failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_stdio import _fmt, _kill_group, _ratio
from server_load import cpu_seconds, per_call_us, vm_hwm_kb

FASTMCP_VENV = Path(os.environ.get("TRIMCP_FASTMCP_VENV", str(ROOT / ".venv-fastmcp")))
FASTMCP_PINS = ["fastmcp==4.2.3", "mcp==2.3.0"]
SERVERS = ("trimcp", "trimcp serve", "official", "fastmcp", "raw")
TRANSPORTS = ("http", "stdio")
SESSIONS = 50
#: Calls in flight at once on one session (each on a connection of its own over HTTP).
INFLIGHT = 64
TARGET = 5.0
#: Issue 29: sequential and 64-in-flight calls/s against the official server, and against the raw one.
TARGETS_29 = {"seq_vs_official": 5.0, "inflight_vs_official": 10.0, "inflight_vs_raw": 0.3}
PARAMS: dict[str, dict[str, Any]] = {
    "full": {"rounds": 3, "warmup": 50, "seq_calls": 500, "conc_calls": 40, "inflight_calls": 40},
    "quick": {"rounds": 1, "warmup": 20, "seq_calls": 200, "conc_calls": 10, "inflight_calls": 20},
    "smoke": {"rounds": 1, "warmup": 2, "seq_calls": 10, "conc_calls": 2, "inflight_calls": 2},
}
CELL_TIMEOUT = 120.0
START_TIMEOUT = 30.0


# =========================================================================== what to run


def fastmcp_python() -> str | None:
    """An interpreter that has fastmcp: ours, else the benchmark's venv."""
    if importlib.util.find_spec("fastmcp") is not None:
        return sys.executable
    py = FASTMCP_VENV / "bin" / "python"
    return str(py) if py.exists() else None


#: The suffix of a trimcp cell run from the ``--against`` checkout (the code before a change).
BASE_SUFFIX = "@base"
#: The ``--against`` checkout (set by ``main``).
AGAINST: Path | None = None


def commands(server: str, transport: str) -> tuple[list[str], str] | str:
    """(command line, the echo tool's argument name), or why the cell cannot run."""
    if server.endswith(BASE_SUFFIX):
        what = commands(server[: -len(BASE_SUFFIX)], transport)
        if isinstance(what, str) or AGAINST is None:
            return what if isinstance(what, str) else "no --against checkout"
        # ``env`` execs the interpreter: same pid (RSS), same process group (kill).
        return ["env", f"PYTHONPATH={AGAINST}", *what[0]], what[1]
    py = sys.executable
    if server == "trimcp":
        cmd = [py, str(HERE / "servers" / "trimcp_echo.py")]
    elif server == "trimcp serve":
        if transport != "http":
            return "HTTP only (the stdio Server is the trimcp column)"
        # -P: no current directory on sys.path, so ``--against`` (PYTHONPATH=CHECKOUT) is what
        # ``-m`` imports, not the checkout the benchmark runs from.
        return [py, "-P", "-m", "trimcp.cli", "serve", "--http", "127.0.0.1:0"], "message"
    elif server == "raw":
        # The floor: JSON-RPC with no MCP library (stdio: raw_server.py; HTTP: uvloop + orjson).
        return (
            [py, str(HERE / "raw_http_server.py")] if transport == "http" else [py, str(HERE / "raw_server.py")]
        ), "text"
    elif server == "official":
        cmd = [py, str(HERE / "servers" / "mcp_echo.py")]
    else:
        fpy = fastmcp_python()
        if fpy is None:
            return f"fastmcp not installed (run {Path(__file__).name} --setup)"
        cmd = [fpy, str(HERE / "servers" / "fastmcp_echo.py")]
    return (cmd + ["--http"] if transport == "http" else cmd), "text"


def setup() -> int:
    """Make the fastmcp venv (fastmcp 4 pins mcp<3, so it could share ours; kept apart anyway)."""
    if not (FASTMCP_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(FASTMCP_VENV)], check=True, timeout=300)
    subprocess.run(
        [str(FASTMCP_VENV / "bin" / "python"), "-m", "pip", "install", "-q", *FASTMCP_PINS], check=True, timeout=600
    )
    print(f"fastmcp ready in {FASTMCP_VENV}")
    return 0


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "FASTMCP_SHOW_SERVER_BANNER": "false"}


# =========================================================================== one cell


def _load(job: dict[str, Any], **popen: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE / "server_load.py"), json.dumps(job)],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=_env(),
        **popen,
    )


def _result(proc: subprocess.Popen[str], deadline: float) -> dict[str, Any]:
    try:
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise RuntimeError("load process timed out") from None
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"load exit {proc.returncode}: {' | '.join(err.strip().splitlines()[-2:])}"[:300])
    return dict(json.loads(lines[-1]))


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _start_server(cmd: list[str], log: Any) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=_env()
    )
    deadline = time.monotonic() + START_TIMEOUT
    pattern = re.compile(r"PORT (\d+)|http://127\.0\.0\.1:(\d+)/")
    while time.monotonic() < deadline:
        text = Path(log.name).read_text(errors="replace")
        m = pattern.search(text)
        if m:
            return proc, int(m.group(1) or m.group(2))
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}: {text.strip()[-300:]}")
        time.sleep(0.05)
    _kill_group(proc)
    raise RuntimeError(f"server printed no port within {START_TIMEOUT:.0f} s")


def run_http(cmd: list[str], tool_arg: str, p: dict[str, Any], load_procs: int) -> dict[str, Any]:
    deadline = time.monotonic() + CELL_TIMEOUT
    with tempfile.NamedTemporaryFile("w+", prefix="bench_server_", suffix=".log") as log:
        server, port = _start_server(cmd, log)
        loads: list[subprocess.Popen[str]] = []
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            seq = _result(
                _load(
                    {
                        "kind": "http-seq",
                        "url": url,
                        "tool_arg": tool_arg,
                        "warmup": p["warmup"],
                        "calls": p["seq_calls"],
                        "rounds": 1,
                        "server_pid": server.pid,
                    }
                ),
                deadline,
            )
            inflight = _result(
                _load(
                    {
                        "kind": "http-inflight",
                        "url": url,
                        "tool_arg": tool_arg,
                        "inflight": INFLIGHT,
                        "calls": p["inflight_calls"],
                        "server_pid": server.pid,
                    }
                ),
                deadline,
            )
            shares = [SESSIONS // load_procs + (i < SESSIONS % load_procs) for i in range(load_procs)]
            loads = [
                _load(
                    {"kind": "http-conc", "url": url, "tool_arg": tool_arg, "sessions": n, "calls": p["conc_calls"]},
                    stdin=subprocess.PIPE,
                )
                for n in shares
            ]
            for proc in loads:  # every session open before any call
                assert proc.stdout is not None
                line = proc.stdout.readline()
                if line.strip() != "READY":
                    raise RuntimeError(
                        f"load process not ready: {line.strip()[:200]} "
                        f"{proc.stderr.read()[-300:] if proc.stderr else ''}"
                    )
            server0 = cpu_seconds(server.pid)
            for proc in loads:
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            parts = [_result(proc, deadline) for proc in loads]
            server1 = cpu_seconds(server.pid)
            rss = vm_hwm_kb(server.pid)
        finally:
            for proc in loads:
                _kill_group(proc)
            _kill_group(server)
            server.wait(timeout=10)
    lat = [x for part in parts for x in part["lat_us"]]
    calls = sum(part["calls"] for part in parts)
    span = max(part["end"] for part in parts) - min(part["start"] for part in parts)
    errors = seq["errors"] + inflight["errors"] + sum(part["errors"] for part in parts)
    first = (
        seq["first_error"]
        or inflight["first_error"]
        or next((part["first_error"] for part in parts if part["first_error"]), None)
    )
    return {
        "seq_per_s": seq["seq_per_s"],
        "seq_p50_ms": _ms(_pct(seq["seq_lat_us"], 0.5)),
        "seq_server_cpu_us": seq["server_cpu_us"],
        "inflight_per_s": inflight["inflight_per_s"],
        "inflight_server_cpu_us": inflight["server_cpu_us"],
        "conc_server_cpu_us": per_call_us(server0, server1, calls),
        "conc_per_s": calls / span if span > 0 else None,
        "p50_ms": _ms(_pct(lat, 0.5)),
        "p99_ms": _ms(_pct(lat, 0.99)),
        "rss_mb": rss / 1024 if rss else None,
        "load_cpu_us": statistics.median([part["load_cpu_us"] for part in parts]),
        "errors": errors,
        "first_error": first,
    }


def run_stdio(cmd: list[str], tool_arg: str, p: dict[str, Any]) -> dict[str, Any]:
    r = _result(
        _load(
            {
                "kind": "stdio",
                "cmd": cmd,
                "tool_arg": tool_arg,
                "warmup": p["warmup"],
                "calls": p["seq_calls"],
                "rounds": 1,
                "inflight": SESSIONS,
                "inflight_calls": p["inflight_calls"],
            }
        ),
        time.monotonic() + CELL_TIMEOUT,
    )
    return {
        "seq_per_s": r["seq_per_s"],
        "seq_p50_ms": _ms(_pct(r["seq_lat_us"], 0.5)),
        "conc_per_s": r["conc_per_s"],
        "p50_ms": _ms(_pct(r["lat_us"], 0.5)),
        "p99_ms": _ms(_pct(r["lat_us"], 0.99)),
        "rss_mb": r["rss_kb"] / 1024 if r["rss_kb"] else None,
        "errors": r["errors"],
        "first_error": r["first_error"],
    }


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000


def run_cell(server: str, transport: str, p: dict[str, Any], load_procs: int) -> dict[str, Any]:
    what = commands(server, transport)
    if isinstance(what, str):
        return {"skip": what}
    cmd, tool_arg = what
    try:
        if transport == "http":
            return run_http(cmd, tool_arg, p, load_procs)
        return run_stdio(cmd, tool_arg, p)
    except (RuntimeError, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
        return {"fatal": str(exc)[:300]}


# =========================================================================== report

ROWS = (
    ("sequential calls/s", "seq_per_s", "{:,.0f}", True),
    ("sequential p50 ms", "seq_p50_ms", "{:.2f}", False),
    ("  server CPU/req us", "seq_server_cpu_us", "{:.0f}", False),
    ("64 in flight calls/s", "inflight_per_s", "{:,.0f}", True),
    ("  server CPU/req us", "inflight_server_cpu_us", "{:.0f}", False),
    ("50 sessions calls/s", "conc_per_s", "{:,.0f}", True),
    ("50 sessions p50 ms", "p50_ms", "{:.1f}", False),
    ("50 sessions p99 ms", "p99_ms", "{:.1f}", False),
    ("  server CPU/req us", "conc_server_cpu_us", "{:.0f}", False),
    ("server peak RSS MB", "rss_mb", "{:.1f}", False),
)
#: Rows of the HTTP table only (stdio has one in-flight phase: its "50 in flight").
HTTP_ONLY = {"inflight_per_s", "inflight_server_cpu_us", "seq_server_cpu_us", "conc_server_cpu_us"}
STDIO_LABELS = {"conc_per_s": "50 in flight calls/s", "p50_ms": "50 in flight p50 ms", "p99_ms": "50 in flight p99 ms"}


def _median(rounds: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rounds if isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def _round_ratio(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str) -> float | None:
    """The median over rounds of a's value / b's value in the same round."""
    pairs = [(x.get(key), y.get(key)) for x, y in zip(a, b)]
    ratios = [x / y for x, y in pairs if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y]
    return statistics.median(ratios) if ratios else None


def render(runs: dict[tuple[str, str], list[dict[str, Any]]], servers: list[str], transports: list[str]) -> list[str]:
    lines: list[str] = []
    w = max(14, *(len(s) + 2 for s in servers))
    for transport in transports:
        cols = [s for s in servers if not (transport == "stdio" and s.startswith("trimcp serve"))]
        peers = [c for c in ("official", "fastmcp", "raw", "trimcp" + BASE_SUFFIX) if c in cols]
        lines.append(
            f"\n{transport}"
            + " " * (22 - len(transport))
            + "".join(f"{c:>{w}}" for c in cols)
            + "".join(f"{'trimcp/' + peer.replace('trimcp', ''):>{w + 3}}" for peer in peers)
        )
        for label, key, fmt, _ in ROWS:
            if transport == "stdio" and key in HTTP_ONLY:
                continue
            label = STDIO_LABELS.get(key, label) if transport == "stdio" else label
            row = f"  {label:20}" + "".join(
                f"{_fmt(_median(runs.get((s, transport), []), key), fmt):>{w}}" for s in cols
            )
            mine = runs.get(("trimcp", transport), [])
            for peer in peers:
                row += f"{_ratio(_round_ratio(mine, runs.get((peer, transport), []), key), 1.0):>{w + 3}}"
            lines.append(row)
    notes = []
    for (server, transport), rounds in runs.items():
        for r in rounds:
            for kind in ("skip", "fatal", "first_error"):
                if r.get(kind):
                    notes.append(f"  {server} / {transport}: {kind}: {r[kind]}")
                    break
    return lines + sorted(set(notes))


def target_lines(runs: dict[tuple[str, str], list[dict[str, Any]]], transports: list[str]) -> list[str]:
    out = []
    for transport in transports:
        for mine in ("trimcp", "trimcp serve", "trimcp" + BASE_SUFFIX, "trimcp serve" + BASE_SUFFIX):
            a, b = runs.get((mine, transport)), runs.get(("official", transport))
            if not a or not b:
                continue
            speed = _round_ratio(a, b, "conc_per_s")
            p99 = _round_ratio(a, b, "p99_ms")
            met = speed is not None and p99 is not None and speed >= TARGET and p99 <= 1.0
            out.append(
                f"  {transport:5} {mine:12} 50-session calls/s vs official {_ratio(speed, 1.0):>8} "
                f"(target >= {TARGET:g}x), p99 vs official {_ratio(p99, 1.0):>7} (target <= 1x)  "
                f"{'met' if met else 'NOT MET'}"
            )
        a, official, raw = (
            runs.get(("trimcp", transport)),
            runs.get(("official", transport)),
            runs.get(("raw", transport)),
        )
        inflight = "inflight_per_s" if transport == "http" else "conc_per_s"
        checks = [
            ("sequential vs official", official, "seq_per_s", TARGETS_29["seq_vs_official"]),
            (
                f"{INFLIGHT if transport == 'http' else SESSIONS} in flight vs official",
                official,
                inflight,
                TARGETS_29["inflight_vs_official"],
            ),
            (
                f"{INFLIGHT if transport == 'http' else SESSIONS} in flight vs raw",
                raw,
                inflight,
                TARGETS_29["inflight_vs_raw"],
            ),
        ]
        for name, peer, key, limit in checks:
            if not a or not peer:
                continue
            ratio = _round_ratio(a, peer, key)
            met = ratio is not None and ratio >= limit
            out.append(
                f"  {transport:5} trimcp       {name:31} {_ratio(ratio, 1.0):>8} (target >= {limit:g}x)  "
                f"{'met' if met else 'NOT MET'}"
            )
        base = runs.get(("trimcp" + BASE_SUFFIX, transport))
        if a and base:
            p99 = _round_ratio(a, base, "p99_ms")
            met = p99 is not None and p99 <= 1.0
            out.append(
                f"  {transport:5} trimcp       50-session p99 vs @base         {_ratio(p99, 1.0):>8} (target <= 1x)  "
                f"{'met' if met else 'NOT MET'}"
            )
    return out


# =========================================================================== main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    mode_group = ap.add_mutually_exclusive_group()
    mode_group.add_argument("--quick", action="store_true", help="one round, small N (< 90 s)")
    mode_group.add_argument("--smoke", action="store_true", help="tiny N: checks every server answers (< 30 s)")
    ap.add_argument("--setup", action="store_true", help=f"create {FASTMCP_VENV} with {' '.join(FASTMCP_PINS)}")
    ap.add_argument("--json", metavar="FILE", help="also write every raw number")
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--transports", default=",".join(TRANSPORTS))
    ap.add_argument("--rounds", type=int, help="override the mode's number of rounds")
    ap.add_argument(
        "--against",
        metavar="CHECKOUT",
        type=Path,
        help="also run the trimcp cells with trimcp imported from CHECKOUT (same rounds)",
    )
    ap.add_argument("--load-procs", type=int, default=2, help="load processes sharing the 50 HTTP sessions")
    ns = ap.parse_args(argv)
    if ns.setup:
        return setup()
    mode = "smoke" if ns.smoke else "quick" if ns.quick else "full"
    p = dict(PARAMS[mode])
    if ns.rounds:
        p["rounds"] = ns.rounds
    servers = [s for s in SERVERS if s in ns.servers.split(",")]
    if ns.against:
        global AGAINST
        AGAINST = ns.against.resolve()
        if not (AGAINST / "trimcp" / "__init__.py").exists():
            ap.error(f"--against {ns.against}: no trimcp package there")
        servers += [s + BASE_SUFFIX for s in ("trimcp", "trimcp serve") if s in servers]
    transports = [t for t in TRANSPORTS if t in ns.transports.split(",")]
    if not servers or not transports or not 1 <= ns.load_procs <= SESSIONS:
        ap.error(
            f"--servers from {','.join(SERVERS)}; --transports from {','.join(TRANSPORTS)}; --load-procs 1..{SESSIONS}"
        )
    cells = [(s, t) for t in transports for s in servers if not (t == "stdio" and s.startswith("trimcp serve"))]
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {c: [] for c in cells}
    t0 = time.monotonic()
    for rnd in range(p["rounds"]):
        shift = rnd % len(cells)
        for server, transport in cells[shift:] + cells[:shift]:  # rotated: no cell always goes first
            runs[(server, transport)].append(run_cell(server, transport, p, ns.load_procs))
            print(f"  [{rnd + 1}/{p['rounds']}] {server} / {transport}: done", file=sys.stderr, flush=True)
    print(
        f"bench_server ({mode}); python {sys.version.split()[0]}; {os.cpu_count()} CPUs; "
        f"loadavg {os.getloadavg()[0]:.2f}; {p['rounds']} round(s), medians; {SESSIONS} sessions x "
        f"{p['conc_calls']} calls over {ns.load_procs} load processes; {time.monotonic() - t0:.0f} s"
        + (f"; {BASE_SUFFIX} = trimcp from {AGAINST}" if AGAINST else "")
    )
    print("\n".join(render(runs, servers, transports)))
    print("targets (issues 15 and 29):")
    print("\n".join(target_lines(runs, transports)))
    if ns.json:
        Path(ns.json).write_text(json.dumps({f"{s}/{t}": r for (s, t), r in runs.items()}, indent=2))
    bad = [r for rounds in runs.values() for r in rounds if r.get("fatal") or r.get("errors")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
