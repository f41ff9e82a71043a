"""Normalization and a loopback page for ``spec/record.py``.

The ``"http"`` member of each entry comes from ``trimcp.conformance.http_evidence``
(shared with ``trimcp check --record``), which says what it holds.

``Normalizer`` replaces what changes from one recording to the next: session ids become
``session-1``, ``session-2``... in order of appearance, ``127.0.0.1:<port>`` hides the port,
the temporary folder becomes ``<tmp>``, a signed ``requestState`` ``request-state-N``.  ``loopback_page`` serves one fixed HTML page on
127.0.0.1 for mcp-server-fetch to fetch: nothing else is ever fetched.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

_PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")


class Normalizer:
    def __init__(self, tmp: Path, page: str) -> None:
        self.tmp = str(tmp)
        self.sessions: dict[str, str] = {}
        self.states: dict[str, str] = {}

    def _learn(self, headers: dict[str, str] | None, url: str | None = None) -> None:
        found = [(headers or {}).get("mcp-session-id")]
        if url:
            query = parse_qs(urlsplit(url).query)
            found += query.get("sessionId", []) + query.get("session_id", [])
        for value in found:
            if value and value not in self.sessions:
                self.sessions[value] = f"session-{len(self.sessions) + 1}"

    def _text(self, text: str) -> str:
        text = text.replace(self.tmp, "<tmp>")
        text = _PORT.sub(r"\1:<port>", text)
        for value, name in self.sessions.items():
            text = text.replace(value, name)
        return text

    def _state(self, value: Any) -> Any:
        """An opaque ``requestState`` (2026-07-28 multi-round-trip; signed, so new each run)
        becomes ``request-state-N``, the same in the result and in the retry that echoes it."""
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == "requestState" and isinstance(item, str):
                    out[key] = self.states.setdefault(item, f"request-state-{len(self.states) + 1}")
                else:
                    out[key] = self._state(item)
            return out
        if isinstance(value, list):
            return [self._state(item) for item in value]
        return value

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        entry = self._state(entry)
        http = entry.get("http") or {}
        self._learn(http.get("headers"), http.get("url"))
        self._learn(http.get("response_headers"))
        normalized: dict[str, Any] = json.loads(self._text(json.dumps(entry, ensure_ascii=False)))
        return normalized

    def exchange(self, obj: dict[str, Any]) -> dict[str, Any]:
        self._learn(obj.get("request_headers"), obj.get("url"))
        self._learn(obj.get("response_headers"))
        normalized: dict[str, Any] = json.loads(self._text(json.dumps(obj, ensure_ascii=False)))
        return normalized


PAGE = b"""<!doctype html><html><head><title>Corpus page</title></head>
<body><h1>A page served on loopback</h1><p>mcp-server-fetch fetched this from the recorder.</p></body></html>
"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@asynccontextmanager
async def loopback_page() -> AsyncIterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page.html"
    finally:
        server.shutdown()
        server.server_close()
