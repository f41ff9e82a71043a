"""The client's callbacks: server-to-client requests (sampling, elicitation, roots), progress,
logging and other notifications, against the scripted fake server of tests/fake_server.py
(virtual time: ``autojump_clock``).  The same features against real servers are in
test_integration_stdio.py.
"""

from __future__ import annotations

from typing import Any

import trio
from fake_server import TEXT_OK, Json, connected, round_trip, spawn

from trimcp import Handlers, McpError
from trimcp import schema as s
from trimcp._sansio import jsonrpc
from trimcp._sansio.events import ProgressReceived


async def test_server_requests_reach_typed_handlers(autojump_clock: Any) -> None:
    seen: dict[str, Any] = {}

    async def sampling(params: s.CreateMessageRequestParams) -> s.CreateMessageResult:
        seen["sampling"] = params
        return s.CreateMessageResult(
            role="assistant", content=s.TextContent(text="4"), model="test-model", stop_reason="endTurn"
        )

    async def elicitation(params: s.ElicitRequestParams) -> s.ElicitResult:
        seen["elicitation"] = params
        return s.ElicitResult(action="accept", content={"name": "Ada"})

    calls = 0

    async def roots() -> list[s.Root]:
        nonlocal calls
        calls += 1
        return [s.Root(uri=f"file:///work/p{calls}", name=f"p{calls}")]

    with trio.fail_after(10):
        async with connected(handlers=Handlers(sampling=sampling, elicitation=elicitation, roots=roots)) as (
            client,
            peer,
        ):
            caps = peer.initialize["params"]["capabilities"]
            assert caps == {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
            await peer.send(
                {
                    "id": "s1",
                    "method": "sampling/createMessage",
                    "params": {
                        "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                        "maxTokens": 10,
                        "systemPrompt": "be brief",
                    },
                }
            )
            assert await peer.recv() == {
                "jsonrpc": "2.0",
                "id": "s1",
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "4"},
                    "model": "test-model",
                    "stopReason": "endTurn",
                },
            }
            await peer.send(
                {
                    "id": 7,
                    "method": "elicitation/create",
                    "params": {
                        "message": "Name?",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                    },
                }
            )
            assert await peer.recv() == {
                "jsonrpc": "2.0",
                "id": 7,
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            for n in (1, 2):  # a callable provider is asked every time
                await peer.send({"id": f"r{n}", "method": "roots/list"})
                assert await peer.recv() == {
                    "jsonrpc": "2.0",
                    "id": f"r{n}",
                    "result": {"roots": [{"uri": f"file:///work/p{n}", "name": f"p{n}"}]},
                }
            await client.notify_roots_changed()
            assert await peer.recv() == {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    sample = seen["sampling"]
    assert isinstance(sample, s.CreateMessageRequestParams)
    assert sample.max_tokens == 10 and sample.system_prompt == "be brief"
    assert sample.messages == [s.SamplingMessage(role="user", content=s.TextContent(text="2+2?"))]
    form = seen["elicitation"]
    assert isinstance(form, s.ElicitRequestFormParams)
    assert form.message == "Name?" and form.requested_schema["properties"] == {"name": {"type": "string"}}


async def test_handler_failures_become_jsonrpc_errors_and_the_session_survives(autojump_clock: Any) -> None:
    async def sampling(params: s.CreateMessageRequestParams) -> Json:
        raise RuntimeError("no model configured")

    async def elicitation(params: s.ElicitRequestParams) -> Json:
        raise McpError(-1, "user rejected", {"why": "busy"})

    with trio.fail_after(10):
        async with connected(handlers=Handlers(sampling=sampling, elicitation=elicitation)) as (client, peer):
            good_sampling = {"messages": [], "maxTokens": 5}
            await peer.send({"id": 1, "method": "sampling/createMessage", "params": good_sampling})
            error = (await peer.recv())["error"]
            assert error["code"] == jsonrpc.INTERNAL_ERROR
            assert error["message"] == "RuntimeError: no model configured"
            await peer.send(
                {
                    "id": 2,
                    "method": "elicitation/create",
                    "params": {"message": "?", "requestedSchema": {"type": "object"}},
                }
            )
            assert (await peer.recv())["error"] == {"code": -1, "message": "user rejected", "data": {"why": "busy"}}
            # No roots capability advertised, so no handler: method not found.
            await peer.send({"id": 3, "method": "roots/list"})
            assert (await peer.recv())["error"]["code"] == jsonrpc.METHOD_NOT_FOUND
            # Params that do not fit the schema are the peer's fault: invalid params.
            await peer.send({"id": 4, "method": "sampling/createMessage", "params": {"messages": "nope"}})
            error = (await peer.recv())["error"]
            assert error["code"] == jsonrpc.INVALID_PARAMS
            assert "sampling/createMessage" in error["message"]
            await round_trip(client, peer)


async def test_progress_callback_receives_progress_events(autojump_clock: Any) -> None:
    events: list[ProgressReceived] = []
    with trio.fail_after(10):
        async with connected() as (client, peer), trio.open_nursery() as nursery:
            call = spawn(nursery, client.call_tool, "work", on_progress=events.append)
            req = await peer.expect("tools/call")
            token = req["params"]["_meta"]["progressToken"]
            for i in (1, 2, 3, 3):
                await peer.notify(
                    "notifications/progress",
                    {"progressToken": token, "progress": i, "total": 3, "message": f"step {i}"},
                )
            await peer.notify("notifications/progress", {"progressToken": "stranger", "progress": 1})
            await peer.reply(req, TEXT_OK)
            await call.result()

            async def broken(event: ProgressReceived) -> None:
                raise RuntimeError("callback bug")

            call = spawn(nursery, client.call_tool, "work", on_progress=broken)
            req = await peer.expect("tools/call")
            await peer.notify(
                "notifications/progress", {"progressToken": req["params"]["_meta"]["progressToken"], "progress": 1}
            )
            await peer.reply(req, TEXT_OK)
            assert (await call.result()).content == [s.TextContent(text="ok")]
    assert [(e.progress, e.total, e.message) for e in events] == [
        (1, 3, "step 1"),
        (2, 3, "step 2"),
        (3, 3, "step 3"),
        (3, 3, "step 3"),
    ]
    assert all(isinstance(e, ProgressReceived) and e.token == token for e in events)
    kinds = [issue.kind for issue in client.driver.issues]
    assert kinds == ["progress-not-increasing", "unknown-progress-token"]


async def test_logging_and_notification_handlers_receive_notifications(autojump_clock: Any) -> None:
    logs: list[s.LoggingMessageNotificationParams] = []
    notes: list[tuple[str, Json]] = []

    async def on_notification(method: str, params: Json) -> None:
        await trio.lowlevel.checkpoint()
        notes.append((method, params))
        if method == "test/explode":
            raise RuntimeError("handler bug")

    with trio.fail_after(10):
        async with connected(handlers=Handlers(logging=logs.append, notification=on_notification)) as (client, peer):
            await peer.notify("notifications/message", {"level": "warning", "logger": "db", "data": {"rows": 3}})
            await peer.notify("test/explode")
            await peer.notify("notifications/tools/list_changed")
            await round_trip(client, peer)
    assert logs == [s.LoggingMessageNotificationParams(level="warning", logger="db", data={"rows": 3})]
    assert notes == [
        ("notifications/message", {"level": "warning", "logger": "db", "data": {"rows": 3}}),
        ("test/explode", {}),
        ("notifications/tools/list_changed", {}),
    ]
