"""One worker process of ``bench_pool.py``: many HTTP sessions, or one pool of stdio servers.

Theory of operation
-------------------
The parent (``bench_pool.py``) runs each measurement in a fresh interpreter so the
RSS deltas read here belong to that measurement alone.  A worker reads one JSON job
and returns one JSON object of numbers; it never raises for a failed session or
server, it counts and describes it.

``sessions`` job (part 1, issue 11's "1 000 concurrent HTTP sessions"): N tasks
each hold one ``trimcp.open_client(url)`` context open (Streamable HTTP, handshake
era: initialize, initialized, then the standalone GET stream, spec 2025-11-25
basic/transports).  Connects are started together but at most ``connect_concurrency``
are in flight (a semaphore released as soon as the session is up, so the server is
not stormed).  With all N open: client and server VmRSS and the client's open fds
are read, then K ``echo`` calls are made by a FIXED number of caller tasks picking
sessions round-robin over all N, each call timed with ``perf_counter``; p50/p99 of
those.  Then every session is closed (timed).

``pool`` job (part 2): ``trimcp.host.open_pool`` over M ``StdioServerConfig``s,
``connect_all()`` timed, the states counted, the client's VmRSS and the summed
VmRSS of its child processes (walking ``/proc`` for ppid == ours) read, then the
pool's exit timed and the children left afterwards counted.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: The reference server's cheapest tool (``trimcp/reference/server.py``: ``echo(message)``).
ECHO_ARGS = {"message": "hi"}


def vmrss_kb(pid: int | str = "self") -> int | None:
    """VmRSS of a process in kB (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def children_of(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (zombies included: they are children not yet reaped)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            # The comm field may hold spaces and parentheses: the ppid follows the last ')'.
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def _describe(exc: BaseException) -> str:
    # A nursery inside the client may wrap the cause: name the first leaf.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:200]


# =========================================================================== part 1


class _GcWatch:
    """The client's garbage-collector pauses while in the block (``gc.callbacks``)."""

    def __enter__(self) -> _GcWatch:
        import gc

        self.full, self.total, self.longest, self._t0 = 0, 0.0, 0.0, 0.0
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *exc: object) -> None:
        import gc

        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
            return
        pause = time.perf_counter() - self._t0
        self.total += pause
        self.longest = max(self.longest, pause)
        self.full += info.get("generation") == 2


async def sessions_job(job: dict[str, Any]) -> dict[str, Any]:
    import trio

    import trimcp

    url, n, server_pid = job["url"], job["sessions"], job["server_pid"]
    out: dict[str, Any] = {"sessions": n}
    live: list[Any] = []
    errors: dict[str, int] = {}
    done = 0
    all_tried = trio.Event()
    stop = trio.Event()
    gate = trio.Semaphore(job["connect_concurrency"])

    def settled() -> None:
        nonlocal done
        done += 1
        if done == n:
            all_tried.set()

    async def hold() -> None:
        await gate.acquire()
        released = False
        try:
            async with trimcp.open_client(url, timeouts=trimcp.Timeouts(connect=job["connect_timeout"])) as session:
                gate.release()
                released = True
                live.append(session)
                settled()
                await stop.wait()
        except Exception as exc:
            key = _describe(exc)
            errors[key] = errors.get(key, 0) + 1
            if not released:
                settled()
        finally:
            if not released:
                gate.release()

    # One warm-up session outside the count: imports, first-use caches, the server's too.
    async with trimcp.open_client(url) as warm:
        await warm.call_tool("echo", ECHO_ARGS)
    await trio.sleep(0.2)
    rss0, srv0, fds0 = vmrss_kb(), vmrss_kb(server_pid), open_fds()
    out["rss_before_kb"], out["server_rss_before_kb"] = rss0, srv0
    async with trio.open_nursery() as nursery:
        t0 = time.perf_counter()
        for _ in range(n):
            nursery.start_soon(hold)
        with trio.move_on_after(job["open_timeout"]) as scope:
            await all_tried.wait()
        out["open_s"] = time.perf_counter() - t0
        out["open_timed_out"] = scope.cancelled_caught
        out["opened"] = len(live)
        # Let the standalone GET streams settle before reading memory; meanwhile measure
        # what holding N idle sessions costs in CPU (a per-session timer would show here).
        await trio.sleep(job["settle"])
        c0, s0, w0 = time.process_time(), cpu_seconds(server_pid), time.perf_counter()
        await trio.sleep(job["idle"])
        wall = time.perf_counter() - w0
        out["idle_cpu_pct"] = (time.process_time() - c0) / wall * 100
        s1 = cpu_seconds(server_pid)
        if s0 is not None and s1 is not None:
            out["server_idle_cpu_pct"] = (s1 - s0) / wall * 100
        rss1, srv1 = vmrss_kb(), vmrss_kb(server_pid)
        out["fds_open"] = open_fds()
        out["fds_per_session"] = (out["fds_open"] - fds0) / max(1, len(live))
        if rss0 and rss1 and live:
            out["rss_after_kb"] = rss1
            out["rss_per_session_kb"] = (rss1 - rss0) / len(live)
        if srv0 and srv1 and live:
            out["server_rss_after_kb"] = srv1
            out["server_rss_per_session_kb"] = (srv1 - srv0) / len(live)
        if job.get("gc_freeze"):
            import gc

            gc.freeze()  # the sessions' objects leave the collector's generations
        if live:
            await _latency(out, live, job)
        t1 = time.perf_counter()
        stop.set()
    out["close_s"] = time.perf_counter() - t1
    out["failed"] = n - out["opened"]
    if errors:
        out["errors"] = errors
    return out


async def _latency(out: dict[str, Any], live: list[Any], job: dict[str, Any]) -> None:
    import trio

    calls, callers = job["calls"], job["callers"]
    lat: list[float] = []
    failures: dict[str, int] = {}
    next_index = 0

    async def caller(count: int, record: bool) -> None:
        nonlocal next_index
        while next_index < count:
            i = next_index
            next_index += 1
            session = live[i % len(live)]  # round-robin over every open session
            t0 = time.perf_counter()
            try:
                result = await session.call_tool("echo", ECHO_ARGS)
            except Exception as exc:
                key = _describe(exc)
                failures[key] = failures.get(key, 0) + 1
                continue
            dt = time.perf_counter() - t0
            if result.is_error:
                failures["tool error"] = failures.get("tool error", 0) + 1
            elif record:
                lat.append(dt)

    for count, record in ((job["warmup_calls"], False), (calls, True)):
        next_index = 0
        t0, c0, s0 = time.perf_counter(), time.process_time(), cpu_seconds(job["server_pid"])
        with trio.move_on_after(job["calls_timeout"]) as scope, _GcWatch() as gcw:
            async with trio.open_nursery() as nursery:
                for _ in range(callers):
                    nursery.start_soon(caller, count, record)
        if record:
            out["calls_s"] = time.perf_counter() - t0
            out["calls_timed_out"] = scope.cancelled_caught
            # CPU per call on each side: which one a slowdown at large N comes from.
            out["client_cpu_us"] = (time.process_time() - c0) / max(1, len(lat)) * 1e6
            s1 = cpu_seconds(job["server_pid"])
            if s0 is not None and s1 is not None:
                out["server_cpu_us"] = (s1 - s0) / max(1, len(lat)) * 1e6
            # More sessions, more live objects: a full collection walks them all, and a
            # pause in the client lands on whichever calls are in flight (their p99).
            out["gc_full_collections"] = gcw.full
            out["gc_ms"] = gcw.total * 1e3
            out["gc_max_pause_ms"] = gcw.longest * 1e3
    out["calls_ok"] = len(lat)
    if lat:
        out["p50_ms"] = percentile(lat, 50) * 1e3
        out["p99_ms"] = percentile(lat, 99) * 1e3
        out["mean_ms"] = statistics.fmean(lat) * 1e3
        out["calls_per_s"] = len(lat) / out["calls_s"]
    if failures:
        out["call_errors"] = failures


# =========================================================================== part 2


def pool_server_argv(kind: str) -> list[str]:
    """The stdio servers of the pool: the raw floor server or the bundled reference server."""
    if kind == "raw":
        return [sys.executable, str(HERE / "raw_server.py")]
    return [sys.executable, "-m", "trimcp.reference"]


async def pool_job(job: dict[str, Any]) -> dict[str, Any]:
    import trio

    from trimcp.config import StdioServerConfig
    from trimcp.host import open_pool

    argv = pool_server_argv(job["server"])
    configs = {
        f"s{i:03d}": StdioServerConfig(name=f"s{i:03d}", command=argv[0], args=tuple(argv[1:]))
        for i in range(job["servers"])
    }
    kwargs: dict[str, Any] = {}
    if job["stdio_limit"] is not None:
        kwargs["stdio_limit"] = job["stdio_limit"]
    me = os.getpid()
    out: dict[str, Any] = {"servers": job["servers"], "stdio_limit": job["stdio_limit"] or "default"}
    rss0 = vmrss_kb()
    with trio.fail_after(job["pool_timeout"]):
        async with open_pool(configs, **kwargs) as pool:
            t0 = time.perf_counter()
            statuses = await pool.connect_all()
            out["connect_all_s"] = time.perf_counter() - t0
            states: dict[str, int] = {}
            for status in statuses.values():
                states[str(status.state)] = states.get(str(status.state), 0) + 1
            out["states"] = states
            out["connected"] = states.get("connected", 0)
            secs = [s.connect_seconds for s in statuses.values() if s.connect_seconds is not None]
            if secs:
                out["connect_p50_s"] = statistics.median(secs)
                out["connect_max_s"] = max(secs)
            rss1 = vmrss_kb()
            if rss0 and rss1:
                out["rss_after_kb"] = rss1
                out["rss_delta_kb"] = rss1 - rss0
            kids = children_of(me)
            out["children"] = len(kids)
            out["children_rss_kb"] = sum(vmrss_kb(k) or 0 for k in kids)
            t1 = time.perf_counter()
        out["close_s"] = time.perf_counter() - t1
    out["children_left"] = len(children_of(me))
    return out


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    import trio

    if job["kind"] == "pool":
        try:
            # Import the name, not only the package: a leftover trimcp/host folder (no
            # __init__, say __pycache__ alone) imports as an empty namespace package.
            from trimcp.host import open_pool  # noqa: F401
        except ImportError:
            return {"skipped": "trimcp.host not available"}
        return trio.run(pool_job, job)
    return trio.run(sessions_job, job)
