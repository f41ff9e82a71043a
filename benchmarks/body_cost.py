#!/usr/bin/env python3
"""What parsing a POST body really costs, against what the body budget counts for it.

For bodies of ``--size`` bytes of several shapes (valid JSON-RPC, dense structure, wide
characters, invalid JSON of each kind the parser refuses), tracemalloc measures the peak of
``jsonrpc.parse_payload`` (the bytes included: the HTTP server holds them meanwhile) and
what the parsed result keeps, both in copies of the body, next to ``jsonrpc.parse_cost``,
the bound the HTTP server reserves (``trimcp._trio.http1.server``).  Exits 1 if a peak passes
its bound.

Run:   python benchmarks/body_cost.py [--size 8M]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from trimcp._sansio import jsonrpc as rpc
from trimcp.cli.serve import parse_size

_HEAD = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":'


def one_string(n: int, extra: str = "") -> bytes:
    head, tail = _HEAD + b'{"message":"' + extra.encode(), b'"}}}'
    return head + b"a" * (n - len(head) - len(tail)) + tail


def items(n: int, item: bytes) -> bytes:
    head, tail = _HEAD + b'{"x":[', b"]}}}"
    return head + b",".join([item] * ((n - len(head) - len(tail)) // (len(item) + 1))) + tail


def keys(n: int) -> bytes:
    parts, size, i = [], len(_HEAD) + 4, 0
    while size < n - 24:
        part = b'"k%x":{}' % i
        parts.append(part)
        size, i = size + len(part) + 1, i + 1
    return _HEAD + b"{" + b",".join(parts) + b"}}}"


def nested(n: int, depth: int, level: Callable[[int], bytes], close: bytes) -> bytes:
    """Groups of ``depth`` nested levels, repeated in an array (each group below the
    parser's recursion limit)."""
    group = b"".join(level(i) for i in range(depth)) + b"0" + close * depth
    head, tail = _HEAD + b'{"x":[', b"]}}}"
    return head + b",".join([group] * ((n - len(head) - len(tail)) // (len(group) + 1))) + tail


SHAPES: dict[str, Callable[[int], bytes]] = {
    "valid: one ASCII string param": one_string,
    "valid: string + one CJK char": lambda n: one_string(n, "\u4e00"),
    "valid: string + one emoji": lambda n: one_string(n, "\U0001f600"),
    "valid: [0,0,...]": lambda n: items(n, b"0"),
    "valid: [1.5,1.5,...]": lambda n: items(n, b"1.5"),
    'valid: ["ab","ab",...]': lambda n: items(n, b'"ab"'),
    "valid: [{},{},...]": lambda n: items(n, b"{}"),
    "valid: [[],[],...]": lambda n: items(n, b"[]"),
    'valid: {"k0":{},"k1":{},...}': keys,
    'valid: [{"a":0},{"a":0},...]': lambda n: items(n, b'{"a":0}'),
    "valid: [[[[0]]]] nested 500 deep": lambda n: nested(n, 500, lambda i: b"[", b"]"),
    'valid: {"a":{"a":... nested 500 deep': lambda n: nested(n, 500, lambda i: b'{"a":', b"}"),
    'valid: {"k1":{"k2":... distinct keys': lambda n: nested(n, 500, lambda i: b'{"k%x":' % i, b"}"),
    "invalid: whitespace only": lambda n: b" " * n,
    "invalid: truncated (last } missing)": lambda n: one_string(n)[:-1],
    "invalid: truncated [{},{},...": lambda n: items(n, b"{}")[:-1],
    "invalid: one bad UTF-8 byte": lambda n: one_string(n).replace(b"aaaa", b"a\xffaa", 1),
    "invalid: raw control char in string": lambda n: one_string(n).replace(b"aaaa", b"a\x01aa", 1),
}


def measure(data: bytes) -> tuple[float, float, float, float]:
    """(peak, kept, bound) in copies of the body, and the seconds ``parse_cost`` took."""
    n = len(data)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    result = rpc.parse_payload(data, max_size=1 << 40)
    kept, peak = (x - base for x in tracemalloc.get_traced_memory())
    tracemalloc.stop()
    del result
    began = time.perf_counter()
    bound = rpc.parse_cost(data)
    took = time.perf_counter() - began
    return (n + peak) / n, (n + kept) / n, bound / n, took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="8M")
    size = parse_size(parser.parse_args().size)
    print(f"body {size} bytes; in copies of it (the bytes included)")
    print(f"{'shape':40s} {'peak':>7s} {'kept':>7s} {'bound':>7s} {'scan ms':>8s}")
    worst = 0.0
    for name, make in SHAPES.items():
        peak, kept, bound, took = measure(make(size))
        worst = max(worst, peak / bound)
        flag = "" if peak <= bound else "  OVER"
        print(f"{name:40s} {peak:7.2f} {kept:7.2f} {bound:7.2f} {took * 1000:8.1f}{flag}")
    print(f"highest peak/bound: {worst:.2f}")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
