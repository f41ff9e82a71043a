"""Admission: what each side may send and accept, in each state, in both eras.

Theory of operation
-------------------
Every rule on which requests and notifications a side may send or take - given
its role, the lifecycle state, the era and the revision - is here, as tables
where it can be; the Connection asks and acts on the verdict.  Bookkeeping
checks (unknown or duplicate ids, progress tokens) live with the request tables
(requests.py); the stateless result rules with the envelope (stateless.py).
Nothing at all is taken once CLOSED: the Connection reports ``after-close``.

Handshake era (spec: basic/lifecycle).  ``SEND_ALLOWED`` and
``RECEIVE_ALLOWED`` say which *requests* each role may send or accept in each
lifecycle state: only ``ping`` may precede the initialize exchange, a server
accepts anything once it has answered ``initialize`` (clients pipeline right
after the result), and ``ANY`` means every method the revision has.
``initialize`` itself is taken only where ``INITIALIZE_ACCEPTED`` says, and the
``LIFECYCLE_REQUESTS`` are judged by these tables alone.  Any other request
that some revision defines must exist in the one in play for its sender's role
(revisions.py; a method no revision knows, ``vendor/x``, is the application's
business) and, when a capability gates it, the receiver must have advertised
that capability.  A client may also send the methods an extension it declared
adds (``extensions.py``; ext-tasks' ``tasks/get`` ...) once operating.
``NOTIFY_EARLY`` lists the notifications a side may send before it operates; a
notification some revision defines must exist in the one in play and, when gated, the sender
must have advertised the capability (``own_gate``).  Notifications are taken
in any state, except those ``NOTIFY_RECEIVE_STATES`` restricts
(``notifications/initialized`` ends a server's INITIALIZING, nothing more).

Stateless era (spec: 2026-07-28 basic/versioning, server/discover).  A request
whose ``_meta`` names a protocol version is enveloped: a server takes it
whatever its handshake state and judges it by the revision the envelope names.
An invalid envelope is ``INVALID_ENVELOPE`` (-32602); a revision the server
does not speak is ``UNSUPPORTED_VERSION`` (-32022, naming the ones it does).
A server that speaks a stateless revision refuses a request without an
envelope in ``ENVELOPE_REQUIRED_STATES`` (IDLE: no handshake session exists)
with ``MISSING_ENVELOPE`` (-32602), except the requests a handshake-era client
starts with (``ENVELOPE_EXEMPT``).  While a server answers enveloped requests
it may notify as if operating, in any revision it speaks of that era.

A refusal names its ``Rule``: the ``ProtocolIssue`` kind the Connection reports
and the JSON-RPC error code it answers with.  Sending problems are
``LocalProtocolError`` sentences (the application misused the API).

Batches (spec: 2025-03-26 basic, "MUST support receiving JSON-RPC batches";
later revisions removed them): ``refuse_batch`` takes a batch only once a
revision with ``Revision.batches`` is negotiated, and never one holding
``initialize``.  A refused batch's requests are answered with -32600 each; its
answers still reach their waiters (refusing them would only lose them) and
its notifications are dropped, both reported.

The probe rule (spec: server/discover, -32022 names the server's revisions): a
client sends at most ``MAX_PROBES`` ``server/discover`` probes per negotiation,
and the same revision at most ``SAME_VERSION_PROBES`` times.  The logging rule
(spec: utilities/logging): ``may_log``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .. import extensions
from .. import jsonrpc as rpc
from ..revisions import REVISIONS, Era, Revision, get_revision, has_capability, own_gate, peer_gate
from ..shared_methods import frozen
from . import stateless as sl
from .lifecycle import CLOSED, DISCOVERING, IDLE, INITIALIZING, OPERATING, Role, State
from .state import ConnectionState


class _Any:
    def __contains__(self, item: object) -> bool:
        return True

    def __repr__(self) -> str:
        return "ANY"


ANY: Final = _Any()
_Allowed = frozenset[str] | _Any

# ------------------------------------------------------------------ the tables

#: Requests this side may *send* in each state.
SEND_ALLOWED: Final[Mapping[Role, Mapping[type[State], _Allowed]]] = {
    Role.CLIENT: {
        IDLE: frozenset({"initialize", "ping", "server/discover"}),
        DISCOVERING: frozenset({"server/discover"}),
        INITIALIZING: frozenset({"ping"}),
        OPERATING: ANY,
        CLOSED: frozenset(),
    },
    Role.SERVER: {IDLE: frozenset({"ping"}), INITIALIZING: frozenset({"ping"}), OPERATING: ANY, CLOSED: frozenset()},
}
#: Notifications this side may send before OPERATING (afterwards: any).
NOTIFY_EARLY: Final[Mapping[Role, frozenset[str]]] = {
    Role.CLIENT: frozenset({"notifications/cancelled", "notifications/progress"}),
    Role.SERVER: frozenset({"notifications/cancelled", "notifications/progress", "notifications/message"}),
}
#: Handshake-era requests (no envelope) this side *accepts* in each state.
RECEIVE_ALLOWED: Final[Mapping[Role, Mapping[type[State], _Allowed]]] = {
    Role.CLIENT: {
        IDLE: frozenset({"ping"}),
        DISCOVERING: frozenset({"ping"}),
        INITIALIZING: frozenset({"ping"}),
        OPERATING: ANY,
        CLOSED: frozenset(),
    },
    Role.SERVER: {IDLE: frozenset({"initialize", "ping"}), INITIALIZING: ANY, OPERATING: ANY, CLOSED: frozenset()},
}
#: Where ``initialize`` may arrive at all: a server that has not yet answered one.
INITIALIZE_ACCEPTED: Final[Mapping[Role, frozenset[type[State]]]] = {
    Role.CLIENT: frozenset(),
    Role.SERVER: frozenset({IDLE}),
}
#: Requests the lifecycle alone judges (negotiation answers initialize, the
#: Connection ping): no revision or capability check applies to them.
LIFECYCLE_REQUESTS: Final = frozenset({"initialize", "ping"})
#: Notifications this side accepts in the listed states only (others: in any state).
NOTIFY_RECEIVE_STATES: Final[Mapping[Role, Mapping[str, frozenset[type[State]]]]] = {
    Role.CLIENT: {},
    Role.SERVER: {"notifications/initialized": frozenset({INITIALIZING})},
}
#: States in which a server speaking a stateless revision requires the envelope:
#: without a handshake session, an unenveloped request can only be a 2026-07-28
#: request that forgot it.
ENVELOPE_REQUIRED_STATES: Final = frozenset({IDLE})
#: ... except for the requests a handshake-era client starts with.
ENVELOPE_EXEMPT: Final = frozenset({"initialize", "ping"})

#: The probe rule.
MAX_PROBES: Final = 3
SAME_VERSION_PROBES: Final = 2

_ALL_REQUESTS: Final = frozenset().union(*(r.client_requests | r.server_requests for r in REVISIONS.values()))
_ALL_NOTIFICATIONS: Final = frozenset().union(
    *(r.client_notifications | r.server_notifications for r in REVISIONS.values())
)

# ------------------------------------------------------------------ refusals


@frozen
class Rule:
    """One admission rule as the peer sees it when it is broken."""

    #: The ``ProtocolIssue`` kind (a stable slug).
    kind: str
    #: The JSON-RPC error code answered, or None when nothing is answered (a notification).
    code: int | None
    #: Whether the Connection reports a ``ProtocolIssue``: not for a -32022, which is an
    #: ordinary step of version negotiation rather than a mistake.
    reported: bool = True


MISSING_ENVELOPE: Final = Rule("missing-envelope", rpc.INVALID_PARAMS)
INVALID_ENVELOPE: Final = Rule("invalid-envelope", rpc.INVALID_PARAMS)
UNSUPPORTED_VERSION: Final = Rule("unsupported-version", rpc.UNSUPPORTED_PROTOCOL_VERSION, reported=False)
NOT_NOW: Final = Rule("request-before-initialize", rpc.INVALID_REQUEST)
UNEXPECTED_INITIALIZE: Final = Rule("unexpected-initialize", rpc.INVALID_REQUEST)
NOT_IN_REVISION: Final = Rule("method-not-in-revision", rpc.METHOD_NOT_FOUND)
NOT_ADVERTISED: Final = Rule("capability-not-advertised", rpc.METHOD_NOT_FOUND)
UNEXPECTED_INITIALIZED: Final = Rule("unexpected-initialized", None)
BATCH_NOT_IN_REVISION: Final = Rule("batch-not-in-revision", rpc.INVALID_REQUEST)


@frozen
class Refused:
    rule: Rule
    message: str
    data: Any = None

    def error(self) -> rpc.ErrorObject:
        assert self.rule.code is not None
        return rpc.ErrorObject(self.rule.code, self.message, self.data)


# ------------------------------------------------------------------ receiving


def refuse_request(cs: ConnectionState, method: str, own_capabilities: dict[str, Any]) -> Refused | None:
    """Why a request without an envelope may not be taken now, or None to take it."""
    role, state = cs.role, cs.lifecycle
    if (
        role is Role.SERVER
        and state in ENVELOPE_REQUIRED_STATES
        and method not in ENVELOPE_EXEMPT
        and cs.versions_of(Era.STATELESS)
    ):
        return Refused(
            MISSING_ENVELOPE,
            f"missing _meta[{sl.PROTOCOL_VERSION_KEY!r}]: stateless-era requests carry their "
            "protocol version, client capabilities and identity",
        )
    if method not in RECEIVE_ALLOWED[role][state]:
        return Refused(NOT_NOW, f"{method!r} not allowed when the session is {state!r}")
    if method == "initialize" and state not in INITIALIZE_ACCEPTED[role]:
        return Refused(UNEXPECTED_INITIALIZE, f"unexpected initialize (role={role.value}, state={state!r})")
    if method in LIFECYCLE_REQUESTS:
        return None
    return refuse_in_revision(method, cs.revision, cs.peer_role, own_capabilities)


def admit_envelope(params: dict[str, Any], cs: ConnectionState, log_levels: tuple[str, ...]) -> sl.Envelope | Refused:
    """Server: the envelope of a stateless-era request, or why it is refused.  The
    request's method is then judged by ``refuse_in_revision`` at the envelope's revision."""
    envelope = sl.read_envelope(params, log_levels)
    if isinstance(envelope, str):
        return Refused(INVALID_ENVELOPE, envelope)
    if envelope.protocol_version not in cs.versions_of(Era.STATELESS):
        err = sl.unsupported_version_error(envelope.protocol_version, cs.supported_versions)
        return Refused(UNSUPPORTED_VERSION, err.message, err.data)
    return envelope


def refuse_in_revision(
    method: str, revision: Revision, sender: Role, own_capabilities: dict[str, Any]
) -> Refused | None:
    """Why ``method`` from ``sender`` may not be taken in ``revision``: the revision
    lacks it, or it needs a capability we never advertised.  None to take it."""
    if sender is Role.CLIENT and extensions.admits(method, revision.name, own_capabilities):
        return None  # an extension we advertise adds it; the server gates it per request
    if method in _ALL_REQUESTS and method not in revision.requests_from(sender):
        return Refused(NOT_IN_REVISION, f"method not found: {method}")
    if sender is Role.SERVER and revision.era is Era.STATELESS and method in _ALL_REQUESTS:
        # The revision lists them as what a server may ask for, but only inside an
        # InputRequiredResult: a server MUST NOT send them as requests (spec: mrtr).
        return Refused(
            NOT_IN_REVISION,
            f"method not found: {method} (in {revision.name} a server asks "
            "for it inside an InputRequiredResult, never as a request)",
        )
    gate = peer_gate(method, revision)
    if gate is not None and not has_capability(own_capabilities, gate):
        # The peer called a feature we never advertised.
        return Refused(NOT_ADVERTISED, f"method not found: {method} (capability {'.'.join(gate)} not advertised)")
    return None


def refuse_batch(cs: ConnectionState, messages: list[rpc.Message]) -> Refused | None:
    """Why a JSON-RPC batch of ``messages`` may not be taken, or None to take it."""
    if any(isinstance(m, rpc.Request) and m.method == "initialize" for m in messages):
        return Refused(BATCH_NOT_IN_REVISION, "initialize must not be part of a JSON-RPC batch")
    version = cs.protocol_version
    if version is None or not get_revision(version).batches:
        where = f"revision {version}" if version else "a session before negotiation"
        return Refused(BATCH_NOT_IN_REVISION, f"JSON-RPC batches are not part of {where}")
    return None


def refuse_notification(cs: ConnectionState, method: str) -> Refused | None:
    """Why a notification means nothing now (it is reported, never answered), or None."""
    states = NOTIFY_RECEIVE_STATES[cs.role].get(method)
    if states is not None and cs.lifecycle not in states:
        return Refused(UNEXPECTED_INITIALIZED, f"{method} in state {cs.lifecycle!r}")
    return None


# ------------------------------------------------------------------ sending


def send_request_problem(
    cs: ConnectionState, method: str, own_capabilities: Mapping[str, Any] | None = None
) -> str | None:
    """Why we may not send request ``method`` now, or None."""
    if method not in SEND_ALLOWED[cs.role][cs.lifecycle]:
        return f"can't send {method!r} when role={cs.role.value} and state={cs.lifecycle!r}"
    revision = cs.revision
    if (
        cs.role is Role.CLIENT
        and cs.lifecycle is OPERATING
        and extensions.admits(method, revision.name, own_capabilities)
    ):
        return None  # a method of an extension we declared (e.g. ext-tasks' tasks/get)
    # ``revision`` is always one of the candidates (the only one once negotiated): asking it
    # first spares the general case on every request sent.
    if (
        method in _ALL_REQUESTS
        and method not in revision.requests_from(cs.role)
        and not any(method in r.requests_from(cs.role) for r in cs.candidate_revisions())
    ):
        return f"a {cs.role.value} can't send {method!r} in revision {revision.name}"
    gate = peer_gate(method, revision)
    if gate is not None and cs.lifecycle is OPERATING and not has_capability(cs.peer_capabilities, gate):
        return f"the peer did not advertise the {'.'.join(gate)} capability needed for {method!r}"
    return None


def send_notification_problem(cs: ConnectionState, method: str, own_capabilities: dict[str, Any]) -> str | None:
    """Why we may not send notification ``method`` now, or None."""
    if cs.lifecycle is CLOSED:
        return f"can't send {method!r}: the connection is closed"
    operating = cs.lifecycle is OPERATING or cs.serves_stateless
    if not operating and method not in NOTIFY_EARLY[cs.role]:
        return f"can't send {method!r} when role={cs.role.value} and state={cs.lifecycle!r}"
    if method in _ALL_NOTIFICATIONS:
        revisions = cs.candidate_revisions()
        if cs.serves_stateless:
            # Each enveloped request carries its own (stateless) revision.
            revisions += [get_revision(v) for v in cs.versions_of(Era.STATELESS)]
        if not any(method in r.notifications_from(cs.role) for r in revisions):
            return f"a {cs.role.value} can't send {method!r} in revision {cs.revision.name}"
    gate = own_gate(method)
    if gate is not None and not has_capability(own_capabilities, gate):
        return f"sending {method!r} requires advertising the {'.'.join(gate)} capability"
    return None


# ------------------------------------------------------------------ the probe rule


def may_probe_again(attempts: int, last_version: str | None, retry_version: str | None) -> bool:
    """Whether a -32022 that names ``retry_version`` earns another ``server/discover``.

    The same revision once more is allowed (the server may have refused for a
    passing reason), never a loop."""
    if retry_version is None or attempts >= MAX_PROBES:
        return False
    return retry_version != last_version or attempts < SAME_VERSION_PROBES


# ------------------------------------------------------------------ logging


def may_log(level: str, session_level: str | None, envelope: sl.Envelope | None, log_levels: tuple[str, ...]) -> bool:
    """Server: whether a log message at ``level`` may be sent (spec: utilities/logging).

    Handshake era: it must reach the level the client set with ``logging/setLevel``
    (none set: everything passes).  Stateless era: the request's envelope carries the
    level; without one, no log messages for that request."""
    threshold = session_level
    if envelope is not None:
        if envelope.log_level is None:
            return False
        threshold = envelope.log_level
    return threshold is None or log_levels.index(level) >= log_levels.index(threshold)
