"""Which checks a run reports: ``trimcp check --only`` / ``--skip``.

Theory of operation
-------------------
A ``Selection`` holds two lists of patterns, each an exact check id
(``tools.list``) or a shell glob (``http.*``, ``*.unsupported-version``),
matched with ``fnmatch.fnmatchcase``.  A check is selected when ``only`` is
empty or one of its patterns matches, and no ``skip`` pattern matches.  A
pattern that matches no check of the catalogue is a mistake (a typo would
otherwise silently select nothing), found by ``unknown_patterns`` before any
server is started.

``Results`` consults the selection: an unselected check is reported ``skip``
"not selected" whatever ran, and the runner asks ``Results.wants(...)``
before a group of probes so that a group none of whose checks is selected is
not run at all (``--only tools.*`` spawns no probe connections).  The
session's own tour always runs: it is what negotiates the revision.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

import attrs

__all__ = ["Selection"]


@attrs.frozen
class Selection:
    """Which checks a run keeps: ``--only`` and ``--skip`` patterns of check ids."""

    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()

    @property
    def everything(self) -> bool:
        return not self.only and not self.skip

    def selected(self, check_id: str) -> bool:
        if self.only and not _matches(check_id, self.only):
            return False
        return not _matches(check_id, self.skip)

    def unknown_patterns(self, check_ids: Iterable[str]) -> list[str]:
        """The patterns (of ``only`` and ``skip``) that match none of ``check_ids``."""
        ids = list(check_ids)
        return [p for p in (*self.only, *self.skip) if not any(fnmatch.fnmatchcase(i, p) for i in ids)]


def _matches(check_id: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(check_id, p) for p in patterns)
