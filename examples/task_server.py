"""A server whose long tool runs as a task (the ``io.modelcontextprotocol/tasks`` extension).

A client that declares the extension (2026-07-28) gets a task at once and polls it; any other
client gets the result when the tool finishes, as with an ordinary tool.

    python examples/task_server.py            # serve over stdio
    python examples/task_server.py --client   # start it and run one task from a client
"""

from __future__ import annotations

import argparse
import sys

import trio

import trimcp
from trimcp.server import Context, Server, serve_stdio

TASKS = "io.modelcontextprotocol/tasks"


def build_server() -> Server:
    server = Server("reports", "1.0")

    @server.tool(task="optional", annotations={"readOnlyHint": True, "openWorldHint": False})
    async def build_report(ctx: Context, pages: int = 3) -> str:
        """Build a report of ``pages`` pages, a tenth of a second each."""
        pages = max(1, min(pages, 100))
        for page in range(1, pages + 1):
            await trio.sleep(0.1)
            # A notification to a client that asked for progress; as a task, its statusMessage.
            await ctx.report_progress(page, pages, f"page {page} written")
        return f"report of {pages} pages ready"

    return server


async def run_client(pages: int) -> None:
    """Start this file as a server, call ``build_report`` as a task and wait for its result."""
    server = [sys.executable, __file__]
    async with trimcp.open_client(server, extensions={TASKS: {}}) as client:
        started = await client.call_tool_as_task("build_report", {"pages": pages})
        if isinstance(started, trimcp.ToolTask):
            print("task", started.task_id, started.state.status)
            result = await started.result()  # polls tasks/get at the interval the server suggests
        else:
            result = started  # the server chose to answer at once
        print(result.text)
        # call_tool does the same in one step: it returns the task's final result.
        print((await client.call_tool("build_report", {"pages": 1})).text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", action="store_true", help="run a client against this server")
    parser.add_argument("--pages", type=int, default=3, help="pages of the client's report (default 3)")
    args = parser.parse_args()
    if args.client:
        trio.run(run_client, args.pages)
    else:
        trio.run(serve_stdio, build_server())


if __name__ == "__main__":
    main()
