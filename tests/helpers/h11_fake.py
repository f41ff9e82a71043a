"""Small hand-written HTTP/1.1 servers (h11 over Trio) for the HTTP client tests.

A ``FakeHttpServer`` listens on 127.0.0.1, reads requests with h11 (keep-alive
included), counts TCP connections, records every request, and passes each one
to a handler coroutine together with a ``Reply`` that writes the answer: a JSON
body, an empty status, an event stream written event by event, raw bytes, or a
cut connection.  Handlers can therefore misbehave in exactly the way a test
needs.  ``McpFake`` is a configurable handshake-era MCP server on top of it.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import h11
import trio


@attrs.define
class Req:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    connection: int

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class Cut(Exception):
    """Raised by a handler (via ``Reply.cut``) to drop the connection."""


class Reply:
    def __init__(self, conn: h11.Connection, stream: trio.SocketStream) -> None:
        self._conn = conn
        self._stream = stream
        self.started = False
        self.done = False

    async def _send(self, event: Any) -> None:
        data = self._conn.send(event)
        if data:
            await self._stream.send_all(data)

    async def head(self, status: int, headers: list[tuple[str, str]] | None = None) -> None:
        self.started = True
        await self._send(h11.Response(status_code=status, headers=headers or []))

    async def body(self, data: bytes) -> None:
        await self._send(h11.Data(data=data))

    async def end(self) -> None:
        self.done = True
        await self._send(h11.EndOfMessage())

    async def json(self, obj: Any, status: int = 200, headers: list[tuple[str, str]] | None = None) -> None:
        data = json.dumps(obj).encode()
        await self.head(
            status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))] + (headers or [])
        )
        await self.body(data)
        await self.end()

    async def text(
        self,
        status: int,
        text: str = "",
        content_type: str = "text/plain",
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        data = text.encode()
        await self.head(status, [("Content-Type", content_type), ("Content-Length", str(len(data)))] + (headers or []))
        if data:
            await self.body(data)
        await self.end()

    async def empty(self, status: int = 202, headers: list[tuple[str, str]] | None = None) -> None:
        await self.head(status, [("Content-Length", "0")] + (headers or []))
        await self.end()

    async def sse_start(self, headers: list[tuple[str, str]] | None = None) -> None:
        await self.head(200, [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")] + (headers or []))

    async def event(
        self, data: Any = None, *, id: str | None = None, retry: int | None = None, event: str | None = None
    ) -> None:
        text = ""
        if event is not None:
            text += f"event: {event}\n"
        if id is not None:
            text += f"id: {id}\n"
        if retry is not None:
            text += f"retry: {retry}\n"
        payload = data if isinstance(data, str) else ("" if data is None else json.dumps(data))
        text += f"data: {payload}\n\n"
        await self.body(text.encode())

    async def cut(self) -> None:
        raise Cut()


Handler = Callable[[Req, Reply], Awaitable[None]]


def malformed(req: Req) -> dict[str, Any] | None:
    """The JSON-RPC error a correct server answers a malformed POST body with (the negative
    probes send them), or ``None`` for a well-formed one.  A handler with ``sees_malformed``
    set gets every body itself (the fakes that break exactly these rules)."""
    if req.method != "POST" or not req.body or "json" not in (req.header("content-type") or ""):
        return None  # (an OAuth form post, say: not JSON-RPC)
    return refusal(req.body)


def refusal(body: bytes) -> dict[str, Any] | None:
    """JSON-RPC's error for a malformed message: invalid JSON -32700, no request object -32600,
    ``params`` that is no object -32602; ``None`` when ``body`` is well formed (a batch included)."""
    try:
        msg = json.loads(body)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    if isinstance(msg, list):
        return None  # a batch: the handler's to judge
    if not isinstance(msg, dict) or (
        "id" in msg and "result" not in msg and "error" not in msg and not isinstance(msg.get("method"), str)
    ):
        rid = msg.get("id") if isinstance(msg, dict) else None
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "Invalid Request"}}
    if "method" in msg and "params" in msg and not isinstance(msg["params"], dict):
        return {"jsonrpc": "2.0", "id": msg.get("id"), "error": {"code": -32602, "message": "Invalid params"}}
    return None


class FakeHttpServer:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Req] = []
        self.connections = 0
        self.port = 0
        self._ids = itertools.count(1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def methods(self) -> list[str]:
        out = []
        for r in self.requests:
            try:
                body = r.json if r.method == "POST" and r.body else None
            except ValueError:
                body = None  # a malformed body (the negative probes send some)
            out.append(f"{r.method} {body.get('method', 'answer') if isinstance(body, dict) else ''}".strip())
        return out

    async def _serve_one(self, stream: trio.SocketStream) -> None:
        number = next(self._ids)
        self.connections += 1
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = None
                body = b""
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        data = await stream.receive_some(65536)
                        conn.receive_data(data)
                        continue
                    if isinstance(event, h11.Request):
                        request = event
                    elif isinstance(event, h11.Data):
                        body += bytes(event.data)
                    elif isinstance(event, h11.EndOfMessage):
                        break
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                assert request is not None
                req = Req(
                    request.method.decode(),
                    request.target.decode(),
                    {k.decode().lower(): v.decode("latin-1") for k, v in request.headers},
                    body,
                    number,
                )
                self.requests.append(req)
                reply = Reply(conn, stream)
                refusal = None if getattr(self.handler, "sees_malformed", False) else malformed(req)
                try:
                    if refusal is not None:
                        await reply.json(refusal, 400)
                    else:
                        await self.handler(req, reply)
                except Cut:
                    return
                if not reply.done:
                    return
                if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            return
        finally:
            await trio.aclose_forcefully(stream)


@asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[FakeHttpServer]:
    server = FakeHttpServer(handler)
    async with trio.open_nursery() as nursery:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        server.port = listeners[0].socket.getsockname()[1]
        await nursery.start(trio.serve_listeners, server._serve_one, listeners)
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()


def result(req: Req, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req.json["id"], "result": value}


def decode_header(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        return base64.b64decode(value[9:-2]).decode()
    return value


class McpFake:
    """A handshake-era MCP server; override ``on_*`` hooks to misbehave."""

    version = "2025-11-25"

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.live: set[str] = set()
        self.get_status = 405
        self.tools: list[dict[str, Any]] = [{"name": "echo", "inputSchema": {"type": "object"}}]
        self.discover = False  # answer server/discover (stateless era) instead of refusing it

    def new_session(self) -> str:
        sid = f"sess-{len(self.sessions) + 1}"
        self.sessions.append(sid)
        self.live.add(sid)
        return sid

    async def __call__(self, req: Req, reply: Reply) -> None:
        if req.method == "GET":
            await self.on_get(req, reply)
            return
        if req.method == "DELETE":
            self.live.discard(req.header("mcp-session-id") or "")
            await reply.empty(200)
            return
        try:
            msg = req.json
        except ValueError:  # a malformed probe: the parse error a correct server gives
            await reply.json({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}, 400)
            return
        method = msg.get("method")
        if method == "server/discover" and not self.discover:
            await reply.json(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: no session"}}, 400
            )
            return
        if method == "initialize":
            sid = self.new_session()
            await self.on_initialize(req, reply, sid)
            return
        if method != "server/discover" and req.header("mcp-session-id") not in self.live:
            await reply.json(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}}, 404
            )
            return
        if "id" not in msg:
            await reply.empty(202)
            return
        if "method" not in msg:
            await self.on_answer(req, reply)
            return
        await self.on_request(req, reply)

    async def on_get(self, req: Req, reply: Reply) -> None:
        await reply.text(self.get_status, "no GET stream")

    async def on_initialize(self, req: Req, reply: Reply, sid: str) -> None:
        await reply.json(
            result(
                req,
                {
                    "protocolVersion": self.version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"},
                },
            ),
            headers=[("Mcp-Session-Id", sid)],
        )

    async def on_answer(self, req: Req, reply: Reply) -> None:
        await reply.empty(202)

    async def on_request(self, req: Req, reply: Reply) -> None:
        msg = req.json
        if msg["method"] == "tools/list":
            await reply.json(result(req, {"tools": self.tools}))
        elif msg["method"] == "tools/call":
            await self.on_call(req, reply)
        elif msg["method"] == "ping":
            await reply.json(result(req, {}))
        else:
            await reply.json({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "nope"}})

    async def on_call(self, req: Req, reply: Reply) -> None:
        args = req.json["params"].get("arguments", {})
        await reply.json(result(req, {"content": [{"type": "text", "text": json.dumps(args)}]}))
