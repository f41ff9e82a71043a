"""Evidence you can keep: a run's conversation written down, read back and judged again offline.

Theory of operation
-------------------
``trimcp check --record DIR`` writes the main conversation of a run in the
format of the ``spec/`` corpus: ``DIR/<revision>/<name>.jsonl``, one line per
JSON text in the order it crossed the transport, ``{"dir": "send" | "recv",
"message": <JSON-RPC object>}`` (a received text that is not JSON is kept as
``{"dir": "recv", "raw": "<text>"}``, so a garbage line is evidence too), and
beside it ``<name>.meta.json``: the target, the transport, era, revision and
server info, when and by which trimcp it was recorded.

``replay(transcript)`` judges a recording again without the server: every
received text through the same validators a live run uses
(``validate.validate_conversation``: JSON-RPC, answers to ids that were sent,
once, the negotiated revision's schema, the direction rule) and the
notifications against the capabilities the server declared in the recording
(basic/lifecycle, capability negotiation).  A recording made before a server
upgrade and one made after it can so be compared (``surface.py``) and re-judged
when trimcp's rules improve.

``Transcript.declared_client`` is what the recorded client said of itself when
it opened (capabilities, clientInfo, the revision it offered): ``trimcp diff
recording URL`` makes the live side declare the same, since a server may offer
a client that declares sampling or elicitation other tools than one that does
not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import attrs

from .._errors import RemoteProtocolError, TrimcpError
from .._sansio import jsonrpc as rpc
from .._sansio.revisions import has_capability, own_gate
from .validate import validate_conversation

__all__ = ["Transcript", "TranscriptError", "read_transcripts", "replay", "write_transcript"]


class TranscriptError(TrimcpError, ValueError):
    """A recording that cannot be read: not a transcript, or a line that is not one entry."""


@attrs.define
class Transcript:
    """A recorded conversation (``spec/`` corpus format): its entries, its metadata, and where it was read from."""

    entries: list[dict[str, Any]]
    meta: dict[str, Any] = attrs.field(factory=dict)
    path: Path | None = None

    @property
    def revision(self) -> str | None:
        found = self.meta.get("revision")
        return found if isinstance(found, str) else _negotiated(self.entries)

    def received_texts(self) -> list[bytes]:
        return [
            (json.dumps(e["message"]) if "message" in e else str(e.get("raw", ""))).encode()
            for e in self.entries
            if e["dir"] == "recv"
        ]

    def sent_methods(self) -> dict[rpc.RequestId, str]:
        out: dict[rpc.RequestId, str] = {}
        for e in self.entries:
            msg = e.get("message")
            if e["dir"] == "send" and isinstance(msg, dict) and "method" in msg and "id" in msg:
                out[msg["id"]] = msg["method"]
        return out

    def answers(self) -> dict[str, list[dict[str, Any]]]:
        """Each successful result, grouped by the method of the request it answers, in order."""
        methods = self.sent_methods()
        out: dict[str, list[dict[str, Any]]] = {}
        for e in self.entries:
            msg = e.get("message")
            if e["dir"] != "recv" or not isinstance(msg, dict) or "result" not in msg:
                continue
            method = methods.get(msg.get("id"))  # type: ignore[arg-type]
            if method is not None and isinstance(msg["result"], dict):
                out.setdefault(method, []).append(msg["result"])
        return out

    def declared_client(self) -> dict[str, Any]:
        """``{"capabilities", "clientInfo", "protocolVersion"}`` as the recorded client declared them:
        the first ``initialize``'s params, else the first request's 2026-07-28 ``_meta`` envelope
        (``server/discover``'s); keys the recording does not show are absent."""
        sent = [e["message"] for e in self.entries if e["dir"] == "send" and isinstance(e.get("message"), dict)]
        requests = [m for m in sent if "method" in m and "id" in m and isinstance(m.get("params"), dict)]
        for msg in requests:
            if msg["method"] == "initialize":
                params = msg["params"]
                return {k: params[k] for k in ("capabilities", "clientInfo", "protocolVersion") if k in params}
        for msg in requests:
            meta = msg["params"].get("_meta")
            if isinstance(meta, dict) and _ENVELOPE["protocolVersion"] in meta:
                return {k: meta[key] for k, key in _ENVELOPE.items() if key in meta}
        return {}


#: The 2026-07-28 request envelope's ``_meta`` keys, by the ``initialize`` name of each.
_ENVELOPE = {
    "capabilities": "io.modelcontextprotocol/clientCapabilities",
    "clientInfo": "io.modelcontextprotocol/clientInfo",
    "protocolVersion": "io.modelcontextprotocol/protocolVersion",
}


def _negotiated(entries: Sequence[Mapping[str, Any]]) -> str | None:
    for e in entries:
        msg = e.get("message")
        if e.get("dir") == "recv" and isinstance(msg, dict) and isinstance(msg.get("result"), dict):
            version = msg["result"].get("protocolVersion")
            if isinstance(version, str):
                return version
    return None


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def file_name(server_info: Mapping[str, Any] | None, fallback: str = "server") -> str:
    """A file name for a server: its ``serverInfo.name`` made safe, else ``fallback``."""
    name = str((server_info or {}).get("name") or fallback)
    return _UNSAFE.sub("-", name).strip("-.") or fallback


def write_transcript(
    folder: Path,
    entries: Iterable[Mapping[str, Any]],
    meta: Mapping[str, Any],
    name: str | None = None,
) -> Path:
    """Write ``folder/<revision>/<name>.jsonl`` and its ``.meta.json``; the path of the ``.jsonl``."""
    revision = str(meta.get("revision") or "unnegotiated")
    stem = name or file_name(meta.get("server_info"))
    target = folder / revision
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{stem}.jsonl"
    lines = [json.dumps(dict(e), sort_keys=True, ensure_ascii=False) for e in entries]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    full_meta = {
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "recorded_by": f"trimcp {_version()}",
        **meta,
    }
    (target / f"{stem}.meta.json").write_text(json.dumps(full_meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _version() -> str:
    try:
        return metadata.version("trimcp")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


def _read_one(path: Path) -> Transcript:
    entries: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise TranscriptError(f"{path}: cannot read: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise TranscriptError(f"{path}:{number}: not JSON: {exc}") from None
        if not (
            isinstance(entry, dict)
            and entry.get("dir") in ("send", "recv")
            and ("message" in entry or (entry.get("dir") == "recv" and isinstance(entry.get("raw"), str)))
        ):
            raise TranscriptError(f'{path}:{number}: not a transcript entry ({{"dir": ..., "message": ...}})')
        entries.append(entry)
    meta: dict[str, Any] = {}
    sidecar = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    if sidecar.exists():
        try:
            loaded = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise TranscriptError(f"{sidecar}: not JSON: {exc}") from None
        if isinstance(loaded, dict):
            meta = loaded
    return Transcript(entries, meta, path)


def read_transcripts(path: Path) -> list[Transcript]:
    """The transcript at ``path``, or every ``*.jsonl`` under a folder (sorted)."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        if not files:
            raise TranscriptError(f"{path}: no *.jsonl transcript in this folder")
        return [_read_one(p) for p in files]
    if not path.exists():
        raise TranscriptError(f"{path}: no such file or folder")
    return [_read_one(path)]


@attrs.frozen
class ReplayOutcome:
    revision: str | None
    messages: int
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def replay(transcript: Transcript) -> ReplayOutcome:
    """Judge a recording again, offline, with the rules of its revision."""
    revision = transcript.revision
    outcome = validate_conversation(transcript.received_texts(), transcript.sent_methods(), revision)
    problems = [
        *(f"invalid JSON-RPC: {p}" for p in outcome.invalid_jsonrpc),
        *(f"answer to an id never sent: {p}" for p in outcome.unknown_ids),
        *(f"answered twice: {p}" for p in outcome.duplicate_ids),
        *(f"schema: {p}" for p in outcome.schema_errors),
        *_undeclared_notifications(transcript),
    ]
    return ReplayOutcome(revision, outcome.checked, problems)


def _undeclared_notifications(transcript: Transcript) -> list[str]:
    answers = transcript.answers()
    found = answers.get("initialize") or answers.get("server/discover")
    if not found:
        return []
    opened = found[0]
    caps = opened.get("capabilities")
    if not isinstance(caps, dict):
        return []
    out: dict[str, str] = {}
    for text in transcript.received_texts():
        try:
            parsed = rpc.parse_payload(text)
        except RemoteProtocolError:
            continue
        for msg in parsed.messages:
            if isinstance(msg, rpc.Notification):
                gate = own_gate(msg.method)
                if gate is not None and not has_capability(caps, gate):
                    out[msg.method] = ".".join(gate)
    return [f"{method} sent without the {gate} capability" for method, gate in out.items()]
