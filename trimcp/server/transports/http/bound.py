"""What ``serve_http`` reports once it listens: the address, the URLs, and the app.

Theory of operation
-------------------
``serve_http`` (``app``) binds first and then hands this to
``task_status.started``, so a caller of ``await nursery.start(serve_http, ...)``
learns the port it got (port 0 picks one) and the endpoint URLs
(spec 2025-11-25, transports: Streamable HTTP has one MCP endpoint; the
2024-11-05 HTTP+SSE transport has its SSE endpoint).  ``app`` gives tests and
tools the live state: sessions, connection counts, the body budget.
"""

from __future__ import annotations

from typing import Any

import attrs

from ...._sansio.http.server import routing as hs

__all__ = ["BoundHttpServer"]


@attrs.frozen
class BoundHttpServer:
    """What ``serve_http`` reports once it listens."""

    host: str
    port: int
    mcp_path: str | None
    sse_path: str | None
    #: The ``HttpApp`` (typed loosely: importing ``app`` here would make an import cycle).
    app: Any

    @property
    def base_url(self) -> str:
        return f"http://{hs.authority(self.host, self.port)}"

    @property
    def url(self) -> str:
        """The MCP endpoint (or, for a legacy-only server, the SSE endpoint)."""
        return self.base_url + (self.mcp_path or self.sse_path or "/")

    @property
    def sse_url(self) -> str | None:
        return self.base_url + self.sse_path if self.sse_path else None
