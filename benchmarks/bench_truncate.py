"""Truncating large tool results, against one ``json.loads`` of the data.

Run: ``PYTHONPATH=. python benchmarks/bench_truncate.py [megabytes]`` (default 10).
The target (issue 12): truncation costs at most twice one ``json.loads`` of the text.
Each figure is the best of several runs, so a busy machine shows less noise.

Rows: (a) a JSON array in a text block; (b) the same data as ``structuredContent``
alone, and with its JSON twin in a text block as servers are asked to send it (two
copies of the data, so about twice the work); (c) a CSV table of the same size (the
unit is still one ``json.loads`` of the JSON array).  Then the async wrapper
``trimcp.host.truncate_result`` against the pure core on (a), where the difference
is two hops to a worker thread, and on a small result, which passes without any.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import trio

from trimcp._sansio.host import estimate_tokens, truncate_result
from trimcp._sansio.schema import CallToolResult, from_wire
from trimcp.host import truncate_result as truncate_async


def _items(megabytes: float) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    size, i = 0, 0
    while size < megabytes * 1_000_000:
        item = {
            "id": i,
            "name": f"item {i}",
            "path": f"/repo/src/module_{i % 97}/file_{i}.py",
            "tags": ["alpha", "beta", str(i % 13)],
            "score": i * 0.5,
            "ok": i % 3 == 0,
        }
        items.append(item)
        size += len(json.dumps(item)) + 2
        i += 1
    return items


def _csv(megabytes: float) -> str:
    rows = ["id,name,path,tags,score,ok"]
    size, i = 0, 0
    while size < megabytes * 1_000_000:
        rows.append(f"{i},item {i},/repo/src/module_{i % 97}/file_{i}.py,alpha|beta|{i % 13},{i * 0.5},{i % 3 == 0}")
        size += len(rows[-1]) + 1
        i += 1
    return "\n".join(rows)


def _best(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _best_async(fn: Callable[[], Any], runs: int = 5, inner: int = 1) -> float:
    async def timed() -> float:
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            for _ in range(inner):
                await fn()
            best = min(best, (time.perf_counter() - start) / inner)
        return best

    return trio.run(timed)


def main() -> None:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    items = _items(megabytes)
    text = json.dumps(items)
    csv = _csv(megabytes)
    value = json.loads(text)
    wire = {"content": [{"type": "text", "text": text}]}
    typed = from_wire(CallToolResult, wire)
    structured = {"content": [], "structuredContent": {"items": value}}
    both = {"content": [{"type": "text", "text": text}], "structuredContent": {"items": value}}
    csv_wire = {"content": [{"type": "text", "text": csv}]}
    loads = _best(lambda: json.loads(text))
    rows = [
        ("(a) JSON array, text block (wire dict)", _best(lambda: truncate_result(wire))),
        ("(a) JSON array, text block (CallToolResult)", _best(lambda: truncate_result(typed))),
        ("(b) structuredContent only", _best(lambda: truncate_result(structured))),
        ("(b) structuredContent + its text twin", _best(lambda: truncate_result(both))),
        (f"(c) CSV, {len(csv) / 1e6:.1f} MB", _best(lambda: truncate_result(csv_wire))),
    ]
    print(
        f"input: {len(text) / 1e6:.1f} MB JSON array of {len(items)} objects; "
        f"output estimate {estimate_tokens(truncate_result(wire))} tokens (limit 25000)"
    )
    print(f"json.loads once: {loads * 1000:.1f} ms\n")
    print(f"| {'case':<44} | {'ms':>7} | {'x json.loads':>12} |")
    print(f"|{'-' * 46}|{'-' * 9}|{'-' * 14}|")
    for label, seconds in rows:
        print(f"| {label:<44} | {seconds * 1000:7.1f} | {seconds / loads:12.2f} |")

    sync_big = rows[0][1]
    async_big = _best_async(lambda: truncate_async(wire))
    small = {"content": [{"type": "text", "text": "x" * 2000}]}
    sync_small = _best(lambda: [truncate_result(small) for _ in range(10_000)], runs=3) / 10_000
    async_small = _best_async(lambda: truncate_async(small), runs=3, inner=10_000)
    print("\nasync wrapper (trimcp.host.truncate_result) against the pure core:")
    print(
        f"  (a) 10 MB, cut:          {async_big * 1000:7.1f} ms vs {sync_big * 1000:7.1f} ms "
        f"(+{(async_big - sync_big) * 1000:.1f} ms)"
    )
    print(f"  2 kB, passes unchanged:  {async_small * 1e6:7.1f} us vs {sync_small * 1e6:7.1f} us")


if __name__ == "__main__":
    main()
