"""Limits an HTTP server keeps across its connections: a connection cap and a body budget.

Theory of operation
-------------------
Each connection alone is bounded by ``H1ServerConnection`` (head size and time, body
size and time); these two objects bound what many connections take together.

* ``ConnectionLimit`` counts the open connections (SSE streams included:
  they are connections).  ``try_enter`` is O(1).  A connection over the cap
  is refused with a ready-made ``503 Service Unavailable`` carrying
  ``Connection: close`` and ``Retry-After`` (RFC 9110 section 15.6.4, 10.2.3),
  sent without reading the request: a client learns *why* instead of seeing a
  bare reset.  After the answer the write side is shut and what the client
  sent is drained for a moment before closing, because closing a socket with
  unread data makes the kernel send a reset, which can destroy the 503 before
  the client reads it (RFC 9112 section 9.6, "tear-down"; ``linger``, which
  ``http1.server`` uses too after an error that closes).  The drain is
  bounded in time and bytes, and only ``max_lingering`` refused connections
  linger at once; past that they are closed at once.  ``admit`` gives an
  admitted connection a ``Slot``, released once; it must be released *before*
  the socket closes (``serve_connection(on_close=...)``, or ``SlotStream``
  for a library such as trio-websocket that closes the stream itself), so a
  client that sees the connection end can connect again at once and find the
  slot free.
* ``BodyBudget`` is the one memory budget that request bodies share, in
  bytes of memory, not of bodies.  Before a byte of a body is read it
  reserves ``http1.server.BODY_COPIES`` (3) times its ``Content-Length`` (a
  chunked one: of its cap): what parsing the cheapest JSON text takes, its
  bytes, the decoded str and the strings parsed from it.  Once read, it
  settles on what parsing it will really take (``jsonrpc.parse_cost``, an
  upper bound from a scan of the bytes: wider characters make the text and
  strings 2 or 4 bytes a character, every JSON value an object of its own,
  up to 24 times the size for ``[{},{},...]``), giving back the difference
  or taking the rest (``top_up``) *ahead* of the waiting bodies: behind them
  it would wait for them while they wait for what it holds.  Only one body
  at a time waits so (two that each wait for what the other holds would
  wait forever): a second one that does not fit at once is answered 503.
  The one that waits is granted once the bodies being read or served have
  given their share back.  A body whose
  cost exceeds the whole budget is refused with 413, on its length or once
  read (the HTTP app requires a budget of at least 3 ``max_body``, so every
  ASCII body of ``max_body`` fits).  It gives what it holds back once its
  request has been served.  A reservation that does not fit waits, in FIFO
  order so a big body is not starved by small ones, bounded by the caller's
  deadline (the server then answers 503).  A reservation larger than
  the whole budget is clamped to it.  Reserving and releasing are O(1) apart
  from waking the waiters that now fit.
"""

from __future__ import annotations

from collections import deque

import trio

__all__ = ["OVERLOAD_RESPONSE", "BodyBudget", "ConnectionLimit", "Slot", "SlotStream", "linger"]

_OVERLOAD_BODY = b"Service Unavailable: too many connections\n"
#: What a connection over the cap gets (RFC 9110 section 15.6.4).
OVERLOAD_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"server: trimcp\r\n"
    b"connection: close\r\n"
    b"retry-after: 1\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\n"
    b"\r\n"
    b"%s"
) % (len(_OVERLOAD_BODY), _OVERLOAD_BODY)
_LINGER_SECONDS = 1.0
_LINGER_BYTES = 256 * 1024


class ConnectionLimit:
    """How many connections are open, against a cap (see the module docstring)."""

    def __init__(self, max_connections: int | None, *, max_lingering: int = 64) -> None:
        if max_connections is not None and max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.max_lingering = max_lingering
        self.open = 0
        #: Connections refused so far (for logs and benchmarks).
        self.refused = 0
        self._lingering = 0

    def try_enter(self) -> bool:
        if self.max_connections is not None and self.open >= self.max_connections:
            self.refused += 1
            return False
        self.open += 1
        return True

    def leave(self) -> None:
        self.open -= 1

    def admit(self) -> Slot | None:
        """A slot for one more connection, or ``None`` over the cap (then ``refuse`` it)."""
        return Slot(self) if self.try_enter() else None

    async def refuse(self, stream: trio.abc.Stream) -> None:
        """Answer 503 on a connection over the cap, then close it."""
        try:
            if self._lingering >= self.max_lingering:
                return
            self._lingering += 1
            try:
                with trio.move_on_after(_LINGER_SECONDS):
                    await stream.send_all(OVERLOAD_RESPONSE)
                    await linger(stream)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            finally:
                self._lingering -= 1
        finally:
            await trio.aclose_forcefully(stream)


class Slot:
    """One admitted connection's place under a ``ConnectionLimit``; ``release`` gives it back once."""

    __slots__ = ("_limit",)

    def __init__(self, limit: ConnectionLimit) -> None:
        self._limit: ConnectionLimit | None = limit

    def release(self) -> None:
        if self._limit is not None:
            self._limit.leave()
            self._limit = None


class SlotStream(trio.abc.Stream):
    """A stream that releases its ``Slot`` as it closes, before the socket does, whoever closes it."""

    def __init__(self, stream: trio.abc.Stream, slot: Slot) -> None:
        self.stream = stream
        self.slot = slot

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.stream.receive_some(max_bytes)

    async def aclose(self) -> None:
        self.slot.release()
        await self.stream.aclose()


async def linger(stream: trio.abc.Stream, *, seconds: float = _LINGER_SECONDS, max_bytes: int = _LINGER_BYTES) -> None:
    """After a last answer: shut our side and read what the client still sends, for a bounded
    while, so that closing does not reset the connection before the answer is read."""
    try:
        with trio.move_on_after(seconds):
            if isinstance(stream, trio.abc.HalfCloseableStream):
                await stream.send_eof()
            taken = 0
            while taken < max_bytes:
                data = await stream.receive_some(65536)
                if not data:
                    return
                taken += len(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass


class BodyBudget:
    """Bytes of request bodies held at once, across connections (see the module docstring)."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("the body budget must be at least 1 byte")
        self.capacity = capacity
        self.used = 0
        #: Highest ``used`` seen (for tests and benchmarks).
        self.peak = 0
        self._waiters: deque[_Waiter] = deque()
        #: Whether a holder waits in ``top_up`` (one at a time).
        self._topping_up = False

    def try_reserve(self, amount: int) -> bool:
        """Take ``amount`` bytes now if they fit and nobody waits (no scheduler pass)."""
        amount = min(amount, self.capacity)
        if self._waiters or self.used + amount > self.capacity:
            return False
        self._take(amount)
        return True

    async def reserve(self, amount: int) -> None:
        """Take ``amount`` bytes, waiting (FIFO) until they fit; cancel to give up."""
        amount = min(amount, self.capacity)
        if not self._waiters and self.used + amount <= self.capacity:
            self._take(amount)
            await trio.lowlevel.checkpoint()
            return
        await self._wait(_Waiter(amount), first=False)

    def try_top_up(self, amount: int) -> bool:
        """``top_up`` when it fits now, whoever waits (no scheduler pass); False otherwise."""
        amount = min(amount, self.capacity)
        if self.used + amount > self.capacity:
            return False
        self._take(amount)
        return True

    async def top_up(self, amount: int) -> bool:
        """More for a holder (a body read, settling on its cost): taken now if it fits,
        whoever waits; else waited for ahead of them, by one holder at a time (False at
        once for a second: two holders waiting for what the other holds would wait
        forever); cancel to give up."""
        amount = min(amount, self.capacity)
        if self.used + amount <= self.capacity:
            self._take(amount)
            await trio.lowlevel.checkpoint()
            return True
        if self._topping_up:
            await trio.lowlevel.checkpoint()
            return False
        self._topping_up = True
        try:
            await self._wait(_Waiter(amount), first=True)
        finally:
            self._topping_up = False
        return True

    async def _wait(self, waiter: _Waiter, *, first: bool) -> None:
        amount = waiter.amount
        if first:
            self._waiters.appendleft(waiter)
        else:
            self._waiters.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:
                self.release(amount)  # granted as we were cancelled: give it back
            else:
                waiter.abandoned = True  # dropped lazily by _wake
                self._wake()
            raise

    def release(self, amount: int) -> None:
        amount = min(amount, self.capacity)
        self.used -= amount
        self._wake()

    def _take(self, amount: int) -> None:
        self.used += amount
        self.peak = max(self.peak, self.used)

    def _wake(self) -> None:
        waiters = self._waiters
        while waiters:
            first = waiters[0]
            if first.abandoned:
                waiters.popleft()
                continue
            if self.used + first.amount > self.capacity:
                return
            waiters.popleft()
            self._take(first.amount)
            first.granted = True
            first.event.set()


class _Waiter:
    __slots__ = ("abandoned", "amount", "event", "granted")

    def __init__(self, amount: int) -> None:
        self.amount = amount
        self.event = trio.Event()
        self.granted = False
        self.abandoned = False
