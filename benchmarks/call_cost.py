#!/usr/bin/env python3
"""The client's cost per call, alone: CPU time, or instructions counted by callgrind.

Theory of operation
-------------------
``bench_http.py`` and ``bench_stdio.py`` compare clients side by side, with rates that the
machine's load moves.  This script measures one client at a time, for profiling and for
before/after comparisons of a change: it connects (``trimcp.open_client``, or the floor of
``bench_http.py`` / ``bench_stdio.py``), makes ``--warmup`` calls, then ``--calls`` calls
(``--inflight`` at a time, sharing the session; the floor opens one connection per lane over
HTTP) of the floor servers' ``echo`` tool, and prints the client's CPU per call
(``time.process_time``).

CPU time on a shared machine is noisy; an instruction count is not.  ``--callgrind`` runs
this same script twice under ``valgrind --tool=callgrind`` (``--calls`` N and N + ``--delta``,
the server a child process that is not traced), and prints the difference of the two totals
divided by ``--delta``: the instructions one call costs, start-up and connection excluded.
``--profile FILE`` writes a cProfile of the measured calls.

Run:   python benchmarks/call_cost.py --transport http --client trimcp --calls 2000
       python benchmarks/call_cost.py --transport stdio --client floor --callgrind
       python benchmarks/call_cost.py --transport http --inflight 64 --callgrind --delta 1280
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ARGS = {"text": "hi"}


async def _http_sessions(client: str, url: str, lanes: int) -> tuple[list[Any], Any]:
    """``lanes`` objects with ``async call()``: trimcp's one session, or the floor's connections."""
    if client == "floor":
        from bench_http import _RawFloor

        floors = []
        for _ in range(lanes):
            f = _RawFloor(url)
            await f.initialize()
            floors.append(f)

        async def close() -> None:
            for f in floors:
                await f.aclose()

        return floors, close
    import trimcp

    cm = trimcp.open_client(url, revision="2025-11-25")
    session = await cm.__aenter__()

    class _One:
        async def call(self) -> None:
            result = await session.call_tool("echo", ARGS)
            if result.is_error:
                raise RuntimeError("tool error")

    async def close_trimcp() -> None:
        await cm.__aexit__(None, None, None)

    return [_One()] * lanes, close_trimcp


async def run(ns: argparse.Namespace) -> None:
    import contextlib

    import trio

    async with contextlib.AsyncExitStack() as stack:
        if ns.transport == "http":
            lanes, close = await _http_sessions(ns.client, ns.url, ns.inflight)
            stack.push_async_callback(close)
        else:
            from stdio_clients import floor_connect, trimcp_connect

            argv = [sys.executable, str(HERE / "raw_server.py")]
            if ns.client == "floor":
                session = await stack.enter_async_context(floor_connect(argv, dict(os.environ), ns.inflight > 1))
            else:
                session = await stack.enter_async_context(trimcp_connect(argv, dict(os.environ)))

            class _Lane:
                async def call(self) -> None:
                    await session.call("echo", ARGS)

            lanes = [_Lane()] * ns.inflight
        for _ in range(ns.warmup):
            await lanes[0].call()
        per = ns.calls // ns.inflight

        async def lane(one: Any) -> None:
            for _ in range(per):
                await one.call()

        profiler = None
        if ns.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        c0, t0 = time.process_time(), time.perf_counter()
        if ns.inflight == 1:
            await lane(lanes[0])
        else:
            async with trio.open_nursery() as nursery:
                for one in lanes:
                    nursery.start_soon(lane, one)
        t1, c1 = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(ns.profile)
        n = per * ns.inflight
        print(f"calls {n}  cpu/call {(c1 - c0) / n * 1e6:.1f} us  calls/s {n / (t1 - t0):.0f}")


def callgrind(ns: argparse.Namespace, argv: list[str]) -> None:
    """Run this script under callgrind for N and N + delta calls; print instructions per call."""
    totals = []
    with tempfile.TemporaryDirectory() as tmp:
        for calls in (ns.calls, ns.calls + ns.delta):
            out = Path(tmp) / f"cg.{calls}"
            cmd = [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                str(Path(__file__).resolve()),
                *argv,
                "--calls",
                str(calls),
            ]
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            found = re.search(r"Collected : (\d+)", proc.stderr)
            if proc.returncode or found is None:
                sys.exit(f"callgrind run failed:\n{proc.stdout}\n{proc.stderr[-2000:]}")
            totals.append(int(found.group(1)))
    per_call = (totals[1] - totals[0]) / ns.delta
    print(
        f"{ns.transport} {ns.client} inflight {ns.inflight}: {per_call:,.0f} instructions per call "
        f"(callgrind, {ns.calls} and {ns.calls + ns.delta} calls)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--transport", choices=("http", "stdio"), default="http")
    ap.add_argument("--client", choices=("trimcp", "floor"), default="trimcp")
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--inflight", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--profile", help="write a cProfile of the measured calls to this file")
    ap.add_argument("--callgrind", action="store_true", help="count instructions per call under callgrind")
    ap.add_argument("--delta", type=int, default=500, help="--callgrind: the second run makes this many more calls")
    ns = ap.parse_args()
    if ns.callgrind:
        argv = [a for a in sys.argv[1:] if a != "--callgrind"]
        # --calls is given last, so it wins over one in argv.
        callgrind(ns, argv)
        return
    import trio

    if ns.transport == "http":
        server = subprocess.Popen([sys.executable, str(HERE / "raw_http_server.py")], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            ns.url = f"http://127.0.0.1:{server.stdout.readline().split()[1]}/mcp"
            trio.run(run, ns)
        finally:
            server.kill()
            server.wait()
        return
    trio.run(run, ns)


if __name__ == "__main__":
    main()
