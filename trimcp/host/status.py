"""What a pool says about its servers: states, statuses, events, and the identity of a config.

Theory of operation
-------------------
Every server of a pool is in one ``ServerState`` at a time:

=============  ==================================================================
pending        known, not connected (never used yet, or closed and waiting for
               its next use)
connecting     a connect is in flight (every caller waits for that one)
connected      a live session
failed         the last connect failed, or the session ended; ``reason`` says why
               and the next use connects again after a back-off
needs-auth     the server wants authorization the pool cannot give; no probe is
               made until the auth-needed mark expires or ``logged_in`` is called
disabled       the config or the caller turned it off; never connected
=============  ==================================================================

A ``ServerStatus`` is an immutable snapshot; every change is published as a
``StatusChanged`` event, new tool lists as ``ToolsChanged``, and notifications
the pool forwards as ``ServerNotification`` (``event_hub.py``).

A server is known by its name *and* its configuration: ``config_key`` hashes
the canonical JSON of the entry (keys sorted, the order-free parts sorted), so
the same name with a changed command, URL or header is another server, and the
old connection is closed rather than reused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeAlias

import attrs

from .._sansio import schema as s
from ..config import ServerConfig

__all__ = [
    "PoolEvent",
    "ServerNotification",
    "ServerState",
    "ServerStatus",
    "StatusChanged",
    "ToolsChanged",
    "config_key",
]


class ServerState(StrEnum):
    """Where a pool's server stands: not tried yet, connecting, connected, failed, waiting for authorization, or disabled in its config."""

    PENDING = "pending"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    FAILED = "failed"
    NEEDS_AUTH = "needs-auth"
    DISABLED = "disabled"


@attrs.frozen
class ServerStatus:
    """One server's state, as last seen."""

    name: str
    state: ServerState
    #: ``stdio``, ``http``, ``sse`` or ``ws``, from the config.
    transport: str
    #: Why it failed, needs auth or is disabled; None otherwise.
    reason: str | None = None
    #: The negotiated protocol revision while connected.
    revision: str | None = None
    #: How many tools it listed, once listed.
    tools: int | None = None
    #: How long the last successful connect took, in seconds.
    connect_seconds: float | None = None
    #: Failed connects (or lost sessions) in a row; the back-off grows with it.
    failures: int = 0
    #: How many times a session was established (a reconnect makes it 2, 3, ...).
    connects: int = 0


@attrs.frozen
class StatusChanged:
    """A server's status changed (``old`` is None for a server just added)."""

    name: str
    old: ServerStatus | None
    new: ServerStatus


@attrs.frozen
class ToolsChanged:
    """A server's tool list was (re)fetched: after a connect, a reconnect or ``list_changed``."""

    name: str
    tools: tuple[s.Tool, ...]


@attrs.frozen
class ServerNotification:
    """A notification from a server (``list_changed``, ``resources/updated``, log messages)."""

    name: str
    method: str
    params: Mapping[str, Any]


PoolEvent: TypeAlias = StatusChanged | ToolsChanged | ServerNotification


def _canonical(value: Any) -> Any:
    if attrs.has(type(value)):
        # What the entry compares by: not how its text was spelt (``expanded``).
        fields = [f for f in attrs.fields(type(value)) if f.eq]
        return {f.name: _canonical(getattr(value, f.name)) for f in fields}
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def config_key(config: ServerConfig) -> str:
    """A short, stable hash of everything in ``config`` that changes what we connect to."""
    text = json.dumps(_canonical(config), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
