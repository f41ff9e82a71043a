"""Where a server's shared store is: the ``--store`` URL, parsed (no I/O).

Theory of operation
-------------------
``trimcp serve --store`` and ``serve_http(store="...")`` name the store by
URL, as database clients do:

=====================================  ============================================
``memory``                             this process only (the default)
``sqlite:///ABSOLUTE/PATH``            a SQLite file (``sqlite://RELATIVE/PATH``
                                       relative to the working directory)
``redis://[:PASSWORD@]HOST[:PORT]/DB``  a Redis server (port 6379, database 0
                                       unless given)
=====================================  ============================================

Options follow as a query: ``lease`` (seconds a replica's heartbeat lasts:
after that its tasks are ``failed`` and its streams taken over; default 10)
and, for Redis, ``prefix`` (the key prefix, so that several deployments share
one Redis; default ``trimcp``).  Anything else is a ``ValueError`` that says
what is accepted.
"""

from __future__ import annotations

import math
import urllib.parse
from typing import Final

import attrs

__all__ = ["DEFAULT_LEASE", "StoreLocation", "parse_store_url"]

DEFAULT_LEASE: Final = 10.0
_FORMS = "memory, sqlite:///PATH or redis://HOST:PORT/DB"


@attrs.frozen
class StoreLocation:
    kind: str  # "memory" | "sqlite" | "redis"
    path: str = ""
    host: str = "127.0.0.1"
    port: int = 6379
    db: int = 0
    username: str | None = None
    password: str | None = None
    lease: float = DEFAULT_LEASE
    prefix: str = "trimcp"

    def describe(self) -> str:
        """The location for people and logs (never the password)."""
        if self.kind == "sqlite":
            return f"sqlite:{self.path}"
        if self.kind == "redis":
            return f"redis://{self.host}:{self.port}/{self.db}"
        return "memory"


def _options(query: str, allowed: tuple[str, ...]) -> dict[str, str]:
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ValueError(f"store options must be NAME=VALUE pairs, got {query!r}") from None
    options = dict(pairs)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown store option {unknown[0]!r} (known: {', '.join(allowed) or 'none'})")
    return options


def _lease(options: dict[str, str]) -> float:
    text = options.get("lease")
    if text is None:
        return DEFAULT_LEASE
    try:
        lease = float(text)
    except ValueError:
        lease = -1.0
    if not (lease > 0 and math.isfinite(lease)):
        raise ValueError(f"store option lease must be a positive number of seconds, got {text!r}")
    return lease


def parse_store_url(url: str) -> StoreLocation:
    """The store ``url`` names (``ValueError`` with what is accepted, for anything else)."""
    text = url.strip()
    if text in ("memory", "memory://"):
        return StoreLocation("memory")
    scheme, sep, rest = text.partition("://")
    if not sep:
        raise ValueError(f"expected a store URL ({_FORMS}), got {url!r}")
    scheme = scheme.lower()
    if scheme == "memory":
        path, _, query = rest.partition("?")
        if path:
            raise ValueError(f"a memory store has no path, got {url!r}")
        return StoreLocation("memory", lease=_lease(_options(query, ("lease",))))
    if scheme == "sqlite":
        path, _, query = rest.partition("?")
        path = urllib.parse.unquote(path)
        if not path or path == "/":
            raise ValueError(f"a SQLite store needs a file: sqlite:///PATH, got {url!r}")
        return StoreLocation("sqlite", path=path, lease=_lease(_options(query, ("lease",))))
    if scheme == "redis":
        parts = urllib.parse.urlsplit(text)
        options = _options(parts.query, ("lease", "prefix"))
        try:
            port = parts.port or 6379
        except ValueError:
            raise ValueError(f"the Redis port must be a number from 1 to 65535, got {url!r}") from None
        db_text = parts.path.strip("/") or "0"
        if not db_text.isdigit():
            raise ValueError(f"the Redis database is a number (redis://HOST:PORT/DB), got {db_text!r}")
        prefix = options.get("prefix", "trimcp")
        if not prefix or not all(c.isalnum() or c in "-_." for c in prefix):
            raise ValueError(f"store option prefix must be letters, digits, '-', '_' or '.', got {prefix!r}")
        return StoreLocation(
            "redis",
            host=parts.hostname or "127.0.0.1",
            port=port,
            db=int(db_text),
            username=urllib.parse.unquote(parts.username) if parts.username else None,
            password=urllib.parse.unquote(parts.password) if parts.password else None,
            lease=_lease(options),
            prefix=prefix,
        )
    raise ValueError(f"unknown store {scheme!r}: expected {_FORMS}")
