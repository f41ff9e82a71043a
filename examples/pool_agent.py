"""The tool side of an agent: hold two MCP servers in a pool and show their tools to a model.

``open_pool`` connects the servers of an mcpServers config; ``pool.tools()`` names every tool
``mcp__{server}__{tool}`` (unique, at most 64 characters), caps its description and classifies it
as search, read or write; ``pool.call(name, arguments)`` runs the tool a model chose by that name.
There is no model here: the example prints the tool list a model would be given and makes the
calls a model might ask for.

    python examples/pool_agent.py                    # the two example servers beside this file
    python examples/pool_agent.py --config .mcp.json # the servers of your own config file
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import trio

from trimcp.config import McpConfig, load_config, parse_config
from trimcp.host import HostTool, open_pool

HERE = Path(__file__).resolve().parent


def example_config() -> McpConfig:
    """An mcpServers config, as a host keeps it, for the two example servers."""
    return parse_config(
        {
            "mcpServers": {
                "notes": {"command": sys.executable, "args": [str(HERE / "server.py")]},
                "reports": {"command": sys.executable, "args": [str(HERE / "task_server.py")]},
            }
        },
        source="example",
    )


def model_tool(tool: HostTool) -> dict[str, Any]:
    """One tool as a model's tool list takes it: a name, a description, a JSON Schema."""
    return {"name": tool.name, "description": tool.description or "", "input_schema": tool.tool.input_schema}


async def main(config: McpConfig, call: bool) -> None:
    async with open_pool(config) as pool:
        for status in (await pool.connect_all()).values():
            print(f"{status.name}: {status.state} ({status.tools} tools)", file=sys.stderr)
        tools = await pool.tools()
        for tool in tools:
            print(f"{tool.name:40} {tool.kind:6} {tool.server}/{tool.tool.name}", file=sys.stderr)
        print(json.dumps([model_tool(t) for t in tools], indent=2))
        if call:
            # What a model would ask for, by the names it was shown.
            added = await pool.call("mcp__notes__add_note", {"title": "pool", "text": "written through the pool"})
            print(added.text, file=sys.stderr)
            report = await pool.call("mcp__reports__build_report", {"pages": 2})
            print(report.text, file=sys.stderr)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", metavar="FILE", help="an mcpServers file (default: the two example servers)")
    args = parser.parse_args()
    config = load_config(args.config) if args.config else example_config()
    trio.run(main, config, not args.config)


if __name__ == "__main__":
    cli()
