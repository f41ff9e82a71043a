#!/usr/bin/env python3
"""The trimcp side of ``bench_server.py``: a ``trimcp.server.Server`` with one tool, ``echo(text) -> text``.

Theory of operation (MCP basic/transports: stdio and Streamable HTTP; server/tools): the same
tool as ``mcp_echo.py`` and ``fastmcp_echo.py``, served with trimcp's defaults -- nothing tuned
for the benchmark.  ``--http`` serves Streamable HTTP with ``serve_http`` on 127.0.0.1 (port 0:
a free one) and prints ``PORT <n>`` on stdout once it listens; without it, stdio (``serve_stdio``).
"""

from __future__ import annotations

import argparse
import sys
from functools import partial

import trio

from trimcp.server import Context, Server, serve_stdio


def build() -> Server:
    server = Server("bench-echo-trimcp", "1.0.0")

    @server.tool
    async def echo(ctx: Context, text: str) -> str:
        """Echo the text back."""
        return text

    return server


async def serve_http(server: Server, port: int) -> None:
    from trimcp.server import serve_http as _serve_http

    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(_serve_http, server, "127.0.0.1", port))
        print(f"PORT {bound.port}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    ap.add_argument("--port", type=int, default=0)
    ns = ap.parse_args(argv)
    server = build()
    if not ns.http:
        trio.run(serve_stdio, server)
        return 0
    try:
        trio.run(serve_http, server, ns.port)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
