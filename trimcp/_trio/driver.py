"""The Trio driver shared by client and server sessions.

Theory of operation
-------------------
``SessionDriver`` owns one sans-IO ``Connection`` and one ``MessageStream``.
A single reader task (``run``) receives JSON texts, feeds them to the
Connection and acts on the events; every other task only *queues* work on the
Connection and then ``flush``es its outbox.  Writes are serialised by a
``trio.StrictFIFOLock`` so messages leave in the order the Connection queued
them.

Requests we send wait on a ``Waiter`` (``waiters.py``).  Three things can end a wait: the
answer, the request's deadline (we then tell the peer with
``notifications/cancelled`` and raise ``RequestTimeout``), or the caller's own
cancellation (same notification, then the ``Cancelled`` propagates).  The
notification is sent under a shielded, bounded cancel scope so it goes out even
while the caller is being cancelled, but can never hang.  When the transport
dies, ``_fail_all`` hands the same error to every waiter at once: nothing waits
forever.  When the transport says one answer is lost (``RequestFailed``), the
Connection decides what follows (``Connection.request_lost``: the request fails,
is re-issued, or the negotiation it carried ends) and the driver carries it out.

User code never runs in the reader task; the reader resolves waiters itself
(no task hop on the request path) and hands everything else on:

* notifications, progress and logging (``notification_handler``,
  ``on_progress``) go in arrival order through a bounded ``CallbackQueue``
  (``callbacks.py``) drained by one task.  A full queue makes the reader wait
  (back-pressure on the peer), except while the running callback itself waits
  for the peer (a ``list_changed`` handler calling ``list_tools()``): only the
  reader can deliver that answer, so a notification finding the queue full is
  then dropped, counted and logged.  A request returns once the callbacks for
  what arrived before its answer have run (within its deadline; not when made
  from a callback).  A callback that raises is logged.  ``notification_taps``
  (the client's cache and subscription routing: ours, synchronous, never
  blocking) run in the reader before the handler is queued;
* the peer's requests are served by ``PeerRequests`` (serving.py), a task
  each, at most ``max_concurrent_requests`` at once (request_slots.py; at the
  limit the reader waits).  A handler waiting for the peer's answer (sampling
  asked from a ``tools/call`` handler) lends its slot back meanwhile, so that
  answer can always be read.

A transport may let the caller run its request's exchange in its own task
(``begin_request``, ``stream.py``: Streamable HTTP's POST): ``flush`` takes the
caller's request in its turn and the caller runs it outside the write lock,
within its deadline.  When the transport hands the answer back (the reader
had taken everything before it), the caller gives it to the Connection itself,
as the reader would have: one task, no hop, the same order.  A caller cancelled
meanwhile ends that exchange and tells the peer as any cancelled caller does.

The task a request comes from (a callback, a handler) is found by walking up
the Trio task tree.  When the transport ends, waiters fail, handlers are
cancelled and the queued callbacks still run; then ``run`` returns.

Client, 2026-07-28 stateless era.  ``discover`` sends the ``server/discover``
probe and returns how it ended: ``Discovered`` (a stateless session, which sets
``initialized`` like a handshake would), ``LegacyServer`` (the Connection is
IDLE again and ``initialize`` may follow; a probe that got no answer in time is
abandoned and reported the same way), or ``HandshakeFailed``.  The server
never sends requests in that era: a result with ``resultType: input_required``
asks for elicitation, sampling or roots instead.  ``request`` answers those with
``answer_input``, given by the client that builds the driver (the very
handlers that serve handshake-era server requests, ``client/mrtr.py``), then
re-sends the original request, with a new id, carrying ``inputResponses`` and
the echoed ``requestState``; after ``max_input_rounds`` such rounds it gives up
with ``InputRoundsExceeded`` (the counting, the giving up and the retry's params
are sans-IO: ``stateless.InputRounds``; the driver waits and keeps time).  One
deadline covers the whole exchange, every attempt and the time the handlers take (as in the handshake era, where the
handlers run while the original request is pending); each attempt gets its own
progress token, and a timeout cancels the attempt in flight on the wire.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import trio

from .._errors import (
    McpError,
    RemoteProtocolError,
    RequestTimeout,
    TransportClosed,
    TransportError,
)
from .._sansio import events as ev
from .._sansio import jsonrpc as rpc
from .._sansio.connection import stateless as sl
from .._sansio.connection.core import Connection
from .._sansio.connection.health import DEFAULT_MAX_CONSECUTIVE_FAILURES, FailureCounter
from .._sansio.connection.lifecycle import CLOSED
from .._sansio.http.headers import HeaderParam
from ._locks import held
from .callbacks import DEFAULT_MAX_PENDING_CALLBACKS, CallbackQueue
from .driver_types import (
    USE_DEFAULT,
    NeedInput,
    NotificationHandler,
    NotificationTap,
    ProbeOutcome,
    ProgressCallback,
    SentCallback,
    UseDefault,
)
from .outbox import Outbox
from .request_context import RequestContext
from .request_slots import DEFAULT_MAX_CONCURRENT_REQUESTS, RequestSlots, Serving, current_owner
from .serving import PeerRequests
from .stream import Inbound, MessageStream, RequestExchange, RequestFailed, StreamLost, request_starter
from .waiters import Deadline, Waiter

# The driver's vocabulary, re-exported for the modules built on it.
__all__ = [
    "USE_DEFAULT",
    "InputAnswerer",
    "NeedInput",
    "NotificationHandler",
    "NotificationTap",
    "ProbeOutcome",
    "ProgressCallback",
    "RequestContext",
    "RequestHandler",
    "SentCallback",
    "SessionDriver",
    "UseDefault",
]

logger = logging.getLogger("trimcp")

#: How long the courtesy ``notifications/cancelled`` may take to send.
CANCEL_SEND_TIMEOUT = 1.0


RequestHandler = Callable[[RequestContext], Awaitable[dict[str, Any]]]
#: Client, stateless era: the ``inputResponses`` for one InputRequiredResult.
InputAnswerer = Callable[["SessionDriver", ev.InputRequired], Awaitable[dict[str, Any]]]


class SessionDriver:
    def __init__(
        self,
        connection: Connection,
        stream: MessageStream,
        *,
        request_handlers: Mapping[str, RequestHandler] | None = None,
        notification_handler: NotificationHandler | None = None,
        notification_taps: Sequence[NotificationTap] = (),
        request_timeout: float | None = 60.0,
        issue_log_size: int = 200,
        max_input_rounds: int = 8,
        answer_input: InputAnswerer | None = None,
        max_concurrent_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS,
        max_pending_callbacks: int = DEFAULT_MAX_PENDING_CALLBACKS,
        reset_timeout_on_progress: bool = True,
        max_total_timeout: float | None = None,
        max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    ) -> None:
        self.connection = connection
        self.stream = stream
        self.request_handlers: dict[str, RequestHandler] = dict(request_handlers or {})
        #: User code for every notification; runs in the callback task (see the module docstring).
        self.notification_handler = notification_handler
        self.notification_taps = tuple(notification_taps)  #: sync, in the reader, before the handler; never block
        #: Notification, progress and logging callbacks waiting for (or run by) the callback task.
        self.callbacks = CallbackQueue(max_pending_callbacks)
        #: The limit on the peer's requests served at once.
        self.request_slots = RequestSlots(max_concurrent_requests)
        #: The peer's requests being served (serving.py), with ``request_handlers``.
        self.peer_requests = PeerRequests(
            connection,
            self.request_handlers,
            self.request_slots,
            context=lambda e: RequestContext(self, e.id, e.method, e.params, e.envelope),
            flush=self._flush_quietly,
            is_closed=lambda: self.is_closed,
        )
        self.request_timeout = request_timeout
        #: Progress for a request pushes its deadline, up to ``max_total_timeout`` (waiters.py).
        self.reset_timeout_on_progress = reset_timeout_on_progress
        self.max_total_timeout = max_total_timeout
        #: Terminal transport failures in a row (health.py); at its limit the session closes.
        self.failures = FailureCounter(max_consecutive_failures)
        #: When the peer was last heard from (``trio.current_time()``; the heartbeat reads it).
        self.last_received = trio.current_time()
        #: Peer mistakes seen (and handled), newest last.
        self.issues: deque[ev.ProtocolIssue] = deque(maxlen=issue_log_size)
        #: Called with every event after the driver's own handling (the harness listens here).
        self.event_observers: list[Callable[[ev.Event], None]] = []
        #: Client, stateless era: how many InputRequiredResults one request may get.
        self.max_input_rounds = max_input_rounds
        #: Client, stateless era: answers the server's ``inputRequests`` (None: refuse them).
        self.answer_input = answer_input
        #: Set when the session is operating (handshake or discover done) or has failed.
        self.initialized = trio.Event()
        self.handshake: ev.Initialized | ev.Discovered | ev.HandshakeFailed | None = None
        self._probe_done: trio.Event | None = None
        self._probe_outcome: ProbeOutcome | None = None
        self.closed_error: BaseException | None = None
        self._waiters: dict[rpc.RequestId, Waiter] = {}
        #: The transport's ``begin_request``, if it lets a caller run its own exchange.
        self._starter = request_starter(stream)
        self._write_lock = trio.StrictFIFOLock()
        #: Messages taken from the Connection, with their metadata, not yet written.
        self.outbox = Outbox(connection)
        self._nursery: trio.Nursery | None = None
        self._closed = trio.Event()
        self._progress_seq = 0

    # ------------------------------------------------------------ lifecycle

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The reader task; returns when the transport ends (never raises for that)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(self.callbacks.run)
            task_status.started()
            ended = False
            try:
                while True:
                    # Never bound here: an idle session must not keep its last message alive.
                    await self._received(await self.stream.receive())
            except (TransportClosed, RemoteProtocolError) as exc:
                self._fail_all(exc)
                # The session is dead: let the peer see it too (e.g. after an oversize message).
                with trio.CancelScope(shield=True):
                    await self.stream.aclose()
                ended = True
            except trio.Cancelled:
                self._fail_all(TransportClosed("session closed"))
                raise
            finally:
                # The peer's requests were cancelled by _fail_all; what the peer sent before
                # it went is still handled (the queued callbacks run), unless we are cancelled.
                self.callbacks.close()
                if not ended:
                    nursery.cancel_scope.cancel()

    async def _received(self, item: Inbound) -> None:
        if self.is_closed:
            return  # draining while the transport shuts down: the session is over
        if not isinstance(item, tuple):  # not Received: the transport's own word
            await self._transport_said(item)
            return
        self.last_received = trio.current_time()
        self.failures.count = 0  # FailureCounter.alive(), inlined: once per message
        # The Connection checks the session's size cap (the transport parsed under its own).
        for event in self.connection.receive_payload(item.payload, len(item.data)):
            await self._dispatch(event)
        if self.connection.has_output:  # e.g. an automatic answer to a ping
            await self.flush()

    async def aclose(self) -> None:
        self._fail_all(TransportClosed("session closed"))
        with trio.CancelScope(shield=True):
            await self.stream.aclose()

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    @property
    def busy(self) -> bool:
        """Whether a request is outstanding either way: a peer's request still being served
        (a slow tool, one waiting for sampling), or one of ours waiting for its answer."""
        return bool(self.request_slots.serving or self._waiters)

    async def wait_closed(self) -> BaseException:
        """Wait until the session has ended; return why (``closed_error``)."""
        await self._closed.wait()
        assert self.closed_error is not None
        return self.closed_error

    async def _transport_said(self, item: RequestFailed | StreamLost) -> None:
        if isinstance(item, RequestFailed):
            # The Connection decides what follows (the probe taken as silence, the handshake
            # failed, the request re-issued or its waiter failed); the driver carries it out.
            events = self.connection.request_lost(item.request_id, item.error, may_reissue=item.may_reissue)
            for event in events:
                await self._dispatch(event)
            reissued = any(isinstance(event, ev.RequestReissued) for event in events)
            if reissued or not isinstance(item.error, TransportError):
                return  # re-issued, or an authorization failure: the server is there
        if (dead := self._failed(item.error)) is not None:
            raise dead  # run() closes the stream

    def _failed(self, error: BaseException) -> TransportClosed | None:
        """Count one terminal failure (health.py); at the limit, fail everything, saying why."""
        if (dead := self.failures.failed(error)) is not None:
            logger.warning("MCP session closed: %s", dead)
            self._fail_all(dead)
        return dead

    async def count_failure(self, error: BaseException) -> None:
        """A terminal failure seen outside the reader (a heartbeat left unanswered)."""
        if self._failed(error) is not None:
            await self.aclose()  # the reader then sees the end

    def _fail_all(self, exc: BaseException) -> None:
        if self._closed.is_set():
            return
        self.closed_error = exc
        self._closed.set()
        if self.connection.state is not CLOSED:
            self.connection.close()
        waiters, self._waiters = self._waiters, {}
        for waiter in waiters.values():
            waiter.error = exc
            waiter.event.set()
        self.peer_requests.cancel_all()
        if not self.initialized.is_set():
            self.initialized.set()
        if self._probe_done is not None:
            self._probe_done.set()

    # ------------------------------------------------------------ sending

    async def flush(self) -> None:
        """Write what the Connection queued, in order."""
        await self._write()

    async def _write(self, own: rpc.RequestId | None = None) -> RequestExchange | None:
        """``flush``; ``own``: the caller's request, which it waits for: when the transport
        lets the caller carry its exchange out (``begin_request``, see ``stream.py``), it
        is taken in its turn and returned."""
        self.outbox.take()
        starter = self._starter if own is not None else None
        mine: RequestExchange | None = None
        async with held(self._write_lock):
            try:
                while self.outbox:
                    message, meta = self.outbox.popleft()
                    if starter is not None and type(message) is rpc.Request and message.id == own:
                        mine, starter = starter(self.stream, message, meta), None
                    else:
                        await self.stream.send(message, meta)
            except BaseException as exc:
                if mine is not None:
                    mine.abandon()
                if isinstance(exc, TransportClosed):
                    self._fail_all(exc)
                raise
        return mine

    def _check_open(self) -> None:
        if self.closed_error is not None:
            raise TransportClosed(f"the session is closed: {self.closed_error}") from self.closed_error

    async def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related_request: rpc.RequestId | None = None,
    ) -> None:
        """Send a notification; ``related_request``: the peer request it was sent while
        handling (the transport may route it with that request's answer)."""
        self._check_open()
        self.connection.send_notification(method, params)
        self.outbox.take(related_request)
        await self.flush()

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None | UseDefault = USE_DEFAULT,
        on_progress: ProgressCallback | None = None,
        on_sent: SentCallback | None = None,
        related_request: rpc.RequestId | None = None,
        header_params: tuple[HeaderParam, ...] = (),
        reset_timeout_on_progress: bool | None = None,
        max_total_timeout: float | None | UseDefault = USE_DEFAULT,
        progress_token: bool = False,
    ) -> dict[str, Any]:
        """Send a request and wait for its result; raise ``McpError`` for an error
        answer, ``RequestTimeout`` past the deadline (default: ``request_timeout``;
        ``None`` waits forever), ``TransportClosed`` if the peer goes away.

        Stateless era: an InputRequiredResult is answered with the request
        handlers and the request re-sent (see the module docstring); the deadline
        covers all the rounds.  ``on_sent`` learns each attempt's id (a re-issue's too).
        ``related_request``: the peer request this one is made while handling;
        ``header_params``: a ``tools/call``'s tool's ``x-mcp-header`` parameters.
        ``reset_timeout_on_progress`` / ``max_total_timeout`` (default: the session's):
        progress for the request pushes its deadline to now + ``timeout``, never past
        start + ``max_total_timeout`` (``None``: 10 x ``timeout``; see ``waiters.py``).
        ``progress_token``: ask for progress even without ``on_progress`` (to keep
        the request alive by it)."""
        self._check_open()
        limit = self.request_timeout if isinstance(timeout, UseDefault) else timeout
        deadline = Deadline(
            limit,
            self.reset_timeout_on_progress if reset_timeout_on_progress is None else reset_timeout_on_progress,
            self.max_total_timeout if isinstance(max_total_timeout, UseDefault) else max_total_timeout,
        )
        progress_token = progress_token and deadline.reset
        attempt_params = params
        rounds: sl.InputRounds | None = None  # made at the first round only: request() is the hot path
        while True:
            outcome = await self._attempt(
                method,
                attempt_params,
                deadline,
                progress_token,
                on_progress,
                on_sent,
                related_request,
                header_params,
            )
            if not isinstance(outcome, ev.InputRequired):
                return outcome
            if rounds is None:
                rounds = sl.InputRounds(method, params, self.max_input_rounds)
            rounds.asked(answerable=self.answer_input is not None)  # raises when the exchange must end
            assert self.answer_input is not None
            with trio.move_on_at(deadline.at):
                responses = await self.answer_input(self, outcome)
                attempt_params = rounds.retry(responses, outcome.request_state)
                continue
            done = f"{method} did not complete within {limit} s (while answering input requests)"
            raise RequestTimeout(done, seconds=limit)

    async def _attempt(
        self,
        method: str,
        params: dict[str, Any] | None,
        deadline: Deadline,
        progress_token: bool,
        on_progress: ProgressCallback | None,
        on_sent: SentCallback | None,
        related: rpc.RequestId | None = None,
        header_params: tuple[HeaderParam, ...] = (),
    ) -> dict[str, Any] | ev.InputRequired:
        """One request on the wire: its result, or the server's request for input."""
        self._check_open()
        token: str | None = None
        if on_progress is not None or progress_token:
            self._progress_seq += 1
            token = f"trimcp-{self._progress_seq}"
        request_id = self.connection.send_request(method, params, progress_token=token)
        self.outbox.take(related, header_params)
        waiter = self._waiters[request_id] = Waiter(
            method, request_id, deadline, on_progress=on_progress, on_sent=on_sent, header_params=header_params
        )
        if on_sent is not None:
            on_sent(request_id)
        owner = current_owner(
            self.request_slots, self.callbacks
        )  # while we wait for the peer, the reader must not wait for us
        lent = isinstance(owner, Serving) and self.request_slots.lend(owner)
        if owner is self.callbacks:
            self.callbacks.enter_peer_wait()
        try:
            mine = await self._write(request_id)
            with trio.CancelScope(deadline=deadline.at) as deadline.scope:  # progress may push it
                if mine is not None:
                    # The transport lets this task carry the exchange out (stream.py).
                    answer = await mine.run()
                    if answer is not None:
                        await self._received(answer)
                if not waiter.event.is_set():  # (a set Event's wait() would still yield)
                    await waiter.event.wait()
        except BaseException:
            await self._abandon(waiter.request_id, "request cancelled by the caller")
            raise
        finally:
            if owner is self.callbacks:
                self.callbacks.exit_peer_wait()
        if lent and isinstance(owner, Serving):  # the handler runs user code again: under the limit
            await self.request_slots.take_back(owner)
        if not waiter.event.is_set():
            await self._abandon(waiter.request_id, f"timed out after {deadline.limit} s")
            raise RequestTimeout(deadline.timed_out(method), seconds=deadline.limit)
        if waiter.callbacks_before > self.callbacks.finished and owner is not self.callbacks:
            # What the peer sent before this answer is handled before the caller goes on.
            with trio.move_on_at(deadline.at):
                await self.callbacks.wait_finished(waiter.callbacks_before)
        if waiter.error is not None:
            raise waiter.error
        if waiter.input_required is not None:
            return waiter.input_required
        assert waiter.result is not None
        return waiter.result

    async def discover(self, *, protocol_version: str | None = None, timeout: float | None = None) -> ProbeOutcome:
        """Client: probe with ``server/discover`` and return how it ended.

        ``Discovered`` means a stateless session is operating (``initialized`` is
        set).  A -32022 naming another stateless revision is retried by the
        Connection itself.  Past ``timeout`` the probe is abandoned (a late answer
        is dropped) and reported as ``LegacyServer``: ``initialize`` may follow."""
        self._check_open()
        self._probe_done, self._probe_outcome = trio.Event(), None
        self.connection.discover(protocol_version=protocol_version)
        await self.flush()
        with trio.move_on_after(math.inf if timeout is None else timeout):
            await self._probe_done.wait()
        outcome = self._probe_outcome
        if outcome is not None:
            return outcome
        self._check_open()  # the session died while probing
        self.connection.abandon_probe()
        return ev.LegacyServer(f"no answer to server/discover within {timeout} s")

    async def initialize(self, *, protocol_version: str | None = None) -> ev.Initialized | ev.Discovered:
        """Client: run the handshake (the caller bounds it with a deadline).  A dual-era
        client whose probe timed out may end up ``Discovered`` after all: the Connection
        probes again when the server refuses ``initialize`` naming a stateless revision."""
        self._check_open()
        self.connection.initialize(protocol_version=protocol_version)
        await self.flush()
        await self.initialized.wait()
        if isinstance(self.handshake, (ev.Initialized, ev.Discovered)):
            return self.handshake
        if isinstance(self.handshake, ev.HandshakeFailed):
            if self.handshake.error is not None:
                err = self.handshake.error
                detail = sl.versions_named(err.data, self.connection.supported_versions)
                raise McpError(err.code, f"initialize refused: {err.message}{detail}", err.data)
            raise RemoteProtocolError(self.handshake.reason)
        self._check_open()
        raise TransportClosed("the session closed during initialize")

    async def _abandon(self, request_id: rpc.RequestId, reason: str) -> None:
        waiter = self._waiters.pop(request_id, None)
        if waiter is None or waiter.event.is_set() or self.is_closed:
            return
        if request_id not in self.connection.pending:
            return
        self.connection.cancel(request_id, reason)
        with trio.CancelScope(shield=True), trio.move_on_after(CANCEL_SEND_TIMEOUT):
            try:
                await self.flush()
            except TransportClosed:
                pass

    # ------------------------------------------------------------ receiving

    async def _dispatch(self, event: ev.Event) -> None:
        if isinstance(event, ev.ResponseReceived):
            waiter = self._waiters.pop(event.id, None)
            if waiter is not None:
                waiter.result = event.result
                self._wake(waiter)
        elif isinstance(event, ev.ErrorReceived):
            waiter = self._waiters.pop(event.id, None)
            if waiter is not None:
                waiter.error = McpError(event.error.code, event.error.message, event.error.data)
                self._wake(waiter)
        elif isinstance(event, ev.InputRequired):
            waiter = self._waiters.pop(event.id, None)
            if waiter is not None:
                waiter.input_required = event
                self._wake(waiter)
        elif isinstance(event, ev.InvalidAnswer):
            waiter = self._waiters.pop(event.id, None)
            if waiter is not None:
                waiter.error = RemoteProtocolError(f"invalid answer to {event.method}: {event.reason}")
                self._wake(waiter)
        elif isinstance(event, ev.RequestReceived):
            assert self._nursery is not None
            await self.peer_requests.admit(event, self._nursery)  # at the limit: back-pressure
        elif isinstance(event, ev.CancelRequested):
            self.peer_requests.cancel(event.request_id)
        elif isinstance(event, ev.ProgressReceived):
            waiter = self._waiters.get(event.request_id)
            if waiter is not None:
                waiter.deadline.progressed()
                if waiter.on_progress is not None:
                    await self.callbacks.put("progress callback", waiter.on_progress, event)
        elif isinstance(event, ev.NotificationReceived):
            for tap in self.notification_taps:
                tap(event.method, event.params)
            if self.notification_handler is not None:
                await self.callbacks.put(event.method, self.notification_handler, event.method, event.params)
        elif isinstance(event, (ev.Initialized, ev.Discovered, ev.HandshakeFailed)):
            self.handshake = event
            self.initialized.set()
            if not isinstance(event, ev.Initialized):
                self._probe_finished(event)
        elif isinstance(event, ev.LegacyServer):
            self._probe_finished(event)
        elif isinstance(event, ev.RequestLost):
            waiter = self._waiters.pop(event.id, None)
            if waiter is not None:
                waiter.error = event.error
                waiter.event.set()
        elif isinstance(event, ev.RequestReissued):
            self._reissued(event)
        elif isinstance(event, ev.ProtocolIssue):
            self.issues.append(event)
            logger.warning("MCP peer protocol issue (%s): %s", event.kind, event.detail)
        for observer in self.event_observers:
            observer(event)

    def _reissued(self, event: ev.RequestReissued) -> None:
        """The Connection queued a lost request again under a new id: the waiter waits for that."""
        waiter = self._waiters.pop(event.old_id, None)
        if waiter is not None:
            waiter.request_id = event.new_id
            self._waiters[event.new_id] = waiter
            self.outbox.take(None, waiter.header_params)  # the Connection names the old id
            if waiter.on_sent is not None:
                waiter.on_sent(event.new_id)  # e.g. a listen subscription learns its new id
        else:
            self.outbox.take()
        # Not in the reader task: a send may wait for the network.
        assert self._nursery is not None
        self._nursery.start_soon(self._flush_quietly)

    def _probe_finished(self, outcome: ProbeOutcome) -> None:
        if self._probe_done is not None and not self._probe_done.is_set():
            self._probe_outcome = outcome
            self._probe_done.set()

    def _wake(self, waiter: Waiter) -> None:
        waiter.callbacks_before = self.callbacks.accepted
        waiter.event.set()

    async def _flush_quietly(self) -> None:
        try:
            await self.flush()
        except TransportClosed:
            pass
