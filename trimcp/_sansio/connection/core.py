"""The MCP state machine: one ``Connection`` per session, client or server role.

Theory of operation
-------------------
A ``Connection`` holds everything one side knows about an MCP session and does
no I/O.  Its driver feeds it what arrived - ``receive_bytes`` for one JSON
text, ``receive_payload`` for a text the transport already parsed with
``jsonrpc.parse_payload`` (a text is parsed once), or ``receive_message`` -
and gets back a list of events (``trimcp._sansio.events``).  Everything the
Connection wants transmitted - the caller's requests, its own automatic
answers (ping, errors for refused requests), ``notifications/initialized`` -
goes to an outbox that the driver drains with ``outgoing_with_meta()`` after
every call.  Each message is queued with its ``SendMeta`` (send_meta.py): the
Connection knows why it queued it (the revision, the request it answers or
cancels, a re-issue, ``initialize``), so no transport has to read a payload.

The Connection is composed of parts it owns (as h11's Connection holds a
``ConnectionState``), and does little more than route between them:

- ``ConnectionState`` (state.py): role, lifecycle state (lifecycle.py), the
  agreed revision and what we know of the peer - what the parts are given;
- the ``Negotiator`` (negotiation.py): ``initialize`` in the handshake era,
  ``server/discover`` and its probe bookkeeping in the 2026-07-28 stateless era;
- ``PendingTable`` / ``IncomingTable`` (requests.py): request ids, progress
  both ways, cancellation, re-issue (``reissue``), and the bounded memory of
  ids whose late answer is dropped;
- the admission rules (admission.py): what each side may send and accept in
  each state, in both eras; the Connection asks and acts on the verdict.

Which methods exist and which capability gates each is the data in
``revisions.py``.  In the stateless era a client puts the ``_meta`` envelope
(version, capabilities, identity) on every request and reads ``resultType``
on every result: an ``input_required`` result becomes an ``InputRequired``
event, and the driver answers those requests and re-sends (spec: mrtr).  A
server takes each enveloped request on its own terms, whatever the lifecycle
state, and answers with ``resultType`` and its ``serverInfo``.

An answer that arrives but cannot be used fails its waiter at once: one that
is malformed - even one only a lenient JSON reader could read, whose id
``parse_payload`` recovered - and one that breaks the stateless result rules
both become ``InvalidAnswer``; one to ``initialize`` or to the discover probe
fails the negotiation (``HandshakeFailed``).  A malformed request whose id
shows still gets its JSON-RPC error answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

from ..._errors import LocalProtocolError
from .. import events as ev
from .. import jsonrpc as rpc
from ..result_type import ResultType
from ..revisions import HANDSHAKE_VERSIONS, Era, Revision, get_revision
from . import admission
from . import stateless as sl
from .admission import Refused
from .lifecycle import CLOSED, DISCOVERING, INITIALIZING, LifecycleEvent, Role, State
from .negotiation import Negotiator, Outcome
from .requests import (
    IncomingRequest,
    IncomingTable,
    PendingRequest,
    PendingTable,
    with_progress_token,
)
from .send_meta import SendMeta
from .state import ConnectionState

#: RFC 5424 severities, least severe first (spec: Utilities / Logging).
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@attrs.define
class ConnectionStats:
    late_responses_dropped: int = 0
    unknown_responses: int = 0
    invalid_messages: int = 0
    answers_suppressed: int = 0


class Connection:
    """The sans-IO MCP connection of one role: bytes-free, clock-free, the protocol rules of every revision.

    Feed it what the peer sent (``receive_payload``), ask it to send (``send_request``,
    ``send_notification``, ``respond``); it answers with events and the messages to write.
    """

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
        # Newest first, whatever order the caller gave.
        versions = tuple(sorted(set(supported_versions), reverse=True))
        self._cs = ConnectionState(role, versions)
        self._negotiator = Negotiator(self._cs)
        self._requests = PendingTable()
        self._incoming = IncomingTable()
        #: What to transmit, each message with the ``SendMeta`` the transport acts on.
        self._outbox: list[tuple[rpc.Message, SendMeta]] = []
        self.info = info
        self.capabilities: dict[str, Any] = dict(capabilities or {})
        self.instructions = instructions
        self.max_message_size = max_message_size
        #: Server role: the minimum level the client asked for, if any.
        self.log_level: str | None = None
        #: Client role, stateless era: the log level sent in every request's envelope.
        self.request_log_level: str | None = None
        #: Server role: the cache hint given with the DiscoverResult.
        self.discover_ttl_ms = 300_000
        self.stats = ConnectionStats()

    # ------------------------------------------------------------------ state

    @property
    def role(self) -> Role:
        return self._cs.role

    @property
    def supported_versions(self) -> tuple[str, ...]:
        """The revisions we speak, newest first."""
        return self._cs.supported_versions

    @property
    def state(self) -> type[State]:
        """The lifecycle state (a sentinel of ``lifecycle.py``); it moves only through
        the transitions table, so it is read-only."""
        return self._cs.lifecycle

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision, None before negotiation."""
        return self._cs.protocol_version

    @protocol_version.setter
    def protocol_version(self, value: str | None) -> None:
        self._cs.protocol_version = value

    @property
    def peer_info(self) -> dict[str, Any] | None:
        return self._cs.peer_info

    @peer_info.setter
    def peer_info(self, value: dict[str, Any] | None) -> None:
        self._cs.peer_info = value

    @property
    def peer_capabilities(self) -> dict[str, Any] | None:
        return self._cs.peer_capabilities

    @peer_capabilities.setter
    def peer_capabilities(self, value: dict[str, Any] | None) -> None:
        self._cs.peer_capabilities = value

    @property
    def peer_instructions(self) -> str | None:
        return self._cs.peer_instructions

    @peer_instructions.setter
    def peer_instructions(self, value: str | None) -> None:
        self._cs.peer_instructions = value

    @property
    def revision(self) -> Revision:
        """The negotiated revision, or (before negotiation) the newest we support."""
        return self._cs.revision

    @property
    def era(self) -> Era:
        return self._cs.revision.era

    @property
    def pending(self) -> dict[rpc.RequestId, PendingRequest]:
        """Our requests still waiting for an answer (read-only view by convention)."""
        return self._requests.requests

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
        return [message for message, _ in out]

    def outgoing_with_meta(self) -> list[tuple[rpc.Message, SendMeta]]:
        """Drain the messages waiting to be transmitted, in order, each with its
        ``SendMeta`` (send_meta.py): what the transport needs to know of it, from what
        this Connection knows (the revision, the request answered or cancelled, ...)."""
        out, self._outbox = self._outbox, []
        return out

    def close(self) -> list[rpc.RequestId]:
        """Enter CLOSED; return the ids of our requests that will never be answered."""
        self._cs.advance(LifecycleEvent.CLOSE)
        self._incoming.clear()
        return self._requests.clear()

    # ------------------------------------------------------------------ negotiation

    def adopt(
        self,
        *,
        protocol_version: str,
        peer_info: dict[str, Any] | None,
        peer_capabilities: dict[str, Any] | None,
        log_level: str | None,
        operating: bool,
    ) -> None:
        """Server: take up a session another replica negotiated (its stored record), as if
        this Connection had answered its ``initialize`` (lifecycle.py: ``ADOPT_SESSION``)."""
        if self.role is not Role.SERVER:
            raise LocalProtocolError("only a server adopts a session")
        if protocol_version not in self.supported_versions:
            raise LocalProtocolError(f"can't adopt a session of revision {protocol_version!r}: not supported here")
        self._cs.advance(LifecycleEvent.ADOPT_SESSION)
        self._cs.protocol_version = protocol_version
        self._cs.peer_info = peer_info
        self._cs.peer_capabilities = peer_capabilities or {}
        self.log_level = log_level
        if operating:
            self.adopt_initialized()

    def adopt_initialized(self) -> None:
        """Server: ``notifications/initialized`` reached another replica of the session."""
        if self._cs.lifecycle is INITIALIZING:
            self._cs.advance(LifecycleEvent.RECV_INITIALIZED)

    def initialize(self, *, protocol_version: str | None = None) -> rpc.RequestId:
        """Client: queue the ``initialize`` request."""
        params = self._negotiator.initialize_params(protocol_version, self.capabilities, self.info)
        _check(admission.send_request_problem(self._cs, "initialize"))
        self._cs.advance(LifecycleEvent.SEND_INITIALIZE)
        return self._queue_request("initialize", params, None, SendMeta(self.protocol_version, opens_session=True))

    def discover(self, *, protocol_version: str | None = None) -> rpc.RequestId:
        """Client: queue ``server/discover`` (the 2026-07-28 era probe)."""
        version = self._negotiator.probe_version_for(protocol_version)
        _check(admission.send_request_problem(self._cs, "server/discover"))
        self._negotiator.probe_sent(version)
        envelope = sl.build_envelope(version, self.capabilities, self.info, None)
        return self._queue_request("server/discover", sl.with_envelope(None, envelope), None, SendMeta(version))

    def abandon_probe(self) -> None:
        """Client: the discover probe got no answer in time: take the server for
        handshake-era (spec: stdio, Backward Compatibility) and drop a late answer."""
        for request_id in self._requests:
            pending = self._requests.get(request_id)
            if pending is not None and pending.method == "server/discover":
                self._requests.retire_unanswered(request_id)
        self._cs.advance(LifecycleEvent.RECV_LEGACY_ANSWER)

    def _carry_out(self, outcome: Outcome) -> list[ev.Event]:
        for message in outcome.send:
            self._queue(message)
        if outcome.probe_again is not None:
            self.discover(protocol_version=outcome.probe_again)
        return outcome.events

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
        _check(admission.send_request_problem(self._cs, method, self.capabilities))
        if progress_token is not None:
            if self._requests.token_in_use(progress_token):
                raise LocalProtocolError(f"progress token {progress_token!r} is already in use")
            params = with_progress_token(params, progress_token)
        if self.role is Role.CLIENT and self.protocol_version and self.era is Era.STATELESS:
            envelope = sl.build_envelope(self.protocol_version, self.capabilities, self.info, self.request_log_level)
            params = sl.with_envelope(params, envelope)
        return self._queue_request(method, params, progress_token, SendMeta(self.protocol_version))

    def reissue(self, request_id: rpc.RequestId) -> rpc.RequestId:
        """Re-send pending request ``request_id`` under a fresh id and return that id.

        For transports that must re-issue a request rather than wait on it (2026-07-28
        Streamable HTTP: a broken response stream is answered by re-sending with a new
        id).  Method, params (envelope included) and progress token stay (progress
        starts afresh: the peer sees a new request); the old id is retired like a
        cancelled one, so a late answer to it is dropped and counted.
        Nothing is sent for the old id: on that transport closing its stream was the
        cancellation.  Raises ``LocalProtocolError`` for an id that is not pending and
        for ``initialize``, which is never repeated within a session."""
        pending = self._requests.get(request_id)
        if pending is None:
            raise LocalProtocolError(f"no pending request with id {request_id!r}")
        if pending.method == "initialize":
            raise LocalProtocolError("initialize can't be re-issued: start a new session instead")
        new_id = self._requests.reissue(request_id)
        version = sl.envelope_version(pending.params) or self.protocol_version
        self._outbox.append((rpc.Request(new_id, pending.method, pending.params), SendMeta(version, None, request_id)))
        return new_id

    def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        if method in ("notifications/cancelled", "notifications/progress"):
            raise LocalProtocolError(f"use cancel() / send_progress() for {method}")
        _check(admission.send_notification_problem(self._cs, method, self.capabilities))
        self._outbox.append((rpc.Notification(method, params), SendMeta(self.protocol_version)))

    def send_response(self, request_id: rpc.RequestId, result: dict[str, Any]) -> None:
        incoming = self._finish_incoming(request_id)
        if incoming is None:
            return
        if incoming.envelope is not None:
            result = sl.stateless_result(result, self.info)
        self._outbox.append((rpc.Response(request_id, result), SendMeta(self.protocol_version, request_id)))

    def send_error(self, request_id: rpc.RequestId, code: int, message: str, data: Any = None) -> None:
        if self._finish_incoming(request_id) is not None:
            self._queue(rpc.ErrorResponse(request_id, rpc.ErrorObject(code, message, data)))

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
        result = sl.input_required_result(input_requests, request_state)
        _check(sl.input_required_problem(result, incoming.envelope.client_capabilities))
        self.send_response(request_id, result)

    def cancel(self, request_id: rpc.RequestId, reason: str | None = None) -> None:
        """Give up on one of our requests: tell the peer, forget the waiter, and drop
        whatever answer arrives later."""
        pending = self._requests.get(request_id)
        if pending is None:
            raise LocalProtocolError(f"no pending request with id {request_id!r}")
        if pending.method == "initialize":
            raise LocalProtocolError("initialize can never be cancelled (spec: Cancellation)")
        self._requests.retire_unanswered(request_id)
        if self.state is not CLOSED:
            params: dict[str, Any] = {"requestId": request_id}
            if reason:
                params["reason"] = reason
            note = rpc.Notification("notifications/cancelled", params)
            self._outbox.append((note, SendMeta(self.protocol_version, cancels=request_id)))

    def request_lost(self, request_id: rpc.RequestId, error: Exception, *, may_reissue: bool = False) -> list[ev.Event]:
        """Client: the transport says the answer to our ``request_id`` will never arrive
        (its exchange failed for good); return what follows.  ``may_reissue``: the
        transport may carry the request again under a new id (2026-07-28 Streamable
        HTTP, a broken stream).

        A lost ``server/discover`` probe is taken as silence: the server is handshake-era
        (``LegacyServer``; spec: stdio, Backward Compatibility).  A lost ``initialize``
        ends the handshake (``HandshakeFailed``; it is never re-issued).  Any other
        request is re-issued when allowed (``RequestReissued``: queued, the old id's
        late answer dropped) or fails (``RequestLost``).  Nothing for an id no longer
        pending (answered or given up meanwhile)."""
        pending = self._requests.get(request_id)
        if pending is None:
            return []
        if pending.method == "server/discover" and self.state is DISCOVERING:
            self.abandon_probe()
            return [ev.LegacyServer(f"server/discover failed: {error}")]
        if may_reissue and pending.method != "initialize":
            return [ev.RequestReissued(request_id, self.reissue(request_id))]
        self._requests.retire(request_id)
        if pending.method == "initialize":
            # The handshake cannot go on (e.g. no transport the server offers): say why.
            self._cs.advance(LifecycleEvent.RECV_INIT_FAILURE)
            return [ev.HandshakeFailed(str(error))]
        return [ev.RequestLost(request_id, pending.method, error)]

    def forget(self, request_id: rpc.RequestId) -> None:
        """Drop a pending request without telling the peer (e.g. its transport died)."""
        self._requests.retire(request_id)

    def send_progress(
        self,
        token: str | int,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        """Report progress on a request the peer sent us with a progress token (nothing
        is sent once the peer cancelled that request)."""
        params = self._incoming.progress_params(token, progress, total, message)
        _check(admission.send_notification_problem(self._cs, "notifications/progress", self.capabilities))
        if params is not None:
            self._outbox.append((rpc.Notification("notifications/progress", params), SendMeta(self.protocol_version)))

    def should_log(self, level: str, request_id: rpc.RequestId | None = None) -> bool:
        """Server: whether a log message at ``level`` passes the client's threshold
        (in the stateless era, the one in request ``request_id``'s envelope)."""
        if level not in LOG_LEVELS:
            raise LocalProtocolError(f"unknown log level {level!r}")
        incoming = self._incoming.get(request_id) if request_id is not None else None
        envelope = incoming.envelope if incoming is not None else None
        return admission.may_log(level, self.log_level, envelope, LOG_LEVELS)

    def _queue_request(
        self, method: str, params: dict[str, Any] | None, token: str | int | None, meta: SendMeta
    ) -> rpc.RequestId:
        request_id = self._requests.add(method, params, token)
        self._outbox.append((rpc.Request(request_id, method, params), meta))
        return request_id

    def _queue(self, message: rpc.Message) -> None:
        """Queue an answer or a notification of our own making, sent under the agreed revision."""
        answers = message.id if isinstance(message, (rpc.Response, rpc.ErrorResponse)) else None
        self._outbox.append((message, SendMeta(self.protocol_version, answers)))

    def _finish_incoming(self, request_id: rpc.RequestId) -> IncomingRequest | None:
        """Retire an incoming request being answered; None if the answer must be dropped."""
        if self.state is CLOSED:
            raise LocalProtocolError("can't answer: the connection is closed")
        incoming = self._incoming.pop(request_id)
        if incoming is None:
            raise LocalProtocolError(f"no request {request_id!r} from the peer awaits an answer")
        if incoming.cancelled:
            # Spec: the receiver of a cancellation SHOULD NOT answer the request.
            self.stats.answers_suppressed += 1
            return None
        return incoming

    # ------------------------------------------------------------------ receiving

    def receive_bytes(self, data: bytes | str) -> list[ev.Event]:
        """Feed one complete JSON text.  Raises ``RemoteProtocolError`` only for a
        payload over ``max_message_size`` (treat the stream as broken)."""
        return self.receive_payload(rpc.parse_payload(data, max_size=self.max_message_size))

    def receive_payload(self, parsed: rpc.ParsedPayload, size: int | None = None) -> list[ev.Event]:
        """Feed one JSON text that the transport already parsed with
        ``rpc.parse_payload`` (so it is parsed once).  Returns the events of its
        invalid parts, then of its messages.

        ``size``: the text's length in bytes, when the parser's cap was not this
        Connection's (a transport frames and parses under its own bound, which need not
        be the session's ``max_message_size``): over the limit raises
        ``RemoteProtocolError``, as ``receive_bytes`` does; the one place the session's
        cap is checked."""
        if size is not None and size > self.max_message_size:
            raise rpc.too_large(size, self.max_message_size)
        events: list[ev.Event] = []
        for bad in parsed.invalid:
            events.extend(self._receive_invalid(bad))
        batch = parsed.is_batch and parsed.messages  # (an empty batch is only invalid)
        refused = admission.refuse_batch(self._cs, parsed.messages) if batch else None
        if refused is not None and self.state is not CLOSED:
            return events + self._refuse_batch(parsed.messages, refused)
        for msg in parsed.messages:
            events.extend(self.receive_message(msg))
        return events

    def _refuse_batch(self, messages: list[rpc.Message], refused: Refused) -> list[ev.Event]:
        events: list[ev.Event] = [ev.ProtocolIssue(refused.rule.kind, refused.message, messages)]
        for msg in messages:
            if isinstance(msg, rpc.Request):
                self._queue(rpc.ErrorResponse(msg.id, refused.error()))
            elif not isinstance(msg, rpc.Notification):
                events.extend(self._receive_answer(msg))
        return events

    def receive_message(self, msg: rpc.Message) -> list[ev.Event]:
        if self.state is CLOSED:
            return [ev.ProtocolIssue("after-close", f"message received after close: {msg!r}")]
        if isinstance(msg, rpc.Request):
            return self._receive_request(msg)
        if isinstance(msg, rpc.Notification):
            return self._receive_notification(msg)
        return self._receive_answer(msg)

    def _receive_invalid(self, bad: rpc.InvalidMessage) -> list[ev.Event]:
        self.stats.invalid_messages += 1
        kind = "parse-error" if bad.error.code == rpc.PARSE_ERROR else "invalid-message"
        events: list[ev.Event] = [ev.ProtocolIssue(kind, bad.error.message, bad.raw)]
        # ``raw`` only tells what the thing was meant to be (parse_payload recovers the
        # object even from a text only a lenient reader reads); none of it is used as data.
        raw = bad.raw if isinstance(bad.raw, dict) else {}
        if bad.id is not None and ("result" in raw or "error" in raw) and bad.id in self._requests:
            # An unusable answer to one of our requests: fail that waiter now rather than hang it.
            pending = self._requests.retire(bad.id)
            assert pending is not None
            if self._negotiating(pending.method):
                events += self._negotiator.answer_unusable(pending.method, bad.error.message).events
            else:
                reason = f"malformed response: {bad.error.message}"
                events.append(ev.InvalidAnswer(bad.id, pending.method, reason))
        elif self.state is CLOSED:
            pass  # nothing is sent on a closed connection
        elif bad.id is not None and "method" in raw:
            self._queue(rpc.ErrorResponse(bad.id, bad.error))
        elif self.role is Role.SERVER:
            # JSON-RPC: a server answers what it could not identify with a null id.
            self._queue(rpc.ErrorResponse(None, bad.error))
        return events

    def _negotiating(self, method: str) -> bool:
        """Whether an answer to our ``method`` decides the negotiation."""
        return method == "initialize" or (method == "server/discover" and self.state is DISCOVERING)

    def _refuse(self, req: rpc.Request, refused: Refused) -> list[ev.Event]:
        self._queue(rpc.ErrorResponse(req.id, refused.error()))
        return [ev.ProtocolIssue(refused.rule.kind, refused.message, req)] if refused.rule.reported else []

    def _receive_request(self, req: rpc.Request) -> list[ev.Event]:
        method, params = req.method, req.params or {}
        if req.id in self._incoming:
            self.stats.invalid_messages += 1
            return [ev.ProtocolIssue("duplicate-request-id", f"request id {req.id!r} is already in use", req)]
        if self.role is Role.SERVER and sl.has_envelope(params):
            return self._receive_enveloped(req, params)
        refused = admission.refuse_request(self._cs, method, self.capabilities)
        if refused is not None:
            return self._refuse(req, refused)
        if method == "ping":
            self._queue(rpc.Response(req.id, {}))
            return []
        if method == "initialize":
            return self._carry_out(
                self._negotiator.receive_initialize(req, self.capabilities, self.info, self.instructions)
            )
        if method == "logging/setLevel":
            return self._receive_set_level(req, params)
        self._incoming.add(req.id, method, params.get("_meta"))
        return [ev.RequestReceived(req.id, method, params)]

    def _receive_enveloped(self, req: rpc.Request, params: dict[str, Any]) -> list[ev.Event]:
        envelope = admission.admit_envelope(params, self._cs, LOG_LEVELS)
        if isinstance(envelope, Refused):
            return self._refuse(req, envelope)
        self._cs.serves_stateless = True
        revision = get_revision(envelope.protocol_version)
        refused = admission.refuse_in_revision(req.method, revision, Role.CLIENT, self.capabilities)
        if refused is not None:
            return self._refuse(req, refused)
        if req.method == "server/discover":
            result = self._negotiator.discover_result(
                self.capabilities, self.info, self.instructions, self.discover_ttl_ms
            )
            self._queue(rpc.Response(req.id, result))
            return []
        self._incoming.add(req.id, req.method, params["_meta"], envelope)
        return [ev.RequestReceived(req.id, req.method, params, envelope)]

    def _receive_set_level(self, req: rpc.Request, params: dict[str, Any]) -> list[ev.Event]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            error = rpc.ErrorObject(rpc.INVALID_PARAMS, f"unknown log level {level!r}")
            self._queue(rpc.ErrorResponse(req.id, error))
            return [ev.ProtocolIssue("invalid-params", error.message, req)]
        assert isinstance(level, str)
        self.log_level = level
        self._queue(rpc.Response(req.id, {}))
        return [ev.LogLevelChanged(level)]

    def _receive_notification(self, note: rpc.Notification) -> list[ev.Event]:
        method, params = note.method, note.params or {}
        if method == "notifications/cancelled":
            return self._incoming.receive_cancelled(note)
        if method == "notifications/progress":
            return self._requests.receive_progress(note)
        refused = admission.refuse_notification(self._cs, method)
        if refused is not None:
            return [ev.ProtocolIssue(refused.rule.kind, refused.message)]
        if method == "notifications/initialized" and self.role is Role.SERVER:
            self._cs.advance(LifecycleEvent.RECV_INITIALIZED)
            assert self.protocol_version is not None and self.peer_capabilities is not None
            return [ev.Initialized(self.protocol_version, self.peer_info or {}, self.peer_capabilities)]
        return [ev.NotificationReceived(method, params)]

    def _receive_answer(self, msg: rpc.Response | rpc.ErrorResponse) -> list[ev.Event]:
        if msg.id is None:
            assert isinstance(msg, rpc.ErrorResponse)
            return [ev.ProtocolIssue("error-without-id", f"peer reported: {msg.error.message}", msg)]
        pending = self._requests.retire(msg.id)
        if pending is None:
            if self._requests.take_late_answer(msg.id):
                self.stats.late_responses_dropped += 1
                return []
            self.stats.unknown_responses += 1
            return [ev.ProtocolIssue("unknown-response-id", f"answer to unknown request id {msg.id!r}", msg)]
        if self._negotiating(pending.method):
            negotiator = self._negotiator
            step = (
                negotiator.receive_initialize_answer
                if pending.method == "initialize"
                else negotiator.receive_discover_answer
            )
            return self._carry_out(step(msg))
        if isinstance(msg, rpc.ErrorResponse):
            return [ev.ErrorReceived(msg.id, pending.method, msg.error)]
        if self.role is Role.CLIENT and self.era is Era.STATELESS:
            return self._classify_result(msg, pending)
        return [ev.ResponseReceived(msg.id, pending.method, msg.result)]

    def _classify_result(self, msg: rpc.Response, pending: PendingRequest) -> list[ev.Event]:
        """Stateless era: dispatch on ``resultType`` (spec: basic, ResultType)."""
        result, method = msg.result, pending.method
        problem = sl.result_problem(method, result, self.capabilities)
        if problem is not None:
            return [ev.ProtocolIssue("invalid-result", problem, msg), ev.InvalidAnswer(msg.id, method, problem)]
        if result.get("resultType") == ResultType.INPUT_REQUIRED:
            state = result.get("requestState")
            return [
                ev.InputRequired(
                    msg.id,
                    method,
                    pending.params or {},
                    result.get("inputRequests") or {},
                    state if isinstance(state, str) else None,
                )
            ]
        events: list[ev.Event] = []
        if result.get("resultType") is None:
            # Clients MUST read an absent resultType as "complete"; a 2026 server MUST send it.
            events.append(ev.ProtocolIssue("result-type-missing", f"{method} result has no resultType", msg))
        return [*events, ev.ResponseReceived(msg.id, method, result)]


def _check(problem: str | None) -> None:
    """Raise the refusal an admission or validity check returned, if any."""
    if problem is not None:
        raise LocalProtocolError(problem)
