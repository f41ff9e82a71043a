"""``trimcp servers status``: connect every server of an mcpServers file and say how each went.

Theory of operation
-------------------
The file is the one ``--config`` names, else the first that exists of
``./.mcp.json`` (Claude Code, per project), ``./.vscode/mcp.json`` (VS Code)
and Claude Desktop's ``claude_desktop_config.json``; stderr says which.  Every
enabled server is connected through a ``trimcp.host`` pool, under its limits
(3 stdio and 20 remote servers connecting at once unless ``--stdio-limit`` /
``--remote-limit`` or the ``MCP_*_CONNECTION_BATCH_SIZE`` variables say
otherwise), with the auth-needed cache read and written as a host would.

While it runs, a terminal sees one progress line rewritten in place; anything
else (a pipe, CI) gets a plain line per server as it finishes.  Then stdout
gets the table - name, transport, status, revision, tools, connect time - or,
with ``--format json``, one JSON object.  Exit 0 when every enabled server
connected, 3 when the worst is a server needing authorization, 4 when one
failed.

The pool redacts its statuses (``trimcp.config``'s rule: a value a ``${VAR}`` took
shows as ``${VAR}``), so the progress lines, the table and the JSON carry none; the
library's error lines go to stderr redacted with the file's ``Redactor`` (``logs.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

import trio

from .. import Timeouts
from ..config import ConfigError, McpConfig, load_config
from ..host import ServerState, ServerStatus, StatusChanged, open_pool
from ..oauth import AuthNeededCache
from .command_line import UsageError
from .logs import show_library_errors

__all__ = ["EXAMPLES", "add_arguments", "run_servers"]

EXAMPLES = """\
examples:
  trimcp servers status                          # ./.mcp.json, or VS Code's / Claude Desktop's file
  trimcp servers status --config ~/.claude.json --format json
  trimcp servers status --config .mcp.json --stdio-limit 8 --timeout 10
"""

_FINISHED = (ServerState.CONNECTED, ServerState.FAILED, ServerState.NEEDS_AUTH)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("status",))
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the mcpServers file (default: ./.mcp.json, ./.vscode/mcp.json, then "
        "Claude Desktop's claude_desktop_config.json)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="give up connecting to one server after this long (seconds, default 30)",
    )
    parser.add_argument(
        "--stdio-limit",
        type=int,
        default=None,
        metavar="N",
        help="stdio servers connecting at once (default $MCP_SERVER_CONNECTION_BATCH_SIZE or 3)",
    )
    parser.add_argument(
        "--remote-limit",
        type=int,
        default=None,
        metavar="N",
        help="remote servers connecting at once (default $MCP_REMOTE_SERVER_CONNECTION_BATCH_SIZE or 20)",
    )


def _claude_desktop_config() -> Path:
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json"
    return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude" / "claude_desktop_config.json"


def find_config(given: str | None) -> Path:
    if given is not None:
        return Path(given)
    candidates = [Path(".mcp.json"), Path(".vscode") / "mcp.json", _claude_desktop_config()]
    for path in candidates:
        if path.is_file():
            sys.stderr.write(f"trimcp: reading {path}\n")
            return path
    looked = ", ".join(str(p) for p in candidates)
    raise UsageError(f"no mcpServers file found (looked for {looked}); name one with --config FILE")


def _seconds(status: ServerStatus) -> str:
    return "" if status.connect_seconds is None else f"{status.connect_seconds:.2f} s"


def _row(status: ServerStatus) -> list[str]:
    return [
        status.name,
        status.transport,
        status.state.value,
        status.revision or "",
        "" if status.tools is None else str(status.tools),
        _seconds(status),
    ]


def print_status_table(statuses: list[ServerStatus], out: TextIO) -> None:
    header = ["NAME", "TRANSPORT", "STATUS", "REVISION", "TOOLS", "CONNECT"]
    rows = [header, *(_row(st) for st in statuses)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    out.writelines("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n" for row in rows)
    for st in statuses:
        if st.reason and st.state is not ServerState.CONNECTED:
            out.write(f"  {st.name}: {st.reason.splitlines()[0]}\n")


def status_json(path: Path, statuses: list[ServerStatus]) -> dict[str, Any]:
    return {
        "config": str(path),
        "servers": [
            {
                "name": st.name,
                "transport": st.transport,
                "status": st.state.value,
                "reason": st.reason,
                "revision": st.revision,
                "tools": st.tools,
                "connect_seconds": st.connect_seconds,
            }
            for st in statuses
        ],
    }


class _Progress:
    """What the user sees while servers connect (stderr)."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.total, self.out = total, out
        self.tty = out.isatty()
        self.done: dict[str, ServerStatus] = {}

    def update(self, status: ServerStatus) -> None:
        if status.state not in _FINISHED or status.name in self.done:
            return
        self.done[status.name] = status
        if self.tty:
            counts = {state: sum(st.state is state for st in self.done.values()) for state in _FINISHED}
            self.out.write(
                f"\r{len(self.done)}/{self.total} done: {counts[ServerState.CONNECTED]} connected, "
                f"{counts[ServerState.FAILED]} failed, {counts[ServerState.NEEDS_AUTH]} need auth\x1b[K"
            )
        else:
            detail = _seconds(status) if status.state is ServerState.CONNECTED else (status.reason or "")
            self.out.write(
                f"{status.name}: {status.state.value}{' (' + detail.splitlines()[0] + ')' if detail else ''}\n"
            )
        self.out.flush()

    def finish(self) -> None:
        if self.tty and self.done:
            self.out.write("\n")


async def _run(ns: argparse.Namespace, path: Path, config: McpConfig) -> int:
    for warning in config.warnings:
        sys.stderr.write(f"trimcp: warning: {warning}\n")
    options = {"timeouts": Timeouts(connect=ns.timeout, request=ns.timeout)}
    async with open_pool(
        config,
        stdio_limit=ns.stdio_limit,
        remote_limit=ns.remote_limit,
        auth_cache=AuthNeededCache(),
        client_options=options,
    ) as pool:
        enabled = [n for n, st in pool.status().items() if st.state is not ServerState.DISABLED]
        progress = _Progress(len(enabled), sys.stderr)
        for status in pool.status().values():
            progress.update(status)  # entries that could not be read are finished already
        async with pool.events(max_buffer=10_000) as events, trio.open_nursery() as nursery:

            async def watch() -> None:
                async for event in events:
                    if isinstance(event, StatusChanged):
                        progress.update(event.new)

            nursery.start_soon(watch)
            statuses = await pool.connect_all()
            nursery.cancel_scope.cancel()
        progress.finish()
        ordered = [statuses[name] for name in sorted(statuses)]
    if ns.format == "json":
        json.dump(status_json(path, ordered), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_status_table(ordered, sys.stdout)
    states = {st.state for st in ordered}
    if ServerState.FAILED in states:
        return 4
    return 3 if ServerState.NEEDS_AUTH in states else 0


def run_servers(ns: argparse.Namespace) -> int:
    path = find_config(ns.config)
    try:
        config = load_config(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    ns.redact = config.redactor()  # for the error main reports, if any
    # A failure is that server's status line; the pool's own warnings would repeat it.
    show_library_errors(ns.redact)
    return trio.run(_run, ns, path, config)
