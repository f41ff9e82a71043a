"""A small MCP server with tools, resources and prompts: a notebook of short notes.

Run it over stdio (what an MCP host or ``trimcp check`` starts)::

    python examples/server.py

or over Streamable HTTP on the loopback interface::

    python examples/server.py --http 127.0.0.1:8000      # the endpoint is http://127.0.0.1:8000/mcp

Check it against the specification::

    trimcp check -- python examples/server.py
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from typing import Any

import trio

from trimcp.server import Context, ResourceNotFound, Server, serve_http, serve_stdio

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


def build_server() -> Server:
    server = Server("notes", "1.0", instructions="Keeps short notes; read them as resources.")
    notes: dict[str, str] = {"welcome": "Notes are kept in memory while the server runs."}

    @server.tool(annotations=READ_ONLY)
    async def list_notes(ctx: Context) -> str:
        """The titles of every note, one a line."""
        return "\n".join(sorted(notes))

    @server.tool(annotations={"destructiveHint": False, "idempotentHint": True, "openWorldHint": False})
    async def add_note(ctx: Context, title: str, text: str) -> str:
        """Add a note, or replace the note of the same title."""
        notes[title] = text
        await ctx.log("info", f"note {title!r} saved")
        await ctx.server.notify_resource_updated("notes://index")  # to the clients subscribed to it
        return f"saved {title!r} ({len(text)} characters)"

    @server.tool(
        annotations=READ_ONLY,
        output_schema={
            "type": "object",
            "properties": {"notes": {"type": "integer"}, "characters": {"type": "integer"}},
            "required": ["notes", "characters"],
        },
    )
    async def stats(ctx: Context) -> dict[str, Any]:
        """How many notes there are and how long they are, as structured content."""
        return {"notes": len(notes), "characters": sum(len(t) for t in notes.values())}

    @server.resource("notes://index", name="index", mime_type="application/json", description="Every note's title.")
    async def index(ctx: Context) -> str:
        return json.dumps(sorted(notes))

    @server.resource_template("notes://note/{title}", name="note", mime_type="text/plain")
    async def note(ctx: Context, title: str) -> str:
        """One note's text."""
        if title not in notes:
            raise ResourceNotFound(f"notes://note/{title}")
        return notes[title]

    @server.prompt()
    async def summarize(ctx: Context, title: str) -> str:
        """Ask the model to summarize one note."""
        return f"Summarize this note in one sentence:\n\n{notes.get(title, '(no such note)')}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp")
    args = parser.parse_args()
    server = build_server()
    if args.http:
        host, _, port = args.http.rpartition(":")
        trio.run(partial(serve_http, server, host, int(port)))
    else:
        trio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
