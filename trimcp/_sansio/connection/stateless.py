"""Rules of the 2026-07-28 stateless era that the Connection applies.

Theory of operation
-------------------
From 2026-07-28 there is no handshake (spec: basic/versioning).  Every client
request carries an *envelope* in ``params._meta``: the protocol version, the
client's capabilities (both required), and optionally its identity and the
minimum log level.  Every result carries ``resultType``: ``"complete"``, or
``"input_required"`` when the server needs elicitation, sampling or roots
first (spec: basic/patterns/mrtr); the client then answers those requests
itself and re-sends the original request, with a new id, carrying
``inputResponses`` and the opaque ``requestState`` echoed byte for byte.

These functions are pure: they build and check the dicts; the Connection
decides what to do with the verdicts.  Which requests must carry the envelope,
and what a missing, invalid or unsupported one earns, are admission rules
(``admission.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ..._errors import InputRoundsExceeded, RemoteProtocolError
from .. import jsonrpc as rpc
from .. import task_poll
from ..result_type import ResultType
from ..revisions import has_capability
from ..shared_methods import frozen

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"


#: Requests a server may answer with an InputRequiredResult (spec: mrtr, "Supported Requests").
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: What may stand in ``inputRequests``, and the client capability each needs.
INPUT_REQUEST_GATES: Final[Mapping[str, tuple[str, ...]]] = {
    "elicitation/create": ("elicitation",),
    "sampling/createMessage": ("sampling",),
    "roots/list": ("roots",),
}
#: JSON-RPC error codes that only a modern (stateless-era) server sends.
MODERN_ERROR_CODES: Final = frozenset(
    {
        rpc.HEADER_MISMATCH,
        rpc.MISSING_CLIENT_CAPABILITY,
        rpc.UNSUPPORTED_PROTOCOL_VERSION,
    }
)


@frozen
class Envelope:
    """The per-request protocol fields of a stateless-era request.

    Dict-level on purpose: the Connection reads it on every request, so it checks
    only the envelope's own keys.  ``schema.Envelope`` is the typed view (full
    ``ClientCapabilities``/``Implementation`` parsing) for code that wants it.
    """

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    log_level: str | None = None


def build_envelope(
    protocol_version: str,
    capabilities: dict[str, Any],
    info: dict[str, Any] | None,
    log_level: str | None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {PROTOCOL_VERSION_KEY: protocol_version, CLIENT_CAPABILITIES_KEY: capabilities}
    if info is not None:
        meta[CLIENT_INFO_KEY] = info
    if log_level is not None:
        meta[LOG_LEVEL_KEY] = log_level
    return meta


#: The ``_meta`` keys that make up the envelope: only ``build_envelope`` sets them.
ENVELOPE_KEYS: Final = frozenset({PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY})


def with_envelope(params: dict[str, Any] | None, envelope: dict[str, Any]) -> dict[str, Any]:
    """``params`` with ``envelope`` in its ``_meta``.  Envelope keys already there (a
    caller's, or a previous send's in an MRTR retry) are dropped first, so that an
    optional one the new envelope omits (``logLevel``) does not linger."""
    out = dict(params or {})
    meta = out.get("_meta")
    kept = {k: v for k, v in meta.items() if k not in ENVELOPE_KEYS} if isinstance(meta, dict) else {}
    out["_meta"] = {**kept, **envelope}
    return out


def envelope_version(params: Mapping[str, Any] | None) -> str | None:
    """The protocol version a request's envelope names, if it has one."""
    meta = params.get("_meta") if params is not None else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def has_envelope(params: Mapping[str, Any] | None) -> bool:
    meta = (params or {}).get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def read_envelope(params: Mapping[str, Any], log_levels: tuple[str, ...]) -> Envelope | str:
    """The envelope of a request, or a sentence saying what is wrong with it."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return "params._meta is missing"
    version = meta.get(PROTOCOL_VERSION_KEY)
    if not isinstance(version, str):
        return f"_meta[{PROTOCOL_VERSION_KEY!r}] must be a string"
    caps = meta.get(CLIENT_CAPABILITIES_KEY)
    if not isinstance(caps, dict):
        return f"_meta[{CLIENT_CAPABILITIES_KEY!r}] is required and must be an object"
    info = meta.get(CLIENT_INFO_KEY)
    if info is not None and not isinstance(info, dict):
        return f"_meta[{CLIENT_INFO_KEY!r}] must be an object"
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in log_levels:
        return f"_meta[{LOG_LEVEL_KEY!r}] is not a log level: {level!r}"
    return Envelope(version, caps, info, level)


def unsupported_version_error(requested: str, supported: tuple[str, ...]) -> rpc.ErrorObject:
    return rpc.ErrorObject(
        rpc.UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": requested},
    )


def input_required_problem(result: Mapping[str, Any], client_capabilities: Mapping[str, Any]) -> str | None:
    """What is wrong with an InputRequiredResult, seen from the client; None when valid."""
    requests = result.get("inputRequests")
    state = result.get("requestState")
    if requests is None and state is None:
        return "an InputRequiredResult must carry inputRequests or requestState"
    if state is not None and not isinstance(state, str):
        return "requestState must be a string"
    if requests is None:
        return None
    if not isinstance(requests, dict):
        return "inputRequests must be an object"
    for key, request in requests.items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return f"inputRequests[{key!r}] is not a request object"
        gate = INPUT_REQUEST_GATES.get(request["method"])
        if gate is None:
            return f"inputRequests[{key!r}] asks for {request['method']!r}, which is not allowed there"
        if not has_capability(client_capabilities, gate):
            return f"inputRequests[{key!r}] needs the {'.'.join(gate)} capability the client did not declare"
        params = request.get("params")
        if params is not None and not isinstance(params, dict):
            return f"inputRequests[{key!r}].params must be an object"
    return None


def stateless_result(result: dict[str, Any], server_info: dict[str, Any]) -> dict[str, Any]:
    """Server: a complete result as the stateless era sends it: it says what it is
    (``resultType``) and (SHOULD) who answered, unless the caller already said so."""
    out = {"resultType": ResultType.COMPLETE, **result}
    meta = out.get("_meta")
    if not isinstance(meta, dict) or SERVER_INFO_KEY not in meta:
        out["_meta"] = {**(meta if isinstance(meta, dict) else {}), SERVER_INFO_KEY: server_info}
    return out


def input_required_result(input_requests: dict[str, Any] | None, request_state: str | None) -> dict[str, Any]:
    """Server: an InputRequiredResult (spec: mrtr); ``input_required_problem`` checks it."""
    result: dict[str, Any] = {"resultType": ResultType.INPUT_REQUIRED}
    if input_requests is not None:
        result["inputRequests"] = input_requests
    if request_state is not None:
        result["requestState"] = request_state
    return result


def result_problem(method: str, result: Mapping[str, Any], client_capabilities: Mapping[str, Any]) -> str | None:
    """Client: why a stateless-era result is unusable, or None.  Usable means complete
    (an absent ``resultType`` reads as complete: spec basic, ResultType) or a valid
    InputRequiredResult to a request that may receive one (spec: mrtr)."""
    kind = result.get("resultType")
    if kind is None or kind == ResultType.COMPLETE:
        return None
    if kind == ResultType.INPUT_REQUIRED:
        if method not in MRTR_METHODS:
            return f"{method} may not be answered with an InputRequiredResult"
        return input_required_problem(result, client_capabilities)
    if kind == ResultType.TASK:
        # ext-tasks: a CreateTaskResult, only to a tools/call that declared the extension.
        return task_poll.create_task_problem(method, result, client_capabilities)
    return f"unknown resultType {kind!r}"


def retry_params(
    original: dict[str, Any] | None, responses: dict[str, Any] | None, request_state: str | None
) -> dict[str, Any]:
    """The params of an MRTR retry: the original ones plus the answers and the echoed state."""
    out = {k: v for k, v in (original or {}).items() if k not in ("inputResponses", "requestState")}
    if responses:
        out["inputResponses"] = responses
    if request_state is not None:
        out["requestState"] = request_state
    return out


@attrs.define
class InputRounds:
    """Client: the rounds of one request's multi-round-trip exchange (spec: mrtr).

    Each ``input_required`` result counts a round; past ``limit`` the server is taken to
    ask forever (``InputRoundsExceeded``), and a session that cannot answer input
    requests gives up at the first (``RemoteProtocolError``).  ``retry`` gives the
    params of the next attempt: always the original ones plus this round's answers and
    echoed state, never the previous round's.  The driver waits and keeps time; this
    decides."""

    method: str
    original: dict[str, Any] | None
    limit: int
    rounds: int = 0

    def asked(self, *, answerable: bool) -> None:
        """The server answered with an InputRequiredResult: raise if the exchange must end."""
        self.rounds += 1
        if self.rounds > self.limit:
            raise InputRoundsExceeded(self.method, self.limit)
        if not answerable:
            raise RemoteProtocolError(f"{self.method}: the peer asked for input, which this session cannot give")

    def retry(self, responses: dict[str, Any] | None, request_state: str | None) -> dict[str, Any]:
        return retry_params(self.original, responses, request_state)


def newest_common(ours: tuple[str, ...], theirs: object) -> str | None:
    """The newest revision in both lists (revision names sort by date)."""
    if not isinstance(theirs, list):
        return None
    common = set(ours) & {v for v in theirs if isinstance(v, str)}
    return max(common) if common else None


def versions_named(data: Any, ours: tuple[str, ...]) -> str:
    """`` (the server supports A, B; this client C)`` when an error's data names the
    server's revisions (-32022, or the handshake era's initialize error), else ``""``."""
    named = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(named, list) or not all(isinstance(v, str) for v in named):
        return ""
    return f" (the server supports {', '.join(named) or 'none'}; this client {', '.join(ours)})"
