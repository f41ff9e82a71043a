"""What a host answers besides elicitation: sampling, roots, and the servers' log messages.

Theory of operation
-------------------
Spec "Client features / Sampling" and "Roots", and "Server utilities / Logging"
(every revision; from 2026-07-28 sampling and roots come as ``inputRequests``
of an ``InputRequiredResult`` and are answered by the same handlers, see
``_trio/client/mrtr.py``).

``SamplingHandler`` and ``RootsHandler`` are the typed shapes ``open_client``
(``handlers=Handlers(sampling=..., roots=...)``) and ``open_pool(client_options=...)`` take;
a plain ``async def`` of that signature fits, the Protocols only name it.

``log_to_python(server)`` turns a server's ``notifications/message`` into
records of the Python logger ``trimcp.server.<server>``: the MCP level
(RFC 5424: debug .. emergency) becomes the nearest ``logging`` level, the
server's own ``logger`` name prefixes the text, and the MCP level and logger ride
in the record's ``extra`` (``mcp_level``, ``mcp_logger``) for handlers that want
them.  ``open_pool`` installs one per server; a filter or level set on
``trimcp.server`` (or one server's child) chooses what a host keeps.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from .._sansio import schema as s

__all__ = ["MCP_LOG_LEVELS", "RootsHandler", "SamplingHandler", "log_to_python", "server_logger"]

#: MCP (RFC 5424) level -> ``logging`` level.  ``logging`` has nothing above CRITICAL,
#: so critical, alert and emergency share it (``mcp_level`` keeps them apart).
MCP_LOG_LEVELS: Final[dict[str, int]] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class SamplingHandler(Protocol):
    """Answers ``sampling/createMessage``: run the model on ``params.messages``.

    Return a ``CreateMessageResult`` (or its wire dict); raise ``McpError`` to refuse
    (e.g. -1 when the user rejected the request)."""

    async def __call__(self, params: s.CreateMessageRequestParams) -> s.CreateMessageResult | dict[str, Any]: ...


class RootsHandler(Protocol):
    """Answers ``roots/list``: the roots the host exposes now (asked every time).

    ``Handlers(roots=...)`` also takes a fixed sequence of ``Root``; after a change,
    call ``ClientSession.notify_roots_changed()`` (handshake era)."""

    async def __call__(self) -> Sequence[s.Root]: ...


def server_logger(server: str) -> logging.Logger:
    """The Python logger a server's log messages go to: ``trimcp.server.<server>``."""
    return logging.getLogger(f"trimcp.server.{server}")


def log_to_python(server: str) -> Callable[[s.LoggingMessageNotificationParams], None]:
    """A ``Handlers(logging=...)`` for ``open_client`` that logs to ``server_logger(server)``."""
    target = server_logger(server)

    def handle(params: s.LoggingMessageNotificationParams) -> None:
        level = MCP_LOG_LEVELS.get(params.level, logging.WARNING)
        if not target.isEnabledFor(level):
            return  # skip formatting data nobody keeps
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=repr)
        if params.logger:
            text = f"[{params.logger}] {text}"
        target.log(level, "%s", text, extra={"mcp_level": params.level, "mcp_logger": params.logger})

    return handle
