"""Reading one HTTP response through its ``ResponseReader``, delivering what it carries.

Theory of operation
-------------------
``Pump.read`` feeds a response's head and body to the sans-IO reader
(``_sansio/http/client/response.py``) and acts on the events that need no decision:
each ``MessageReceived`` goes to the session through the ``Inbox`` (its payload
parsed once, by the reader), a ``SessionAssigned`` goes to the planner, issues
go to the log, an ``endpoint`` event to the caller.  It stops at the reader's
terminal event and returns it with what else was seen; what to do next is the
policy's call (``_sansio/http/client/policy.py``).  A connection lost mid-body is
reported to the reader (``broken``), which says what that means.

``linger``: once the answer is in, an event stream the server keeps open is
given ``ANSWER_LINGER`` seconds to end (so its connection can be reused), then
closed.  ``inline`` (the exchange runs in its caller's task): the answer may
be handed back to that caller (``Inbox.deliver``), and once it is in, ``read``
returns at once with the response ``detached``, for another task to read to its end.
``reader_for`` builds the reader of a POST's response from its plan.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Final

import attrs
import trio

from ...._sansio.http.client import response as hr
from ...._sansio.http.client.plan import HttpPlanner, MessageKind, Mode, PostPlan
from ...http1.client import ConnectionLost
from .executor import HttpResponse
from .inbox import Exchange, Inbox, IssueLog

__all__ = ["ANSWER_LINGER", "Pump", "PumpResult", "reader_for"]

#: After the answer arrived on an event stream, how long to wait for the server to end it
#: (so the connection can be reused) before closing it.
ANSWER_LINGER: Final = 1.0


@attrs.define
class PumpResult:
    end: hr.Terminal
    #: A 202 (or legacy 2xx) to a request: the answer comes on another stream.
    elsewhere: bool = False
    #: A notification or response was accepted.
    accepted: bool = False
    messages: int = 0
    #: ``inline``: the answer is in but the response is not over (the caller reads the rest).
    detached: bool = False


def reader_for(plan: PostPlan, *, legacy_fallback: bool, max_message_size: int) -> hr.ResponseReader:
    """The reader of the response to ``plan``'s POST."""
    return hr.ResponseReader(
        hr.Purpose.POST,
        answer_id=plan.wire_id,
        expects_answer=plan.kind is MessageKind.REQUEST,
        sent_session=plan.sent_session,
        is_initialize=plan.is_initialize,
        legacy_fallback=legacy_fallback and plan.mode is Mode.STREAMABLE,
        legacy_mode=plan.mode is Mode.LEGACY_SSE,
        max_message_size=max_message_size,
        url=plan.request.url,
    )


class Pump:
    def __init__(self, inbox: Inbox, planner: HttpPlanner, issues: IssueLog) -> None:
        self.inbox = inbox
        self.planner = planner
        self.issues = issues

    async def read(
        self,
        reader: hr.ResponseReader,
        response: HttpResponse,
        *,
        linger: bool = False,
        on_endpoint: Callable[[str], None] | None = None,
        level: int = logging.WARNING,
        origin: Exchange | None = None,
        inline: bool = False,
    ) -> PumpResult:
        """Read ``response`` to its end or to a verdict (the caller closes it).

        ``level``: how loudly to log what went wrong (the era probe's refusal is
        expected); ``origin``: the exchange whose stream this is; ``inline``: see the
        module docstring."""
        result = PumpResult(hr.StreamEnded())
        events = reader.head(response.status, response.headers)
        deadline = math.inf
        while True:
            for event in events:
                if isinstance(event, hr.TERMINAL):
                    result.end = event
                    return result
                await self._take(event, result, on_endpoint, level, origin, inline)
            if reader.finished:
                return result
            if inline and reader.answered:
                result.detached = True
                return result
            if linger and reader.answered and deadline == math.inf:
                deadline = trio.current_time() + ANSWER_LINGER
            try:
                if deadline == math.inf:  # (no cancel scope per read on the hot path)
                    chunk = await response.read()
                else:
                    chunk = b""
                    with trio.move_on_at(deadline) as scope:
                        chunk = await response.read()
                    if scope.cancelled_caught:
                        # The answer is in; the server kept the stream open: close it.
                        result.end = hr.StreamEnded(reader.last_event_id, reader.retry_ms)
                        return result
            except ConnectionLost as exc:
                events = reader.broken(str(exc))
                continue
            events = reader.data(chunk) if chunk else reader.end()

    async def _take(
        self,
        event: hr.HttpEvent,
        result: PumpResult,
        on_endpoint: Callable[[str], None] | None,
        level: int,
        origin: Exchange | None,
        inline: bool,
    ) -> None:
        """Act on one event that is not the end of the response."""
        if isinstance(event, hr.MessageReceived):
            result.messages += 1
            await self.inbox.deliver(event, origin, inline=inline)
        elif isinstance(event, hr.SessionAssigned):
            self.planner.session_assigned(event.session_id)
        elif isinstance(event, hr.TransportIssue):
            self.issues(event.detail, level)
        elif isinstance(event, hr.AnswerElsewhere):
            result.elsewhere = True
        elif isinstance(event, hr.Accepted):
            result.accepted = True
        elif isinstance(event, hr.EndpointAnnounced) and on_endpoint is not None:
            on_endpoint(event.url)
