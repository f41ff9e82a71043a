"""The MCP handshake-era lifecycle as data (h11 style).

Theory of operation
-------------------
A Connection's lifecycle state moves only through ``TRANSITIONS``:
``{role: {state: {lifecycle_event: new_state}}}``.  A move absent from the
table is a protocol error; ``transition`` turns the KeyError into a
``LocalProtocolError`` naming role, state and event.

The client's 2026-07-28 probe (``server/discover``) has its own state,
DISCOVERING, whose answer leads to OPERATING (stateless era), back to IDLE
(a handshake-era server: ``initialize`` follows) or to CLOSED.

Separately, ``SEND_ALLOWED`` and ``RECEIVE_ALLOWED`` say which *requests*
each side may send or accept in a state before the session is operating
(spec, Lifecycle: only ``ping`` may precede the initialize exchange; the
server sends only pings and logging before ``notifications/initialized``).
``ANY`` means every method the revision has.
"""

from __future__ import annotations

import enum
from typing import Final, Mapping

from ..._errors import LocalProtocolError


class Role(enum.Enum):
    CLIENT = "client"
    SERVER = "server"


class _Sentinel(type):
    def __repr__(cls) -> str:
        return cls.__name__


class State(metaclass=_Sentinel):
    """Base class of the state sentinels."""


class IDLE(State):
    """Nothing exchanged yet."""


class INITIALIZING(State):
    """Client: initialize sent, no answer yet.  Server: initialize answered,
    ``notifications/initialized`` not yet received."""


class DISCOVERING(State):
    """Client: ``server/discover`` sent (2026-07-28 era probe), no answer yet."""


class OPERATING(State):
    """Normal operation."""


class CLOSED(State):
    """Finished; nothing more may be sent."""


class LifecycleEvent(enum.Enum):
    SEND_INITIALIZE = "send initialize"
    RECV_INITIALIZE = "receive initialize"
    RECV_INIT_RESULT = "receive initialize result"
    RECV_INIT_FAILURE = "receive initialize failure"
    RECV_INITIALIZED = "receive notifications/initialized"
    SEND_DISCOVER = "send server/discover"
    RECV_DISCOVER_RESULT = "receive a usable DiscoverResult"
    RECV_LEGACY_ANSWER = "learn the server is handshake-era"
    RECV_DISCOVER_FAILURE = "receive discover failure"
    CLOSE = "close"


_E = LifecycleEvent
TRANSITIONS: Final[Mapping[Role, Mapping[type[State], Mapping[LifecycleEvent, type[State]]]]] = {
    Role.CLIENT: {
        IDLE: {_E.SEND_INITIALIZE: INITIALIZING, _E.SEND_DISCOVER: DISCOVERING, _E.CLOSE: CLOSED},
        # A discover answer decides the era: stateless (operate at once), handshake
        # (back to IDLE, then initialize), or none we share (closed).
        DISCOVERING: {
            _E.SEND_DISCOVER: DISCOVERING, _E.RECV_DISCOVER_RESULT: OPERATING,
            _E.RECV_LEGACY_ANSWER: IDLE, _E.RECV_DISCOVER_FAILURE: CLOSED, _E.CLOSE: CLOSED,
        },
        INITIALIZING: {_E.RECV_INIT_RESULT: OPERATING, _E.RECV_INIT_FAILURE: CLOSED, _E.CLOSE: CLOSED},
        OPERATING: {_E.CLOSE: CLOSED},
        CLOSED: {_E.CLOSE: CLOSED},
    },
    Role.SERVER: {
        IDLE: {_E.RECV_INITIALIZE: INITIALIZING, _E.CLOSE: CLOSED},
        INITIALIZING: {_E.RECV_INITIALIZED: OPERATING, _E.CLOSE: CLOSED},
        OPERATING: {_E.CLOSE: CLOSED},
        CLOSED: {_E.CLOSE: CLOSED},
    },
}


def transition(role: Role, state: type[State], event: LifecycleEvent) -> type[State]:
    try:
        return TRANSITIONS[role][state][event]
    except KeyError:
        raise LocalProtocolError(
            f"can't handle event {event.value!r} when role={role.value} and state={state!r}"
        ) from None


class _Any:
    def __contains__(self, item: object) -> bool:
        return True

    def __repr__(self) -> str:
        return "ANY"


ANY: Final = _Any()
_Allowed = frozenset[str] | _Any

#: Requests this side may *send* in each state.
SEND_ALLOWED: Final[Mapping[Role, Mapping[type[State], _Allowed]]] = {
    Role.CLIENT: {IDLE: frozenset({"initialize", "ping", "server/discover"}),
                  DISCOVERING: frozenset({"server/discover"}), INITIALIZING: frozenset({"ping"}),
                  OPERATING: ANY, CLOSED: frozenset()},
    Role.SERVER: {IDLE: frozenset({"ping"}), INITIALIZING: frozenset({"ping"}),
                  OPERATING: ANY, CLOSED: frozenset()},
}
#: Notifications this side may send before OPERATING (afterwards: any).
NOTIFY_EARLY: Final[Mapping[Role, frozenset[str]]] = {
    Role.CLIENT: frozenset({"notifications/cancelled", "notifications/progress"}),
    Role.SERVER: frozenset({"notifications/cancelled", "notifications/progress", "notifications/message"}),
}
#: Requests this side *accepts* in each state.  A server accepts any request
#: once it has answered initialize: clients pipeline right after the result.
RECEIVE_ALLOWED: Final[Mapping[Role, Mapping[type[State], _Allowed]]] = {
    Role.CLIENT: {IDLE: frozenset({"ping"}), DISCOVERING: frozenset({"ping"}),
                  INITIALIZING: frozenset({"ping"}), OPERATING: ANY, CLOSED: frozenset()},
    # Stateless-era requests (with the _meta envelope) are accepted in every state
    # but CLOSED; this table governs handshake-era requests only.
    Role.SERVER: {IDLE: frozenset({"initialize", "ping"}), INITIALIZING: ANY,
                  OPERATING: ANY, CLOSED: frozenset()},
}
