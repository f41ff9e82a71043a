"""``trimcp tools list --config FILE``: every server's tools, as an agent holding them all sees them.

Theory of operation
-------------------
Without ``--server NAME``, ``tools list --config FILE`` connects every enabled server of
the mcpServers file through a ``trimcp.host`` pool, as an agent does, and lists the
tools under the names the pool gives the model (``Pool.tools``: ``mcp__SERVER__TOOL``,
normalised and made unique by ``trimcp.host``'s naming), each with its parameters and
the first line of its description, servers in the file's order.  ``--format json``
gives one object per tool: ``name`` (the agent's), ``server``, ``tool`` (the server's
own name), ``kind`` (search / read / write), ``description`` and ``inputSchema``.

A server that cannot be reached, or needs authorization, is named on stderr with why,
and the others are still listed; the exit status is 4 when one failed, 3 when the
worst is one needing authorization, else 0.  The pool redacts what it reports with the
file's ``Redactor`` (a value a ``${VAR}`` took shows as ``${VAR}``).
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import Timeouts
from ..config import ConfigError, load_config
from ..host import HostTool, ServerState, open_pool
from ..oauth import AuthNeededCache
from ..schema import to_wire
from .command_line import UsageError
from .exits import EXIT_AUTH, EXIT_NOT_CHECKED, EXIT_OK
from .logs import show_library_errors
from .render import print_listing

__all__ = ["run_pool_tools"]


def _json(tool: HostTool) -> dict[str, object]:
    wire = to_wire(tool.tool)
    return {
        "name": tool.name,
        "server": tool.server,
        "tool": tool.tool.name,
        "kind": tool.kind,
        "description": tool.description,
        "inputSchema": wire.get("inputSchema"),
    }


async def run_pool_tools(ns: argparse.Namespace) -> int:
    try:
        config = load_config(ns.config)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    ns.redact = config.redactor()  # for the error main reports, if any
    show_library_errors(ns.redact)  # a failure is its server's line; the pool's warnings would repeat it
    for warning in config.warnings:
        sys.stderr.write(f"trimcp: warning: {warning}\n")
    options = {"timeouts": Timeouts(connect=ns.connect_timeout, request=ns.timeout)}
    async with open_pool(config, auth_cache=AuthNeededCache(), client_options=options) as pool:
        tools = await pool.tools(connect=True)
        statuses = pool.status()
    if ns.format == "json":
        json.dump([_json(t) for t in tools], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_listing(
            [to_wire(t.tool) | {"description": t.description} for t in tools], sys.stdout, [t.name for t in tools]
        )
    worst = EXIT_OK
    for name, status in statuses.items():
        if status.state in (ServerState.CONNECTED, ServerState.DISABLED):
            continue
        why = (status.reason or status.state.value).splitlines()[0]
        sys.stderr.write(f"trimcp: server {name}: {status.state.value}: {why}\n")
        worst = max(worst, EXIT_NOT_CHECKED if status.state is ServerState.FAILED else EXIT_AUTH)
    return worst
