"""HTTP evidence and normalization for ``spec/record.py``.

Theory of operation (basic/transports: Streamable HTTP and 2024-11-05 HTTP+SSE):
``TaggingStream`` notes, for every message received, which HTTP exchange's body gave the
latest bytes (``HttpCapture.last_read``); ``annotate`` then gives each transcript entry an
``"http"`` member without touching ``dir``/``message``:

* ``send``: ``{"method", "url", "headers"}`` of the request that carried the message (found
  by its JSON body) and ``"status"`` / ``"response_headers"`` of its answer (202 for a
  notification or a response, 200 for a request); ``{"posted": false}`` on a
  ``notifications/cancelled`` the transport did not POST (2026-07-28 closes the request's
  stream instead);
* ``recv``: ``{"via": "POST"|"GET", "status", "headers"}`` of the response that brought it:
  an answer on Streamable HTTP comes on the POST of its request (matched by id); anything
  else (a notification, a server request, every message over HTTP+SSE) on the exchange whose
  body was read last, which the recorder's single reader makes the right one.

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

from trimcp._trio.stream import Inbound, Received
from trimcp.conformance.recorder import Exchange, HttpCapture, RecordingStream


class TaggingStream(RecordingStream):
    def __init__(self, inner: Any, capture: HttpCapture) -> None:
        super().__init__(inner)
        self.capture = capture
        #: For each received text, the exchange that was read last when it arrived.
        self.http_tags: list[Exchange | None] = []

    async def receive(self) -> Inbound:
        item = await super().receive()
        if isinstance(item, Received):
            self.http_tags.append(self.capture.last_read)
        return item


def annotate(entries: list[dict[str, Any]], tags: list[Exchange | None], capture: HttpCapture,
             transport: str) -> list[dict[str, Any]]:
    taken: set[int] = set()
    received = iter(tags)
    out = []
    for entry in entries:
        entry = dict(entry)
        message = entry.get("message")
        if entry["dir"] == "send":
            ex = capture.carrying(message, taken) if isinstance(message, dict) else None
            if ex is not None:
                http: dict[str, Any] = {"method": ex.method, "url": ex.url, "headers": ex.request_headers}
                if ex.status is not None:
                    http["status"] = ex.status
                    http["response_headers"] = ex.response_headers
                entry["http"] = http
            elif isinstance(message, dict) and message.get("method") == "notifications/cancelled":
                # 2026-07-28 Streamable HTTP cancels by closing the request's stream; the
                # notification is in the transcript (it is what the client decided) but not posted.
                entry["http"] = {"posted": False}
        else:
            tag = next(received, None)
            is_answer = isinstance(message, dict) and "method" not in message and "id" in message
            if is_answer and transport == "streamable-http":
                tag = capture.request_post(message["id"]) or tag
            if tag is not None:
                entry["http"] = {"via": tag.method, "status": tag.status, "headers": tag.response_headers}
        out.append(entry)
    return out


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
