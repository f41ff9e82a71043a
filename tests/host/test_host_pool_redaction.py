"""A pool's statuses and log lines show a ``${VAR}``'s value as ``${VAR}``, against real peers.

The servers are real: the pool test server over stdio (killed from outside), a missing
executable, one that exits at once, a closed port on 127.0.0.1, and a trimcp reference
server over Streamable HTTP that goes away while the pool holds it.  The secret is in
the entries' args, env, URL query and headers, as users write them.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import sys

import pytest
import trio
from helpers.ports import free_port  # a port nothing listens on
from repo_paths import HELPERS

from trimcp import Timeouts, TrimcpError
from trimcp.config import ConfigError, parse_config
from trimcp.host import ServerState, open_pool
from trimcp.reference import build_server
from trimcp.server import serve_http

HELPER = str(HELPERS / "pool_server.py")
SECRET = "sk-live-7f3a9c2e5b1d"
REF = "${SECRET_TOKEN}"
ENV = {"SECRET_TOKEN": SECRET}


async def test_statuses_and_the_pools_own_lines_hide_the_expansions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="trimcp.host")
    config = parse_config(
        {
            "mcpServers": {
                "local": {
                    "command": sys.executable,
                    "args": [HELPER, "--token=${SECRET_TOKEN}"],
                    "env": {"API_KEY": "${SECRET_TOKEN}"},
                },
                "missing": {"command": "/nonexistent/mcp-server", "args": ["--token", "${SECRET_TOKEN}"]},
                "exits": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)", "${SECRET_TOKEN}"]},
                "refused": {
                    "url": f"http://127.0.0.1:{free_port()}/mcp?token=${{SECRET_TOKEN}}",
                    "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"},
                },
                "broken": {"type": "http", "url": "ftp://${SECRET_TOKEN}@example.com/"},
            }
        },
        environ=ENV,
    )
    with trio.fail_after(60):
        async with open_pool(config, client_options={"timeouts": Timeouts(connect=10)}) as pool:
            statuses = await pool.connect_all()
            failed = {n: st.reason or "" for n, st in statuses.items() if st.state is ServerState.FAILED}
            assert set(failed) == {"missing", "exits", "refused", "broken"}
            for name, reason in failed.items():
                assert SECRET not in reason and REF in reason, (name, reason)
            # The connect's own error keeps the real values for the program; the pool's
            # redactor is there to show it.
            with pytest.raises(TrimcpError) as info:
                await pool.session("refused")
            assert SECRET in str(info.value)
            assert pool.redactor(str(info.value)) == str(info.value).replace(SECRET, REF)
            with pytest.raises(ConfigError) as bad_entry:  # its message quotes the file
                await pool.session("broken")
            assert SECRET not in str(bad_entry.value)

            # A server that dies while held: its status says so, in references.
            pid = int((await pool.call_tool("local", "pid")).text)
            os.kill(pid, signal.SIGKILL)
            with trio.fail_after(5):
                while pool.status("local")["local"].state is not ServerState.FAILED:
                    await trio.sleep(0.01)
            reason = pool.status("local")["local"].reason or ""
            assert "SIGKILL" in reason and f"--token={REF}" in reason and SECRET not in reason
    pool_lines = [r.getMessage() for r in caplog.records if r.name == "trimcp.host"]
    assert any(REF in line for line in pool_lines)  # its DEBUG lines quote the errors
    assert not [line for line in pool_lines if SECRET in line]


async def test_a_handler_with_the_log_filter_hides_the_transports_lines(
    nursery: trio.Nursery,
) -> None:
    # The HTTP transport logs the URL it was given when a call fails; it never sees the
    # config, so the application's handler redacts (pool.redactor.log_filter()).
    scope = trio.CancelScope()

    async def serve(task_status: trio.TaskStatus[object] = trio.TASK_STATUS_IGNORED) -> None:
        with scope:
            await serve_http(build_server(), "127.0.0.1", 0, task_status=task_status)

    bound = await nursery.start(serve)
    config = parse_config(
        {
            "mcpServers": {
                "web": {
                    "url": f"{bound.url}?token=${{SECRET_TOKEN}}",
                    "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"},
                },
            }
        },
        environ=ENV,
    )
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with trio.fail_after(60):
            async with open_pool(config, client_options={"timeouts": Timeouts(request=5)}) as pool:
                handler.addFilter(pool.redactor.log_filter())
                await pool.connect_all()
                assert pool.status("web")["web"].state is ServerState.CONNECTED
                scope.cancel()  # the server goes away
                with pytest.raises(TrimcpError):
                    await pool.call_tool("web", "echo", {"message": "hi"})
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    text = out.getvalue()
    assert "tools/call failed" in text and f"?token={REF}" in text  # the transport's line
    assert SECRET not in text
