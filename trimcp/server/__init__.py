"""Build MCP servers on trimcp's sans-IO Connection and Trio drivers.

Declare what the server offers on a ``Server`` (tools, resources, resource
templates, prompts, completions), then run it with ``serve_stream`` (any
``MessageStream``) or ``serve_stdio``.  One server speaks both eras: the
``initialize`` handshake (2024-11-05 .. 2025-11-25) and the stateless
2026-07-28 revision.  Handlers receive a ``Context`` to log, report progress,
and ask the client for sampling, elicitation or its roots (``inputs``: real
requests in the handshake era, multi-round-trip input in the stateless one).
``trimcp.reference.server`` is a server exercising every feature of both eras.

Over the network: ``serve_http`` (Streamable HTTP, both eras, and HTTP+SSE)
and ``serve_websocket``.  They import h11 / trio-websocket, so they are
imported on first use (``__getattr__``), not with this package.
``is_loopback`` tells whether a listen address is local only (the spec
advises local servers to bind to 127.0.0.1).

Run as several processes (replicas) behind a load balancer, a server keeps
its shared state - sessions, resumable streams, tasks, notifications across
processes - in a store: ``serve_http(store=...)`` takes ``open_store``'s URLs
(``"memory"``, ``"sqlite:///PATH"``, ``"redis://HOST:PORT/DB"``) or a
``Store`` (``MemoryStore``, ``SqliteStore``, ``RedisStore``); these too are
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._deprecate import deprecated_aliases as _deprecated_aliases
from .._sansio.http.server.routing import is_loopback as is_loopback
from ._errors import ClientCapabilityError as ClientCapabilityError
from ._errors import ResourceNotFound as ResourceNotFound
from .content import audio as audio
from .content import embedded_blob as embedded_blob
from .content import embedded_text as embedded_text
from .content import error_result as error_result
from .content import image as image
from .content import resource_link as resource_link
from .content import text as text
from .context import Context as Context
from .definition import Server as Server
from .inputs import InputRequest as InputRequest
from .serve import serve_stdio as serve_stdio
from .serve import serve_stream as serve_stream
from .server_session import ServerSession as ServerSession
from .subscriptions import ListenStream as ListenStream

if TYPE_CHECKING:
    from .store import MemoryStore as MemoryStore
    from .store import RedisStore as RedisStore
    from .store import SqliteStore as SqliteStore
    from .store import Store as Store
    from .store import StoreError as StoreError
    from .store import open_store as open_store
    from .store import parse_store_url as parse_store_url
    from .transports.http.app import serve_http as serve_http
    from .transports.websocket import serve_websocket as serve_websocket

#: Imported with ``trimcp.server.store`` on first use (it brings sqlite3).
_STORE_NAMES = frozenset(
    {"MemoryStore", "RedisStore", "SqliteStore", "Store", "StoreError", "open_store", "parse_store_url"}
)


def _old_run_stdio() -> Any:
    from . import serve

    return serve.run_stdio


#: Old names: each use warns and names the one to use (``_deprecate.py``).  ``Subscription``
#: is what ``ListenStream`` was called before it was told apart from the client's.
_DEPRECATED = _deprecated_aliases(
    __name__,
    {
        "Subscription": ("trimcp.server.ListenStream", lambda: ListenStream),
        "run_stdio": ("trio.run(trimcp.server.serve_stdio, server)", _old_run_stdio),
    },
)


def __getattr__(name: str) -> Any:
    """``serve_http``, ``serve_websocket`` (with their HTTP/1.1 codec / trio-websocket) and the stores, imported on first use."""
    value: Any
    if name == "serve_http":
        from .transports.http import app

        value = app.serve_http
    elif name == "serve_websocket":
        from .transports import websocket

        value = websocket.serve_websocket
    elif name in _STORE_NAMES:
        from . import store

        value = getattr(store, name)
    else:
        return _DEPRECATED(name)  # (not cached: every use of an old name warns)
    globals()[name] = value
    return value


__all__ = [
    "ClientCapabilityError",
    "Context",
    "InputRequest",
    "ListenStream",
    "MemoryStore",
    "RedisStore",
    "ResourceNotFound",
    "Server",
    "ServerSession",
    "SqliteStore",
    "Store",
    "StoreError",
    "audio",
    "embedded_blob",
    "embedded_text",
    "error_result",
    "image",
    "is_loopback",
    "open_store",
    "parse_store_url",
    "resource_link",
    "serve_http",
    "serve_stdio",
    "serve_stream",
    "serve_websocket",
    "text",
]
