"""Version and era negotiation, both roles: ``initialize`` and ``server/discover``.

Theory of operation
-------------------
Handshake era (spec: basic/lifecycle): the client offers its newest
handshake revision in ``initialize``; the server answers with that revision
when it has it, else with its own newest; the client accepts any revision it
supports and otherwise fails the handshake.

Stateless era (spec: basic/versioning, server/discover, transports/stdio
"Backward Compatibility"): a dual-era client probes with ``server/discover``.
A DiscoverResult picks the newest shared stateless revision and the session
operates at once; ``UnsupportedProtocolVersion`` (-32022) names what the server
speaks, so the client retries the probe with a shared stateless revision (the
probe rule is ``admission.may_probe_again``; it never falls back to
``initialize`` unless the server names a shared handshake one); any other
error, or no answer at all (``Connection.abandon_probe``), marks a
handshake-era server and the client returns to IDLE to send ``initialize``.
If that ``initialize`` is then refused with -32022 naming a stateless revision we
share, the probe had only missed its deadline (a server still starting): back to
IDLE and ``server/discover`` again, under the same rule.
A server answers ``server/discover`` by itself, and refuses ``initialize`` with
-32022 naming its versions when it speaks no handshake revision.

The ``Negotiator`` is a part the Connection owns.  It reads and writes the
shared ``ConnectionState`` (lifecycle moves, the agreed revision, the peer's
identity), keeps the probe bookkeeping, and is told everything else - our own
identity and capabilities - as arguments.  It queues nothing: what it wants
sent comes back in an ``Outcome`` for the Connection to queue.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..._errors import LocalProtocolError
from .. import extensions
from .. import jsonrpc as rpc
from ..events import Discovered, Event, HandshakeFailed, Initialized, LegacyServer, ProtocolIssue
from ..result_type import ResultType
from ..revisions import Era
from ..shared_methods import frozen
from . import stateless as sl
from .admission import may_probe_again
from .lifecycle import LifecycleEvent, Role
from .state import ConnectionState


@frozen
class Outcome:
    """What a negotiation step decided, for the Connection to carry out."""

    events: list[Event] = attrs.Factory(list)
    #: Messages to transmit as they are (answers, ``notifications/initialized``).
    send: list[rpc.Message] = attrs.Factory(list)
    #: Client: probe again with ``server/discover`` at this revision.
    probe_again: str | None = None


class Negotiator:
    def __init__(self, cstate: ConnectionState) -> None:
        self._cs = cstate
        #: The revision the last ``server/discover`` offered, and how many were sent.
        self.probe_version: str | None = None
        self.probe_attempts = 0

    # ------------------------------------------------------------ client: sending

    def initialize_params(
        self, protocol_version: str | None, capabilities: dict[str, Any], info: dict[str, Any]
    ) -> dict[str, Any]:
        """The params of our ``initialize``; ``LocalProtocolError`` for a server or an
        unsupported revision."""
        if self._cs.role is not Role.CLIENT:
            raise LocalProtocolError("only a client sends initialize")
        handshake = self._cs.versions_of(Era.HANDSHAKE)
        version = protocol_version or (handshake[0] if handshake else None)
        if version not in handshake:
            raise LocalProtocolError(f"revision {version} is not among supported_versions (handshake era)")
        return {"protocolVersion": version, "capabilities": capabilities, "clientInfo": info}

    def probe_version_for(self, protocol_version: str | None) -> str:
        """The revision a ``server/discover`` offers; ``LocalProtocolError`` for a server
        or an unsupported revision."""
        if self._cs.role is not Role.CLIENT:
            raise LocalProtocolError("only a client sends server/discover")
        stateless = self._cs.versions_of(Era.STATELESS)
        version = protocol_version or (stateless[0] if stateless else None)
        if version not in stateless:
            raise LocalProtocolError(f"revision {version} is not among supported_versions (stateless era)")
        return version

    def probe_sent(self, version: str) -> None:
        self._cs.advance(LifecycleEvent.SEND_DISCOVER)
        self.probe_version = version
        self.probe_attempts += 1

    # ------------------------------------------------------------ server

    def receive_initialize(
        self,
        req: rpc.Request,
        capabilities: dict[str, Any],
        info: dict[str, Any],
        instructions: str | None,
    ) -> Outcome:
        """Server: answer ``initialize`` (admission has checked that one may arrive now)."""
        params = req.params or {}
        offered = params.get("protocolVersion")
        if not isinstance(offered, str) or not isinstance(params.get("capabilities"), dict):
            message = "initialize needs protocolVersion and capabilities"
            return Outcome(
                [ProtocolIssue("invalid-initialize", message, req)],
                [rpc.ErrorResponse(req.id, rpc.ErrorObject(rpc.INVALID_PARAMS, message))],
            )
        cs = self._cs
        handshake = cs.versions_of(Era.HANDSHAKE)
        if not handshake:
            # Spec (versioning): name the versions we do speak; a legacy client has nothing else to go on.
            err = sl.unsupported_version_error(offered, cs.supported_versions)
            return Outcome(send=[rpc.ErrorResponse(req.id, err)])
        chosen = offered if offered in handshake else handshake[0]
        cs.advance(LifecycleEvent.RECV_INITIALIZE)
        cs.protocol_version = chosen
        cs.peer_capabilities = params["capabilities"]
        client_info = params.get("clientInfo")
        cs.peer_info = client_info if isinstance(client_info, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": chosen,
            "capabilities": extensions.capabilities_for(capabilities, chosen),
            "serverInfo": info,
        }
        if instructions:
            result["instructions"] = instructions
        return Outcome(send=[rpc.Response(req.id, result)])

    def discover_result(
        self, capabilities: dict[str, Any], info: dict[str, Any], instructions: str | None, ttl_ms: int
    ) -> dict[str, Any]:
        """Server: the DiscoverResult (spec: server/discover)."""
        result: dict[str, Any] = {
            "resultType": ResultType.COMPLETE,
            "supportedVersions": list(self._cs.supported_versions),
            "capabilities": capabilities,
            "ttlMs": ttl_ms,
            "cacheScope": "public",
            "_meta": {sl.SERVER_INFO_KEY: info},
        }
        if instructions:
            result["instructions"] = instructions
        return result

    # ------------------------------------------------------------ client: answers

    def receive_initialize_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> Outcome:
        cs = self._cs
        if isinstance(msg, rpc.ErrorResponse):
            retry = self._stateless_after_all(msg.error)
            if retry is not None:
                cs.advance(LifecycleEvent.RECV_INIT_STATELESS)
                return Outcome(probe_again=retry)
            cs.advance(LifecycleEvent.RECV_INIT_FAILURE)
            return Outcome([HandshakeFailed(f"server refused initialize: {msg.error.message}", msg.error)])
        result = msg.result
        version = result.get("protocolVersion")
        problem = _initialize_result_problem(result)
        if problem is None and version not in cs.supported_versions:
            problem = (
                f"server chose protocol revision {version!r}, which this client does not support "
                f"(supported: {', '.join(cs.supported_versions)})"
            )
        if problem is not None:
            cs.advance(LifecycleEvent.RECV_INIT_FAILURE)
            return Outcome([HandshakeFailed(problem)])
        assert isinstance(version, str)
        cs.advance(LifecycleEvent.RECV_INIT_RESULT)
        cs.protocol_version = version
        cs.peer_capabilities = result["capabilities"]
        cs.peer_info = result["serverInfo"]
        instructions = result.get("instructions")
        cs.peer_instructions = instructions if isinstance(instructions, str) else None
        return Outcome(
            [Initialized(version, cs.peer_info, cs.peer_capabilities, cs.peer_instructions)],
            [rpc.Notification("notifications/initialized")],
        )

    def receive_discover_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> Outcome:
        if isinstance(msg, rpc.ErrorResponse):
            return self._discover_refused(msg.error)
        cs = self._cs
        stateless, handshake = cs.versions_of(Era.STATELESS), cs.versions_of(Era.HANDSHAKE)
        result = msg.result
        supported, caps = result.get("supportedVersions"), result.get("capabilities")
        kind = result.get("resultType", ResultType.COMPLETE)
        if not isinstance(supported, list) or not isinstance(caps, dict) or kind != ResultType.COMPLETE:
            cs.advance(LifecycleEvent.RECV_DISCOVER_FAILURE)
            return Outcome([HandshakeFailed(f"invalid DiscoverResult: {_clip(result)}")])
        chosen = sl.newest_common(stateless, supported)
        if chosen is None:
            fallback = sl.newest_common(handshake, supported)
            if fallback:
                cs.advance(LifecycleEvent.RECV_LEGACY_ANSWER)
                return Outcome([LegacyServer(f"the server's stateless revisions are {supported}", fallback)])
            cs.advance(LifecycleEvent.RECV_DISCOVER_FAILURE)
            return Outcome(
                [
                    HandshakeFailed(
                        f"no common protocol revision: the server supports {supported}, "
                        f"this client {list(cs.supported_versions)}"
                    )
                ]
            )
        cs.advance(LifecycleEvent.RECV_DISCOVER_RESULT)
        cs.protocol_version = chosen
        meta = result.get("_meta")
        info = meta.get(sl.SERVER_INFO_KEY) if isinstance(meta, dict) else None
        instructions = result.get("instructions")
        cs.peer_info = info if isinstance(info, dict) else {}
        cs.peer_capabilities = caps
        cs.peer_instructions = instructions if isinstance(instructions, str) else None
        return Outcome(
            [
                Discovered(
                    chosen,
                    [v for v in supported if isinstance(v, str)],
                    cs.peer_info,
                    caps,
                    cs.peer_instructions,
                    result,
                )
            ]
        )

    def _stateless_after_all(self, err: rpc.ErrorObject) -> str | None:
        """The stateless revision to probe with again when ``initialize`` is refused with
        -32022 naming one we share, after our own probe went unanswered (we probed, so we
        are dual-era: a slow-starting server missed the probe's deadline), else None."""
        if err.code != rpc.UNSUPPORTED_PROTOCOL_VERSION or self.probe_attempts == 0:
            return None
        named = err.data.get("supported") if isinstance(err.data, dict) else None
        retry = sl.newest_common(self._cs.versions_of(Era.STATELESS), named)
        return retry if may_probe_again(self.probe_attempts, self.probe_version, retry) else None

    def _discover_refused(self, err: rpc.ErrorObject) -> Outcome:
        cs = self._cs
        if err.code not in sl.MODERN_ERROR_CODES:
            # Any other error means a handshake-era server (spec: stdio, Backward Compatibility).
            cs.advance(LifecycleEvent.RECV_LEGACY_ANSWER)
            return Outcome([LegacyServer(f"server/discover answered error {err.code}: {err.message}")])
        named = err.data.get("supported") if isinstance(err.data, dict) else None
        retry = sl.newest_common(cs.versions_of(Era.STATELESS), named)
        if err.code == rpc.UNSUPPORTED_PROTOCOL_VERSION and may_probe_again(
            self.probe_attempts, self.probe_version, retry
        ):
            return Outcome(probe_again=retry)
        fallback = sl.newest_common(cs.versions_of(Era.HANDSHAKE), named)
        if fallback:
            # A modern server that also speaks a handshake revision we share.
            cs.advance(LifecycleEvent.RECV_LEGACY_ANSWER)
            return Outcome([LegacyServer(f"no common stateless revision; the server names {fallback}", fallback)])
        cs.advance(LifecycleEvent.RECV_DISCOVER_FAILURE)
        detail = sl.versions_named(err.data, cs.supported_versions)
        return Outcome([HandshakeFailed(f"server/discover refused: [{err.code}] {err.message}{detail}", err)])

    def answer_unusable(self, method: str, reason: str) -> Outcome:
        """Client: the answer to our ``initialize`` / ``server/discover`` could not be
        read at all: negotiation cannot go on, so fail it rather than wait forever."""
        failure = LifecycleEvent.RECV_INIT_FAILURE if method == "initialize" else LifecycleEvent.RECV_DISCOVER_FAILURE
        self._cs.advance(failure)
        err = rpc.ErrorObject(rpc.INVALID_REQUEST, f"malformed response: {reason}")
        return Outcome([HandshakeFailed(f"invalid answer to {method}: {reason}", err)])


def _clip(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _initialize_result_problem(result: dict[str, Any]) -> str | None:
    if not isinstance(result.get("protocolVersion"), str):
        return "initialize result has no protocolVersion string"
    if not isinstance(result.get("capabilities"), dict):
        return "initialize result has no capabilities object"
    info = result.get("serverInfo")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str):
        return "initialize result has no serverInfo with a name"
    return None
