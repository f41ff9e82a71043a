#!/usr/bin/env python3
"""The benchmarks' HTTP floor server: a JSON-RPC server with no MCP library, as cheap as Python can make it.

Theory of operation (MCP basic/transports, Streamable HTTP; basic/lifecycle, handshake era)
-------------------------------------------------------------------------------------------
An ``asyncio.Protocol`` on uvloop (the standard event loop when uvloop is missing) that parses
HTTP/1.1 requests by hand (Content-Length bodies, keep-alive; nothing else) and JSON with orjson
(the standard ``json`` when orjson is missing), so that the client it serves, not the server, is
what a benchmark sees: on the two cores of the benchmark machine it spends a small fraction of
what any MCP client does per call.  It is the "floor" server of ``bench_http.py`` and the "raw"
server of ``bench_server.py``.

- ``POST`` ``initialize``      -> an InitializeResult (the asked ``protocolVersion``), with an
                                  ``Mcp-Session-Id``
- ``POST`` a notification or a response -> 202, no body
- ``POST`` ``tools/call``      -> tool ``big``: a text of ``BIG_SIZE`` characters; otherwise the
                                  echo of ``arguments.text`` (or ``arguments.message``), else "hi"
- ``POST`` ``tools/list``      -> one tool, ``echo``
- ``POST`` ``server/discover`` -> 400 with a JSON-RPC error (the server is of the handshake era)
- ``POST`` anything else       -> ``{}``
- any method on ``/stats``     -> ``{"accepted": N}``: the TCP connections accepted so far
- ``GET`` anything else 405, ``DELETE`` 200.

It prints ``PORT <n>`` on stdout once it listens on 127.0.0.1 (``--port-file`` also writes the
number to a file) and serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

try:
    import orjson

    loads: Any = orjson.loads
    dumps: Any = orjson.dumps
    CODEC = "orjson"
except ImportError:  # pragma: no cover - the bench extra installs it
    loads = json.loads
    _encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def dumps(obj: Any) -> bytes:
        return _encode(obj).encode()

    CODEC = "json"

BIG_SIZE = 10 * 1024 * 1024
SESSION = b"bench-session"
DEFAULT_VERSION = "2025-11-25"
TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}

_REASONS = {200: b"OK", 202: b"Accepted", 400: b"Bad Request", 405: b"Method Not Allowed"}
_ACCEPTED = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
_BIG: list[str] = []
accepted = 0


def _respond(status: int, body: bytes, extra: bytes = b"") -> bytes:
    head = b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n" % (status, _REASONS[status], len(body))
    if body:
        head += b"Content-Type: application/json\r\n"
    return head + extra + b"\r\n" + body


def _result(rid: Any, result: Any) -> bytes:
    return _respond(200, dumps({"jsonrpc": "2.0", "id": rid, "result": result}))


def answer(body: bytes) -> bytes:
    """The HTTP response to one POSTed JSON-RPC message."""
    msg = loads(body)
    method = msg.get("method")
    if method is None or "id" not in msg:
        return _ACCEPTED
    rid = msg["id"]
    if method == "tools/call":
        params = msg.get("params") or {}
        if params.get("name") == "big":
            if not _BIG:
                _BIG.append("x" * BIG_SIZE)
            return _result(rid, {"content": [{"type": "text", "text": _BIG[0]}], "isError": False})
        args = params.get("arguments") or {}
        text = args.get("text", args.get("message", "hi"))
        return _result(rid, {"content": [{"type": "text", "text": text}], "isError": False})
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion") or DEFAULT_VERSION
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-http-floor", "version": "1"},
        }
        return _respond(
            200, dumps({"jsonrpc": "2.0", "id": rid, "result": result}), b"Mcp-Session-Id: " + SESSION + b"\r\n"
        )
    if method == "tools/list":
        return _result(rid, TOOLS)
    if method == "server/discover":
        error = {"code": -32601, "message": "no server/discover: this server is of the handshake era"}
        return _respond(400, dumps({"jsonrpc": "2.0", "id": rid, "error": error}))
    return _result(rid, {})


class _Connection(asyncio.Protocol):
    """One keep-alive connection: requests parsed by hand, answered in order."""

    def connection_made(self, transport: Any) -> None:
        global accepted
        accepted += 1
        self.transport = transport
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        out = []
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                break
            head = buf[:end].lower()
            at = head.find(b"\r\ncontent-length:")
            length = 0
            if at >= 0:
                stop = head.find(b"\r\n", at + 17)
                length = int(head[at + 17 : stop if stop >= 0 else end])
            if len(buf) < end + 4 + length:
                break
            body = buf[end + 4 : end + 4 + length]
            buf = buf[end + 4 + length :]
            if b" /stats " in head[: head.find(b"\r\n")]:
                out.append(_respond(200, dumps({"accepted": accepted})))
            elif head.startswith(b"post "):
                out.append(answer(body))
            elif head.startswith(b"delete "):
                out.append(_respond(200, b""))
            else:
                out.append(_respond(405, b"", b"Allow: POST, DELETE\r\n"))
        self.buf = buf
        if out:
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))


async def serve(port_file: str | None) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_Connection, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if port_file:
        Path(port_file).write_text(str(port))
    print(f"PORT {port}", flush=True)
    await server.serve_forever()


def describe() -> str:
    """What this server runs on, for a benchmark's header."""
    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:
        loop = "asyncio"
    return f"{loop} + {CODEC}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--port-file", help="also write the port number to this file")
    ns = ap.parse_args(argv)
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(ns.port_file))
    else:
        uvloop.run(serve(ns.port_file))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(0)
