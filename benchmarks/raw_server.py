#!/usr/bin/env python3
"""The benchmarks' floor server: the least a stdio MCP server can do, as fast as Python can.

Theory of operation (MCP basic/transports#stdio, basic/lifecycle; handshake era): read
newline-delimited JSON-RPC from stdin, answer on stdout, one line per message, flushed.
No mcp dependency and no framework, so a benchmark measures the *client* plus the pipe.

- ``initialize``      -> an InitializeResult echoing whatever ``protocolVersion`` was asked
                         (the floor server never negotiates), capabilities ``{"tools": {}}``
- ``ping``            -> ``{}``
- ``tools/list``      -> one tool, ``echo`` (precomputed bytes)
- ``tools/call``      -> ``echo``: ``{"size": N}`` gives a text of exactly N bytes of "x";
                         otherwise the text is ``arguments["text"]`` when it is a string, else the
                         arguments as compact JSON
- any notification    -> ignored (no reply)
- unknown method      -> -32601;  unparsable line -> -32700 with id null
- responses from the client (it never asks anything) -> ignored

Exit at EOF on stdin.  Nothing is ever written to stderr unless Python itself fails.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SERVER_INFO = {"name": "trimcp-raw-floor-server", "version": "1.0.0"}
DEFAULT_VERSION = "2025-11-25"

TOOL = {
    "name": "echo",
    "description": "Echo arguments.text, or return a text of arguments.size bytes.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "text to echo"},
            "size": {"type": "integer", "minimum": 0, "description": "answer with this many bytes"},
        },
    },
}
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _line(msg: dict[str, Any]) -> bytes:
    return _dumps(msg).encode("utf-8") + b"\n"


def _result(rid: Any, result: Any) -> bytes:
    return _line({"jsonrpc": "2.0", "id": rid, "result": result})


def _error(rid: Any, code: int, message: str) -> bytes:
    return _line({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


_TOOLS_LIST_TAIL = b',"result":' + _dumps({"tools": [TOOL]}).encode() + b"}\n"


def handle(raw: bytes) -> bytes | None:
    """One incoming line -> the bytes to write, or None."""
    try:
        msg = json.loads(raw)
    except ValueError:
        return _error(None, -32700, "Parse error")
    if not isinstance(msg, dict):
        return _error(None, -32600, "Invalid Request (batches are not supported)")
    method = msg.get("method")
    if "id" not in msg or msg["id"] is None:
        return None  # notification (or a response from the client): nothing to say
    rid = msg["id"]
    if method is None:
        return None  # a response to a request we never made
    params = msg.get("params")
    if not isinstance(params, dict):
        params = {}
    if method == "tools/call":
        if params.get("name") != "echo":
            return _error(rid, -32602, f"Unknown tool: {params.get('name')!r}")
        args = params.get("arguments")
        if not isinstance(args, dict):
            args = {}
        size = args.get("size")
        if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            text = "x" * size
        elif isinstance(args.get("text"), str):
            text = args["text"]
        else:
            text = _dumps(args)
        return _result(rid, {"content": [{"type": "text", "text": text}], "isError": False})
    if method == "tools/list":
        return b'{"jsonrpc":"2.0","id":' + _dumps(rid).encode() + _TOOLS_LIST_TAIL
    if method == "ping":
        return _result(rid, {})
    if method == "initialize":
        asked = params.get("protocolVersion")
        return _result(
            rid,
            {
                "protocolVersion": asked if isinstance(asked, str) and asked else DEFAULT_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": SERVER_INFO,
            },
        )
    return _error(rid, -32601, f"Method not found: {method}")


def main() -> int:
    stdin = sys.stdin.buffer
    out = sys.stdout.buffer
    for raw in iter(stdin.readline, b""):
        if not raw.strip():
            continue
        reply = handle(raw)
        if reply is not None:
            out.write(reply)
            out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
