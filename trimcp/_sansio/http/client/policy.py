"""What the HTTP client does next: its exchange and stream policies, as data (sans-IO).

Theory of operation
-------------------
The Trio driver (``trimcp/_trio/transports/http``) moves bytes; every decision
about what to do when an HTTP request went well or badly is taken here, from
*facts* it reports, as an *action* it then executes.  Nothing here does I/O,
sleeps or reads a clock: a delay is a number in an action.

**One POST exchange** (``ExchangePolicy``, one per message the session sends;
spec 2025-11-25 basic/transports "Sending Messages to the Server", "Session
Management", "Resumability and Redelivery", "Backwards Compatibility";
2026-07-28 basic/transports/streamable-http).  The driver starts with
``Send``, then reports what happened, until the action ends the exchange:

==========================================  ===============================================
fact                                        action
==========================================  ===============================================
``Unreachable`` (connect refused, DNS,      ``Die`` if the server never answered anything
TLS, connect timeout)                       (the transport is unusable), else ``GiveUp``
                                            with ``TransportClosed`` (it went away)
``Lost`` (reset after sending, no head)     2026-07-28 request: ``Reissue``; else ``GiveUp``
                                            with ``ConnectError``
``Challenged`` (401/403 head)               ``Authorize`` (OAuth, ``max_auth_rounds``),
                                            ``RefreshHeaders`` (a headers helper, once per
                                            exchange, on 401), else ``ReadBody``
``Authorized`` / ``HeadersRefreshed``       ``Send`` again, or ``GiveUp`` with the error
``Read``: answered                          ``Done``
``Read``: ``SessionExpired``                ``Reinitialize`` (once); a second expiry is
                                            ``GiveUp`` with ``SessionExpired``
``Read``: ``FallBackToLegacy``              ``FallBack`` to 2024-11-05 HTTP+SSE
``Read``: ``StreamBroken``                  2026-07-28: ``Reissue`` (at most
                                            ``max_reissues`` times; a ``subscriptions/
                                            listen`` stream after a pause, counting only
                                            breaks in a row); handshake era with an event
                                            id: ``Resume``; else ``GiveUp`` with
                                            ``TransportClosed``
``Read``: ``StreamFailed``                  ``GiveUp``: ``AuthError`` for 401/403, else
                                            ``TransportError`` with the HTTP details
``Read``: 202 to a request                  ``AwaitElsewhere`` (the answer comes on
                                            another stream)
``Read``: ``notifications/initialized``     ``OpenStandalone`` (the standalone GET)
accepted
``Reinitialized`` / ``FellBack``            ``Send`` again, or ``GiveUp``
``Resumed``                                 ``Done``, or ``GiveUp`` with its error
``TimedOut`` (``post_timeout``)             ``GiveUp`` with ``TransportError``
==========================================  ===============================================

``GiveUp`` of a request becomes a ``RequestFailed`` for the session; of a
notification or response, a ``Report`` for the logs.  ``Reissue`` is a
``RequestFailed`` that lets the session send the request again under a new
id (``Connection.reissue``); the new request names the old one in
``SendMeta.reissue_of``, so its exchange starts with the count of re-issues so far.

**One GET stream** (``FollowPolicy``): the handshake era's standalone stream
("Listening for Messages from the Server") and the resumption of a request's
broken stream (GET with ``Last-Event-ID``) are the same loop.  ``Connect``
says when to GET and from which event id.  After a connection that made
progress (a message, a new event id or ``retry``) the next one comes after
exactly the server's ``retry`` time: a server may "poll" this way forever;
fruitless ones count as failures, with growing waits (``ReconnectPolicy``),
and end the stream after ``max_failures`` in a row.  A connection that cannot
even be opened (``Unreachable``) means the server is gone: the stream stops
at once, and a resumption fails its request with ``TransportClosed`` rather
than trying the back-off ladder against a closed port.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, TypeAlias

import attrs

from ...._errors import AuthError, ConnectError, SessionExpired, TransportClosed, TransportError
from . import response as hr
from .plan import MessageKind, Mode, PostPlan

__all__ = [
    "Action",
    "Authorize",
    "Authorized",
    "AwaitElsewhere",
    "Challenged",
    "Connect",
    "Die",
    "Done",
    "ExchangePolicy",
    "FallBack",
    "FellBack",
    "FollowFact",
    "FollowPolicy",
    "GiveUp",
    "HeadersRefreshed",
    "Lost",
    "OpenStandalone",
    "Read",
    "ReadBody",
    "ReconnectPolicy",
    "RefreshHeaders",
    "Reinitialize",
    "Reinitialized",
    "Reissue",
    "Report",
    "Resume",
    "Resumed",
    "Send",
    "Stop",
    "StreamRead",
    "TimedOut",
    "Unreachable",
]

LISTEN: str = "subscriptions/listen"


@attrs.frozen
class ReconnectPolicy:
    """When to reconnect an event stream, and how often to re-issue (see the module docstring).

    After a connection that made progress the client waits exactly the server's
    ``retry`` time (else ``initial_delay``); each fruitless attempt doubles the
    wait, up to ``max_delay``, and ``max_failures`` in a row end the stream.  A
    2026-07-28 request whose stream broke is re-issued at most ``max_reissues``
    times.
    """

    max_failures: int = 5
    initial_delay: float = 1.0
    max_delay: float = 30.0
    max_reissues: int = 2

    def delay(self, failures: int, retry_ms: int | None) -> float:
        """Seconds to wait before the next attempt, after ``failures`` fruitless ones."""
        base = self.initial_delay if retry_ms is None else retry_ms / 1000
        if failures <= 1:
            return base
        return float(min(max(base, self.initial_delay) * 2 ** (failures - 1), self.max_delay))


# ----------------------------------------------------------------------------- facts


@attrs.frozen
class Unreachable:
    """No connection could be opened: nothing reached the server."""

    detail: str
    #: Whether this server ever answered anything on this transport.
    ever_reached: bool = True


@attrs.frozen
class Lost:
    """The connection failed after the request went out, before a response head."""

    detail: str


@attrs.frozen
class Challenged:
    """A 401 or 403 response head; ``oauth_wants``: the OAuth provider would act on it."""

    status: int
    oauth_wants: bool = False


@attrs.frozen
class Authorized:
    """The OAuth provider handled the challenge: ``ok`` to retry; ``error`` when its flow failed."""

    ok: bool
    error: AuthError | None = None


@attrs.frozen
class HeadersRefreshed:
    error: TransportError | None = None


@attrs.frozen
class Read:
    """A POST response was read to its end (or to a verdict)."""

    end: hr.Terminal
    #: Whether the request's answer reached the session (on any stream).
    answered: bool = False
    #: A 202 (or legacy 2xx) to a request: its answer comes on another stream.
    elsewhere: bool = False
    #: A notification or response was accepted.
    accepted: bool = False
    #: How many messages this response carried.
    messages: int = 0


@attrs.frozen
class Reinitialized:
    ok: bool


@attrs.frozen
class FellBack:
    ok: bool


@attrs.frozen
class Resumed:
    """A resumption ended: answered (``error`` is ``None``) or given up."""

    error: TransportError | None = None


@attrs.frozen
class TimedOut:
    seconds: float


ExchangeFact: TypeAlias = (
    Unreachable
    | Lost
    | Challenged
    | Authorized
    | HeadersRefreshed
    | Read
    | Reinitialized
    | FellBack
    | Resumed
    | TimedOut
)


@attrs.frozen
class StreamRead:
    """A GET stream ended (or came to a verdict)."""

    end: hr.Terminal
    messages: int = 0
    last_event_id: str | None = None
    retry_ms: int | None = None
    #: Resumption: whether the request's answer reached the session (on any stream).
    answered: bool = False


FollowFact: TypeAlias = Unreachable | Lost | StreamRead


# ----------------------------------------------------------------------------- actions


@attrs.frozen
class Send:
    """POST the message (again), planned afresh."""


@attrs.frozen
class Authorize:
    """Let the OAuth provider handle this challenge; report ``Authorized``."""

    status: int


@attrs.frozen
class RefreshHeaders:
    """Run the headers helper again; report ``HeadersRefreshed``."""


@attrs.frozen
class ReadBody:
    """Read the response as it is; report ``Read``."""


@attrs.frozen
class Reinitialize:
    """Start a new session (the one of ``generation`` is gone); report ``Reinitialized``."""

    generation: int
    detail: str


@attrs.frozen
class FallBack:
    """Try the 2024-11-05 HTTP+SSE transport; report ``FellBack``."""

    detail: str


@attrs.frozen
class Resume:
    """GET the request's stream again from ``last_event_id``; report ``Resumed``."""

    last_event_id: str
    retry_ms: int | None
    detail: str


@attrs.frozen
class Reissue:
    """After ``delay`` s, let the session send the request again under a new id
    (``error`` is what its waiter gets if it does not)."""

    delay: float
    error: TransportError
    #: What the re-issued request's exchange starts counting from.
    reissues: int


@attrs.frozen
class AwaitElsewhere:
    """Wait (within the deadline) for the answer to arrive on another stream."""


@attrs.frozen
class OpenStandalone:
    """Open the standalone GET stream; the exchange is done."""


@attrs.frozen
class Done:
    """Nothing more to do."""


@attrs.frozen
class GiveUp:
    """The request's answer is lost: fail its waiter with ``error``."""

    error: TransportError | AuthError


@attrs.frozen
class Report:
    """A notification or response could not be delivered: log ``detail``."""

    detail: str


@attrs.frozen
class Die:
    """The transport is unusable (the server was never reached)."""

    reason: str


@attrs.frozen
class Connect:
    """(Re)connect a GET stream after ``after`` s, from ``last_event_id``."""

    after: float
    last_event_id: str | None


@attrs.frozen
class Stop:
    """End the standalone stream (``detail`` for the logs; ``None``: nothing to report)."""

    detail: str | None


Action: TypeAlias = (
    Send
    | Authorize
    | RefreshHeaders
    | ReadBody
    | Reinitialize
    | FallBack
    | Resume
    | Reissue
    | AwaitElsewhere
    | OpenStandalone
    | Done
    | GiveUp
    | Report
    | Die
)
#: The actions that end an exchange (the others lead to a fact to decide on).
ENDING: Final = (Reissue, AwaitElsewhere, OpenStandalone, Done, GiveUp, Report, Die)


# ----------------------------------------------------------------------------- POST


class ExchangePolicy:
    """Decides the next step of one POST exchange (see the module docstring).

    ``plan`` is the exchange's current plan (the driver replaces it before each
    ``Send``); ``reissues``: how often the request was re-issued before this
    exchange; ``max_auth_rounds``: the OAuth provider's limit (0 without one);
    ``headers_helper``: whether a headers helper may be asked again after a 401.
    """

    def __init__(
        self,
        plan: PostPlan,
        reconnect: ReconnectPolicy,
        *,
        reissues: int = 0,
        max_auth_rounds: int = 0,
        headers_helper: bool = False,
    ) -> None:
        self.plan = plan
        self.reconnect = reconnect
        self.reissues = reissues
        self.max_auth_rounds = max_auth_rounds
        self.headers_helper = headers_helper
        self.auth_rounds = 0
        self.helper_retried = False
        self.reinitialized = False
        self._challenge = 0
        #: Why the last Reinitialize / FallBack was decided (for the error if it fails).
        self._why = ""

    @property
    def expects_answer(self) -> bool:
        return self.plan.kind is MessageKind.REQUEST

    @property
    def stateless(self) -> bool:
        return self.plan.stateless_version is not None

    def decide(self, fact: ExchangeFact) -> Action:
        """The next action, given what the last one led to (the table in the module docstring)."""
        return self._STEPS[type(fact)](self, fact)

    # One method per fact, in the order of the table.

    def _unreachable(self, fact: Unreachable) -> Action:
        if not fact.ever_reached:
            return Die(fact.detail)  # the executor's words say it: "cannot connect to ORIGIN: why"
        # It answered before and now refuses: it is gone, as a stdio server that exited.
        return self._fail(TransportClosed, f"the server went away: {fact.detail}")

    def _lost(self, fact: Lost) -> Action:
        if self.expects_answer and self.stateless:
            return self._reissue(0.0, fact.detail)
        return self._fail(ConnectError, fact.detail)

    def _challenged(self, fact: Challenged) -> Action:
        self._challenge = fact.status
        if fact.oauth_wants and self.auth_rounds < self.max_auth_rounds:
            self.auth_rounds += 1
            return Authorize(fact.status)
        if fact.status == 401 and self.headers_helper and not self.helper_retried:
            self.helper_retried = True
            return RefreshHeaders()
        return ReadBody()

    def _authorized(self, fact: Authorized) -> Action:
        if fact.ok:
            return Send()
        if fact.error is not None:
            return self._give_up(fact.error)
        return self._fail(AuthError, f"HTTP {self._challenge}: not authorized")

    def _headers_refreshed(self, fact: HeadersRefreshed) -> Action:
        return Send() if fact.error is None else self._give_up(fact.error)

    def _reinitialized(self, fact: Reinitialized) -> Action:
        if fact.ok:
            return Send()
        return self._fail(SessionExpired, f"the session expired ({self._why}) and re-initializing failed")

    def _fell_back(self, fact: FellBack) -> Action:
        if fact.ok:
            return Send()
        return self._fail(ConnectError, f"{self._why}, and the 2024-11-05 HTTP+SSE transport is not offered either")

    def _resumed(self, fact: Resumed) -> Action:
        return Done() if fact.error is None else self._give_up(fact.error)

    def _timed_out(self, fact: TimedOut) -> Action:
        return self._fail(TransportError, f"no answer to {self.plan.method} within {fact.seconds} s")

    def _read(self, fact: Read) -> Action:
        end, plan = fact.end, self.plan
        if fact.answered:
            return Done()
        if isinstance(end, hr.SessionExpired):
            if self.reinitialized or plan.is_initialize:
                return self._fail(SessionExpired, f"the server dropped the session again ({end.detail})")
            self.reinitialized = True
            self._why = end.detail
            return Reinitialize(plan.generation, end.detail)
        if isinstance(end, hr.FallBackToLegacy):
            self._why = end.detail
            return FallBack(end.detail)
        if isinstance(end, hr.StreamBroken) and self.expects_answer:
            return self._broken(end, fact.messages)
        if isinstance(end, (hr.StreamFailed, hr.StreamRefused)):
            status = end.status
            if status in (401, 403):
                return self._fail(AuthError, end.detail)
            return self._fail(TransportError, end.detail)
        if self.expects_answer:
            if fact.elsewhere:
                return AwaitElsewhere()
            return self._fail(TransportError, f"the exchange for {plan.method} ended without an answer")
        if plan.method == "notifications/initialized" and fact.accepted and plan.mode is Mode.STREAMABLE:
            return OpenStandalone()
        return Done()

    def _broken(self, end: hr.StreamBroken, messages: int) -> Action:
        if self.stateless:
            delay = 0.0
            if self.plan.method == LISTEN:
                # A long-lived stream: count only breaks in a row, and pause before each.
                if messages:
                    self.reissues = 0
                delay = self.reconnect.delay(self.reissues + 1, None)
            return self._reissue(delay, end.detail)
        if self.plan.mode is Mode.STREAMABLE and end.last_event_id:
            return Resume(end.last_event_id, end.retry_ms, end.detail)
        return self._fail(TransportClosed, f"{end.detail}, and the server offered no way to resume it")

    def _reissue(self, delay: float, detail: str) -> Action:
        if self.reissues < self.reconnect.max_reissues:
            return Reissue(delay, TransportClosed(self._where(detail)), self.reissues + 1)
        return self._fail(TransportClosed, f"{detail}; gave up after {self.reissues} re-issues")

    def _where(self, detail: str) -> str:
        # Say where: the error may reach code that talks to several servers.
        url = self.plan.request.url
        return detail if url in detail else f"{detail} ({url})"

    def _fail(self, cls: type[TransportError] | type[AuthError], detail: str) -> Action:
        return self._give_up(cls(self._where(detail)))

    def _give_up(self, error: TransportError | AuthError) -> Action:
        if self.expects_answer:
            return GiveUp(error)
        return Report(f"{self.plan.method or 'response'} was not delivered: {error}")

    #: The table: which method decides after which fact.
    _STEPS: ClassVar[Mapping[type, Callable[[ExchangePolicy, Any], Action]]] = {
        Unreachable: _unreachable,
        Lost: _lost,
        Challenged: _challenged,
        Authorized: _authorized,
        HeadersRefreshed: _headers_refreshed,
        Read: _read,
        Reinitialized: _reinitialized,
        FellBack: _fell_back,
        Resumed: _resumed,
        TimedOut: _timed_out,
    }


# ----------------------------------------------------------------------------- GET


class FollowPolicy:
    """Decides when to (re)connect one GET stream (see the module docstring).

    ``resuming``: the detail of the break of the request stream this resumes
    (``None`` for the standalone stream); ``last_event_id`` / ``retry_ms``
    where it stood.
    """

    def __init__(
        self,
        reconnect: ReconnectPolicy,
        *,
        resuming: str | None = None,
        last_event_id: str | None = None,
        retry_ms: int | None = None,
    ) -> None:
        self.reconnect = reconnect
        self.resuming = resuming
        self.last_event_id = last_event_id
        self.retry_ms = retry_ms
        self.failures = 0

    def start(self) -> Connect:
        # A resumption waits the server's retry time first; the standalone stream opens now.
        after = 0.0 if self.resuming is None else self.reconnect.delay(0, self.retry_ms)
        return Connect(after, self.last_event_id)

    def decide(self, fact: FollowFact) -> Connect | Stop | GiveUp | Done:
        if isinstance(fact, Unreachable):
            return self._end(f"the server is gone ({fact.detail})")
        if isinstance(fact, Lost):
            return self._fruitless(f"connecting failed ({fact.detail})")
        end = fact.end
        if self.resuming is not None and fact.answered:
            return Done()
        if isinstance(end, hr.StreamRefused) and end.status == 405 and self.resuming is None:
            return Stop(None)  # the server offers no standalone stream: fine
        if isinstance(end, (hr.SessionExpired, hr.StreamFailed, hr.StreamRefused)):
            return self._end(f"it stopped: {end.detail}", expired=isinstance(end, hr.SessionExpired))
        progress = (
            fact.messages > 0
            or fact.last_event_id != self.last_event_id
            or (fact.retry_ms is not None and fact.retry_ms != self.retry_ms)
        )
        self.last_event_id = fact.last_event_id or self.last_event_id
        self.retry_ms = fact.retry_ms
        if progress:
            self.failures = 0
            return Connect(self.reconnect.delay(0, self.retry_ms), self.last_event_id)
        return self._fruitless("it keeps ending with nothing new")

    def _fruitless(self, why: str) -> Connect | Stop | GiveUp:
        self.failures += 1
        if self.failures >= self.reconnect.max_failures:
            return self._end(why)
        return Connect(self.reconnect.delay(self.failures, self.retry_ms), self.last_event_id)

    def _end(self, why: str, *, expired: bool = False) -> Stop | GiveUp:
        if self.resuming is None:
            return Stop(f"gave up the standalone GET stream: {why}")
        detail = f"{self.resuming}; resuming it failed: {why}"
        if expired:
            return GiveUp(SessionExpired(detail))
        return GiveUp(TransportClosed(detail))
