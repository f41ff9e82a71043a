"""``trimcp replay`` and ``trimcp diff``: judge a recording again, compare two surfaces.

Theory of operation
-------------------
``trimcp check --record DIR`` keeps a run's conversation (``spec/`` corpus
format, see ``trimcp.conformance.transcript``).  ``trimcp replay PATH`` reads
one transcript or every one under a folder and validates each again, offline,
with the rules of its revision; exit 0 when every one is clean, 1 otherwise.

``trimcp diff A B`` compares what two servers offer - capabilities, tools and
their schemas, resources, templates, prompts - where each side is a recording
(a ``.jsonl`` file or a folder holding exactly one) or a live server URL; exit 0
when the surfaces are equal, 1 when they differ (as diff(1) does), so a CI job
can pin a server's surface.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import open_client
from ..conformance import (
    TranscriptError,
    diff_surfaces,
    read_transcripts,
    replay,
    surface_from_client,
    surface_from_transcript,
)
from .targets import UsageError, is_url

__all__ = ["DIFF_EXAMPLES", "REPLAY_EXAMPLES", "add_diff_arguments", "add_replay_arguments", "run_diff",
           "run_replay"]

REPLAY_EXAMPLES = """\
examples:
  trimcp check --record recordings/ -- python my_server.py
  trimcp replay recordings/
  trimcp replay recordings/2025-11-25/my-server.jsonl --format json"""

DIFF_EXAMPLES = """\
examples:
  trimcp diff before/2025-11-25/my-server.jsonl after/2025-11-25/my-server.jsonl
  trimcp diff recordings/ http://127.0.0.1:8000/mcp --format json"""


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a transcript (.jsonl) or a folder of them (trimcp check --record)")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help="a recording (.jsonl, or a folder holding one) or a server URL")
    parser.add_argument("b", help="the other side, likewise")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--timeout", type=float, default=30.0, help="per-request timeout for a URL, seconds")


def run_replay(ns: argparse.Namespace) -> int:
    try:
        transcripts = read_transcripts(Path(ns.path))
    except TranscriptError as exc:
        raise UsageError(str(exc)) from None
    rows: list[dict[str, Any]] = []
    for transcript in transcripts:
        outcome = replay(transcript)
        rows.append({"path": str(transcript.path), "revision": outcome.revision, "messages": outcome.messages,
                     "ok": outcome.ok, "problems": outcome.problems})
    if ns.format == "json":
        json.dump({"transcripts": rows, "ok": all(r["ok"] for r in rows)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            verdict = "ok" if row["ok"] else f"{len(row['problems'])} problems"
            sys.stdout.write(f"{row['path']}: {row['revision'] or '(no revision)'}, "
                             f"{row['messages']} messages checked, {verdict}\n")
            sys.stdout.writelines(f"  - {p}\n" for p in row["problems"])
    return 0 if all(r["ok"] for r in rows) else 1


async def _surface(side: str, timeout: float) -> dict[str, Any]:
    if is_url(side):
        async with open_client(side, request_timeout=timeout, connect_timeout=timeout) as client:
            return await surface_from_client(client)
    try:
        transcripts = read_transcripts(Path(side))
    except TranscriptError as exc:
        raise UsageError(f"{exc} (give a recording or a server URL)") from None
    if len(transcripts) != 1:
        raise UsageError(f"{side}: holds {len(transcripts)} transcripts; name one of them")
    return surface_from_transcript(transcripts[0])


async def run_diff(ns: argparse.Namespace) -> int:
    left = await _surface(ns.a, ns.timeout)
    right = await _surface(ns.b, ns.timeout)
    changes = diff_surfaces(left, right)
    if ns.format == "json":
        json.dump({"a": ns.a, "b": ns.b, "same": not changes, "changes": [c.to_json() for c in changes]},
                  sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif not changes:
        sys.stdout.write("the surfaces are the same\n")
    else:
        sys.stdout.writelines(f"{c.describe()}\n" for c in changes)
        sys.stdout.write(f"{len(changes)} differences\n")
    return 0 if not changes else 1
