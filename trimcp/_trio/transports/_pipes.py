"""Pipe plumbing shared by the stdio transport's client and server sides.

Theory of operation
-------------------
``LineReader`` turns a non-blocking pipe fd into stdio message lines with the
sans-IO ``LineDecoder`` (which enforces the size cap).  It reads with its own
``os.read`` loop (what ``FdStream.receive_some`` does, minus its bookkeeping)
so that the one place it sleeps, waiting for the fd to become readable, can be
woken by ``source_exited()``: the client calls it when the child process has
exited, because a grandchild holding the pipe's write end would otherwise keep
the read waiting for an EOF that never comes.  Cancelling that wait loses no
data (nothing was read yet); afterwards the reader drains what is already in
the pipe without blocking (bounded by ``EXIT_DRAIN_LIMIT``, the most a dead
writer can have left there) and then reports EOF.  Only the sleeping path pays
for the cancel scope.  ``LineWriter`` frames
and writes lines to a non-blocking pipe fd, one writer at a time
(``trio.StrictFIFOLock``).  It runs its own ``os.write`` loop instead of
``send_all`` so it knows how many bytes of a line reached the pipe: a write
cancelled part-way leaves a torn line the peer cannot re-synchronise from, so
the writer then refuses every later send (``WriteAborted``) rather than
silently corrupting the next message.  A write cancelled before any byte went
out leaves the stream intact.

``StderrTail`` drains a child's stderr into bounded memory (last N lines within
a byte budget), forwarding lines to an optional callback; draining matters
because a child blocked on a full stderr pipe stops answering.
"""

from __future__ import annotations

import errno
import logging
import os
from collections import deque
from collections.abc import Callable
from typing import Final

import trio

from ..._errors import RemoteProtocolError, TransportError
from ..._sansio.framing import FramingOverflow
from ..._sansio.framing.lines import LineDecoder, frame
from .._locks import held
from ..tcp import ReadyStreak

_log = logging.getLogger("trimcp.stdio")

CHUNK: Final = 64 * 1024
#: After the writer exited, how much more is read before EOF is declared: a pipe holds at
#: most 1 MiB by default (Linux pipe-max-size), so this is all a dead writer can have left;
#: it stops a grandchild that keeps writing from prolonging the drain for ever.
EXIT_DRAIN_LIMIT: Final = 1024 * 1024


class WriteAborted(TransportError):
    """An earlier write was cancelled after part of a line reached the pipe."""


class LineWriter:
    """Writes framed lines to a non-blocking pipe, one writer at a time."""

    def __init__(self, stream: trio.lowlevel.FdStream) -> None:
        self._stream = stream
        self._lock = trio.StrictFIFOLock()
        self.torn = False

    async def send(self, payload: bytes) -> None:
        """Raises ``trio.ClosedResourceError`` (closed on our side), ``trio.BrokenResourceError``
        (the reader is gone) or ``WriteAborted``."""
        data = memoryview(frame(payload))
        async with held(self._lock):
            if self.torn:
                raise WriteAborted
            sent = 0
            while sent < len(data):
                # Re-read the fd every time: it becomes -1 (EBADF) once the stream is closed.
                fd = self._stream.fileno()
                try:
                    sent += os.write(fd, data[sent:])
                except BlockingIOError:
                    try:
                        await trio.lowlevel.wait_writable(fd)
                    except BaseException:
                        self.torn = sent > 0
                        raise
                except OSError as exc:
                    if exc.errno == errno.EBADF:
                        raise trio.ClosedResourceError("stream was closed") from None
                    raise trio.BrokenResourceError(str(exc)) from exc

    async def aclose(self) -> None:
        await self._stream.aclose()


class LineReader:
    """Reads complete lines from a non-blocking pipe with the sans-IO ``LineDecoder``."""

    def __init__(self, stream: trio.lowlevel.FdStream, max_line: int) -> None:
        self._stream = stream
        self._decoder = LineDecoder(max_line)
        self._lines: deque[bytes] = deque()
        self.eof = False
        #: Size of an unterminated line found at EOF (a message cut short), else 0.
        self.torn_bytes = 0
        #: Set by ``source_exited``: from then on a read that would block is EOF.
        self.source_gone = False
        self._drain_budget = EXIT_DRAIN_LIMIT
        #: The fd a read is waiting on, if one is.
        self._waiting: int | None = None
        #: Reads in a row that found data at once (see ``_read``).
        self._streak = ReadyStreak()
        #: An oversize line, raised once the lines that came before it are handed out.
        self._overflow: FramingOverflow[bytes] | None = None

    def source_exited(self) -> None:
        """The writer (the child process) has exited: stop waiting for more than the pipe holds."""
        self.source_gone = True
        if self._waiting is not None:
            # Wake the read waiting on the fd (it sees ClosedResourceError and drains what
            # is left without blocking).  Cheaper than a cancel scope around every wait, and
            # safe: once the writer is gone the fd is never waited on again.
            trio.lowlevel.notify_closing(self._waiting)

    async def receive(self) -> bytes | None:
        """Next line, or ``None`` at EOF.  Raises ``RemoteProtocolError`` (an oversize
        line, once the lines before it are handed out) or ``trio.ClosedResourceError``
        (closed on our side)."""
        while not self._lines:
            if self._overflow is not None:
                raise self._overflow
            if self.eof:
                await trio.lowlevel.checkpoint()
                return None
            data = await self._read()
            if not data:
                self.eof = True
                pending = self._decoder.buffered
                try:
                    self._decoder.receive_data(b"")
                except RemoteProtocolError:
                    self.torn_bytes = pending
                return None
            try:
                self._lines.extend(self._decoder.receive_data(data))
            except FramingOverflow as exc:
                self._lines.extend(exc.completed)
                self._overflow = exc
        return self._lines.popleft()

    async def _read(self) -> bytes:
        """One chunk, ``b""`` at EOF (or once the writer exited and the pipe is empty)."""
        # Cancellation is checked before reading (it loses nothing there), but the task
        # yields only when the pipe would block or after a streak of reads that did not
        # (tcp.ReadyStreak):
        # a full checkpoint per line cost a scheduler pass per message (benchmarks/).
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            # Re-read the fd every time: it becomes -1 (EBADF) once the stream is closed.
            fd = self._stream.fileno()
            if self.source_gone and self._drain_budget <= 0:
                return b""  # someone else (a grandchild) keeps writing: stop here
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                if self.source_gone:
                    return b""  # all the dead writer left has been read; later lines are not its
                self._waiting = fd
                self._streak.waited()
                try:
                    await trio.lowlevel.wait_readable(fd)
                except trio.ClosedResourceError:
                    if not self.source_gone:
                        raise  # closed on our side
                finally:
                    self._waiting = None
                continue
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    raise trio.ClosedResourceError("stream was closed") from None
                return b""  # a broken pipe is an end of input like any other
            if self.source_gone:
                self._drain_budget -= len(data)
            await self._streak.ready()
            return data

    async def aclose(self) -> None:
        await self._stream.aclose()


def torn_note(reader: LineReader) -> str:
    if reader.torn_bytes:
        return f" in the middle of a message ({reader.torn_bytes} bytes unterminated)"
    return ""


TORN_WRITE: Final = (
    "an earlier send was cancelled after part of a message was written; the stdio stream cannot be framed any more"
)


class StderrTail:
    """Bounded memory of a child's stderr: the last lines, within a byte budget."""

    def __init__(self, max_lines: int, max_bytes: int, on_line: Callable[[str], None] | None) -> None:
        self._max_lines = max(0, max_lines)
        self._max_bytes = max(1, max_bytes)
        self._on_line = on_line
        self._lines: deque[tuple[str, int]] = deque()  # (text, size in bytes)
        self._size = 0
        self._partial = bytearray()
        self._dropped_partial = False
        self.done = trio.Event()
        # Shielded: the reader must keep draining while the body is being cancelled
        # (the child may still be writing during shutdown); ``stop()`` ends it instead.
        self._scope = trio.CancelScope(shield=True)

    def text(self, max_lines: int | None = None) -> str:
        lines = [text for text, _ in self._lines]
        if self._partial:
            lines.append(self._decode(bytes(self._partial)))
        if max_lines is not None:
            lines = lines[-max_lines:]
        return "\n".join(lines)

    def stop(self) -> None:
        self._scope.cancel()

    async def run(self, stream: trio.abc.ReceiveStream) -> None:
        try:
            with self._scope:
                while True:
                    try:
                        data = await stream.receive_some(CHUNK)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        break
                    if not data:
                        break
                    self.feed(bytes(data))
                self.feed_eof()
        finally:
            self.done.set()

    def feed_eof(self) -> None:
        if self._partial:  # the last line had no newline
            self._emit(bytes(self._partial))
            self._partial.clear()

    def feed(self, data: bytes) -> None:
        *complete, rest = (bytes(self._partial) + data).split(b"\n")
        for line in complete:
            self._emit(line)
        self._partial[:] = rest
        if len(self._partial) > self._max_bytes:  # a huge line without newline: keep its end
            del self._partial[: len(self._partial) - self._max_bytes]
            self._dropped_partial = True

    @staticmethod
    def _decode(line: bytes) -> str:
        return line.decode("utf-8", "replace").rstrip("\r")

    def _emit(self, raw: bytes) -> None:
        truncated = self._dropped_partial or len(raw) > self._max_bytes
        self._dropped_partial = False
        text = ("[...]" if truncated else "") + self._decode(raw[-self._max_bytes :])
        size = min(len(raw), self._max_bytes)
        self._lines.append((text, size))
        self._size += size
        while self._lines and (len(self._lines) > self._max_lines or self._size > self._max_bytes):
            self._size -= self._lines.popleft()[1]
        if self._on_line is not None:
            try:
                self._on_line(text)
            except Exception:
                # A broken callback must not stop the draining (that would block the child).
                _log.exception("on_stderr callback failed; no more stderr lines will be forwarded")
                self._on_line = None
