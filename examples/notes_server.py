"""A small MCP server for the example agent: notes kept in memory, over stdio.

``add_note`` writes (no ``readOnlyHint``: a host runs it alone and in order), ``list_notes``
reads.  ``wait`` sleeps (a read) and, when ``NOTES_LOG`` names a file, writes there whether it
finished or was cancelled: the tests use it to see a cancellation reach the server.

Run: ``python examples/notes_server.py`` (a host starts it; it speaks MCP on stdin/stdout).
"""

from __future__ import annotations

import os

import trio

from trimcp.server import Context, Server, run_stdio

server = Server("notes", version="1")
NOTES: list[str] = []
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


@server.tool()
async def add_note(ctx: Context, text: str) -> str:
    """Add a note; returns how many notes there are."""
    NOTES.append(text)
    return f"noted ({len(NOTES)} notes)"


@server.tool(annotations=READ_ONLY)
async def list_notes(ctx: Context) -> str:
    """Every note, one a line."""
    return "\n".join(NOTES) or "(no notes)"


@server.tool(annotations=READ_ONLY)
async def wait(ctx: Context, seconds: float = 1.0) -> str:
    """Wait ``seconds``, reporting progress every tenth."""
    log = os.environ.get("NOTES_LOG")
    try:
        for step in range(10):
            await ctx.report_progress(step, 10)
            await trio.sleep(seconds / 10)
    except trio.Cancelled:
        _record(log, "cancelled")
        raise
    _record(log, "finished")
    return f"waited {seconds} s"


def _record(log: str | None, what: str) -> None:
    if log:
        with open(log, "a") as f:
            f.write(what + "\n")


if __name__ == "__main__":
    run_stdio(server)
