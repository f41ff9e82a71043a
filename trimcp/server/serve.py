"""Running a ``Server`` over a transport.

Theory of operation
-------------------
``serve_stream`` runs one session over one ``MessageStream`` until the
transport closes: it builds a fresh server-role ``Connection`` (capabilities
derived from the registry at that moment), a ``SessionDriver`` whose reader
task dispatches each client request to ``handlers`` as its own task (at most
``max_concurrent_requests`` at once; a handler waiting for the client's answer
to sampling, elicitation or roots does not count meanwhile), and a
``ServerSession`` registered with the server for broadcasts.  The
roots-changed hooks run in the session's callback task, never in the reader,
so a hook may ask the client for its roots (``max_pending_callbacks``
notifications may wait for it; see ``_trio/driver.py``).  It follows the
Trio ``serve_*`` convention: ``await nursery.start(serve_stream, server,
stream)`` returns the ``ServerSession`` once the reader runs.  When the
client goes away every handler still running is cancelled, the session is
unregistered and the stream closed; transport errors end the session
quietly, since a client leaving is normal for a server.

``serve_stdio`` serves this process's stdin/stdout (a server launched by a
client): ``trio.run(serve_stdio, server)`` in a script's ``__main__``
(``run_stdio``, its old blocking spelling, is deprecated).
"""

from __future__ import annotations

import logging
from typing import Any

import trio

from .._deprecate import deprecated
from .._trio._groups import collapse
from .._trio.driver import NotificationHandler
from .._trio.stream import MessageStream
from .._trio.transports.stdio import open_stdio_server_stream
from ._registry import call
from .definition import Server
from .handlers import request_handlers
from .server_session import ServerSession

logger = logging.getLogger("trimcp.server")


def _notification_handler(session: ServerSession) -> NotificationHandler:
    async def handle(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/roots/list_changed":
            for fn in list(session.server.roots_changed_handlers):
                await call(fn, session)

    return handle


async def serve_stream(
    server: Server,
    stream: MessageStream,
    *,
    max_concurrent_requests: int | None = None,
    max_pending_callbacks: int | None = None,
    broadcast: bool = True,
    task_status: trio.TaskStatus[ServerSession] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve one client over ``stream`` until it closes.

    ``max_concurrent_requests``: the client requests handled at once (more wait,
    in order); ``max_pending_callbacks``: the client notifications that may wait
    for the roots-changed hooks.  ``None``: the ``Server``'s settings, which every
    transport (HTTP, WebSocket, stdio) uses.  ``broadcast=False`` keeps the session out of
    ``server.sessions`` (an HTTP server whose sessions are shared by replicas delivers
    their change notifications through its store instead)."""
    session = ServerSession(
        server,
        stream,
        request_handlers=request_handlers,
        notification_handler=_notification_handler,
        max_concurrent_requests=max_concurrent_requests or server.max_concurrent_requests,
        max_pending_callbacks=max_pending_callbacks or server.max_pending_callbacks,
    )
    driver = session.driver
    if broadcast:
        server.sessions.add(session)
    try:
        with collapse():
            # (ext-tasks runs outlive their request; an HTTP/WebSocket server hosts them)
            async with server.tasks.hosting_unless_hosted(), trio.open_nursery() as nursery:
                await nursery.start(driver.run)
                task_status.started(session)
    finally:
        server.sessions.discard(session)
        await driver.aclose()


async def serve_stdio(server: Server) -> None:
    """Serve one client over this process's stdin/stdout until stdin closes."""
    async with open_stdio_server_stream() as stream:
        await serve_stream(server, stream)


@deprecated("trio.run(trimcp.server.serve_stdio, server)")
def run_stdio(server: Server) -> None:
    """Deprecated: ``trio.run(serve_stdio, server)`` (Ctrl-C ends it quietly)."""
    try:
        trio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass


__all__ = ["serve_stdio", "serve_stream"]
