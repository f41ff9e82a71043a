"""A failure, as the ``trimcp`` command reports it: one line, and a hint when one helps.

Theory of operation
-------------------
Every command reports what stopped it in one line on stderr (``trimcp: ...``).  The
library's messages are built so that none repeats what its cause already says (a
connect failure names the URL once, an exited server its status once), so the line is
the message itself; ``one_line`` keeps its first line and, when the lines after it are
what a stdio server left on its stderr (``TransportClosed.stderr_tail``,
``ConnectTimeout.stderr_tail``), the last of them, which is usually the error the
server died of.

``missing_path_hint`` is asked when a server URL could not be used: when POSTing an
``initialize`` there gets HTTP 404, the URL's path is probably not the MCP endpoint.
The usual endpoints of the same origin are tried the same way (``/mcp``, the URL's
path plus ``/mcp``, ``/mcp/``); one that answers as an MCP endpoint does (200, or 401
asking for authorization) is offered ("did you mean http://host:port/mcp?"), else the
hint says where servers usually serve.  Each probe is one ``initialize`` POST with the
user's headers, bounded in time, of which only the status line is read (httpx).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from .. import HANDSHAKE_VERSIONS, __version__

__all__ = ["missing_path_hint", "one_line"]

#: The statuses an MCP endpoint answers an ``initialize`` POST with (401: authorize first).
_ENDPOINT = (200, 401)


def _stderr_tail(exc: BaseException) -> str:
    """The stderr tail a stdio server left, found on ``exc`` or its causes."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        tail = getattr(current, "stderr_tail", "")
        if isinstance(tail, str) and tail.strip():
            return tail
        current = current.__cause__ or current.__context__
    return ""


def one_line(exc: BaseException) -> str:
    """``exc``'s message on one line: its first line, and when the rest is a stdio server's
    stderr, the last line of it (``(stderr: ...)``, as ``trimcp check``'s own line says it)."""
    text = str(exc).strip()
    first, _, rest = text.partition("\n")
    lines = [line.strip() for line in _stderr_tail(exc).splitlines() if line.strip()] if rest else []
    if lines:
        first += f" (stderr: {lines[-1][:300]})"
    return first or type(exc).__name__


def _candidates(url: str) -> list[str]:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    paths = ["/mcp", f"{path}/mcp" if path else "", "/mcp/"]
    out: list[str] = []
    for candidate in paths:
        full = urlunsplit((parts.scheme, parts.netloc, candidate, parts.query, ""))
        if candidate and full != url and full not in out:
            out.append(full)
    return out


async def _status(url: str, headers: Mapping[str, str], timeout: float) -> int | None:
    """The HTTP status an ``initialize`` POST to ``url`` gets (``None``: no answer).  Only the
    status line is read: a Streamable HTTP server may answer with an event stream."""
    import httpx  # a dependency, imported only when a URL failed

    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE_VERSIONS[-1],  # initialize: the handshake era's newest
            "capabilities": {},
            "clientInfo": {"name": "trimcp", "version": __version__},
        },
    }
    sent = {"Accept": "application/json, text/event-stream", **headers}
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client:
            async with client.stream("POST", url, json=body, headers=sent) as response:
                return response.status_code
    except httpx.HTTPError:
        return None


async def missing_path_hint(url: str, timeout: float, headers: Mapping[str, str] | None = None) -> str | None:
    """A hint for ``url`` when its path answers 404 (see the module docstring), else ``None``;
    ``headers`` (the user's ``--header``s) go with every probe."""
    if not url.startswith(("http://", "https://")):
        return None
    if await _status(url, headers or {}, timeout) != 404:
        return None
    for candidate in _candidates(url):
        if await _status(candidate, headers or {}, timeout) in _ENDPOINT:
            return f"did you mean {candidate}?"
    return f"{url} answers 404: MCP servers usually serve at a path such as /mcp"
