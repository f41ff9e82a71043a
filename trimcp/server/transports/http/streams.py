"""Server-side Streamable HTTP streams: queued messages and how they leave as HTTP.

Theory of operation
-------------------
An ``OutStream`` is one logical stream of JSON-RPC messages from the server:
the answer stream of one POST (it finishes with the answer to each request
in ``final_ids``: one, or every request of a 2025-03-26 batch), the
standalone stream of a session (GET; it never finishes while the session
lives), or the stream of a legacy HTTP+SSE session.
Messages are serialized once, when pushed, into a ``ReplayBuffer`` and
numbered; what happens to them next is the business of whichever HTTP
connection is *attached* to the stream, which may come and go (a client
resuming with ``Last-Event-ID`` attaches a new connection to the same
stream; a newer attachment makes the older one stop).

``write_response`` answers one HTTP request from a stream, in one of three
modes:

* ``SSE``: ``text/event-stream`` at once - a priming event (an id and empty
  data, with ``retry``) when asked, then every event, each with its id when
  the stream is resumable, until the stream finishes;
* ``JSON``: wait for the final answer and send it as ``application/json``
  (anything else on the stream is dropped: the caller routes it elsewhere);
  the answers to a batch go as one JSON array, in the order of the requests
  (JSON-RPC answers a batch with a batch);
* ``LAZY``: wait for the first message; if that is already the final answer
  (a batch: while only answers come, for the last one), send it as JSON (with the status ``status_of`` gives it: the stateless era
  maps some JSON-RPC errors to 400/404), otherwise switch to SSE.  With
  ``lazy_window`` the wait is that long at most, then SSE (primed when asked):
  a handshake-era answer ready at once goes as one JSON body, a slow one gets
  its resumable stream (the stream's head is then that much later, its
  answer not).

The writer notices a client that closes the connection while it waits for
the stream (``OutStream.wait`` with the ``H1ServerConnection``): that wait *is*
``H1ServerConnection.watch_eof``, in a cancel scope the stream cancels when it has news
(``_wake``) and whose deadline is the wait's own (the keep-alive comment, the
``LAZY`` window), so one task and one scope wait for all three and no watcher
task is spawned and cancelled per request.  On EOF the writer stops and ``write_response`` reports
``Outcome.CLIENT_GONE`` (the caller decides whether that cancels the request:
in the stateless era it does, in the handshake era it only detaches).  What
the client sends meanwhile (a pipelined request) stays in the codec's buffer.
Idle streams send an SSE comment every ``keepalive`` seconds.  An SSE answer
is written corked (``H1ServerConnection.cork``): what is ready - head, priming event,
events, the last chunk - leaves in one write, flushed before each wait, so a
client waiting for a slow answer still gets the head at once.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Callable, Sequence

import trio

from ...._sansio import jsonrpc as rpc
from ...._sansio.framing.sse import encode_comment, encode_event
from ...._sansio.http.server.replay import PRIMING_SEQ, ReplayBuffer, format_event_id
from ...._sansio.http.server.routing import JSON_TYPE, SSE_TYPE
from ...._trio.http1.server import ClientGone, H1ServerConnection

logger = logging.getLogger("trimcp.server.transports.http.app")

SSE_HEADERS: tuple[tuple[str, str], ...] = (
    ("content-type", SSE_TYPE),
    ("cache-control", "no-cache, no-transform"),
    ("x-accel-buffering", "no"),
)
JSON_HEADERS: tuple[tuple[str, str], ...] = (("content-type", JSON_TYPE),)


class ResponseMode(enum.Enum):
    """How ``write_response`` answers one HTTP request (see the module docstring).

    (The HTTP *client* has its own ``plan.Mode``: which transport it speaks.)"""

    SSE = "sse"
    JSON = "json"
    LAZY = "lazy"


class Outcome(enum.Enum):
    #: The stream finished and everything was written.
    COMPLETE = "complete"
    #: The client went away first.
    CLIENT_GONE = "client-gone"
    #: The server hung up (polling), or a newer connection took the stream over.
    DETACHED = "detached"
    #: The stream ended without its final answer (the session closed).
    ABORTED = "aborted"


class OutStream:
    """One logical stream of server messages (see the module docstring)."""

    def __init__(
        self,
        key: str,
        buffer: ReplayBuffer,
        *,
        final_ids: Sequence[rpc.RequestId] = (),
        batch: bool = False,
        resumable: bool = False,
        accepts_related: bool = True,
        event_type: str | None = None,
    ) -> None:
        self.key = key
        self.buffer = buffer
        #: The requests whose answers end this stream, in the order they were sent.
        self.final_ids = tuple(final_ids)
        #: The answers form a JSON-RPC batch (the POST was one).
        self.batch = batch
        self.resumable = resumable
        #: Whether messages other than the final answer may go here.
        self.accepts_related = accepts_related
        #: SSE ``event:`` field (the legacy transport names its events ``message``).
        self.event_type = event_type
        self.finished = False
        #: The client cancelled the request: it ends without an answer.
        self.cancelled = False
        #: The answers (all there are once ``finished``) by request id: (seq, payload).
        self._answers: dict[rpc.RequestId, tuple[int, bytes]] = {}
        self._unanswered = set(self.final_ids)
        #: The answer body for JSON mode once every answer is in (a batch: their array).
        self.final: bytes | None = None
        #: The last answer pushed.
        self.final_message: rpc.Message | None = None
        self.final_seq = PRIMING_SEQ
        #: Highest event number written to some connection.
        self.delivered = PRIMING_SEQ
        self._generation = 0
        self._attached = 0  # generation of the attached writer; 0: none
        self._hangup_generation = -1
        self._hangup_next = False
        self._changed = trio.Event()
        #: Scopes of writers waiting on their connection too (``wait`` with ``http``).
        self._wakers: list[trio.CancelScope] = []

    def __repr__(self) -> str:
        return f"<OutStream {self.key} final_ids={self.final_ids!r} finished={self.finished}>"

    @property
    def final_id(self) -> rpc.RequestId | None:
        """The (first) request this stream answers; ``None`` for a stream of no request."""
        return self.final_ids[0] if self.final_ids else None

    def answers(self, seq: int) -> bool:
        """Whether event ``seq`` is one of the answers."""
        return any(s == seq for s, _ in self._answers.values())

    # ------------------------------------------------------------ producing

    def push(self, message: rpc.Message) -> tuple[int, bytes]:
        """Queue ``message``; its event number and serialized form."""
        payload = rpc.serialize(message)
        seq = self.buffer.append(payload)
        if (
            isinstance(message, (rpc.Response, rpc.ErrorResponse))
            and message.id is not None
            and message.id in self._unanswered
        ):
            self._unanswered.discard(message.id)
            self._answers[message.id] = (seq, payload)
            self.final_message = message
            self.final_seq = seq
            if not self._unanswered:
                self._complete()
        self._wake()
        return seq, payload

    def drop_final(self, request_id: rpc.RequestId) -> None:
        """Request ``request_id`` will not be answered (the client cancelled it); with
        nothing else left to answer the stream ends, ``cancelled`` when it answered nothing."""
        if request_id not in self._unanswered:
            return
        self._unanswered.discard(request_id)
        if not self._unanswered:
            if self._answers:
                self._complete()
            else:
                self.cancelled = True
                self.finished = True
        self._wake()

    def _complete(self) -> None:
        self.finished = True
        payloads = [self._answers[rid][1] for rid in self.final_ids if rid in self._answers]
        self.final = b"[" + b",".join(payloads) + b"]" if self.batch else payloads[0]

    def finish(self) -> None:
        """No more messages will come (the session ended)."""
        self.finished = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()
        if self._wakers:
            for scope in self._wakers:
                scope.cancel()
            self._wakers.clear()

    # ------------------------------------------------------------ consuming

    @property
    def attached(self) -> bool:
        return self._attached != 0

    def attach(self) -> int:
        """Register a new writer; an older one stops at its next wake-up."""
        self._generation += 1
        self._attached = self._generation
        if self._hangup_next:
            self._hangup_next = False
            self._hangup_generation = self._generation
        self._wake()
        return self._generation

    def detach(self, generation: int) -> None:
        if self._attached == generation:
            self._attached = 0

    def hang_up(self) -> bool:
        """Close the attached connection without ending the stream (the client resumes);
        with none attached yet, the next one to attach is closed once it has caught up."""
        if self.finished:
            return False
        if self._attached:
            self._hangup_generation = self._attached
        else:
            self._hangup_next = True
        self._wake()
        return True

    def superseded(self, generation: int) -> bool:
        return self._attached != generation or self._hangup_generation == generation

    async def wait(
        self,
        cursor: int,
        generation: int | None = None,
        http: H1ServerConnection | None = None,
        deadline: float = math.inf,
    ) -> bool:
        """Until an event after ``cursor`` comes, the stream finishes, or the writer must stop:
        True; False when ``deadline`` passes first.

        With ``http`` (the connection the writer answers on), the wait also
        reads it: ``ClientGone`` when the client closes it."""
        while (
            self.buffer.last_seq <= cursor
            and not self.finished
            and not (generation is not None and self.superseded(generation))
        ):
            if http is None:
                with trio.move_on_at(deadline):
                    await self._changed.wait()
                    continue
                return False
            if not await self._watch(http, deadline):
                return False
        return True

    async def _watch(self, http: H1ServerConnection, deadline: float) -> bool:
        """Read the connection (EOF: ``ClientGone``) until ``_wake`` (True) or ``deadline`` (False).

        One cancel scope does both: ``_wake`` cancels it and takes it off ``_wakers``."""
        scope = trio.CancelScope(deadline=deadline)
        self._wakers.append(scope)
        try:
            with scope:
                await http.watch_eof()
                raise ClientGone("the client closed the connection")
        finally:
            try:
                self._wakers.remove(scope)
                woken = False
            except ValueError:
                woken = True  # (``_wake`` took it)
        return woken

    def written(self, seq: int) -> None:
        self.delivered = max(self.delivered, seq)
        if not self.resumable:
            self.buffer.discard_through(seq)


def _sse(stream: OutStream, seq: int, payload: bytes, event_ids: bool) -> bytes:
    event_id = format_event_id(stream.key, seq) if event_ids else None
    return encode_event(payload.decode("utf-8"), event=stream.event_type, id=event_id)


async def pump(
    http: H1ServerConnection,
    stream: OutStream,
    cursor: int,
    generation: int,
    *,
    event_ids: bool,
    keepalive: float | None,
    retry_ms: int | None = None,
) -> Outcome:
    """Write the stream's events after ``cursor`` until it finishes or the writer must stop."""
    while True:
        for seq, payload in stream.buffer.since(cursor):
            await http.write(_sse(stream, seq, payload, event_ids))
            cursor = seq
            stream.written(seq)
        if stream.finished and cursor >= stream.buffer.last_seq:
            return Outcome.COMPLETE
        if stream.superseded(generation):
            if retry_ms is not None:
                await http.write(f"retry: {retry_ms}\n\n".encode("ascii"))
            return Outcome.DETACHED
        await http.flush()  # what is written so far leaves before the wait
        deadline = math.inf if keepalive is None else trio.current_time() + keepalive
        if not await stream.wait(cursor, generation, http, deadline):
            await http.write(encode_comment())


async def write_response(
    http: H1ServerConnection,
    stream: OutStream,
    *,
    mode: ResponseMode,
    cursor: int = PRIMING_SEQ,
    event_ids: bool = False,
    priming: bool = False,
    retry_ms: int | None = None,
    keepalive: float | None = None,
    headers: Sequence[tuple[str, str]] = (),
    status_of: Callable[[rpc.Message], int] = lambda _m: 200,
    json_ok: bool = True,
    preamble: bytes = b"",
    lazy_window: float | None = None,
) -> Outcome:
    """Answer one HTTP request from ``stream`` (see the module docstring).

    ``preamble`` is written first on an SSE response (the legacy ``endpoint`` event);
    ``lazy_window`` bounds the wait of ``LAZY`` (then SSE).
    """
    generation = stream.attach()
    try:
        return await _write(
            http,
            stream,
            mode,
            cursor,
            generation,
            event_ids,
            priming,
            retry_ms,
            keepalive,
            headers,
            status_of,
            json_ok,
            preamble,
            lazy_window,
        )
    except ClientGone:
        # Seen while waiting (EOF) or while writing (reset): the connection is done.
        http.peer_closed = True
        return Outcome.CLIENT_GONE
    finally:
        stream.detach(generation)


async def _write(
    http: H1ServerConnection,
    stream: OutStream,
    mode: ResponseMode,
    cursor: int,
    generation: int,
    event_ids: bool,
    priming: bool,
    retry_ms: int | None,
    keepalive: float | None,
    headers: Sequence[tuple[str, str]],
    status_of: Callable[[rpc.Message], int],
    json_ok: bool,
    preamble: bytes,
    lazy_window: float | None,
) -> Outcome:
    if mode is ResponseMode.LAZY:
        deadline = math.inf if lazy_window is None else trio.current_time() + lazy_window
        # Within a window the connection is not read: a client that closes is noticed when
        # the window ends (the stream's writer reads it); a handshake-era request is not
        # cancelled by a close anyway.  Without one (stateless: a close cancels) it is.
        watch = http if lazy_window is None else None
        seen = cursor
        # Until the last answer, or anything but an answer (then SSE), or the window's end.
        while await stream.wait(seen, generation, watch, deadline):
            pending = stream.buffer.since(cursor)
            only_answers = all(stream.answers(seq) for seq, _ in pending)
            if stream.finished or not only_answers or stream.superseded(generation):
                break
            seen = stream.buffer.last_seq  # (an answer of a batch: wait for the others)
        pending = stream.buffer.since(cursor)
        only_final = stream.finished and all(stream.answers(seq) for seq, _ in pending)
        if only_final and json_ok:
            mode = ResponseMode.JSON
        else:
            mode = ResponseMode.SSE
    if mode is ResponseMode.JSON:
        while not stream.finished:
            await stream.wait(stream.buffer.last_seq, http=http)
        if stream.final is None or stream.final_message is None:
            return Outcome.ABORTED
        await http.respond(status_of(stream.final_message), [*JSON_HEADERS, *headers], stream.final)
        stream.written(stream.buffer.last_seq)
        return Outcome.COMPLETE
    # Corked: the head and the events that are ready leave together (H1ServerConnection.cork).
    http.cork()
    await http.start(200, [*SSE_HEADERS, *headers])
    if preamble:
        await http.write(preamble)
    if priming:
        prime_id = format_event_id(stream.key, cursor)
        await http.write(encode_event("", id=prime_id, retry=retry_ms))
    outcome = await pump(
        http,
        stream,
        cursor,
        generation,
        event_ids=event_ids,
        keepalive=keepalive,
        retry_ms=retry_ms if priming else None,
    )
    await http.end()
    await http.uncork()
    if outcome is Outcome.COMPLETE and stream.final_ids and stream.final is None:
        return Outcome.ABORTED
    return outcome


__all__ = [
    "JSON_HEADERS",
    "SSE_HEADERS",
    "OutStream",
    "Outcome",
    "ResponseMode",
    "pump",
    "write_response",
]
