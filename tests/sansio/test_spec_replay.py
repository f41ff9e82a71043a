"""The recorded corpus (spec/**/*.jsonl) replayed through fresh Connections, both ways.

Client side: each transcript is played again by a client Connection of the
recorded revision (tests/helpers/replay.py says how, and which fields the
Connection chooses itself: only request ids): what it sends equals the
recording, every received message is accepted and gives exactly the event its
kind implies.  Server side: the client's messages go into a server Connection;
where the recorded server is trimcp's, its answers through the server API
equal the recording.  Mutations of the received messages are rejected at the
mutated message, never before and never silently.

What a recorded peer does wrong but the Connection tolerates by design is not
trimcp's failure: each such case is listed once in ``PEER_DEFECTS`` (server,
revision, rule, entry), excused at that entry only (and at the same message in
every mutant), and a listed case the replay no longer meets fails the test, so
the list cannot go stale.  Over HTTP a transcript is ``<server>.http.jsonl`` or
``<server>.sse.jsonl`` and its ``server`` here is that stem (``mcp-sdk.http``);
the extra ``"http"`` member of its entries plays no part in the replay.

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
from repo_paths import SPEC

from trimcp._sansio import events as ev

SPEC = SPEC
FILES = sorted(p for p in SPEC.glob("**/*.jsonl"))
STATELESS = "2026-07-28"
RECORDED = "recorded/2026-07-28"
#: Mutants of each kind per transcript: bounded, so ~60 transcripts stay quick.
PER_KIND = 3  # a transcript this module records when the corpus has none
PATHS: list[str] = [str(p.relative_to(SPEC)) for p in FILES]
if not any(p.startswith(STATELESS + "/") for p in PATHS):
    PATHS.append(RECORDED)

#: spec server/utilities/logging: a server that sends log messages declares ``logging``.
UNDECLARED_LOGGING = "notifications/message but the server did not declare logging"
#: Defects of recorded peers that trimcp's client tolerates: (server, revision, rule, entry).
#: The mcp-sdk (mcp 2.3.0) server logs from its progress tool without declaring logging.
PEER_DEFECTS: tuple[tuple[str, str, str, int], ...] = (
    ("mcp-sdk", "2024-11-05", UNDECLARED_LOGGING, 26),
    ("mcp-sdk", "2025-03-26", UNDECLARED_LOGGING, 26),
    ("mcp-sdk", "2025-06-18", UNDECLARED_LOGGING, 26),
    ("mcp-sdk", "2025-11-25", UNDECLARED_LOGGING, 26),
    # The same server over Streamable HTTP, and over HTTP+SSE in 2024-11-05.
    ("mcp-sdk.http", "2024-11-05", UNDECLARED_LOGGING, 26),
    ("mcp-sdk.http", "2025-03-26", UNDECLARED_LOGGING, 26),
    ("mcp-sdk.http", "2025-06-18", UNDECLARED_LOGGING, 26),
    ("mcp-sdk.http", "2025-11-25", UNDECLARED_LOGGING, 26),
    ("mcp-sdk.sse", "2024-11-05", UNDECLARED_LOGGING, 26),
)


def _excused(path: Path) -> dict[int, str]:
    """The listed peer defects of one transcript: entry index -> words of its problem."""
    server = path.name.removesuffix(".jsonl")
    return {entry: rule for s, rev, rule, entry in PEER_DEFECTS if s == server and rev == path.parent.name}


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
                    rec,
                    revision=STATELESS,
                    timeouts=trimcp.Timeouts(request=30),
                    handlers=trimcp.Handlers(sampling=sample, elicitation=elicit, roots=[s.Root(uri="file:///replay")]),
                ) as client:
                    tools = {t.name for t in await client.list_tools()}
                    # (sample, elicit and roots answer with an InputRequiredResult first: mrtr)
                    for name, args in (
                        ("echo", {"message": "replay"}),
                        ("add", {"a": 2, "b": 3}),
                        ("sample", {"prompt": "hi"}),
                        ("elicit", {"message": "who?"}),
                        ("roots", {}),
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
    excused = _excused(path)
    replay = ClientReplay(entries, revision, excused=excused)
    found = first_problem(replay)
    assert found is None, f"{path}: entry {found[0]}: {found[1]}" if found else ""
    stale = sorted(set(excused) - replay.excused_seen)
    assert not stale, f"{path}: PEER_DEFECTS lists entries {stale}, where the replay finds no such problem"
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
    excused = _excused(path)
    wrong = []
    for mutant in found:
        moved = {mutant.where(entry): rule for entry, rule in excused.items()}
        first = first_problem(ClientReplay(mutant.entries, revision, excused=moved))
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
    # Only a trimcp server's answers are compared: the reference server's transcript.
    path = SPEC / STATELESS / "reference.jsonl"
    entries = load(path if path.exists() else request.getfixturevalue("recorded_stateless"))
    at = next(i for i, (d, m) in enumerate(entries) if d == "recv" and i > 1 and "result" in m)
    del entries[at][1]["result"]["resultType"]  # the server Connection adds it itself
    first = first_problem(ServerReplay(entries, STATELESS))
    assert first is not None and first[0] == at and "sent" in first[1][0], first


def test_stateless_client_refuses_a_server_request_even_for_a_declared_capability() -> None:
    # Spec 2026-07-28 mrtr: a server MUST ask for sampling, elicitation and roots inside an
    # InputRequiredResult; as a JSON-RPC request it is refused, capability declared or not.
    from trimcp import Connection, Role

    conn = Connection(
        Role.CLIENT, info={"name": "c", "version": "0"}, capabilities={"roots": {}}, supported_versions=[STATELESS]
    )
    conn.discover()
    conn.outgoing()
    conn.receive_bytes(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "resultType": "complete",
                    "supportedVersions": [STATELESS],
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "0"},
                },
            }
        )
    )
    events = conn.receive_bytes(json.dumps({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}))
    assert [e.kind for e in events if isinstance(e, ev.ProtocolIssue)] == ["method-not-in-revision"], events
    (answer,) = conn.outgoing()
    assert answer.error.code == -32601 and answer.id == "s1"  # type: ignore[union-attr]


# ---------------------------------------------------------------- peer defects, late progress, HTTP


@pytest.mark.parametrize("defect", PEER_DEFECTS, ids=lambda d: f"{d[1]}/{d[0]}@{d[3]}")
def test_a_listed_peer_defect_is_recorded_and_is_the_only_one_excused(defect: tuple[str, str, str, int]) -> None:
    server, revision, rule, entry = defect
    path = SPEC / revision / f"{server}.jsonl"
    assert path.exists(), f"PEER_DEFECTS lists {path}, which the corpus does not hold"
    entries = load(path)
    # Every other listed defect of the file excused: this one is the first problem, where listed.
    others = {k: v for k, v in _excused(path).items() if k != entry}
    first = first_problem(ClientReplay(entries, revision, excused=others))
    assert first is not None and first[0] == entry and any(rule in p for p in first[1]), first
    # Excusing it drops only the problem it names: the same message broken otherwise still fails.
    broken = copy.deepcopy(entries)
    del broken[entry][1]["params"]["level"]
    first = first_problem(ClientReplay(broken, revision, excused=_excused(path)))
    assert first is not None and first[0] == entry and "schema:" in first[1][0], first


def _late_progress() -> tuple[list, int]:
    """A transcript with progress after its request's recorded cancellation, and where."""
    for path in FILES:
        entries = load(path)
        cancelled, tokens = set(), {}
        for i, (d, m) in enumerate(entries):
            if not isinstance(m, dict):
                continue
            if d == "send" and "id" in m and "method" in m:
                tokens[((m.get("params") or {}).get("_meta") or {}).get("progressToken")] = m["id"]
            elif d == "send" and m.get("method") == "notifications/cancelled":
                cancelled.add(m["params"]["requestId"])
            elif (
                d == "recv"
                and m.get("method") == "notifications/progress"
                and tokens.get(m["params"]["progressToken"]) in cancelled
                and path.parent.name != STATELESS
            ):
                return entries, i
    pytest.skip("no progress after a cancellation in the corpus")


def test_progress_after_a_cancellation_is_accepted_only_for_the_cancelled_request() -> None:
    entries, at = _late_progress()
    revision = revision_of(entries, "")
    assert first_problem(ClientReplay(entries[: at + 1], revision)) is None
    # The same progress without the cancellation before it: the request is live, so it is
    # taken as progress - and with the cancellation after it, the late one is not excused.
    cancel = next(
        i for i, (d, m) in enumerate(entries[:at]) if d == "send" and m.get("method") == "notifications/cancelled"
    )
    moved = [*entries[:cancel], *entries[cancel + 1 : at + 1], entries[cancel]]
    replay = ClientReplay(moved, revision)
    assert first_problem(replay) is None and any(isinstance(e, ev.ProgressReceived) for e in replay.events)
    # Progress for a token whose request was answered, not cancelled: reported.
    answered = next(
        m["params"]["_meta"]["progressToken"]
        for d, m in entries[:at]
        if d == "send"
        and "id" in m
        and ((m.get("params") or {}).get("_meta") or {}).get("progressToken")
        not in (None, entries[at][1]["params"]["progressToken"])
    )
    stray = ("recv", {**entries[at][1], "params": {**entries[at][1]["params"], "progressToken": answered}})
    first = first_problem(ClientReplay([*entries[: at + 1], stray], revision))
    assert first is not None and first[0] == at + 1 and "unknown-progress-token" in first[1][0], first
    # Late, but not valid progress: the schema still judges it.
    broken = copy.deepcopy(entries[: at + 1])
    del broken[at][1]["params"]["progress"]
    first = first_problem(ClientReplay(broken, revision))
    assert first is not None and first[0] == at, first


@pytest.mark.parametrize("transcript", PATHS[:: max(1, len(PATHS) // 6)], indirect=True)
def test_a_mutant_says_where_each_recorded_entry_went(transcript: tuple[Path, list, str]) -> None:
    path, entries, revision = transcript
    for mutant in mutants(entries, revision, seed=path.name, per_kind=PER_KIND):
        if mutant.inserted is not None or mutant.moved is not None:  # (the others keep every index)
            assert [mutant.entries[mutant.where(j)] for j in range(len(entries))] == entries, mutant.what
            assert len(mutant.entries) == len(entries) + (mutant.inserted is not None)


def test_an_http_transcript_replays_like_its_messages(tmp_path: Path) -> None:
    # Over HTTP each entry has an "http" member (spec/README.md); the replay takes the messages.
    source = SPEC / "2025-11-25" / "reference.jsonl"
    if not source.exists():
        pytest.skip(f"no {source}")
    out = tmp_path / "2025-11-25" / "reference.http.jsonl"
    out.parent.mkdir()
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        entry["http"] = {"status": 200, "headers": {"content-type": "application/json"}}
        lines.append(json.dumps(entry) + "\n")
    out.write_text("".join(lines), encoding="utf-8")
    entries = load(out)
    assert entries == load(source) and _excused(out) == {}
    assert first_problem(ClientReplay(entries, "2025-11-25")) is None
    assert first_problem(ServerReplay(entries, "2025-11-25")) is None
