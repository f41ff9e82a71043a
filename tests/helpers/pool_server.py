"""A small handshake-era MCP server over stdio for the pool tests (no trimcp import: it starts fast).

It appends ``<pid> start <t>`` when it starts and ``<pid> ready <t>`` when it answers
``tools/list`` (``t``: CLOCK_MONOTONIC, shared by every process of the machine) to the file
named by POOL_LOG, so a test can measure how many connects overlapped without trusting the
pool's own account.  ``initialize`` is answered after POOL_DELAY seconds (a slow start).
"""

import json
import os
import sys
import time

LOG = os.environ.get("POOL_LOG")
DELAY = float(os.environ.get("POOL_DELAY", "0"))


def log(what: str) -> None:
    if LOG:
        with open(LOG, "a") as f:
            f.write(f"{os.getpid()} {what} {time.monotonic()}\n")


def reply(message_id: object, result: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


log("start")
for line in sys.stdin:
    message = json.loads(line)
    method, message_id = message.get("method"), message.get("id")
    if message_id is None:
        continue
    if method == "initialize":
        time.sleep(DELAY)
        reply(
            message_id,
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "pool-server", "version": "1"},
            },
        )
    elif method == "tools/list":
        log("ready")
        reply(message_id, {"tools": [{"name": "pid", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        reply(message_id, {"content": [{"type": "text", "text": str(os.getpid())}]})
    else:
        sys.stdout.write(
            json.dumps(
                {"jsonrpc": "2.0", "id": message_id, "error": {"code": -32601, "message": f"no method {method}"}}
            )
            + "\n"
        )
        sys.stdout.flush()
