"""The MCP lifecycle as data (h11 style): the states and the moves between them.

Theory of operation
-------------------
Spec: basic/lifecycle (handshake era) and basic/versioning, server/discover
(2026-07-28).  A Connection's lifecycle state moves only through
``TRANSITIONS``: ``{role: {state: {lifecycle_event: new_state}}}``.  A move
absent from the table is a protocol error; ``transition`` turns the KeyError
into a ``LocalProtocolError`` naming role, state and event.  States are
sentinels (classes whose repr is their name).

Handshake era: a client goes IDLE -> INITIALIZING (initialize sent) ->
OPERATING (a usable InitializeResult); a server IDLE -> INITIALIZING
(initialize answered) -> OPERATING (``notifications/initialized`` received).
The client's 2026-07-28 probe (``server/discover``) has its own state,
DISCOVERING, whose answer leads to OPERATING (stateless era), back to IDLE
(a handshake-era server: ``initialize`` follows) or to CLOSED.  A stateless-era
*server* has no state of its own: it takes each enveloped request as it comes,
in any state but CLOSED (``admission.py``), and so never leaves IDLE for them.

A server run as replicas (issue 30) may receive the requests of a session
that another replica negotiated: that replica's record of the handshake is
*adopted* (IDLE -> INITIALIZING, ``ADOPT_SESSION``), and then
``notifications/initialized`` - received here or, as the record says,
elsewhere - moves it to OPERATING as usual.

What each side may send or accept in each state, in both eras, is the other
half of the lifecycle: ``admission.py``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from ..._errors import LocalProtocolError


class Role(enum.Enum):
    """Which side of a connection this is: the client (it opens) or the server."""

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
    RECV_INIT_STATELESS = "learn from initialize's refusal that the server is stateless-era"
    RECV_INITIALIZED = "receive notifications/initialized"
    SEND_DISCOVER = "send server/discover"
    RECV_DISCOVER_RESULT = "receive a usable DiscoverResult"
    RECV_LEGACY_ANSWER = "learn the server is handshake-era"
    RECV_DISCOVER_FAILURE = "receive discover failure"
    ADOPT_SESSION = "adopt a session another replica negotiated"
    CLOSE = "close"


_E = LifecycleEvent
TRANSITIONS: Final[Mapping[Role, Mapping[type[State], Mapping[LifecycleEvent, type[State]]]]] = {
    Role.CLIENT: {
        IDLE: {_E.SEND_INITIALIZE: INITIALIZING, _E.SEND_DISCOVER: DISCOVERING, _E.CLOSE: CLOSED},
        # A discover answer decides the era: stateless (operate at once), handshake
        # (back to IDLE, then initialize), or none we share (closed).
        DISCOVERING: {
            _E.SEND_DISCOVER: DISCOVERING,
            _E.RECV_DISCOVER_RESULT: OPERATING,
            _E.RECV_LEGACY_ANSWER: IDLE,
            _E.RECV_DISCOVER_FAILURE: CLOSED,
            _E.CLOSE: CLOSED,
        },
        # A dual-era client whose probe went unanswered in time (a server still starting)
        # learns from -32022 to initialize that the server is stateless after all: IDLE,
        # then server/discover again.
        INITIALIZING: {
            _E.RECV_INIT_RESULT: OPERATING,
            _E.RECV_INIT_FAILURE: CLOSED,
            _E.RECV_INIT_STATELESS: IDLE,
            _E.CLOSE: CLOSED,
        },
        OPERATING: {_E.CLOSE: CLOSED},
        CLOSED: {_E.CLOSE: CLOSED},
    },
    Role.SERVER: {
        IDLE: {_E.RECV_INITIALIZE: INITIALIZING, _E.ADOPT_SESSION: INITIALIZING, _E.CLOSE: CLOSED},
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
