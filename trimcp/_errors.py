"""One error tree for all of trimcp.

``TrimcpError`` is the root.  ``ProtocolError`` splits, as in h11, into
``LocalProtocolError`` (this side misused the API or would break the spec) and
``RemoteProtocolError`` (the peer broke the spec; ``reply_hint`` is the JSON-RPC
error object to answer with, when there is a request to answer).  ``McpError``
is a JSON-RPC error *answer* from the peer.  Transport failures are
``TransportError``; a request that ran out of time is ``RequestTimeout``.
"""

from __future__ import annotations

from typing import Any


class TrimcpError(Exception):
    """Base class of every error trimcp raises on purpose."""


class ProtocolError(TrimcpError):
    """The MCP / JSON-RPC rules were broken, by us or by the peer."""


class LocalProtocolError(ProtocolError):
    """This side asked for something the protocol (or the connection state) forbids."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol forbids.

    ``reply_hint`` is a JSON-RPC error object (``{"code", "message"[, "data"]}``)
    suitable as the answer to the offending request, or ``None``.
    """

    def __init__(self, message: str, *, reply_hint: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.reply_hint = reply_hint


class PaginationError(RemoteProtocolError):
    """A ``*/list`` pagination went wrong on the peer's side: a cursor repeated, or more
    pages than the page cap (``method`` is the list method)."""

    def __init__(self, method: str, message: str) -> None:
        super().__init__(message)
        self.method = method


class InputRoundsExceeded(RemoteProtocolError):
    """2026-07-28: the server kept answering ``input_required`` past the round limit."""

    def __init__(self, method: str, rounds: int) -> None:
        super().__init__(f"{method}: the server kept asking for input after {rounds} rounds")
        self.method = method
        self.rounds = rounds


class McpError(TrimcpError):
    """The peer answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.data = data


class TransportError(TrimcpError):
    """The byte/message transport failed."""


class ConnectError(TransportError):
    """The transport could not be established (spawn failed, refused, timed out)."""


class ConnectTimeout(ConnectError):
    """The opening request (``server/discover`` or ``initialize``) got no answer within the
    connect deadline: the peer may be hung, or only slower than the deadline allowed.
    ``stderr_tail``: what a stdio server last wrote to its stderr (also in the message)."""

    def __init__(self, message: str, *, phase: str, seconds: float, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.phase = phase
        self.seconds = seconds
        self.stderr_tail = stderr_tail


class TransportClosed(TransportError):
    """The transport closed (peer exited, stream ended) while work was pending.

    ``returncode`` and ``stderr_tail`` are filled in by process transports so that
    the error explains *why* the peer went away (the message says how the process
    ended; the stderr tail follows it).
    """

    def __init__(
        self,
        message: str,
        *,
        returncode: int | None = None,
        stderr_tail: str = "",
    ) -> None:
        # The exit status is the creator's to say in words ("exited with status 3", "was
        # killed by SIGKILL"): appended here as well, it said it twice.
        detail = message
        if stderr_tail:
            detail += "\n--- last stderr lines ---\n" + stderr_tail
        super().__init__(detail)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class SessionExpired(TransportError):
    """The server forgot our session (HTTP 404 on a session id)."""


class RequestTimeout(TrimcpError):
    """A request got no answer within its deadline (the peer was told to cancel it).

    ``seconds`` is that deadline, when one limit ended the wait (a caller that reports the
    timeout, as ``trimcp check`` does, need not read it out of the message)."""

    def __init__(self, message: str, *, seconds: float | None = None) -> None:
        super().__init__(message)
        self.seconds = seconds


class TaskCancelled(TrimcpError):
    """An ext-tasks task ended ``cancelled`` (by us, the server, or someone else)."""

    def __init__(self, task_id: str, message: str | None = None) -> None:
        super().__init__(f"task {task_id} was cancelled" + (f": {message}" if message else ""))
        self.task_id = task_id
        self.status_message = message


class AuthError(TrimcpError):
    """Authorization is required or failed."""
