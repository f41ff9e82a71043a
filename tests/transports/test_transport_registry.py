"""The transport registry (trimcp/_trio/transports/registry.py): ``open_client`` opens every
target through it, so a transport a user registers is reachable without editing the connect
function, and ``transport="sse"`` asks for 2024-11-05 HTTP+SSE alone.

The user-registered kind (``fake://``) reaches a real in-process trimcp ``Server`` over memory
streams, in virtual time; the HTTP+SSE tests run real servers on 127.0.0.1 (a trimcp
``serve_http`` and, where the order of requests matters, the recording h11 fake).
Each test works on a copy of the registry, so nothing registered here outlives the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from helpers.h11_fake import Reply, Req, result, serve

import trimcp
from trimcp import (
    ConnectError,
    HttpOptions,
    Limits,
    MessageStream,
    Timeouts,
    TransportOptions,
    open_client,
    register_transport,
)
from trimcp._sansio import schema as s
from trimcp._sansio.http.client.plan import Mode
from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.transports import registry
from trimcp._trio.transports.registry import Target, resolve, transport_for
from trimcp.server import Context, Server
from trimcp.server.transports.http.app import BoundHttpServer, serve_http
from trimcp.testing import serve_in_process

LIMIT = 15


@pytest.fixture(autouse=True)
def own_registry(monkeypatch: pytest.MonkeyPatch) -> registry.TransportRegistry:
    """A copy of the built-in registry for this test alone."""
    fresh = registry.TRANSPORTS.copy()
    monkeypatch.setattr(registry, "TRANSPORTS", fresh)
    return fresh


def echo_server() -> Server:
    server = Server("echoer", "1")

    @server.tool
    async def echo(ctx: Context, message: str) -> str:
        return f"echo: {message}"

    return server


def texts(out: s.CallToolResult) -> list[str]:
    return [b.text for b in out.content if isinstance(b, s.TextContent)]


# ---------------------------------------------------------------- a kind of one's own


class FakeTransport:
    """``fake://NAME``: an in-process trimcp Server per name, over memory streams."""

    def __init__(self, servers: dict[str, Server]) -> None:
        self.servers = servers
        self.opened: list[tuple[Target, TransportOptions]] = []
        self.closed = 0

    @asynccontextmanager
    async def __call__(self, target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
        assert isinstance(target, str)
        self.opened.append((target, options))
        server = self.servers[target.partition("://")[2]]
        async with serve_in_process(server) as client_end:
            try:
                yield client_end
            finally:
                await client_end.aclose()
                self.closed += 1


async def test_a_registered_kind_reaches_a_server_through_open_client(autojump_clock: Any) -> None:
    fake = FakeTransport({"echo": echo_server()})
    register_transport("fake", fake, schemes=("fake",))
    assert resolve("fake://echo") == "fake"
    with trio.fail_after(5):
        async with open_client(
            "fake://echo",
            http=HttpOptions(headers={"X-Team": "blue"}),
            limits=Limits(max_message_size=4096),
            timeouts=Timeouts(connect=3.0),
        ) as client:
            assert client.server_info["name"] == "echoer"
            assert [t.name for t in await client.list_tools()] == ["echo"]
            assert texts(await client.call_tool("echo", {"message": "hi"})) == ["echo: hi"]
    # The factory got the target and open_client's transport options as one value, and
    # its block was left when the session ended.
    [(target, options)] = fake.opened
    assert target == "fake://echo"
    assert options.headers == {"X-Team": "blue"}
    assert options.max_message_size == 4096 and options.connect_timeout == 3.0
    assert fake.closed == 1


async def test_a_scheme_is_matched_without_regard_to_case(autojump_clock: Any) -> None:
    fake = FakeTransport({"echo": echo_server()})
    register_transport("fake", fake, schemes=("FAKE",))
    assert resolve("Fake://echo") == "fake"
    with trio.fail_after(5):
        async with open_client("FAKE://echo") as client:
            assert texts(await client.call_tool("echo", {"message": "x"})) == ["echo: x"]


async def test_a_kind_can_be_forced_for_a_target_it_has_no_scheme_for(autojump_clock: Any) -> None:
    fake = FakeTransport({"echo": echo_server()})
    register_transport("fake", fake)  # no scheme: reachable only by name
    with trio.fail_after(5):
        async with open_client("fake://echo", transport="fake") as client:
            assert texts(await client.call_tool("echo", {"message": "y"})) == ["echo: y"]
    assert len(fake.opened) == 1


# ---------------------------------------------------------------- resolution


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("http://127.0.0.1:1/mcp", "http"),
        ("https://example.com/mcp", "http"),
        ("HTTPS://EXAMPLE.COM/mcp", "http"),
        ("ws://127.0.0.1:1/mcp", "ws"),
        ("wss://example.com/mcp", "ws"),
        ("mcp-server-time", "stdio"),
        ("npx -y server http://example.com", "stdio"),  # a URL argument, not a URL
        ("python -m server --url=ws://x", "stdio"),
        (["python", "-m", "server"], "stdio"),
        (("uvx", "mcp-server-fetch"), "stdio"),
        ("", "stdio"),  # and the stdio transport refuses it
    ],
)
def test_every_built_in_resolves(target: Target, kind: str) -> None:
    assert resolve(target) == kind


def test_a_stream_resolves_as_a_stream() -> None:
    client_end, _ = memory_stream_pair()
    assert resolve(client_end) == "stream"


def test_the_built_in_kinds_and_schemes(own_registry: registry.TransportRegistry) -> None:
    assert own_registry.kinds() == ("http", "sse", "stdio", "stream", "ws")
    assert own_registry.schemes() == {"http": "http", "https": "http", "ws": "ws", "wss": "ws"}
    for kind in own_registry.kinds():
        assert callable(transport_for(kind))


def test_an_unknown_kind_names_the_registered_ones() -> None:
    with pytest.raises(ValueError, match=r"no transport 'quic'; registered transports: http, sse, stdio, stream, ws"):
        transport_for("quic")


# ---------------------------------------------------------------- registration errors


def test_a_duplicate_kind_is_refused() -> None:
    fake = FakeTransport({})
    with pytest.raises(ValueError, match=r"transport 'http' is already registered \(pass replace=True"):
        register_transport("http", fake)
    register_transport("fake", fake)
    with pytest.raises(ValueError, match="'fake' is already registered"):
        register_transport("fake", fake)
    assert transport_for("http") is not fake


def test_a_scheme_taken_by_another_kind_is_refused() -> None:
    fake = FakeTransport({})
    with pytest.raises(ValueError, match=r"already registered: https:// \(http\)"):
        register_transport("fake", fake, schemes=("fake", "https"))
    # Nothing of the refused registration stays behind.
    with pytest.raises(ValueError, match="no transport 'fake'"):
        transport_for("fake")
    with pytest.raises(ValueError, match="no transport for URL scheme fake://"):
        resolve("fake://x")
    assert resolve("https://x") == "http"


def test_replace_takes_a_kind_and_its_schemes_over() -> None:
    fake = FakeTransport({})
    register_transport("http", fake, schemes=("http", "https"), replace=True)
    assert transport_for("http") is fake
    assert resolve("https://x") == "http"
    register_transport("h3", fake, schemes=("https",), replace=True)
    assert resolve("https://x") == "h3"


@pytest.mark.parametrize("bad", ["fa ke", "1fake", "fake://", ""])
def test_a_scheme_must_be_a_scheme(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a URL scheme"):
        register_transport("fake", FakeTransport({}), schemes=(bad,))


def test_a_lone_string_is_one_scheme() -> None:
    register_transport("fake", FakeTransport({}), schemes="fake")  # type: ignore[arg-type]
    assert resolve("fake://x") == "fake"
    with pytest.raises(ValueError, match="no transport for URL scheme f://"):
        resolve("f://x")


def test_a_kind_needs_a_name() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        register_transport("", FakeTransport({}))


# ---------------------------------------------------------------- targets nobody can open


async def test_an_unknown_scheme_is_a_clear_error_before_anything_runs(tmp_path: Path) -> None:
    # Before the registry, "quic://..." was run as a command; now nothing is started.
    with pytest.raises(ValueError) as caught:
        async with open_client("quic://127.0.0.1:4433/mcp"):
            pass
    message = str(caught.value)
    assert "no transport for URL scheme quic://" in message
    assert "registered schemes: http://, https://, ws://, wss://" in message


async def test_a_forced_kind_must_exist() -> None:
    with pytest.raises(ValueError, match="no transport 'grpc'; registered transports:"):
        async with open_client("http://127.0.0.1:1/mcp", transport="grpc"):
            pass


@pytest.mark.parametrize(
    ("target", "kind", "error", "match"),
    [
        ("ws://127.0.0.1:1/mcp", "sse", ValueError, "transport 'sse' needs a http:// or https:// URL"),
        ("mcp-server-time", "http", ValueError, "transport 'http' needs a URL"),
        ("http://127.0.0.1:1/mcp", "ws", ValueError, "transport 'ws' needs a ws:// or wss:// URL"),
        (["python", "-m", "x"], "ws", TypeError, "transport 'ws' needs a URL"),
        ("http://127.0.0.1:1/mcp", "stream", TypeError, "transport 'stream' needs a MessageStream"),
    ],
)
async def test_a_forced_kind_refuses_a_target_it_cannot_open(
    target: Target, kind: str, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        async with open_client(target, transport=kind):
            pass


async def test_stdio_refuses_a_stream() -> None:
    client_end, _ = memory_stream_pair()
    with pytest.raises(TypeError, match="transport 'stdio' needs a command line"):
        async with open_client(client_end, transport="stdio"):
            pass


async def test_an_empty_command_is_still_refused() -> None:
    with pytest.raises(trimcp.LocalProtocolError, match="empty server command"):
        async with open_client(""):
            pass


# ---------------------------------------------------------------- transport="sse"


@asynccontextmanager
async def http_server(**options: Any) -> AsyncIterator[BoundHttpServer]:
    async with trio.open_nursery() as nursery:
        bound: BoundHttpServer = await nursery.start(
            lambda task_status: serve_http(echo_server(), task_status=task_status, **options)
        )
        yield bound
        nursery.cancel_scope.cancel()


async def test_sse_forced_speaks_2024_11_05_to_a_trimcp_server() -> None:
    with trio.fail_after(LIMIT):
        async with http_server(path="/mcp", sse_path="/sse") as bound:
            assert bound.sse_url is not None
            async with open_client(bound.sse_url, transport="sse") as client:
                assert client.stream.mode is Mode.LEGACY_SSE  # type: ignore[attr-defined]
                assert texts(await client.call_tool("echo", {"message": "old"})) == ["echo: old"]


async def test_sse_forced_at_a_streamable_only_server_fails_to_connect() -> None:
    with trio.fail_after(LIMIT):
        async with http_server(path="/mcp") as bound:
            with pytest.raises(ConnectError, match="no 2024-11-05 HTTP[+]SSE transport at"):
                async with open_client(bound.url, transport="sse"):
                    pass


class LegacyFake:
    """A recording 2024-11-05 server: GET /sse streams, POST /messages answers on it."""

    def __init__(self) -> None:
        self.send, self.recv = trio.open_memory_channel[Any](100)

    async def __call__(self, req: Req, reply: Reply) -> None:
        if req.method == "GET" and req.target == "/sse":
            await reply.sse_start()
            await reply.event("/messages?session_id=abc", event="endpoint")
            async for message in self.recv:
                await reply.event(message, event="message")
            return
        if req.method == "POST" and req.target.startswith("/messages"):
            await reply.text(202, "Accepted")
            msg = req.json
            if msg.get("method") == "initialize":
                await self.send.send(
                    result(
                        req,
                        {
                            "protocolVersion": "2024-11-05",
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "legacy", "version": "1"},
                        },
                    )
                )
            elif msg.get("method") == "tools/call":
                await self.send.send(result(req, {"content": [{"type": "text", "text": "old school"}]}))
            elif "id" in msg and "method" in msg:
                await self.send.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
            return
        await reply.text(405, "Method Not Allowed")


async def test_sse_forced_never_tries_streamable_http() -> None:
    with trio.fail_after(LIMIT):
        async with serve(LegacyFake()) as server:
            url = server.url.rsplit("/", 1)[0] + "/sse"
            async with open_client(url, transport="sse", revision="2024-11-05") as client:
                assert client.protocol_version == "2024-11-05"
                assert texts(await client.call_tool("echo", {})) == ["old school"]
        # The first request is the legacy GET; every POST went to the announced endpoint.
        first = server.requests[0]
        assert (first.method, first.target) == ("GET", "/sse")
        posts = [r.target for r in server.requests if r.method == "POST"]
        assert posts and all(t.startswith("/messages?session_id=abc") for t in posts)


async def test_an_http_url_still_falls_back_without_being_forced() -> None:
    # Resolution alone keeps today's behaviour: Streamable first, then 2024-11-05.
    with trio.fail_after(LIMIT):
        async with serve(LegacyFake()) as server:
            url = server.url.rsplit("/", 1)[0] + "/sse"
            async with open_client(url, revision="2024-11-05") as client:
                assert client.stream.mode is Mode.LEGACY_SSE  # type: ignore[attr-defined]
        assert server.requests[0].method == "POST"


async def test_sse_forced_gives_up_on_a_silent_endpoint_within_the_connect_timeout() -> None:
    async def silent(req: Req, reply: Reply) -> None:
        await reply.sse_start()
        await trio.sleep_forever()  # never announces where to POST

    with trio.fail_after(LIMIT):
        async with serve(silent) as server:
            start = trio.current_time()
            with pytest.raises(ConnectError, match="no 2024-11-05 HTTP[+]SSE transport at .*within 0.5 s"):
                async with open_client(server.url, transport="sse", timeouts=Timeouts(connect=0.5)):
                    pass
            assert trio.current_time() - start < 5  # not the keeper's own 10 s endpoint wait
        assert [r.method for r in server.requests] == ["GET"]
