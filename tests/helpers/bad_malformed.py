"""Servers that answer malformed messages right or wrong, one way per ``mode``, on three transports.

For ``tests/check/test_check_negative.py``: the malformed-input probes (``checks/negative.py``,
``checks/malformed.py``) must reach the same verdict whatever carries the bytes.  One
reaction table (``react``) decides what each server says; ``OrderedFake`` serves it
in-process as a stdio-like stream (``send_raw`` writes a line), ``HttpFake`` over
Streamable HTTP (on ``h11_fake.McpFake``, handshake era), ``serve_ws`` over WebSocket.
Modes:

* ``good``: -32700 for invalid JSON, -32600 for an invalid request, -32602 for bad params
  (over HTTP with status 400, -32602 with 200);
* ``wrong-code``: every malformed message gets -32603;
* ``silent``: malformed messages get no answer (HTTP: 202), well-formed ones are answered;
* ``crash``: the first malformed message ends the connection (HTTP: the TCP connection is cut);
* ``hang``: after the handshake nothing is answered any more (HTTP: malformed POSTs hang);
* ``bare-400`` (HTTP only): malformed bodies get 400 with no body.
"""

from __future__ import annotations

import json
from typing import Any

import trio
from helpers.h11_fake import McpFake, Reply, Req

from trimcp._errors import TransportClosed
from trimcp._sansio import jsonrpc as rpc
from trimcp._trio.stream import NO_META, Inbound, SendMeta, parse_received

MODES = ("good", "wrong-code", "silent", "crash", "hang", "bare-400")
HANDSHAKE = ("initialize", "notifications/initialized")


class Crash(Exception):
    pass


def classify(data: bytes) -> tuple[int | None, Any]:
    """``(the code a correct server answers with, the id it answers)``; code ``None`` for
    a well-formed message."""
    try:
        obj = json.loads(data)
    except ValueError:
        return rpc.PARSE_ERROR, None
    if not isinstance(obj, dict) or "method" not in obj:
        return rpc.INVALID_REQUEST, obj.get("id") if isinstance(obj, dict) else None
    if obj.get("params") is not None and not isinstance(obj["params"], dict):
        return rpc.INVALID_PARAMS, obj.get("id")
    return None, obj.get("id")


def error(rid: Any, code: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "malformed"}}


def react(mode: str, data: bytes, initialized: bool) -> list[dict[str, Any]]:
    """What a stdio/WebSocket server of ``mode`` writes for ``data``; ``Crash`` to die."""
    code, rid = classify(data)
    if code is None:
        msg = json.loads(data)
        if mode == "hang" and initialized:
            return []
        if "id" not in msg:
            return []
        method = msg["method"]
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "f", "version": "1"}}
        elif method in ("ping", "server/discover"):
            result = {}
        else:
            return [error(rid, rpc.METHOD_NOT_FOUND)]
        return [{"jsonrpc": "2.0", "id": rid, "result": result}]
    if mode in ("silent", "hang"):
        return []
    if mode == "crash":
        raise Crash
    return [error(rid, rpc.INTERNAL_ERROR if mode == "wrong-code" else code)]


class OrderedFake:
    """A stdio-like ``MessageStream`` whose far end is ``react``: answers in order of arrival."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.initialized = False
        self._send, self._recv = trio.open_memory_channel[Inbound](100)
        self.closed = False

    async def send(self, message: rpc.Message, meta: SendMeta = NO_META) -> None:
        await self.send_raw(rpc.serialize(message))

    async def send_raw(self, data: bytes) -> None:
        await trio.lowlevel.checkpoint()
        if self.closed:
            raise TransportClosed("the fake exited")
        try:
            out = react(self.mode, data, self.initialized)
        except Crash:
            self.closed = True
            self._send.close()
            return
        if b'"notifications/initialized"' in data:
            self.initialized = True
        for obj in out:
            self._send.send_nowait(parse_received(json.dumps(obj).encode()))

    async def receive(self) -> Inbound:
        try:
            return await self._recv.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the fake exited") from None

    async def aclose(self) -> None:
        self.closed = True
        self._send.close()


class HttpFake(McpFake):
    """A handshake-era Streamable HTTP server answering malformed POST bodies per ``mode``."""

    #: Sees every POST body itself, malformed ones included (h11_fake.malformed).
    sees_malformed = True

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.malformed: list[bytes] = []

    async def __call__(self, req: Req, reply: Reply) -> None:
        if req.method != "POST":
            await super().__call__(req, reply)
            return
        code, rid = classify(req.body)
        if code is None:
            if (
                self.mode == "hang"
                and json.loads(req.body).get("method") not in HANDSHAKE
                and req.header("mcp-session-id") in self.live
                and self.malformed
            ):
                await trio.sleep_forever()
            await super().__call__(req, reply)
            return
        self.malformed.append(req.body)
        if req.header("mcp-session-id") not in self.live:
            await reply.json(error(None, -32001), 404)  # the probe must carry its session
        elif self.mode == "silent":
            await reply.empty(202)
        elif self.mode == "crash":
            await reply.cut()
        elif self.mode == "hang":
            await trio.sleep_forever()
        elif self.mode == "bare-400":
            await reply.text(400, "")
        else:
            wrong = self.mode == "wrong-code"
            status = 200 if code == rpc.INVALID_PARAMS else 400
            await reply.json(error(rid, rpc.INTERNAL_ERROR if wrong else code), status)
