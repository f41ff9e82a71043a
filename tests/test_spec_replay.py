"""The recorded corpus (spec/**/*.jsonl) replayed through fresh Connections, both ways.

Client side: each transcript is played again by a client Connection of the
recorded revision (tests/helpers/replay.py says how, and which fields the
Connection chooses itself: only request ids): what it sends equals the
recording, every received message is accepted and gives exactly the event its
kind implies.  Server side: the client's messages go into a server Connection;
where the recorded server is trimcp's, its answers through the server API
equal the recording.  Mutations of the received messages are rejected at the
mutated message, never before and never silently.

When the corpus has no 2026-07-28 (stateless era) transcript, one is recorded
from the reference server into a temporary directory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio
from helpers.replay import ClientReplay, ServerReplay, first_problem, load, revision_of

SPEC = Path(__file__).resolve().parents[1] / "spec"
FILES = sorted(p for p in SPEC.glob("**/*.jsonl"))
STATELESS = "2026-07-28"
RECORDED = "recorded/2026-07-28"  # a transcript this module records when the corpus has none
PATHS: list[str] = [str(p.relative_to(SPEC)) for p in FILES]
if not any(p.startswith(STATELESS + "/") for p in PATHS):
    PATHS.append(RECORDED)


def _record_stateless(out: Path) -> Path:
    """Record a 2026-07-28 conversation with the reference server over stdio."""
    import trimcp
    from trimcp.conformance.recorder import RecordingStream

    async def run() -> list[dict[str, object]]:
        argv = [sys.executable, "-m", "trimcp.reference"]
        with trio.fail_after(60):
            async with trimcp.open_stdio_process(argv, cwd=str(SPEC.parent)) as proc:
                rec = RecordingStream(proc)
                async with trimcp.open_client(rec, revision=STATELESS, request_timeout=30) as client:
                    tools = {t.name for t in await client.list_tools()}
                    for name, args in (("echo", {"message": "replay"}), ("add", {"a": 2, "b": 3})):
                        if name in tools:
                            await client.call_tool(name, args)
                    for r in (await client.list_resources())[:2]:
                        await client.read_resource(r.uri)
                    await client.list_prompts()
                return rec.transcript()

    transcript = trio.run(run)
    path = out / STATELESS / "reference.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in transcript), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def recorded_stateless(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _record_stateless(tmp_path_factory.mktemp("spec-replay"))


@pytest.fixture
def transcript(request: pytest.FixtureRequest) -> tuple[Path, list[tuple[str, object]], str]:
    name: str = request.param
    if name == RECORDED:
        path: Path = request.getfixturevalue("recorded_stateless")
    else:
        path = SPEC / name
    entries = load(path)
    assert entries, f"{name}: empty transcript"
    return path, entries, revision_of(entries, path.parent.name)


@pytest.mark.parametrize("transcript", PATHS, indirect=True)
def test_client_replay(transcript: tuple[Path, list, str]) -> None:
    path, entries, revision = transcript
    assert revision == path.parent.name
    replay = ClientReplay(entries, revision)
    found = first_problem(replay)
    assert found is None, f"{path}: entry {found[0]}: {found[1]}" if found else ""
    assert replay.finish() == [] or _only_cancelled(replay), replay.finish()
    assert replay.conn.protocol_version == revision
    # One event per received message (a late answer to a cancelled request gives none).
    received = sum(1 for d, _ in entries if d == "recv")
    assert len(replay.events) <= received and len(replay.events) >= received - len(replay.cancelled)


def _only_cancelled(replay: ClientReplay) -> bool:
    return not replay.auto and all(k in replay.cancelled for k, v in replay.ids.items() if v in replay.conn.pending)


@pytest.mark.parametrize("transcript", PATHS, indirect=True)
def test_server_replay(transcript: tuple[Path, list, str]) -> None:
    path, entries, revision = transcript
    replay = ServerReplay(entries, revision)
    found = first_problem(replay)
    assert found is None, f"{path}: entry {found[0]}: {found[1]}" if found else ""
    assert not replay.auto, f"the server Connection sent {replay.auto} by itself, not recorded"
