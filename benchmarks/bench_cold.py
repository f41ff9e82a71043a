#!/usr/bin/env python3
"""Cold start: what a fresh process pays before its first call, against a warm connect.

Theory of operation
-------------------
Each round starts fresh interpreters, one per row, interleaved, so drift on a shared machine
hits every row alike; each figure is the median (and range) over the rounds.

``client`` rows run one probe process that times, in order: ``import trio``; ``from trimcp
import open_client``; a first ``open_client`` to ``raw_server.py`` (spawn, connect,
``initialize``) and its first ``list_tools()``; then a second ``open_client`` and
``list_tools()`` in the same process (warm).  "first open_client over warm" is the import of
trimcp plus the first connect minus the warm one: what the first use costs beyond what every
later one does (``import trio`` is paid by any Trio client and reported apart).  The first
``list_tools()`` is reported apart too: it builds the typed view (cattrs and the schema's
classes are imported then, not before).

``tools list`` rows time ``python -m trimcp.cli tools list -- python raw_server.py`` as a
whole process (spawn to exit) and read its peak RSS from ``wait4``.

Both rows run a byte-compiled copy of each checkout's ``trimcp/`` (as an installed package
has its ``.pyc``; see ``bench_import.py``); ``--against CHECKOUT`` adds the same rows for
another checkout (the code before a change) in the same rounds.

Targets (issue 29): the first ``open_client`` at most 40 ms over a warm one; ``trimcp tools
list`` at most 0.3 s on a server that answers at once.

Run:   .venv/bin/python benchmarks/bench_cold.py                 (7 rounds, ~10 s)
       ... --against /tmp/before   also the same rows from that checkout's trimcp
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_import import compiled_copy

SERVER = [sys.executable, str(HERE / "raw_server.py")]

PROBE = """
import json, sys, time
T = time.perf_counter
t0 = T()
import trio
t1 = T()
from trimcp import open_client
t2 = T()
out = {"trio_ms": (t1 - t0) * 1e3, "import_ms": (t2 - t1) * 1e3}
SERVER = json.loads(sys.argv[1])
async def main():
    for run in ("first", "warm"):
        a = T()
        async with open_client(SERVER) as client:
            b = T()
            await client.list_tools()
            c = T()
        out[run + "_connect_ms"] = (b - a) * 1e3
        out[run + "_list_ms"] = (c - b) * 1e3
trio.run(main)
print(json.dumps(out))
"""

TARGET_FIRST_OVER_WARM_MS = 40.0
TARGET_TOOLS_LIST_S = 0.3


def _env(copy: Path) -> dict[str, str]:
    # PYTHONPATH comes before site-packages (and an editable install's finder).
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": str(copy)}


def client_once(copy: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(SERVER)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env=_env(copy),
        check=True,
    )
    got: dict[str, float] = json.loads(done.stdout)
    got["first_over_warm_ms"] = got["import_ms"] + got["first_connect_ms"] - got["warm_connect_ms"]
    return got


def tools_list_once(copy: Path) -> dict[str, float]:
    argv = [sys.executable, "-m", "trimcp.cli", "tools", "list", "--", *SERVER]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/", env=_env(copy))
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"trimcp tools list failed ({proc.returncode}): {err.decode(errors='replace')[-500:]}")
    return {"wall_s": wall, "rss_mb": usage.ru_maxrss / 1024}


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(rounds: int, against: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        copies = {"trimcp": compiled_copy(HERE.parent, Path(tmp) / "repo")}
        if against is not None:
            copies["before"] = compiled_copy(against, Path(tmp) / "against")
        raw: dict[str, dict[str, list[dict[str, float]]]] = {n: {"client": [], "tools": []} for n in copies}
        for _ in range(rounds):
            for name, copy in copies.items():
                raw[name]["client"].append(client_once(copy))
                raw[name]["tools"].append(tools_list_once(copy))
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for name, runs in raw.items():
        keys = runs["client"][0].keys()
        summary[name] = {k: _stats([r[k] for r in runs["client"]]) for k in keys}
        summary[name].update({f"tools_list_{k}": _stats([r[k] for r in runs["tools"]]) for k in ("wall_s", "rss_mb")})
    return {"raw": raw, "summary": summary}


ROWS = (
    ("import trio, ms (any Trio client)", "trio_ms", "{:.1f}"),
    ("from trimcp import open_client, ms", "import_ms", "{:.1f}"),
    ("first open_client (spawn + initialize), ms", "first_connect_ms", "{:.1f}"),
    ("warm open_client, ms", "warm_connect_ms", "{:.1f}"),
    ("first open_client over warm, ms", "first_over_warm_ms", "{:.1f}"),
    ("first list_tools(), ms", "first_list_ms", "{:.1f}"),
    ("warm list_tools(), ms", "warm_list_ms", "{:.2f}"),
    ("trimcp tools list, s", "tools_list_wall_s", "{:.2f}"),
    ("trimcp tools list peak RSS, MB", "tools_list_rss_mb", "{:.1f}"),
)


def report(result: dict[str, Any], rounds: int) -> str:
    names = list(result["summary"])
    lines = [f"cold start, fresh processes, median [min-max] of {rounds} interleaved rounds, bytecode compiled", ""]
    lines.append(f"{'':44}" + "".join(f"{n:>24}" for n in names))
    for label, key, fmt in ROWS:
        cells = []
        for n in names:
            st = result["summary"][n][key]
            cells.append(f"{fmt.format(st['median'])} [{fmt.format(st['min'])}-{fmt.format(st['max'])}]")
        lines.append(f"{label:44}" + "".join(f"{c:>24}" for c in cells))
    mine = result["summary"]["trimcp"]
    first = mine["first_over_warm_ms"]["median"]
    tools = mine["tools_list_wall_s"]["median"]
    lines += [
        "",
        "targets (issue 29):",
        f"  first open_client over warm  {first:6.1f} ms  (target <= {TARGET_FIRST_OVER_WARM_MS:.0f} ms)  "
        f"{'met' if first <= TARGET_FIRST_OVER_WARM_MS else 'NOT MET'}",
        f"  trimcp tools list            {tools:6.2f} s   (target <= {TARGET_TOOLS_LIST_S} s)   "
        f"{'met' if tools <= TARGET_TOOLS_LIST_S else 'NOT MET'}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--against", type=Path, metavar="CHECKOUT", help="also the rows of that checkout's trimcp")
    ap.add_argument("--json", help="also write every raw number here")
    ns = ap.parse_args(argv)
    if ns.against is not None and not (ns.against / "trimcp").is_dir():
        ap.error(f"--against {ns.against}: no trimcp/ there")
    t0 = time.monotonic()
    result = measure(ns.rounds, ns.against)
    print(report(result, ns.rounds))
    print(f"({time.monotonic() - t0:.1f} s; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    if ns.json:
        Path(ns.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
