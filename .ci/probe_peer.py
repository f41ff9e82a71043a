#!/usr/bin/env python3
"""Smoke-probe a stdio MCP server with raw JSON-RPC lines (no trimcp, no mcp SDK).

Theory of operation (MCP 2025-11-25, basic/lifecycle + basic/transports#stdio): start the
server as a subprocess, write newline-delimited JSON-RPC to its stdin, read its stdout line by
line.  Sends ``initialize`` -> ``notifications/initialized`` -> ``tools/list`` and then any
``--call NAME JSON`` requested.  Server->client requests (``roots/list``,
``sampling/createMessage``, ``elicitation/create``, ``ping``) are answered with canned results
so tools that trigger them can be exercised.  Every message seen is printed (``<-`` from the
server, ``->`` to it); stderr of the server is passed through.

Used by ``.ci/install-peers.sh`` as a smoke test and by humans when poking at a peer:

    python .ci/probe_peer.py --caps '{"sampling":{}}' \
        --call trigger-sampling-request '{"prompt":"hi"}' -- node path/to/dist/index.js stdio

Exit status 0 when initialize answered and every call got a response (result or error).
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any

CANNED: dict[str, Any] = {
    "roots/list": {"roots": [{"uri": "file:///tmp/probe-root", "name": "probe root"}]},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "canned sample"},
        "model": "probe-model",
        "stopReason": "endTurn",
    },
    "elicitation/create": {"action": "decline"},
    "ping": {},
}


def _short(obj: Any, limit: int) -> str:
    s = json.dumps(obj, ensure_ascii=False)
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} chars)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocol-version", default="2025-11-25")
    ap.add_argument("--caps", default="{}", help="client capabilities JSON")
    ap.add_argument(
        "--call",
        nargs=2,
        action="append",
        default=[],
        metavar=("TOOL", "ARGS_JSON"),
        help="tools/call to make after tools/list (repeatable)",
    )
    ap.add_argument(
        "--request",
        nargs=2,
        action="append",
        default=[],
        metavar=("METHOD", "PARAMS_JSON"),
        help="any other request to send after the calls (repeatable)",
    )
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds to wait per answer")
    ap.add_argument("--linger", type=float, default=0.0, help="seconds to keep reading at the end")
    ap.add_argument("--limit", type=int, default=400, help="truncate printed messages")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- server command line")
    ns = ap.parse_args()
    argv = ns.argv[1:] if ns.argv[:1] == ["--"] else ns.argv
    if not argv:
        ap.error("missing server command after --")

    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    inbox: queue.Queue[bytes | None] = queue.Queue()

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            inbox.put(line)
        inbox.put(None)

    threading.Thread(target=reader, daemon=True).start()

    def send(msg: dict[str, Any]) -> None:
        print(f"-> {_short(msg, ns.limit)}", flush=True)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(msg).encode() + b"\n")
        proc.stdin.flush()

    next_id = 0

    def request(method: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
        nonlocal next_id
        next_id += 1
        rid = next_id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        send(msg)
        return pump(rid, ns.timeout)

    def pump(want_id: int | None, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = inbox.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                print("<- EOF", flush=True)
                return None
            try:
                msg = json.loads(line)
            except ValueError:
                print(f"<- NOT JSON (stdout pollution?): {line!r}", flush=True)
                continue
            print(f"<- [{time.monotonic() - t0:6.3f}s] {_short(msg, ns.limit)}", flush=True)
            if not isinstance(msg, dict):
                continue
            if "method" in msg and "id" in msg:  # server -> client request
                method = msg["method"]
                if method in CANNED:
                    send({"jsonrpc": "2.0", "id": msg["id"], "result": CANNED[method]})
                else:
                    send(
                        {
                            "jsonrpc": "2.0",
                            "id": msg["id"],
                            "error": {"code": -32601, "message": f"probe: no {method}"},
                        }
                    )
                continue
            if want_id is not None and msg.get("id") == want_id and "method" not in msg:
                return msg

    ok = True
    try:
        init = request(
            "initialize",
            {
                "protocolVersion": ns.protocol_version,
                "capabilities": json.loads(ns.caps),
                "clientInfo": {"name": "trimcp-probe", "version": "0"},
            },
        )
        if init is None or "result" not in init:
            print("FAIL: no initialize result", file=sys.stderr)
            return 1
        print(f"== initialize answered after {time.monotonic() - t0:.3f}s", flush=True)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        caps = init["result"].get("capabilities", {})
        if "tools" in caps:
            lst = request("tools/list", {})
            ok &= lst is not None
            if lst and "result" in lst:
                names = [t["name"] for t in lst["result"].get("tools", [])]
                print(f"== tools: {names}", flush=True)
        for name, args in ns.call:
            ans = request("tools/call", {"name": name, "arguments": json.loads(args)})
            ok &= ans is not None
        for method, params in ns.request:
            ans = request(method, json.loads(params))
            ok &= ans is not None
        if ns.linger:
            pump(None, ns.linger)
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        print(f"== server exit status {proc.returncode}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
