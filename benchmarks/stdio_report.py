"""Turning the workers' raw numbers into the table and the issue's targets.

``summarize`` reduces one worker's result to the table's numbers (medians), ``render``
prints the fixed-shape table (a missing cell is ``n/a``, reasons follow it), and
``evaluate_targets`` marks each of the issue's targets met / not met.
"""

from __future__ import annotations

import statistics
from typing import Any

from stdio_config import CONCURRENCY, IMPORTS, SERVERS, TARGETS


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
    if meta.get("against"):
        w(f"trimcp@base = the trimcp client with trimcp imported from {meta['against']}")
    notes: list[str] = []
    for server in SERVERS:
        block = report["results"].get(server)
        if block is None:
            continue
        w("")
        w(f"== server: {block['label']}")
        clients = tuple(block["summary"])  # CLIENTS, and the --against baseline when run
        head = f"{'metric':34}" + "".join(f"{c:>13}" for c in clients)
        head += "".join(f"{'vs ' + c:>16}" for c in clients if c != "trimcp")
        w(head)
        w("-" * len(head))
        sums = {c: block["summary"][c] for c in clients}
        floor_connect = sums["floor"]["connect_ms"]
        for c in clients:
            v = sums[c]["connect_ms"]
            sums[c]["overhead_ms"] = None if v is None or floor_connect is None else v - floor_connect
        for key, label, fmt, _ in ROWS:
            line = f"{label:34}" + "".join(f"{_fmt(sums[c][key], fmt):>13}" for c in clients)
            if key != "overhead_ms":
                line += "".join(f"{_ratio(sums['trimcp'][key], sums[c][key]):>16}" for c in clients if c != "trimcp")
            w(line)
        if floor_connect is not None:
            w(
                f"  server's own startup (spawn + start + 1 round trip, i.e. the floor's connect): "
                f"{floor_connect:.1f} ms; a client's own connect cost is its overhead row"
            )
        for c in clients:
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
        w(f"{name:34}{v['import_ms']:>13.1f}{v['inproc_ms']:>13.1f}{v['rss_mb']:>13.1f}{v['rss_delta_mb']:>13.1f}")
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
