"""The progress line of ``trimcp tools call``: what a tool reports while it runs.

Theory of operation
-------------------
Spec "Utilities / Progress": a request that carries a progress token may be answered,
before its result, by ``notifications/progress`` with ``progress``, an optional
``total`` and an optional ``message``.  ``tools call`` always sends a token (the
library does), and shows each report on stderr, so stdout keeps the result alone:

* ``--progress auto`` (the default): only when stderr is a terminal, as one line
  rewritten in place (``trimcp: slow: 2/4 (50%) step 2 of 4``) and erased when the
  call is over; a pipe, a file or CI sees nothing;
* ``--progress always``: on a terminal as above, elsewhere one line per report;
* ``--progress never``: nothing.

A server's message is shown on one line, control characters replaced, cut to fit.
"""

from __future__ import annotations

import re
from typing import Any, Final, TextIO

__all__ = ["CallProgress"]

#: Widest line written in place (a terminal's usual width, less one).
WIDTH: Final = 79
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


class CallProgress:
    """The ``on_progress`` callback of one call, writing to ``stream`` as ``mode`` says."""

    def __init__(self, stream: TextIO, mode: str, label: str) -> None:
        self.stream = stream
        self.tty = _isatty(stream)
        self.active = mode == "always" or (mode == "auto" and self.tty)
        self.label = _CONTROL.sub(" ", label)[:40]
        self.reports = 0
        self._width = 0

    def line(self, progress: float, total: float | None, message: str | None) -> str:
        text = f"trimcp: {self.label}: {_number(progress)}"
        if total:
            text += f"/{_number(total)} ({min(100, max(0, round(100 * progress / total)))}%)"
        if message:
            text += " " + _CONTROL.sub(" ", message).strip()
        return text

    def __call__(self, event: Any) -> None:
        self.reports += 1
        if not self.active:
            return
        text = self.line(event.progress, event.total, event.message)
        if self.tty:
            text = text[:WIDTH]
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Erase the line written in place (nothing to do for one line per report)."""
        if self.active and self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
