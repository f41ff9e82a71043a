"""How ``trimcp check`` reaches a target: a server command (stdio) or a URL.

``connector_for(target)`` returns the ``Connector`` (see ``results.py``) that
opens one fresh connection per call: a subprocess for a command line, a
Streamable HTTP stream (``open_http_stream``; legacy HTTP+SSE fallback
included) for ``http://``/``https://``, a WebSocket stream
(``open_websocket_stream``) for ``ws://``/``wss://``.  Every probe opens its
own connection, so for HTTP each one is a new MCP session.  Each transport is
imported when its first connection opens, so a stdio run loads no HTTP or
WebSocket stack.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from .._trio.stream import MessageStream
from .results import Connector

if TYPE_CHECKING:
    from .._trio.oauth.provider import OAuthProvider

__all__ = ["connector_for", "is_url"]

_SCHEMES = ("http://", "https://", "ws://", "wss://")


def is_url(target: Sequence[str]) -> bool:
    return len(target) == 1 and target[0].startswith(_SCHEMES)


def connector_for(
    target: Sequence[str],
    *,
    connect_timeout: float = 30.0,
    auth: OAuthProvider | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    headers: Mapping[str, str] | None = None,
    transport: str | None = None,
) -> Connector:
    """The connector for a single ``http(s)://`` or ``ws(s)://`` URL, else for a command line.

    ``auth`` authorizes the connections to an ``http(s)://`` URL (OAuth 2.1); ``headers``
    go with every request to a URL, and ``transport="sse"`` speaks only 2024-11-05
    HTTP+SSE; ``env`` (merged onto ours) and ``cwd`` are the server process's."""
    if is_url(target):
        url = target[0]
        if url.startswith(("ws://", "wss://")):
            return _websocket(url, connect_timeout, headers)
        return _http(url, connect_timeout, auth, headers, legacy_only=transport == "sse")
    command = list(target)

    @asynccontextmanager
    async def connect() -> AsyncIterator[MessageStream]:
        from .._trio.transports.stdio import open_stdio_process

        async with open_stdio_process(command, env=env, cwd=cwd) as stream:
            yield stream

    return connect


def _http(
    url: str,
    connect_timeout: float,
    auth: OAuthProvider | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    legacy_only: bool = False,
) -> Connector:
    @asynccontextmanager
    async def connect() -> AsyncIterator[MessageStream]:
        from .._trio.transports.http.connect import open_http_stream

        async with open_http_stream(
            url, connect_timeout=connect_timeout, auth=auth, headers=headers, legacy_only=legacy_only
        ) as stream:
            yield stream

    return connect


def _websocket(url: str, connect_timeout: float, headers: Mapping[str, str] | None = None) -> Connector:
    @asynccontextmanager
    async def connect() -> AsyncIterator[MessageStream]:
        from .._trio.transports.websocket import open_websocket_stream

        async with open_websocket_stream(url, connect_timeout=connect_timeout, headers=headers) as stream:
            yield stream

    return connect
