"""HTTP servers that break one transport rule each, for ``tests/check/test_check_transport.py``.

``StreamFake`` is a handshake-era Streamable HTTP server (on ``h11_fake``) that gets the
session and stream rules right: it refuses foreign ``Origin``s with 403 and serves its
own, refuses an unknown ``MCP-Protocol-Version`` with 400, answers a request without its session id with 400, answers ``ping`` on a primed
SSE stream with per-stream event ids and ends it, and serves a standalone GET stream.
Each name in ``modes`` breaks exactly one rule:

* ``refuses-valid-host``: 403 for every request that carries an Origin, its own included;
* ``no-session-required``: a request without the session id gets 404, not 400;
* ``accepts-unknown-notification``: a notification for a session never issued gets 202;
* ``same-session-id``: every session gets the same id;
* ``response-on-get``: the answers to pings are copied onto the open GET streams;
* ``duplicate-event-ids``: every event of every stream has id ``1``;
* ``no-priming``: SSE answers start with the response, no id-only event;
* ``open-after-response``: SSE answers stay open for a while after the response;
* ``bad-session-id``: the session id holds a space and a non-ASCII character (sent as
  latin-1 bytes), which the harness must keep sending back as it is;
* ``accepts-malformed-version``: an ``MCP-Protocol-Version`` that is no date at all is
  served (a well-formed unknown one still gets 400);
* ``answer-200``: a JSON-RPC response posted to it gets 200 with a JSON body, not 202;
* ``replays-other-stream``: a GET with ``Last-Event-ID`` replays every answer sent so
  far, not only those of the stream the id belongs to.

Modes that break nothing but leave a check nothing to judge (issue 27, no vacuous pass):
``no-replay`` (a GET with ``Last-Event-ID`` replays no message), ``get-ends-at-once`` (the
standalone GET stream ends right after its priming event), ``serial-pings`` (pings are
answered one at a time: the second POST's answer starts after the first one ended).

``LegacyFake`` is a 2024-11-05 HTTP+SSE server (GET ``/sse``, POST ``/messages``);
its modes: ``sse-no-endpoint`` (the first event is a ``message``), ``sse-post-refused``
(POSTs get 400), ``sse-answer-in-post`` (the answer comes in the POST's body, not on the
stream), ``sse-accepts-foreign-origin``.  Loopback only (``h11_fake.serve``).
"""

from __future__ import annotations

import itertools
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trio
from helpers.h11_fake import McpFake, Reply, Req, refusal, result

OWN_ORIGINS = ("http://127.0.0.1", "http://localhost")


def _dated(version: str | None) -> bool:
    return version is not None and re.fullmatch(r"\d{4}-\d{2}-\d{2}", version) is not None


def _own(origin: str, port: int) -> bool:
    return origin in {f"{o}:{port}" for o in OWN_ORIGINS}


class StreamFake(McpFake):
    def __init__(self, *modes: str) -> None:
        super().__init__()
        self.modes = set(modes)
        self.port = 0
        self.get_status = 200
        self._listeners: list[trio.MemorySendChannel[Any]] = []
        self._streams = itertools.count(1)
        #: What each POST stream carried after its priming event, by stream number.
        self.history: dict[int, list[Any]] = {}
        self._serial = trio.Lock()

    def new_session(self) -> str:
        if "bad-session-id" in self.modes:
            sid = f"sess \xe9-{len(self.sessions) + 1}"
            self.sessions.append(sid)
            self.live.add(sid)
            return sid
        if "same-session-id" in self.modes and self.sessions:
            self.live.add(self.sessions[0])
            return self.sessions[0]
        return super().new_session()

    async def __call__(self, req: Req, reply: Reply) -> None:
        origin = req.header("origin")
        if origin is not None and ("refuses-valid-host" in self.modes or not _own(origin, self.port)):
            await reply.text(403, "Forbidden: origin")
            return
        version = req.header("mcp-protocol-version")
        # accepts-malformed-version: only a well-formed date is compared with the list, so a
        # value that is no revision at all slips through (a server author's shortcut).
        lenient = "accepts-malformed-version" in self.modes and not _dated(version)
        if version is not None and not lenient and version not in ("2025-03-26", "2025-06-18", "2025-11-25"):
            await reply.text(400, "unsupported MCP-Protocol-Version")
            return
        msg = req.json if req.method == "POST" else None
        sid = req.header("mcp-session-id")
        if isinstance(msg, dict) and msg.get("method") != "initialize":
            if sid is None:
                await reply.text(404 if "no-session-required" in self.modes else 400, "session id required")
                return
            if "id" not in msg and sid not in self.live and "accepts-unknown-notification" in self.modes:
                await reply.empty(202)
                return
        await super().__call__(req, reply)

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
            headers=[(b"Mcp-Session-Id", sid.encode("latin-1"))],  # type: ignore[list-item]
        )

    async def on_answer(self, req: Req, reply: Reply) -> None:
        if "answer-200" in self.modes:
            await reply.json({"ok": True}, 200)
        else:
            await super().on_answer(req, reply)

    def _id(self, stream: int, n: int) -> str:
        return "1" if "duplicate-event-ids" in self.modes else f"s{stream}-{n}"

    async def on_get(self, req: Req, reply: Reply) -> None:
        last = req.header("last-event-id")
        if last is not None:
            await self._replay(last, reply)
            return
        stream = next(self._streams)
        send, recv = trio.open_memory_channel[Any](16)
        self._listeners.append(send)
        await reply.sse_start()
        await reply.event("", id=self._id(stream, 0))
        if "get-ends-at-once" in self.modes:
            await reply.end()
            return
        n = 0
        try:
            while True:
                msg = None  # only the wait is bounded, never the send (see LegacyFake._stream)
                with trio.move_on_after(0.05):
                    msg = await recv.receive()
                if msg is not None:
                    n += 1
                    await reply.event(msg, id=self._id(stream, n))
                else:
                    await reply.body(b": keep-alive\n\n")  # raises once the client left
        finally:
            self._listeners.remove(send)

    async def _replay(self, last: str, reply: Reply) -> None:
        await reply.sse_start()
        if "no-replay" in self.modes:
            replayed = []
        elif "replays-other-stream" in self.modes:
            replayed = [m for msgs in self.history.values() for m in msgs]
        else:
            stream = int(last[1:].split("-")[0]) if last.startswith("s") else 0
            replayed = self.history.get(stream, [])
        for n, msg in enumerate(replayed, start=100):
            await reply.event(msg, id=self._id(0, n))
        await reply.end()

    async def on_request(self, req: Req, reply: Reply) -> None:
        if req.json["method"] != "ping":
            await super().on_request(req, reply)
            return
        if "serial-pings" in self.modes:
            async with self._serial:
                await self._ping(req, reply)
        else:
            await self._ping(req, reply)

    async def _ping(self, req: Req, reply: Reply) -> None:
        stream = next(self._streams)
        answer = result(req, {})
        await reply.sse_start()
        if "no-priming" not in self.modes:
            await reply.event("", id=self._id(stream, 0))
        await reply.event(answer, id=self._id(stream, 1))
        self.history[stream] = [answer]
        if "response-on-get" in self.modes:
            for listener in list(self._listeners):
                listener.send_nowait(answer)
        if "open-after-response" in self.modes:
            await trio.sleep(1.0)
        await reply.end()


class LegacyFake:
    #: Sees every POST body itself, malformed ones included (h11_fake.malformed).
    sees_malformed = True

    def __init__(self, *modes: str) -> None:
        self.modes = set(modes)
        self.port = 0
        self.sessions: dict[str, trio.MemorySendChannel[Any]] = {}
        self._ids = itertools.count(1)

    async def __call__(self, req: Req, reply: Reply) -> None:
        origin = req.header("origin")
        if origin is not None and not _own(origin, self.port) and "sse-accepts-foreign-origin" not in self.modes:
            await reply.text(403, "Forbidden: origin")
            return
        path = urlsplit(req.target).path
        if req.method == "GET" and path == "/sse":
            await self._stream(reply)
        elif req.method == "POST" and path == "/messages":
            await self._post(req, reply)
        else:
            await reply.text(405 if path == "/sse" else 404, "no")

    async def _stream(self, reply: Reply) -> None:
        sid = f"legacy-{next(self._ids)}"
        send, recv = trio.open_memory_channel[Any](16)
        self.sessions[sid] = send
        await reply.sse_start()
        if "sse-no-endpoint" in self.modes:
            await reply.event(
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}}
            )
        await reply.event(f"/messages?session_id={sid}", event="endpoint")
        try:
            while True:
                # Only the wait is bounded: a send cut short by the keep-alive timer would lose
                # the message it was writing (seen under load, the answer never arriving).
                msg = None
                with trio.move_on_after(0.05):
                    msg = await recv.receive()
                if msg is not None:
                    await reply.event(msg, event="message")
                else:
                    await reply.body(b": keep-alive\n\n")
        finally:
            del self.sessions[sid]

    async def _post(self, req: Req, reply: Reply) -> None:
        sid = parse_qs(urlsplit(req.target).query).get("session_id", [""])[0]
        send = self.sessions.get(sid)
        if send is None:
            await reply.text(404, "no such session")
            return
        if "sse-post-refused" in self.modes:
            await reply.text(400, "no")
            return
        error = refusal(req.body)
        if error is not None:  # as a correct server: the error on the stream, the POST accepted
            send.send_nowait(error)
            await reply.text(202, "Accepted")
            return
        msg = req.json
        answer = None
        if isinstance(msg, dict) and msg.get("method") == "initialize":
            answer = result(
                req,
                {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "serverInfo": {"name": "legacy-fake", "version": "1"},
                },
            )
        elif isinstance(msg, dict) and "id" in msg and "method" in msg:
            answer = result(req, {})
        if answer is not None and "sse-answer-in-post" in self.modes:
            await reply.json(answer, 200)
            return
        if answer is not None:
            send.send_nowait(answer)
        await reply.text(202, "Accepted")
