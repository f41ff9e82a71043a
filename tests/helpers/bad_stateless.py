"""A raw JSON-lines stdio MCP server of the stateless era (2026-07-28) with one defect per ``--mode``.

Used by tests/check/test_check_stateless.py.  Plain Python, no trimcp import (the
harness must judge a server it had no hand in).  It is ``bad_server.py``'s
``stateless-good`` behaviour (tools ``hello``, ``log``, ``ask`` - the last asks
for a name through an InputRequiredResult -, one resource), made modern-only:
``server/discover`` names 2026-07-28 alone and ``initialize`` is refused with
an error naming it.  On top: ``tools/list`` comes in two pages, the
capabilities declare an extension, and ``subscriptions/listen`` is
acknowledged and followed by one tagged ``tools/list_changed``.  Apart from
the selected defect it behaves correctly (basic/patterns/subscriptions,
server/utilities/caching, basic/versioning, basic/patterns/mrtr):

  good                          no defect
  notify-before-ack             a tagged notification precedes the acknowledgment
  ack-superset                  the acknowledgment grants promptsListChanged, which was not requested
  untagged-notification         the change notification carries no subscriptionId
  mis-tagged-notification       the change notification's subscriptionId names no listen request
  unrequested-notification      a resources/updated for a URI the subscription did not name
  scope-changes-between-pages   the second tools/list page is "private", the first "public"
  input-required-hints          the InputRequiredResult carries ttlMs/cacheScope
  initialize-error-silent       the error to initialize names no protocol version
  bad-extension-id              capabilities.extensions has an identifier without a prefix
  server-request                tools/call hello sends an elicitation/create request first
  serves-known-version          a request declaring 2025-11-25 (a revision it does not list) is served
  mrtr-error-on-missing         a retry without the requested input gets an error
  mrtr-refuses-extra            an unexpected inputResponses key gets an error
  mrtr-takes-invalid            an inputResponses that is not an object completes the call
  partial-envelope-served       a request whose _meta lacks protocolVersion is served (not -32602)
  mrtr-duplicate-keys           the InputRequiredResult's inputRequests names the key "name" twice (a
                                second elicitation pasted under the same key)
  mrtr-url-elicit               no defect: hello, for a client declaring elicitation.url, first asks for a
                                URL-mode elicitation (inputRequests "visit")
  mrtr-url-bad-url              as mrtr-url-elicit, the url is "example.com/verify" (not an absolute URL)
  mrtr-sampling-tools           no defect: hello, for a client declaring sampling.tools, asks for sampling
                                offering a tool; answered with stopReason toolUse, it asks again with the
                                tool results (inputRequests "draft", then "draft2")
  mrtr-sampling-wrong-id        as mrtr-sampling-tools, the tool result names toolUseId "call_1"
  mrtr-url-regardless           as mrtr-url-elicit, but for any client declaring elicitation (form only too)
  bad-tracestate                every result's tracestate has an upper-case key ("Vendor=1")
  bad-baggage                   every result's baggage has an unencoded space in a value
  probe-bad-traceparent         the answer to a request declaring no client capabilities (only the
                                harness's probes send one) carries an all-zero trace-id
  asks-url-elicitation          every InputRequiredResult asks for a URL-mode elicitation, also of a
                                request declaring form mode only (the harness's narrow session)
  asks-tool-sampling            it also asks for a tool-enabled sampling, also of a request that
                                declares no sampling.tools
  asks-other-method             it also asks for a tools/list, which no inputRequests may hold

Every result's ``_meta`` carries OpenTelemetry trace context (``traceparent``, ``tracestate``,
``baggage``: basic/index, _meta), well-formed but for the three modes above.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import bad_server as base
from jsonrpc_lines import read_message  # (tests/helpers, beside this script)

MODES = (
    "good",
    "notify-before-ack",
    "ack-superset",
    "untagged-notification",
    "mis-tagged-notification",
    "unrequested-notification",
    "scope-changes-between-pages",
    "input-required-hints",
    "initialize-error-silent",
    "bad-extension-id",
    "server-request",
    "serves-known-version",
    "mrtr-error-on-missing",
    "mrtr-refuses-extra",
    "mrtr-takes-invalid",
    "partial-envelope-served",
    "mrtr-duplicate-keys",
    "mrtr-url-elicit",
    "mrtr-url-bad-url",
    "mrtr-sampling-tools",
    "mrtr-sampling-wrong-id",
    "mrtr-url-regardless",
    "bad-tracestate",
    "bad-baggage",
    "probe-bad-traceparent",
    "asks-url-elicitation",
    "asks-tool-sampling",
    "asks-other-method",
)
LOOKUP = {"name": "lookup", "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}}}
#: What each asks-* mode does to the InputRequiredResult's inputRequests.
ASKS: dict[str, dict[str, Any]] = {
    "asks-url-elicitation": {
        "name": {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Sign in",
                "url": "https://example.com/sign-in",
                "elicitationId": "e-1",
            },
        }
    },
    "asks-tool-sampling": {
        "llm": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10,
                "tools": [{"name": "lookup", "inputSchema": {"type": "object"}}],
            },
        }
    },
    "asks-other-method": {"list": {"method": "tools/list", "params": {}}},
}
TRACE = {
    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "tracestate": "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
    "baggage": "userId=alice,serverNode=DF%2028;region=eu",
}
#: Whether the request being answered declared no client capabilities (probe-bad-traceparent).
_bare = [False]
GOOD = "stateless-good"
SUB_KEY = "io.modelcontextprotocol/subscriptionId"
UNEXPECTED = "trimcp-check-unexpected"
_write = base.send


def notify(method: str, params: dict[str, Any]) -> None:
    _write({"jsonrpc": "2.0", "method": method, "params": params})


def handle(mode: str, msg: dict[str, Any]) -> None:
    method, msg_id = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "initialize" and msg_id is not None:
        text = (
            "initialize is not supported"
            if mode == "initialize-error-silent"
            else (f"initialize is not supported; this server speaks only {base.MODERN} (per-request _meta)")
        )
        base.error(msg_id, -32601, text)
        return
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    version = meta.get(base.VERSION_KEY)
    served = version == base.MODERN or (mode == "serves-known-version" and version in base.SUPPORTED)
    if msg_id is None or method is None or not isinstance(version, str) or served:
        pass
    else:
        base.error(msg_id, -32022, "Unsupported protocol version", {"supported": [base.MODERN], "requested": version})
        return
    # A request lacking either required envelope field is malformed (-32602); the
    # partial-envelope-served mode serves one that lacks only protocolVersion.
    partial = not isinstance(version, str) and mode != "partial-envelope-served"
    if msg_id is None or method is None or not isinstance(meta.get(base.CAPS_KEY), dict) or partial:
        base.handle_stateless(GOOD, msg)  # notifications, and the missing-envelope error
    elif method == "server/discover":
        name = "thing" if mode == "bad-extension-id" else "com.example/thing"
        caps = {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True},
            "logging": {},
            "extensions": {name: {}},
        }
        base.complete(GOOD, method, msg_id, {"supportedVersions": [base.MODERN], "capabilities": caps})
    elif meta.get(base.LEVEL_KEY) is not None and meta.get(base.LEVEL_KEY) not in base.LEVELS:
        base.error(msg_id, -32602, "unknown log level")
    elif method == "tools/list" and params.get("cursor") not in (None, "page-2"):
        base.error(msg_id, -32602, "invalid cursor")
    elif method == "tools/list":
        tools = base.stateless_tools()
        if params.get("cursor") == "page-2":
            scope = "private" if mode == "scope-changes-between-pages" else "public"
            base.result(
                msg_id,
                {
                    "tools": tools[2:],
                    "resultType": "complete",
                    "ttlMs": 60000,
                    "cacheScope": scope,
                    "_meta": base.SERVER_INFO,
                },
            )
        else:
            base.complete(GOOD, method, msg_id, {"tools": tools[:2], "nextCursor": "page-2"})
    elif method == "subscriptions/listen":
        listen(mode, msg_id, params)
    elif method == "tools/call":
        call(mode, msg_id, params)
    else:
        base.handle_stateless(GOOD, msg)


def listen(mode: str, msg_id: Any, params: dict[str, Any]) -> None:
    wanted = params.get("notifications") or {}
    tag = {SUB_KEY: msg_id}
    granted: dict[str, Any] = {}
    if wanted.get("toolsListChanged"):
        granted["toolsListChanged"] = True
    if wanted.get("resourceSubscriptions"):
        granted["resourceSubscriptions"] = list(wanted["resourceSubscriptions"])
    if mode == "ack-superset":
        granted["promptsListChanged"] = True
    change = {"_meta": tag}
    if mode == "notify-before-ack":
        notify("notifications/tools/list_changed", change)
    notify("notifications/subscriptions/acknowledged", {"notifications": granted, "_meta": tag})
    if mode == "untagged-notification":
        notify("notifications/tools/list_changed", {})
    elif mode == "mis-tagged-notification":
        notify("notifications/tools/list_changed", {"_meta": {SUB_KEY: "trimcp-audit-no-such-listen"}})
    elif mode == "unrequested-notification":
        notify("notifications/resources/updated", {"uri": "bad://other", "_meta": tag})
    elif mode != "notify-before-ack":
        notify("notifications/tools/list_changed", change)


def input_required(msg_id: Any, requests: dict[str, Any]) -> None:
    _write(
        {
            "jsonrpc": "2.0",
            "id": msg_id,
            "result": {"resultType": "input_required", "inputRequests": requests, "_meta": base.SERVER_INFO},
        }
    )


def hello_asks(mode: str, msg_id: Any, params: dict[str, Any]) -> bool:
    """The mrtr-url-* and mrtr-sampling-* rounds of hello; ``False``: hello answers as usual."""
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    caps = meta.get(base.CAPS_KEY) if isinstance(meta.get(base.CAPS_KEY), dict) else {}
    answers = params.get("inputResponses") if isinstance(params.get("inputResponses"), dict) else {}
    elicits = "url" in (caps.get("elicitation") or {}) or (mode == "mrtr-url-regardless" and "elicitation" in caps)
    if mode.startswith("mrtr-url") and elicits and not answers:
        url = "example.com/verify" if mode == "mrtr-url-bad-url" else "https://example.com/verify?session=e1"
        input_required(
            msg_id,
            {
                "visit": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "url",
                        "message": "Open this page to connect your account",
                        "url": url,
                        "elicitationId": "e1",
                    },
                }
            },
        )
        return True
    if not (mode.startswith("mrtr-sampling") and "tools" in (caps.get("sampling") or {})) or "draft2" in answers:
        return False
    first = [{"role": "user", "content": {"type": "text", "text": "Say hello"}}]
    if "draft" not in answers:
        input_required(
            msg_id,
            {
                "draft": {
                    "method": "sampling/createMessage",
                    "params": {"messages": first, "maxTokens": 100, "tools": [LOOKUP]},
                }
            },
        )
        return True
    answer = answers["draft"] if isinstance(answers["draft"], dict) else {}
    blocks = answer.get("content") if isinstance(answer.get("content"), list) else [answer.get("content")]
    uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    if answer.get("stopReason") != "toolUse" or not uses:
        return False
    results = [
        {
            "type": "tool_result",
            "toolUseId": "call_1" if mode == "mrtr-sampling-wrong-id" else b["id"],
            "content": [{"type": "text", "text": "a word"}],
        }
        for b in uses
    ]
    messages = [*first, {"role": "assistant", "content": blocks}, {"role": "user", "content": results}]
    input_required(
        msg_id,
        {
            "draft2": {
                "method": "sampling/createMessage",
                "params": {"messages": messages, "maxTokens": 100, "tools": [LOOKUP]},
            }
        },
    )
    return True


def call(mode: str, msg_id: Any, params: dict[str, Any]) -> None:
    name, answers = params.get("name"), params.get("inputResponses")
    if name == "hello" and hello_asks(mode, msg_id, params):
        return
    if name == "hello" and mode == "server-request":
        _write(
            {
                "jsonrpc": "2.0",
                "id": "srv-1",
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Your name?",
                    "requestedSchema": {"type": "object", "properties": {}},
                },
            }
        )
    if name == "ask" and "inputResponses" in params:
        if mode == "mrtr-error-on-missing" and answers == {}:
            base.error(msg_id, -32602, "inputResponses lacks 'name'")
            return
        if mode == "mrtr-refuses-extra" and isinstance(answers, dict) and UNEXPECTED in answers:
            base.error(msg_id, -32602, f"unexpected inputResponses key {UNEXPECTED!r}")
            return
        if mode == "mrtr-takes-invalid" and not isinstance(answers, dict):
            base.complete(GOOD, "tools/call", msg_id, {"content": [{"type": "text", "text": "hello stranger"}]})
            return
    base.handle_stateless(GOOD, {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params})


def traced(mode: str) -> None:
    """Every result goes out with trace context in its ``_meta`` (the mode's defect, if any);
    an asks-* mode rewrites the InputRequiredResult's inputRequests."""
    trace = dict(TRACE)
    if mode == "bad-tracestate":
        trace["tracestate"] = "Vendor=1"
    elif mode == "bad-baggage":
        trace["baggage"] = "userId=alice smith"
    inner = base.send

    def send(message: dict[str, Any]) -> None:
        out = message.get("result")
        if isinstance(out, dict):
            mine = dict(trace)
            if mode == "probe-bad-traceparent" and _bare[0]:
                mine["traceparent"] = "00-" + "0" * 32 + "-b7ad6b7169203331-01"
            out["_meta"] = {**(out.get("_meta") or {}), **mine}
            if mode in ASKS and isinstance(out.get("inputRequests"), dict):
                out["inputRequests"].update(ASKS[mode])
        inner(message)

    base.send = send


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=MODES, default="good")
    mode = parser.parse_args().mode
    traced(mode)
    if mode == "input-required-hints":

        def hinted(message: dict[str, Any]) -> None:
            out = message.get("result")
            if isinstance(out, dict) and out.get("resultType") == "input_required":
                out.update(ttlMs=1000, cacheScope="public")
            _write(message)

        base.send = hinted  # bad_server's ask() writes through its module's send
    elif mode == "mrtr-duplicate-keys":

        def doubled(message: dict[str, Any]) -> None:
            out = message.get("result")
            if not (isinstance(out, dict) and out.get("resultType") == "input_required"):
                _write(message)
                return
            pasted = json.dumps(
                {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Your age?",
                        "requestedSchema": {"type": "object", "properties": {}},
                    },
                }
            )
            text = json.dumps(message).replace('"inputRequests": {', '"inputRequests": {"name": ' + pasted + ", ", 1)
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

        base.send = doubled
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = read_message(line, base.error)
        if msg is None:
            continue
        meta = (msg.get("params") or {}).get("_meta") if isinstance(msg.get("params"), dict) else None
        _bare[0] = isinstance(meta, dict) and meta.get(base.CAPS_KEY) == {}
        handle(mode, msg)


if __name__ == "__main__":
    main()
