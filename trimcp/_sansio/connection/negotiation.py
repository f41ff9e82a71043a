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
speaks, so the client retries the probe with a shared stateless revision (never
falling back to ``initialize`` unless the server names a shared handshake one);
any other error, or no answer at all (``abandon_probe``), marks a handshake-era
server and the client returns to IDLE to send ``initialize``.  A server answers
``server/discover`` by itself, and refuses ``initialize`` with -32022 naming its
versions when it speaks no handshake revision.

``Negotiation`` is a mixin of ``Connection``: it only moves the lifecycle state
through the table and records what was agreed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._errors import LocalProtocolError
from .. import jsonrpc as rpc
from . import stateless as sl
from ..events import Discovered, Event, HandshakeFailed, Initialized, LegacyServer
from .lifecycle import IDLE, LifecycleEvent, Role, State, transition
from ..revisions import Era

if TYPE_CHECKING:
    from .core import PendingRequest


#: How many server/discover probes one negotiation may send.
_MAX_PROBES = 3


class Negotiation:
    # Provided by Connection.
    role: Role
    info: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str | None
    supported_versions: tuple[str, ...]
    state: type[State]
    protocol_version: str | None
    peer_info: dict[str, Any] | None
    peer_capabilities: dict[str, Any] | None
    peer_instructions: str | None
    discover_ttl_ms: int
    _probe_version: str | None
    _probe_attempts: int
    _outbox: list[rpc.Message]
    _pending: dict[rpc.RequestId, PendingRequest]
    _cancelled: dict[rpc.RequestId, None]

    if TYPE_CHECKING:
        def _versions_of(self, era: Era) -> tuple[str, ...]: ...
        def _check_send_request(self, method: str) -> None: ...
        def _queue_request(
            self, method: str, params: dict[str, Any] | None, token: str | int | None
        ) -> rpc.RequestId: ...
        def _retire(self, request_id: rpc.RequestId) -> PendingRequest | None: ...
        def _reject(
            self, req: rpc.Request, code: int, message: str, kind: str | None = None
        ) -> list[Event]: ...

    def initialize(self, *, protocol_version: str | None = None) -> rpc.RequestId:
        """Client: queue the ``initialize`` request."""
        if self.role is not Role.CLIENT:
            raise LocalProtocolError("only a client sends initialize")
        handshake = self._versions_of(Era.HANDSHAKE)
        version = protocol_version or (handshake[0] if handshake else None)
        if version not in handshake:
            raise LocalProtocolError(f"revision {version} is not among supported_versions (handshake era)")
        params = {"protocolVersion": version, "capabilities": self.capabilities, "clientInfo": self.info}
        self._check_send_request("initialize")
        self.state = transition(self.role, self.state, LifecycleEvent.SEND_INITIALIZE)
        return self._queue_request("initialize", params, None)

    def discover(self, *, protocol_version: str | None = None) -> rpc.RequestId:
        """Client: queue ``server/discover`` (the 2026-07-28 era probe)."""
        if self.role is not Role.CLIENT:
            raise LocalProtocolError("only a client sends server/discover")
        stateless = self._versions_of(Era.STATELESS)
        version = protocol_version or (stateless[0] if stateless else None)
        if version not in stateless:
            raise LocalProtocolError(f"revision {version} is not among supported_versions (stateless era)")
        self._check_send_request("server/discover")
        self.state = transition(self.role, self.state, LifecycleEvent.SEND_DISCOVER)
        self._probe_version = version
        self._probe_attempts += 1
        envelope = sl.build_envelope(version, self.capabilities, self.info, None)
        return self._queue_request("server/discover", sl.with_envelope(None, envelope), None)

    def abandon_probe(self) -> None:
        """Client: the discover probe got no answer in time: take the server for
        handshake-era (spec: stdio, Backward Compatibility) and drop a late answer."""
        for request_id, pending in list(self._pending.items()):
            if pending.method == "server/discover":
                self._retire(request_id)
                self._cancelled[request_id] = None
        self.state = transition(self.role, self.state, LifecycleEvent.RECV_LEGACY_ANSWER)

    def _receive_initialize(self, req: rpc.Request, params: dict[str, Any]) -> list[Event]:
        if self.role is not Role.SERVER or self.state is not IDLE:
            return self._reject(
                req, rpc.INVALID_REQUEST, f"unexpected initialize (role={self.role.value}, state={self.state!r})",
                "unexpected-initialize",
            )
        offered = params.get("protocolVersion")
        if not isinstance(offered, str) or not isinstance(params.get("capabilities"), dict):
            return self._reject(
                req, rpc.INVALID_PARAMS, "initialize needs protocolVersion and capabilities",
                "invalid-initialize",
            )
        handshake = self._versions_of(Era.HANDSHAKE)
        if not handshake:
            # Spec (versioning): name the versions we do speak; a legacy client has nothing else to go on.
            err = sl.unsupported_version_error(offered, self.supported_versions)
            self._outbox.append(rpc.ErrorResponse(req.id, err))
            return []
        chosen = offered if offered in handshake else handshake[0]
        self.state = transition(self.role, self.state, LifecycleEvent.RECV_INITIALIZE)
        self.protocol_version = chosen
        self.peer_capabilities = params["capabilities"]
        info = params.get("clientInfo")
        self.peer_info = info if isinstance(info, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": chosen, "capabilities": self.capabilities, "serverInfo": self.info,
        }
        if self.instructions:
            result["instructions"] = self.instructions
        self._outbox.append(rpc.Response(req.id, result))
        return []

    def _discover_result(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "resultType": sl.RESULT_COMPLETE,
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.capabilities,
            "ttlMs": self.discover_ttl_ms,
            "cacheScope": "public",
            "_meta": {sl.SERVER_INFO_KEY: self.info},
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _receive_discover_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> list[Event]:
        stateless, handshake = self._versions_of(Era.STATELESS), self._versions_of(Era.HANDSHAKE)
        if isinstance(msg, rpc.ErrorResponse):
            err = msg.error
            if err.code not in sl.MODERN_ERROR_CODES:
                # Any other error means a handshake-era server (spec: stdio, Backward Compatibility).
                self.state = transition(self.role, self.state, LifecycleEvent.RECV_LEGACY_ANSWER)
                return [LegacyServer(f"server/discover answered error {err.code}: {err.message}")]
            named = err.data.get("supported") if isinstance(err.data, dict) else None
            retry = sl.newest_common(stateless, named)
            # Retry with a revision the server names; the same one once more is allowed
            # (the server may have refused for a passing reason), never a loop.
            if (
                err.code == rpc.UNSUPPORTED_PROTOCOL_VERSION and retry
                and (retry != self._probe_version or self._probe_attempts < 2)
                and self._probe_attempts < _MAX_PROBES
            ):
                self.discover(protocol_version=retry)
                return []
            fallback = sl.newest_common(handshake, named)
            if fallback:
                # A modern server that also speaks a handshake revision we share.
                self.state = transition(self.role, self.state, LifecycleEvent.RECV_LEGACY_ANSWER)
                return [LegacyServer(f"no common stateless revision; the server names {fallback}", fallback)]
            self.state = transition(self.role, self.state, LifecycleEvent.RECV_DISCOVER_FAILURE)
            detail = sl.versions_named(err.data, self.supported_versions)
            return [HandshakeFailed(f"server/discover refused: [{err.code}] {err.message}{detail}", err)]
        result = msg.result
        supported, caps = result.get("supportedVersions"), result.get("capabilities")
        kind = result.get("resultType", sl.RESULT_COMPLETE)
        if not isinstance(supported, list) or not isinstance(caps, dict) or kind != sl.RESULT_COMPLETE:
            self.state = transition(self.role, self.state, LifecycleEvent.RECV_DISCOVER_FAILURE)
            return [HandshakeFailed(f"invalid DiscoverResult: {_clip(result)}")]
        chosen = sl.newest_common(stateless, supported)
        if chosen is None:
            fallback = sl.newest_common(handshake, supported)
            if fallback:
                self.state = transition(self.role, self.state, LifecycleEvent.RECV_LEGACY_ANSWER)
                return [LegacyServer(f"the server's stateless revisions are {supported}", fallback)]
            self.state = transition(self.role, self.state, LifecycleEvent.RECV_DISCOVER_FAILURE)
            return [HandshakeFailed(
                f"no common protocol revision: the server supports {supported}, "
                f"this client {list(self.supported_versions)}"
            )]
        self.state = transition(self.role, self.state, LifecycleEvent.RECV_DISCOVER_RESULT)
        self.protocol_version = chosen
        meta = result.get("_meta")
        info = meta.get(sl.SERVER_INFO_KEY) if isinstance(meta, dict) else None
        instructions = result.get("instructions")
        self.peer_info = info if isinstance(info, dict) else {}
        self.peer_capabilities = caps
        self.peer_instructions = instructions if isinstance(instructions, str) else None
        return [Discovered(
            chosen, [v for v in supported if isinstance(v, str)], self.peer_info, caps,
            self.peer_instructions, result,
        )]

    def _receive_initialize_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> list[Event]:
        if isinstance(msg, rpc.ErrorResponse):
            self.state = transition(self.role, self.state, LifecycleEvent.RECV_INIT_FAILURE)
            return [HandshakeFailed(f"server refused initialize: {msg.error.message}", msg.error)]
        result = msg.result
        version = result.get("protocolVersion")
        problem = _initialize_result_problem(result)
        if problem is None and version not in self.supported_versions:
            problem = (
                f"server chose protocol revision {version!r}, which this client does not support "
                f"(supported: {', '.join(self.supported_versions)})"
            )
        if problem is not None:
            self.state = transition(self.role, self.state, LifecycleEvent.RECV_INIT_FAILURE)
            return [HandshakeFailed(problem)]
        assert isinstance(version, str)
        self.state = transition(self.role, self.state, LifecycleEvent.RECV_INIT_RESULT)
        self.protocol_version = version
        self.peer_capabilities = result["capabilities"]
        self.peer_info = result["serverInfo"]
        instructions = result.get("instructions")
        self.peer_instructions = instructions if isinstance(instructions, str) else None
        self._outbox.append(rpc.Notification("notifications/initialized"))
        return [Initialized(version, self.peer_info, self.peer_capabilities, self.peer_instructions)]


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
