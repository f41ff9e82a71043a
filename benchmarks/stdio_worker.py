"""One benchmark cell: one client against one server, in its own process (``--worker``).

``run_worker(job)`` imports the client library first (import cost is measured separately,
in fresh interpreters), then runs the phases the job names - connect, sequential,
concurrent, 10 MB result - each under its own deadline, and returns every raw number.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from stdio_clients import FloorSession, connector
from stdio_config import BIG, CONCURRENCY, server_argv, server_env, tool_call


async def _worker_main(job: dict[str, Any]) -> dict[str, Any]:
    """Runs inside trio.run (floor, trimcp) or anyio.run (mcp); the driver uses anyio calls,
    which run natively on either (none of them is inside a timed per-call path)."""
    import anyio

    client, server = job["client"], job["server"]
    argv, env = server_argv(server), server_env()
    assert argv is not None
    connect = connector(client)
    phases = job["phases"]
    out: dict[str, Any] = {"client": client, "server": server, "errors": {}}
    echo_name, echo_args = tool_call(server, "echo")

    async def guarded(name: str, seconds: float, fn: Callable[[], Any]) -> None:
        try:
            with anyio.fail_after(seconds):
                await fn()
        except TimeoutError:
            out["errors"][name] = f"phase deadline of {seconds:.0f} s exceeded"
        except Exception as exc:
            out["errors"][name] = f"{type(exc).__name__}: {exc}"[:500]

    async def phase_connect() -> None:
        connects: list[float] = []
        closes: list[float] = []
        for i in range(job["connect_runs"] + 1):
            t0 = time.perf_counter()
            cm = connect(argv, env)
            session = await cm.__aenter__()
            t1 = time.perf_counter()
            try:
                text = await session.call(echo_name, echo_args)
                assert text == "hello", text
            except BaseException:
                await cm.__aexit__(*sys.exc_info())
                raise
            t2 = time.perf_counter()
            await cm.__aexit__(None, None, None)
            t3 = time.perf_counter()
            if i == 0:
                out["connect_cold_ms"] = (t1 - t0) * 1e3
            else:
                connects.append((t1 - t0) * 1e3)
                closes.append((t3 - t2) * 1e3)
        out["connect_ms"] = connects
        out["close_ms"] = closes

    async def session_phases() -> None:
        async with connect(argv, env) as session:
            for _ in range(job["warmup_calls"]):
                assert await session.call(echo_name, echo_args) == "hello"

            async def seq() -> None:
                # Rounds, so a burst of load from elsewhere spoils one round, not the number.
                rounds = max(1, job["seq_rounds"])
                n = max(1, job["seq_calls"] // rounds)
                walls, cpus = [], []
                for _ in range(rounds):
                    c0, t0 = time.process_time(), time.perf_counter()
                    for _ in range(n):
                        await session.call(echo_name, echo_args)
                    t1, c1 = time.perf_counter(), time.process_time()
                    walls.append(t1 - t0)
                    cpus.append(c1 - c0)
                out["seq"] = {"calls_per_round": n, "wall_s": walls, "cpu_s": cpus}

            async def conc() -> None:
                rounds = max(1, job["conc_rounds"])
                total = max(CONCURRENCY, job["conc_calls"] // rounds)
                share = [total // CONCURRENCY + (i < total % CONCURRENCY) for i in range(CONCURRENCY)]

                async def worker(k: int) -> None:
                    for _ in range(k):
                        await session.call(echo_name, echo_args)

                # The inline floor cannot multiplex: it gets its reader task for this phase.
                mux = session.muxed() if isinstance(session, FloorSession) else nullcontext()
                walls, cpus = [], []
                async with mux:
                    for _ in range(rounds):
                        c0, t0 = time.process_time(), time.perf_counter()
                        async with anyio.create_task_group() as tg:
                            for k in share:
                                tg.start_soon(worker, k)
                        t1, c1 = time.perf_counter(), time.process_time()
                        walls.append(t1 - t0)
                        cpus.append(c1 - c0)
                out["conc"] = {
                    "calls_per_round": total,
                    "tasks": CONCURRENCY,
                    "wall_s": walls,
                    "cpu_s": cpus,
                }

            async def big() -> None:
                name, args = tool_call(server, "big", BIG)
                walls, cpus = [], []
                for _ in range(job["big_runs"]):
                    c0, t0 = time.process_time(), time.perf_counter()
                    text = await session.call(name, args)
                    t1, c1 = time.perf_counter(), time.process_time()
                    if len(text) != BIG:
                        raise AssertionError(f"got {len(text)} bytes, wanted {BIG}")
                    del text
                    walls.append((t1 - t0) * 1e3)
                    cpus.append((c1 - c0) * 1e3)
                out["big"] = {"bytes": BIG, "wall_ms": walls, "cpu_ms": cpus}

            if "seq" in phases and job["seq_calls"]:
                await guarded("seq", job["phase_timeout"], seq)
            if "conc" in phases and job["conc_calls"]:
                await guarded("conc", job["phase_timeout"], conc)
            if "big" in phases and job["big_runs"]:
                await guarded("big", job["phase_timeout"], big)

    if "connect" in phases:
        await guarded("connect", job["phase_timeout"], phase_connect)
    if any(p in phases for p in ("seq", "conc", "big")):
        await guarded("session", job["phase_timeout"] * 3, session_phases)
    return out


def run_worker(job: dict[str, Any]) -> dict[str, Any]:
    # Import the client library first: import cost is measured on its own (fresh interpreters),
    # so "first connect" is the first connection's own warm-up (lazy imports, caches).
    client = job["client"]
    if job.get("pin") is not None:
        os.sched_setaffinity(0, {job["pin"]})  # inherited by the server this worker spawns
    if client.startswith("mcp/"):
        import anyio

        importlib.import_module("mcp.client.session")
        importlib.import_module("mcp.client.stdio")

        return anyio.run(_worker_main, job, backend=client.split("/", 1)[1])
    import trio

    if client == "trimcp":
        importlib.import_module("trimcp")
    return trio.run(_worker_main, job)
