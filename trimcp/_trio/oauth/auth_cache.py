"""Remembering, across processes, which servers answered 401.

Theory of operation
-------------------
When a server answers an unauthenticated probe with 401, ``trimcp check`` and
``trimcp auth login`` mark its (canonical) URL here, and a successful
``auth login`` clears it; for the next ``ttl`` seconds (15 minutes by default)
``is_marked`` says so.  Nothing in trimcp reads the marks yet: they are kept
for a caller that connects to many servers and would rather go straight to the
OAuth flow (or skip the server) than probe it again - the connection pool of
the planned ``host`` layer.  ``open_client`` neither marks nor reads.  The record is a small JSON file shared by every trimcp process of the
user, by default ``$XDG_CACHE_HOME/trimcp/auth-needed.json`` (``~/.cache``
when unset; ``%LOCALAPPDATA%`` on Windows):
``{"version": 1, "entries": {url: marked_at_epoch_seconds}}``.

Writers must not lose each other's marks, whether they are tasks of one
process or separate processes.  Every write is a read-modify-write done
entirely inside one worker thread while holding an exclusive ``flock`` on a
sibling ``auth-needed.json.lock`` file (tasks of one instance also queue on a
``trio.Lock`` first, so they do not each park a thread on the flock); the new
content goes to a temporary file that replaces the old one atomically.  Readers
take no lock: ``os.replace`` means they see the old file or the new one, never
a torn one.  Each write prunes the entries that have expired.  A file that is
missing, unreadable as JSON or of the wrong shape is treated as empty - the
cache is only an optimisation - and the next write replaces it.

Times come from the injected ``clock`` (``time.time`` by default: the file is
shared between processes, so it needs wall-clock time, not ``trio.current_time``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import trio

from trimcp._trio.oauth.store import canonical_url, file_lock, read_json, write_json_atomic

DEFAULT_TTL: Final = 900.0
_VERSION: Final = 1


def user_cache_dir() -> Path:
    """The user's cache directory: ``$XDG_CACHE_HOME``, else ``~/.cache``
    (``%LOCALAPPDATA%`` on Windows)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg)
    if sys.platform == "win32":  # pragma: no cover
        local = os.environ.get("LOCALAPPDATA")
        if local:
            return Path(local)
    return Path.home() / ".cache"


def default_cache_path() -> Path:
    return user_cache_dir() / "trimcp" / "auth-needed.json"


def _entries(doc: Any) -> dict[str, float]:
    """The well-formed entries of a parsed cache file (anything else is dropped)."""
    if not isinstance(doc, dict):
        return {}
    raw = doc.get("entries")
    if not isinstance(raw, dict):
        return {}
    return {
        k: float(v)
        for k, v in raw.items()
        if isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
    }


class AuthNeededCache:
    """Servers known to need auth, remembered for ``ttl`` seconds in a shared JSON file."""

    def __init__(
        self,
        path: Path | None = None,
        ttl: float = DEFAULT_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.ttl = ttl
        self.clock = clock
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._tlock = trio.Lock()

    def __repr__(self) -> str:
        return f"AuthNeededCache({str(self.path)!r}, ttl={self.ttl})"

    def _fresh(self, marked_at: float, now: float) -> bool:
        return marked_at <= now + self.ttl and now - marked_at < self.ttl

    def _read(self) -> dict[str, float]:
        try:
            return _entries(read_json(self.path, private=False))
        except (ValueError, OSError):
            return {}  # corrupt or unreadable: the next write replaces it

    def _update(self, change: Callable[[dict[str, float], float], None]) -> None:
        with file_lock(self._lock_path):
            now = self.clock()
            entries = {k: v for k, v in self._read().items() if self._fresh(v, now)}
            change(entries, now)
            write_json_atomic(self.path, {"version": _VERSION, "entries": entries})

    async def _write(self, change: Callable[[dict[str, float], float], None]) -> None:
        async with self._tlock:
            await trio.to_thread.run_sync(self._update, change)

    async def mark(self, url: str) -> None:
        """Remember that ``url`` needs authorization (for ``ttl`` seconds from now)."""
        key = canonical_url(url)

        def change(entries: dict[str, float], now: float) -> None:
            entries[key] = now

        await self._write(change)

    async def clear(self, url: str) -> None:
        """Forget ``url`` (e.g. after a successful authorization)."""
        key = canonical_url(url)

        def change(entries: dict[str, float], now: float) -> None:
            entries.pop(key, None)

        await self._write(change)

    async def is_marked(self, url: str) -> bool:
        """Whether ``url`` was marked less than ``ttl`` seconds ago."""
        key = canonical_url(url)
        entries = await trio.to_thread.run_sync(self._read, abandon_on_cancel=True)
        marked_at = entries.get(key)
        return marked_at is not None and self._fresh(marked_at, self.clock())
