"""The HTTP server: Streamable HTTP in both eras and the legacy HTTP+SSE transport.

The server runs in the test's nursery on 127.0.0.1 (an ephemeral port) and is
driven with plain ``httpx`` requests, so every check sees the wire: status
codes, headers, JSON bodies and SSE events.  The sans-IO rules it applies
(``trimcp._sansio.http.server.routing*``) are tested directly at the end.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import h11
import httpx
import pytest
import trio

from trimcp import open_client
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.connection import stateless as sl
from trimcp._sansio.framing.sse import ServerSentEvent, SSEDecoder
from trimcp._sansio.http.server.metadata import (
    InvalidHeaderValue,
    check_stateless_request,
    decode_header_value,
    encode_header_value,
    header_annotations,
)
from trimcp._sansio.http.server.replay import ReplayBuffer, format_event_id, parse_event_id
from trimcp._sansio.http.server.routing import (
    HttpError,
    OriginPolicy,
    PostBody,
    RequestHead,
    accepts,
    check_batch,
    default_policy,
    is_loopback,
    parse_post,
    route,
)
from trimcp.cli.serve import parse_listen, run_serve
from trimcp.reference.server import build_server
from trimcp.server import Context, Server
from trimcp.server.transports.http import app as http_app
from trimcp.server.transports.http.app import BoundHttpServer, close_sse_stream, serve_http

MODERN = "2026-07-28"
LATEST = "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream"}
CLIENT_INFO = {"name": "http-test", "version": "1"}
TIMEOUT = 10


# ---------------------------------------------------------------- helpers


def init_body(version: str = LATEST, capabilities: dict[str, Any] | None = None, rid: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": CLIENT_INFO,
        },
    }


def request(rid: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        body["params"] = params
    return body


def call(rid: int, tool: str, arguments: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return request(rid, "tools/call", {"name": tool, "arguments": arguments or {}, **extra})


async def open_session(
    client: httpx.AsyncClient,
    url: str,
    version: str = LATEST,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Initialize; return the headers every later request of the session carries."""
    r = await client.post(url, json=init_body(version, capabilities), headers=ACCEPT)
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    assert r.json()["result"]["protocolVersion"] == version
    headers = {**ACCEPT, "mcp-session-id": sid, "mcp-protocol-version": version}
    r = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert r.status_code == 202 and r.content == b""
    return headers


class Events:
    """The SSE events of one streamed response, read incrementally."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks = response.aiter_bytes()
        self._decoder = SSEDecoder()
        self._pending: list[ServerSentEvent] = []

    async def until(self, stop: Callable[[ServerSentEvent], bool] | None = None) -> list[ServerSentEvent]:
        """Events up to the first one ``stop`` accepts (``None``: to the end of the stream)."""
        out: list[ServerSentEvent] = []
        while True:
            while self._pending:
                event = self._pending.pop(0)
                out.append(event)
                if stop is not None and stop(event):
                    return out
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._decoder.close()
                return out
            self._pending.extend(self._decoder.feed(chunk))

    async def aclose(self) -> None:
        await self._chunks.aclose()


@asynccontextmanager
async def events_of(response: httpx.Response) -> AsyncIterator[Events]:
    events = Events(response)
    try:
        yield events
    finally:
        await events.aclose()


async def read_events(
    response: httpx.Response,
    until: Callable[[ServerSentEvent], bool] | None = None,
) -> list[ServerSentEvent]:
    """SSE events of a streamed response, up to the first one ``until`` accepts (else to the end)."""
    async with events_of(response) as events:
        return await events.until(until)


class RawResponse:
    """A response read with h11 straight off a socket (for streams left unfinished on purpose)."""

    def __init__(self, stream: trio.SocketStream, conn: h11.Connection, response: h11.Response) -> None:
        self.stream = stream
        self.conn = conn
        self.status_code = response.status_code
        self.headers = {k.decode().lower(): v.decode() for k, v in response.headers}
        self._decoder = SSEDecoder()
        self._pending: list[ServerSentEvent] = []
        self._done = False

    async def _event(self) -> type[h11.NEED_DATA | h11.PAUSED] | h11.Event:
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.conn.receive_data(await self.stream.receive_some(65536))

    async def until(self, stop: Callable[[ServerSentEvent], bool] | None = None) -> list[ServerSentEvent]:
        out: list[ServerSentEvent] = []
        while True:
            while self._pending:
                event = self._pending.pop(0)
                out.append(event)
                if stop is not None and stop(event):
                    return out
            if self._done:
                return out
            part = await self._event()
            if isinstance(part, h11.Data):
                self._pending.extend(self._decoder.feed(bytes(part.data)))
            else:
                self._done = True
                self._decoder.close()


@asynccontextmanager
async def raw_request(
    url: str,
    method: str,
    headers: dict[str, str],
    body: Any = None,
) -> AsyncIterator[RawResponse]:
    """One request on its own connection; leaving the block closes the connection."""
    parts = httpx.URL(url)
    stream = await trio.open_tcp_stream(parts.host, parts.port or 80)
    try:
        conn = h11.Connection(h11.CLIENT)
        payload = json.dumps(body).encode() if body is not None else b""
        hdrs = [("host", f"{parts.host}:{parts.port}"), *headers.items()]
        if body is not None:
            hdrs += [("content-type", "application/json"), ("content-length", str(len(payload)))]
        target = parts.raw_path.decode()
        await stream.send_all(conn.send(h11.Request(method=method, target=target, headers=hdrs)))
        if payload:
            await stream.send_all(conn.send(h11.Data(data=payload)))
        await stream.send_all(conn.send(h11.EndOfMessage()))
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await stream.receive_some(65536))
                continue
            assert isinstance(event, h11.Response), event
            break
        yield RawResponse(stream, conn, event)
    finally:
        await stream.aclose()


def messages(events: list[ServerSentEvent]) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in events if e.data]


def answers(rid: int) -> Callable[[ServerSentEvent], bool]:
    def match(event: ServerSentEvent) -> bool:
        if not event.data:
            return False
        msg = json.loads(event.data)
        return msg.get("id") == rid and ("result" in msg or "error" in msg)

    return match


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def meta(caps: dict[str, Any] | None = None, version: str = MODERN) -> dict[str, Any]:
    return sl.build_envelope(version, caps or {}, CLIENT_INFO, None)


def modern(
    rid: int, method: str, params: dict[str, Any] | None = None, caps: dict[str, Any] | None = None
) -> dict[str, Any]:
    return request(rid, method, {**(params or {}), "_meta": meta(caps)})


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=TIMEOUT) as c:
        yield c


async def start(nursery: trio.Nursery, server: Server | None = None, **options: Any) -> BoundHttpServer:
    bound: BoundHttpServer = await nursery.start(
        lambda task_status: serve_http(
            server or build_server(),
            task_status=task_status,
            **options,
        )
    )
    return bound


# ---------------------------------------------------------------- handshake era


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window for a JSON answer made long: a loaded machine cannot turn a quick answer
    into an SSE stream under a test that expects JSON."""
    monkeypatch.setattr(http_app, "JSON_ANSWER_WINDOW", 60.0)


@pytest.mark.usefixtures("patient")
async def test_a_quick_answer_goes_as_one_json_body(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    """2025-11-25 transports, POST rule 5: the server answers a request with text/event-stream
    or application/json.  An answer ready at once, with nothing before it, has nothing to
    resume: it goes as one JSON body (as the 2026-07-28 revision answers it too)."""
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        assert bound.url == f"http://127.0.0.1:{bound.port}/mcp"
        headers = await open_session(client, bound.url)
        sid = headers["mcp-session-id"]
        assert len(sid) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
        r = await client.post(bound.url, json=call(2, "echo", {"message": "hi"}), headers=headers)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert r.json() == {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}}


def gated_server() -> tuple[Server, trio.Event]:
    """A server whose tool ``wait`` answers once the test sets the event."""
    server = Server("gated", "1")
    gate = trio.Event()

    @server.tool
    async def wait(ctx: Context) -> str:
        """Answer when the test says so."""
        await gate.wait()
        return "done"

    return server, gate


@pytest.mark.parametrize(("version", "priming"), [(LATEST, True), ("2025-06-18", False)])
async def test_a_slow_answer_gets_a_stream_primed_from_2025_11_25(
    nursery: trio.Nursery, client: httpx.AsyncClient, version: str, priming: bool
) -> None:
    """An answer that is not ready within the window gets its SSE stream (its head leaves at
    once then, so the client knows the request is being served), primed with an event id for
    a 2025-11-25 session, so that the client can resume it; the answer follows on it."""
    server, gate = gated_server()
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, server)
        headers = await open_session(client, bound.url, version=version)
        async with client.stream("POST", bound.url, json=call(2, "wait"), headers=headers) as r:
            assert r.status_code == 200
            assert r.headers["content-type"] == "text/event-stream"
            assert r.headers["x-accel-buffering"] == "no"
            async with events_of(r) as events:
                first = await events.until(lambda e: True) if priming else []
                gate.set()
                rest = await events.until()
        if priming:
            (prime,) = first
            assert prime.data == "" and prime.id is not None and prime.retry == 1000
        (answer,) = rest
        assert answer.id is not None and parse_event_id(answer.id) is not None
        assert json.loads(answer.data) == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "done"}]},
        }


async def test_every_post_body_is_parsed_once(
    nursery: trio.Nursery, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server checks a POST body with the strict parser and hands that parse to the
    session (a ``Received``): no body is parsed twice, in either era."""
    parsed: list[bytes] = []
    real = rpc.parse_payload

    def counting(data: bytes | str, **options: Any) -> rpc.ParsedPayload:
        parsed.append(data.encode() if isinstance(data, str) else bytes(data))
        return real(data, **options)

    monkeypatch.setattr(rpc, "parse_payload", counting)
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, json_response=True)
        headers = await open_session(client, bound.url)  # initialize, notifications/initialized
        r = await client.post(bound.url, json=call(2, "add", {"a": 1, "b": 2}), headers=headers)
        assert r.json()["result"]["structuredContent"] == {"sum": 3}
        r = await client.post(bound.url, json=modern(5, "tools/list"), headers=modern_headers("tools/list"))
        assert r.json()["result"]["tools"]
    assert len(parsed) == 4 and len(set(parsed)) == 4, parsed


async def test_json_response_mode(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, json_response=True)
        headers = await open_session(client, bound.url)
        r = await client.post(bound.url, json=call(2, "add", {"a": 1, "b": 2}), headers=headers)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert r.json()["result"]["structuredContent"] == {"sum": 3}
        # A client that only takes JSON gets JSON from an SSE-mode server too.
        bound2 = await start(nursery)
        headers2 = await open_session(client, bound2.url)
        r = await client.post(bound2.url, json=request(3, "ping"), headers={**headers2, "accept": "application/json"})
        assert r.headers["content-type"] == "application/json" and r.json() == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {},
        }


async def test_json_mode_sends_server_requests_on_the_get_stream(
    nursery: trio.Nursery, client: httpx.AsyncClient
) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, json_response=True)
        headers = await open_session(client, bound.url, capabilities={"sampling": {}})
        get_headers = {**headers, "accept": "text/event-stream"}
        async with (
            raw_request(bound.url, "GET", get_headers) as stream,
            trio.open_nursery() as inner,
        ):
            result: dict[str, Any] = {}

            async def call_tool() -> None:
                body = call(2, "sample", {"prompt": "Capital?"})
                result.update((await client.post(bound.url, json=body, headers=headers)).json())

            inner.start_soon(call_tool)
            ask = await stream.until(lambda e: bool(e.data))
            question = json.loads(ask[-1].data)
            assert question["method"] == "sampling/createMessage"
            answer = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "Paris"},
                    "model": "m",
                },
            }
            assert (await client.post(bound.url, json=answer, headers=headers)).status_code == 202
        assert result["id"] == 2 and "Paris" in text_of(result["result"])


async def test_session_errors(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url)
        # No session id on a request other than initialize: 400, the id echoed.
        r = await client.post(bound.url, json=request(7, "tools/list"), headers=ACCEPT)
        assert r.status_code == 400 and r.json()["id"] == 7 and r.json()["error"]["code"] == rpc.INVALID_REQUEST
        # An unknown session: 404.
        r = await client.post(bound.url, json=request(8, "tools/list"), headers={**headers, "mcp-session-id": "nope"})
        assert r.status_code == 404 and r.json()["id"] == 8
        # Unsupported MCP-Protocol-Version: 400.
        r = await client.post(
            bound.url,
            json=request(9, "ping"),
            headers={**headers, "mcp-protocol-version": "1999-01-01"},
        )
        assert r.status_code == 400
        # Not JSON / not JSON-RPC / wrong media type.
        r = await client.post(bound.url, content=b"{nope", headers={**headers, "content-type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["code"] == rpc.PARSE_ERROR and r.json()["id"] is None
        r = await client.post(bound.url, json=[request(10, "ping")], headers=headers)
        assert r.status_code == 400
        r = await client.post(bound.url, content=b"x", headers={**headers, "content-type": "text/plain"})
        assert r.status_code == 415
        r = await client.post(bound.url, json=request(11, "ping"), headers={**headers, "accept": "text/html"})
        assert r.status_code == 406
        # Other paths and methods.
        r = await client.get(f"{bound.base_url}/elsewhere")
        assert r.status_code == 404
        r = await client.put(bound.url, headers=headers)
        assert r.status_code == 405 and r.headers["allow"] == "POST, GET, DELETE"


async def test_delete_ends_the_session(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        server_sessions = bound.app.sessions
        headers = await open_session(client, bound.url)
        assert len(server_sessions) == 1
        r = await client.delete(bound.url, headers=headers)
        assert r.status_code == 200
        assert not server_sessions
        r = await client.post(bound.url, json=request(2, "ping"), headers=headers)
        assert r.status_code == 404
        r = await client.delete(bound.url, headers=headers)
        assert r.status_code == 404
        # A refused initialize makes no session.
        bad = request(5, "initialize", {"capabilities": {}})
        r = await client.post(bound.url, json=bad, headers=ACCEPT)
        assert r.status_code == 200 and r.json()["error"] and "mcp-session-id" not in r.headers
        assert not server_sessions


@pytest.mark.usefixtures("patient")
async def test_get_stream_carries_session_notifications(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url)
        get_headers = {**headers, "accept": "text/event-stream"}
        async with raw_request(bound.url, "GET", get_headers) as stream:
            assert stream.status_code == 200
            # A second standalone stream of the same session: 409.
            r = await client.get(bound.url, headers=get_headers)
            assert r.status_code == 409
            # The change is announced on the GET stream, not on the POST stream of the call.
            r = await client.post(bound.url, json=call(2, "toggle_extra_tool"), headers=headers)
            assert r.headers["content-type"] == "application/json" and r.json()["id"] == 2  # the answer alone
            events = await stream.until(lambda e: bool(e.data))
            assert json.loads(events[-1].data)["method"] == "notifications/tools/list_changed"
            assert events[0].data == "" and events[0].retry == 1000  # priming


async def test_get_disabled_is_405(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, get_stream=False)
        headers = await open_session(client, bound.url)
        r = await client.get(bound.url, headers={**headers, "accept": "text/event-stream"})
        assert r.status_code == 405


async def test_server_requests_ride_the_post_stream(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url, capabilities={"sampling": {}})
        params = {
            "name": "sample",
            "arguments": {"prompt": "Capital?"},
            "_meta": {"progressToken": "t"},
        }
        async with (
            client.stream("POST", bound.url, json=request(2, "tools/call", params), headers=headers) as r,
            events_of(r) as events,
        ):
            ask = await events.until(lambda e: bool(e.data) and "sampling" in e.data)
            question = json.loads(ask[-1].data)
            assert question["method"] == "sampling/createMessage"
            answer = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "Paris"},
                    "model": "m",
                },
            }
            reply = await client.post(bound.url, json=answer, headers=headers)
            assert reply.status_code == 202
            rest = await events.until()
        final = messages(rest)[-1]
        assert final["id"] == 2 and "Paris" in text_of(final["result"])


async def test_concurrent_streams(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url)
        results: dict[int, list[dict[str, Any]]] = {}

        async def one(rid: int) -> None:
            params = {
                "name": "slow",
                "arguments": {"seconds": 0.5, "steps": 2},
                "_meta": {"progressToken": rid},
            }
            async with client.stream("POST", bound.url, json=request(rid, "tools/call", params), headers=headers) as r:
                results[rid] = messages(await read_events(r))

        start_time = trio.current_time()
        async with trio.open_nursery() as inner:
            for rid in range(10, 15):
                inner.start_soon(one, rid)
        assert trio.current_time() - start_time < 2.0  # they ran side by side
        for rid, msgs in results.items():
            # Each stream carries its own progress and its own answer, nothing else.
            assert [m["params"]["progressToken"] for m in msgs[:-1]] == [rid, rid]
            assert msgs[-1]["id"] == rid and text_of(msgs[-1]["result"]) == "slept 0.5 s"


def polling_server() -> Server:
    server = build_server()

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Hang up the SSE connection mid-call; the answer waits for the client to resume."""
        # Called at once, before the POST's connection may even be attached (as the
        # conformance suite's own test_reconnection does).
        assert close_sse_stream(ctx.session, ctx.request_id)
        await trio.sleep(0.2)
        await ctx.report_progress(1, 1)
        return "resumed"

    return server


async def test_server_hang_up_and_resume(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, polling_server(), retry_ms=50)
        headers = await open_session(client, bound.url)
        body = request(
            2,
            "tools/call",
            {"name": "test_reconnection", "arguments": {}, "_meta": {"progressToken": 1}},
        )
        async with client.stream("POST", bound.url, json=body, headers=headers) as r:
            first = await read_events(r)
        assert first[0].data == "" and first[0].retry == 50
        assert messages(first) == []
        last_id = first[-1].id
        assert last_id is not None
        resume = {**headers, "accept": "text/event-stream", "last-event-id": last_id}
        async with client.stream("GET", bound.url, headers=resume) as r:
            assert r.status_code == 200
            rest = messages(await read_events(r))
        assert [m.get("method") for m in rest] == ["notifications/progress", None]
        assert rest[0]["params"]["progress"] == 1 and text_of(rest[-1]["result"]) == "resumed"


async def test_client_disconnect_then_resume_replays(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url)
        params = {
            "name": "slow",
            "arguments": {"seconds": 0.6, "steps": 3},
            "_meta": {"progressToken": "p"},
        }
        async with raw_request(bound.url, "POST", headers, request(2, "tools/call", params)) as r:
            seen = await r.until(lambda e: bool(e.data))
        # Dropped after the first progress event; the tool keeps running (no cancellation).
        last_id = seen[-1].id
        assert last_id is not None and json.loads(seen[-1].data)["params"]["progress"] == 1
        await trio.sleep(0.8)
        resume = {**headers, "accept": "text/event-stream", "last-event-id": last_id}
        async with client.stream("GET", bound.url, headers=resume) as r:
            rest = messages(await read_events(r))
        assert [m.get("params", {}).get("progress") for m in rest[:-1]] == [2, 3]
        assert rest[-1]["id"] == 2
        # The stream is spent: resuming it again replays nothing.
        async with client.stream("GET", bound.url, headers=resume) as r:
            assert messages(await read_events(r)) == []


async def test_cancelled_request_ends_its_stream(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url)
        params = {
            "name": "slow",
            "arguments": {"seconds": 5, "steps": 50},
            "_meta": {"progressToken": "c"},
        }
        async with raw_request(bound.url, "POST", headers, request(2, "tools/call", params)) as r:
            await r.until(lambda e: bool(e.data))  # running
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 2},
            }
            assert (await client.post(bound.url, json=cancel, headers=headers)).status_code == 202
            rest = messages(await r.until())  # the stream ends, with no answer
        assert all("id" not in m for m in rest)
        (session,) = bound.app.sessions.values()
        assert not session.exchanges
        # The session goes on.
        r2 = await client.post(bound.url, json=request(3, "ping"), headers={**headers, "accept": "application/json"})
        assert r2.json()["result"] == {}


async def test_idle_sessions_are_closed(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, session_idle_timeout=0.1)
        headers = await open_session(client, bound.url)
        with trio.fail_after(3):
            while bound.app.sessions:
                await trio.sleep(0.05)
        r = await client.post(bound.url, json=request(2, "ping"), headers=headers)
        assert r.status_code == 404


async def test_dns_rebinding_defence(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        evil = "evil.example.com"
        r = await client.post(
            bound.url,
            json=init_body(),
            headers={**ACCEPT, "origin": f"http://{evil}", "host": evil},
        )
        assert r.status_code == 403 and r.json()["error"]["code"] == rpc.INVALID_REQUEST
        r = await client.post(bound.url, json=init_body(), headers={**ACCEPT, "host": f"{evil}:{bound.port}"})
        assert r.status_code == 421
        for host in (f"localhost:{bound.port}", f"127.0.0.1:{bound.port}"):
            r = await client.post(
                bound.url,
                json=init_body(),
                headers={**ACCEPT, "host": host, "origin": f"http://{host}"},
            )
            assert r.status_code == 200, host
        # Legacy endpoints are guarded the same way.
        bound2 = await start(nursery, path=None, sse_path="/sse")
        r = await client.get(bound2.url, headers={"origin": "http://evil.example.com"})
        assert r.status_code == 403


async def test_custom_origin_list(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, allowed_origins=["https://app.example"], allowed_hosts=["*"])
        r = await client.post(bound.url, json=init_body(), headers={**ACCEPT, "origin": "https://app.example"})
        assert r.status_code == 200
        r = await client.post(
            bound.url,
            json=init_body(),
            headers={**ACCEPT, "origin": f"http://localhost:{bound.port}"},
        )
        assert r.status_code == 403


# ---------------------------------------------------------------- JSON-RPC batches
#
# 2025-03-26 (basic/index, "Batching"): implementations MUST accept batches they
# receive; the Streamable HTTP POST may carry one (transports, "Sending Messages to the
# Server").  Later revisions removed them: there a batch is 400 with -32600.

BATCHES = "2025-03-26"
NOTE = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}


def _cancel(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}


async def test_batch_json_mode_answers_with_an_array(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, json_response=True)
        headers = await open_session(client, bound.url, version=BATCHES)
        batch = [call(2, "echo", {"message": "one"}), NOTE, request(3, "ping")]
        r = await client.post(bound.url, json=batch, headers=headers)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        first, second = r.json()  # one answer per request, in the order of the requests
        assert first["id"] == 2 and text_of(first["result"]) == "one"
        assert second == {"jsonrpc": "2.0", "id": 3, "result": {}}
        # A batch of one request is still answered with a batch.
        r = await client.post(bound.url, json=[request(4, "ping")], headers=headers)
        assert r.json() == [{"jsonrpc": "2.0", "id": 4, "result": {}}]
        (session,) = bound.app.sessions.values()
        assert not session.exchanges


async def test_batch_sse_mode_streams_every_answer(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    server, gate = gated_server()
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, server)
        headers = await open_session(client, bound.url, version=BATCHES)
        # One answer is slow: the batch's answers go as events of one stream, which ends after both.
        batch = [request(2, "tools/list"), call(3, "wait")]
        async with client.stream("POST", bound.url, json=batch, headers=headers) as r:
            assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
            async with events_of(r) as events:
                first = messages(await events.until(lambda e: bool(e.data)))
                gate.set()
                answers_ = first + messages(await events.until())
        by_id = {m["id"]: m for m in answers_}
        assert sorted(by_id) == [2, 3] and len(answers_) == 2
        assert by_id[2]["result"]["tools"] and text_of(by_id[3]["result"]) == "done"


async def test_a_client_gone_within_the_window_frees_its_connection_after_it(
    nursery: trio.Nursery, client: httpx.AsyncClient
) -> None:
    """Within the JSON window the writer waits for the answer only; a client that closes
    then is noticed by the stream's writer once the window ends (a handshake-era close does
    not cancel the request), and the connection's slot is given back."""
    server, gate = gated_server()
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, server)
        headers = await open_session(client, bound.url)
        body = json.dumps(call(2, "wait")).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in {**headers, "content-type": "application/json"}.items())
        raw = await trio.open_tcp_stream("127.0.0.1", bound.port)
        await raw.send_all(
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{bound.port}\r\n{head}content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await trio.sleep(0.01)  # (the request is being served: its answer is gated)
        await raw.aclose()
        while bound.app.connections.open > 1:  # (the httpx client keeps one)
            await trio.sleep(0.01)
        gate.set()
        r = await client.post(bound.url, json=call(3, "wait"), headers=headers)
        assert r.status_code == 200


@pytest.mark.usefixtures("patient")
async def test_batch_answers_ready_at_once_are_one_json_array(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url, version=BATCHES)
        # JSON-RPC answers a batch with a batch: the answers, in one JSON array.
        batch = [request(4, "tools/list"), call(5, "echo", {"message": "both"})]
        r = await client.post(bound.url, json=batch, headers=headers)
        assert r.headers["content-type"] == "application/json"
        assert [m["id"] for m in r.json()] == [4, 5]


async def test_batch_of_notifications_is_202_and_reaches_the_session(
    nursery: trio.Nursery, client: httpx.AsyncClient
) -> None:
    server = build_server()
    changed: list[str] = []

    @server.on_roots_changed
    async def roots_changed(session: Any) -> None:
        changed.append("roots")

    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, server)
        headers = await open_session(client, bound.url, version=BATCHES, capabilities={"roots": {}})
        r = await client.post(bound.url, json=[NOTE, _cancel(99), NOTE], headers=headers)
        assert r.status_code == 202 and r.content == b""
        while len(changed) < 2:
            await trio.sleep(0.01)
        assert changed == ["roots", "roots"]


async def test_batch_cancelling_one_request_ends_with_the_others_answers(
    nursery: trio.Nursery, client: httpx.AsyncClient
) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url, version=BATCHES)
        slow = call(2, "slow", {"seconds": 5, "steps": 50}, _meta={"progressToken": "b"})
        async with raw_request(bound.url, "POST", headers, [slow, request(3, "ping")]) as r:
            assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
            seen = await r.until(answers(3))
            assert messages(seen)[-1] == {"jsonrpc": "2.0", "id": 3, "result": {}}
            cancelled = await client.post(bound.url, json=_cancel(2), headers=headers)
            assert cancelled.status_code == 202
            rest = messages(await r.until())  # the stream ends without an answer to 2
        assert all(m.get("id") != 2 for m in messages(seen) + rest)
        (session,) = bound.app.sessions.values()
        assert not session.exchanges


async def test_batches_refused_where_the_revision_has_none(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        headers = await open_session(client, bound.url, version="2025-06-18")
        for batch in ([request(2, "ping"), request(3, "tools/list")], [NOTE, NOTE]):
            r = await client.post(bound.url, json=batch, headers=headers)
            assert r.status_code == 400, batch
            error = r.json()
            assert error["error"]["code"] == rpc.INVALID_REQUEST
            assert "2025-06-18" in error["error"]["message"]
            assert error["id"] == (2 if batch[0].get("id") == 2 else None)
        # The stateless era has none either.
        r = await client.post(bound.url, json=[modern(4, "tools/list")], headers=modern_headers("tools/list"))
        assert r.status_code == 400 and r.json()["error"]["code"] == rpc.INVALID_REQUEST
        # initialize may never be batched (2025-03-26 lifecycle), nor share an id.
        r = await client.post(bound.url, json=[init_body(BATCHES)], headers=ACCEPT)
        assert r.status_code == 400 and "initialize" in r.json()["error"]["message"]
        modern_session = await open_session(client, bound.url, version=BATCHES)
        r = await client.post(bound.url, json=[init_body(BATCHES)], headers=modern_session)
        assert r.status_code == 400 and "initialize" in r.json()["error"]["message"]
        twins = [request(5, "ping"), request(5, "tools/list")]
        r = await client.post(bound.url, json=twins, headers=modern_session)
        assert r.status_code == 400 and r.json()["error"]["code"] == rpc.INVALID_REQUEST


# ---------------------------------------------------------------- stateless era


async def test_stateless_call_is_json_with_result_type(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        body = modern(5, "tools/call", {"name": "echo", "arguments": {"message": "yo"}})
        r = await client.post(bound.url, json=body, headers=modern_headers("tools/call", "echo"))
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in r.headers
        result = r.json()["result"]
        assert result["resultType"] == "complete" and text_of(result) == "yo"
        assert result["_meta"][sl.SERVER_INFO_KEY]["name"] == "trimcp-reference"
        r = await client.post(bound.url, json=modern(6, "server/discover"), headers=modern_headers("server/discover"))
        assert MODERN in r.json()["result"]["supportedVersions"]
        assert not bound.app.sessions  # no session was made
        # An Mcp-Session-Id on a stateless request is ignored.
        r = await client.post(
            bound.url,
            json=modern(7, "tools/list"),
            headers=modern_headers("tools/list", **{"mcp-session-id": "x"}),
        )
        assert r.status_code == 200 and r.json()["result"]["tools"]


async def test_stateless_header_validation(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        body = modern(9, "tools/call", {"name": "echo", "arguments": {"message": "m"}})
        cases = [
            modern_headers("tools/call", "add"),  # Mcp-Name mismatch
            modern_headers("tools/call"),  # Mcp-Name missing
            modern_headers("tools/list", "echo"),  # Mcp-Method mismatch
            modern_headers("TOOLS/CALL", "echo"),  # values are case-sensitive
            {
                **modern_headers("tools/call", "echo"),
                "mcp-protocol-version": "2025-11-25",
            },  # version mismatch
            {k: v for k, v in modern_headers("tools/call", "echo").items() if k != "mcp-method"},
            modern_headers("tools/call", "=?base64?ZWNobw?="),  # bad padding
        ]
        for headers in cases:
            r = await client.post(bound.url, json=body, headers=headers)
            assert r.status_code == 400, headers
            assert r.json()["error"]["code"] == rpc.HEADER_MISMATCH and r.json()["id"] == 9, headers
        upper = {("MCP-METHOD" if k == "mcp-method" else k): v for k, v in modern_headers("tools/call", "echo").items()}
        ok = [modern_headers("tools/call", "=?base64?ZWNobw==?="), upper]
        for headers in ok:
            r = await client.post(bound.url, json=body, headers=headers)
            assert r.status_code == 200 and r.json()["result"]["resultType"] == "complete", headers
        # Whitespace around a value is not part of it (RFC 9110, 5.5): written by hand,
        # since HTTP client libraries refuse to send it.
        payload = json.dumps(body).encode()
        raw = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{bound.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\n"
            f"Mcp-Name:   echo  \r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
        ).encode() + payload
        sock = await trio.open_tcp_stream("127.0.0.1", bound.port)
        async with sock:
            await sock.send_all(raw)
            reply = b""
            while chunk := await sock.receive_some(65536):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 200 ") and b'"resultType":"complete"' in reply


async def test_stateless_error_statuses(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        # Missing _meta fields: 400 + -32602 (before any header comparison).
        r = await client.post(
            bound.url,
            json=request(101, "server/discover", {}),
            headers=modern_headers("server/discover"),
        )
        assert (r.status_code, r.json()["error"]["code"], r.json()["id"]) == (
            400,
            rpc.INVALID_PARAMS,
            101,
        )
        # Unknown or removed methods: 404 + -32601.
        for method in ("initialize", "ping", "logging/setLevel", "unknown/method"):
            r = await client.post(bound.url, json=modern(500, method), headers=modern_headers(method))
            assert (r.status_code, r.json()["error"]["code"]) == (404, rpc.METHOD_NOT_FOUND), method
        # Unsupported version named consistently: 400 + -32022 listing what is supported.
        body = request(301, "server/discover", {"_meta": meta(version="v999.0.0")})
        r = await client.post(
            bound.url,
            json=body,
            headers={**modern_headers("server/discover"), "mcp-protocol-version": "v999.0.0"},
        )
        assert (r.status_code, r.json()["error"]["code"]) == (400, rpc.UNSUPPORTED_PROTOCOL_VERSION)
        assert r.json()["error"]["data"]["requested"] == "v999.0.0"
        # Header and body disagree: -32020.
        r = await client.post(bound.url, json=body, headers=modern_headers("server/discover"))
        assert (r.status_code, r.json()["error"]["code"]) == (400, rpc.HEADER_MISMATCH)
        # A missing client capability: 400 + -32021.
        body = modern(401, "tools/call", {"name": "test_missing_capability", "arguments": {}})
        r = await client.post(bound.url, json=body, headers=modern_headers("tools/call", "test_missing_capability"))
        assert (r.status_code, r.json()["error"]["code"]) == (400, rpc.MISSING_CLIENT_CAPABILITY)
        # A notification: 202.
        r = await client.post(
            bound.url,
            json={"jsonrpc": "2.0", "method": "notifications/x"},
            headers=modern_headers("notifications/x"),
        )
        assert r.status_code == 202


async def test_stateless_get_and_delete_are_405(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        r = await client.get(bound.url, headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN})
        assert r.status_code == 405
        only_modern = await start(nursery, Server("m", "1", supported_versions=(MODERN,)))
        for method in ("GET", "DELETE"):
            r = await client.request(method, only_modern.url, headers={"accept": "text/event-stream"})
            assert r.status_code == 405 and r.headers["allow"] == "POST", method
        # initialize to a modern-only server: a request without its envelope, 400.
        r = await client.post(only_modern.url, json=init_body(), headers=ACCEPT)
        assert r.status_code == 400 and r.json()["error"]["code"] == rpc.INVALID_PARAMS


async def test_stateless_mrtr_round_trip(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        caps = {"elicitation": {}}
        params = {"name": "elicit", "arguments": {"message": "Who?"}}
        headers = modern_headers("tools/call", "elicit")
        r = await client.post(bound.url, json=modern(1, "tools/call", params, caps), headers=headers)
        first = r.json()["result"]
        assert first["resultType"] == "input_required"
        (key,) = first["inputRequests"]
        answer = {"action": "accept", "content": {"name": "Ann", "age": 7}}
        retry = {**params, "inputResponses": {key: answer}, "requestState": first["requestState"]}
        r = await client.post(bound.url, json=modern(2, "tools/call", retry, caps), headers=headers)
        done = r.json()["result"]
        assert done["resultType"] == "complete" and '"name": "Ann"' in text_of(done)


async def test_stateless_streams_notifications_as_sse(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery)
        params = {"name": "slow", "arguments": {"seconds": 0.1, "steps": 2}}
        body = modern(3, "tools/call", params)
        body["params"]["_meta"]["progressToken"] = "pt"
        async with client.stream("POST", bound.url, json=body, headers=modern_headers("tools/call", "slow")) as r:
            assert r.headers["content-type"] == "text/event-stream"
            events = await read_events(r)
        msgs = messages(events)
        assert [m.get("method") for m in msgs] == [
            "notifications/progress",
            "notifications/progress",
            None,
        ]
        assert msgs[-1]["result"]["resultType"] == "complete"
        assert all(e.id is None for e in events)  # no resumption in this era


async def test_stateless_listen_and_cancel_by_closing(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        server = build_server()
        bound = await start(nursery, server)
        body = modern(4, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with raw_request(bound.url, "POST", modern_headers("subscriptions/listen"), body) as events:
            ack = await events.until(lambda e: bool(e.data))
            assert json.loads(ack[-1].data)["method"] == "notifications/subscriptions/acknowledged"
            assert len(server.listeners) == 1
            trigger = modern(5, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
            t = await client.post(
                bound.url,
                json=trigger,
                headers=modern_headers("tools/call", "test_trigger_tool_change"),
            )
            assert t.status_code == 200
            change = await events.until(lambda e: bool(e.data))
            note = json.loads(change[-1].data)
            assert note["method"] == "notifications/tools/list_changed"
            assert note["params"]["_meta"][sl.SUBSCRIPTION_ID_KEY] == 4
        # Closing the response stream cancelled the listen request.
        with trio.fail_after(2):
            while server.listeners:
                await trio.sleep(0.01)


def header_server() -> Server:
    server = build_server()
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "query": {"type": "string"},
        },
        "required": ["region", "query"],
    }

    @server.tool(input_schema=schema)
    async def execute_sql(ctx: Context, region: str, query: str, limit: int | None = None) -> str:
        """Pretend to run a query."""
        return f"{region}:{query}:{limit}"

    return server


async def test_stateless_param_headers(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, header_server())
        args = {"region": "us-west1", "query": "SELECT 1", "limit": 42}
        body = modern(1, "tools/call", {"name": "execute_sql", "arguments": args})
        base = modern_headers("tools/call", "execute_sql")
        good = [
            {**base, "mcp-param-region": "us-west1", "mcp-param-limit": "42"},
            {
                **base,
                "Mcp-Param-Region": encode_header_value("us-west1"),
                "mcp-param-limit": "42.0",
            },
            {**base, "mcp-param-region": "=?base64?dXMtd2VzdDE=?=", "mcp-param-limit": "42"},
        ]
        for headers in good:
            r = await client.post(bound.url, json=body, headers=headers)
            assert r.status_code == 200, (headers, r.text)
        bad = [
            {**base, "mcp-param-limit": "42"},  # Region missing while the body has it
            {**base, "mcp-param-region": "eu", "mcp-param-limit": "42"},
            {**base, "mcp-param-region": "us-west1", "mcp-param-limit": "41"},
            {**base, "mcp-param-region": "=?base64?SGVs!!!bG8=?=", "mcp-param-limit": "42"},
        ]
        for headers in bad:
            r = await client.post(bound.url, json=body, headers=headers)
            assert (r.status_code, r.json()["error"]["code"]) == (400, rpc.HEADER_MISMATCH), headers
        # An argument left out: its header must be left out too.
        body2 = modern(2, "tools/call", {"name": "execute_sql", "arguments": {"region": "eu", "query": "q"}})
        r = await client.post(bound.url, json=body2, headers={**base, "mcp-param-region": "eu"})
        assert r.status_code == 200
        r = await client.post(
            bound.url,
            json=body2,
            headers={**base, "mcp-param-region": "eu", "mcp-param-limit": "1"},
        )
        assert r.status_code == 400


# ---------------------------------------------------------------- legacy HTTP+SSE


async def test_legacy_sse_transport(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, path=None, sse_path="/sse")
        assert bound.url == bound.sse_url == f"{bound.base_url}/sse"
        async with raw_request(bound.url, "GET", {"accept": "text/event-stream"}) as events:
            first = await events.until(lambda e: True)
            assert first[0].event == "endpoint" and first[0].data.startswith("/messages?session_id=")
            post_url = bound.base_url + first[0].data
            r = await client.post(post_url, json=init_body("2024-11-05"))
            assert r.status_code == 202
            event = (await events.until(lambda e: True))[0]
            assert event.event == "message" and json.loads(event.data)["result"]["protocolVersion"] == "2024-11-05"
            await client.post(post_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            r = await client.post(post_url, json=call(2, "echo", {"message": "old"}))
            assert r.status_code == 202
            event = (await events.until(lambda e: True))[0]
            assert text_of(json.loads(event.data)["result"]) == "old"
            assert len(bound.app.legacy.sessions) == 1
        # The SSE connection closed: the session is gone.
        with trio.fail_after(2):
            while bound.app.legacy.sessions:
                await trio.sleep(0.01)
        r = await client.post(post_url, json=request(3, "ping"))
        assert r.status_code == 404
        r = await client.post(f"{bound.base_url}/messages", json=request(3, "ping"))
        assert r.status_code == 400


async def test_legacy_sse_batches_by_revision(nursery: trio.Nursery, client: httpx.AsyncClient) -> None:
    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, path=None, sse_path="/sse")
        for version, accepted in ((BATCHES, True), ("2024-11-05", False)):
            async with raw_request(bound.url, "GET", {"accept": "text/event-stream"}) as events:
                (endpoint,) = await events.until(lambda e: True)
                post_url = bound.base_url + endpoint.data
                assert (await client.post(post_url, json=init_body(version))).status_code == 202
                await events.until(lambda e: True)  # the InitializeResult
                initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await client.post(post_url, json=initialized)
                r = await client.post(post_url, json=[request(2, "ping"), request(3, "ping")])
                if not accepted:
                    assert r.status_code == 400 and r.json()["error"]["code"] == rpc.INVALID_REQUEST
                    continue
                assert r.status_code == 202
                got = [json.loads(e.data) for e in await events.until(answers(3))]
                assert {m["id"] for m in got} == {2, 3} and all(m["result"] == {} for m in got)


# ---------------------------------------------------------------- the sans-IO rules


def head(method: str = "POST", target: str = "/mcp", **headers: str) -> RequestHead:
    return RequestHead.build(method, target, [(k.replace("_", "-"), v) for k, v in headers.items()])


def test_origin_policy() -> None:
    policy = default_policy("127.0.0.1", 8000)
    assert policy.check(head(host="127.0.0.1:8000")) is None
    assert policy.check(head(host="localhost:8000", origin="http://localhost:8000")) is None
    assert policy.check(head(host="[::1]:8000", origin="http://[::1]:8000/")) is None
    err = policy.check(head(host="127.0.0.1:8000", origin="http://evil.example"))
    assert isinstance(err, HttpError) and err.status == 403
    err = policy.check(head(host="127.0.0.1:9000"))
    assert isinstance(err, HttpError) and err.status == 421
    assert default_policy("0.0.0.0", 1).allowed_hosts is None
    assert OriginPolicy.build(["*"], ["*"]).check(head(host="x", origin="null")) is None
    assert is_loopback("127.0.0.2") and is_loopback("[::1]") and is_loopback("LOCALHOST")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")


def test_routing_and_negotiation() -> None:
    assert isinstance(route(head(target="/mcp?x=1"), mcp_path="/mcp"), type(route(head(), mcp_path="/mcp")))
    err = route(head("PATCH"), mcp_path="/mcp")
    assert isinstance(err, HttpError) and err.status == 405
    err = route(head(target="/other"), mcp_path="/mcp")
    assert isinstance(err, HttpError) and err.status == 404 and err.code is None
    assert accepts(head()) == (True, True)
    assert accepts(head(accept="text/event-stream")) == (False, True)
    assert accepts(head(accept="application/json;q=0.9, text/event-stream;q=0")) == (True, False)
    assert accepts(head(accept="*/*")) == (True, True)
    assert accepts(head(accept="text/*")) == (False, True)
    data = b'{"jsonrpc":"2.0","id":3,"method":"x"}'
    parsed = parse_post(data)
    assert isinstance(parsed, PostBody) and parsed.data == data and not parsed.is_batch
    assert parsed.message == rpc.Request(3, "x") and parsed.error_id == 3
    bad = parse_post(b'{"jsonrpc":"2.0","id":3}')
    assert isinstance(bad, HttpError) and bad.status == 400 and bad.request_id == 3


def test_check_batch_reads_the_revision_table() -> None:
    def post(*items: dict[str, Any]) -> PostBody:
        parsed = parse_post(json.dumps(list(items) if len(items) != 1 else items[0]).encode())
        assert isinstance(parsed, PostBody)
        return parsed

    single = post(request(1, "ping"))
    assert check_batch(single, None) is None and check_batch(single, "2025-06-18") is None
    batch = post(request(1, "ping"), NOTE)
    assert batch.is_batch and batch.error_id == 1 and [m.id for m in batch.requests] == [1]
    assert check_batch(batch, BATCHES) is None
    for version in (None, "2024-11-05", "2025-06-18", LATEST, MODERN, "1999-01-01"):
        refused = check_batch(batch, version)
        assert refused is not None and refused.status == 400, version
        assert refused.code == rpc.INVALID_REQUEST and refused.request_id == 1
    only_notes = post(NOTE, NOTE)
    assert check_batch(only_notes, BATCHES) is None
    refused = check_batch(only_notes, "2025-06-18")
    assert refused is not None and refused.request_id is None
    for bad, rid, says in (
        (post(init_body(BATCHES), NOTE), 1, "initialize"),
        (post(request(7, "ping"), request(7, "tools/list")), 7, "share an id"),
    ):
        refused = check_batch(bad, BATCHES)
        assert refused is not None and refused.status == 400 and refused.request_id == rid
        assert says in refused.message
    # A batch with a malformed member is refused whole, by the parser.
    broken = parse_post(b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"id":2}]')
    assert isinstance(broken, HttpError) and broken.status == 400 and broken.request_id == 2


def test_header_value_encoding() -> None:
    for text in ("us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?="):
        assert decode_header_value(encode_header_value(text)) == text
    assert encode_header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert decode_header_value("=?base64?SGVsbG8=") == "=?base64?SGVsbG8="  # no suffix: literal
    assert decode_header_value("SGVsbG8=") == "SGVsbG8="
    for bad in (
        "=?base64?SGVsbG8?=",
        "=?base64?SGVs!!!bG8=?=",
        "caf\u00e9",
        "a\x01b",
        "=?base64?/w==?=",
    ):
        with pytest.raises(InvalidHeaderValue):
            decode_header_value(bad)


def test_header_annotations() -> None:
    schema = {
        "properties": {
            "a": {"type": "string", "x-mcp-header": "A"},
            "nested": {
                "type": "object",
                "properties": {"b": {"type": "integer", "x-mcp-header": "B"}},
            },
            "dup": {"type": "string", "x-mcp-header": "a"},
            "bad": {"type": "string", "x-mcp-header": "has space"},
            "arr": {"type": "array", "items": {"properties": {"c": {"x-mcp-header": "C"}}}},
        }
    }
    assert header_annotations(schema) == [("A", ("a",)), ("B", ("nested", "b"))]
    req = rpc.Request(1, "tools/call", {"name": "t", "arguments": {"nested": {"b": 7}}, "_meta": meta()})
    h = head(
        **{
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "t",
            "mcp-param-b": "7",
        }
    )
    assert check_stateless_request(h, req, tool_schema=schema) is None
    h2 = head(
        **{
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "t",
            "mcp-param-b": "true",
        }
    )
    err = check_stateless_request(h2, req, tool_schema=schema)
    assert isinstance(err, HttpError) and err.code == rpc.HEADER_MISMATCH


def test_event_ids_and_replay_buffer() -> None:
    assert parse_event_id(format_event_id("12", 34)) == ("12", 34)
    for bad in ("", "x", "1.", ".5", "a-b.1", "1.x", "1." + "9" * 30):
        assert parse_event_id(bad) is None
    buf = ReplayBuffer(max_events=3)
    for i in range(5):
        assert buf.append(b"e%d" % i) == i + 1
    assert [n for n, _ in buf.since(0)] == [3, 4, 5]
    assert buf.has_gap(1) and not buf.has_gap(2)
    buf.discard_through(4)
    assert buf.since(0) == [(5, b"e4")]
    queue = ReplayBuffer(max_events=2)
    queue.append(b"a")
    queue.discard_through(1)
    queue.append(b"b")
    queue.append(b"c")
    assert not queue.has_gap(1)  # 'a' was delivered before it left
    big = ReplayBuffer(max_events=10, max_bytes=4)
    big.append(b"12345")
    assert len(big) == 1  # the newest event stays, whatever its size


def test_cli_listen_address(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_listen("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen("9000") == ("127.0.0.1", 9000)
    for bad in ("::1:80", "host:x", "1:70000"):
        with pytest.raises(ValueError):
            parse_listen(bad)
    from trimcp.cli.commands import _build_parser

    ns = _build_parser().parse_args(["serve", "--http", "0.0.0.0:0"])
    assert run_serve(ns) == 2  # a usage error (cli/exits.py)
    assert "--allow-remote" in capsys.readouterr().err


async def test_the_servers_request_limit_holds_over_http(nursery: trio.Nursery) -> None:
    # Server(max_concurrent_requests=...) reaches the sessions every transport serves.
    server = Server("limited", "1", max_concurrent_requests=2)
    running = most = 0

    @server.tool
    async def work(ctx: Context) -> str:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await trio.sleep(0.05)
        running -= 1
        return "done"

    with trio.fail_after(TIMEOUT):
        bound = await start(nursery, server)
        async with open_client(bound.url, revision="2025-11-25") as session:
            results = []

            async def call() -> None:
                results.append(await session.call_tool("work"))

            async with trio.open_nursery() as calls:
                for _ in range(6):
                    calls.start_soon(call)
    assert [bool(r.is_error) for r in results] == [False] * 6
    assert most == 2
    with pytest.raises(ValueError):
        Server("bad", "1", max_concurrent_requests=0)
