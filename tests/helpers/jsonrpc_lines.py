"""What every fake stdio server of the tests does with a line before its own logic sees it.

A correct server answers malformed input as JSON-RPC 2.0 requires: -32700 for text that is not
JSON, -32600 for something that is not a request, response or notification, -32602 for a request
whose params is an array (valid JSON-RPC, taken by no MCP method), -32600 for params of another
type.  The harness's negative probes send all of these; a fake whose defect lies elsewhere must
pass them.  Plain Python, no trimcp import: the harness judges servers it had no hand in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Error = Callable[[Any, int, str], None]


def read_message(line: str, error: Error) -> dict[str, Any] | None:
    """The message on ``line``, or ``None`` when it was malformed and ``error`` has answered it."""
    try:
        msg = json.loads(line)
    except ValueError:
        error(None, -32700, "parse error")
        return None
    if not isinstance(msg, dict) or not ({"method", "result", "error"} & msg.keys()):
        error(msg.get("id") if isinstance(msg, dict) else None, -32600, "invalid request")
        return None
    if "id" in msg and msg.get("params") is not None and not isinstance(msg["params"], dict):
        error(msg["id"], -32602 if isinstance(msg["params"], list) else -32600, "params must be an object")
        return None
    return msg
