"""Run one fuzz target: ``python fuzz/run.py TARGET [-atheris_runs=N] [atheris/libFuzzer args]``.

TARGET is one of parse_payload, line_decoder, connection, schema (or ``all``).
Uses atheris when it is importable (coverage-guided; extra arguments go to
libFuzzer, e.g. a corpus directory); otherwise hypothesis ``@given(st.binary())``
for N examples (``-atheris_runs=N``, default 10000).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fuzz.targets import TARGETS


def _runs(args: list[str], default: int = 10_000) -> int:
    for a in args:
        if a.startswith(("-atheris_runs=", "-runs=")):
            return int(a.split("=", 1)[1])
    return default


def run_hypothesis(name: str, runs: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    target = TARGETS[name]

    @settings(max_examples=runs, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.binary(max_size=4096))
    def fuzz(data: bytes) -> None:
        target(data)

    print(f"{name}: hypothesis, {runs} examples")
    fuzz()
    print(f"{name}: ok")


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in (*TARGETS, "all"):
        sys.exit(f"usage: python fuzz/run.py {{{','.join(TARGETS)},all}} [-atheris_runs=N] ...")
    name, rest = argv[0], argv[1:]
    try:
        import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        for n in (TARGETS if name == "all" else [name]):
            run_hypothesis(n, _runs(rest))
        return
    if name == "all":
        sys.exit("atheris runs one target at a time")
    atheris.Setup([sys.argv[0], *rest], TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv[1:])
