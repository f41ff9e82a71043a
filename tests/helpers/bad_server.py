"""A raw JSON-lines stdio MCP server with one deliberate defect per ``--mode``.

Used by tests/check/test_check.py to make sure ``trimcp check`` notices each defect.
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

The ``stateless-*`` modes are dual-era: ``server/discover`` and requests carrying the
2026-07-28 ``_meta`` envelope are served statelessly (tools ``hello``, ``log`` and ``ask``
- the last asks for a name through an InputRequiredResult with an integrity-checked
``requestState`` -, one resource, ``subscriptions/listen``), ``initialize`` still opens a
handshake-era session.  Apart from the selected defect they behave correctly:

  stateless-good                    no defect
  stateless-no-result-type          complete results lack resultType
  stateless-wrong-unsupported-code  an unknown revision gets -32602 instead of -32022
  stateless-no-envelope-check       requests without the _meta envelope are served anyway
  stateless-minus-32002             an unknown resource gets the legacy -32002, not -32602
  stateless-log-without-level       the log tool logs even when the request set no logLevel
  stateless-trusts-state            a modified requestState is accepted
  stateless-asks-undeclared         asks for elicitation even when the client did not declare it
  stateless-no-cache-hints          list and read results lack ttlMs/cacheScope
  stateless-silent-log-tool         the "log" tool never logs (a name is no evidence)
  all-is-error                      the read-only tool always answers isError
  no-tools                          advertises tools but lists none
  fetch-failed                      the read-only tool answers the text "fetch failed" without isError
  call-internal-error               the read-only tool, called with valid arguments, answers error -32603
  stateless-wrong-result-type       complete results carry resultType "done"
  stateless-bad-cache-scope         cacheable results carry cacheScope "shared" and ttlMs -1
  answers-unknown-id                after its tools/list answer, answers id 9999, which no request had
  bad-server-info                   serverInfo's version is the number 1, not a string
  stateless-empty-lists             stateless, and tools/list and resources/list are empty
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sys
import time
from typing import Any

from jsonrpc_lines import read_message  # tests/helpers, beside this file

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
    "stateless-good",
    "stateless-no-result-type",
    "stateless-wrong-unsupported-code",
    "stateless-no-envelope-check",
    "stateless-minus-32002",
    "stateless-log-without-level",
    "stateless-trusts-state",
    "stateless-asks-undeclared",
    "stateless-no-cache-hints",
    "stateless-silent-log-tool",
    "all-is-error",
    "no-tools",
    "fetch-failed",
    "call-internal-error",
    "stateless-empty-lists",
    "answers-unknown-id",
    "bad-server-info",
    "stateless-wrong-result-type",
    "stateless-bad-cache-scope",
)


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(msg_id: Any, value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": value})


def error(msg_id: Any, code: int, message: str, data: Any = None) -> None:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    send({"jsonrpc": "2.0", "id": msg_id, "error": err})


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
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "logging without the capability"},
                }
            )
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
        result(
            msg_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": f"bad-server-{mode}", "version": 1 if mode == "bad-server-info" else "0.0.1"},
            },
        )
        if mode == "garbage-stdout":
            sys.stdout.write("this line is not JSON\n")
            sys.stdout.flush()
    elif method == "ping":
        result(msg_id, {})
    elif method.endswith("/list") and params.get("cursor") is not None:
        error(msg_id, -32602, "invalid cursor")  # every list is one page: no cursor is valid
    elif method == "tools/list":
        result(msg_id, {"tools": [] if mode == "no-tools" else [tool(mode)]})
        if mode == "answers-unknown-id":
            result(9999, {})
    elif method == "tools/call":
        if params.get("name") != "hello":
            error(msg_id, -32602, f"unknown tool {params.get('name')!r}")
            return
        if mode == "call-internal-error":
            error(msg_id, -32603, "internal error")
            return
        text = "fetch failed" if mode == "fetch-failed" else "hello"
        result(msg_id, {"content": [{"type": "text", "text": text}], "isError": mode == "all-is-error"})
    elif mode == "unknown-method-wrong-code":
        result(msg_id, {})
    else:
        error(msg_id, -32601, f"method not found: {method}")


# --------------------------------------------------------------------------- 2026-07-28

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "bad-server-stateless", "version": "0.0.1"}}
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
RESOURCE = {"uri": "bad://resource", "name": "resource", "mimeType": "text/plain"}
CACHEABLE = {"server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read"}
state = {"legacy": False}


def _state_for(name: str) -> str:
    """The requestState of the ask tool: a payload and a digest standing in for a MAC."""
    return f"ask:{name}:" + hashlib.sha256(f"bad-server-secret:{name}".encode()).hexdigest()[:16]


def complete(mode: str, method: str, msg_id: Any, value: dict[str, Any]) -> None:
    out = dict(value)
    if mode != "stateless-no-result-type":
        out["resultType"] = (
            "done" if mode == "stateless-wrong-result-type" and method != "server/discover" else "complete"
        )
    if method in CACHEABLE and (mode != "stateless-no-cache-hints" or method == "server/discover"):
        out.update(ttlMs=60000, cacheScope="public")
        if mode == "stateless-bad-cache-scope" and method != "server/discover":
            out.update(ttlMs=-1, cacheScope="shared")
    out["_meta"] = SERVER_INFO
    result(msg_id, out)


def stateless_tools() -> list[dict[str, Any]]:
    read_only = {"readOnlyHint": True}
    empty = {"type": "object", "properties": {}}
    return [
        {"name": "hello", "description": "Say hello.", "inputSchema": empty, "annotations": read_only},
        {"name": "log", "description": "Log one info message.", "inputSchema": empty, "annotations": read_only},
        {"name": "ask", "description": "Ask for a name.", "inputSchema": empty, "annotations": read_only},
    ]


def handle_stateless(mode: str, msg: dict[str, Any]) -> None:
    method = msg.get("method")
    if "id" not in msg or method is None:
        return  # notifications/cancelled and stray responses
    msg_id = msg["id"]
    params = msg.get("params") or {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    version, caps = meta.get(VERSION_KEY), meta.get(CAPS_KEY)
    if not isinstance(version, str) or not isinstance(caps, dict):
        if mode != "stateless-no-envelope-check":
            error(msg_id, -32602, "missing _meta envelope (protocolVersion and clientCapabilities)")
            return
        version, caps = MODERN, {}
    if version != MODERN:
        if mode == "stateless-wrong-unsupported-code":
            error(msg_id, -32602, f"unsupported protocol version {version}")
        else:
            error(
                msg_id,
                -32022,
                "Unsupported protocol version",
                {"supported": [MODERN, *SUPPORTED], "requested": version},
            )
        return
    if meta.get(LEVEL_KEY) is not None and meta.get(LEVEL_KEY) not in LEVELS:
        error(msg_id, -32602, f"unknown log level {meta.get(LEVEL_KEY)!r}")
        return
    if method == "server/discover":
        capabilities = {"tools": {"listChanged": True}, "resources": {}, "logging": {}}
        complete(mode, method, msg_id, {"supportedVersions": [MODERN, *SUPPORTED], "capabilities": capabilities})
    elif method.endswith("/list") and params.get("cursor") is not None:
        error(msg_id, -32602, "invalid cursor")  # every list is one page: no cursor is valid
    elif method == "tools/list":
        complete(mode, method, msg_id, {"tools": [] if mode == "stateless-empty-lists" else stateless_tools()})
    elif method == "tools/call":
        call_tool(mode, msg_id, params, meta, caps)
    elif method == "resources/list":
        complete(mode, method, msg_id, {"resources": [] if mode == "stateless-empty-lists" else [RESOURCE]})
    elif method == "resources/templates/list":
        complete(mode, method, msg_id, {"resourceTemplates": []})
    elif method == "resources/read":
        if params.get("uri") != RESOURCE["uri"]:
            code = -32002 if mode == "stateless-minus-32002" else -32602
            error(msg_id, code, "Resource not found", {"uri": params.get("uri")})
            return
        complete(mode, method, msg_id, {"contents": [{"uri": RESOURCE["uri"], "text": "hello"}]})
    elif method == "subscriptions/listen":
        wanted = params.get("notifications") or {}
        granted = {"toolsListChanged": True} if wanted.get("toolsListChanged") else {}
        send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {
                    "notifications": granted,
                    "_meta": {"io.modelcontextprotocol/subscriptionId": msg_id},
                },
            }
        )
    else:
        error(msg_id, -32601, f"method not found: {method}")


def call_tool(mode: str, msg_id: Any, params: dict[str, Any], meta: dict[str, Any], caps: dict[str, Any]) -> None:
    name = params.get("name")
    if name == "hello":
        complete(mode, "tools/call", msg_id, {"content": [{"type": "text", "text": "hello"}]})
    elif name == "log":
        level = meta.get(LEVEL_KEY)
        wanted = level in LEVELS and LEVELS.index(level) <= LEVELS.index("info")
        if mode == "stateless-silent-log-tool":
            wanted = False
        if wanted or mode == "stateless-log-without-level":
            send(
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "a log line"}}
            )
        complete(mode, "tools/call", msg_id, {"content": [{"type": "text", "text": "logged"}]})
    elif name == "ask":
        ask(mode, msg_id, params, caps)
    else:
        error(msg_id, -32602, f"unknown tool {name!r}")


def ask(mode: str, msg_id: Any, params: dict[str, Any], caps: dict[str, Any]) -> None:
    answers = params.get("inputResponses")
    if isinstance(answers, dict) and "name" in answers:
        if params.get("requestState") != _state_for("name") and mode != "stateless-trusts-state":
            error(msg_id, -32602, "invalid requestState")
            return
        answer = answers["name"]
        content = answer.get("content") if isinstance(answer, dict) and answer.get("action") == "accept" else None
        who = content.get("name") if isinstance(content, dict) else "stranger"
        complete(mode, "tools/call", msg_id, {"content": [{"type": "text", "text": f"hello {who}"}]})
        return
    if "elicitation" not in caps and mode != "stateless-asks-undeclared":
        error(
            msg_id, -32021, "this tool needs the elicitation capability", {"requiredCapabilities": {"elicitation": {}}}
        )
        return
    result(
        msg_id,
        {
            "resultType": "input_required",
            "inputRequests": {
                "name": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Your name?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"],
                        },
                    },
                }
            },
            "requestState": _state_for("name"),
            "_meta": SERVER_INFO,
        },
    )


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
        msg = read_message(line, error)
        if msg is None:
            continue
        if (
            not mode.startswith("stateless-")
            and msg.get("method") not in ("initialize", "ping", "server/discover", None)
            and "id" in msg
            and not state.get("initialized")
        ):
            error(msg["id"], -32600, "not initialized")
            continue
        if msg.get("method") == "initialize":
            state["initialized"] = True
        if isinstance(msg, dict):
            if mode.startswith("stateless-") and not state["legacy"] and msg.get("method") != "initialize":
                handle_stateless(mode, msg)
            else:
                state["legacy"] = True
                handle(mode, msg)
    if mode == "ignore-stdin-close":
        # Only SIGTERM/SIGKILL end us early; never outlive a test run by much.
        time.sleep(max(0.0, 10.0 - (time.monotonic() - started)))


if __name__ == "__main__":
    main()
