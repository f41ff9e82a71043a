"""A raw JSON-lines stdio MCP server of the stateless era (2026-07-28) with one tool-list defect per ``--mode``.

Used by tests/check/test_check_tools.py.  It is tests/helpers/bad_stateless.py's good server
(plain Python, no trimcp import) with one more tool, ``region``, not annotated read-only (so
the harness lists it but never calls it), whose ``region`` argument is mirrored into an HTTP
header (``x-mcp-header``, server/tools 2026-07-28).  Each connection is a process of its own,
so a list that differs between processes differs between connections:

  good             no defect: ``x-mcp-header: Region``, the same tools/list everywhere
  header-invalid   the x-mcp-header name has a space in it (not an HTTP token)
  unstable-lists   the first tools/list page names ``region_<pid>``: another connection
                   gets another list
"""

from __future__ import annotations

import os
import sys
from typing import Any

import bad_server
import bad_stateless

MODES = ("good", "header-invalid", "unstable-lists")


def region_tool(mode: str) -> dict[str, Any]:
    header = "Bad Region" if mode == "header-invalid" else "Region"
    name = f"region_{os.getpid()}" if mode == "unstable-lists" else "region"
    return {
        "name": name,
        "description": "Weather of a region.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": header}},
            "required": ["region"],
        },
    }


def main() -> None:
    mode = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "good"
    if mode not in MODES:
        raise SystemExit(f"unknown mode {mode!r}")
    plain = bad_server.stateless_tools
    # bad_stateless pages tools/list in two (the first two tools, then the rest): region goes first.
    bad_server.stateless_tools = lambda: [region_tool(mode), *plain()]
    sys.argv = [sys.argv[0], "--mode", "good"]
    bad_stateless.main()


if __name__ == "__main__":
    main()
