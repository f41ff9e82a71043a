"""stdio failure detection and process hygiene (issue 11): real subprocesses, real time.

Each server is a small Python script written by the test, started with
``start_new_session=True`` by the transport, so its process group id is its pid.
Counting: pid 1 on the test machine does not reap orphans, so a grandchild that
died after its parent shows as a zombie (stat Z, ppid 1) for ever; the tests
count *live* (non-zombie) members of the group and check the server itself was
reaped by us.  No autojump_clock: a real child does not follow the mock clock.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
import trio

import trimcp
import trimcp.config
from trimcp import (
    Handlers,
    RequestTimeout,
    ShutdownPolicy,
    StdioOptions,
    Timeouts,
    TransportClosed,
    open_client,
)
from trimcp._trio.transports.stdio import open_stdio_process
from trimcp.config import StdioServerConfig, parse_config

PY = sys.executable

# Answers initialize (and lists no tools), then behaves as MODE says:
#   fork-exit  : after notifications/initialized, start a grandchild holding our stdout, write
#                one more notification, exit 3 (stderr says why)
#   children   : start two grandchildren (no pipes of ours) and exit cleanly on stdin EOF
#   stubborn   : ignore SIGINT and SIGTERM, never exit on EOF
SERVER = r"""
import json, os, signal, subprocess, sys, time
mode = sys.argv[1]
if mode == "stubborn":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
kids = []
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "hygiene", "version": "0"}}})
    elif msg.get("method") == "notifications/initialized":
        if mode == "fork-exit":
            # The grandchild inherits stdout: no EOF reaches the client when we exit.
            subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "last words"}})
            sys.stderr.write("fatal: lost the database\n"); sys.stderr.flush()
            os._exit(3)
        if mode == "children":
            for _ in range(2):
                kids.append(subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            sys.stderr.write("kids %s\n" % " ".join(str(k.pid) for k in kids)); sys.stderr.flush()
    elif "id" in msg:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
if mode == "stubborn":
    while True:
        time.sleep(3600)
"""


@pytest.fixture
def server(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    return path


def live_members(pgid: int) -> list[int]:
    """Pids of the process group's members that are not zombies (see the module docstring)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # exited while we looked
        fields = stat.rsplit(")", 1)[1].split()
        state, group = fields[0], int(fields[3])
        if group == pgid and state != "Z":
            found.append(int(entry))
    return found


def assert_reaped(pid: int) -> None:
    # waitpid on a pid that is no longer our (unreaped) child raises ChildProcessError.
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


async def test_exit_while_a_grandchild_holds_stdout_fails_pending_at_once(server: Path) -> None:
    # On main this waited for the 10 s request deadline (RequestTimeout): exit was only
    # noticed through EOF on stdout, which the grandchild keeps open.
    logs: list[str] = []

    async def on_log(params: trimcp.schema.LoggingMessageNotificationParams) -> None:
        logs.append(str(params.data))

    with trio.fail_after(8):
        async with open_client(
            [PY, str(server), "fork-exit"],
            revision="2025-06-18",
            timeouts=Timeouts(request=6),
            handlers=Handlers(logging=on_log),
        ) as client:
            stream = client.stream
            start = time.monotonic()
            with pytest.raises((TransportClosed, RequestTimeout)) as info:
                await client.list_tools()
            elapsed = time.monotonic() - start
        assert isinstance(info.value, TransportClosed), info.value
        assert "exited with status 3" in str(info.value)
        assert info.value.returncode == 3
        assert "fatal: lost the database" in (info.value.stderr_tail or "")
        assert elapsed < 2, elapsed
        # What it wrote before exiting was still delivered.
        assert logs == ["last words"]
        assert_reaped(stream.pid)
        assert live_members(stream.pid) == []  # the grandchild was stopped on close


async def test_a_well_behaved_servers_children_do_not_survive_close(server: Path) -> None:
    # On main the group was signalled only when the server ignored EOF: both sleeps survived.
    lines: list[str] = []
    with trio.fail_after(8):
        async with open_client(
            [PY, str(server), "children"], revision="2025-06-18", stdio=StdioOptions(on_stderr=lines.append)
        ) as client:
            stream = client.stream
            with trio.fail_after(5):
                while not any(line.startswith("kids ") for line in lines):
                    await trio.sleep(0.01)
            kids = [int(pid) for pid in lines[0].split()[1:]]
            assert sorted(live_members(stream.pid)) == sorted([stream.pid, *kids])
    assert live_members(stream.pid) == []
    assert stream.returncode == 0
    assert stream.signals_sent == []  # the server itself exited on EOF, no signal needed
    # SIGTERM first; SIGKILL follows here because the dead orphans stay zombies (pid 1 does
    # not reap them) and a zombie still counts as a group member for killpg.
    assert stream.group_signals_sent[:1] == ["SIGTERM"]
    assert_reaped(stream.pid)


async def test_a_clean_server_closes_without_any_signal() -> None:
    with trio.fail_after(8):
        async with open_stdio_process([PY, "-c", "import sys; sys.stdin.read()"]) as stream:
            pass
    assert stream.returncode == 0
    assert stream.signals_sent == [] and stream.group_signals_sent == []
    assert_reaped(stream.pid)


async def test_closing_a_stubborn_server_takes_about_a_second(server: Path) -> None:
    # On main: 2 s grace + 100 ms + 400 ms = 2.5 s.  Now 0.5 + 0.1 + 0.4 s.
    with trio.fail_after(8):
        async with open_stdio_process([PY, str(server), "stubborn"]) as stream:
            await trio.sleep(0.3)  # let it install its signal dispositions
            start = time.monotonic()
        elapsed = time.monotonic() - start
    assert stream.signals_sent == ["SIGINT", "SIGTERM", "SIGKILL"]
    assert 1.0 <= elapsed < 1.2, elapsed
    assert_reaped(stream.pid)
    assert live_members(stream.pid) == []


async def test_shutdown_policy_from_open_client_and_from_the_config(server: Path) -> None:
    fast = ShutdownPolicy(grace=0.1, sigint_wait=0.05, sigterm_wait=0.05)
    with trio.fail_after(8):
        async with open_client(
            [PY, str(server), "stubborn"], revision="2025-06-18", stdio=StdioOptions(shutdown=fast)
        ) as client:
            stream = client.stream
            start = time.monotonic()
        by_argument = time.monotonic() - start
    assert stream.signals_sent == ["SIGINT", "SIGTERM", "SIGKILL"]
    assert 0.2 <= by_argument < 0.6, by_argument

    config = parse_config(
        {
            "mcpServers": {
                "s": {
                    "command": PY,
                    "args": [str(server), "stubborn"],
                    "shutdown": {"graceMs": 100, "sigintMs": 50, "sigtermMs": 50},
                }
            }
        }
    )
    entry = config.server("s")
    assert isinstance(entry, StdioServerConfig)
    assert entry.shutdown == fast
    with trio.fail_after(8):
        async with open_client(entry, revision="2025-06-18") as client:
            stream = client.stream
            start = time.monotonic()
        by_config = time.monotonic() - start
    assert stream.signals_sent == ["SIGINT", "SIGTERM", "SIGKILL"]
    assert 0.2 <= by_config < 0.6, by_config


async def test_shutdown_grace_parameter_still_works() -> None:
    script = (
        "import signal, sys, time; signal.signal(signal.SIGINT, lambda *a: sys.exit(7)); "
        "print('up', flush=True); time.sleep(60)"
    )
    with trio.fail_after(8):
        async with open_stdio_process([PY, "-c", script], shutdown_grace=0.05) as stream:
            assert (await stream.receive()).data == b"up"
            start = time.monotonic()
        elapsed = time.monotonic() - start
    assert stream.signals_sent == ["SIGINT"]
    assert stream.returncode == 7
    assert elapsed < 0.4, elapsed


def test_shutdown_config_is_validated() -> None:
    def parse(shutdown: object) -> tuple[object, list[str]]:
        config = parse_config({"mcpServers": {"s": {"command": "x", "shutdown": shutdown}}})
        try:
            entry = config.server("s")
        except trimcp.config.ConfigError as exc:
            return exc, config.warnings
        assert isinstance(entry, StdioServerConfig)
        return entry.shutdown, config.warnings

    assert parse({}) == (ShutdownPolicy(), [])
    policy, warnings = parse({"graceMs": 250, "speed": 1})
    assert policy == ShutdownPolicy(grace=0.25)
    assert warnings == ['<config>: server "s": unknown field "shutdown.speed" (kept, not used)']
    for bad, said in [
        (5, "an object, not a number"),
        ({"sigintMs": -1}, "not -1"),
        ({"sigtermMs": "100"}, "not a string"),
        ({"graceMs": True}, "not a boolean"),
        ({"graceMs": json.loads("1e400")}, "not inf"),
    ]:
        error, _ = parse(bad)
        assert isinstance(error, trimcp.config.ConfigError), bad
        assert said in str(error) and '"shutdown' in str(error)
    with pytest.raises(ValueError, match="grace"):
        ShutdownPolicy(grace=float("nan"))
