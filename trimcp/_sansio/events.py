"""Events the Connection reports to its driver.

Theory of operation
-------------------
``Connection.receive_*`` turns what the peer sent into these events, and
``Connection.request_lost`` what a transport said of a request it lost.  Requests
the Connection answers by itself (``ping``, ``logging/setLevel``, methods the
peer may not call) never surface as ``RequestReceived``; everything the
application must act on does.  ``ProtocolIssue`` reports a peer mistake that
was handled (dropped, or answered with an error) so that a harness can count
it and a library can log it: nothing the peer does is silently lost.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from .connection.stateless import Envelope
from .jsonrpc import ErrorObject, RequestId
from .shared_methods import frozen


@frozen
class RequestReceived:
    """The peer asks us something; answer with ``send_response``/``send_error``."""

    id: RequestId
    method: str
    params: dict[str, Any]
    #: Stateless era: the request's own protocol version, client capabilities, ...
    envelope: Envelope | None = None


@frozen
class NotificationReceived:
    method: str
    params: dict[str, Any]


@frozen
class ResponseReceived:
    id: RequestId
    method: str
    result: dict[str, Any]


@frozen
class ErrorReceived:
    id: RequestId
    method: str
    error: ErrorObject


@frozen
class CancelRequested:
    """The peer cancelled a request it had sent us; our answer will be dropped."""

    request_id: RequestId
    reason: str | None


@frozen
class ProgressReceived:
    token: str | int
    progress: float
    total: float | None
    message: str | None
    #: The request of ours that carried the token.
    request_id: RequestId


@frozen
class Initialized:
    """The handshake is over: client after the InitializeResult, server after
    ``notifications/initialized``."""

    protocol_version: str
    peer_info: dict[str, Any]
    peer_capabilities: dict[str, Any]
    instructions: str | None = None


@frozen
class Discovered:
    """Client: the server answered ``server/discover`` and a stateless-era revision
    both sides speak was chosen; the Connection is operating."""

    protocol_version: str
    supported_versions: list[str]
    peer_info: dict[str, Any]
    peer_capabilities: dict[str, Any]
    instructions: str | None
    result: dict[str, Any]


@frozen
class LegacyServer:
    """Client: the ``server/discover`` probe says the server is handshake-era; the
    Connection is IDLE again and ``initialize`` may follow (spec: stdio, Backward
    Compatibility).  ``version`` is a handshake revision the server named, if any."""

    reason: str
    version: str | None = None


@frozen
class InputRequired:
    """Client: the server needs elicitation, sampling or roots answers before it can
    finish request ``id``; re-send ``method`` with ``retry_params``."""

    id: RequestId
    method: str
    params: dict[str, Any]
    input_requests: dict[str, Any]
    request_state: str | None


@frozen
class InvalidAnswer:
    """The answer to our request ``id`` arrived but cannot be used: it is malformed
    (not JSON-RPC, or JSON only a lenient reader reads: invalid UTF-8, NaN, 1e400)
    or breaks the protocol (e.g. an unknown ``resultType``).  The request failed
    locally; no error came from the peer."""

    id: RequestId
    method: str
    reason: str


@frozen
class RequestLost:
    """Our request ``id`` will never be answered (``Connection.request_lost``: its
    transport said so); the waiter fails with ``error``, the transport's own."""

    id: RequestId
    method: str
    error: Exception


@frozen
class RequestReissued:
    """Our request ``old_id`` was lost but is sent again as ``new_id`` (2026-07-28
    Streamable HTTP: a broken stream is answered by re-sending under a new id); the
    waiter goes on waiting, for the new id."""

    old_id: RequestId
    new_id: RequestId


@frozen
class HandshakeFailed:
    """The client could not agree with the server; the Connection is closed."""

    reason: str
    error: ErrorObject | None = None


@frozen
class LogLevelChanged:
    """The client set the server's minimum log level (``logging/setLevel``)."""

    level: str


@frozen
class ProtocolIssue:
    """The peer broke a rule; the Connection handled it.

    ``kind`` is a short stable slug (``parse-error``, ``invalid-message``,
    ``unknown-response-id``, ``progress-not-increasing``, ...).
    """

    kind: str
    detail: str
    raw: Any = None


Event: TypeAlias = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | CancelRequested
    | ProgressReceived
    | Initialized
    | HandshakeFailed
    | LogLevelChanged
    | ProtocolIssue
    | Discovered
    | LegacyServer
    | InputRequired
    | InvalidAnswer
    | RequestLost
    | RequestReissued
)
