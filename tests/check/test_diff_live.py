"""``trimcp diff recording URL``: the live side declares what the recording's client declared.

A server may list other tools to a client that declares sampling, elicitation
or roots (server-everything does), so a live client declaring less than the
recorded one saw a smaller surface: an unchanged server "differed".  The
recording's declaration (``Transcript.declared_client``) is read back from
both eras' openings and turned into the live client's options
(``cli/evidence._declaring``), which must declare the very same capabilities.
The end-to-end test records server-everything over Streamable HTTP with
``trimcp check --record`` and diffs the recording against it: 0 differences.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from repo_paths import REPO
from test_check import reference_connector

from trimcp import Timeouts, open_client
from trimcp._trio.client.connect import _client_capabilities
from trimcp.cli.evidence import _declaring
from trimcp.conformance import (
    Transcript,
    diff_surfaces,
    run_checks,
    surface_from_client,
    surface_from_transcript,
)

REPO = REPO


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_declared_client_read_back_and_declared_again(revision: str, autojump_clock: trio.abc.Clock) -> None:
    report = await run_checks(reference_connector, target="reference", revision=revision)
    declared = Transcript(report.conversation, {"revision": report.revision}).declared_client()
    assert declared["protocolVersion"] == revision
    assert declared["clientInfo"]["name"]
    caps = declared["capabilities"]
    assert {"sampling", "elicitation", "roots"} <= set(caps)  # what the harness declares
    options = _declaring(declared)
    assert options["revision"] == revision and options["client_info"] == declared["clientInfo"]
    handlers = options["handlers"]
    again = _client_capabilities(
        handlers.sampling,
        handlers.elicitation,
        handlers.elicitation_modes,
        handlers.roots,
        options.get("extensions"),
        handlers.sampling_tools,
    )
    assert again == caps


def test_a_recording_without_an_opening_declares_nothing() -> None:
    assert Transcript([{"dir": "recv", "raw": "x"}]).declared_client() == {}
    assert _declaring({}) == {}


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp.cli", *args], capture_output=True, text=True, timeout=300, cwd=REPO, check=False
    )


@pytest.mark.integration
def test_diff_of_a_recording_against_the_unchanged_live_server_is_empty(tmp_path: Path) -> None:
    import peers

    argv = peers.require(peers.everything_http_argv("streamableHttp"), "server-everything")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen(
        argv, env=peers.everything_http_env(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_for(port)
        recorded = _cli("check", "--only", "tools.list", "--record", str(tmp_path / "rec"), url)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        [path] = sorted((tmp_path / "rec").rglob("*.jsonl"))
        same = _cli("diff", str(path), url)
        assert same.returncode == 0, same.stdout + same.stderr
        lines = same.stdout.splitlines()
        assert lines[0] == f"a: recorded (file): {path}"
        assert lines[1].startswith(f"b: live (URL): {url} (declaring the recording's client: ")
        assert lines[-1] == "the surfaces are the same"
        as_json = json.loads(_cli("diff", url, str(path), "--format", "json").stdout)
        assert as_json["same"] is True and as_json["sides"]["a"]["kind"] == "live"
        assert as_json["sides"]["b"] == {"kind": "recorded", "source": str(path), "declared": None}
        # The defect this fixes: a client declaring nothing sees a smaller surface of the same server.
        plain = trio.run(_plain_surface, url)
        assert diff_surfaces(surface_from_transcript(_read(path)), plain) != []
    finally:
        server.terminate()
        server.wait(timeout=10)


def _read(path: Path) -> Transcript:
    from trimcp.conformance import read_transcripts

    [transcript] = read_transcripts(path)
    return transcript


async def _plain_surface(url: str) -> dict[str, Any]:
    async with open_client(url, timeouts=Timeouts(request=30, connect=30)) as client:
        return await surface_from_client(client)


def _wait_for(port: int) -> None:
    import socket

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"server-everything did not listen on {port}")
