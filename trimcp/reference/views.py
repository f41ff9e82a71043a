"""The reference server's MCP Apps view (``io.modelcontextprotocol/ui``, SEP-1865).

``echo`` links ``ECHO_VIEW`` through ``_meta.ui.resourceUri`` for clients that
declared the extension; the view is a resource left out of ``resources/list``
(the extension lets a server omit views there: hosts find them through tools)
and read like any other.  The page shows the tool's input and result as the
host posts them (``ui/notifications/tool-input`` and ``tool-result``); it loads
nothing from anywhere, so the host's default policy (no connections, inline
script and style only) is all it needs.
"""

from __future__ import annotations

from typing import Final

from .._sansio.apps import MIME_TYPE
from ..server.context import Context
from ..server.definition import Server

__all__ = ["ECHO_VIEW", "register_views"]

ECHO_VIEW: Final = "ui://trimcp-reference/echo.html"

_PAGE: Final = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>echo</title>
<style>body{font:14px system-ui,sans-serif;margin:1em}pre{white-space:pre-wrap}</style></head>
<body>
<h1>echo</h1>
<p>Input: <code id="input">(waiting)</code></p>
<pre id="result">(no result yet)</pre>
<script>
window.addEventListener("message", (event) => {
  const msg = event.data || {};
  if (msg.method === "ui/notifications/tool-input") {
    document.getElementById("input").textContent = JSON.stringify(msg.params.arguments);
  } else if (msg.method === "ui/notifications/tool-result") {
    const texts = (msg.params.content || []).filter((b) => b.type === "text").map((b) => b.text);
    document.getElementById("result").textContent = texts.join("\\n");
  }
});
</script>
</body>
</html>
"""


def register_views(server: Server) -> None:
    @server.resource(
        ECHO_VIEW,
        name="echo-view",
        mime_type=MIME_TYPE,
        listed=False,
        description="An MCP Apps view of the echo tool's input and result.",
    )
    async def echo_view(ctx: Context) -> str:
        return _PAGE
