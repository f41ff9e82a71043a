#!/usr/bin/env python3
"""The HTTP server's cost per request, alone: instructions counted by callgrind, or a cProfile.

Theory of operation
-------------------
``bench_server.py`` compares servers side by side in calls/s and CPU from ``/proc``, which the
load of a shared machine moves.  This script measures the trimcp echo server of
``bench_server.py`` (``servers/trimcp_echo.py --http``) for before/after comparisons of a change:

``--callgrind``  runs the server twice under ``valgrind --tool=callgrind``, each time driven by
                 the untraced load generator of ``bench_server.py`` (``server_load.py``: raw
                 HTTP/1.1, no MCP library) for ``--calls`` N and then N + ``--delta`` requests
                 (``tools/call echo``; ``--inflight`` 1: one connection, back to back; more: that
                 many keep-alive connections sharing one session), stops it with SIGINT and prints
                 the difference of the two instruction totals divided by ``--delta``: what one
                 request costs the server, start-up, ``initialize`` and shut-down excluded.
``--profile F``  runs the server once under ``python -m cProfile -o F`` for ``--calls`` requests
                 (the profile includes start-up; sort by ``tottime`` to see the request path).

``--checkout DIR`` imports trimcp from another checkout (``PYTHONPATH=DIR``), for a before/after.

Run:   python benchmarks/server_cost.py --callgrind
       python benchmarks/server_cost.py --callgrind --inflight 64 --calls 20 --delta 20
       python benchmarks/server_cost.py --profile /tmp/server.prof --calls 3000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "trimcp_echo.py"
LOAD = HERE / "server_load.py"
START_TIMEOUT = 120.0


def _env(checkout: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if checkout:
        env["PYTHONPATH"] = checkout
    return env


def _load(job: dict[str, Any]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(LOAD), json.dumps(job)], capture_output=True, text=True, check=False, timeout=1800
    )
    if out.returncode:
        sys.exit(f"load failed:\n{out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if result.get("errors"):
        sys.exit(f"wrong answers: {result['first_error']}")
    return result


def serve_and_load(prefix: list[str], ns: argparse.Namespace, calls: int, log: Path) -> None:
    """Start the server under ``prefix``, send ``calls`` requests, stop it with SIGINT."""
    with open(log, "w") as out:
        server = subprocess.Popen(
            [*prefix, str(SERVER), "--http"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_env(ns.checkout),
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            found = re.search(r"PORT (\d+)", log.read_text(errors="replace"))
            if found:
                break
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"server did not start:\n{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        url = f"http://127.0.0.1:{found.group(1)}/mcp"
        if ns.inflight == 1:
            job = {"kind": "http-seq", "warmup": ns.warmup, "calls": calls, "rounds": 1}
        else:  # `calls` per connection; the load warms every connection with one call first
            job = {"kind": "http-inflight", "inflight": ns.inflight, "calls": calls}
        _load({**job, "url": url, "tool_arg": "text"})
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=300)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def callgrind(ns: argparse.Namespace) -> None:
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for calls in (ns.calls, ns.calls + ns.delta):
            out = Path(tmp) / f"cg.{calls}"
            log = Path(tmp) / f"log.{calls}"
            prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable]
            serve_and_load(prefix, ns, calls, log)
            found = re.search(r"Collected : (\d+)", log.read_text(errors="replace"))
            if found is None:
                sys.exit(f"callgrind run failed:\n{log.read_text(errors='replace')[-2000:]}")
            totals.append(int(found.group(1)))
    requests = ns.delta * ns.inflight
    print(
        f"server http inflight {ns.inflight}: {(totals[1] - totals[0]) / requests:,.0f} instructions per request "
        f"(callgrind, {ns.calls} and {ns.calls + ns.delta} requests per connection)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--calls", type=int, default=200, help="requests (per connection when --inflight > 1)")
    ap.add_argument("--delta", type=int, default=500, help="--callgrind: the second run sends this many more")
    ap.add_argument("--inflight", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--checkout", help="import trimcp from this checkout")
    ap.add_argument("--callgrind", action="store_true", help="count instructions per request under callgrind")
    ap.add_argument("--profile", help="write a cProfile of the server (start-up included) to this file")
    ns = ap.parse_args()
    if ns.callgrind:
        callgrind(ns)
    elif ns.profile:
        with tempfile.TemporaryDirectory() as tmp:
            serve_and_load([sys.executable, "-m", "cProfile", "-o", ns.profile], ns, ns.calls, Path(tmp) / "log")
        print(f"profile written to {ns.profile}")
    else:
        ap.error("give --callgrind or --profile")


if __name__ == "__main__":
    main()
