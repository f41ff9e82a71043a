"""Tiny misbehaving MCP servers on stdio for tests/client/test_client_faults.py (no dependencies).

Usage: python fault_server.py MODE [ARGS...]

  die-on-call     answer initialize; on tools/call write "boom" to stderr and exit with status 7
  mute            write "pid <pid>" to stderr, then read stdin to EOF without ever answering
  oversize N      answer initialize; on tools/call write one N-byte line to stdout, then
                  read stdin to EOF
  garbage         answer initialize; on tools/call first write a line that is not JSON,
                  then the answer (a text content "ok")

Every mode answers ``ping``, refuses other requests (the ``server/discover`` probe of a
dual-era client among them) with -32601 as a handshake-era server does, and exits 0 at stdin
EOF (unless it died first).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **obj}) + "\n")
    sys.stdout.flush()


def answer_initialize(msg: dict[str, Any]) -> None:
    send(
        {
            "id": msg["id"],
            "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fault-server", "version": "0"},
            },
        }
    )


def on_call(mode: str, args: list[str], msg: dict[str, Any]) -> None:
    if mode == "die-on-call":
        sys.stderr.write("boom\n")
        sys.stderr.flush()
        os._exit(7)
    if mode == "oversize":
        sys.stdout.write("x" * int(args[0]) + "\n")
        sys.stdout.flush()
    elif mode == "garbage":
        sys.stdout.write("this is not json {\n")
        send({"id": msg["id"], "result": {"content": [{"type": "text", "text": "ok"}]}})


def main() -> None:
    mode, *args = sys.argv[1:]
    if mode not in ("die-on-call", "mute", "oversize", "garbage"):
        sys.exit(f"unknown mode {mode!r}")
    if mode == "mute":
        sys.stderr.write(f"pid {os.getpid()}\n")
        sys.stderr.flush()
        sys.stdin.buffer.read()
        return
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method == "initialize":
            answer_initialize(msg)
        elif method == "ping":
            send({"id": msg["id"], "result": {}})
        elif method == "tools/call":
            on_call(mode, args, msg)
        elif method is not None and "id" in msg:
            send({"id": msg["id"], "error": {"code": -32601, "message": f"method not found: {method}"}})


if __name__ == "__main__":
    main()
