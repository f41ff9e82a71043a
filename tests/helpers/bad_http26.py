"""A hand-written 2026-07-28 Streamable HTTP server (h11 over Trio, loopback) with one defect per mode.

Theory of operation
-------------------
``Stateless26`` answers the requests the ``http26.*`` checks send, the way the
2026-07-28 ``basic/transports/streamable-http`` page says: the
``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-Region``
headers are held against the body (400 with -32020), an unknown protocol
version gets 400 with -32022, a request whose ``_meta`` lacks protocolVersion or clientCapabilities 400
with -32602 (``envelope-error-200``: the same error under HTTP 200), a method it lacks 404 with -32601, a
notification 202, a tool call with a progressToken an SSE stream (a progress
notification, then the response), no session ids.  Each ``mode`` breaks
exactly one of those rules, so a test can show that the matching check, and
only it, flags the server.  Header names are read case-insensitively unless
the mode says otherwise, so the raw names are kept (h11's ``raw_items``).

One request per connection (the checks send ``Connection: close``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import h11
import trio
from helpers.h11_fake import refusal

REVISION = "2026-07-28"
ENVELOPE = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities")
MODES = (
    "good",
    "header-case-sensitive",
    "name-mismatch-accepted",
    "param-header-ignored",
    "issues-session-id",
    "initialize-200",
    "missing-version-ok",
    "version-mismatch-ok",
    "unsupported-no-data",
    "base64-not-decoded",
    "notification-200",
    "sse-request",
    "stream-stays-open",
    "no-accel-buffering",
    "bad-declaration",
    "param-expected-when-absent",
    "integer-as-string",
    "capability-200",
    "envelope-error-200",
)
TOOL = {
    "name": "echo_region",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "note": {"type": "string"}},
    },
    "annotations": {"readOnlyHint": True},
}
COUNT_TOOL = {
    "name": "count",
    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "Count"}}},
    "annotations": {"readOnlyHint": True},
}
ELICIT_TOOL = {
    "name": "elicit_name",
    "description": "Asks the user for a name (needs the elicitation client capability).",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
}
#: Each tool's x-mcp-header parameters: argument name -> header name.
HEADERS = {"echo_region": {"region": "Region"}, "count": {"n": "Count"}}
BAD_TOOL = {
    "name": "bad_header",
    "inputSchema": {"type": "object", "properties": {"tags": {"type": "array", "x-mcp-header": "Tags"}}},
}
RESOURCE = {"uri": "test://info", "name": "info"}


async def refuse_malformed(x: Exchange, body: bytes) -> dict[str, Any] | None:
    """The message a POST carries, or ``None`` once a malformed one was refused with JSON-RPC's
    error (``h11_fake.refusal``) and HTTP 400."""
    error = refusal(body)
    msg = json.loads(body) if error is None else None
    if error is None and not isinstance(msg, dict):  # a batch: 2026-07-28 has none
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
    if error is not None:
        await x.json(error, 400)
        return None
    return msg


class Stateless26:
    def __init__(self, mode: str = "good") -> None:
        assert mode in MODES, mode
        self.mode = mode
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    # ------------------------------------------------------------------ HTTP plumbing

    async def serve_one(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        request: h11.Request | None = None
        body = b""
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await stream.receive_some(65536))
                elif isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.Data):
                    body += bytes(event.data)
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
            if request is not None:
                raw = [(k.decode(), v) for k, v in request.headers.raw_items()]
                await self.handle(Exchange(conn, stream, self), request.method.decode(), raw, body)
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            pass
        finally:
            await trio.aclose_forcefully(stream)

    # ------------------------------------------------------------------ MCP

    def header(self, raw: list[tuple[str, bytes]], name: str) -> str | None:
        for key, value in raw:
            same = key == name if self.mode == "header-case-sensitive" else key.lower() == name.lower()
            if same:
                return value.decode("latin-1")
        return None

    def decode(self, value: str) -> str:
        if self.mode != "base64-not-decoded" and value.startswith("=?base64?") and value.endswith("?="):
            return base64.b64decode(value[9:-2]).decode()
        return value

    async def handle(self, x: Exchange, method: str, raw: list[tuple[str, bytes]], body: bytes) -> None:
        if method != "POST":
            await x.status(405)
            return
        msg = await refuse_malformed(x, body)
        if msg is None:
            return
        rid = msg.get("id")
        if "id" not in msg:
            await (x.json({"ok": True}, 200) if self.mode == "notification-200" else x.status(202))
            return
        params = msg.get("params") or {}
        meta = params.get("_meta") or {}
        body_version = meta.get("io.modelcontextprotocol/protocolVersion")
        missing = [k for k in ENVELOPE if k not in meta]
        if missing and "id" in msg:
            # basic/index: a request missing a required envelope field is -32602, on HTTP with 400.
            status = 200 if self.mode == "envelope-error-200" else 400
            await x.error(rid, status, -32602, f"_meta lacks {missing[0]}")
            return
        version = self.header(raw, "MCP-Protocol-Version")
        if version is None and self.mode != "missing-version-ok":
            await x.error(rid, 400, -32020, "MCP-Protocol-Version is missing")
            return
        version = version or body_version
        if version != body_version and self.mode != "version-mismatch-ok":
            await x.error(rid, 400, -32020, "MCP-Protocol-Version does not match the body")
            return
        if version != REVISION:
            data = None if self.mode == "unsupported-no-data" else {"supported": [REVISION], "requested": version}
            await x.error(rid, 400, -32022, "Unsupported protocol version", data)
            return
        if self.header(raw, "Mcp-Method") != msg["method"]:
            await x.error(rid, 400, -32020, "Mcp-Method does not match the body")
            return
        source = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(msg["method"])
        if source is not None and self.mode != "name-mismatch-accepted":
            name = self.header(raw, "Mcp-Name")
            if name is None or self.decode(name) != params.get(source):
                await x.error(rid, 400, -32020, "Mcp-Name does not match the body")
                return
        if msg["method"] == "tools/call" and not await self.param_ok(x, rid, raw, params):
            return
        await self.answer(x, msg, params, meta)

    def matches(self, header: str, value: Any) -> bool:
        if not all(0x20 < ord(c) < 0x7F for c in header):
            return False
        text = self.decode(header)
        if isinstance(value, int) and self.mode != "integer-as-string":
            try:
                return float(text) == value
            except ValueError:
                return False
        return text == str(value)

    async def param_ok(self, x: Exchange, rid: Any, raw: list[tuple[str, bytes]], params: dict[str, Any]) -> bool:
        if self.mode == "param-header-ignored":
            return True
        for arg, name in HEADERS.get(params.get("name"), {}).items():
            value = (params.get("arguments") or {}).get(arg)
            header = self.header(raw, f"Mcp-Param-{name}")
            if value is None and header is None:
                if self.mode == "param-expected-when-absent":
                    await x.error(rid, 400, -32020, f"Mcp-Param-{name} is missing")
                    return False
                continue
            if header is None or not self.matches(header, value):
                await x.error(rid, 400, -32020, f"Mcp-Param-{name} does not match the body")
                return False
        return True

    async def answer(self, x: Exchange, msg: dict[str, Any], params: dict[str, Any], meta: dict[str, Any]) -> None:
        rid, method = msg["id"], msg["method"]
        if method == "server/discover":
            result: dict[str, Any] = {
                "supportedVersions": [REVISION],
                "capabilities": {"tools": {}, "resources": {}},
                "ttlMs": 0,
                "cacheScope": "private",
            }
        elif method == "tools/list":
            result = {"tools": [TOOL, COUNT_TOOL, ELICIT_TOOL, *([BAD_TOOL] if self.mode == "bad-declaration" else [])]}
        elif method == "resources/list":
            result = {"resources": [RESOURCE]}
        elif method == "resources/read" and params.get("uri") == RESOURCE["uri"]:
            result = {"contents": [{"uri": RESOURCE["uri"], "text": "info"}]}
        elif method == "tools/call" and params.get("name") in HEADERS:
            result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
            if "progressToken" in meta:
                await self.stream(x, rid, meta["progressToken"], result)
                return
        elif method == "tools/call" and params.get("name") == ELICIT_TOOL["name"]:
            if "elicitation" not in (meta.get("io.modelcontextprotocol/clientCapabilities") or {}):
                status = 200 if self.mode == "capability-200" else 400
                await x.error(rid, status, -32021, "the elicitation client capability is required")
                return
            result = {"content": [{"type": "text", "text": "asked"}]}
        elif method == "initialize" and self.mode == "initialize-200":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "f", "version": "0"}}
        else:
            await x.error(rid, 404, -32601, f"method not found: {method}")
            return
        await x.json({"jsonrpc": "2.0", "id": rid, "result": {**result, "resultType": "complete"}})

    async def stream(self, x: Exchange, rid: Any, token: Any, result: dict[str, Any]) -> None:
        headers = [] if self.mode == "no-accel-buffering" else [("X-Accel-Buffering", "no")]
        await x.sse_start(headers)
        if self.mode == "sse-request":
            await x.event({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"})
        progress = {"progressToken": token, "progress": 1, "total": 1}
        await x.event({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        await x.event({"jsonrpc": "2.0", "id": rid, "result": {**result, "resultType": "complete"}})
        if self.mode == "stream-stays-open":
            await trio.sleep(3)
        await x.end()


class Exchange:
    """Writes one answer on an h11 server connection."""

    def __init__(self, conn: h11.Connection, stream: trio.SocketStream, fake: Stateless26) -> None:
        self.conn, self.stream, self.fake = conn, stream, fake

    async def _send(self, event: Any) -> None:
        data = self.conn.send(event)
        if data:
            await self.stream.send_all(data)

    def _headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        if self.fake.mode == "issues-session-id":
            headers = [*headers, ("Mcp-Session-Id", "fake-session-1")]
        return headers

    async def status(self, code: int) -> None:
        await self._send(h11.Response(status_code=code, headers=self._headers([("Content-Length", "0")])))
        await self._send(h11.EndOfMessage())

    async def json(self, obj: Any, code: int = 200) -> None:
        data = json.dumps(obj).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        await self._send(h11.Response(status_code=code, headers=self._headers(headers)))
        await self._send(h11.Data(data=data))
        await self._send(h11.EndOfMessage())

    async def error(self, rid: Any, code: int, rpc_code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": rpc_code, "message": message}
        if data is not None:
            error["data"] = data
        await self.json({"jsonrpc": "2.0", "id": rid, "error": error}, code)

    async def sse_start(self, headers: list[tuple[str, str]]) -> None:
        headers = [("Content-Type", "text/event-stream"), *headers]
        await self._send(h11.Response(status_code=200, headers=self._headers(headers)))

    async def event(self, obj: Any) -> None:
        await self._send(h11.Data(data=f"data: {json.dumps(obj)}\n\n".encode()))

    async def end(self) -> None:
        await self._send(h11.EndOfMessage())


@asynccontextmanager
async def serve26(mode: str = "good") -> AsyncIterator[Stateless26]:
    async with serving(Stateless26(mode)) as fake:
        yield fake


F = TypeVar("F", bound=Stateless26)


@asynccontextmanager
async def serving(fake: F) -> AsyncIterator[F]:
    """``fake`` (a ``Stateless26`` or a subclass) listening on a free loopback port."""
    async with trio.open_nursery() as nursery:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        fake.port = listeners[0].socket.getsockname()[1]
        await nursery.start(trio.serve_listeners, fake.serve_one, listeners)
        try:
            yield fake
        finally:
            nursery.cancel_scope.cancel()
