"""A stdio MCP server that breaks one stdio framing rule: the reference server behind a proxy.

``python bad_stdio.py --mode MODE`` runs ``python -m trimcp.reference`` as its child and
copies stdin to it and its stdout back, adding after the child's first message:

* ``pretty-notification``: a ``notifications/message`` written as indented JSON, one
  message over several lines (spec: messages "MUST NOT contain embedded newlines");
* ``request-on-stdout``: a JSON-RPC ``ping`` request (2026-07-28: "The server MUST NOT
  write JSON-RPC requests to stdout").

When stdin closes, the child's stdin is closed, and the proxy exits with the child.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading

EXTRA = {
    "pretty-notification": json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}},
        indent=2,
    ),
    "request-on-stdout": json.dumps({"jsonrpc": "2.0", "id": "bad-stdio-1", "method": "ping"}),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=sorted(EXTRA), required=True)
    mode = parser.parse_args().mode
    child = subprocess.Popen(
        [sys.executable, "-m", "trimcp.reference"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    child_in, child_out = child.stdin, child.stdout

    def pump_in() -> None:
        for line in sys.stdin.buffer:
            child_in.write(line)
            child_in.flush()
        child_in.close()

    threading.Thread(target=pump_in, daemon=True).start()
    first = True
    for line in child_out:
        sys.stdout.buffer.write(line)
        if first:
            sys.stdout.buffer.write(EXTRA[mode].encode() + b"\n")
            first = False
        sys.stdout.buffer.flush()
    return child.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
