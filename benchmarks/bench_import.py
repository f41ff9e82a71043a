#!/usr/bin/env python3
"""Import cost: wall time and RSS of a fresh interpreter that imports trimcp, against the floor.

Theory of operation
-------------------
Every row is one ``python -c "<probe>"`` in a fresh process (nothing cached in-process;
the OS page cache is warm after the first round, as for a user's second run).  The probe
times its own import (``perf_counter`` around it), then prints ``VmRSS`` from
``/proc/self/status``.  The parent times the whole process (spawn to exit) as the wall.
Rows run interleaved, round after round, so drift on this shared machine hits every row
alike; each figure is the median over the rounds.

Bytecode: by default the children import a copy of each checkout's ``trimcp/`` in a
temporary directory, compiled there first (``compileall``), as an installed package has
its ``.pyc`` (pip compiles at install); the checkout itself is not written to.  This
machine sets ``PYTHONDONTWRITEBYTECODE=1``, so a plain ``python -c "import trimcp"`` from a
checkout here compiles every trimcp module from source on every run, while the
dependencies' ``.pyc`` came with their wheels; ``--cold`` measures that case.

Rows
  pass                    ``python -c pass``: the interpreter's own floor.
  import trimcp           the package (its exports are lazy module attributes).
  import trimcp.host      the host package (likewise lazy).
  import mcp              the official SDK (``mcp``), for scale.
  open_client (1st use)   ``from trimcp import open_client``: what a client program pays
                          before connecting (trio, attrs, cattrs, the schema).  No target.
  open_pool (1st use)     ``from trimcp.host import open_pool``.  No target.
  import trimcp.server    the server framework (what every ``trimcp serve`` spawn pays).
  import trimcp.cli       the ``trimcp`` command before it parses its arguments.
  ... (against)           with ``--against CHECKOUT``: the same trimcp rows importing the
                          trimcp of another checkout (the code before a change), in the
                          same interleaved rounds, so before/after share one run.

Targets (issue 15, build item 3): ``import trimcp`` and ``import trimcp.host`` each at most
250 ms wall (the whole process) and at most 35 MB RSS after the import.  Absolute numbers on
this machine swing 2x between runs; compare rows of one run only.

Run:   .venv/bin/python benchmarks/bench_import.py            (20 rounds, ~1 minute)
       .venv/bin/python benchmarks/bench_import.py --quick    (3 rounds, < 20 s)
       ... --against /tmp/before   also the same rows from that checkout's trimcp
       ... --cold                  no bytecode cache: trimcp compiled from source every run
       ... --json out.json         also writes every raw number
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

#: row -> (code, which checkout's trimcp: "repo" / "against" / None, has a target)
ROWS: dict[str, tuple[str, str | None, bool]] = {
    "pass": ("pass", None, False),
    "import trimcp": ("import trimcp", "repo", True),
    "import trimcp.host": ("import trimcp.host", "repo", True),
    "import mcp": ("import mcp", None, False),
    "open_client (1st use)": ("from trimcp import open_client", "repo", False),
    "open_pool (1st use)": ("from trimcp.host import open_pool", "repo", False),
    "import trimcp.server": ("import trimcp.server", "repo", False),
    "import trimcp.cli": ("import trimcp.cli", "repo", False),
}
AGAINST_ROWS = (
    "import trimcp",
    "import trimcp.host",
    "open_client (1st use)",
    "open_pool (1st use)",
    "import trimcp.server",
    "import trimcp.cli",
)

TARGET_WALL_MS = 250.0
TARGET_RSS_MB = 35.0

PROBE = (
    "import time as _t\n_t0 = _t.perf_counter()\n{code}\n_t1 = _t.perf_counter()\n"
    "import sys\n"
    "for _l in open('/proc/self/status'):\n"
    "    if _l.startswith('VmRSS'): sys.stdout.write(_l)\n"
    "sys.stdout.write('INPROC %f\\n' % ((_t1 - _t0) * 1e3))\n"
    "_m = sys.modules.get('trimcp')\n"
    "sys.stdout.write('FROM %s\\n' % (getattr(_m, '__file__', None),))\n"
)


def _env(checkout: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if checkout is not None:
        # PYTHONPATH comes before site-packages (and an editable install's finder).
        env["PYTHONPATH"] = str(checkout)
    return env


def compiled_copy(checkout: Path, into: Path) -> Path:
    """``checkout``'s ``trimcp/`` copied under ``into`` and byte-compiled there."""
    into.mkdir(parents=True)
    shutil.copytree(checkout / "trimcp", into / "trimcp", ignore=shutil.ignore_patterns("__pycache__"))
    if not compileall.compile_dir(into / "trimcp", quiet=1):
        raise SystemExit(f"cannot byte-compile {checkout / 'trimcp'}")
    return into


def run_once(code: str, checkout: Path | None) -> dict[str, Any]:
    """One fresh interpreter: wall ms (spawn to exit), in-process import ms, RSS KB."""
    env = _env(checkout)
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env=env,
        check=False,
    )
    wall = (time.perf_counter() - t0) * 1e3
    if res.returncode != 0:
        lines = res.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {res.returncode}"}
    fields = dict(ln.split(None, 1) for ln in res.stdout.splitlines() if ln.strip())
    return {
        "wall_ms": wall,
        "inproc_ms": float(fields["INPROC"]),
        "rss_kb": float(fields["VmRSS:"].split()[0]),
        "from": fields.get("FROM", "").strip(),
    }


def measure(rounds: int, against: Path | None, cold: bool = False) -> dict[str, Any]:
    if cold:
        return _measure(rounds, REPO, against, "cold")
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        repo = compiled_copy(REPO, Path(tmp) / "repo")
        other = compiled_copy(against, Path(tmp) / "against") if against is not None else None
        return _measure(rounds, repo, other, "compiled")


def _measure(rounds: int, repo: Path, against: Path | None, bytecode: str) -> dict[str, Any]:
    plan: list[tuple[str, str, Path | None, bool]] = []
    for name, (code, which, target) in ROWS.items():
        plan.append((name, code, repo if which == "repo" else None, target))
    if against is not None:
        for name in AGAINST_ROWS:
            plan.append((f"{name} (against)", ROWS[name][0], against, False))
    raw: dict[str, list[dict[str, Any]]] = {name: [] for name, *_ in plan}
    errors: dict[str, str] = {}
    for _ in range(rounds):
        for name, code, checkout, _target in plan:
            if name in errors:
                continue
            got = run_once(code, checkout)
            if "error" in got:
                errors[name] = got["error"]
            else:
                raw[name].append(got)
    summary: dict[str, Any] = {}
    base = raw["pass"]
    for name, code, _checkout, target in plan:
        if name in errors or not raw[name]:
            summary[name] = {"error": errors.get(name, "no data")}
            continue
        vals = raw[name]
        wall = statistics.median(v["wall_ms"] for v in vals)
        rss = statistics.median(v["rss_kb"] for v in vals) / 1024
        summary[name] = {
            "code": code,
            "wall_ms": wall,
            "over_pass_ms": wall - statistics.median(v["wall_ms"] for v in base) if base else None,
            "inproc_ms": statistics.median(v["inproc_ms"] for v in vals),
            "rss_mb": rss,
            "from": vals[0]["from"],
            "target": target,
            "met": (wall <= TARGET_WALL_MS and rss <= TARGET_RSS_MB) if target else None,
        }
    return {"raw": raw, "summary": summary, "errors": errors, "bytecode": bytecode}


def report(result: dict[str, Any], rounds: int) -> str:
    lines = [
        (
            f"fresh-process import cost, median of {rounds} interleaved rounds, bytecode "
            f"{result['bytecode']} (targets: wall <= {TARGET_WALL_MS:.0f} ms and RSS <= "
            f"{TARGET_RSS_MB:.0f} MB)"
        ),
        "",
        f"{'row':<34} {'wall ms':>8} {'-pass':>7} {'in-proc':>8} {'RSS MB':>7}  target",
    ]
    for name, row in result["summary"].items():
        if "error" in row:
            lines.append(f"{name:<34} error: {row['error']}")
            continue
        verdict = "" if row["met"] is None else ("met" if row["met"] else "NOT MET")
        over = "" if row["over_pass_ms"] is None else f"{row['over_pass_ms']:7.0f}"
        lines.append(
            f"{name:<34} {row['wall_ms']:8.0f} {over:>7} {row['inproc_ms']:8.0f} {row['rss_mb']:7.1f}  {verdict}"
        )
    froms = sorted(
        {row["from"] for row in result["summary"].values() if "error" not in row and row["from"] not in ("", "None")}
    )
    lines += ["", "trimcp imported from: " + ", ".join(froms)]
    if result["bytecode"] == "compiled":
        lines.append("(compiled copies of this checkout" + (" and of --against" if len(froms) > 1 else "") + ")")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds, < 20 s")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 20, --quick 3)")
    ap.add_argument(
        "--against",
        metavar="CHECKOUT",
        type=Path,
        help="also measure the trimcp of this checkout (a directory holding trimcp/)",
    )
    ap.add_argument(
        "--cold", action="store_true", help="import the checkouts as they are: no .pyc here (PYTHONDONTWRITEBYTECODE=1)"
    )
    ap.add_argument("--json", metavar="PATH", help="also write every raw number as JSON")
    ns = ap.parse_args(argv)
    if ns.against is not None and not (ns.against / "trimcp" / "__init__.py").is_file():
        ap.error(f"--against {ns.against}: no trimcp/__init__.py there")
    rounds = ns.rounds or (3 if ns.quick else 20)
    if rounds < 1:
        ap.error("--rounds must be at least 1")
    started = time.perf_counter()
    result = measure(rounds, ns.against.resolve() if ns.against else None, cold=ns.cold)
    print(report(result, rounds))
    print(f"({time.perf_counter() - started:.1f} s; load {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    if ns.json:
        Path(ns.json).write_text(json.dumps({"rounds": rounds, **result}, indent=1))
    targets = [row for row in result["summary"].values() if row.get("target")]
    return 0 if targets and all(row["met"] for row in targets) else 1


if __name__ == "__main__":
    sys.exit(main())
