"""Where a server's shared state lives: in memory (default), SQLite or Redis (issue 30).

Theory of operation
-------------------
``Store`` (``base``) is the interface; ``MemoryStore``, ``SqliteStore`` and
``RedisStore`` are its backends.  ``open_store`` makes one from what
``serve_http(store=...)`` and ``trimcp serve --store`` accept: ``None`` or
``"memory"``, ``"sqlite:///PATH"``, ``"redis://HOST:PORT/DB"`` (with options
as a query: ``?lease=10``), or a ``Store`` already made.  The Redis backend's
client (``coredis``) is an optional extra, ``trimcp[redis]``, imported only
when a Redis store starts.
"""

from __future__ import annotations

from ..._sansio.store.location import StoreLocation, parse_store_url
from .base import EventBatch, Store, StoreError
from .memory import MemoryStore
from .redis import RedisStore
from .sqlite import SqliteStore

__all__ = [
    "EventBatch",
    "MemoryStore",
    "RedisStore",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoreLocation",
    "open_store",
    "parse_store_url",
]


def open_store(
    store: Store | str | None = None, *, replay_events: int = 256, replay_bytes: int = 8 * 1024 * 1024
) -> Store:
    """The store ``store`` names (``ValueError`` for a URL that names none).

    ``replay_events``/``replay_bytes`` cap each stream's log; a ``Store`` given as it
    is keeps its own."""
    if isinstance(store, Store):
        return store
    location = parse_store_url(store or "memory")
    if location.kind == "sqlite":
        return SqliteStore(location.path, location=location, replay_events=replay_events, replay_bytes=replay_bytes)
    if location.kind == "redis":
        return RedisStore(location, replay_events=replay_events, replay_bytes=replay_bytes)
    return MemoryStore(location=location, replay_events=replay_events, replay_bytes=replay_bytes)
