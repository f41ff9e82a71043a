"""Run the fuzz targets of ``fuzz.targets.TARGETS`` (every registered file's).

    python fuzz/run.py TARGET [-atheris_runs=N] [libFuzzer args]   # one target
    python fuzz/run.py all -atheris_runs=N                         # every target in turn
    python fuzz/run.py --smoke SECONDS [--engine hypothesis]       # all, SECONDS in total

With atheris importable a target runs coverage-guided (libFuzzer) in a child
process (``--child``), so a crash is reported against its target and the
parent can read libFuzzer's run count off its stderr and print inputs/s.
The seed corpus ``fuzz/corpus/<target>/`` is used by default: it is copied
into a scratch directory that comes first on the command line, since
libFuzzer writes the new inputs it finds into its first corpus directory and
the committed seeds must stay as they are.  Crash files go to a kept
temporary directory whose path is printed.  Without atheris (or with
``--engine hypothesis``) ``st.binary()`` under hypothesis runs N examples,
or, in smoke mode, batches of examples until the target's share of time is
used.  Smoke mode prints a table (target, engine, inputs, crashes) and exits
non-zero on any crash.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from collections.abc import Callable

CORPUS = ROOT / "fuzz" / "corpus"
#: Seconds a child may take beyond its fuzzing time (interpreter start, instrumentation).
STARTUP_SLACK = 60


def _targets() -> dict[str, Callable[[bytes], None]]:
    # Imported late: the atheris child must import trimcp under instrument_imports.
    from fuzz.targets import TARGETS

    return TARGETS


def _runs(args: list[str], default: int = 10_000) -> int:
    for a in args:
        if a.startswith(("-atheris_runs=", "-runs=")):
            return int(a.split("=", 1)[1])
    return default


def _have_atheris() -> bool:
    try:
        import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ hypothesis


def run_hypothesis(name: str, runs: int, seconds: float | None = None) -> tuple[int, str | None]:
    """``runs`` examples (or batches until ``seconds`` pass); (inputs run, crash text or None)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    target = _targets()[name]
    count = 0

    def once(data: bytes) -> None:
        nonlocal count
        count += 1
        target(data)

    def batch(n: int) -> None:
        @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(st.binary(max_size=4096))
        def fuzz(data: bytes) -> None:
            once(data)

        fuzz()

    start = time.monotonic()
    try:
        if seconds is None:
            batch(runs)
        else:
            while time.monotonic() - start < seconds:
                batch(100)
    except Exception:
        return count, traceback.format_exc(limit=6)
    return count, None


# ------------------------------------------------------------------ atheris


def _child(name: str, args: list[str]) -> None:
    import atheris

    # Only the library is instrumented: coverage of the oracles themselves guides nothing
    # and instrumenting them would halve the speed.
    with atheris.instrument_imports(include=["trimcp"]):
        from fuzz.targets import TARGETS as instrumented
    atheris.Setup([sys.argv[0], *args], instrumented[name])
    atheris.Fuzz()


def _corpus_args(name: str, args: list[str], scratch: Path) -> list[str]:
    """Flags as given; corpus dirs: the given ones, else scratch + the seed corpus."""
    if any(not a.startswith("-") for a in args):
        return args
    seeds = CORPUS / name
    work = scratch / "corpus"
    work.mkdir()
    dirs = [str(work)]
    if seeds.is_dir():
        dirs.append(str(seeds))
    return [*args, *dirs]


def run_atheris(
    name: str, args: list[str], seconds: float | None = None, echo: bool = True
) -> tuple[int, float, str | None]:
    """One target in a child process; (inputs run, seconds, crash text or None)."""
    scratch = Path(tempfile.mkdtemp(prefix=f"trimcp-fuzz-{name}-"))
    flags = [f"-artifact_prefix={scratch}/"]
    if not any(a.startswith("-max_len=") for a in args):
        flags.append("-max_len=1024")  # wire inputs this long reach every branch
    if seconds is not None:
        flags.append(f"-max_total_time={max(1, int(seconds))}")
    argv = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        name,
        *_corpus_args(name, [*flags, *args], scratch),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    limit = None if seconds is None else seconds + STARTUP_SLACK
    start = time.monotonic()
    try:
        proc = subprocess.run(
            argv,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=limit,
            cwd=scratch,
            check=False,
        )
        output, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode("utf-8", "replace")
        rc = -1
        output += f"\n(timed out after {limit} s)"
    elapsed = time.monotonic() - start
    if echo:
        sys.stdout.write(output)
    done = re.search(r"Done (\d+) (?:runs )?in (\d+) second", output)
    if done:
        runs, took = int(done.group(1)), max(float(done.group(2)), 1.0)
    else:
        statuses = re.findall(r"^#(\d+)", output, re.MULTILINE)
        runs, took = (int(statuses[-1]) if statuses else 0), elapsed
    if rc == 0:
        shutil.rmtree(scratch, ignore_errors=True)
        return runs, took, None
    tail = "\n".join(output.strip().splitlines()[-25:])
    return runs, took, f"exit {rc}; artifacts kept in {scratch}\n{tail}"


# ------------------------------------------------------------------ modes


def smoke(seconds: float, engine: str) -> int:
    TARGETS = _targets()
    share = seconds / len(TARGETS)
    rows: list[tuple[str, str, int, int]] = []
    failures: list[tuple[str, str]] = []
    if engine == "atheris":
        # Each child spends seconds importing and instrumenting trimcp before its share
        # of fuzzing starts: run them one per core, so the smoke costs about its budget.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
            done = list(pool.map(lambda n: run_atheris(n, [], share, echo=False), TARGETS))
        results = [(runs, crash) for runs, _, crash in done]
    else:
        results = [run_hypothesis(name, 0, share) for name in TARGETS]
    for name, (runs, crash) in zip(TARGETS, results):
        rows.append((name, engine, runs, int(crash is not None)))
        if crash is not None:
            failures.append((name, crash))
    for name, crash in failures:
        print(f"--- {name}: crash\n{crash}\n")
    width = max(len(n) for n in TARGETS)
    print(f"{'target':<{width}}  {'engine':<10}  {'inputs':>10}  crashes")
    for name, eng, runs, crashes in rows:
        print(f"{name:<{width}}  {eng:<10}  {runs:>10}  {crashes}")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2:])
        return 0
    engine = "atheris" if _have_atheris() else "hypothesis"
    if "--engine" in argv:
        i = argv.index("--engine")
        engine = argv[i + 1]
        del argv[i : i + 2]
    if argv[:1] == ["--smoke"]:
        if len(argv) != 2:
            sys.exit("usage: python fuzz/run.py --smoke SECONDS [--engine atheris|hypothesis]")
        return smoke(float(argv[1]), engine)
    TARGETS = _targets()
    if not argv or argv[0] not in (*TARGETS, "all"):
        sys.exit(f"usage: python fuzz/run.py {{{','.join(TARGETS)},all}} [-atheris_runs=N] ... | --smoke SECONDS")
    name, rest = argv[0], argv[1:]
    crashed = False
    for n in TARGETS if name == "all" else [name]:
        if engine == "atheris":
            runs, took, crash = run_atheris(n, rest)
            print(f"{n}: atheris, {runs} inputs in {took:.0f} s, {runs / took:.0f} inputs/s")
        else:
            start = time.monotonic()
            runs, crash = run_hypothesis(n, _runs(rest))
            took = max(time.monotonic() - start, 1e-9)
            print(f"{n}: hypothesis, {runs} examples in {took:.1f} s, {runs / took:.0f} inputs/s")
        if crash is not None:
            print(f"{n}: CRASH\n{crash}")
            crashed = True
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
