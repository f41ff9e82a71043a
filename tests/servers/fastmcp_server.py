#!/usr/bin/env python3
"""A fastmcp server for the recorded corpus and the interop tests: a few tools, resources and
prompts, a tool that reports progress and one that fails.

Theory of operation (MCP server/tools, server/resources, server/prompts, basic/utilities/progress;
transports basic/transports stdio and Streamable HTTP): everything is declared the way fastmcp's
documentation shows (``@mcp.tool``, ``@mcp.resource``, ``@mcp.prompt``, ``Context``), so what the
corpus records is fastmcp's own behaviour, not ours.  Over HTTP the socket is bound here on
127.0.0.1 (port 0 by default) and handed to ``run(sockets=...)``; ``PORT <n>`` goes to stdout
once it is bound.  fastmcp runs from its own interpreter (``<repo>/.venv-fastmcp``, made by
``benchmarks/bench_server.py --setup``; ``tests/peers.py`` finds it), never beside trimcp.
"""

from __future__ import annotations

import argparse
import socket
import sys

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError

mcp = FastMCP("trimcp-fastmcp-test")


@mcp.tool
def echo(message: str) -> str:
    """Echo the message back."""
    return message


@mcp.tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@mcp.tool
async def progress(ctx: Context, steps: int = 3) -> str:
    """Report progress ``steps`` times, then answer."""
    for step in range(1, steps + 1):
        await ctx.report_progress(progress=step, total=steps)
    return f"done in {steps} steps"


@mcp.tool
def fail(message: str = "this tool always fails") -> str:
    """Always fails with a tool error (isError: true)."""
    raise ToolError(message)


@mcp.resource("fastmcp://hello", mime_type="text/plain")
def hello() -> str:
    """A fixed text resource."""
    return "hello from fastmcp"


@mcp.resource("fastmcp://config", mime_type="application/json")
def config() -> dict[str, object]:
    """A fixed JSON resource."""
    return {"name": "trimcp-fastmcp-test", "features": ["tools", "resources", "prompts"]}


@mcp.resource("fastmcp://echo/{value}")
def echo_resource(value: str) -> str:
    """A templated resource: the value back."""
    return f"echo: {value}"


@mcp.prompt
def summarize() -> str:
    """An argument-less prompt."""
    return "Summarize the conversation so far."


@mcp.prompt
def greet(name: str, style: str = "plain") -> str:
    """A prompt with a required and an optional argument."""
    return f"Greet {name} in a {style} style."


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--http", action="store_true", help="Streamable HTTP (/mcp) instead of stdio")
    ap.add_argument("--port", type=int, default=0)
    ns = ap.parse_args(argv)
    if not ns.http:
        mcp.run("stdio", show_banner=False, log_level="WARNING")
        return 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", ns.port))  # loopback only
    sock.listen(64)
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
