"""The ``MessageStream`` contract, checked against a real transport (as trio's
``trio.testing.check_two_way_stream`` checks a ``trio.abc.Stream``).

Theory of operation
-------------------
Every rule is read from what ``_trio/stream.py`` promises of a ``MessageStream``:

``whole_in_order``
    each message sent arrives as one ``Received``, parsed to exactly the message
    sent (ids, methods, unicode, escapes), in the order sent;
``large``
    a message of ``large_message`` bytes (1 MiB) passes;
``concurrent_sends``
    ``send`` may be called from many tasks at once and writes are serialised:
    every message arrives whole, none is torn or interleaved with another;
``cancelled_receive``
    a ``receive`` cancelled while it waits leaves the stream usable: the next
    message still arrives whole;
``aclose_idempotent``
    ``aclose`` may be called again, and from two tasks at once;
``closed_end_refuses``
    after its own ``aclose`` an end's ``send`` and ``receive`` raise ``TransportClosed``;
``close_wakes_receive``
    ``aclose`` from another task wakes a ``receive`` blocked on the same end
    with ``TransportClosed``;
``close_wakes_send`` (pairs only)
    and a ``send`` blocked because the peer reads nothing (a full buffer), by
    the time ``aclose`` returns (a transport may first wait, bounded, for the
    peer to take what it was sent: WebSocket waits out ``disconnect_timeout``
    for its closing handshake, which cannot pass the blocked frame);
``peer_close``
    when the peer closes, what it sent before is delivered, then ``receive``
    raises ``TransportClosed`` (and, with ``send_fails_after_peer_close``, so
    does ``send``);
``oversize`` (pairs opened with a receive cap only)
    a message over the cap raises ``RemoteProtocolError`` and closes the
    receiving end: its next ``receive`` raises ``TransportClosed`` (byte
    framing cannot be resynchronised);
``peer_gone`` (``check_request_stream`` only)
    a request pending when the server goes away is never left hanging;
``caller_exchange`` (``check_request_stream`` only, for a stream with ``begin_request``)
    requests begun in order and run by their callers, at once, are all answered
    (through ``run`` or ``receive``, each exactly once); a caller cancelled while its
    exchange runs leaves the stream usable for both ways of asking; an abandoned
    exchange holds up none begun after it.

``check_two_way_message_stream(open_pair)`` runs every rule, in both directions,
on a fresh pair from ``open_pair()`` (an async context manager yielding two
connected ends), so one broken rule cannot hide or cause another.  Streams whose
two ends are both in the caller's hands qualify: in-memory, stdio (a child and
the server side of its pipes), WebSocket (client and server connection).

An HTTP client stream has no such peer end: the server side of Streamable HTTP
and HTTP+SSE is made inside the HTTP server for each session or request, and a
client may only *ask*.  ``check_request_stream(serve)`` checks what applies to
such a stream against a real ``Server`` (``contract_server()``, an ``echo``
tool): ``serve(server)`` serves it over the transport and yields a connected
client stream; each rule's messages are requests the server answers, in the
revision given (handshake era: ``initialize`` first; stateless era: each
request carries its envelope).  Order is checked one request at a time (each
answer awaited before the next is sent); answers to concurrent requests are
matched by id, since the server runs requests concurrently and may answer
them in any order, whatever the transport.  ``peer_close`` is not checked
there (the client cannot close the server's end, only its own); ``peer_gone``
takes its place, for a ``serve`` that can make the server go away.
``caller_exchange`` checks the optional ``begin_request`` (``_trio/stream.py``) of
a stream that offers it.

Both return the ``RuleResult`` of every rule and, unless ``raise_on_failure``
is false, raise ``AssertionError`` naming each broken rule and why.  Each rule
runs under ``fail_after(timeout)``; in virtual time (``autojump_clock``) the
in-memory checks take no wall time.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import attrs
import trio

from .._errors import RemoteProtocolError, TransportClosed, TransportError
from .._sansio import jsonrpc as rpc
from .._sansio.connection.stateless import build_envelope
from .._sansio.revisions import Era, get_revision
from .._trio.stream import MessageStream, Received, RequestFailed, SendMeta, meta_for, request_starter
from ..server import Context, Server

__all__ = [
    "CALLER_EXCHANGE",
    "OVERSIZE",
    "PAIR_RULES",
    "PEER_GONE",
    "REQUEST_RULES",
    "RuleResult",
    "check_request_stream",
    "check_two_way_message_stream",
    "contract_server",
]

PairOpener = Callable[[], AbstractAsyncContextManager[tuple[MessageStream, MessageStream]]]
StreamServer = Callable[..., AbstractAsyncContextManager[MessageStream]]

#: The rules ``check_two_way_message_stream`` runs (each in both directions).
PAIR_RULES: Final = (
    "whole_in_order",
    "large",
    "concurrent_sends",
    "cancelled_receive",
    "aclose_idempotent",
    "closed_end_refuses",
    "close_wakes_receive",
    "close_wakes_send",
    "peer_close",
)
#: The rules ``check_request_stream`` runs by default.
REQUEST_RULES: Final = (
    "whole_in_order",
    "large",
    "concurrent_sends",
    "cancelled_receive",
    "aclose_idempotent",
    "closed_end_refuses",
    "close_wakes_receive",
)
#: The rule that needs a ``serve`` able to make the server go away (see ``check_request_stream``).
PEER_GONE: Final = "peer_gone"
#: The rule that needs the receive cap the pair was opened with (see ``check_two_way_message_stream``).
OVERSIZE: Final = "oversize"
#: The rule for a stream that lets the caller run its request's exchange (``begin_request``).
CALLER_EXCHANGE: Final = "caller_exchange"

#: A text that only arrives intact if nothing re-encodes it: non-ASCII, an astral
#: character, JSON escapes, line and paragraph separators, a raw newline in a string.
TRICKY_TEXT: Final = 'ünïcødé ✓ 𝄞 "quoted" back\\slash tab\t nl\n \u2028\u2029 </script>'


@attrs.frozen
class RuleResult:
    """One rule on one stream: ``error`` is ``None`` when it held."""

    rule: str
    #: ``"a->b"``/``"b->a"`` for a pair (the first end of the pair sends, or the second),
    #: ``""`` for a request stream.
    direction: str
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None

    def __str__(self) -> str:
        name = f"{self.rule} ({self.direction})" if self.direction else self.rule
        return f"{name}: {'ok' if self.error is None else self.error}"


def _verdict(results: list[RuleResult], raise_on_failure: bool) -> list[RuleResult]:
    failed = [r for r in results if not r.passed]
    if failed and raise_on_failure:
        raise AssertionError(
            f"{len(failed)} of {len(results)} MessageStream contract checks failed:\n"
            + "\n".join(f"  {r}" for r in failed)
        )
    return results


async def _run(rule: str, direction: str, timeout: float, body: Callable[[], Awaitable[None]]) -> RuleResult:
    try:
        with trio.fail_after(timeout):
            await body()
    except trio.TooSlowError:
        return RuleResult(rule, direction, f"did not finish within {timeout} s")
    except Exception as exc:
        return RuleResult(rule, direction, "; ".join(f"{type(e).__name__}: {e}" for e in _leaves(exc)))
    return RuleResult(rule, direction)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _only(received: object, rule: str) -> rpc.Message:
    """The one valid message of a ``Received`` (anything else breaks ``rule``)."""
    assert isinstance(received, Received), f"{rule}: expected a Received, got {received!r}"
    payload = received.payload
    assert not payload.is_batch and not payload.invalid and len(payload.messages) == 1, (
        f"{rule}: expected one valid message, got {received.data[:200]!r}"
    )
    return payload.messages[0]


async def _expect_closed(call: Callable[[], Awaitable[object]], what: str) -> None:
    try:
        result = await call()
    except TransportClosed:
        return
    raise AssertionError(f"{what} returned {result!r} instead of raising TransportClosed")


# ------------------------------------------------------------------ rules on a pair


def _samples(tag: str) -> list[rpc.Message]:
    return [
        rpc.Request(1, "tools/call", {"name": "echo", "arguments": {"text": TRICKY_TEXT}}),
        rpc.Notification("notifications/message", {"level": "info", "data": TRICKY_TEXT}),
        rpc.Response(1, {"content": [{"type": "text", "text": tag}]}),
        rpc.ErrorResponse(2, rpc.ErrorObject(-32601, "Method not found", {"method": tag})),
        rpc.Request(f"{tag}-id", "ping"),
        rpc.Notification("notifications/initialized"),
    ]


async def _transfer(
    x: MessageStream, y: MessageStream, messages: list[rpc.Message], rule: str, *, concurrently: bool = False
) -> None:
    """Send ``messages`` on ``x`` (one task each if ``concurrently``) while ``y`` receives them."""
    got: list[rpc.Message] = []

    async def receive_all() -> None:
        for _ in messages:
            got.append(_only(await y.receive(), rule))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(receive_all)
        if concurrently:
            for message in messages:
                nursery.start_soon(x.send, message)
        else:
            for message in messages:
                await x.send(message)
    if concurrently:
        key = rpc.serialize
        assert sorted(map(key, got)) == sorted(map(key, messages)), f"{rule}: messages changed on the way"
        return
    for index, (sent, arrived) in enumerate(zip(messages, got, strict=True)):
        assert arrived == sent, f"{rule}: message {index} sent as {_short(sent)} arrived as {_short(arrived)}"


def _short(message: rpc.Message) -> str:
    text = repr(message)
    return text if len(text) <= 120 else text[:117] + "..."


def _pair_rules(
    large_message: int,
    concurrent_senders: int,
    send_fails_after_peer_close: bool,
    pause: float,
    max_message_size: int | None,
) -> dict[str, Callable[[MessageStream, MessageStream], Awaitable[None]]]:
    async def whole_in_order(x: MessageStream, y: MessageStream) -> None:
        await _transfer(x, y, _samples("first"), "whole_in_order")
        await _transfer(x, y, _samples("second"), "whole_in_order")

    async def large(x: MessageStream, y: MessageStream) -> None:
        await _transfer(x, y, [rpc.Notification("big", {"text": "x" * large_message})], "large")

    async def concurrent_sends(x: MessageStream, y: MessageStream) -> None:
        # Big enough that one write is several pipe or frame buffers: a torn write shows.
        messages: list[rpc.Message] = [
            rpc.Request(i, "echo", {"text": chr(ord("a") + i % 26) * (65_536 + i)}) for i in range(concurrent_senders)
        ]
        await _transfer(x, y, messages, "concurrent_sends", concurrently=True)

    async def cancelled_receive(x: MessageStream, y: MessageStream) -> None:
        with trio.move_on_after(pause) as scope:
            await y.receive()
        assert scope.cancelled_caught, "receive returned with nothing sent"
        await _transfer(x, y, _samples("after"), "cancelled_receive")

    async def aclose_idempotent(x: MessageStream, y: MessageStream) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(x.aclose)
            nursery.start_soon(x.aclose)
        await x.aclose()

    async def closed_end_refuses(x: MessageStream, y: MessageStream) -> None:
        await x.aclose()
        await _expect_closed(lambda: x.send(rpc.Notification("late")), "send after aclose")
        await _expect_closed(x.receive, "receive after aclose")

    async def close_wakes_receive(x: MessageStream, y: MessageStream) -> None:
        woken = trio.Event()

        async def blocked() -> None:
            await _expect_closed(x.receive, "a receive blocked during aclose")
            woken.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(blocked)
            await trio.sleep(pause)  # let it block
            await x.aclose()
        assert woken.is_set()

    async def close_wakes_send(x: MessageStream, y: MessageStream) -> None:
        woken = trio.Event()
        chunk = rpc.Notification("filler", {"text": "f" * 65_536})

        async def flood() -> None:
            async def forever() -> None:
                while True:
                    await x.send(chunk)

            await _expect_closed(forever, "a send blocked during aclose")
            woken.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood)
            await trio.sleep(pause)  # y reads nothing: x's buffers fill and its send blocks
            await x.aclose()
        assert woken.is_set()

    async def peer_close(x: MessageStream, y: MessageStream) -> None:
        last = rpc.Notification("last words", {"text": TRICKY_TEXT})
        await x.send(last)
        await x.aclose()
        assert _only(await y.receive(), "peer_close") == last, "what the peer sent before closing was lost"
        await _expect_closed(y.receive, "receive after the peer closed")
        if send_fails_after_peer_close:
            await _expect_closed(lambda: y.send(rpc.Notification("to nobody")), "send after the peer closed")

    async def oversize(x: MessageStream, y: MessageStream) -> None:
        assert max_message_size is not None

        async def send_it() -> None:
            with contextlib.suppress(TransportError):  # the receiver may close before it is all written
                await x.send(rpc.Notification("too big", {"text": "x" * max_message_size}))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_it)
            try:
                got = await y.receive()
            except RemoteProtocolError:
                pass
            else:
                raise AssertionError(f"a message over the {max_message_size}-byte cap arrived: {got!r:.80}")
            await _expect_closed(y.receive, "receive after an oversize message")

    return {
        "whole_in_order": whole_in_order,
        "large": large,
        "concurrent_sends": concurrent_sends,
        "cancelled_receive": cancelled_receive,
        "aclose_idempotent": aclose_idempotent,
        "closed_end_refuses": closed_end_refuses,
        "close_wakes_receive": close_wakes_receive,
        "close_wakes_send": close_wakes_send,
        "peer_close": peer_close,
        OVERSIZE: oversize,
    }


async def check_two_way_message_stream(
    open_pair: PairOpener,
    *,
    rules: Iterable[str] = PAIR_RULES,
    large_message: int = 1 << 20,
    concurrent_senders: int = 16,
    send_fails_after_peer_close: bool = True,
    max_message_size: int | None = None,
    pause: float = 0.05,
    timeout: float = 30.0,
    raise_on_failure: bool = True,
) -> list[RuleResult]:
    """Check the ``MessageStream`` contract on the pairs ``open_pair()`` yields.

    ``open_pair`` returns an async context manager yielding two connected ends
    ``(a, b)``; it is entered once per rule and direction and closes what it
    opened.  ``rules`` picks rules (default: all, ``PAIR_RULES``).
    ``send_fails_after_peer_close``: whether ``send`` must raise once the peer's
    close was seen (every transport here; a byte pipe whose reader lingers
    might not).  ``max_message_size``: the receive cap both ends were opened
    with, which ``OVERSIZE`` (named in ``rules``) needs.  ``pause`` is how long a rule lets a ``receive`` block before
    cancelling or closing it (real time on real I/O, virtual under
    ``autojump_clock``).  ``timeout`` bounds each rule in each direction.
    """
    rules = tuple(rules)
    if OVERSIZE in rules and max_message_size is None:
        raise ValueError("the oversize rule needs the pair's max_message_size")
    table = _pair_rules(large_message, concurrent_senders, send_fails_after_peer_close, pause, max_message_size)
    results: list[RuleResult] = []
    for name in rules:
        rule = table[name]
        for direction in ("a->b", "b->a"):

            async def body(rule: Any = rule, direction: str = direction) -> None:
                async with open_pair() as (a, b):
                    x, y = (a, b) if direction == "a->b" else (b, a)
                    await rule(x, y)

            results.append(await _run(name, direction, timeout, body))
    return _verdict(results, raise_on_failure)


# ------------------------------------------------------------------ rules on a request stream


def contract_server() -> Server:
    """The ``Server`` ``check_request_stream`` talks to: ``echo(text)``, and ``wait()``,
    which never answers (a request still pending when the server goes away)."""
    server = Server("trimcp-contract", version="1")

    @server.tool(description="Answer with the text given.")
    async def echo(ctx: Context, text: str) -> str:
        return text

    @server.tool(description="Never answer.")
    async def wait(ctx: Context) -> str:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    return server


@attrs.define
class _Asker:
    """Requests to the contract server over ``stream``, in ``revision``."""

    stream: MessageStream
    revision: str
    ids: Iterator[int] = attrs.field(factory=lambda: itertools.count(1))

    @property
    def meta(self) -> SendMeta:
        return SendMeta(protocol_version=self.revision)

    def request(self, method: str, params: dict[str, Any]) -> rpc.Request:
        if get_revision(self.revision).era is Era.STATELESS:
            meta = build_envelope(self.revision, {}, {"name": "trimcp-contract", "version": "1"}, None)
            params = {**params, "_meta": meta}
        return rpc.Request(next(self.ids), method, params)

    def echo(self, text: str) -> rpc.Request:
        return self.request("tools/call", {"name": "echo", "arguments": {"text": text}})

    async def answer(self) -> rpc.Message:
        """The next answer (notifications the server sends on the way are skipped)."""
        while True:
            message = _only(await self.stream.receive(), "answer")
            if not isinstance(message, rpc.Notification):
                return message

    async def open(self) -> None:
        if get_revision(self.revision).era is Era.STATELESS:
            return
        init = rpc.Request(
            0,
            "initialize",
            {
                "protocolVersion": self.revision,
                "capabilities": {},
                "clientInfo": {"name": "trimcp-contract", "version": "1"},
            },
        )
        await self.stream.send(init, meta_for(init))
        answer = await self.answer()
        assert isinstance(answer, rpc.Response), f"initialize was refused: {answer!r}"
        await self.stream.send(rpc.Notification("notifications/initialized"), self.meta)

    async def round_trip(self, texts: list[str], rule: str, *, concurrently: bool = False) -> None:
        """Echo ``texts``: one after the other (each answer awaited), or all at once."""
        requests = [self.echo(text) for text in texts]
        answers: list[rpc.Message] = []
        if concurrently:

            async def receive_all() -> None:
                for _ in requests:
                    answers.append(await self.answer())

            async with trio.open_nursery() as nursery:
                nursery.start_soon(receive_all)
                for request in requests:
                    nursery.start_soon(self.stream.send, request, self.meta)
        else:
            for request in requests:
                await self.stream.send(request, self.meta)
                answers.append(await self.answer())
        expected = {r.id: text for r, text in zip(requests, texts, strict=True)}
        got_ids = [getattr(a, "id", None) for a in answers]
        if not concurrently:
            assert got_ids == [r.id for r in requests], f"{rule}: answers out of order: {got_ids}"
        # (At once, the server may answer in any order: it runs requests concurrently.)
        assert sorted(map(str, got_ids)) == sorted(map(str, expected)), f"{rule}: answered ids {got_ids}"
        for answer in answers:
            assert isinstance(answer, rpc.Response), f"{rule}: {answer!r}"
            content = answer.result.get("content")
            text = content[0].get("text") if isinstance(content, list) and content else None
            assert text == expected[answer.id], f"{rule}: the echo of request {answer.id} changed on the way"


async def check_request_stream(
    serve: StreamServer,
    revision: str,
    *,
    rules: Iterable[str] = REQUEST_RULES,
    large_message: int = 1 << 20,
    concurrent_senders: int = 16,
    pause: float = 0.05,
    timeout: float = 30.0,
    raise_on_failure: bool = True,
) -> list[RuleResult]:
    """Check the contract on a client stream whose peer is a ``Server`` (HTTP, say).

    ``serve(server)`` returns an async context manager that serves ``server``
    over the transport and yields a connected client stream; it is entered once
    per rule.  ``revision`` is the protocol revision the messages are sent in.

    ``PEER_GONE``, when ``rules`` names it, checks that a request pending when
    the server goes away is never left hanging: within ``timeout`` the stream
    yields a ``RequestFailed`` for it or raises ``TransportClosed`` (DESIGN: "a
    pending request never hangs").  For it ``serve`` is called as
    ``serve(server, stop=event)``: once ``event`` is set the server must go
    away (its process killed, its listener and connections closed).
    """

    async def whole_in_order(asker: _Asker) -> None:
        await asker.round_trip([TRICKY_TEXT, "second", "", "third"], "whole_in_order")

    async def large(asker: _Asker) -> None:
        await asker.round_trip(["x" * large_message], "large")

    async def concurrent_sends(asker: _Asker) -> None:
        texts = [chr(ord("a") + i % 26) * (65_536 + i) for i in range(concurrent_senders)]
        await asker.round_trip(texts, "concurrent_sends", concurrently=True)

    async def cancelled_receive(asker: _Asker) -> None:
        with trio.move_on_after(pause) as scope:
            await asker.stream.receive()
        assert scope.cancelled_caught, "receive returned with nothing asked"
        await asker.round_trip(["after"], "cancelled_receive")

    async def aclose_idempotent(asker: _Asker) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(asker.stream.aclose)
            nursery.start_soon(asker.stream.aclose)
        await asker.stream.aclose()

    async def closed_end_refuses(asker: _Asker) -> None:
        stream = asker.stream
        await stream.aclose()
        await _expect_closed(lambda: stream.send(asker.echo("late"), asker.meta), "send after aclose")
        await _expect_closed(stream.receive, "receive after aclose")

    async def close_wakes_receive(asker: _Asker) -> None:
        woken = trio.Event()

        async def blocked() -> None:
            await _expect_closed(asker.stream.receive, "a receive blocked during aclose")
            woken.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(blocked)
            await trio.sleep(pause)
            await asker.stream.aclose()
        assert woken.is_set()

    async def peer_gone(asker: _Asker, stop: trio.Event) -> None:
        await asker.round_trip(["before"], "peer_gone")
        pending = asker.request("tools/call", {"name": "wait", "arguments": {}})
        await asker.stream.send(pending, asker.meta)
        await trio.sleep(pause)  # let it reach the server
        stop.set()
        while True:
            try:
                item = await asker.stream.receive()
            except TransportClosed:
                return
            if isinstance(item, RequestFailed) and item.request_id == pending.id:
                return
            # (a StreamLost, or a notification on the way, is not the verdict on this request)
            if isinstance(item, Received):
                message = _only(item, "peer_gone")
                assert not (isinstance(message, rpc.Response | rpc.ErrorResponse) and message.id == pending.id), (
                    f"the server answered {message!r} to a request it never answers"
                )

    async def caller_exchange(asker: _Asker) -> None:
        stream = asker.stream
        begin = request_starter(stream)
        assert begin is not None, "the stream offers no begin_request"
        answers: dict[object, rpc.Message] = {}

        def take(message: rpc.Message) -> None:
            rid = getattr(message, "id", None)
            assert rid not in answers, f"request {rid} answered twice"
            answers[rid] = message

        async def run(exchange: Any) -> None:
            answer = await exchange.run()
            if answer is not None:
                take(_only(answer, "caller_exchange"))

        async def ask(requests: list[rpc.Request]) -> None:
            """Begin ``requests`` in order (as the session's write lock would), run each in
            a task of its own; take the answers ``run`` does not return from ``receive``."""
            ids = {r.id for r in requests}

            async def receive_rest() -> None:
                while not ids <= answers.keys():
                    take(await asker.answer())

            async with trio.open_nursery() as nursery:
                nursery.start_soon(receive_rest)
                async with trio.open_nursery() as callers:
                    for request in requests:
                        callers.start_soon(run, begin(stream, request, asker.meta))
                if ids <= answers.keys():
                    nursery.cancel_scope.cancel()  # every answer came back through run

        def check(requests: list[rpc.Request], texts: list[str]) -> None:
            for request, text in zip(requests, texts, strict=True):
                answer = answers.get(request.id)
                assert isinstance(answer, rpc.Response), f"request {request.id}: {answer!r}"
                echoed = answer.result["content"][0]["text"]
                assert echoed == text, f"the echo of request {request.id} changed on the way: {echoed!r:.60}"

        texts = [f"caller {i} {TRICKY_TEXT}" for i in range(concurrent_senders)]
        requests = [asker.echo(text) for text in texts]
        await ask(requests)
        check(requests, texts)
        # A caller cancelled while its exchange runs, if ``run`` waits for the answer (the
        # server never answers ``wait``).
        pending = asker.request("tools/call", {"name": "wait", "arguments": {}})
        with trio.move_on_after(pause):
            await run(begin(stream, pending, asker.meta))
        # An exchange abandoned before it ran holds up none begun after it.
        begin(stream, asker.echo("never sent"), asker.meta).abandon()
        after = [asker.echo("after")]
        await ask(after)
        check(after, ["after"])
        await asker.round_trip(["and by send"], "caller_exchange")

    table: dict[str, Callable[[_Asker], Awaitable[None]]] = {
        "caller_exchange": caller_exchange,
        "whole_in_order": whole_in_order,
        "large": large,
        "concurrent_sends": concurrent_sends,
        "cancelled_receive": cancelled_receive,
        "aclose_idempotent": aclose_idempotent,
        "closed_end_refuses": closed_end_refuses,
        "close_wakes_receive": close_wakes_receive,
    }
    results: list[RuleResult] = []
    for name in rules:

        async def body(name: str = name) -> None:
            stop = trio.Event()
            serving = serve(contract_server(), stop=stop) if name == PEER_GONE else serve(contract_server())
            async with serving as stream:
                asker = _Asker(stream, revision)
                await asker.open()
                if name == PEER_GONE:
                    await peer_gone(asker, stop)
                else:
                    await table[name](asker)

        results.append(await _run(name, "", timeout, body))
    return _verdict(results, raise_on_failure)
