"""The ``trimcp`` command's exit statuses, Ctrl-C and a closed stdout: one place for all of them.

Exit status (every subcommand; the README and each ``--help`` point here)
------------------------------------------------------------------------
===  ======================================================================
  0  the run passed (``check``: no failed MUST; ``diff``: the same surfaces;
     ``replay``: every recording clean; ``servers status``: all connected)
  1  it failed: a failed MUST check (or SHOULD with ``--fail-on should``, or a
     stale expected failure); ``diff``: the surfaces differ; ``replay``: a problem
  2  usage error: a bad option, target, pattern or file, found before anything starts;
     ``tools call`` / ``prompts get``: a name or argument the server does not list
  3  authorization needed (``check --no-auth`` on a 401, an OAuth flow that failed)
  4  could not be checked: the server could not be started or reached, or it was
     there but never answered the first request (silent, or gone before a JSON-RPC
     answer); a report is still written, its summary line says why
  5  ``tools call``: the tool reported an error (``isError``)
130  interrupted (Ctrl-C, SIGINT): one line on stderr, no traceback
===  ======================================================================

A closed stdout (``trimcp check URL | head -3``) never changes the status: the rest of the
output goes to ``os.devnull`` (the Python documentation's note on SIGPIPE) and the run
finishes and exits as it would have.

Theory of operation
-------------------
``guarded_stdout`` puts a ``_PipeGuard`` in front of ``sys.stdout`` for the length of a
command: a ``BrokenPipeError`` from a write or a flush points file descriptor 1 at
``os.devnull`` and is swallowed, so the writer goes on, the command computes its status, and
the interpreter's last flush has nowhere to fail.  ``interrupted`` tells whether an exception
that escaped ``trio.run`` is a Ctrl-C, bare or inside an exception group.  ``not_checked``
tells a report that judged nothing (exit 4) from one that found failures (exit 1); ``check``
and ``check --config FILE`` (``check_many.exit_code``) both ask it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    from ..conformance import Report

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_AUTH, EXIT_NOT_CHECKED, EXIT_TOOL_ERROR = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process it interrupted
INTERRUPTED_LINE = "trimcp: interrupted\n"
#: The table, as every ``--help`` ends.
EXIT_TABLE = """exit status (every command):
    0  passed (check: no failed MUST; diff: same surfaces; replay: clean; servers status: all up)
    1  failed: a MUST check (a SHOULD with --fail-on should, a stale expected failure);
       diff: the surfaces differ; replay: a problem
    2  usage error, before anything starts (tools call, prompts get: a name or
       argument the server does not list)
    3  authorization needed
    4  could not be checked: not started or unreachable, or silent (no JSON-RPC answer)
    5  tools call: the tool reported an error
  130  interrupted (Ctrl-C)
  A closed stdout (| head) changes none of them."""

__all__ = [
    "EXIT_AUTH",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_CHECKED",
    "EXIT_OK",
    "EXIT_TABLE",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "INTERRUPTED_LINE",
    "guarded_stdout",
    "interrupted",
    "run_command",
]


def interrupted(exc: BaseException) -> bool:
    """A ``KeyboardInterrupt``, or a group (a nursery's) holding one."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(KeyboardInterrupt) is not None
    return False


def not_checked(report: Report) -> str | None:
    """Why ``report`` judged nothing (exit 4), or ``None`` when the server was checked
    (``Report.not_checked``, which the report's own summary line shows too)."""
    return report.not_checked


class _PipeGuard:
    """``sys.stdout`` that outlives its reader: after a broken pipe, writes go to devnull."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self.broken = False

    def _to_devnull(self) -> None:
        self.broken = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._inner.fileno())
            os.close(devnull)

    def write(self, text: str) -> int:
        try:
            return self._inner.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._inner.flush()
        except BrokenPipeError:
            self._to_devnull()
            # What was buffered goes to devnull now, so the interpreter's last flush succeeds.
            with contextlib.suppress(OSError, ValueError):
                self._inner.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer...
        return getattr(self._inner, name)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """For one command: a broken pipe on stdout neither raises nor changes the exit status."""
    real = sys.stdout
    guard = cast(TextIO, _PipeGuard(real))
    sys.stdout = guard
    try:
        yield
    finally:
        guard.flush()
        if sys.stdout is guard:
            sys.stdout = real


def run_command(command: Callable[[], int], interrupted_line: str) -> int:
    """``command()``'s exit status, with stdout guarded (``guarded_stdout``) and a Ctrl-C turned
    into ``interrupted_line`` on stderr and ``EXIT_INTERRUPTED``."""
    try:
        with guarded_stdout():
            return command()
    except BaseException as exc:
        if not interrupted(exc):
            raise
        # One line, whatever was running: trio's cancellation has closed every
        # connection and stopped every server process on its way out.
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(interrupted_line)
            sys.stderr.flush()
        return EXIT_INTERRUPTED
