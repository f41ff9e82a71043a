"""A dual-era Streamable HTTP fake: 2026-07-28 per request *and* the 2025-11-25 handshake, one URL.

Theory of operation
-------------------
Behaves on the wire like the official Python SDK (2.x) over Streamable HTTP, which is what
made ``trimcp check`` raise false alarms: ``server/discover`` lists only ``2026-07-28``, yet
an ``initialize`` (no ``MCP-Protocol-Version``, as a legacy client opens) is answered with the
offered handshake revision and an ``Mcp-Session-Id``.  A request that is not a modern one (no
header, or a body declaring a handshake revision) and carries no known session is a legacy
request without its session: 400 with -32600 "Bad Request: Missing session ID".  Modern
requests are ``bad_http26.Stateless26``'s (mode ``good``).

``mode`` ``modern-only`` is ``Stateless26`` itself (``initialize`` refused); ``modern-only-
missing-session`` refuses ``initialize`` too (-32601) but still answers a request declaring
2025-11-25 with "Missing session ID": for a server that does not implement that revision, the
-32022 the versioning page requires is missing -- the defect the probes must still catch.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import h11
from helpers.bad_http26 import Exchange, Stateless26, refuse_malformed, serving

LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26")
MODES = ("dual-era", "modern-only", "modern-only-missing-session")


class DualEra(Stateless26):
    def __init__(self, mode: str = "dual-era") -> None:
        assert mode in MODES, mode
        super().__init__("good")
        self.era_mode = mode
        self.sessions: set[str] = set()

    async def handle(self, x: Exchange, method: str, raw: list[tuple[str, bytes]], body: bytes) -> None:
        if method != "POST" or self.era_mode == "modern-only":
            await super().handle(x, method, raw, body)
            return
        msg = await refuse_malformed(x, body)
        if msg is None:
            return
        params = msg.get("params") or {}
        header = self.header(raw, "MCP-Protocol-Version")
        # As the SDK decides: a request without the header, or with a handshake revision in it, is
        # a legacy one; any other header value is the modern era's to judge (-32022 and all).
        if header is not None and header not in LEGACY:
            await super().handle(x, method, raw, body)
            return
        rid = msg.get("id")
        if msg.get("method") == "initialize" and self.era_mode == "modern-only-missing-session":
            await x.error(rid, 400, -32601, "Method not found: initialize")
            return
        if msg.get("method") == "initialize":
            offered = params.get("protocolVersion")
            chosen = offered if offered in LEGACY else LEGACY[0]
            sid = uuid.uuid4().hex
            self.sessions.add(sid)
            result = {
                "protocolVersion": chosen,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "dual", "version": "0"},
            }
            await _json(x, {"jsonrpc": "2.0", "id": rid, "result": result}, sid)
            return
        session = self.header(raw, "Mcp-Session-Id")
        if session not in self.sessions:
            await x.error(rid, 400, -32600, "Bad Request: Missing session ID")
            return
        if rid is None:
            await x.status(202)
            return
        await x.json(
            {"jsonrpc": "2.0", "id": rid, "result": {"tools": []} if msg.get("method") == "tools/list" else {}}
        )


async def _json(x: Exchange, obj: Any, sid: str) -> None:
    data = json.dumps(obj).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data))), ("Mcp-Session-Id", sid)]
    await x._send(h11.Response(status_code=200, headers=headers))
    await x._send(h11.Data(data=data))
    await x._send(h11.EndOfMessage())


@asynccontextmanager
async def serve_dual(mode: str = "dual-era") -> AsyncIterator[DualEra]:
    async with serving(DualEra(mode)) as fake:
        yield fake
