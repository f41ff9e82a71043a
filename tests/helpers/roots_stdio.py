"""A raw JSON-lines stdio MCP server (2025-11-25) that asks the client for its roots.

Like servers that scope themselves to the client's roots (server-filesystem): ``roots/list``
goes out when ``--when`` says, and the server waits for the answer before it exits.  Plain
Python, no trimcp import.  ``--when``:

  initialized   right after notifications/initialized
  each-request  after answering every request once initialized, ``--delay`` seconds later
                (so the last one may come after the client's last answer: still unread
                when a hasty client closes stdin)

``--on-eof``: what it does when stdin closes while its last roots/list is unanswered:
``hang`` (keeps waiting for the answer, as a server whose exit waits on its own request) or
``exit`` (exits 0 at once); ``ignore`` hangs at EOF whatever is pending (a server that
ignores EOF: really broken).  With every roots/list answered it exits 0 at EOF.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from typing import Any

from jsonrpc_lines import read_message

VERSION = "2025-11-25"


def send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def error(msg_id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--when", choices=("initialized", "each-request"), default="initialized")
    parser.add_argument("--on-eof", choices=("hang", "exit", "ignore"), default="hang")
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    ids = itertools.count(1)
    pending: set[str] = set()
    initialized = False

    def ask_roots() -> None:
        rid = f"roots-{next(ids)}"
        pending.add(rid)
        send({"jsonrpc": "2.0", "id": rid, "method": "roots/list"})

    for line in sys.stdin:
        msg = read_message(line, error)
        if msg is None:
            continue
        method, msg_id = msg.get("method"), msg.get("id")
        if method is None:
            pending.discard(str(msg_id))
            continue
        if msg_id is None:
            if method == "notifications/initialized":
                initialized = True
                if args.when == "initialized":
                    ask_roots()
            continue
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "result": {
                        "protocolVersion": VERSION,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "roots-stdio", "version": "1"},
                    },
                }
            )
            continue
        if method == "ping":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": []}})
        else:
            error(msg_id, -32601 if method != "tools/call" else -32602, f"no {method}")
        if args.when == "each-request" and initialized:
            time.sleep(args.delay)
            ask_roots()
    if (pending and args.on_eof == "hang") or args.on_eof == "ignore":
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
