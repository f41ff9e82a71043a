"""A raw JSON-lines stdio MCP server (handshake era) with one base-protocol defect per ``--mode``.

Used by tests/check/test_check_basic.py to make sure the negative probes of
``trimcp check`` (``trimcp/conformance/checks/negative.py``) notice each
defect.  Plain Python on purpose (no trimcp import).  It advertises no
features but one read-only tool, ``work``, that reports progress twice, 0.4 s
apart, before answering (and drops the call when it is cancelled meanwhile);
apart from the selected defect it behaves correctly:

  good                    no defect
  silent-on-parse-error   invalid JSON gets no answer
  wrong-parse-code        invalid JSON gets -32600 instead of -32700
  no-invalid-request      a request without method and a non-object are ignored
  params-accepted         a request whose params is an array or a string is answered with a result
  answers-notification    unknown notifications are answered with an error (id null)
  cancel-exits            a cancellation of an unknown request makes the server exit
  custom-reserved-code    a request before initialize is refused with -32500 (reserved, undefined)
  early-result            a request before initialize is answered with a result
  progress-after-response ``work`` sends one more progress notification after its result
  progress-not-increasing ``work`` reports the same progress twice
  cancel-ignored          ``work`` answers even when it was cancelled
  exit-after-first-line   sends a notification for the first request, then exits
  bad-meta-key            the InitializeResult's _meta holds a key whose prefix is no label
  reused-request-id       after initialized, sends two pings with the same id
  cancels-unknown         after initialized, cancels a request it never sent
  request-before-initialized  sends roots/list right after its initialize answer
  notifies-before-init    announces notifications/tools/list_changed before answering initialize
  float-progress-token    after initialized, sends a ping whose _meta.progressToken is 0.5
  notification-with-id    after initialized, sends notifications/message carrying an id
  null-id-error           a request whose params is an array gets its -32602 with id null
  answers-initialized     answers notifications/initialized with an error whose id is null
  version-by-capabilities answers 2025-06-18 to an initialize declaring no client capabilities,
                          though it answers 2025-11-25 when asked with them
  negotiates-down         does not implement 2025-11-25: answers 2025-06-18 to it (correct)
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
import time
from typing import Any

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODES = (
    "good",
    "silent-on-parse-error",
    "wrong-parse-code",
    "no-invalid-request",
    "params-accepted",
    "answers-notification",
    "cancel-exits",
    "custom-reserved-code",
    "early-result",
    "progress-after-response",
    "progress-not-increasing",
    "cancel-ignored",
    "exit-after-first-line",
    "bad-meta-key",
    "reused-request-id",
    "cancels-unknown",
    "request-before-initialized",
    "notifies-before-init",
    "float-progress-token",
    "notification-with-id",
    "null-id-error",
    "answers-initialized",
    "version-by-capabilities",
    "negotiates-down",
)
TOOL = {"name": "work", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
#: How long ``work`` runs between its two progress notifications.
WORK_SECONDS = 0.4


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def error(rid: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


#: The ``work`` calls in flight: request id -> (when it finishes, its progress token).
WORK: dict[Any, tuple[float, Any]] = {}


def progress(token: Any, value: int) -> None:
    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": value}})


def finish(mode: str, rid: Any, token: Any) -> None:
    if token is not None:
        progress(token, 1 if mode == "progress-not-increasing" else 2)
    send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "done"}]}})
    if token is not None and mode == "progress-after-response":
        progress(token, 3)


def chosen_version(mode: str, asked: Any, capabilities: Any) -> str:
    supported = VERSIONS[:-1] if mode == "negotiates-down" else VERSIONS
    if mode == "version-by-capabilities" and not capabilities and asked == VERSIONS[-1]:
        return VERSIONS[-2]
    return asked if asked in supported else supported[-1]


def handle(mode: str, msg: Any, state: dict[str, bool]) -> None:
    if not isinstance(msg, dict) or ("method" not in msg and "result" not in msg and "error" not in msg):
        if mode != "no-invalid-request":
            error(msg.get("id") if isinstance(msg, dict) else None, -32600, "invalid request")
        return
    method, rid = msg.get("method"), msg.get("id")
    if mode == "exit-after-first-line":
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "bye"}})
        sys.exit(0)
    if method is None:
        return  # a response to nothing we asked
    params = msg.get("params", {})
    if rid is None:
        if method == "notifications/initialized":
            state["ready"] = True
            if mode == "reused-request-id":
                for _ in range(2):
                    send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            elif mode == "cancels-unknown":
                send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never"}})
            elif mode == "float-progress-token":
                send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping", "params": {"_meta": {"progressToken": 0.5}}})
            elif mode == "notification-with-id":
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": "srv-note",
                        "method": "notifications/message",
                        "params": {"level": "info", "data": "ready"},
                    }
                )
            elif mode == "answers-initialized":
                error(None, -32601, "unknown method notifications/initialized")
        elif method == "notifications/cancelled" and mode == "cancel-exits":
            sys.exit(0)
        elif method == "notifications/cancelled" and mode != "cancel-ignored" and isinstance(params, dict):
            WORK.pop(params.get("requestId"), None)
        elif mode == "answers-notification" and method not in ("notifications/cancelled",):
            error(None, -32601, f"unknown notification {method}")
        return
    if not isinstance(params, dict):
        if mode == "params-accepted":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            error(
                None if mode == "null-id-error" else rid,
                -32602 if isinstance(params, list) else -32600,
                "params must be an object",
            )
        return
    if method == "initialize":
        asked = params.get("protocolVersion")
        state["initialized"] = True
        if mode == "notifies-before-init":
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "protocolVersion": chosen_version(mode, asked, params.get("capabilities")),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bad-basic", "version": "0"},
                    **({"_meta": {"-bad/key": 1}} if mode == "bad-meta-key" else {}),
                },
            }
        )
        if mode == "request-before-initialized":
            send({"jsonrpc": "2.0", "id": "srv-early", "method": "roots/list", "params": {}})
    elif not state.get("initialized") and method != "ping":
        if mode == "early-result" and method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}})
        else:
            error(rid, -32500 if mode == "custom-reserved-code" else -32600, "not initialized")
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
    elif method == "tools/call" and params.get("name") == "work":
        token = (params.get("_meta") or {}).get("progressToken")
        if token is not None:
            progress(token, 1)
        WORK[rid] = (time.monotonic() + WORK_SECONDS, token)
    else:
        error(rid, -32601, f"method not found: {method}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=MODES, default="good")
    mode = parser.parse_args().mode
    state: dict[str, bool] = {}
    buf = b""
    while True:
        # A tiny event loop: lines from stdin, and the ``work`` calls whose time has come.
        now = time.monotonic()
        for rid, (due, token) in sorted(WORK.items(), key=lambda kv: kv[1][0]):
            if due <= now:
                del WORK[rid]
                finish(mode, rid, token)
        wait = min((due for due, _ in WORK.values()), default=now + 60) - now
        ready, _, _ = select.select([sys.stdin], [], [], max(0.0, wait))
        if not ready:
            continue
        chunk = os.read(sys.stdin.fileno(), 65536)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            if raw.strip():
                line(mode, raw, state)


def line(mode: str, raw: bytes, state: dict[str, bool]) -> None:
    try:
        msg = json.loads(raw)
    except ValueError:
        if mode == "wrong-parse-code":
            error(None, -32600, "bad")
        elif mode != "silent-on-parse-error":
            error(None, -32700, "parse error")
        return
    handle(mode, msg, state)


if __name__ == "__main__":
    main()
