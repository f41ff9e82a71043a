"""``http26.envelope-400``: a request whose envelope lacks a required field gets HTTP 400 (2026-07-28).

Theory of operation
-------------------
basic/index (2026-07-28, ``_meta``): "A request missing any required field is
malformed; the server MUST reject it with JSON-RPC error code -32602 (Invalid
params). On HTTP, the response status MUST be 400 Bad Request."  The error code
is ``stateless.partial-envelope``'s (any transport); this check reads the HTTP
status.  For each required envelope field (``protocolVersion``,
``clientCapabilities``) one raw POST (``http26_wire.Prober``: its own TCP
connection, the run's credentials) carries a request of an advertised list
method (``server/discover`` when there is none) whose ``_meta`` lacks just that
field, with the headers a correct client sends.  The answer must be HTTP 400:
a result, or an error under any other status, fails with the exchange.  A 400
with -32020 (the header names a version the body lacks) is a 400 all the same.
"""

from __future__ import annotations

from typing import Any, Final

from ..results import Results
from .contract26 import REQUIRED_FIELDS
from .http26_wire import Prober
from .probes import list_method

__all__ = ["CHECK", "check_envelope_status"]

CHECK: Final = "http26.envelope-400"


def _capabilities(messages: list[dict[str, Any]]) -> dict[str, Any]:
    for msg in messages:
        caps = (msg.get("result") or {}).get("capabilities") if isinstance(msg.get("result"), dict) else None
        if isinstance(caps, dict):
            return caps
    return {}


async def check_envelope_status(rec: Results, probe: Prober, discovered: list[dict[str, Any]]) -> None:
    """``discovered``: the responses to the run's ``server/discover`` (to pick the method)."""
    method = list_method(_capabilities(discovered)) or "server/discover"
    judged: list[str] = []
    for field in REQUIRED_FIELDS:
        body = probe.body(method)
        body["params"]["_meta"].pop(field, None)
        answer = await probe.call(body)
        short = field.rsplit("/", 1)[-1]
        if answer.status != 400:
            what = "a result" if any("result" in m for m in answer.responses) else f"error {answer.error_code()}"
            rec.fail(
                CHECK, f"{method} without {short} in _meta: HTTP {answer.status} ({what}), not 400", [answer.evidence]
            )
            return
        judged.append(short)
    rec.ok(CHECK, f"{method} without " + ", then without ".join(judged) + ": 400 each")
