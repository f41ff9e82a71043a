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
* owns a nursery with two background tasks.  One drains stderr into a bounded
  tail (last ``stderr_lines`` lines, at most ``stderr_bytes`` bytes) and
  optionally forwards each line to ``on_stderr``.  Draining is essential: a
  chatty server blocked on a full stderr pipe would stop answering.  The other
  waits for the child to exit and tells the stdout reader, so an exit is seen
  even while a grandchild holds stdout open (no EOF would ever come): what the
  server wrote before exiting is still delivered, then ``receive`` fails;
* reads stdout with the sans-IO ``LineDecoder`` (size cap) and writes stdin
  under a ``trio.StrictFIFOLock`` so concurrent senders never interleave;
* on stdout EOF (or exit), ``receive`` waits briefly (bounded) for the child to
  be reaped and stderr to drain, then raises ``TransportClosed`` with the exit
  status and the last stderr lines, which is what a user needs to see *why* it
  died;
* on exit (or ``aclose``), under a shielded cancel scope: close stdin, wait
  ``ShutdownPolicy.grace`` (0.5 s), then SIGINT -> 100 ms -> SIGTERM -> 400 ms
  -> SIGKILL to the process group, always reap the child, and then stop what
  is left of its group (``_process.py``), so no helper it forked outlives it.

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
from typing import Final

import attrs
import trio

from ..._errors import ConnectError, RemoteProtocolError, TransportClosed
from ..._sansio import jsonrpc
from ..._sansio.framing.lines import DEFAULT_MAX_LINE
from ..._shutdown import ShutdownPolicy
from .._groups import raise_single
from ..stream import NO_META, Received, SendMeta, parse_received
from ._pipes import TORN_WRITE, LineReader, LineWriter, StderrTail, WriteAborted, torn_note
from ._process import (
    DEFAULT_SHUTDOWN,
    ESCALATION,
    escalation_of,
    reap_group,
    signal_group,
    terminate_process,
)

__all__ = [
    "DEFAULT_MAX_LINE",
    "ESCALATION",
    "ShutdownPolicy",
    "StdioProcessStream",
    "StdioServerStream",
    "open_stdio_process",
    "open_stdio_server_stream",
    "terminate_process",
]

#: After stdout EOF, how long ``receive`` waits for the exit status and the stderr tail.
EXIT_REPORT_WAIT: Final = 1.0
#: Once the child has exited, how long ``receive`` waits for its stderr to drain: what it
#: wrote is already in the pipe; a grandchild may hold stderr open, so do not wait for EOF.
EXITED_STDERR_WAIT: Final = 0.1
#: After the child is reaped, how long shutdown lets the stderr reader drain before cancelling it
#: (a grandchild that escaped the process group may hold stderr open forever).
STDERR_DRAIN_WAIT: Final = 0.5
#: How many stderr lines go into a ``TransportClosed`` message (the full tail is ``stderr_tail()``).
ERROR_TAIL_LINES: Final = 50


def _status(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


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
        shutdown: ShutdownPolicy = DEFAULT_SHUTDOWN,
    ) -> None:
        assert isinstance(process.stdin, trio.lowlevel.FdStream)
        assert process.stdout is not None and process.stderr is not None
        self.process = process
        self.command = tuple(command)
        self._writer = LineWriter(process.stdin)
        assert isinstance(process.stdout, trio.lowlevel.FdStream)
        self._reader = LineReader(process.stdout, max_line)
        self._stderr = stderr
        self.shutdown = shutdown
        self._closing = False
        self._closed = trio.Event()
        #: Names of the signals shutdown needed (empty when closing stdin sufficed).
        self.signals_sent: list[str] = []
        #: Signals sent to what was left of the process group after the server was gone.
        self.group_signals_sent: list[str] = []

    def _send_shutdown_signal(self, signum: int) -> None:
        self.signals_sent.append(signal.Signals(signum).name)
        signal_group(self.process, signum)

    async def watch_exit(self) -> None:
        """Wait for the child to exit, then let the stdout reader stop waiting for EOF."""
        await self.process.wait()
        self._reader.source_exited()

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
        returncode = self.process.returncode
        if returncode is not None and _status(returncode) not in message:
            message += f" (it {_status(returncode)})"  # said once, in words
        return TransportClosed(message, returncode=returncode, stderr_tail=self._stderr.text(ERROR_TAIL_LINES))

    async def _gone(self, what: str = "", *, if_running: str = "closed its stdout") -> TransportClosed:
        # The child is (probably) dying: give it a moment to be reaped and its stderr
        # to drain, so the error can say how it ended.  Bounded: it may linger.  Once it
        # has exited, that is the whole story; ``if_running`` says what it did while alive.
        with trio.move_on_after(EXIT_REPORT_WAIT):
            await self.process.wait()
        with trio.move_on_after(EXITED_STDERR_WAIT):
            await self._stderr.done.wait()
        if self.process.returncode is not None:
            return self._error(f"{self.describe()} {_status(self.process.returncode)}{what}")
        return self._error(f"{self.describe()} {if_running}{what}")

    def _note_group_signal(self, signum: int) -> None:
        self.group_signals_sent.append(signal.Signals(signum).name)

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        await self.send_raw(jsonrpc.serialize(message))

    async def send_raw(self, data: bytes) -> None:
        """Write ``data`` as one line, as is (a conformance probe's malformed message)."""
        try:
            await self._writer.send(data)
        except trio.ClosedResourceError:
            raise self._error(f"{self.describe()}: transport is closed") from None
        except trio.BrokenResourceError as exc:
            raise await self._gone(if_running="stopped reading its stdin") from exc
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
                policy = self.shutdown
                await terminate_process(
                    self.process,
                    grace=policy.grace,
                    send_signal=self._send_shutdown_signal,
                    escalation=escalation_of(policy),
                )
                if "SIGKILL" not in self.signals_sent:
                    # The server is gone but may have left children (the group's id is
                    # its pid): stop them too.  After SIGKILL to the group none is left.
                    await reap_group(self.process.pid, on_signal=self._note_group_signal)
                with trio.move_on_after(STDERR_DRAIN_WAIT):
                    await self._stderr.done.wait()
                self._stderr.stop()
                await self._reader.aclose()
                assert self.process.stderr is not None
                await self.process.stderr.aclose()
        finally:
            self._closed.set()


async def _spawn(argv: list[str], env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None) -> trio.Process:
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
        # The command is named once, in front; the detail says what is wrong with its program.
        where = f"cannot start MCP server {shlex.join(argv)}"
        if isinstance(exc, FileNotFoundError) and exc.filename in (argv[0], None):
            detail = "the program was not found (is it installed and on PATH?)"
        elif isinstance(exc, PermissionError) and exc.filename in (argv[0], None):
            detail = "the program is not executable (permission denied)"
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
    shutdown_grace: float | None = None,
    on_stderr: Callable[[str], None] | None = None,
    shutdown: ShutdownPolicy | None = None,
) -> AsyncIterator[StdioProcessStream]:
    """Launch an MCP server as a child process and yield a stream to it.

    ``command`` is an argv list (no shell).  ``env``, if given, is *merged onto*
    ``os.environ`` (later keys win); pass ``None`` to inherit unchanged.
    ``max_line`` caps one incoming message.  The last ``stderr_lines`` lines of
    stderr (at most ``stderr_bytes`` bytes) are kept for ``stderr_tail()`` and
    error messages; ``on_stderr`` is called with each stderr line (it must not
    block; an exception from it is logged and stops the forwarding).

    On exit the child is shut down as ``shutdown`` (a ``ShutdownPolicy``) says:
    stdin closed, ``grace`` seconds to exit (0.5 s; ``shutdown_grace``, if given,
    overrides it), then SIGINT, SIGTERM and SIGKILL to its process group; it is
    always reaped, and what is left of its group is stopped after it.  The
    child's exit is watched directly, so ``receive`` fails as soon as it has
    exited and its output is read, even while a grandchild holds stdout open.
    A missing executable raises ``ConnectError``.
    """
    policy = shutdown if shutdown is not None else DEFAULT_SHUTDOWN
    if shutdown_grace is not None:
        policy = attrs.evolve(policy, grace=shutdown_grace)
    process = await _spawn(list(command), env, cwd)
    stream: StdioProcessStream | None = None
    try:
        tail = StderrTail(stderr_lines, stderr_bytes, on_stderr)
        stream = StdioProcessStream(process, command, max_line=max_line, stderr=tail, shutdown=policy)
        async with trio.open_nursery() as nursery:
            assert process.stderr is not None
            nursery.start_soon(tail.run, process.stderr)
            # Ends once the child is reaped, which shutdown guarantees.
            nursery.start_soon(stream.watch_exit)
            try:
                yield stream
            finally:
                # Inside the nursery: shutdown ends the stderr reader the nursery waits for.
                await stream.aclose()
    except BaseExceptionGroup as group:
        # The stderr reader and the exit watcher cannot fail: the group holds only the body's.
        raise_single(group)
    finally:
        # Normally a no-op (already closed inside the nursery); if we failed before
        # that point, this still makes sure the child never outlives us.
        with trio.CancelScope(shield=True):
            if stream is not None:
                await stream.aclose()
            else:
                signal_group(process, signal.SIGKILL)
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
