"""``trimcp servers status``: every server of an mcpServers file connected through the pool.

Run as a user runs it: the CLI as a subprocess, against a reference server over Streamable
HTTP on 127.0.0.1, the pool test server over stdio, a missing executable, a closed port, a
disabled entry and an unreadable one.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

import trio
from helpers.ports import free_port  # a port nothing listens on
from repo_paths import HELPERS
from test_cli_config import cli, write_config

from trimcp.reference import build_server
from trimcp.server import serve_http

POOL_SERVER = str(HELPERS / "pool_server.py")


async def test_status_of_every_server_in_a_file(tmp_path: Path, nursery: trio.Nursery) -> None:
    bound = await nursery.start(partial(serve_http, build_server(), "127.0.0.1", 0))
    config = write_config(
        tmp_path,
        {
            "local": {"command": sys.executable, "args": [POOL_SERVER]},
            "web": {"type": "http", "url": bound.url},
            "missing": {"command": "/nonexistent/mcp-server"},
            "refused": {"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"},
            "off": {"command": "never-run", "disabled": True},
            "broken": {"type": "http"},
        },
    )
    code, out, err = await cli("servers", "status", "--config", config, "--timeout", "20")
    assert code == 4, err  # some failed
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "TRANSPORT", "STATUS", "REVISION", "TOOLS", "CONNECT"]
    rows = {line.split()[0]: line.split() for line in lines[1:7]}
    assert rows["local"][1:5] == ["stdio", "connected", "2025-06-18", "1"]
    assert rows["web"][1:3] == ["http", "connected"] and rows["web"][3] == "2026-07-28"
    assert rows["missing"][1:3] == ["stdio", "failed"]
    assert rows["refused"][1:3] == ["http", "failed"]
    assert rows["off"][1:3] == ["stdio", "disabled"]
    assert rows["broken"][2] == "failed"
    assert "missing: cannot start MCP server /nonexistent/mcp-server" in out
    assert "broken: " in out and '"url" is missing' in out
    # Not a terminal: a plain line per server as it finished, and never a traceback.
    assert "local: connected (" in err and "Traceback" not in err and "Traceback" not in out

    code, out, err = await cli("servers", "status", "--config", config, "--format", "json")
    assert code == 4
    report = json.loads(out)
    by_name = {s["name"]: s for s in report["servers"]}
    assert report["config"] == config
    assert by_name["local"]["status"] == "connected" and by_name["local"]["tools"] == 1
    assert isinstance(by_name["local"]["connect_seconds"], float)
    assert by_name["off"]["status"] == "disabled" and by_name["refused"]["reason"]


async def test_all_connected_is_exit_0_and_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"local": {"command": sys.executable, "args": [POOL_SERVER]}})
    code, out, err = await cli("servers", "status", "--config", config)
    assert code == 0, err
    assert "connected" in out
    code, out, err = await cli("servers", "status", "--config", str(tmp_path / "nope.json"))
    assert code == 2 and err.startswith("trimcp: ") and len(err.strip().splitlines()) == 1
