"""Every connection a run opened, recorded, so that the rules of every message are read over all.

A context variable (like ``timeouts.py``): ``probes.probe_connection`` and the negative
probes register the ``RecordingStream`` of each fresh connection they open without being
handed the run's state, and the runner reads them all at the end (``checks/base_rules.py``:
notifications without ids, error responses carrying the request's id, no response to a
notification).  Outside a run nothing is kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .recorder import RecordingStream

__all__ = ["collect_connections", "current_connections", "note_connection"]

_OPENED: ContextVar[list[RecordingStream] | None] = ContextVar("trimcp_check_connections", default=None)


def note_connection(recording: RecordingStream) -> None:
    """A probe of the current run opened a connection recorded by ``recording``."""
    opened = _OPENED.get()
    if opened is not None and recording not in opened:
        opened.append(recording)


@contextlib.contextmanager
def collect_connections() -> Iterator[list[RecordingStream]]:
    """The run's probe connections; trio's tasks inherit the context, so they share the list."""
    token = _OPENED.set([])
    try:
        opened = _OPENED.get()
        assert opened is not None
        yield opened
    finally:
        _OPENED.reset(token)


def current_connections() -> list[RecordingStream]:
    """The probe connections the current run opened so far (none outside a run)."""
    return list(_OPENED.get() or ())
