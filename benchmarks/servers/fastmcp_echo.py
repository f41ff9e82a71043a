#!/usr/bin/env python3
"""The fastmcp side of ``bench_server.py``: a ``FastMCP`` server with ``echo(text) -> text``.

Theory of operation (MCP basic/transports: stdio and Streamable HTTP; server/tools): the tool of
``trimcp_echo.py``, served as fastmcp's documentation says -- ``mcp.run("stdio")`` or
``mcp.run(transport="http", ...)`` (its Streamable HTTP app under uvicorn, its defaults).  The
socket is bound here on 127.0.0.1 port 0 and passed with ``sockets=`` (a ``run`` argument), so
a free port can be used; ``PORT <n>`` goes to stdout once it is bound.  fastmcp runs from its
own interpreter (``bench_server.py --setup`` makes ``.venv-fastmcp``), so it never shares
packages with the trimcp environment.
"""

from __future__ import annotations

import argparse
import socket
import sys

from fastmcp import FastMCP

mcp = FastMCP("bench-echo-fastmcp")


@mcp.tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    ap.add_argument("--port", type=int, default=0)
    ns = ap.parse_args(argv)
    if not ns.http:
        mcp.run("stdio", show_banner=False, log_level="WARNING")
        return 0
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, as
    # the ones uvicorn binds from host/port do; with proto 0 every SSE answer waits ~40 ms
    # (Nagle against the client's delayed ACK) and the server would look 20x slower than it is.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", ns.port))
    sock.listen(2048)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=sock.getsockname()[1],
        sockets=[sock],
        show_banner=False,
        log_level="WARNING",
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(0)
