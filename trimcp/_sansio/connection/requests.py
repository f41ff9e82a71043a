"""The request tables: our requests awaiting answers, the peer's awaiting ours.

Theory of operation
-------------------
JSON-RPC pairs an answer with its request by id (spec: basic, Requests: a
string or an integer the requestor never used before in the session; ours come
from a counter, and a peer's id already awaiting our answer is refused).

``PendingTable`` holds *our* requests: it allocates ids, maps each pending id
to its method, params and progress token, and knows which id owns which
progress token (spec: utilities/progress).  A request we give up on - cancelled
(spec: utilities/cancellation: "the sender MUST ignore a late response"), an
abandoned probe, or re-issued under a new id (2026-07-28 Streamable HTTP: a
broken stream is answered by re-sending with a new id) - is *retired into the
cancelled memory*: its late answer is recognised, dropped and counted instead
of being reported as unknown.  That memory is bounded: the oldest ids are
forgotten first.

Progress travels on these tables both ways: the peer's progress notifications
are matched to our pending request by token (a value that does not grow is
reported), and ours are sent only for a live token of the peer's, growing.

``IncomingTable`` holds the *peer's* requests until we answer them, so that
the peer's cancellation suppresses our answer (the receiver SHOULD NOT answer
a cancelled request) and our progress goes only to a live token.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, Final

import attrs

from ..._errors import LocalProtocolError
from .. import jsonrpc as rpc
from ..events import CancelRequested, Event, ProgressReceived, ProtocolIssue
from .stateless import Envelope

#: How many retired request ids are remembered to recognise late answers.
CANCELLED_MEMORY: Final = 4096


@attrs.define
class PendingRequest:
    method: str
    progress_token: str | int | None = None
    last_progress: float | None = None
    #: Kept for a stateless-era retry (multi-round-trip input) and for a re-issue.
    params: dict[str, Any] | None = None


class PendingTable:
    """Our requests still waiting for an answer, and the ids we stopped waiting for."""

    def __init__(self, cancelled_memory: int = CANCELLED_MEMORY) -> None:
        self.requests: dict[rpc.RequestId, PendingRequest] = {}
        self._next_id = 0
        self._token_owner: dict[str | int, rpc.RequestId] = {}
        self._cancelled: OrderedDict[rpc.RequestId, None] = OrderedDict()
        self._memory = cancelled_memory

    def __contains__(self, request_id: object) -> bool:
        return request_id in self.requests

    def __iter__(self) -> Iterator[rpc.RequestId]:
        return iter(list(self.requests))

    def get(self, request_id: rpc.RequestId) -> PendingRequest | None:
        return self.requests.get(request_id)

    def token_in_use(self, token: str | int) -> bool:
        return token in self._token_owner

    def add(self, method: str, params: dict[str, Any] | None, token: str | int | None) -> rpc.RequestId:
        """Record a new request under a fresh id and return the id."""
        request_id = self._next_id
        self._next_id += 1
        self.requests[request_id] = PendingRequest(method, token, params=params)
        if token is not None:
            self._token_owner[token] = request_id
        return request_id

    def retire(self, request_id: rpc.RequestId) -> PendingRequest | None:
        """Stop waiting for ``request_id`` (answered, or forgotten); None if not pending."""
        pending = self.requests.pop(request_id, None)
        if pending is not None and pending.progress_token is not None:
            self._token_owner.pop(pending.progress_token, None)
        return pending

    def retire_unanswered(self, request_id: rpc.RequestId) -> PendingRequest | None:
        """Stop waiting for ``request_id`` and drop the answer should it still come."""
        pending = self.retire(request_id)
        if pending is not None:
            self._cancelled[request_id] = None
            while len(self._cancelled) > self._memory:
                self._cancelled.popitem(last=False)
        return pending

    def reissue(self, request_id: rpc.RequestId) -> rpc.RequestId:
        """Move pending ``request_id`` to a fresh id (same method, params and progress
        token) and retire the old id; KeyError if it is not pending."""
        old = self.requests[request_id]
        self.retire_unanswered(request_id)
        # The peer sees a new request, whose progress starts afresh.
        return self.add(old.method, old.params, old.progress_token)

    def receive_progress(self, note: rpc.Notification) -> list[Event]:
        """The peer reports progress on one of our requests (spec: utilities/progress)."""
        params = note.params or {}
        token, progress = params.get("progressToken"), params.get("progress")
        owner = self._token_owner.get(token) if rpc.is_valid_id(token) else None  # type: ignore[arg-type]
        if owner is None:
            return [ProtocolIssue("unknown-progress-token", f"progress for unknown token {token!r}", note)]
        if not isinstance(progress, (int, float)) or isinstance(progress, bool):
            return [ProtocolIssue("invalid-message", "progress must be a number", note)]
        pending = self.requests[owner]
        events: list[Event] = []
        if pending.last_progress is not None and progress <= pending.last_progress:
            events.append(
                ProtocolIssue(
                    "progress-not-increasing",
                    f"progress went from {pending.last_progress} to {progress}",
                    note,
                )
            )
        pending.last_progress = progress
        total, message = params.get("total"), params.get("message")
        assert token is not None
        events.append(
            ProgressReceived(
                token,
                progress,
                total if isinstance(total, (int, float)) else None,
                message if isinstance(message, str) else None,
                owner,
            )
        )
        return events

    def take_late_answer(self, request_id: rpc.RequestId) -> bool:
        """Whether ``request_id`` is one we stopped waiting for (then forget it: one
        late answer is expected, a second one is unknown)."""
        if request_id in self._cancelled:
            del self._cancelled[request_id]
            return True
        return False

    def clear(self) -> list[rpc.RequestId]:
        """Forget every pending request; return their ids, oldest first."""
        failed = list(self.requests)
        self.requests.clear()
        self._token_owner.clear()
        return failed


@attrs.define
class IncomingRequest:
    method: str
    progress_token: str | int | None
    cancelled: bool = False
    last_progress: float | None = None
    #: Stateless era: the request's own envelope.
    envelope: Envelope | None = None


class IncomingTable:
    """The peer's requests we have yet to answer."""

    def __init__(self) -> None:
        self._requests: dict[rpc.RequestId, IncomingRequest] = {}

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._requests

    def get(self, request_id: rpc.RequestId) -> IncomingRequest | None:
        return self._requests.get(request_id)

    def add(self, request_id: rpc.RequestId, method: str, meta: Any, envelope: Envelope | None = None) -> None:
        """Track a request; ``meta`` is its ``params._meta`` (for the progress token)."""
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        self._requests[request_id] = IncomingRequest(
            method, token if rpc.is_valid_id(token) else None, envelope=envelope
        )

    def receive_cancelled(self, note: rpc.Notification) -> list[Event]:
        """The peer cancelled one of its requests (spec: utilities/cancellation): our
        answer will be suppressed.  Unknown ids are normal (the answer crossed the
        cancellation) and initialize can't be cancelled: both are ignored."""
        params = note.params or {}
        request_id, reason = params.get("requestId"), params.get("reason")
        incoming = self._requests.get(request_id) if rpc.is_valid_id(request_id) else None  # type: ignore[arg-type]
        if incoming is None or incoming.method == "initialize" or incoming.cancelled:
            return []
        incoming.cancelled = True
        assert request_id is not None
        return [CancelRequested(request_id, reason if isinstance(reason, str) else None)]

    def pop(self, request_id: rpc.RequestId) -> IncomingRequest | None:
        return self._requests.pop(request_id, None)

    def progress_params(
        self, token: str | int, progress: float, total: float | None, message: str | None
    ) -> dict[str, Any] | None:
        """The params of our progress notification on the peer's request that carried
        ``token``; ``LocalProtocolError`` for a dead token or progress that does not grow.
        None when the peer cancelled that request: its token is no longer live for the
        peer (spec: progress MUST only reference an active request), and the handler
        racing the cancellation should not fail for it - its answer is dropped too.
        Progress that does not grow is refused even then: it is the caller's bug,
        whether or not the cancellation won the race."""
        incoming = next((i for i in self._requests.values() if i.progress_token == token), None)
        if incoming is None:
            raise LocalProtocolError(f"progress token {token!r} belongs to no active request")
        if incoming.last_progress is not None and progress <= incoming.last_progress:
            raise LocalProtocolError("progress must increase with each notification")
        incoming.last_progress = progress
        if incoming.cancelled:
            return None
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return params

    def clear(self) -> None:
        self._requests.clear()


def with_progress_token(params: dict[str, Any] | None, token: str | int) -> dict[str, Any]:
    """``params`` with ``_meta.progressToken`` set (spec: utilities/progress).  As
    ``stateless.with_envelope`` does, a ``_meta`` that is not an object is replaced."""
    out = dict(params or {})
    meta = out.get("_meta")
    out["_meta"] = {**(meta if isinstance(meta, dict) else {}), "progressToken": token}
    return out
