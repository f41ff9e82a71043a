"""A raw JSON-lines stdio MCP server with one deliberate defect per ``--mode``.

Used by tests/test_check.py to make sure ``trimcp check`` notices each defect.
Plain Python on purpose (no trimcp import): the harness must judge a server
it had no hand in.  Apart from the selected defect it behaves correctly:

  good                      no defect
  garbage-stdout            prints a non-JSON line after the initialize answer
  bad-version               answers initialize with protocolVersion "2000-01-01"
  bad-tool-schema           the tool's inputSchema is {"type": "string"}
  log-without-capability    sends notifications/message without the logging capability
  error-on-unknown-version  an unknown requested revision gets an error, not a counter-offer
  ignore-stdin-close        ignores stdin EOF and SIGINT (exits by itself after 10 s)
  bad-result-schema         tools/list entries lack "name"
  unknown-method-wrong-code unknown methods are answered with result {}
  no-structured             the tool declares an outputSchema but returns no structuredContent
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from typing import Any

SUPPORTED = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = "2025-11-25"
MODES = (
    "good",
    "garbage-stdout",
    "bad-version",
    "bad-tool-schema",
    "log-without-capability",
    "error-on-unknown-version",
    "ignore-stdin-close",
    "bad-result-schema",
    "unknown-method-wrong-code",
    "no-structured",
)


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(msg_id: Any, value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": value})


def error(msg_id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def tool(mode: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": "hello",
        "description": "Say hello.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }
    if mode == "bad-tool-schema":
        entry["inputSchema"] = {"type": "string"}
    elif mode == "bad-result-schema":
        del entry["name"]
    elif mode == "no-structured":
        entry["outputSchema"] = {
            "type": "object",
            "properties": {"greeting": {"type": "string"}},
            "required": ["greeting"],
        }
    return entry


def handle(mode: str, msg: dict[str, Any]) -> None:
    method = msg.get("method")
    if "id" not in msg or method is None:
        if method == "notifications/initialized" and mode == "log-without-capability":
            send({
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "logging without the capability"},
            })
        return  # notifications and stray responses are ignored
    msg_id = msg["id"]
    params = msg.get("params") or {}
    if method == "initialize":
        requested = params.get("protocolVersion")
        if requested not in SUPPORTED and mode == "error-on-unknown-version":
            error(msg_id, -32602, f"unsupported protocol version {requested!r}")
            return
        version = requested if requested in SUPPORTED else LATEST
        if mode == "bad-version":
            version = "2000-01-01"
        result(msg_id, {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": f"bad-server-{mode}", "version": "0.0.1"},
        })
        if mode == "garbage-stdout":
            sys.stdout.write("this line is not JSON\n")
            sys.stdout.flush()
    elif method == "ping":
        result(msg_id, {})
    elif method == "tools/list":
        result(msg_id, {"tools": [tool(mode)]})
    elif method == "tools/call":
        if params.get("name") != "hello":
            error(msg_id, -32602, f"unknown tool {params.get('name')!r}")
            return
        result(msg_id, {"content": [{"type": "text", "text": "hello"}], "isError": False})
    elif mode == "unknown-method-wrong-code":
        result(msg_id, {})
    else:
        error(msg_id, -32601, f"method not found: {method}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=MODES, default="good")
    mode = parser.parse_args().mode
    started = time.monotonic()
    if mode == "ignore-stdin-close":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            error(None, -32700, "parse error")
            continue
        if isinstance(msg, dict):
            handle(mode, msg)
    if mode == "ignore-stdin-close":
        # Only SIGTERM/SIGKILL end us early; never outlive a test run by much.
        time.sleep(max(0.0, 10.0 - (time.monotonic() - started)))


if __name__ == "__main__":
    main()
