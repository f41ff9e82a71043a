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

import copy
import json
import sys
from pathlib import Path

import pytest
import trio
from helpers.replay import ClientReplay, ServerReplay, first_problem, load, revision_of
from helpers.replay_mutations import mutants

from trimcp._sansio import events as ev

SPEC = Path(__file__).resolve().parents[1] / "spec"
FILES = sorted(p for p in SPEC.glob("**/*.jsonl"))
STATELESS = "2026-07-28"
RECORDED = "recorded/2026-07-28"
#: Mutants of each kind per transcript: bounded, so ~60 transcripts stay quick.
PER_KIND = 3  # a transcript this module records when the corpus has none
PATHS: list[str] = [str(p.relative_to(SPEC)) for p in FILES]
if not any(p.startswith(STATELESS + "/") for p in PATHS):
    PATHS.append(RECORDED)


def _record_stateless(out: Path) -> Path:
    """Record a 2026-07-28 conversation with the reference server over stdio."""
    import trimcp
    from trimcp import schema as s
    from trimcp.conformance.recorder import RecordingStream

    async def sample(params: object) -> dict[str, object]:
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "replay"}

    async def elicit(params: object) -> dict[str, object]:
        return {"action": "accept", "content": {"name": "Ada", "age": 36}}

    async def run() -> list[dict[str, object]]:
        argv = [sys.executable, "-m", "trimcp.reference"]
        with trio.fail_after(60):
            async with trimcp.open_stdio_process(argv, cwd=str(SPEC.parent)) as proc:
                rec = RecordingStream(proc)
                async with trimcp.open_client(
                    rec, revision=STATELESS, request_timeout=30, sampling_handler=sample,
                    elicitation_handler=elicit, roots=[s.Root(uri="file:///replay")],
                ) as client:
                    tools = {t.name for t in await client.list_tools()}
                    # (sample, elicit and roots answer with an InputRequiredResult first: mrtr)
                    for name, args in (
                        ("echo", {"message": "replay"}), ("add", {"a": 2, "b": 3}),
                        ("sample", {"prompt": "hi"}), ("elicit", {"message": "who?"}), ("roots", {}),
                    ):
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


# ---------------------------------------------------------------- mutations


@pytest.mark.parametrize("transcript", PATHS, indirect=True)
def test_mutation_is_rejected_at_the_mutation(transcript: tuple[Path, list, str]) -> None:
    path, entries, revision = transcript
    found = mutants(entries, revision, seed=f"{path.parent.name}/{path.name}", per_kind=PER_KIND)
    kinds = {m.kind for m in found}
    # Every transcript with an answer admits these; the others depend on what was recorded.
    assert {"unknown-id", "reordered", "duplicate", "drop-required", "wrong-type"} <= kinds, kinds
    wrong = []
    for mutant in found:
        first = first_problem(ClientReplay(mutant.entries, revision))
        if first is None:
            wrong.append(f"{mutant.kind}: {mutant.what}: silently accepted")
        elif first[0] != mutant.index:
            wrong.append(f"{mutant.kind}: {mutant.what}: first problem at {first[0]}: {first[1]}")
        elif not any(word in problem for problem in first[1] for word in mutant.expected):
            wrong.append(f"{mutant.kind}: {mutant.what}: rejected for another reason: {first[1]}")
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------- the replay itself can fail


def _reference(revision: str = "2025-11-25") -> list:
    path = SPEC / revision / "reference.jsonl"
    if not path.exists():
        pytest.skip(f"no {path}")
    return load(path)


def test_client_replay_notices_what_the_connection_sends_differently() -> None:
    entries = _reference()
    changed = copy.deepcopy(entries)
    changed[0][1]["params"]["capabilities"] = {"roots": {}}  # the Connection is told {}; it would send {}
    replay = ClientReplay(entries, "2025-11-25")
    replay.conn.capabilities = {"sampling": {}}
    assert any("recorded" in p for p in replay.step(0))
    # The Connection's own notifications/initialized must be in the recording.
    dropped = [e for e in entries if not (e[0] == "send" and e[1].get("method") == "notifications/initialized")]
    replay = ClientReplay(dropped, "2025-11-25")
    first = first_problem(replay)
    assert first is not None and "by itself, not recorded" in first[1][0]


def test_client_replay_notices_an_invented_event(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = _reference()
    replay = ClientReplay(entries, "2025-11-25")
    real = replay.conn.receive_bytes

    def receive(data: bytes | str) -> list:
        return [*real(data), ev.NotificationReceived("notifications/tools/list_changed", {})]

    monkeypatch.setattr(replay.conn, "receive_bytes", receive)
    first = first_problem(replay)
    assert first is not None and first[0] == 1 and "events" in first[1][0]


def test_server_replay_notices_an_answer_that_differs() -> None:
    entries = copy.deepcopy(_reference())
    entries[1][1]["result"]["protocolVersion"] = "2025-06-18"  # the Connection answers what it negotiated
    first = first_problem(ServerReplay(entries, "2025-11-25"))
    assert first is not None and first[0] == 1 and "answered" in first[1][0]


def test_server_replay_notices_a_stateless_answer_that_differs(request: pytest.FixtureRequest) -> None:
    corpus = sorted((SPEC / STATELESS).glob("*.jsonl"))
    entries = load(corpus[0] if corpus else request.getfixturevalue("recorded_stateless"))
    at = next(i for i, (d, m) in enumerate(entries) if d == "recv" and i > 1 and "result" in m)
    del entries[at][1]["result"]["resultType"]  # the server Connection adds it itself
    first = first_problem(ServerReplay(entries, STATELESS))
    assert first is not None and first[0] == at and "sent" in first[1][0], first


def test_stateless_client_refuses_a_server_request_even_for_a_declared_capability() -> None:
    # Spec 2026-07-28 mrtr: a server MUST ask for sampling, elicitation and roots inside an
    # InputRequiredResult; as a JSON-RPC request it is refused, capability declared or not.
    from trimcp import Connection, Role

    conn = Connection(Role.CLIENT, info={"name": "c", "version": "0"}, capabilities={"roots": {}},
                      supported_versions=[STATELESS])
    conn.discover()
    conn.outgoing()
    conn.receive_bytes(json.dumps({"jsonrpc": "2.0", "id": 0, "result": {
        "resultType": "complete", "supportedVersions": [STATELESS], "capabilities": {},
        "serverInfo": {"name": "s", "version": "0"},
    }}))
    events = conn.receive_bytes(json.dumps({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}))
    assert [e.kind for e in events if isinstance(e, ev.ProtocolIssue)] == ["method-not-in-revision"], events
    (answer,) = conn.outgoing()
    assert answer.error.code == -32601 and answer.id == "s1"  # type: ignore[union-attr]
