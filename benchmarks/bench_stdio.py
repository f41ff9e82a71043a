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

Run:   /work/venv/bin/python benchmarks/bench_stdio.py            (full, ~2 minutes)
       /work/venv/bin/python benchmarks/bench_stdio.py --quick    (CI smoke, < 60 s)
       ... --json out.json   also writes every raw number
       ... --repeat 3        medians over 3 interleaved runs of every worker
       ... --pin 1           client and server on CPU 1 (stable CPU-cost comparison)
       ... --clients trimcp,floor --servers raw   a subset (other cells print n/a)
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

CLIENTS = ("floor", "floor-mux", "trimcp", "mcp/asyncio", "mcp/trio")
SERVERS = ("raw", "sdk")
BIG = 10_000_000
CONCURRENCY = 64

# Per-mode parameters.  "sdk" phases list what runs against the secondary server.
PARAMS: dict[str, dict[str, Any]] = {
    "full": {
        "connect_runs": {"raw": 15, "sdk": 7},
        "warmup_calls": 200,
        "seq_calls": {"raw": 2000, "sdk": 2000},
        "seq_rounds": 5,
        "conc_calls": {"raw": 4000, "sdk": 4000},
        "conc_rounds": 3,
        "big_runs": {"raw": 3, "sdk": 3},
        "phases": {
            "raw": ("connect", "seq", "conc", "big"),
            "sdk": ("connect", "seq", "conc", "big"),
        },
        "import_runs": 5,
        "worker_timeout": 300.0,
    },
    "quick": {
        "connect_runs": {"raw": 3, "sdk": 1},
        "warmup_calls": 20,
        "seq_calls": {"raw": 200, "sdk": 100},
        "seq_rounds": 2,
        "conc_calls": {"raw": 640, "sdk": 0},
        "conc_rounds": 1,
        "big_runs": {"raw": 1, "sdk": 0},
        "phases": {"raw": ("connect", "seq", "conc", "big"), "sdk": ("connect", "seq")},
        "import_runs": 3,
        "worker_timeout": 60.0,
    },
}

IMPORTS = {
    "python": "pass",
    "trio": "import trio",
    "trimcp": "import trimcp",
    "mcp client": "import mcp, mcp.client.session, mcp.client.stdio",
}

TARGETS = {
    "seq_vs_official": 3.0,  # trimcp calls/s >= 3x the official client's (raw server)
    "cpu_vs_floor": 1.5,  # trimcp CPU/call <= 1.5x the floor's (raw server, sequential)
    "big_vs_floor": 2.0,  # trimcp 10 MB result time <= 2x the floor's
    "import_ms": 300.0,  # import trimcp <= 300 ms over bare python
    "rss_mb": 40.0,  # RSS after import <= 40 MB over bare python
}


def _load_peers() -> Any:
    spec = importlib.util.spec_from_file_location("_trimcp_peers", REPO / "tests" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def server_argv(server: str) -> list[str] | None:
    peers = _load_peers()
    return peers.raw_server_argv() if server == "raw" else peers.sdk_server_argv()


def server_env() -> dict[str, str]:
    return _load_peers().peer_env()


def tool_call(server: str, kind: str, size: int = 0) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments) for an echo call or a sized result, per server."""
    if kind == "echo":
        return "echo", {"text": "hello"}
    return ("echo" if server == "raw" else "big"), {"size": size}


# =========================================================================== worker side
# Each client is an async context manager ``connect(argv, env)`` yielding an object with
# ``async call(name, arguments) -> str`` (the first text content).


class _FloorSession:
    """The raw floor: JSON lines by hand over trio.lowlevel.open_process pipes."""

    def __init__(self, process: Any, mux: bool) -> None:
        import trio

        self._trio = trio
        self.process = process
        self.mux = mux
        self._buf = bytearray()
        self._scan = 0
        self._lines: deque[bytes] = deque()
        self._next_id = 0
        self._waiting: dict[int, Any] = {}  # mux: id -> [event, message]
        self._send_lock = trio.Lock()
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    async def _send(self, obj: dict[str, Any]) -> None:
        data = self._dumps(obj).encode() + b"\n"
        if self.mux:
            async with self._send_lock:  # FdStream.send_all is single-writer
                await self.process.stdin.send_all(data)
        else:
            await self.process.stdin.send_all(data)

    async def _read_line(self) -> bytes:
        while not self._lines:
            data = await self.process.stdout.receive_some(65536)
            if not data:
                raise EOFError("server closed stdout")
            buf = self._buf
            buf += data
            pos = buf.find(b"\n", self._scan)
            start = 0
            while pos != -1:
                if pos > start:
                    self._lines.append(bytes(buf[start:pos]))
                start = pos + 1
                pos = buf.find(b"\n", start)
            if start:
                del buf[:start]
            self._scan = len(buf)
        return self._lines.popleft()

    async def reader(self) -> None:
        """mux mode: the one task that reads; wakes the waiting request."""
        try:
            while True:
                msg = json.loads(await self._read_line())
                slot = self._waiting.pop(msg.get("id"), None)
                if slot is not None:
                    slot[1] = msg
                    slot[0].set()
        except EOFError:
            for slot in self._waiting.values():
                slot[0].set()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        req = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        if self.mux:
            slot = self._waiting[rid] = [self._trio.Event(), None]
            await self._send(req)
            await slot[0].wait()
            msg = slot[1]
            if msg is None:
                raise EOFError("server closed stdout")
        else:
            await self._send(req)
            while True:
                msg = json.loads(await self._read_line())
                if msg.get("id") == rid:
                    break
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.request("tools/call", {"name": name, "arguments": arguments})
        return result["content"][0]["text"]

    @asynccontextmanager
    async def muxed(self) -> AsyncIterator[None]:
        """Switch an inline session to reader-task mode for a while (concurrent calls)."""
        if self.mux:
            yield
            return
        async with self._trio.open_nursery() as nursery:
            self.mux = True
            nursery.start_soon(self.reader)
            try:
                yield
            finally:
                self.mux = False
                nursery.cancel_scope.cancel()


@asynccontextmanager
async def floor_connect(
    argv: list[str], env: dict[str, str], mux: bool
) -> AsyncIterator[_FloorSession]:
    import trio

    process = await trio.lowlevel.open_process(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        async with trio.open_nursery() as nursery:
            session = _FloorSession(process, mux)
            if mux:
                nursery.start_soon(session.reader)
            await session.request(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "floor", "version": "0"},
                },
            )
            await session._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            try:
                yield session
            finally:
                await process.stdin.aclose()  # EOF: the server exits
                with trio.move_on_after(5):
                    await process.wait()
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.wait()
            await process.stdout.aclose()


class _TrimcpSession:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.client.call_tool(name, arguments)
        return result.content[0].text


@asynccontextmanager
async def trimcp_connect(argv: list[str], env: dict[str, str]) -> AsyncIterator[_TrimcpSession]:
    import trimcp

    async with trimcp.open_client(argv, env=env) as client:
        yield _TrimcpSession(client)


class _McpSession:
    def __init__(self, session: Any) -> None:
        self.session = session

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.session.call_tool(name, arguments)
        if result.is_error:
            raise RuntimeError(f"tool error: {result.content}")
        return result.content[0].text


@asynccontextmanager
async def mcp_connect(argv: list[str], env: dict[str, str]) -> AsyncIterator[_McpSession]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 - /dev/null never blocks
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield _McpSession(session)


def _connector(client: str) -> Callable[[list[str], dict[str, str]], Any]:
    if client == "floor":
        return lambda argv, env: floor_connect(argv, env, mux=False)
    if client == "floor-mux":
        return lambda argv, env: floor_connect(argv, env, mux=True)
    if client == "trimcp":
        return trimcp_connect
    return mcp_connect


async def _worker_main(job: dict[str, Any]) -> dict[str, Any]:
    """Runs inside trio.run (floor, trimcp) or anyio.run (mcp); the driver uses anyio calls,
    which run natively on either (none of them is inside a timed per-call path)."""
    import anyio

    client, server = job["client"], job["server"]
    argv, env = server_argv(server), server_env()
    assert argv is not None
    connect = _connector(client)
    phases = job["phases"]
    out: dict[str, Any] = {"client": client, "server": server, "errors": {}}
    echo_name, echo_args = tool_call(server, "echo")

    async def guarded(name: str, seconds: float, fn: Callable[[], Any]) -> None:
        try:
            with anyio.fail_after(seconds):
                await fn()
        except TimeoutError:
            out["errors"][name] = f"phase deadline of {seconds:.0f} s exceeded"
        except Exception as exc:  # noqa: BLE001 - one failed phase must not lose the others
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
                share = [
                    total // CONCURRENCY + (i < total % CONCURRENCY) for i in range(CONCURRENCY)
                ]

                async def worker(k: int) -> None:
                    for _ in range(k):
                        await session.call(echo_name, echo_args)

                # The inline floor cannot multiplex: it gets its reader task for this phase.
                mux = session.muxed() if isinstance(session, _FloorSession) else nullcontext()
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


# =========================================================================== parent side


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def spawn_worker(job: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run one worker in a fresh process (its own process group); kill it on timeout."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(job)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True
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
                errors[name] = (
                    res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "failed"
                )
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
            "rss_delta_mb": (statistics.median(vals["rss_kb"]) - statistics.median(base["rss_kb"]))
            / 1024,
        }
    return {"raw": raw, "summary": summary}


def summarize(res: dict[str, Any]) -> dict[str, float | None]:
    """Per (client, server) worker result -> the table's numbers (None when missing)."""
    med = statistics.median
    s: dict[str, float | None] = dict.fromkeys(
        (
            "connect_ms",
            "connect_cold_ms",
            "close_ms",
            "seq_cps",
            "seq_cpu_us",
            "conc_cps",
            "conc_cpu_us",
            "big_ms",
            "big_cpu_ms",
        ),
    )
    if res.get("connect_ms"):
        s["connect_ms"] = med(res["connect_ms"])
        s["close_ms"] = med(res["close_ms"])
    s["connect_cold_ms"] = res.get("connect_cold_ms")
    for key in ("seq", "conc"):
        if key in res:
            q = res[key]
            n = q["calls_per_round"]
            s[f"{key}_cps"] = med([n / w for w in q["wall_s"]])
            s[f"{key}_cpu_us"] = med([c / n * 1e6 for c in q["cpu_s"]])
    if "big" in res:
        s["big_ms"] = med(res["big"]["wall_ms"])
        s["big_cpu_ms"] = med(res["big"]["cpu_ms"])
    return s


def summarize_repeats(results: list[dict[str, Any]]) -> dict[str, float | None]:
    """Median of each number over the repeats that produced it."""
    per = [summarize(r) for r in results]
    keys = summarize({}).keys()
    out: dict[str, float | None] = {}
    for k in keys:
        vals = [x[k] for x in per if x[k] is not None]
        out[k] = statistics.median(vals) if vals else None
    return out


ROWS = (
    # key, label, format, better ("hi" / "lo")
    ("connect_ms", "connect+init, median (ms)", "{:.1f}", "lo"),
    ("overhead_ms", "  client overhead vs floor (ms)", "{:+.1f}", "lo"),
    ("connect_cold_ms", "  first connect in process (ms)", "{:.1f}", "lo"),  # library pre-imported
    ("close_ms", "close, median (ms)", "{:.1f}", "lo"),
    ("seq_cps", "sequential calls/s", "{:,.0f}", "hi"),
    ("seq_cpu_us", "  client CPU per call (us)", "{:.1f}", "lo"),
    ("conc_cps", f"{CONCURRENCY}-concurrent calls/s", "{:,.0f}", "hi"),
    ("conc_cpu_us", "  client CPU per call (us)", "{:.1f}", "lo"),
    ("big_ms", "10 MB result, median (ms)", "{:.1f}", "lo"),
    ("big_cpu_ms", "  client CPU (ms)", "{:.1f}", "lo"),
)


def _fmt(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.2f}x"


def render(report: dict[str, Any]) -> str:
    out: list[str] = []
    w = out.append
    meta = report["meta"]
    pin = "off" if meta.get("pin") is None else f"cpu {meta['pin']}"
    w(
        f"trimcp stdio benchmark  mode={meta['mode']}  repeat={meta['repeat']}  pin={pin}  python {meta['python']}  "
        f"trio {meta['trio']}  mcp {meta['mcp']}  anyio {meta['anyio']}  cpus={meta['cpus']}  "
        f"({meta['elapsed_s']:.0f} s)"
    )
    w(
        f"load average at start / end: {meta['load_start']} / {meta['load_end']}"
        + ("   ** machine busy: expect noisy numbers **" if meta.get("busy") else "")
    )
    w("ratios are trimcp / other (throughput: higher is better for trimcp; times: lower is better)")
    notes: list[str] = []
    for server in SERVERS:
        block = report["results"].get(server)
        if block is None:
            continue
        w("")
        w(f"== server: {block['label']}")
        head = f"{'metric':34}" + "".join(f"{c:>13}" for c in CLIENTS)
        head += "".join(f"{'vs ' + c:>16}" for c in CLIENTS if c != "trimcp")
        w(head)
        w("-" * len(head))
        sums = {c: block["summary"][c] for c in CLIENTS}
        floor_connect = sums["floor"]["connect_ms"]
        for c in CLIENTS:
            v = sums[c]["connect_ms"]
            sums[c]["overhead_ms"] = (
                None if v is None or floor_connect is None else v - floor_connect
            )
        for key, label, fmt, _ in ROWS:
            line = f"{label:34}" + "".join(f"{_fmt(sums[c][key], fmt):>13}" for c in CLIENTS)
            if key != "overhead_ms":
                line += "".join(
                    f"{_ratio(sums['trimcp'][key], sums[c][key]):>16}"
                    for c in CLIENTS
                    if c != "trimcp"
                )
            w(line)
        if floor_connect is not None:
            w(
                f"  server's own startup (spawn + start + 1 round trip, i.e. the floor's connect): "
                f"{floor_connect:.1f} ms; a client's own connect cost is its overhead row"
            )
        for c in CLIENTS:
            for i, r in enumerate(block["raw"][c]):
                tag = f"[{server}/{c}" + (f" #{i + 1}]" if len(block["raw"][c]) > 1 else "]")
                if "fatal" in r and r["fatal"] != "not selected":
                    notes.append(f"{tag} {r['fatal']}")
                for phase, err in r.get("errors", {}).items():
                    notes.append(f"{tag} {phase}: {err}")
    imp = report["imports"]["summary"]
    w("")
    w(f"== import (fresh interpreter, median of {report['imports']['runs']}; over bare python)")
    w(f"{'module(s)':34}{'import ms':>13}{'in-proc ms':>13}{'RSS MB':>13}{'RSS +MB':>13}")
    for name in IMPORTS:
        v = imp[name]
        if "error" in v:
            w(f"{name:34}{'ERR':>13}")
            notes.append(f"[import {name}] {v['error']}")
            continue
        w(
            f"{name:34}{v['import_ms']:>13.1f}{v['inproc_ms']:>13.1f}{v['rss_mb']:>13.1f}{v['rss_delta_mb']:>13.1f}"
        )
    w("")
    w("== targets (issue)")
    for t in report["targets"]:
        status = {True: "MET", False: "NOT MET", None: "n/a"}[t["met"]]
        w(f"  {t['name']:56} {t['value']:>22}   target {t['target']:>8}   {status}")
    if notes:
        w("")
        w("== notes / errors")
        out.extend(f"  {n}" for n in notes)
    return "\n".join(out)


def evaluate_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    raw = report["results"].get("raw", {}).get("summary", {})
    imp = report["imports"]["summary"]

    def get(client: str, key: str) -> float | None:
        return raw.get(client, {}).get(key)

    targets: list[dict[str, Any]] = []

    def add(name: str, value: float | None, target: str, met: bool | None, fmt: str) -> None:
        targets.append(
            {
                "name": name,
                "value": "n/a" if value is None else fmt.format(value),
                "target": target,
                "met": met,
                "raw": value,
            }
        )

    t = get("trimcp", "seq_cps")
    officials = [v for v in (get("mcp/asyncio", "seq_cps"), get("mcp/trio", "seq_cps")) if v]
    for c in ("mcp/asyncio", "mcp/trio"):
        o = get(c, "seq_cps")
        r = None if t is None or not o else t / o
        add(
            f"sequential calls/s, trimcp / {c}",
            r,
            f">= {TARGETS['seq_vs_official']:g}x",
            None if r is None else r >= TARGETS["seq_vs_official"],
            "{:.2f}x",
        )
    r = None if t is None or not officials else t / max(officials)
    add(
        "sequential calls/s, trimcp / best official (gate)",
        r,
        f">= {TARGETS['seq_vs_official']:g}x",
        None if r is None else r >= TARGETS["seq_vs_official"],
        "{:.2f}x",
    )
    for floor in ("floor", "floor-mux"):
        a, b = get("trimcp", "seq_cpu_us"), get(floor, "seq_cpu_us")
        r = None if a is None or not b else a / b
        gate = " (gate)" if floor == "floor" else " (info)"
        add(
            f"client CPU per call, trimcp / {floor}{gate}",
            r,
            f"<= {TARGETS['cpu_vs_floor']:g}x",
            None if r is None else r <= TARGETS["cpu_vs_floor"],
            "{:.2f}x",
        )
    a, b = get("trimcp", "big_ms"), get("floor", "big_ms")
    r = None if a is None or not b else a / b
    add(
        "10 MB result time, trimcp / floor",
        r,
        f"<= {TARGETS['big_vs_floor']:g}x",
        None if r is None else r <= TARGETS["big_vs_floor"],
        "{:.2f}x",
    )
    v = imp.get("trimcp", {}).get("import_ms")
    add(
        "import trimcp (ms over bare python)",
        v,
        f"<= {TARGETS['import_ms']:g}",
        None if v is None else v <= TARGETS["import_ms"],
        "{:.1f} ms",
    )
    v = imp.get("trimcp", {}).get("rss_delta_mb")
    add(
        "RSS after import trimcp (MB over bare python)",
        v,
        f"<= {TARGETS['rss_mb']:g}",
        None if v is None else v <= TARGETS["rss_mb"],
        "{:.1f} MB",
    )
    return targets


def _version(module: str) -> str:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # noqa: BLE001
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
        block: dict[str, Any] = {"label": label, "raw": {c: [] for c in CLIENTS}, "summary": {}}
        for rep_i in range(
            max(1, ns.repeat)
        ):  # interleaved: a noisy minute hits every client alike
            for client in CLIENTS:
                if client not in chosen_clients:
                    res: dict[str, Any] = {"fatal": "not selected"}
                elif argv_ is None:
                    res = {"fatal": "server not installed (pip install -e '.[bench]')"}
                elif client.startswith("mcp/") and not have_mcp:
                    res = {"fatal": "the mcp package is not installed"}
                else:
                    job = {
                        "client": client,
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
                    res = spawn_worker(job, p["worker_timeout"])
                block["raw"][client].append(res)
        for client in CLIENTS:
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
    report["meta"]["busy"] = max(load_start[0], load_end[0]) > max(
        1.5, 0.75 * (os.cpu_count() or 1)
    )
    print(render(report))
    if ns.json:
        Path(ns.json).write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
