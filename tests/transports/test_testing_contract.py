"""Every transport's streams against the ``MessageStream`` contract (``trimcp.testing``).

Two ends in our hands (``check_two_way_message_stream``): the in-memory pair; stdio
(``StdioProcessStream`` to a child that relays its stdin/stdout to two FIFOs, whose
other ends are a ``StdioServerStream``, the class a stdio server runs on); WebSocket
(the client's ``WebSocketStream`` and the server's, from ``serve_websocket_streams``).

A client stream whose peer is a ``Server`` (``check_request_stream``): Streamable
HTTP in the handshake era (a session, its GET stream) and in the stateless era (one
exchange per request), HTTP+SSE (2024-11-05), and for comparison the ordered streams
(in-memory, stdio to a child serving ``contract_server()``, WebSocket).  Everything is on 127.0.0.1; each rule runs under its own
deadline, and each test under ``fail_after``.  The checkers are checked too: a stream
that breaks a rule must fail it.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from pathlib import Path

import pytest
import trio
from repo_paths import REPO

from trimcp import TransportClosed
from trimcp._sansio import jsonrpc as rpc
from trimcp._trio.memory import MemoryMessageStream, memory_stream_pair
from trimcp._trio.stream import NO_META, Inbound, MessageStream, Received, SendMeta
from trimcp._trio.transports.http.connect import open_http_stream
from trimcp._trio.transports.stdio import open_stdio_process, open_stdio_server_stream
from trimcp._trio.transports.websocket import WebSocketStream, open_websocket_stream
from trimcp.server import Server, serve_http, serve_stream
from trimcp.server.transports.http.bound import BoundHttpServer
from trimcp.server.transports.websocket import (
    WebSocketListener,
    serve_websocket,
    serve_websocket_streams,
)
from trimcp.testing import (
    CALLER_EXCHANGE,
    OVERSIZE,
    PAIR_RULES,
    PEER_GONE,
    REQUEST_RULES,
    RuleResult,
    check_request_stream,
    check_two_way_message_stream,
    serve_in_process,
)

#: The stdio child: stdin -> the "up" FIFO, the "down" FIFO -> stdout, byte for byte, and
#: exit as soon as either direction ends, as a stdio server exits once its stream is done.
RELAY = r"""
import os, sys, threading
up = os.open(sys.argv[1], os.O_WRONLY)    # blocks until the test opened its read end
down = os.open(sys.argv[2], os.O_RDONLY)  # then the test opens its write end
def pump(src, dst):
    try:
        while data := os.read(src, 65536):
            while data:
                data = data[os.write(dst, data):]
    except OSError:
        pass
    os._exit(0)
threading.Thread(target=pump, args=(down, 1), daemon=True).start()
pump(0, up)
"""

#: A stdio child serving the contract server.
CONTRACT_STDIO = (
    "from trimcp.server import run_stdio; from trimcp.testing import contract_server; run_stdio(contract_server())"
)

#: The receive cap the stdio and WebSocket pairs are opened with (``OVERSIZE``).
CAP = 4 * 1024 * 1024

CHILD_ENV = {"PYTHONPATH": str(REPO)}


def table(results: list[RuleResult]) -> str:
    return "\n".join(map(str, results))


# ---------------------------------------------------------------- pairs


@asynccontextmanager
async def memory_pair() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    a, b = memory_stream_pair()
    async with a, b:
        yield a, b


def stdio_pair(tmp_path: Path) -> Callable[[], AbstractAsyncContextManager[tuple[MessageStream, MessageStream]]]:
    counter = iter(range(1 << 30))

    @asynccontextmanager
    async def open_pair() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        where = tmp_path / f"pair{next(counter)}"
        where.mkdir()
        up, down = where / "up", where / "down"
        os.mkfifo(up)
        os.mkfifo(down)
        up_read = os.open(up, os.O_RDONLY | os.O_NONBLOCK)
        fds = [up_read]
        try:
            relay = [sys.executable, "-c", RELAY, str(up), str(down)]
            async with open_stdio_process(relay, max_line=CAP) as client:
                while True:  # the child opens "down" once it has "up": then both are connected
                    try:
                        fds.append(os.open(down, os.O_WRONLY | os.O_NONBLOCK))
                        break
                    except OSError as exc:
                        if exc.errno != errno.ENXIO:
                            raise
                        await trio.sleep(0.01)
                async with open_stdio_server_stream(stdin_fd=up_read, stdout_fd=fds[1], max_line=CAP) as server:
                    # It holds dups: close ours, or its close would not reach the child.
                    while fds:
                        os.close(fds.pop())
                    yield client, server
        finally:
            for fd in fds:
                os.close(fd)

    return open_pair


@asynccontextmanager
async def websocket_pair() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
    accepted_send, accepted = trio.open_memory_channel[tuple[WebSocketStream, trio.Event]](1)

    async def handler(stream: WebSocketStream) -> None:
        done = trio.Event()
        await accepted_send.send((stream, done))
        await done.wait()  # the connection lives until the rule is over

    async with trio.open_nursery() as nursery:
        # (A closing handshake behind a send the peer never reads waits out disconnect_timeout.)
        listener = await nursery.start(
            partial(
                serve_websocket_streams,
                handler,
                "127.0.0.1",
                0,
                max_message_size=CAP,
                disconnect_timeout=0.5,
            )
        )
        async with open_websocket_stream(listener.url, max_message_size=CAP, disconnect_timeout=0.5) as client:
            server, done = await accepted.receive()
            try:
                yield client, server
            finally:
                done.set()
        nursery.cancel_scope.cancel()


async def test_the_memory_pair_keeps_the_contract(autojump_clock: trio.abc.Clock) -> None:
    results = await check_two_way_message_stream(memory_pair)
    assert [r.rule for r in results] == [rule for rule in PAIR_RULES for _ in (1, 2)]
    assert all(r.passed for r in results)


async def test_stdio_keeps_the_contract(tmp_path: Path) -> None:
    with trio.fail_after(120):
        results = await check_two_way_message_stream(
            stdio_pair(tmp_path),
            rules=(*PAIR_RULES, OVERSIZE),
            max_message_size=CAP,
            timeout=20,
        )
    assert all(r.passed for r in results), table(results)


async def test_websocket_keeps_the_contract() -> None:
    with trio.fail_after(120):
        results = await check_two_way_message_stream(
            websocket_pair,
            rules=(*PAIR_RULES, OVERSIZE),
            max_message_size=CAP,
            timeout=20,
        )
    assert all(r.passed for r in results), table(results)


# ---------------------------------------------------------------- client streams to a Server


async def _stop_when(stop: trio.Event | None, stop_it: Callable[[], object]) -> None:
    if stop is not None:
        await stop.wait()
        stop_it()


def http_served(
    *,
    legacy: bool = False,
    json_response: bool = False,
) -> Callable[..., AbstractAsyncContextManager[MessageStream]]:
    @asynccontextmanager
    async def serve(server: Server, stop: trio.Event | None = None) -> AsyncIterator[MessageStream]:
        async with trio.open_nursery() as nursery:
            if legacy:
                serve_it = partial(serve_http, server, "127.0.0.1", 0, path=None, sse_path="/sse")
            else:
                serve_it = partial(serve_http, server, "127.0.0.1", 0, json_response=json_response)
            serving = trio.CancelScope()

            async def run(*, task_status: trio.TaskStatus[BoundHttpServer]) -> None:
                with serving:
                    await serve_it(task_status=task_status)

            bound = await nursery.start(run)
            nursery.start_soon(_stop_when, stop, serving.cancel)
            async with open_http_stream(bound.url, legacy_only=legacy) as stream:
                yield stream
            nursery.cancel_scope.cancel()

    return serve


@asynccontextmanager
async def websocket_served(server: Server, stop: trio.Event | None = None) -> AsyncIterator[MessageStream]:
    async with trio.open_nursery() as nursery:
        serving = trio.CancelScope()

        async def run(*, task_status: trio.TaskStatus[WebSocketListener]) -> None:
            with serving:
                await serve_websocket(server, "127.0.0.1", 0, task_status=task_status)

        listener = await nursery.start(run)
        nursery.start_soon(_stop_when, stop, serving.cancel)
        async with open_websocket_stream(listener.url) as stream:
            yield stream
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def stdio_served(server: Server, stop: trio.Event | None = None) -> AsyncIterator[MessageStream]:
    # (The child builds its own contract_server(); ``server`` is the same definition.)
    async with (
        open_stdio_process([sys.executable, "-c", CONTRACT_STDIO], env=CHILD_ENV) as stream,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(_stop_when, stop, stream.process.kill)
        yield stream
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def memory_served(server: Server, stop: trio.Event | None = None) -> AsyncIterator[MessageStream]:
    client_end, server_end = memory_stream_pair()
    async with client_end, trio.open_nursery() as nursery:
        serving = trio.CancelScope()

        async def run(*, task_status: trio.TaskStatus[object]) -> None:
            with serving:
                await serve_stream(server, server_end, task_status=task_status)

        await nursery.start(run)
        nursery.start_soon(_stop_when, stop, serving.cancel)
        yield client_end
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("revision", "json_response"),
    [
        ("2025-11-25", False),
        ("2025-11-25", True),
        ("2025-03-26", False),
        ("2026-07-28", False),
        ("2026-07-28", True),
    ],
)
async def test_streamable_http_keeps_the_contract(revision: str, json_response: bool) -> None:
    with trio.fail_after(120):
        results = await check_request_stream(
            http_served(json_response=json_response),
            revision,
            rules=(*REQUEST_RULES, PEER_GONE, CALLER_EXCHANGE),
            timeout=20,
        )
    assert [r.rule for r in results] == [*REQUEST_RULES, PEER_GONE, CALLER_EXCHANGE]
    assert all(r.passed for r in results), table(results)


async def test_legacy_http_sse_keeps_the_contract() -> None:
    with trio.fail_after(120):
        results = await check_request_stream(
            http_served(legacy=True),
            "2024-11-05",
            rules=(*REQUEST_RULES, PEER_GONE, CALLER_EXCHANGE),
            timeout=20,
        )
    assert all(r.passed for r in results), table(results)


# (The stream is the same in either era; stdio, at a child per rule, runs in one.)
@pytest.mark.parametrize(
    ("served", "revision"),
    [
        ("memory", "2025-11-25"),
        ("memory", "2026-07-28"),
        ("stdio", "2025-11-25"),
        ("websocket", "2025-11-25"),
        ("websocket", "2026-07-28"),
    ],
)
async def test_ordered_streams_keep_the_contract_with_a_server(served: str, revision: str) -> None:
    serve = {"memory": memory_served, "stdio": stdio_served, "websocket": websocket_served}[served]
    with trio.fail_after(120):
        results = await check_request_stream(serve, revision, rules=(*REQUEST_RULES, PEER_GONE), timeout=20)
    assert all(r.passed for r in results), table(results)


# ---------------------------------------------------------------- the checker can fail


class Broken:
    """A memory end that breaks one rule at a time."""

    def __init__(self, inner: MemoryMessageStream, flaw: str) -> None:
        self.inner, self.flaw = inner, flaw
        self.closes = 0
        self._held: list[rpc.Message] = []

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        if self.flaw == "reorders":
            self._held.append(message)
            if len(self._held) == 2:
                for held in reversed(self._held):
                    await self.inner.send(held, meta)
                self._held.clear()
            return
        if self.flaw == "truncates" and len(rpc.serialize(message)) > 100_000:
            message = rpc.Notification("big", {"text": "cut"})
        if self.flaw == "sends_when_closed" and self.closes:
            return
        await self.inner.send(message, meta)

    async def receive(self) -> Received:
        if self.flaw == "ignores_close" and self.closes:
            await trio.sleep_forever()
        try:
            return await self.inner.receive()
        except TransportClosed:
            if self.flaw == "wrong_error" and self.closes:
                raise trio.ClosedResourceError("closed") from None  # not the transport's error
            raise

    async def aclose(self) -> None:
        self.closes += 1
        if self.flaw == "close_twice_fails" and self.closes > 1:
            raise RuntimeError("closed twice")
        if self.flaw != "ignores_close":
            await self.inner.aclose()


@pytest.mark.parametrize(
    ("flaw", "breaks"),
    [
        # (a lone message is held for ever: ``large`` and ``peer_close`` never see theirs)
        (
            "reorders",
            {"whole_in_order", "large", "concurrent_sends", "cancelled_receive", "closed_end_refuses", "peer_close"},
        ),
        ("truncates", {"large"}),
        ("sends_when_closed", {"closed_end_refuses"}),
        ("close_twice_fails", {"aclose_idempotent"}),
        ("ignores_close", {"closed_end_refuses", "close_wakes_receive", "close_wakes_send", "peer_close"}),
        ("wrong_error", {"closed_end_refuses", "close_wakes_receive"}),
    ],
)
async def test_a_broken_stream_fails_the_rules_it_breaks(
    flaw: str,
    breaks: set[str],
    autojump_clock: trio.abc.Clock,
) -> None:
    @asynccontextmanager
    async def broken_pair() -> AsyncIterator[tuple[MessageStream, MessageStream]]:
        a, b = memory_stream_pair()
        async with a, b:
            yield Broken(a, flaw), Broken(b, flaw)

    results = await check_two_way_message_stream(broken_pair, timeout=5, raise_on_failure=False)
    assert {r.rule for r in results if not r.passed} == breaks, table(results)
    with pytest.raises(AssertionError, match="MessageStream contract checks failed"):
        await check_two_way_message_stream(broken_pair, rules=sorted(breaks), timeout=5)


async def test_a_request_stream_that_loses_answers_fails(autojump_clock: trio.abc.Clock) -> None:
    @asynccontextmanager
    async def lossy(server: Server) -> AsyncIterator[MessageStream]:
        async with serve_in_process(server) as stream:
            yield Dropping(stream)

    class Dropping:
        def __init__(self, inner: MessageStream) -> None:
            self.inner, self.count = inner, 0

        async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
            await self.inner.send(message, meta)

        async def receive(self) -> Inbound:
            while True:
                item = await self.inner.receive()
                self.count += 1
                if self.count != 3:  # the third answer never arrives
                    return item

        async def aclose(self) -> None:
            await self.inner.aclose()

    results = await check_request_stream(lossy, "2025-11-25", timeout=5, raise_on_failure=False)
    failed = {r.rule for r in results if not r.passed}
    assert "whole_in_order" in failed and all("within 5" in (r.error or "") for r in results if not r.passed)


async def test_a_request_left_hanging_when_the_server_is_gone_fails(autojump_clock: trio.abc.Clock) -> None:
    @asynccontextmanager
    async def deaf(server: Server, stop: trio.Event | None = None) -> AsyncIterator[MessageStream]:
        # The server "goes away" but the stream never says so: the pending request would hang.
        async with serve_in_process(server) as stream:
            yield stream

    (result,) = await check_request_stream(deaf, "2025-11-25", rules=[PEER_GONE], timeout=5, raise_on_failure=False)
    assert result.rule == PEER_GONE and result.error == "did not finish within 5 s"
    (result,) = await check_request_stream(memory_served, "2025-11-25", rules=[PEER_GONE], timeout=5)
    assert result.passed


async def test_a_stream_without_the_cap_it_claims_fails_oversize(autojump_clock: trio.abc.Clock) -> None:
    results = await check_two_way_message_stream(
        memory_pair, rules=[OVERSIZE], max_message_size=1000, raise_on_failure=False
    )
    assert [r.passed for r in results] == [False, False]
    assert "over the 1000-byte cap arrived" in (results[0].error or "")
    with pytest.raises(ValueError, match="max_message_size"):
        await check_two_way_message_stream(memory_pair, rules=[OVERSIZE])


class CallerRun:
    """A memory end with a ``begin_request`` whose exchange ``run`` sends the request in
    turn (each waits until the one begun before it went out); the answer comes back
    through ``receive``.  ``flaw`` breaks it one way."""

    def __init__(self, inner: MessageStream, flaw: str | None) -> None:
        self.inner, self.flaw = inner, flaw
        self._last: trio.Event | None = None
        self._begun: set[object] = set()

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        await self.inner.send(message, meta)

    async def receive(self) -> Inbound:
        while True:
            item = await self.inner.receive()
            answered = item.payload.messages[0] if isinstance(item, Received) and item.payload.messages else None
            if not (self.flaw == "loses_answers" and getattr(answered, "id", None) in self._begun):
                return item

    async def aclose(self) -> None:
        await self.inner.aclose()

    def begin_request(self, message: rpc.Request, meta: SendMeta) -> Exchange:
        self._begun.add(message.id)
        sent = trio.Event()
        after, self._last = self._last, sent
        return Exchange(self, message, meta, after, sent)


class Exchange:
    def __init__(
        self, stream: CallerRun, message: rpc.Request, meta: SendMeta, after: trio.Event | None, sent: trio.Event
    ) -> None:
        self.stream, self.message, self.meta, self.after, self.sent = stream, message, meta, after, sent

    async def run(self) -> Received | None:
        try:
            if self.after is not None:
                await self.after.wait()
            await self.stream.inner.send(self.message, self.meta)
        finally:
            self.sent.set()
        return None

    def abandon(self) -> None:
        if self.stream.flaw != "holds_after_abandon":
            self.sent.set()


@pytest.mark.parametrize("flaw", [None, "loses_answers", "holds_after_abandon"])
async def test_the_caller_exchange_rule_fails_a_stream_that_breaks_it(
    flaw: str | None, autojump_clock: trio.abc.Clock
) -> None:
    @asynccontextmanager
    async def served(server: Server) -> AsyncIterator[MessageStream]:
        async with serve_in_process(server) as stream:
            yield CallerRun(stream, flaw)

    (result,) = await check_request_stream(
        served, "2025-11-25", rules=[CALLER_EXCHANGE], timeout=5, raise_on_failure=False
    )
    assert result.passed == (flaw is None), result
    if flaw is not None:
        assert result.error == "did not finish within 5 s"
    # A stream without ``begin_request`` fails the rule, saying so.
    (result,) = await check_request_stream(memory_served, "2025-11-25", rules=[CALLER_EXCHANGE], raise_on_failure=False)
    assert result.error == "AssertionError: the stream offers no begin_request"
