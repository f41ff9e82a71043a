"""Evidence you can keep: recordings written, read back, replayed; surfaces diffed; many servers.

The recording of a real run (the reference server, in process) must replay
clean, and a recording altered in one place must not: the replay judges with
the same validators as a live run.  The surface read from a recording equals
the one asked of the live server.  ``run_check_many`` checks the servers of a
real mcpServers file (plain-Python stdio servers from ``tests/helpers``),
concurrently, one row each.
"""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from test_check import BAD_SERVER, reference_connector

from trimcp import open_client
from trimcp.cli.check_many import exit_code, print_rows, print_rows_json, run_check_many
from trimcp.conformance import (
    Transcript,
    TranscriptError,
    diff_surfaces,
    read_transcripts,
    replay,
    run_checks,
    surface_from_client,
    surface_from_transcript,
    write_transcript,
)
from trimcp.conformance.surface import Change


async def _recorded(revision: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
    report = await run_checks(reference_connector, target="reference", revision=revision)
    return report, report.conversation


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_recording_replays_clean(tmp_path: Path, revision: str, autojump_clock: trio.abc.Clock) -> None:
    report, conversation = await _recorded(revision)
    assert conversation and {e["dir"] for e in conversation} == {"send", "recv"}
    path = write_transcript(
        tmp_path, conversation, {"target": "reference", "revision": report.revision, "server_info": report.server_info}
    )
    assert path == tmp_path / revision / "trimcp-reference.jsonl"
    [transcript] = read_transcripts(tmp_path)
    assert transcript.revision == revision
    assert transcript.meta["recorded_by"].startswith("trimcp ")
    outcome = replay(transcript)
    assert outcome.problems == []
    assert outcome.messages == sum(1 for e in conversation if e["dir"] == "recv")


def _tools_answer(transcript: Transcript) -> dict[str, Any]:
    methods = transcript.sent_methods()
    for entry in transcript.entries:
        msg = entry.get("message")
        if entry["dir"] == "recv" and isinstance(msg, dict) and methods.get(msg.get("id")) == "tools/list":
            return msg
    raise AssertionError("no tools/list answer recorded")


async def test_replay_rejects_a_mutated_result(autojump_clock: trio.abc.Clock) -> None:
    _, conversation = await _recorded("2025-11-25")
    transcript = Transcript(copy.deepcopy(conversation), {"revision": "2025-11-25"})
    del _tools_answer(transcript)["result"]["tools"][0]["inputSchema"]
    problems = replay(transcript).problems
    assert any(p.startswith("schema:") and "inputSchema" in p for p in problems), problems


async def test_replay_rejects_undeclared_notification_and_garbage(autojump_clock: trio.abc.Clock) -> None:
    _, conversation = await _recorded("2025-11-25")
    entries = copy.deepcopy(conversation)
    entries.append({"dir": "recv", "message": {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {}}})
    entries.append({"dir": "recv", "raw": "Server started!"})
    problems = replay(Transcript(entries, {"revision": "2025-11-25"})).problems
    assert any("invalid JSON-RPC" in p for p in problems), problems
    assert any("notifications/tasks/status" in p for p in problems), problems


def test_read_transcripts_errors(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="no \\*.jsonl"):
        read_transcripts(tmp_path)
    with pytest.raises(TranscriptError, match="no such file"):
        read_transcripts(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"dir": "send", "message": {}}\n{"dir": "sideways"}\n')
    with pytest.raises(TranscriptError, match=r"bad.jsonl:2: not a transcript entry"):
        read_transcripts(bad)
    bad.write_text("{not json\n")
    with pytest.raises(TranscriptError, match=r"bad.jsonl:1: not JSON"):
        read_transcripts(bad)


async def test_surface_of_recording_equals_live_surface(autojump_clock: trio.abc.Clock) -> None:
    _, conversation = await _recorded("2025-11-25")
    recorded = surface_from_transcript(Transcript(conversation))
    async with reference_connector() as stream, open_client(stream, revision="2025-11-25") as client:
        live = await surface_from_client(client)
    assert recorded["tools"] and recorded["resources"] and recorded["prompts"]
    assert diff_surfaces(recorded, live) == []


def test_diff_surfaces_names_every_change() -> None:
    tool = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
    a = {
        "server": {"name": "s", "version": "1"},
        "capabilities": {"tools": {}},
        "tools": {"echo": tool, "gone": {"name": "gone"}},
        "resources": {},
        "templates": {},
        "prompts": {},
    }
    b = copy.deepcopy(a)
    b["server"]["version"] = "2"
    del b["tools"]["gone"]
    b["tools"]["echo"]["inputSchema"]["properties"]["text"]["type"] = "integer"
    b["prompts"]["new"] = {"name": "new"}
    b["capabilities"]["logging"] = {}
    changes = diff_surfaces(a, b)
    assert changes == [
        Change("changed", "server", "", "version", "1", "2"),
        Change("added", "capabilities", "", "logging", None, {}),
        Change("changed", "tools", "echo", "inputSchema.properties.text.type", "string", "integer"),
        Change("removed", "tools", "gone"),
        Change("added", "prompts", "new"),
    ]
    assert diff_surfaces(a, copy.deepcopy(a)) == []
    assert [c.describe() for c in changes if c.section == "tools"] == [
        '~ tools echo.inputSchema.properties.text.type: "string" -> "integer"',
        "- tools gone",
    ]


@pytest.mark.deadline(300)  # above its own fail_after(240), which says more
async def test_check_many_servers_of_a_config(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "good": {"command": sys.executable, "args": [BAD_SERVER, "--mode", "good"]},
                    "broken": {"command": sys.executable, "args": [BAD_SERVER, "--mode", "bad-tool-schema"]},
                    "off": {"command": sys.executable, "args": [BAD_SERVER], "disabled": True},
                    "nowhere": {"command": str(tmp_path / "no-such-server")},
                    "wrong": {"url": 42},
                }
            }
        )
    )
    progress = io.StringIO()
    with trio.fail_after(240):
        rows = await run_check_many(
            str(config), [], revision=None, request_timeout=10, connect_timeout=10, progress=progress
        )
    by_name = {r.name: r for r in rows}
    assert [r.name for r in rows][:4] == ["good", "broken", "off", "nowhere"]
    assert by_name["good"].state == "checked" and by_name["good"].report is not None
    assert by_name["good"].report.ok
    assert by_name["broken"].state == "checked" and by_name["broken"].report is not None
    assert not by_name["broken"].report.ok
    assert [r.id for r in by_name["broken"].report.must_failures] == ["tools.input-schema"]
    assert by_name["off"].state == "disabled"
    assert by_name["nowhere"].state == "unreachable" and "no-such-server" in by_name["nowhere"].error
    assert by_name["wrong"].state == "error"
    assert exit_code(rows, lambda r: not r.ok) == 1
    assert progress.getvalue().count("trimcp: [") == 3  # the three servers that ran
    table = io.StringIO()
    print_rows(rows, table, lambda r: not r.ok)
    text = table.getvalue()
    assert "good" in text and "FAILED" in text and "disabled" in text
    assert "5 servers: 1 ok, 1 failed, 2 not checked, 1 disabled" in text
    doc = io.StringIO()
    print_rows_json(rows, doc, str(config), lambda r: not r.ok)
    parsed = json.loads(doc.getvalue())
    assert parsed["ok"] is False and [s["state"] for s in parsed["servers"]][:3] == ["checked", "checked", "disabled"]


async def test_check_many_contains_a_target_the_transport_refuses(tmp_path: Path) -> None:
    # The WebSocket transport refuses a malformed URL with ValueError when it opens it: one
    # entry's mistake is that entry's error row, not a traceback ending the whole run.
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"w": {"type": "ws", "url": "ws://127.0.0.1:99999/mcp"}}}))
    with trio.fail_after(60):
        rows = await run_check_many(str(config), [], revision=None, request_timeout=5, connect_timeout=5)
    [row] = rows
    assert row.state == "error" and "bad port" in row.error
    assert exit_code(rows, lambda r: not r.ok) == 4


async def test_check_many_unknown_name(tmp_path: Path) -> None:
    from trimcp.cli.command_line import UsageError

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"good": {"command": "x"}}}))
    with pytest.raises(UsageError, match="no server 'typo' \\(known: good\\)"):
        await run_check_many(str(config), ["typo"], revision=None, request_timeout=1, connect_timeout=1)


# --------------------------------------------------------------------------- the CLI


def test_cli_record_replay_and_diff(tmp_path: Path) -> None:
    from test_check import cli

    proc = cli("check", "--record", str(tmp_path / "rec"), "--", sys.executable, BAD_SERVER, "--mode", "good")
    assert proc.returncode == 0, proc.stderr
    [path] = sorted((tmp_path / "rec").rglob("*.jsonl"))
    assert "trimcp: recorded" in proc.stderr and str(path) in proc.stderr
    replayed = cli("replay", str(tmp_path / "rec"), "--format", "json")
    assert replayed.returncode == 0, replayed.stdout
    doc = json.loads(replayed.stdout)
    assert doc["ok"] is True and doc["transcripts"][0]["messages"] > 0
    same = cli("diff", str(path), str(path))
    assert (same.returncode, same.stdout) == (
        0,
        f"a: recorded (file): {path}\nb: recorded (file): {path}\nthe surfaces are the same\n",
    )
    # The same server with one tool's schema changed: diff names it and exits 1.
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for entry in lines:
        result = entry.get("message", {}).get("result", {})
        for tool in result.get("tools", []):
            tool["inputSchema"] = {"type": "object", "properties": {"x": {"type": "integer"}}}
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(e) + "\n" for e in lines))
    differ = cli("diff", str(path), str(changed))
    assert differ.returncode == 1
    assert "inputSchema.properties.x" in differ.stdout and "differences" in differ.stdout
    # A broken recording is a one-line usage error, never a traceback.
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n")
    bad = cli("replay", str(broken))
    assert bad.returncode == 2 and "broken.jsonl:1: not JSON" in bad.stderr and "Traceback" not in bad.stderr


def test_cli_check_config_many(tmp_path: Path) -> None:
    from test_check import cli

    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "good": {"command": sys.executable, "args": [BAD_SERVER, "--mode", "good"]},
                    "broken": {"command": sys.executable, "args": [BAD_SERVER, "--mode", "bad-tool-schema"]},
                }
            }
        )
    )
    proc = cli("check", "--config", str(config))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("trimcp: [") == 2
    assert "2 servers: 1 ok, 1 failed" in proc.stdout
    only_good = cli("check", "--config", str(config), "good", "--format", "json")
    assert only_good.returncode == 0, only_good.stderr
    doc = json.loads(only_good.stdout)
    assert [s["name"] for s in doc["servers"]] == ["good"] and doc["ok"] is True
    typo = cli("check", "--config", str(config), "goood")
    assert typo.returncode == 2 and "no server 'goood'" in typo.stderr
