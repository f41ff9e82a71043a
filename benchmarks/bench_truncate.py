"""Truncating a large JSON-array tool result, against one ``json.loads`` of it.

Run: ``PYTHONPATH=. python benchmarks/bench_truncate.py [megabytes]`` (default 10).
The target (issue 12): truncation costs at most twice one ``json.loads`` of the text.
Each figure is the best of several runs, so a busy machine shows less noise.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from trimcp._sansio.host import estimate_tokens, truncate_result
from trimcp._sansio.schema import CallToolResult, from_wire


def _array_text(megabytes: float) -> str:
    items: list[dict[str, Any]] = []
    size, i = 0, 0
    while size < megabytes * 1_000_000:
        item = {"id": i, "name": f"item {i}", "path": f"/repo/src/module_{i % 97}/file_{i}.py",
                "tags": ["alpha", "beta", str(i % 13)], "score": i * 0.5, "ok": i % 3 == 0}
        items.append(item)
        size += len(json.dumps(item)) + 2
        i += 1
    return json.dumps(items)


def _best(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    text = _array_text(megabytes)
    wire = {"content": [{"type": "text", "text": text}]}
    structured_wire = {"content": [{"type": "text", "text": text}], "structuredContent": {"items": json.loads(text)}}
    typed = from_wire(CallToolResult, wire)
    loads = _best(lambda: json.loads(text))
    rows = [
        ("text block (wire dict)", _best(lambda: truncate_result(wire))),
        ("text block (CallToolResult)", _best(lambda: truncate_result(typed))),
        ("text + structuredContent", _best(lambda: truncate_result(structured_wire))),
    ]
    out = truncate_result(wire)
    print(f"input: {len(text) / 1e6:.1f} MB JSON array; output estimate {estimate_tokens(out)} tokens")
    print(f"json.loads once: {loads * 1000:.1f} ms")
    for label, seconds in rows:
        print(f"truncate_result, {label}: {seconds * 1000:.1f} ms = {seconds / loads:.2f}x json.loads")


if __name__ == "__main__":
    main()
