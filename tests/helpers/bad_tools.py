"""A raw JSON-lines stdio MCP server for the tool-calling policy of ``trimcp check``, one defect per ``--mode``.

Used by tests/check/test_check_tools.py.  It is tests/helpers/bad_features.py (plain Python, no
trimcp import) with other tools (spec: server/tools):

  lookup      read-only, closed world; ``city`` required, ``unit`` (enum c/f) and ``days``
              (1..7) optional; declares an outputSchema (``temp``: a number)
  count       read-only, closed world; ``n`` (integer) required, validated
  fetch       read-only, open world (``openWorldHint`` true); ``url`` (format uri) required
  background  read-only, closed world, ``execution.taskSupport: required``: called without a
              task it answers -32601, as a correct server does

  good                     no defect (2025-11-25)
  variant-bad-output       lookup's structuredContent breaks its outputSchema when unit is "f"
                           (only a non-minimal argument set reaches it)
  wrong-structured         lookup's structuredContent gives ``temp`` as the string "21.5", whatever the
                           arguments (a wrong value, not a missing field)
  second-takes-wrong-types count accepts an ``n`` that is not an integer (the second tool probed)
  legacy-good              no defect, pinned to 2025-06-18
  legacy-dup-names         2025-06-18; tools/list names ``count`` twice
  legacy-bad-schema        2025-06-18; count's inputSchema is of type "string"
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import bad_features as base

MODES = (
    "good",
    "variant-bad-output",
    "wrong-structured",
    "second-takes-wrong-types",
    "legacy-good",
    "legacy-dup-names",
    "legacy-bad-schema",
)
CLOSED = {"readOnlyHint": True, "openWorldHint": False}
LOOKUP = {
    "name": "lookup",
    "annotations": CLOSED,
    "inputSchema": {
        "type": "object",
        "required": ["city"],
        "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["c", "f"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
    },
    "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]},
}
COUNT = {
    "name": "count",
    "annotations": CLOSED,
    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
}
FETCH = {
    "name": "fetch",
    "annotations": {"readOnlyHint": True, "openWorldHint": True},
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]},
}
BACKGROUND = {
    "name": "background",
    "annotations": CLOSED,
    "execution": {"taskSupport": "required"},
    "inputSchema": {"type": "object"},
}


def tools(mode: str) -> list[dict[str, Any]]:
    if mode == "legacy-dup-names":
        return [LOOKUP, COUNT, FETCH, COUNT]
    if mode == "legacy-bad-schema":
        return [LOOKUP, {**COUNT, "inputSchema": {"type": "string"}}, FETCH]
    if mode.startswith("legacy-"):
        return [LOOKUP, COUNT, FETCH]  # (no tasks before 2025-11-25)
    return [LOOKUP, COUNT, FETCH, BACKGROUND]


def text(msg_id: Any, value: str, **extra: Any) -> None:
    base.result(msg_id, {"content": [{"type": "text", "text": value}], **extra})


def call_tool(mode: str, msg_id: Any, params: dict[str, Any]) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if name is None:
        base.error(msg_id, -32602, "tools/call needs a name")
    elif name == "lookup":
        if not isinstance(args.get("city"), str):
            text(msg_id, "city must be a string", isError=True)
            return
        temp: Any = "hot" if mode == "variant-bad-output" and args.get("unit") == "f" else 21.5
        if mode == "wrong-structured":
            temp = "21.5"
        text(msg_id, json.dumps({"temp": temp}), structuredContent={"temp": temp})
    elif name == "count":
        if not isinstance(args.get("n"), int) and mode != "second-takes-wrong-types":
            text(msg_id, "n must be an integer", isError=True)
            return
        text(msg_id, str(args.get("n")))
    elif name == "fetch":
        if not isinstance(args.get("url"), str):
            text(msg_id, "url must be a string", isError=True)
            return
        text(msg_id, "fetched")
    elif name == "background" and "task" not in params:
        base.error(msg_id, -32601, "background can only be called as a task")
    else:
        base.error(msg_id, -32602, f"unknown tool {name!r}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=MODES, default="good")
    mode = parser.parse_args().mode
    if mode.startswith("legacy-"):
        base.VERSION = "2025-06-18"
    base.TOOLS = tools(mode)
    # base.handle looks both up at call time; the base server runs its good mode, ours is ours.
    base.call_tool = lambda _good, msg_id, params: call_tool(mode, msg_id, params)
    sys.argv = [sys.argv[0], "--mode", "good"]
    base.main()


if __name__ == "__main__":
    main()
