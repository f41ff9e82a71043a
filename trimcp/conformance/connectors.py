"""How ``trimcp check`` reaches a target: a server command (stdio) or a URL.

``connector_for(target)`` returns the ``Connector`` (see ``results.py``) that
opens one fresh connection per call, through the same transport registry as
``open_client`` (``_trio/transports/registry.py``): a subprocess for a command
line, Streamable HTTP (legacy HTTP+SSE fallback included) for
``http://``/``https://``, WebSocket for ``ws://``/``wss://``, and any kind a
user registered.  Every probe opens its
own connection, so for HTTP each one is a new MCP session.  The transport a URL's
first connection ended up with sticks: once ``http://`` fell back to HTTP+SSE,
every later connection opens the SSE stream directly and posts to the endpoint
it announces, so a probe whose first message is not ``initialize`` (the one
that triggers the fallback) reaches the server too.  Each transport is
imported when its first connection opens, so a stdio run loads no HTTP or
WebSocket stack.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

from .._trio.stream import MessageStream
from .prespawn import ProcessConnector
from .results import Connector

if TYPE_CHECKING:
    from .._trio.oauth.provider import OAuthProvider
    from .._trio.transports.http.executor import Executor

__all__ = ["connector_for", "is_url", "transport_of"]

_SCHEMES = ("http://", "https://", "ws://", "wss://")


#: How long ``trimcp check`` lets a stdio server exit by itself after stdin closes.
HARNESS_SHUTDOWN_GRACE = 2.0


def is_url(target: Sequence[str]) -> bool:
    """Whether ``target`` (a command line, split) is one URL of a transport trimcp opens rather than a command."""
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
    record_http: bool = False,
) -> Connector:
    """The connector for a single URL or a command line, resolved through the transport
    registry that ``open_client`` uses (``transport`` forces a kind, e.g. ``"sse"``).

    ``auth`` authorizes the connections to an ``http(s)://`` URL (OAuth 2.1); ``headers``
    go with every request to a URL; ``env`` (merged onto ours) and ``cwd`` are the server
    process's.  ``record_http`` runs each HTTP connection's executor under an
    ``HttpCapture`` (the stream's ``executor``), for ``--record``'s ``"http"`` members."""
    from .._trio.transports.registry import TransportOptions, resolve, transport_for
    from ..config import ShutdownPolicy

    where: str | list[str] = target[0] if is_url(target) else list(target)
    kind = transport or resolve(where)
    factory = transport_for(kind)
    first: list[MessageStream] = []  # the run's first HTTP stream: it shows the fallback
    options = TransportOptions(
        env=env,
        cwd=cwd,
        connect_timeout=connect_timeout,
        headers=headers,
        auth=auth,
        # stdio.shutdown judges the server's own exit after EOF: give it the 2 s a host would
        # wait at most, not the pool's short grace.
        shutdown=ShutdownPolicy(grace=HARNESS_SHUTDOWN_GRACE),
        wrap_executor=_capture if record_http else None,
    )

    def connect() -> AbstractAsyncContextManager[MessageStream]:
        # The fallback happens on a stream's first request, so the first stream (maybe still
        # open: the main connection) is asked each time until it has chosen.
        if first and transport_of(first[0]) == "http+sse":
            return transport_for("sse")(where, options)
        opening = factory(where, options)
        return _remember(opening, first) if kind == "http" else opening

    # Every stdio connection is a new process: the run may start the next one early (prespawn.py).
    return ProcessConnector(connect) if kind == "stdio" else connect


@asynccontextmanager
async def _remember(
    opening: AbstractAsyncContextManager[MessageStream],
    first: list[MessageStream],
) -> AsyncIterator[MessageStream]:
    async with opening as stream:
        if not first:
            first.append(stream)
        yield stream


def _capture(executor: Executor) -> Executor:
    from .recorder import HttpCapture

    return HttpCapture(executor)


def transport_of(stream: object) -> str | None:
    """The transport ``stream`` (a connector's stream) speaks: ``stdio``, ``streamable-http``,
    ``http+sse`` (after the fallback), ``websocket``; ``None`` when it does not say."""
    mode = getattr(stream, "mode", None)
    if mode is not None:
        return str(getattr(mode, "value", mode))
    if hasattr(stream, "returncode"):
        return "stdio"
    if type(stream).__name__.startswith("WebSocket"):
        return "websocket"
    return None
