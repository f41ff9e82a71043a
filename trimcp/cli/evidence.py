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
can pin a server's surface.  The output names each side ("a: recorded (file):
PATH", "b: live (URL): URL"); ``-`` lines are what ``a`` has and ``b`` lacks.

A server may offer a client that declares sampling, elicitation, roots or an
extension (MCP Apps) other tools than one that does not, so against a
recording the live side declares what the recording's client declared
(``Transcript.declared_client``: its capabilities, clientInfo and revision):
a recording diffed against the unchanged server it was made from is the same
surface.  The live client only declares: it refuses a sampling request and
declines an elicitation, and lists no roots.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .. import ALL_VERSIONS, Handlers, McpError, Timeouts, open_client
from .command_line import UsageError, is_url

# The harness (trimcp.conformance) is imported by the commands that run, not by building
# the command line: every other command would pay for it (a sixth of a second).
if TYPE_CHECKING:
    from ..conformance import Transcript

__all__ = ["DIFF_EXAMPLES", "REPLAY_EXAMPLES", "add_diff_arguments", "add_replay_arguments", "run_diff", "run_replay"]

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
    from ..conformance import TranscriptError, read_transcripts, replay

    try:
        transcripts = read_transcripts(Path(ns.path))
    except TranscriptError as exc:
        raise UsageError(str(exc)) from None
    rows: list[dict[str, Any]] = []
    for transcript in transcripts:
        outcome = replay(transcript)
        rows.append(
            {
                "path": str(transcript.path),
                "revision": outcome.revision,
                "messages": outcome.messages,
                "ok": outcome.ok,
                "problems": outcome.problems,
            }
        )
    if ns.format == "json":
        json.dump({"transcripts": rows, "ok": all(r["ok"] for r in rows)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            verdict = "ok" if row["ok"] else f"{len(row['problems'])} problems"
            sys.stdout.write(
                f"{row['path']}: {row['revision'] or '(no revision)'}, {row['messages']} messages checked, {verdict}\n"
            )
            sys.stdout.writelines(f"  - {p}\n" for p in row["problems"])
    return 0 if all(r["ok"] for r in rows) else 1


@attrs.frozen
class _Side:
    word: str
    surface: dict[str, Any]
    #: A recording's transcript (``None`` for a live server).
    transcript: Transcript | None = None
    #: What the live client declared (copied from the other side's recording), for the output.
    declared: dict[str, Any] = attrs.field(factory=dict)

    @property
    def label(self) -> str:
        if self.transcript is not None:
            return f"recorded (file): {self.transcript.path or self.word}"
        if self.declared:
            shown = ", ".join(sorted(self.declared.get("capabilities") or {})) or "no capabilities"
            return (
                f"live (URL): {self.word} (declaring the recording's client: {shown}; "
                f"revision {self.declared.get('protocolVersion') or 'auto'})"
            )
        return f"live (URL): {self.word}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "recorded" if self.transcript is not None else "live",
            "source": self.word,
            "declared": self.declared or None,
        }


#: JSON-RPC's "Invalid Request": this client takes no sampling request.
_INVALID_REQUEST = -32600


async def _refuse_sampling(params: Any) -> Any:
    raise McpError(_INVALID_REQUEST, "trimcp diff only compares surfaces: it samples nothing")


async def _decline(params: Any) -> Any:
    return {"action": "decline"}


def _declaring(declared: dict[str, Any]) -> dict[str, Any]:
    """``open_client`` options that declare what a recorded client declared."""
    caps = declared.get("capabilities")
    caps = caps if isinstance(caps, dict) else {}
    options: dict[str, Any] = {}
    handlers: dict[str, Any] = {}
    if "sampling" in caps:
        handlers["sampling"] = _refuse_sampling
        if isinstance(caps["sampling"], dict) and "tools" in caps["sampling"]:
            handlers["sampling_tools"] = True
    elicitation = caps.get("elicitation")
    if elicitation is not None:
        modes = [m for m in ("form", "url") if isinstance(elicitation, dict) and m in elicitation]
        handlers["elicitation"] = _decline
        handlers["elicitation_modes"] = modes or ["form"]
    if "roots" in caps:
        handlers["roots"] = []
    if handlers:
        options["handlers"] = Handlers(**handlers)
    extensions = caps.get("extensions")
    if isinstance(extensions, dict) and all(isinstance(v, dict) for v in extensions.values()) and extensions:
        options["extensions"] = extensions
    info = declared.get("clientInfo")
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        options["client_info"] = info
    version = declared.get("protocolVersion")
    if isinstance(version, str) and version in ALL_VERSIONS:
        options["revision"] = version
    return options


def _recorded(side: str) -> Transcript:
    from ..conformance import TranscriptError, read_transcripts

    try:
        transcripts = read_transcripts(Path(side))
    except TranscriptError as exc:
        raise UsageError(f"{exc} (give a recording or a server URL)") from None
    if len(transcripts) != 1:
        raise UsageError(f"{side}: holds {len(transcripts)} transcripts; name one of them")
    return transcripts[0]


async def _live(side: str, timeout: float, like: Transcript | None) -> _Side:
    from ..conformance import surface_from_client

    declared: dict[str, Any] = {}
    if like is not None:
        declared = like.declared_client()
        if like.revision in ALL_VERSIONS:
            declared["protocolVersion"] = like.revision  # the revision the recording spoke
    async with open_client(side, timeouts=Timeouts(request=timeout, connect=timeout), **_declaring(declared)) as client:
        return _Side(side, await surface_from_client(client), declared=declared)


async def _sides(a: str, b: str, timeout: float) -> tuple[_Side, _Side]:
    from ..conformance import surface_from_transcript

    recorded = {w: _recorded(w) for w in (a, b) if not is_url(w)}
    # A live side declares what the other side's recording declared (the module docstring).
    out = []
    for word, other in ((a, b), (b, a)):
        if word in recorded:
            out.append(_Side(word, surface_from_transcript(recorded[word]), transcript=recorded[word]))
        else:
            out.append(await _live(word, timeout, recorded.get(other)))
    return out[0], out[1]


async def run_diff(ns: argparse.Namespace) -> int:
    from ..conformance import diff_surfaces, jsonable

    left, right = await _sides(ns.a, ns.b, ns.timeout)
    changes = diff_surfaces(left.surface, right.surface)
    if ns.format == "json":
        json.dump(
            {
                "a": ns.a,
                "b": ns.b,
                "sides": {"a": left.to_json(), "b": right.to_json()},
                "same": not changes,
                "changes": [jsonable(c.to_json()) for c in changes],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
        return 0 if not changes else 1
    sys.stdout.write(f"a: {left.label}\nb: {right.label}\n")
    if not changes:
        sys.stdout.write("the surfaces are the same\n")
    else:
        sys.stdout.writelines(f"{c.describe()}\n" for c in changes)
        sys.stdout.write(f"{len(changes)} differences (- only in a, + only in b, ~ a -> b)\n")
    return 0 if not changes else 1
