"""The time limits that cut a run's probes short, noted where they fire (``results.timed``).

A context variable, so the probe helpers (``checks/probes.py``, ``checks/negative.py``,
``rawhttp.py``) note a timeout without being handed the run's ``Results``, and this
module imports nothing of the harness, so any of them may import it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["collect_timeouts", "current_timeouts", "note_timeout", "timed_out_after"]

#: The time limits (seconds) that ended a probe during the current run, in order.
_TIMEOUTS: ContextVar[list[float] | None] = ContextVar("trimcp_check_timeouts", default=None)


def note_timeout(seconds: float) -> None:
    """A probe of the current run gave up after ``seconds`` (``timed``)."""
    seen = _TIMEOUTS.get()
    if seen is not None:
        seen.append(seconds)


@contextlib.contextmanager
def collect_timeouts() -> Iterator[list[float]]:
    """The run's timeout notes; trio's tasks inherit the context, so they share the list."""
    token = _TIMEOUTS.set([])
    try:
        seen = _TIMEOUTS.get()
        assert seen is not None
        yield seen
    finally:
        _TIMEOUTS.reset(token)


def timed_out_after(exc: BaseException) -> float | None:
    """The time limit (seconds) that ended the wait ``exc`` reports, or ``None`` when no time
    limit did: the error, or one it was raised from, carries ``seconds`` (``RequestTimeout``,
    ``ConnectTimeout``, a probe's ``ProbeFailed`` after its ``fail_after``)."""
    seen: set[int] = set()
    err: BaseException | None = exc
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        seconds = getattr(err, "seconds", None)
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            return float(seconds)
        err = err.__cause__ or err.__context__
    return None


def current_timeouts() -> list[float] | None:
    """The current run's notes, or ``None`` outside a run."""
    return _TIMEOUTS.get()
