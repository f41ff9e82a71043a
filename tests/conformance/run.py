"""Run the official MCP conformance suite against trimcp, server and client, for each revision.

Theory of operation
-------------------
1. Install Node 22 and the pinned ``@modelcontextprotocol/conformance`` into a
   repo-local folder (``.ci/cache/conformance``, gitignored; reused while the
   pins match) with the ordinary ``npm install`` -- nothing global.
2. For each revision: start ``trimcp serve --http 127.0.0.1:PORT`` (the
   reference server), run ``conformance server --requirements REV`` against
   it, stop it; then run ``conformance client --requirements REV`` with
   ``tests/conformance/client.py`` as the client.  ``--requirements`` runs the
   scenarios the revision scores plus the not-scored ones (extensions,
   pending, added after release) for visibility; the suite's own exit status
   judges the scored ones against ``expected-failures.REV.yml`` (an
   unexpected failure *or* a stale baseline entry fails the run).
3. Print one table: leg x revision -> scored passed/total, then the
   not-scored results.  Exit 1 when any leg's suite exit status was non-zero.

Every process started here is stopped here.  Usage::

    python tests/conformance/run.py [--revision 2025-11-25 ...] [--leg server|client ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUITE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.2.0-alpha.12"
NODE_VERSION = "22.23.3"  # the `node` npm package: a Node binary, no root needed
REVISIONS = ("2025-11-25", "2026-07-28")
LEGS = ("server", "client")
SUMMARY = re.compile(r"^\s*([✓✗])\s+(\S+):\s+(\d+) passed, (\d+) failed")


def log(message: str) -> None:
    print(f"[conformance] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------- install


def install(cache: Path) -> Path:
    """Node 22 + the pinned suite under ``cache``; returns the ``bin`` folder holding ``node``."""
    pins = {"dependencies": {SUITE: SUITE_VERSION, "node": NODE_VERSION}}
    manifest = cache / "package.json"
    node_bin = cache / "node_modules" / "node" / "bin"
    runner = cache / "node_modules" / ".bin" / "conformance"
    fresh = manifest.exists() and json.loads(manifest.read_text()).get("dependencies") == pins["dependencies"]
    if fresh and (node_bin / "node").exists() and runner.exists():
        log(f"using cached {SUITE}@{SUITE_VERSION} and node {NODE_VERSION} in {cache}")
        return node_bin
    cache.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"private": True, **pins}, indent=2) + "\n")
    log(f"installing {SUITE}@{SUITE_VERSION} and node@{NODE_VERSION} into {cache}")
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=cache,
        check=True,
        stdout=sys.stderr,
    )
    return node_bin


# ----------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(out: Path, page_size: int | None) -> tuple[subprocess.Popen[bytes], str]:
    """``trimcp serve --http 127.0.0.1:PORT``; waits until it accepts connections."""
    port = free_port()
    trimcp_cli = Path(sys.executable).with_name("trimcp")
    argv = [str(trimcp_cli)] if trimcp_cli.exists() else [sys.executable, "-m", "trimcp.cli"]
    argv += ["serve", "--http", f"127.0.0.1:{port}"]
    if page_size is not None:
        argv += ["--page-size", str(page_size)]
    errlog = open(out / "trimcp-serve.log", "wb")
    proc = subprocess.Popen(argv, stdout=errlog, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"trimcp serve exited with {proc.returncode}; see {out / 'trimcp-serve.log'}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)
    stop(proc)
    raise RuntimeError("trimcp serve did not start listening within 20 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End ``proc`` and its process group: SIGINT, then SIGTERM, then SIGKILL."""
    for sig, wait in ((signal.SIGINT, 5), (signal.SIGTERM, 3), (signal.SIGKILL, 3)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue


def run_suite(argv: list[str], env: dict[str, str], logfile: Path, timeout: float) -> tuple[int, str]:
    with open(logfile, "w") as sink:
        proc = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log(f"{argv[1]} leg timed out after {timeout} s")
            rc = 124
        finally:
            stop(proc)
    return rc, logfile.read_text(errors="replace")


# ----------------------------------------------------------- scoring


def requirement_set(runner: Path, env: dict[str, str], revision: str) -> dict[str, dict[str, set[str]]]:
    """{leg: {"scored": names, "not_scored": {name: reason}}} from ``conformance list``."""
    text = subprocess.run(
        [str(runner), "list", "--requirements", revision], env=env, check=True, capture_output=True, text=True
    ).stdout
    sets: dict[str, dict[str, set[str]]] = {leg: {"scored": set(), "not_scored": set()} for leg in LEGS}
    section = None
    for line in text.splitlines():
        if line.startswith("Server scenarios"):
            section = "server"
        elif line.startswith("Client scenarios"):
            section = "client"
        elif line.startswith("Run and reported"):
            section = "not_scored"
        match = re.match(r"^\s+- (\S+)(?: \[(server|client)\])?$", line)
        if match and section in LEGS:
            sets[section]["scored"].add(match.group(1))
        elif match and section == "not_scored" and match.group(2):
            sets[match.group(2)]["not_scored"].add(match.group(1))
    return sets


def outcomes(output: str) -> dict[str, bool]:
    """{scenario: passed} from the suite's summary lines."""
    found: dict[str, bool] = {}
    for line in output.splitlines():
        match = SUMMARY.match(line)
        if match:
            found[match.group(2)] = match.group(1) == "✓"
    return found


def baseline(revision: str) -> Path:
    return HERE / f"expected-failures.{revision}.yml"


def _names(kind: str, names: list[str]) -> str:
    """``kind: a, b, auth/* x12`` -- the auth scenarios counted, not named."""
    auth = [n for n in names if n.startswith("auth/")]
    rest = [n for n in names if not n.startswith("auth/")]
    if len(auth) > 1:
        rest.append(f"auth/* x{len(auth)}")
    else:
        rest += auth
    return f"{kind}: {', '.join(rest)}" if rest else ""


# ----------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--revision", action="append", choices=REVISIONS, help="default: all")
    parser.add_argument("--leg", action="append", choices=LEGS, help="default: both")
    parser.add_argument(
        "--cache", type=Path, default=Path(os.environ.get("TRIMCP_CONFORMANCE_CACHE", ROOT / ".ci/cache/conformance"))
    )
    parser.add_argument("--out", type=Path, default=None, help="results folder (default: CACHE/results)")
    parser.add_argument("--leg-timeout", type=float, default=240.0)
    parser.add_argument(
        "--page-size",
        type=int,
        default=None,
        help="the reference server's page size (default: its own, 5; 0 = no pagination). "
        "Some not-scored scenarios read only the first tools/list page.",
    )
    args = parser.parse_args(argv)
    revisions = args.revision or list(REVISIONS)
    legs = args.leg or list(LEGS)
    started = time.monotonic()

    node_bin = install(args.cache.resolve())
    runner = args.cache.resolve() / "node_modules" / ".bin" / "conformance"
    env = dict(os.environ, PATH=f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}", NO_COLOR="1")
    out = (args.out or args.cache / "results").resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    client_cmd = f"{sys.executable} {HERE / 'client.py'}"

    rows: list[tuple[str, str, int, int, list[str], int, int, list[str], int]] = []
    failed = False
    for revision in revisions:
        sets = requirement_set(runner, env, revision)
        for leg in legs:
            leg_out = out / f"{leg}-{revision}"
            leg_out.mkdir()
            common = ["--requirements", revision, "--expected-failures", str(baseline(revision)), "-o", str(leg_out)]
            t0 = time.monotonic()
            if leg == "server":
                proc, url = start_server(leg_out, args.page_size)
                try:
                    rc, text = run_suite(
                        [str(runner), "server", "--url", url, *common],
                        env,
                        out / f"{leg}-{revision}.log",
                        args.leg_timeout,
                    )
                finally:
                    stop(proc)
            else:
                rc, text = run_suite(
                    [str(runner), "client", "--command", client_cmd, *common],
                    env,
                    out / f"{leg}-{revision}.log",
                    args.leg_timeout,
                )
            seen = outcomes(text)
            scored = sorted(sets[leg]["scored"])
            extra = sorted(sets[leg]["not_scored"])
            s_fail = [n for n in scored if not seen.get(n, False)]
            x_fail = [n for n in extra if n in seen and not seen[n]]
            log(
                f"{leg} {revision}: suite exit {rc} in {time.monotonic() - t0:.0f} s "
                f"(log {out / f'{leg}-{revision}.log'})"
            )
            failed |= rc != 0
            rows.append(
                (
                    leg,
                    revision,
                    len(scored) - len(s_fail),
                    len(scored),
                    s_fail,
                    sum(1 for n in extra if seen.get(n)),
                    sum(1 for n in extra if n in seen),
                    x_fail,
                    rc,
                )
            )

    print()
    print(f"MCP conformance ({SUITE}@{SUITE_VERSION}) -- results in {out}")
    print(f"{'leg':<7} {'revision':<11} {'scored':>9}  {'suite':<6} {'not scored':>11}  failing")
    for leg, revision, ok, total, s_fail, x_ok, x_total, x_fail, rc in rows:
        verdict = "ok" if rc == 0 else f"FAIL({rc})"
        print(
            f"{leg:<7} {revision:<11} {f'{ok}/{total}':>9}  {verdict:<6} {f'{x_ok}/{x_total}':>11}  "
            + "; ".join(p for p in (_names("scored", s_fail), _names("not scored", x_fail)) if p)
        )
    listed = {r: baseline(r).read_text() for r in revisions if baseline(r).exists()}
    print(
        "scored failures listed in expected-failures.<revision>.yml do not fail the run; "
        f"baselines: {', '.join(str(baseline(r).relative_to(ROOT)) for r in listed)}"
    )
    print(f"runtime {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
