#!/usr/bin/env python3
"""The official-SDK side of ``bench_server.py``: ``mcp`` 2.3.0 ``MCPServer`` with ``echo(text) -> text``.

Theory of operation (MCP basic/transports: stdio and Streamable HTTP; server/tools): the tool of
``trimcp_echo.py``, served the way the SDK's documentation says -- ``server.run("stdio")``, or its
Streamable HTTP Starlette app (``streamable_http_app()``, the SDK's defaults: SSE answers,
stateful sessions) under uvicorn, exactly what ``run("streamable-http")`` does.  The one
difference: the socket is bound here on 127.0.0.1 port 0 and handed to uvicorn, because
``run()`` cannot pick a free port; ``PORT <n>`` goes to stdout once it is bound.
"""

from __future__ import annotations

import argparse
import socket
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="bench-echo-mcp", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def serve_http(port: int) -> None:
    import asyncio

    import uvicorn

    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, as
    # the ones uvicorn binds from host/port do; with proto 0 every SSE answer waits ~40 ms
    # (Nagle against the client's delayed ACK) and the server would look 20x slower than it is.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    ap.add_argument("--port", type=int, default=0)
    ns = ap.parse_args(argv)
    if ns.http:
        serve_http(ns.port)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(0)
