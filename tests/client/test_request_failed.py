"""What the session does with a transport's ``RequestFailed`` (``SessionDriver._request_failed``).

``trimcp.testing.ScriptedStream`` plays the transport: the test sees every message
the session sends with its ``SendMeta`` and hands back ``Received`` texts and
``RequestFailed`` verdicts, in virtual time.  A lost answer fails its waiter at
once with the transport's error; ``may_reissue`` makes the session send the
request again under a new id (``Connection.reissue``), carrying what its first
``SendMeta`` carried and naming the old id, and tells ``on_sent`` (so a
``subscriptions/listen`` subscription follows its new id); a lost probe means a
handshake-era server; a lost ``initialize`` fails the connect with its reason.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.lowlevel

from trimcp import ConnectError, Era, TransportClosed, open_client
from trimcp._errors import TransportError
from trimcp._sansio.connection import stateless as sl
from trimcp._sansio.http.headers import HeaderParam
from trimcp._trio.client.client_session import ClientSession
from trimcp.testing import ScriptedStream

HANDSHAKE = "2025-11-25"
V26 = "2026-07-28"

INIT_RESULT = {"protocolVersion": HANDSHAKE, "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
DISCOVER_RESULT = {
    "resultType": "complete",
    "supportedVersions": [V26],
    "capabilities": {"tools": {"listChanged": True}},
    "_meta": {sl.SERVER_INFO_KEY: {"name": "s", "version": "1"}},
}


@asynccontextmanager
async def session(revision: str = HANDSHAKE) -> AsyncIterator[tuple[ClientSession, ScriptedStream]]:
    stream = ScriptedStream()
    async with trio.open_nursery() as nursery:

        async def handshake() -> None:
            if revision == V26:
                probe, _ = await stream.expect("server/discover")
                await stream.answer(probe, DISCOVER_RESULT)
            else:
                init, _ = await stream.expect("initialize")
                await stream.answer(init, INIT_RESULT)

        nursery.start_soon(handshake)
        async with open_client(stream, revision=revision) as client:
            yield client, stream


async def test_a_lost_answer_fails_its_waiter_at_once(autojump_clock: trio.abc.Clock) -> None:
    async with session() as (client, stream), trio.open_nursery() as nursery:
        failed: list[BaseException] = []

        async def ping() -> None:
            with pytest.raises(TransportClosed) as info:
                await client.ping()
            failed.append(info.value)

        nursery.start_soon(ping)
        request, _ = await stream.expect("ping")
        start = trio.current_time()
        await stream.lose(request, TransportClosed("the server went away mid-stream"))
        while not failed:
            await trio.lowlevel.checkpoint()
        assert trio.current_time() == start and "went away" in str(failed[0])
        assert request.id not in client.connection.pending
        # The session goes on.
        nursery.start_soon(client.ping)
        again, _ = await stream.expect("ping")
        await stream.answer(again, {})


async def test_may_reissue_sends_the_request_again_under_a_new_id(autojump_clock: trio.abc.Clock) -> None:
    tool = {
        "name": "where",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
            },
        },
    }
    async with session() as (client, stream), trio.open_nursery() as nursery:
        progress: list[float] = []
        results: list[Any] = []

        async def list_tools() -> None:
            results.append(await client.list_tools())

        nursery.start_soon(list_tools)
        listing, _ = await stream.expect("tools/list")
        await stream.answer(listing, {"tools": [tool]})
        while not results:
            await trio.lowlevel.checkpoint()
        results.clear()

        async def call() -> None:
            results.append(
                await client.call_tool("where", {"region": "eu"}, on_progress=lambda e: progress.append(e.progress))
            )

        nursery.start_soon(call)
        first, meta = await stream.expect("tools/call")
        assert meta.header_params == (HeaderParam(("region",), "Region"),) and meta.reissue_of is None
        await stream.lose(first, TransportClosed("the stream broke"), may_reissue=True)
        second, meta2 = await stream.expect("tools/call")
        assert second.id != first.id and second.params == first.params  # the progress token too
        assert meta2.reissue_of == first.id and meta2.header_params == meta.header_params
        token = (second.params or {})["_meta"]["progressToken"]
        await stream.give({"method": "notifications/progress", "params": {"progressToken": token, "progress": 1}})
        await stream.answer(first, {"content": [{"type": "text", "text": "late"}]})  # dropped: retired
        await stream.answer(second, {"content": [{"type": "text", "text": "eu"}]})
        while not results:
            await trio.lowlevel.checkpoint()
        assert results[0].content[0].text == "eu" and progress == [1]
        assert not client.connection.pending


async def test_a_reissued_listen_keeps_its_subscription(autojump_clock: trio.abc.Clock) -> None:
    async with session(V26) as (client, stream):
        async with trio.open_nursery() as nursery:

            async def serve() -> None:
                request, _ = await stream.expect("subscriptions/listen")
                await stream.give(
                    {
                        "method": "notifications/subscriptions/acknowledged",
                        "params": {
                            "notifications": {"toolsListChanged": True},
                            "_meta": {sl.SUBSCRIPTION_ID_KEY: request.id},
                        },
                    }
                )
                await trio.sleep(1)
                await stream.lose(request, TransportClosed("the listen stream broke"), may_reissue=True)
                again, meta = await stream.expect("subscriptions/listen")
                assert again.id != request.id and meta.reissue_of == request.id
                await stream.give(
                    {
                        "method": "notifications/tools/list_changed",
                        "params": {
                            "_meta": {sl.SUBSCRIPTION_ID_KEY: again.id},
                        },
                    }
                )

            nursery.start_soon(serve)
            async with client.listen(tools_list_changed=True) as sub:
                first_id = sub.id
                method, _ = await sub.__anext__()
                assert method == "notifications/tools/list_changed" and sub.id != first_id


async def test_a_lost_probe_means_a_handshake_era_server(autojump_clock: trio.abc.Clock) -> None:
    stream = ScriptedStream()
    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            probe, _ = await stream.expect("server/discover")
            await stream.lose(probe, TransportError("HTTP 405 from http://x/mcp: Method Not Allowed"))
            init, _ = await stream.expect("initialize")
            await stream.answer(init, INIT_RESULT)

        nursery.start_soon(serve)
        async with open_client(stream) as client:
            assert client.era is Era.HANDSHAKE and client.protocol_version == HANDSHAKE


async def test_a_lost_initialize_fails_the_connect_with_its_reason(autojump_clock: trio.abc.Clock) -> None:
    stream = ScriptedStream()
    async with trio.open_nursery() as nursery:

        async def serve() -> None:
            init, _ = await stream.expect("initialize")
            await stream.lose(init, ConnectError("initialize got HTTP 405, and no HTTP+SSE either"))

        nursery.start_soon(serve)
        start = trio.current_time()
        with pytest.raises(ConnectError, match="initialize got HTTP 405"):
            async with open_client(stream, revision=HANDSHAKE):
                pass
        assert trio.current_time() == start
