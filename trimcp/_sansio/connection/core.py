"""The MCP state machine: one ``Connection`` per session, client or server role.

Theory of operation
-------------------
A ``Connection`` holds everything one side knows about an MCP session and does
no I/O.  Its driver feeds it what arrived (``receive_bytes`` for one JSON text,
or ``receive_message``) and gets back a list of events (``trimcp._sansio.events``).
Everything the Connection wants transmitted - the caller's requests, its own
automatic answers (ping, errors for forbidden requests), ``notifications/initialized``
- goes to an outbox that the driver drains with ``outgoing()`` after every call.

One Connection speaks both eras.  How the revision is agreed (``initialize``
in the handshake era, ``server/discover`` in the 2026-07-28 stateless era) is
in ``negotiation.py``; the lifecycle is the data table in ``lifecycle.py``;
which methods exist and which capability gates each is the data in
``revisions.py``.  In the stateless era a client puts the ``_meta`` envelope
(version, capabilities, identity) on every request and reads ``resultType``
on every result: an ``input_required`` result becomes an ``InputRequired``
event, and the driver answers those requests and re-sends (spec: mrtr).  A
server takes each enveloped request on its own terms, whatever the lifecycle
state, and answers with ``resultType`` and its ``serverInfo``.

Bookkeeping: outgoing request ids are allocated here; a pending table maps each
id to its method and progress token; a cancelled request's id is remembered
(boundedly) so that its late answer is dropped and counted, not reported as
unknown.  Incoming requests are tracked until answered so a cancellation can
suppress the answer, as the spec asks.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final, Sequence

import attrs

from ..._errors import LocalProtocolError
from .. import jsonrpc as rpc
from . import stateless as sl
from ..events import (
    CancelRequested, ErrorReceived, Event, HandshakeFailed, Initialized, InputRequired,
    InvalidAnswer, LogLevelChanged, NotificationReceived, ProgressReceived, ProtocolIssue,
    RequestReceived, ResponseReceived,
)
from .lifecycle import (
    CLOSED, DISCOVERING, IDLE, INITIALIZING, NOTIFY_EARLY, OPERATING, RECEIVE_ALLOWED,
    SEND_ALLOWED, LifecycleEvent, Role, State, transition,
)
from .negotiation import Negotiation
from ..revisions import (
    HANDSHAKE_VERSIONS, REVISIONS, Era, Revision, Side, get_revision, has_capability, own_gate,
    peer_gate,
)

#: RFC 5424 severities, least severe first (spec: Utilities / Logging).
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_ALL_REQUESTS: Final = frozenset().union(
    *(r.client_requests | r.server_requests for r in REVISIONS.values())
)
_ALL_NOTIFICATIONS: Final = frozenset().union(
    *(r.client_notifications | r.server_notifications for r in REVISIONS.values())
)
#: How many cancelled request ids are remembered to recognise late answers.
_CANCELLED_MEMORY: Final = 4096


@attrs.define
class ConnectionStats:
    late_responses_dropped: int = 0
    unknown_responses: int = 0
    invalid_messages: int = 0
    answers_suppressed: int = 0


@attrs.define
class PendingRequest:
    method: str
    progress_token: str | int | None = None
    last_progress: float | None = None
    #: Kept for a stateless-era retry (multi-round-trip input).
    params: dict[str, Any] | None = None


@attrs.define
class _Incoming:
    method: str
    progress_token: str | int | None
    cancelled: bool = False
    last_progress: float | None = None
    #: Stateless era: the request's own envelope.
    envelope: sl.Envelope | None = None


class Connection(Negotiation):
    def __init__(
        self,
        role: Role,
        *,
        info: dict[str, Any],
        capabilities: dict[str, Any] | None = None,
        supported_versions: Sequence[str] = HANDSHAKE_VERSIONS,
        instructions: str | None = None,
        max_message_size: int = rpc.DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        for v in supported_versions:
            get_revision(v)  # raises on an unknown name
        if not supported_versions:
            raise ValueError("supported_versions must not be empty")
        self.role = role
        self.info = info
        self.capabilities: dict[str, Any] = dict(capabilities or {})
        self.instructions = instructions
        # Newest first, whatever order the caller gave.
        self.supported_versions: tuple[str, ...] = tuple(
            sorted(set(supported_versions), key=lambda v: v, reverse=True)
        )
        self.max_message_size = max_message_size
        self.state: type[State] = IDLE
        self.protocol_version: str | None = None
        self.peer_info: dict[str, Any] | None = None
        self.peer_capabilities: dict[str, Any] | None = None
        self.peer_instructions: str | None = None
        #: Server role: the minimum level the client asked for, if any.
        self.log_level: str | None = None
        #: Client role, stateless era: the log level sent in every request's envelope.
        self.request_log_level: str | None = None
        #: Server role: the cache hint given with the DiscoverResult.
        self.discover_ttl_ms = 300_000
        self._probe_version: str | None = None
        self._probe_attempts = 0
        self._serves_stateless = False
        self.stats = ConnectionStats()
        self._side = Side.CLIENT if role is Role.CLIENT else Side.SERVER
        self._next_id = 0
        self._pending: dict[rpc.RequestId, PendingRequest] = {}
        self._token_owner: dict[str | int, rpc.RequestId] = {}
        self._cancelled: OrderedDict[rpc.RequestId, None] = OrderedDict()
        self._incoming: dict[rpc.RequestId, _Incoming] = {}
        self._outbox: list[rpc.Message] = []

    # ------------------------------------------------------------------ state

    @property
    def revision(self) -> Revision:
        """The negotiated revision, or (before negotiation) the newest we support."""
        return get_revision(self.protocol_version or self.supported_versions[0])

    @property
    def era(self) -> Era:
        return self.revision.era

    def _versions_of(self, era: Era) -> tuple[str, ...]:
        return tuple(v for v in self.supported_versions if get_revision(v).era is era)

    @property
    def pending(self) -> dict[rpc.RequestId, PendingRequest]:
        """Our requests still waiting for an answer (read-only view by convention)."""
        return self._pending

    def awaiting_answer(self, request_id: rpc.RequestId) -> bool:
        """Whether the peer's request ``request_id`` still needs our answer."""
        return request_id in self._incoming

    @property
    def has_output(self) -> bool:
        """Whether ``outgoing()`` would return anything."""
        return bool(self._outbox)

    def outgoing(self) -> list[rpc.Message]:
        """Drain the messages waiting to be transmitted, in order."""
        out, self._outbox = self._outbox, []
        return out

    def close(self) -> list[rpc.RequestId]:
        """Enter CLOSED; return the ids of our requests that will never be answered."""
        self.state = transition(self.role, self.state, LifecycleEvent.CLOSE)
        failed = list(self._pending)
        self._pending.clear()
        self._token_owner.clear()
        self._incoming.clear()
        return failed

    # ------------------------------------------------------------------ sending

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress_token: str | int | None = None,
    ) -> rpc.RequestId:
        """Queue a request and return its id.  Raises ``LocalProtocolError`` when the
        state, the revision or the peer's capabilities forbid it."""
        if method == "initialize":
            raise LocalProtocolError("use Connection.initialize() to start the handshake")
        self._check_send_request(method)
        if progress_token is not None:
            if progress_token in self._token_owner:
                raise LocalProtocolError(f"progress token {progress_token!r} is already in use")
            params = dict(params or {})
            meta = params.get("_meta")
            # As with_envelope does: a _meta that is not an object (None, ...) is replaced.
            params["_meta"] = {**(meta if isinstance(meta, dict) else {}), "progressToken": progress_token}
        if self.role is Role.CLIENT and self.protocol_version and self.era is Era.STATELESS:
            envelope = sl.build_envelope(
                self.protocol_version, self.capabilities, self.info, self.request_log_level
            )
            params = sl.with_envelope(params, envelope)
        return self._queue_request(method, params, progress_token)

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        if method in ("notifications/cancelled", "notifications/progress"):
            raise LocalProtocolError(f"use cancel() / send_progress() for {method}")
        self._check_send_notification(method)
        self._outbox.append(rpc.Notification(method, params))

    def send_response(self, request_id: rpc.RequestId, result: dict[str, Any]) -> None:
        incoming = self._finish_incoming(request_id)
        if incoming is None:
            return
        if incoming.envelope is not None:
            # Stateless era: every result says what it is, and (SHOULD) who answered.
            result = {"resultType": sl.RESULT_COMPLETE, **result}
            meta = result.get("_meta")
            if not isinstance(meta, dict) or sl.SERVER_INFO_KEY not in meta:
                result["_meta"] = {**(meta if isinstance(meta, dict) else {}), sl.SERVER_INFO_KEY: self.info}
        self._outbox.append(rpc.Response(request_id, result))

    def send_error(
        self, request_id: rpc.RequestId, code: int, message: str, data: Any = None
    ) -> None:
        if self._finish_incoming(request_id) is not None:
            self._outbox.append(rpc.ErrorResponse(request_id, rpc.ErrorObject(code, message, data)))

    def send_input_required(
        self,
        request_id: rpc.RequestId,
        input_requests: dict[str, Any] | None = None,
        request_state: str | None = None,
    ) -> None:
        """Server, stateless era: answer that the client must first fulfil
        ``input_requests`` (elicitation, sampling, roots) and retry, echoing
        ``request_state``."""
        incoming = self._incoming.get(request_id)
        if incoming is None or incoming.envelope is None:
            raise LocalProtocolError("an InputRequiredResult only answers a pending stateless-era request")
        if incoming.method not in sl.MRTR_METHODS:
            raise LocalProtocolError(f"{incoming.method} can't be answered with an InputRequiredResult")
        result: dict[str, Any] = {"resultType": sl.RESULT_INPUT_REQUIRED}
        if input_requests is not None:
            result["inputRequests"] = input_requests
        if request_state is not None:
            result["requestState"] = request_state
        problem = sl.input_required_problem(result, incoming.envelope.client_capabilities)
        if problem is not None:
            raise LocalProtocolError(problem)
        self.send_response(request_id, result)

    def cancel(self, request_id: rpc.RequestId, reason: str | None = None) -> None:
        """Give up on one of our requests: tell the peer, forget the waiter, and drop
        whatever answer arrives later."""
        pending = self._pending.get(request_id)
        if pending is None:
            raise LocalProtocolError(f"no pending request with id {request_id!r}")
        if pending.method == "initialize":
            raise LocalProtocolError("initialize can never be cancelled (spec: Cancellation)")
        self._retire(request_id)
        self._cancelled[request_id] = None
        while len(self._cancelled) > _CANCELLED_MEMORY:
            self._cancelled.popitem(last=False)
        if self.state is not CLOSED:
            params: dict[str, Any] = {"requestId": request_id}
            if reason:
                params["reason"] = reason
            self._outbox.append(rpc.Notification("notifications/cancelled", params))

    def forget(self, request_id: rpc.RequestId) -> None:
        """Drop a pending request without telling the peer (e.g. its transport died)."""
        self._retire(request_id)

    def send_progress(
        self,
        token: str | int,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        """Report progress on a request the peer sent us with a progress token."""
        incoming = next((i for i in self._incoming.values() if i.progress_token == token), None)
        if incoming is None:
            raise LocalProtocolError(f"progress token {token!r} belongs to no active request")
        if incoming.last_progress is not None and progress <= incoming.last_progress:
            raise LocalProtocolError("progress must increase with each notification")
        incoming.last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._check_send_notification("notifications/progress")
        self._outbox.append(rpc.Notification("notifications/progress", params))

    def should_log(self, level: str, request_id: rpc.RequestId | None = None) -> bool:
        """Server: whether a log message at ``level`` passes the client's threshold
        (in the stateless era, the one in request ``request_id``'s envelope)."""
        if level not in LOG_LEVELS:
            raise LocalProtocolError(f"unknown log level {level!r}")
        threshold = self.log_level
        incoming = self._incoming.get(request_id) if request_id is not None else None
        if incoming is not None and incoming.envelope is not None:
            # 2026-07-28 (logging): no logLevel in the request, no log messages for it.
            if incoming.envelope.log_level is None:
                return False
            threshold = incoming.envelope.log_level
        return threshold is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)

    def _queue_request(
        self, method: str, params: dict[str, Any] | None, token: str | int | None
    ) -> rpc.RequestId:
        request_id = self._next_id
        self._next_id += 1
        self._pending[request_id] = PendingRequest(method, token, params=params)
        if token is not None:
            self._token_owner[token] = request_id
        self._outbox.append(rpc.Request(request_id, method, params))
        return request_id

    def _retire(self, request_id: rpc.RequestId) -> PendingRequest | None:
        pending = self._pending.pop(request_id, None)
        if pending is not None and pending.progress_token is not None:
            self._token_owner.pop(pending.progress_token, None)
        return pending

    def _check_send_request(self, method: str) -> None:
        if method not in SEND_ALLOWED[self.role][self.state]:
            raise LocalProtocolError(
                f"can't send {method!r} when role={self.role.value} and state={self.state!r}"
            )
        revision = self.revision
        # Before negotiation any supported revision may be the one (initialize vs discover).
        candidates = [revision] if self.protocol_version else [get_revision(v) for v in self.supported_versions]
        if method in _ALL_REQUESTS and not any(method in r.requests_from(self._side) for r in candidates):
            raise LocalProtocolError(
                f"a {self.role.value} can't send {method!r} in revision {revision.name}"
            )
        gate = peer_gate(method, revision)
        if gate is not None and self.state is OPERATING and not has_capability(self.peer_capabilities, gate):
            raise LocalProtocolError(
                f"the peer did not advertise the {'.'.join(gate)} capability needed for {method!r}"
            )

    def _check_send_notification(self, method: str) -> None:
        if self.state is CLOSED:
            raise LocalProtocolError(f"can't send {method!r}: the connection is closed")
        operating = self.state is OPERATING or self._serves_stateless
        if not operating and method not in NOTIFY_EARLY[self.role]:
            raise LocalProtocolError(
                f"can't send {method!r} when role={self.role.value} and state={self.state!r}"
            )
        if method in _ALL_NOTIFICATIONS:
            # The revision(s) in play: the negotiated one (or, before that, any we speak),
            # plus the stateless ones when this server also answers enveloped requests.
            names = [self.protocol_version] if self.protocol_version else list(self.supported_versions)
            if self._serves_stateless:
                names += self._versions_of(Era.STATELESS)
            if not any(method in get_revision(v).notifications_from(self._side) for v in names):
                raise LocalProtocolError(
                    f"a {self.role.value} can't send {method!r} in revision {self.revision.name}"
                )
        gate = own_gate(method)
        if gate is not None and not has_capability(self.capabilities, gate):
            raise LocalProtocolError(
                f"sending {method!r} requires advertising the {'.'.join(gate)} capability"
            )

    def _finish_incoming(self, request_id: rpc.RequestId) -> _Incoming | None:
        """Retire an incoming request being answered; None if the answer must be dropped."""
        if self.state is CLOSED:
            raise LocalProtocolError("can't answer: the connection is closed")
        incoming = self._incoming.pop(request_id, None)
        if incoming is None:
            raise LocalProtocolError(f"no request {request_id!r} from the peer awaits an answer")
        if incoming.cancelled:
            # Spec: the receiver of a cancellation SHOULD NOT answer the request.
            self.stats.answers_suppressed += 1
            return None
        return incoming

    # ------------------------------------------------------------------ receiving

    def receive_bytes(self, data: bytes | str) -> list[Event]:
        """Feed one complete JSON text.  Raises ``RemoteProtocolError`` only for an
        oversize payload (treat the stream as broken)."""
        parsed = rpc.parse_payload(data, max_size=self.max_message_size)
        events: list[Event] = []
        for bad in parsed.invalid:
            events.extend(self._receive_invalid(bad))
        for msg in parsed.messages:
            events.extend(self.receive_message(msg))
        return events

    def receive_message(self, msg: rpc.Message) -> list[Event]:
        if self.state is CLOSED:
            return [ProtocolIssue("after-close", f"message received after close: {msg!r}")]
        if isinstance(msg, rpc.Request):
            return self._receive_request(msg)
        if isinstance(msg, rpc.Notification):
            return self._receive_notification(msg)
        return self._receive_answer(msg)

    def _receive_invalid(self, bad: rpc.InvalidMessage) -> list[Event]:
        self.stats.invalid_messages += 1
        kind = "parse-error" if bad.error.code == rpc.PARSE_ERROR else "invalid-message"
        events: list[Event] = [ProtocolIssue(kind, bad.error.message, bad.raw)]
        raw = bad.raw if isinstance(bad.raw, dict) else {}
        if bad.id is not None and ("result" in raw or "error" in raw) and bad.id in self._pending:
            # A malformed answer to one of our requests: fail that waiter rather than hang it.
            pending = self._retire(bad.id)
            assert pending is not None
            err = rpc.ErrorObject(rpc.INVALID_REQUEST, f"malformed response: {bad.error.message}")
            if pending.method == "initialize" or (pending.method == "server/discover" and self.state is DISCOVERING):
                # Negotiation cannot go on: fail it rather than stay INITIALIZING/DISCOVERING forever.
                failure = (
                    LifecycleEvent.RECV_INIT_FAILURE if pending.method == "initialize"
                    else LifecycleEvent.RECV_DISCOVER_FAILURE
                )
                self.state = transition(self.role, self.state, failure)
                events.append(HandshakeFailed(f"invalid answer to {pending.method}: {bad.error.message}", err))
            else:
                events.append(ErrorReceived(bad.id, pending.method, err))
        elif self.state is CLOSED:
            pass  # nothing is sent on a closed connection
        elif bad.id is not None and "method" in raw:
            self._outbox.append(rpc.ErrorResponse(bad.id, bad.error))
        elif self.role is Role.SERVER:
            # JSON-RPC: a server answers what it could not identify with a null id.
            self._outbox.append(rpc.ErrorResponse(None, bad.error))
        return events

    def _reject(self, req: rpc.Request, code: int, message: str, kind: str | None = None) -> list[Event]:
        self._outbox.append(rpc.ErrorResponse(req.id, rpc.ErrorObject(code, message)))
        return [ProtocolIssue(kind, message, req)] if kind else []

    def _receive_request(self, req: rpc.Request) -> list[Event]:
        method, params = req.method, req.params or {}
        if req.id in self._incoming:
            self.stats.invalid_messages += 1
            return [ProtocolIssue("duplicate-request-id", f"request id {req.id!r} is already in use", req)]
        if self.role is Role.SERVER and sl.has_envelope(params):
            return self._receive_stateless_request(req, params)
        if method == "ping":
            self._outbox.append(rpc.Response(req.id, {}))
            return []
        if (
            self.role is Role.SERVER and self.state is IDLE and method != "initialize"
            and self._versions_of(Era.STATELESS)
        ):
            # To a server that speaks 2026-07-28 this is a modern request without its envelope.
            return self._reject(
                req, rpc.INVALID_PARAMS,
                f"missing _meta[{sl.PROTOCOL_VERSION_KEY!r}]: stateless-era requests carry their "
                "protocol version, client capabilities and identity", "missing-envelope",
            )
        if method not in RECEIVE_ALLOWED[self.role][self.state]:
            return self._reject(
                req, rpc.INVALID_REQUEST,
                f"{method!r} not allowed when the session is {self.state!r}", "request-before-initialize",
            )
        if method == "initialize":
            return self._receive_initialize(req, params)
        revision = self.revision
        peer = Side.SERVER if self._side is Side.CLIENT else Side.CLIENT
        if method in _ALL_REQUESTS and method not in revision.requests_from(peer):
            return self._reject(
                req, rpc.METHOD_NOT_FOUND, f"method not found: {method}", "method-not-in-revision",
            )
        gate = peer_gate(method, revision)
        if gate is not None and not has_capability(self.capabilities, gate):
            # The peer called a feature we never advertised.
            return self._reject(
                req, rpc.METHOD_NOT_FOUND,
                f"method not found: {method} (capability {'.'.join(gate)} not advertised)",
                "capability-not-advertised",
            )
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if method == "logging/setLevel":
            return self._receive_set_level(req, params)
        self._incoming[req.id] = _Incoming(method, token if rpc.is_valid_id(token) else None)
        return [RequestReceived(req.id, method, params)]

    def _receive_stateless_request(self, req: rpc.Request, params: dict[str, Any]) -> list[Event]:
        envelope = sl.read_envelope(params, LOG_LEVELS)
        if isinstance(envelope, str):
            return self._reject(req, rpc.INVALID_PARAMS, envelope, "invalid-envelope")
        if envelope.protocol_version not in self._versions_of(Era.STATELESS):
            err = sl.unsupported_version_error(envelope.protocol_version, self.supported_versions)
            self._outbox.append(rpc.ErrorResponse(req.id, err))
            return []
        self._serves_stateless = True
        method = req.method
        revision = get_revision(envelope.protocol_version)
        if method not in revision.client_requests:
            return self._reject(req, rpc.METHOD_NOT_FOUND, f"method not found: {method}", "method-not-in-revision")
        if method == "server/discover":
            self._outbox.append(rpc.Response(req.id, self._discover_result()))
            return []
        gate = peer_gate(method, revision)
        if gate is not None and not has_capability(self.capabilities, gate):
            return self._reject(
                req, rpc.METHOD_NOT_FOUND,
                f"method not found: {method} (capability {'.'.join(gate)} not advertised)",
                "capability-not-advertised",
            )
        token = params["_meta"].get("progressToken")
        self._incoming[req.id] = _Incoming(
            method, token if rpc.is_valid_id(token) else None, envelope=envelope
        )
        return [RequestReceived(req.id, method, params, envelope)]

    def _receive_set_level(self, req: rpc.Request, params: dict[str, Any]) -> list[Event]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            return self._reject(req, rpc.INVALID_PARAMS, f"unknown log level {level!r}", "invalid-params")
        assert isinstance(level, str)
        self.log_level = level
        self._outbox.append(rpc.Response(req.id, {}))
        return [LogLevelChanged(level)]

    def _receive_notification(self, note: rpc.Notification) -> list[Event]:
        method, params = note.method, note.params or {}
        if method == "notifications/cancelled":
            return self._receive_cancelled(params)
        if method == "notifications/progress":
            return self._receive_progress(params, note)
        if method == "notifications/initialized" and self.role is Role.SERVER:
            if self.state is not INITIALIZING:
                return [ProtocolIssue("unexpected-initialized", f"initialized notification in state {self.state!r}")]
            self.state = transition(self.role, self.state, LifecycleEvent.RECV_INITIALIZED)
            assert self.protocol_version is not None and self.peer_capabilities is not None
            return [Initialized(self.protocol_version, self.peer_info or {}, self.peer_capabilities)]
        return [NotificationReceived(method, params)]

    def _receive_cancelled(self, params: dict[str, Any]) -> list[Event]:
        request_id = params.get("requestId")
        reason = params.get("reason")
        incoming = self._incoming.get(request_id) if rpc.is_valid_id(request_id) else None  # type: ignore[arg-type]
        # Unknown ids are normal (the answer crossed the cancellation); initialize can't be cancelled.
        if incoming is None or incoming.method == "initialize" or incoming.cancelled:
            return []
        incoming.cancelled = True
        assert request_id is not None
        return [CancelRequested(request_id, reason if isinstance(reason, str) else None)]

    def _receive_progress(self, params: dict[str, Any], note: rpc.Notification) -> list[Event]:
        token = params.get("progressToken")
        progress = params.get("progress")
        owner = self._token_owner.get(token) if rpc.is_valid_id(token) else None  # type: ignore[arg-type]
        if owner is None:
            return [ProtocolIssue("unknown-progress-token", f"progress for unknown token {token!r}", note)]
        if not isinstance(progress, (int, float)) or isinstance(progress, bool):
            return [ProtocolIssue("invalid-message", "progress must be a number", note)]
        pending = self._pending[owner]
        events: list[Event] = []
        if pending.last_progress is not None and progress <= pending.last_progress:
            events.append(ProtocolIssue(
                "progress-not-increasing", f"progress went from {pending.last_progress} to {progress}", note,
            ))
        pending.last_progress = progress
        total = params.get("total")
        message = params.get("message")
        assert token is not None
        events.append(ProgressReceived(
            token, progress,
            total if isinstance(total, (int, float)) else None,
            message if isinstance(message, str) else None,
            owner,
        ))
        return events

    def _receive_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> list[Event]:
        if msg.id is None:
            assert isinstance(msg, rpc.ErrorResponse)
            return [ProtocolIssue("error-without-id", f"peer reported: {msg.error.message}", msg)]
        pending = self._retire(msg.id)
        if pending is None:
            if msg.id in self._cancelled:
                del self._cancelled[msg.id]
                self.stats.late_responses_dropped += 1
                return []
            self.stats.unknown_responses += 1
            return [ProtocolIssue("unknown-response-id", f"answer to unknown request id {msg.id!r}", msg)]
        if pending.method == "initialize":
            return self._receive_initialize_answer(msg)
        if pending.method == "server/discover" and self.state is DISCOVERING:
            return self._receive_discover_answer(msg)
        if isinstance(msg, rpc.ErrorResponse):
            return [ErrorReceived(msg.id, pending.method, msg.error)]
        if self.role is Role.CLIENT and self.era is Era.STATELESS:
            return self._classify_result(msg, pending)
        return [ResponseReceived(msg.id, pending.method, msg.result)]

    def _classify_result(self, msg: rpc.Response, pending: PendingRequest) -> list[Event]:
        """Stateless era: dispatch on ``resultType`` (spec: basic, ResultType)."""
        result, method = msg.result, pending.method
        kind = result.get("resultType")
        if kind is None:
            # Clients MUST read an absent resultType as "complete"; a 2026 server MUST send it.
            return [
                ProtocolIssue("result-type-missing", f"{method} result has no resultType", msg),
                ResponseReceived(msg.id, method, result),
            ]
        if kind == sl.RESULT_COMPLETE:
            return [ResponseReceived(msg.id, method, result)]
        if kind == sl.RESULT_INPUT_REQUIRED:
            problem = sl.input_required_problem(result, self.capabilities)
            if method not in sl.MRTR_METHODS:
                problem = f"{method} may not be answered with an InputRequiredResult"
            if problem is None:
                state = result.get("requestState")
                return [InputRequired(
                    msg.id, method, pending.params or {}, result.get("inputRequests") or {},
                    state if isinstance(state, str) else None,
                )]
        else:
            problem = f"unknown resultType {kind!r}"
        return [ProtocolIssue("invalid-result", problem, msg), InvalidAnswer(msg.id, method, problem)]
