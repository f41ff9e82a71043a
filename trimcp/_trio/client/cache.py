"""Client-side caching of list results (2026-07-28, spec: server/utilities/caching).

Theory of operation
-------------------
A stateless-era server puts a freshness hint, ``ttlMs``, on every list result.
``ListCache`` keeps each *page* of ``tools/list``, ``prompts/list``,
``resources/list`` and ``resources/templates/list`` under its cache key - the
method and the cursor that fetched it, the only parameter of those requests -
and serves it while ``trio.current_time()`` is before the time it arrived plus
``ttlMs``.  A hint that is absent, zero, negative or not a number means "stale
at once": nothing is stored.  Each page has its own clock, as the spec asks.

The matching ``list_changed`` notification invalidates at once (resources'
also drops the templates, which describe the same list).  A per-method
generation counter, bumped by every invalidation, keeps a page that was being
fetched while the notification arrived from being stored afterwards as fresh.
``cacheScope`` needs no handling: the cache belongs to one session, hence to one
authorization context.  Callers bypass the cache with ``refresh=True``; the
fresh page is stored again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Generic, TypeVar

import attrs
import trio

T = TypeVar("T")

#: Which cached methods each notification makes stale.
INVALIDATED_BY: Final[Mapping[str, tuple[str, ...]]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


def ttl_seconds(result: Mapping[str, Any]) -> float:
    """The freshness lifetime a result's ``ttlMs`` grants, in seconds (0: none)."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
        return 0.0
    return float(ttl) / 1000.0


@attrs.define
class _Entry(Generic[T]):
    page: T
    expires: float


class ListCache(Generic[T]):
    """Pages of list results keyed by (method, cursor), each fresh until its own deadline."""

    def __init__(self) -> None:
        self._pages: dict[tuple[str, str | None], _Entry[T]] = {}
        self._generations: dict[str, int] = {}

    def get(self, method: str, cursor: str | None) -> T | None:
        """The page if it is still fresh, else None (and a stale one is dropped)."""
        entry = self._pages.get((method, cursor))
        if entry is None:
            return None
        if trio.current_time() < entry.expires:
            return entry.page
        del self._pages[(method, cursor)]
        return None

    def generation(self, method: str) -> int:
        """Take this before fetching a page; hand it to ``put``."""
        return self._generations.get(method, 0)

    def put(self, method: str, cursor: str | None, page: T, result: Mapping[str, Any], generation: int) -> None:
        """Store a page fetched when ``generation`` was current, if its result allows it."""
        ttl = ttl_seconds(result)
        if ttl <= 0 or generation != self.generation(method):
            self._pages.pop((method, cursor), None)
            return
        self._pages[(method, cursor)] = _Entry(page, trio.current_time() + ttl)

    def invalidate(self, method: str) -> None:
        """Forget every page of ``method`` and refuse pages already in flight."""
        self._generations[method] = self.generation(method) + 1
        for key in [k for k in self._pages if k[0] == method]:
            del self._pages[key]

    def on_notification(self, method: str, params: Mapping[str, Any]) -> None:
        """A notification tap: ``list_changed`` invalidates the matching lists."""
        for stale in INVALIDATED_BY.get(method, ()):
            self.invalidate(stale)

    def __len__(self) -> int:
        return len(self._pages)
