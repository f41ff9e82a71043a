"""Where the library's log lines go while a command runs: stderr, ERROR and up, redacted.

Theory of operation
-------------------
A command reports a failure once, in its own words (a status line, a report row, the
one ``trimcp: ...`` line); the library's warnings about the same failure would only
repeat it, so the ``trimcp`` logger lets ERROR and up through.  Those lines can quote
what the transports were given - a URL, a command line - which for a ``--config`` entry
is built from its ``${VAR}`` expansions: the handler that writes them redacts them
(``trimcp.config.Redactor``), as everything else the CLI shows is redacted.  The lines
of ``trimcp.server.<name>`` (a pool's servers' own log messages) pass through it too.

Logging is the process's, so the handler is one: each command replaces it.
"""

from __future__ import annotations

import logging
import sys

from ..config import Redactor

__all__ = ["show_library_errors"]

_installed: logging.Handler | None = None


class _Stderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when a line is logged (as ``logging.lastResort``
    does, which this handler stands in for)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def show_library_errors(redact: Redactor) -> logging.Handler:
    """Let the library's ERROR lines reach stderr, redacted by ``redact``; nothing below.
    The handler it installs (in place of the last one) is returned."""
    global _installed
    logger = logging.getLogger("trimcp")
    logger.setLevel(logging.ERROR)
    if _installed is not None:
        logger.removeHandler(_installed)
    _installed = _Stderr()
    _installed.addFilter(redact.log_filter())
    logger.addHandler(_installed)
    return _installed
