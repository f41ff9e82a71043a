"""How the host-side fuzz targets read their one ``bytes`` input.

Strict JSON (UTF-8, no ``NaN``) is taken as the document itself, so the seed files
in ``fuzz/corpus/<target>/`` are real documents; anything else goes through
``Source``, which reads the bytes as one decision per byte over a per-target
vocabulary (the member names and values the module under test branches on), so
random bytes still reach deep paths and a mutating fuzzer has a smooth landscape.
"""

from __future__ import annotations

import json
from collections.abc import Coroutine, Sequence
from typing import Any


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def strict_json(data: bytes | str) -> tuple[bool, Any]:
    """``(True, value)`` when ``data`` is strict JSON (no NaN/Infinity, finite floats)."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text, parse_constant=_reject_constant)
        json.dumps(value, allow_nan=False)  # 1e400 parses to inf
    except (ValueError, RecursionError):
        return False, None
    return True, value


_INTS = (0, 1, -1, 2, 3, 7, 64, 200, 443, 65535, 65536, 600_000, 600_001, 10**12, -(10**20), 2**63)
_FLOATS = (0.0, 0.5, -0.0, 1.5, 3.0, 1e-9, 99.99, 1e300, -2.5, 6.0e5)


class Source:
    """Bytes as a stream of decisions; past the end every decision is 0."""

    def __init__(self, data: bytes, vocab: Sequence[str]) -> None:
        self.data = data
        self.pos = 0
        self.vocab = vocab

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.byte() % len(options)]

    def string(self) -> str:
        b = self.byte()
        if b < 200:
            return self.vocab[b % len(self.vocab)]
        n = self.byte() % 24
        raw = self.data[self.pos : self.pos + n]
        self.pos += n
        # surrogateescape: arbitrary bytes become lone surrogates, which JSON can carry
        return raw.decode("utf-8", "surrogateescape")

    def value(self, depth: int = 0) -> Any:
        kind = self.byte() % (11 if depth < 4 else 6)
        if kind == 0:
            return None
        if kind == 1:
            return bool(self.byte() & 1)
        if kind == 2:
            return self.pick(_INTS)
        if kind == 3:
            return self.pick(_FLOATS)
        if kind in (4, 5, 6):
            return self.string()
        if kind in (7, 8):
            return [self.value(depth + 1) for _ in range(self.byte() % 4)]
        return {self.string(): self.value(depth + 1) for _ in range(self.byte() % 5)}


def document(data: bytes, vocab: Sequence[str]) -> tuple[bool, Any]:
    """``(was_json, document)``: the input itself when strict JSON, else built from it."""
    ok, value = strict_json(data)
    if ok:
        return True, value
    return False, Source(data, vocab).value()


def finished(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that must not wait (no I/O, a synchronous date parser) to its end."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise AssertionError("validate_form_async waited on something with a synchronous parser")


def jsonable(value: Any) -> None:
    json.dumps(value, allow_nan=False)
