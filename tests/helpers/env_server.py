"""A stdio MCP server whose one tool tells the environment and working directory it runs in
(for the CLI's -e and --config tests)."""

import os

import trio

from trimcp.server import Context, Server, serve_stdio

server = Server("env-server", "1")


@server.tool
async def env_of(ctx: Context, name: str) -> str:
    return f"{name}={os.environ.get(name, '<unset>')} cwd={os.getcwd()}"


if __name__ == "__main__":
    trio.run(serve_stdio, server)
