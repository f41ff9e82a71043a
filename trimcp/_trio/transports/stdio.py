"""The stdio transport (MCP "Transports" section, every revision), client and server side.

Theory of operation
-------------------
Over stdio the client launches the server as a subprocess; each JSON-RPC
message is one line of UTF-8 JSON on the child's stdin (client -> server) or
stdout (server -> client).  The server MAY log to stderr; the client may keep,
forward or ignore it.  To stop the server the client closes the child's stdin,
waits for it to exit, and escalates to signals if it does not.

Client side, ``open_stdio_process`` (an async context manager):

* spawns the child in its own session (``start_new_session=True``), so the
  child is the leader of a new process group and shutdown signals reach any
  helpers it forked, not just the leader;
* owns a nursery with one background task that drains stderr into a bounded
  tail (last ``stderr_lines`` lines, at most ``stderr_bytes`` bytes) and
  optionally forwards each line to ``on_stderr``.  Draining is essential: a
  chatty server blocked on a full stderr pipe would stop answering;
* reads stdout with the sans-IO ``LineDecoder`` (size cap) and writes stdin
  under a ``trio.StrictFIFOLock`` so concurrent senders never interleave;
* on stdout EOF, ``receive`` waits briefly (bounded) for the child to be reaped
  and stderr to drain, then raises ``TransportClosed`` with the exit status and
  the last stderr lines, which is what a user needs to see *why* it died;
* on exit (or ``aclose``), under a shielded cancel scope: close stdin, wait
  ``shutdown_grace`` seconds, then SIGINT -> 100 ms -> SIGTERM -> 400 ms ->
  SIGKILL to the process group, and always reap the child (no zombies).

Server side, ``open_stdio_server_stream`` wraps dup'd copies of this process's
fds 0 and 1 in ``trio.lowlevel.FdStream``.  EOF on stdin is ``TransportClosed``.

Line reading/writing and the stderr tail live in ``_pipes``; notably, a send
cancelled after part of a line was written makes every later send fail with
``TransportClosed`` (the peer could never re-synchronise on a torn line).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Final, Protocol

import trio

from ..._errors import ConnectError, RemoteProtocolError, TransportClosed
from ..._sansio import jsonrpc
from ..._sansio.framing.lines import DEFAULT_MAX_LINE
from .._groups import raise_single
from ..stream import NO_META, Received, SendMeta, parse_received
from ._pipes import TORN_WRITE, LineReader, LineWriter, StderrTail, WriteAborted, torn_note

__all__ = [
    "DEFAULT_MAX_LINE",
    "StdioProcessStream",
    "StdioServerStream",
    "open_stdio_process",
    "open_stdio_server_stream",
    "terminate_process",
]

#: After stdout EOF, how long ``receive`` waits for the exit status and the stderr tail.
EXIT_REPORT_WAIT: Final = 1.0
#: After the child is reaped, how long shutdown lets the stderr reader drain before cancelling it
#: (a grandchild that escaped the process group may hold stderr open forever).
STDERR_DRAIN_WAIT: Final = 0.5
#: Signals sent to the process group after the grace period, each followed by a wait.
ESCALATION: Final = ((signal.SIGINT, 0.1), (signal.SIGTERM, 0.4))
#: How many stderr lines go into a ``TransportClosed`` message (the full tail is ``stderr_tail()``).
ERROR_TAIL_LINES: Final = 50


# --------------------------------------------------------------------------- shutdown


class WaitableProcess(Protocol):
    """What ``terminate_process`` needs from a process (``trio.Process`` fits)."""

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


async def terminate_process(
    process: WaitableProcess,
    *,
    grace: float,
    send_signal: Callable[[int], None],
) -> int:
    """Wait ``grace`` s for ``process`` to exit, then SIGINT, SIGTERM and SIGKILL it.

    The caller has already asked politely (closed stdin).  Each signal is sent
    only while the process is unreaped (``returncode`` polls and reaps), so its
    pid cannot have been recycled.  Returns the exit status once reaped.  Run it
    under a shielded cancel scope: stopping half-way would leak the child.
    """
    with trio.move_on_after(grace):
        return await process.wait()
    for signum, wait in ESCALATION:
        if process.returncode is not None:
            return process.returncode
        send_signal(signum)
        with trio.move_on_after(wait):
            return await process.wait()
    if process.returncode is None:
        send_signal(signal.SIGKILL)
    return await process.wait()


def _signal_group(process: trio.Process, signum: int) -> None:
    """Signal the child's process group (it leads one: start_new_session=True)."""
    try:
        os.killpg(process.pid, signum)
        return
    except ProcessLookupError:
        pass  # the child left its group (setpgid/setsid): fall back to the child itself
    except PermissionError:
        pass  # some member is not ours to signal; still reach the child
    try:
        process.send_signal(signum)
    except ProcessLookupError:
        pass


# --------------------------------------------------------------------------- client side


class StdioProcessStream:
    """A ``MessageStream`` to an MCP server running as a child process.

    Made by ``open_stdio_process``; one task may ``receive`` at a time, any number may ``send``.
    """

    def __init__(
        self,
        process: trio.Process,
        command: Sequence[str],
        *,
        max_line: int,
        stderr: StderrTail,
        shutdown_grace: float,
    ) -> None:
        assert isinstance(process.stdin, trio.lowlevel.FdStream)
        assert process.stdout is not None and process.stderr is not None
        self.process = process
        self.command = tuple(command)
        self._writer = LineWriter(process.stdin)
        self._reader = LineReader(process.stdout, max_line)
        self._stderr = stderr
        self._shutdown_grace = shutdown_grace
        self._closing = False
        self._closed = trio.Event()
        #: Names of the signals shutdown needed (empty when closing stdin sufficed).
        self.signals_sent: list[str] = []

    def _send_shutdown_signal(self, signum: int) -> None:
        self.signals_sent.append(signal.Signals(signum).name)
        _signal_group(self.process, signum)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the child has exited (negative: killed by that signal)."""
        return self.process.returncode

    def stderr_tail(self) -> str:
        """The retained end of the child's stderr, lines joined with newlines."""
        return self._stderr.text()

    def describe(self) -> str:
        return f"stdio server {shlex.join(self.command)} (pid {self.pid})"

    def __repr__(self) -> str:
        return f"<StdioProcessStream {self.describe()} returncode={self.returncode}>"

    def _error(self, message: str) -> TransportClosed:
        return TransportClosed(
            message,
            returncode=self.process.returncode,
            stderr_tail=self._stderr.text(ERROR_TAIL_LINES),
        )

    async def _gone(self, what: str) -> TransportClosed:
        # The child is (probably) dying: give it a moment to be reaped and its stderr
        # to drain, so the error can say how it ended.  Bounded: it may linger.
        with trio.move_on_after(EXIT_REPORT_WAIT):
            await self.process.wait()
            await self._stderr.done.wait()
        if self.process.returncode is not None:
            return self._error(f"{self.describe()} exited{what}")
        return self._error(f"{self.describe()} closed its stdout{what}")

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        payload = jsonrpc.serialize(message)
        try:
            await self._writer.send(payload)
        except trio.ClosedResourceError:
            raise self._error(f"{self.describe()}: transport is closed") from None
        except trio.BrokenResourceError as exc:
            raise await self._gone(" (it stopped reading its stdin)") from exc
        except WriteAborted:
            raise self._error(f"{self.describe()}: {TORN_WRITE}") from None

    async def receive(self) -> Received:
        if self._closing:
            await trio.lowlevel.checkpoint()
            raise self._error(f"{self.describe()}: transport is closed")
        try:
            line = await self._reader.receive()
        except trio.ClosedResourceError:
            raise self._error(f"{self.describe()}: transport is closed") from None
        except RemoteProtocolError:
            await self.aclose()  # a broken framing cannot be resynchronised
            raise
        if line is None:
            raise await self._gone(torn_note(self._reader))
        return parse_received(line, max_size=len(line))  # the line framing capped it

    async def aclose(self) -> None:
        """Close stdin, let the child exit (escalating to signals), reap it; idempotent."""
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        try:
            with trio.CancelScope(shield=True):
                # EOF on stdin is the polite request to exit (MCP stdio shutdown).
                await self._writer.aclose()
                await terminate_process(
                    self.process,
                    grace=self._shutdown_grace,
                    send_signal=self._send_shutdown_signal,
                )
                with trio.move_on_after(STDERR_DRAIN_WAIT):
                    await self._stderr.done.wait()
                self._stderr.stop()
                await self._reader.aclose()
                assert self.process.stderr is not None
                await self.process.stderr.aclose()
        finally:
            self._closed.set()


async def _spawn(
    argv: list[str], env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None
) -> trio.Process:
    if not argv:
        raise ValueError("command must name an executable")
    # A given env is merged onto ours: servers need PATH, HOME, etc. to run at all.
    full_env = None if env is None else {**os.environ, **env}
    try:
        return await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        where = f"cannot start MCP server {shlex.join(argv)}"
        if isinstance(exc, FileNotFoundError) and exc.filename in (argv[0], None):
            detail = f"executable {argv[0]!r} not found (is it installed and on PATH?)"
        elif isinstance(exc, PermissionError) and exc.filename in (argv[0], None):
            detail = f"{argv[0]!r} is not executable (permission denied)"
        else:
            detail = f"{exc.strerror or exc}" + (f": {exc.filename!r}" if exc.filename else "")
        raise ConnectError(f"{where}: {detail}") from exc


@asynccontextmanager
async def open_stdio_process(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    stderr_lines: int = 200,
    stderr_bytes: int = 64 * 1024,
    shutdown_grace: float = 2.0,
    on_stderr: Callable[[str], None] | None = None,
) -> AsyncIterator[StdioProcessStream]:
    """Launch an MCP server as a child process and yield a stream to it.

    ``command`` is an argv list (no shell).  ``env``, if given, is *merged onto*
    ``os.environ`` (later keys win); pass ``None`` to inherit unchanged.
    ``max_line`` caps one incoming message.  The last ``stderr_lines`` lines of
    stderr (at most ``stderr_bytes`` bytes) are kept for ``stderr_tail()`` and
    error messages; ``on_stderr`` is called with each stderr line (it must not
    block; an exception from it is logged and stops the forwarding).

    On exit the child is shut down: stdin closed, ``shutdown_grace`` seconds to
    exit, then SIGINT, SIGTERM and SIGKILL to its process group; it is always
    reaped.  A missing executable raises ``ConnectError``.
    """
    process = await _spawn(list(command), env, cwd)
    stream: StdioProcessStream | None = None
    try:
        tail = StderrTail(stderr_lines, stderr_bytes, on_stderr)
        stream = StdioProcessStream(
            process, command, max_line=max_line, stderr=tail, shutdown_grace=shutdown_grace
        )
        async with trio.open_nursery() as nursery:
            assert process.stderr is not None
            nursery.start_soon(tail.run, process.stderr)
            try:
                yield stream
            finally:
                # Inside the nursery: shutdown ends the stderr reader the nursery waits for.
                await stream.aclose()
    except BaseExceptionGroup as group:
        # The stderr reader cannot fail, so the group holds only the body's exception.
        raise_single(group)
    finally:
        # Normally a no-op (already closed inside the nursery); if we failed before
        # that point, this still makes sure the child never outlives us.
        with trio.CancelScope(shield=True):
            if stream is not None:
                await stream.aclose()
            else:
                _signal_group(process, signal.SIGKILL)
                await process.wait()
                for pipe in (process.stdin, process.stdout, process.stderr):
                    if pipe is not None:
                        await pipe.aclose()


# --------------------------------------------------------------------------- server side


class StdioServerStream:
    """A ``MessageStream`` over this process's stdin/stdout (an MCP server launched by a client)."""

    def __init__(
        self,
        stdin: trio.lowlevel.FdStream,
        stdout: trio.lowlevel.FdStream,
        *,
        max_line: int = DEFAULT_MAX_LINE,
    ) -> None:
        self._reader = LineReader(stdin, max_line)
        self._writer = LineWriter(stdout)
        self._closed = False

    def describe(self) -> str:
        return "stdio (server side)"

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        payload = jsonrpc.serialize(message)
        try:
            await self._writer.send(payload)
        except trio.ClosedResourceError:
            raise TransportClosed("stdio server stream is closed") from None
        except trio.BrokenResourceError as exc:
            raise TransportClosed("the client closed our stdout") from exc
        except WriteAborted:
            raise TransportClosed(TORN_WRITE) from None

    async def receive(self) -> Received:
        if self._closed:
            await trio.lowlevel.checkpoint()
            raise TransportClosed("stdio server stream is closed")
        try:
            line = await self._reader.receive()
        except trio.ClosedResourceError:
            raise TransportClosed("stdio server stream is closed") from None
        except RemoteProtocolError:
            await self.aclose()
            raise
        if line is None:
            raise TransportClosed("the client closed our stdin" + torn_note(self._reader))
        return parse_received(line, max_size=len(line))  # the line framing capped it

    async def aclose(self) -> None:
        # Closing the dup'd fds leaves fds 0/1 open and restores their blocking mode.
        self._closed = True
        with trio.CancelScope(shield=True):
            await self._reader.aclose()
            await self._writer.aclose()


@asynccontextmanager
async def open_stdio_server_stream(
    *, max_line: int = DEFAULT_MAX_LINE, stdin_fd: int = 0, stdout_fd: int = 1
) -> AsyncIterator[StdioServerStream]:
    """Yield a stream over this process's stdin/stdout (or the given fds).

    The fds are dup'd, so closing the stream leaves fds 0 and 1 open.  Caveat
    (POSIX): non-blocking mode belongs to the open file, so while the stream is
    open, blocking writes through ``sys.stdout`` may fail with
    ``BlockingIOError``; an MCP server must not write anything but protocol
    messages to stdout anyway (log to stderr).
    """
    stdin = trio.lowlevel.FdStream(os.dup(stdin_fd))
    try:
        stdout = trio.lowlevel.FdStream(os.dup(stdout_fd))
    except BaseException:
        stdin.close()
        raise
    stream = StdioServerStream(stdin, stdout, max_line=max_line)
    try:
        yield stream
    finally:
        await stream.aclose()
