"""The 2026-07-28 error contract: a partial ``_meta`` envelope, and what -32021 must carry.

Theory of operation
-------------------
``basic/index`` (2026-07-28, ``_meta``): the request envelope has two required
fields, ``io.modelcontextprotocol/protocolVersion`` and
``io.modelcontextprotocol/clientCapabilities``; "A request missing any
required field is malformed; the server MUST reject it with JSON-RPC error code
-32602".  ``stateless.missing-envelope`` (``checks/probes.py``) sends a request
with no ``_meta`` at all; ``probe_partial_envelope`` here sends, on one fresh
connection after a proper ``server/discover`` (so that a dual-era server knows
the era), the same harmless request twice, each time with exactly one required
field left out and the other present.  Each must be refused with -32602: a
result, or another code, fails (a dual-era server that refuses with another
code only warns, as for the missing envelope: it may take the request for a
legacy one).

The same section: a request needing a capability the client did not declare
"MUST return a MissingRequiredClientCapabilityError (-32021) whose
data.requiredCapabilities lists the missing capabilities".  Which request needs
what is the server's knowledge, so ``check_capability_errors`` reads every
-32021 in the recorded conversations (the tour and the negative probes' own
connections): each must carry a non-empty ``data.requiredCapabilities``
object.  No -32021 seen: ``skip``, never a pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio.connection import stateless as sl
from .. import evidence
from ..recorder import RecordingStream
from ..results import Connector, Results
from .probes import ProbeFailed, envelope, list_method, probe_connection

PARTIAL = "stateless.partial-envelope"
CAPABILITY_DATA = "stateless.missing-capability-data"
MISSING_CAPABILITY = -32021
#: The required envelope fields (basic/index, 2026-07-28).
REQUIRED_FIELDS = (sl.PROTOCOL_VERSION_KEY, sl.CLIENT_CAPABILITIES_KEY)


async def probe_partial_envelope(
    rec: Results,
    connect: Connector,
    revision: str,
    capabilities: dict[str, Any],
    timeout: float,
    dual_era: bool,
) -> None:
    method = list_method(capabilities) or "server/discover"
    full = envelope(revision)
    problems: list[str] = []
    shown: list[Any] = []
    judged: list[str] = []
    try:
        async with probe_connection(connect, timeout) as probe:
            await probe.ask(rpc.Request(0, "server/discover", {"_meta": full}))
            for n, field in enumerate(REQUIRED_FIELDS, start=1):
                meta = {k: v for k, v in full.items() if k != field}
                request = rpc.Request(n, method, {"_meta": meta})
                answer = await probe.ask(request)
                short = field.rsplit("/", 1)[-1]
                judged.append(short)
                if isinstance(answer, rpc.Response):
                    problems.append(f"without {short}: answered with a result")
                elif answer.error.code != rpc.INVALID_PARAMS:
                    problems.append(f"without {short}: error {answer.error.code}, not -32602")
                else:
                    continue
                shown += [evidence.sent(request), evidence.received(answer)]
    except ProbeFailed as exc:
        rec.failed(PARTIAL, exc, f"no answer: {exc}")
        return
    if not problems:
        rec.ok(PARTIAL, f"{method} without {' / without '.join(judged)}: -32602 each")
    elif dual_era and not any("result" in p for p in problems):
        rec.warn(PARTIAL, f"{method}: " + "; ".join(problems) + " (the spec names -32602)", shown)
    else:
        rec.fail(PARTIAL, f"{method}: " + "; ".join(problems), shown)


def _capability_problem(error: rpc.ErrorResponse) -> str | None:
    data = error.error.data
    required = data.get("requiredCapabilities") if isinstance(data, dict) else None
    if not isinstance(required, dict):
        return "no data.requiredCapabilities object"
    if not required:
        return "data.requiredCapabilities is empty: it lists no missing capability"
    return None


def check_capability_errors(rec: Results, recordings: Iterable[RecordingStream]) -> None:
    """Every -32021 received carries the missing capabilities in ``data.requiredCapabilities``."""
    seen = 0
    bad: list[tuple[str, rpc.ErrorResponse]] = []
    for recording in recordings:
        for _, msg in recording.messages():
            if not isinstance(msg, rpc.ErrorResponse) or msg.error.code != MISSING_CAPABILITY:
                continue
            seen += 1
            method = recording.sent_methods.get(msg.id, "?") if msg.id is not None else "?"
            problem = _capability_problem(msg)
            if problem:
                bad.append((f"{method}: {problem}", msg))
    if bad:
        rec.fail(
            CAPABILITY_DATA,
            f"{len(bad)} of {seen} -32021 errors: " + "; ".join(p for p, _ in bad[:3]),
            [evidence.received(m) for _, m in bad[:3]],
        )
    elif seen:
        rec.ok(CAPABILITY_DATA, f"{seen} -32021 errors, each naming data.requiredCapabilities")
    else:
        rec.skip(CAPABILITY_DATA, "the server sent no -32021 (MissingRequiredClientCapability) error")
