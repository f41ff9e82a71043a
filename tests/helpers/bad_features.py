"""A raw JSON-lines stdio MCP server (2025-11-25) with one server-feature defect per ``--mode``.

Used by tests/check/test_check_features.py.  Plain Python on purpose (no trimcp import): the
harness must judge a server it had no hand in.  It offers tools (``echo``, read-only,
validating its ``message``; ``image``, read-only), one prompt with a required argument
(its message embeds a resource), one resource, completions and logging.  Apart from the
selected defect it behaves correctly:

  good                     no defect
  cursor-ignored           lists answer an invalid cursor with their first page
  prompt-unknown-code-0    an unknown prompt name gets error code 0, not -32602
  prompt-missing-arg-ok    prompts/get without the required argument gets a result
  call-without-name-32603  tools/call without a name gets -32603
  wrong-types-ok           echo accepts a message that is not a string
  bad-base64               the image tool's data is not valid base64
  embedded-no-mime         the prompt's embedded resource has no mimeType
  logging-below-level      echo logs at debug after logging/setLevel info
  log-level-ok             logging/setLevel with an unknown level gets a result
  completion-too-many      completion/complete answers 101 values
  completion-unknown-ok    completion/complete of an unknown prompt gets values
  list-changed-undeclared  sends notifications/tools/list_changed without tools.listChanged
  prompts-undeclared       does not declare prompts, yet answers prompts/list
  invalid-uri-ok           resources/read of a malformed URI gets contents
  bad-uri                  the resource's URI has a space in it (not RFC 3986)
  read-both                resources/read contents carry both text and blob
  echo-always-fails        echo answers isError whatever its arguments (no defect: a refusal of
                           invalid arguments then proves nothing)
  dup-names                tools/list names echo twice
  bad-tool-name            the image tool is named "image tool" (a space: not a valid tool name)
  unknown-tool-ok          tools/call of an unknown tool answers a normal result
  read-error               resources/read of the listed resource answers -32603
  templates-error          resources/templates/list answers -32603
  prompt-get-error         prompts/get of the listed prompt, with its argument, answers -32603
  completion-error         completion/complete of the listed prompt answers -32603 although advertised
  embedded-both            the prompt's embedded resource carries both text and blob
  completion-empty         completion/complete answers no values (no defect: no limit to judge)
  input-schema-invalid     echo's inputSchema says "required": "message" (a string, not an array: not
                           a valid 2020-12 schema, though of type object)
  input-schema-null        the image tool's inputSchema is null
  output-schema-invalid    the image tool declares an outputSchema whose property type is "integr"
  unknown-dialect          echo's inputSchema names a $schema jsonschema does not know (no defect)
  elicit-bad-schema        echo sends a form-mode elicitation/create whose requestedSchema has
                           "minimum": "0" (a string: not a valid 2020-12 schema)
  bad-mime                 the image tool's content has mimeType "png" (not type/subtype)
  bad-link-uri             the image tool's result links a resource at "file://C:\\data\\one.txt"
                           (backslashes: not an RFC 3986 URI; the listed URIs are fine)
  elicit-url               no defect: echo, to a client declaring elicitation.url, sends a URL-mode
                           elicitation/create and, once answered, its notifications/elicitation/complete
  elicit-url-bad-url       as elicit-url, the url "example.com/verify" (no scheme: not an absolute URL)
  elicit-complete-unknown  as elicit-url, the completion names "e2" although the request established "e1"
  elicit-complete-early    as elicit-url, the completion comes before the request that establishes its id
  sampling-tools           no defect: echo, to a client declaring sampling.tools, samples offering a tool
                           and, answered with stopReason toolUse, samples again with the tool results
  sampling-tools-wrong-id  as sampling-tools, the tool result names toolUseId "call_1", not the tool use's id
  sampling-tools-mixed     as sampling-tools, the user message with the tool results also holds a text block
  elicit-url-regardless    as elicit-url, but to any client declaring elicitation (form mode only too)
  sampling-tools-regardless  as sampling-tools, but to any client declaring sampling (without tools too)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from jsonrpc_lines import read_message  # tests/helpers, beside this file

VERSION = "2025-11-25"
MODES = (
    "good",
    "cursor-ignored",
    "prompt-unknown-code-0",
    "prompt-missing-arg-ok",
    "call-without-name-32603",
    "wrong-types-ok",
    "bad-base64",
    "embedded-no-mime",
    "logging-below-level",
    "log-level-ok",
    "completion-too-many",
    "completion-unknown-ok",
    "list-changed-undeclared",
    "prompts-undeclared",
    "invalid-uri-ok",
    "bad-uri",
    "read-both",
    "echo-always-fails",
    "completion-empty",
    "embedded-both",
    "dup-names",
    "bad-tool-name",
    "unknown-tool-ok",
    "read-error",
    "templates-error",
    "prompt-get-error",
    "completion-error",
    "input-schema-invalid",
    "input-schema-null",
    "output-schema-invalid",
    "unknown-dialect",
    "elicit-bad-schema",
    "bad-mime",
    "bad-link-uri",
    "elicit-url",
    "elicit-url-bad-url",
    "elicit-complete-unknown",
    "elicit-complete-early",
    "sampling-tools",
    "sampling-tools-wrong-id",
    "sampling-tools-mixed",
    "elicit-url-regardless",
    "sampling-tools-regardless",
)
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
TOOLS = [
    {
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        "annotations": READ_ONLY,
    },
    {"name": "image", "inputSchema": {"type": "object"}, "annotations": READ_ONLY},
]
PROMPT = {"name": "greet", "arguments": [{"name": "name", "required": True}]}
RESOURCE = {"uri": "mem://one", "name": "one", "mimeType": "text/plain"}

state: dict[str, Any] = {"level": None, "client_caps": {}, "next_id": 1000, "pending": {}}
LOOKUP = {
    "name": "lookup",
    "description": "Look a word up",
    "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}},
}


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def result(msg_id: Any, value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": value})


def error(msg_id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def log(level: str, text: str) -> None:
    floor = state["level"]
    if floor is None or LEVELS.index(level) >= LEVELS.index(floor):
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": text}})


def ask(method: str, params: dict[str, Any], then: Any) -> None:
    """Send a request to the client; ``then(result)`` runs when its answer arrives."""
    state["next_id"] += 1
    state["pending"][state["next_id"]] = then
    send({"jsonrpc": "2.0", "id": state["next_id"], "method": method, "params": params})


def complete(eid: str) -> None:
    send({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": eid}})


def url_elicitation(mode: str, msg_id: Any, text: str) -> None:
    if mode == "elicit-complete-early":
        complete("e1")
    url = "example.com/verify" if mode == "elicit-url-bad-url" else "https://example.com/verify?session=e1"

    def then(answer: Any) -> None:
        if mode != "elicit-complete-early":
            complete("e2" if mode == "elicit-complete-unknown" else "e1")
        result(msg_id, {"content": [{"type": "text", "text": text}]})

    ask(
        "elicitation/create",
        {"mode": "url", "message": "Open this page to connect your account", "url": url, "elicitationId": "e1"},
        then,
    )


def sampling_with_tools(mode: str, msg_id: Any, text: str) -> None:
    first = [{"role": "user", "content": {"type": "text", "text": f"Define {text}"}}]

    def then(answer: Any) -> None:
        content = (answer or {}).get("content")
        blocks = content if isinstance(content, list) else [content]
        uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if answer.get("stopReason") != "toolUse" or not uses:
            result(msg_id, {"content": [{"type": "text", "text": text}]})
            return
        results: list[dict[str, Any]] = [
            {
                "type": "tool_result",
                "toolUseId": "call_1" if mode == "sampling-tools-wrong-id" else b["id"],
                "content": [{"type": "text", "text": "a word"}],
            }
            for b in uses
        ]
        if mode == "sampling-tools-mixed":
            results.append({"type": "text", "text": "Here are the results"})
        messages = [*first, {"role": "assistant", "content": blocks}, {"role": "user", "content": results}]
        ask(
            "sampling/createMessage",
            {"messages": messages, "maxTokens": 100, "tools": [LOOKUP]},
            lambda final: result(msg_id, {"content": [{"type": "text", "text": text}]}),
        )

    ask("sampling/createMessage", {"messages": first, "maxTokens": 100, "tools": [LOOKUP]}, then)


def capabilities(mode: str) -> dict[str, Any]:
    caps: dict[str, Any] = {"tools": {}, "resources": {}, "logging": {}, "completions": {}, "prompts": {}}
    if mode == "prompts-undeclared":
        del caps["prompts"]
    return caps


def call_tool(mode: str, msg_id: Any, params: dict[str, Any]) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if name is None:
        error(msg_id, -32603 if mode == "call-without-name-32603" else -32602, "tools/call needs a name")
        return
    if name == "echo":
        message = args.get("message")
        if mode == "echo-always-fails":
            result(msg_id, {"content": [{"type": "text", "text": "echo is out of order"}], "isError": True})
            return
        if not isinstance(message, str) and mode != "wrong-types-ok":
            result(msg_id, {"content": [{"type": "text", "text": "message must be a string"}], "isError": True})
            return
        if mode == "logging-below-level":
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "debug", "data": "x"}})
        else:
            log("info", "echo called")
        if mode == "list-changed-undeclared":
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        if mode == "elicit-bad-schema":
            state["next_id"] += 1
            send(
                {
                    "jsonrpc": "2.0",
                    "id": state["next_id"],
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "how old?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"age": {"type": "number", "minimum": "0"}},
                        },
                    },
                }
            )
        caps = state["client_caps"]
        regardless = mode.endswith("-regardless")  # the defect: the mode or tools capability is not read
        url_mode = "url" in (caps.get("elicitation") or {}) or (regardless and "elicitation" in caps)
        if mode.startswith(("elicit-url", "elicit-complete")) and url_mode:
            url_elicitation(mode, msg_id, str(message))
            return
        if mode.startswith("sampling-tools") and (
            "tools" in (caps.get("sampling") or {}) or (regardless and "sampling" in caps)
        ):
            sampling_with_tools(mode, msg_id, str(message))
            return
        result(msg_id, {"content": [{"type": "text", "text": str(message)}]})
    elif name in ("image", "image tool"):
        data = "not base64!" if mode == "bad-base64" else PNG
        content: list[dict[str, Any]] = [
            {"type": "image", "data": data, "mimeType": "png" if mode == "bad-mime" else "image/png"}
        ]
        if mode == "bad-link-uri":
            content.append({"type": "resource_link", "uri": "file://C:\\data\\one.txt", "name": "one"})
        extra = {"structuredContent": {"n": 1}} if mode == "output-schema-invalid" else {}
        result(msg_id, {"content": content, **extra})
    elif mode == "unknown-tool-ok":
        result(msg_id, {"content": [{"type": "text", "text": "done"}]})
    else:
        error(msg_id, -32602, f"unknown tool {name!r}")


def tools(mode: str) -> list[dict[str, Any]]:
    if mode == "dup-names":
        return [*TOOLS, TOOLS[0]]
    if mode == "bad-tool-name":
        return [TOOLS[0], {**TOOLS[1], "name": "image tool"}]
    echo, image = TOOLS[0], TOOLS[-1]
    if mode == "input-schema-invalid":
        return [{**echo, "inputSchema": {**echo["inputSchema"], "required": "message"}}, image]
    if mode == "unknown-dialect":
        return [{**echo, "inputSchema": {**echo["inputSchema"], "$schema": "https://example.com/my-dialect"}}, image]
    if mode == "input-schema-null":
        return [echo, {**image, "inputSchema": None}]
    if mode == "output-schema-invalid":
        return [echo, {**image, "outputSchema": {"type": "object", "properties": {"n": {"type": "integr"}}}}]
    return TOOLS


def get_prompt(mode: str, msg_id: Any, params: dict[str, Any]) -> None:
    if params.get("name") != "greet":
        error(msg_id, 0 if mode == "prompt-unknown-code-0" else -32602, "unknown prompt")
        return
    if mode == "prompt-get-error" and (params.get("arguments") or {}).get("name") is not None:
        error(msg_id, -32603, "internal error")
        return
    name = (params.get("arguments") or {}).get("name")
    if name is None and mode != "prompt-missing-arg-ok":
        error(msg_id, -32602, "missing required argument 'name'")
        return
    embedded: dict[str, Any] = {"uri": "mem://one", "text": "one"}
    if mode != "embedded-no-mime":
        embedded["mimeType"] = "text/plain"
    if mode == "embedded-both":
        embedded["blob"] = "b25l"
    result(
        msg_id,
        {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": f"hello {name}"}},
                {"role": "user", "content": {"type": "resource", "resource": embedded}},
            ]
        },
    )


def handle(mode: str, msg: dict[str, Any]) -> None:
    method = msg.get("method")
    if method is None and "id" in msg:
        then = state["pending"].pop(msg["id"], None)
        if then is not None:
            then(msg.get("result") or {})
        return
    if "id" not in msg or method is None:
        return  # notifications
    msg_id, params = msg["id"], msg.get("params") or {}
    if method == "initialize":
        state["client_caps"] = params.get("capabilities") or {}
        result(
            msg_id,
            {
                "protocolVersion": VERSION,
                "capabilities": capabilities(mode),
                "serverInfo": {"name": f"bad-features-{mode}", "version": "0.0.1"},
            },
        )
    elif method == "ping":
        result(msg_id, {})
    elif method.endswith("/list") and params.get("cursor") is not None and mode != "cursor-ignored":
        error(msg_id, -32602, "invalid cursor")  # every list is one page: no cursor is valid
    elif method == "tools/list":
        result(msg_id, {"tools": tools(mode)})
    elif method == "tools/call":
        call_tool(mode, msg_id, params)
    elif method == "prompts/list":
        result(msg_id, {"prompts": [PROMPT]})
    elif method == "prompts/get":
        get_prompt(mode, msg_id, params)
    elif method == "resources/list":
        result(msg_id, {"resources": [{**RESOURCE, "uri": "mem://one two"} if mode == "bad-uri" else RESOURCE]})
    elif method == "resources/templates/list":
        if mode == "templates-error":
            error(msg_id, -32603, "internal error")
            return
        result(msg_id, {"resourceTemplates": []})
    elif method == "resources/read":
        uri = params.get("uri")
        if mode == "read-error" and uri == RESOURCE["uri"]:
            error(msg_id, -32603, "internal error")
        elif mode == "bad-uri" and uri == "mem://one two":
            result(msg_id, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "one"}]})
        elif uri == RESOURCE["uri"] or (mode == "invalid-uri-ok" and " " in str(uri)):
            both = {"blob": "b25l"} if mode == "read-both" else {}
            result(msg_id, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "one", **both}]})
        else:
            error(msg_id, -32002, "Resource not found")
    elif method == "logging/setLevel":
        level = params.get("level")
        if level not in LEVELS and mode != "log-level-ok":
            error(msg_id, -32602, f"unknown log level {level!r}")
            return
        state["level"] = level if level in LEVELS else "info"
        result(msg_id, {})
    elif method == "completion/complete":
        ref = params.get("ref") or {}
        if ref.get("name") != "greet" and mode != "completion-unknown-ok":
            error(msg_id, -32602, "unknown prompt")
            return
        if mode == "completion-error":
            error(msg_id, -32603, "internal error")
            return
        values = [f"v{i}" for i in range(101)] if mode == "completion-too-many" else ["ann", "bob"]
        if mode == "completion-empty":
            values = []
        result(msg_id, {"completion": {"values": values, "total": len(values), "hasMore": False}})
    else:
        error(msg_id, -32601, f"method not found: {method}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=MODES, default="good")
    mode = parser.parse_args().mode
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = read_message(line, error)
        if msg is None:
            continue
        handle(mode, msg)


if __name__ == "__main__":
    main()
