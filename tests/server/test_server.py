"""trimcp.server round-trips through the real trimcp client (handshake era).

In-process tests join ``open_client`` and ``serve_stream`` with
``memory_stream_pair`` (same serialization and parsing as a real transport);
one test runs the reference server as a subprocess over stdio.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from trimcp import Handlers
from trimcp._errors import LocalProtocolError, McpError, RequestTimeout
from trimcp._sansio import schema as s
from trimcp._trio._groups import collapse
from trimcp._trio.client import ClientSession, open_client
from trimcp._trio.memory import memory_stream_pair
from trimcp.reference.server import COUNTER_URI, INSTRUCTIONS, PNG, build_server
from trimcp.server import Context, ResourceNotFound, Server, ServerSession, serve_stream


@asynccontextmanager
async def connected(server: Server, **client_kwargs: Any) -> AsyncIterator[tuple[ClientSession, ServerSession]]:
    # These are handshake-era tests (the stateless era is in test_server_stateless.py):
    # pin the newest handshake revision unless a test names another.
    client_kwargs.setdefault("revision", "2025-11-25")
    client_end, server_end = memory_stream_pair()
    with collapse():
        async with trio.open_nursery() as nursery:
            session: ServerSession = await nursery.start(serve_stream, server, server_end)
            async with open_client(client_end, **client_kwargs) as client:
                yield client, session
    # Leaving the client closed the stream; serve_stream returned and unregistered the session.
    assert session not in server.sessions


def texts(result: s.CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, s.TextContent)]


# ---------------------------------------------------------------- lifecycle


async def test_handshake_advertises_what_is_registered() -> None:
    with trio.fail_after(5):
        async with connected(build_server()) as (client, session):
            assert client.server_info["name"] == "trimcp-reference"
            assert client.instructions == INSTRUCTIONS
            caps = client.server_capabilities
            assert caps["tools"] == {"listChanged": True}
            assert caps["resources"] == {"subscribe": True, "listChanged": True}
            assert set(caps) == {"tools", "resources", "prompts", "completions", "logging"}
            assert session.protocol_version == client.protocol_version == "2025-11-25"
            assert session.client_info["name"] == "trimcp"

        bare = Server("bare", "1", logging=False)

        @bare.tool
        async def only(ctx: Context) -> str:
            return "x"

        async with connected(bare) as (client, _):
            assert client.server_capabilities == {"tools": {"listChanged": True}}
            with pytest.raises(LocalProtocolError, match="prompts capability"):
                await client.request("prompts/list")


async def test_context_describes_the_request() -> None:
    server = Server("ctx", "1")
    seen: dict[str, Any] = {}

    @server.tool()
    async def inspect(ctx: Context) -> str:
        seen.update(
            id=ctx.request_id,
            method=ctx.method,
            version=ctx.protocol_version,
            client=ctx.client_info,
            caps=ctx.client_capabilities,
            server=ctx.server,
        )
        return "ok"

    with trio.fail_after(5):
        async with connected(server, revision="2025-06-18", handlers=Handlers(roots=[])) as (client, _):
            await client.call_tool("inspect")
    assert seen["method"] == "tools/call"
    assert seen["version"] == "2025-06-18"
    assert seen["client"]["name"] == "trimcp"
    assert "roots" in seen["caps"]
    assert seen["server"] is server
    assert isinstance(seen["id"], int)


# ---------------------------------------------------------------- tools


async def test_tools_list_is_paginated_and_complete() -> None:
    server = build_server(page_size=5)
    with trio.fail_after(5):
        async with connected(server) as (client, _):
            tools = await client.list_tools()
            assert [t.name for t in tools] == list(server.tools)
            assert len(tools) > 10
            first = await client.request("tools/list")
            assert len(first["tools"]) == 5 and "nextCursor" in first
            second = await client.request("tools/list", {"cursor": first["nextCursor"]})
            assert second["tools"][0]["name"] == tools[5].name
            for bad in ("garbage!", 5, base64.urlsafe_b64encode(b"prompts:5").decode()):
                with pytest.raises(McpError) as info:
                    await client.request("tools/list", {"cursor": bad})
                assert info.value.code == -32602
            by_name = {t.name: t for t in tools}
            assert by_name["echo"].annotations is not None
            assert by_name["echo"].annotations.read_only_hint is True
            assert by_name["echo"].input_schema["required"] == ["message"]


async def test_call_tool_text_and_structured_output() -> None:
    with trio.fail_after(5):
        async with connected(build_server()) as (client, _):
            assert texts(await client.call_tool("echo", {"message": "hi"})) == ["hi"]
            result = await client.call_tool("add", {"a": 2, "b": 3.5})
            assert result.structured_content == {"sum": 5.5}
            assert json.loads(texts(result)[0]) == {"sum": 5.5}
            assert not result.is_error
            big = await client.call_tool("large_output", {"size": 300_000})
            assert len(texts(big)[0]) == 300_000


async def test_tool_errors_are_results_unknown_tools_are_protocol_errors() -> None:
    with trio.fail_after(5):
        async with connected(build_server()) as (client, _):
            failed = await client.call_tool("fail", {"message": "nope"})
            assert failed.is_error and texts(failed) == ["nope"]
            raised = await client.call_tool("test_error_handling")
            assert raised.is_error and "on purpose" in texts(raised)[0]
            bad_args = await client.call_tool("add", {"a": 1})
            assert bad_args.is_error and "'b'" in texts(bad_args)[0]
            with pytest.raises(McpError) as info:
                await client.call_tool("no-such-tool")
            assert info.value.code == -32602


async def test_structured_output_must_match_output_schema() -> None:
    server = Server("strict", "1")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    async def wrong(ctx: Context) -> dict[str, Any]:
        return {"n": "not a number"}

    @server.tool(output_schema={"type": "object"})
    async def unstructured(ctx: Context) -> str:
        return "plain"

    with trio.fail_after(5):
        async with connected(server) as (client, _):
            result = await client.call_tool("wrong")
            assert result.is_error and "outputSchema" in texts(result)[0]
            assert (await client.call_tool("unstructured")).is_error


async def test_progress_reaches_the_callback(autojump_clock: trio.abc.Clock) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(event: Any) -> None:
        updates.append((event.progress, event.total, event.message))

    with trio.fail_after(60):
        async with connected(build_server()) as (client, _):
            result = await client.call_tool("slow", {"seconds": 4, "steps": 4}, on_progress=on_progress)
            assert texts(result) == ["slept 4 s"]
            fixture = await client.call_tool("test_tool_with_progress", on_progress=on_progress)
            assert not fixture.is_error
    assert updates[:4] == [(i, 4, f"step {i} of 4") for i in range(1, 5)]
    assert [u[0] for u in updates[4:]] == [0, 50, 100]


async def test_logging_respects_set_level() -> None:
    received: list[tuple[str, Any, str | None]] = []

    def on_log(params: s.LoggingMessageNotificationParams) -> None:
        received.append((params.level, params.data, params.logger))

    with trio.fail_after(5):
        async with connected(build_server(), handlers=Handlers(logging=on_log)) as (client, _):
            await client.call_tool("log_levels")
            assert [r[0] for r in received] == ["debug", "info", "warning", "error"]
            assert received[0] == ("debug", "a debug message", "reference")
            received.clear()
            await client.set_logging_level("warning")
            await client.call_tool("log_levels")
            assert [r[0] for r in received] == ["warning", "error"]


async def test_sampling_elicitation_and_roots_are_answered_by_the_client() -> None:
    asked: list[Any] = []

    async def sampling(params: s.CreateMessageRequestParams) -> dict[str, Any]:
        asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "test-model"}

    async def elicitation(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada", "age": 36}}

    roots = [s.Root(uri="file:///work", name="work")]
    with trio.fail_after(5):
        async with connected(
            build_server(), handlers=Handlers(sampling=sampling, elicitation=elicitation, roots=roots)
        ) as (client, _):
            assert texts(await client.call_tool("sample", {"prompt": "meaning?"})) == ["forty-two"]
            assert asked[0].max_tokens == 100
            answer = await client.call_tool("elicit", {"message": "who are you?"})
            assert json.loads(texts(answer)[0]) == {"action": "accept", "content": {"age": 36, "name": "Ada"}}
            assert asked[1].message == "who are you?"
            listed = await client.call_tool("roots")
            assert json.loads(texts(listed)[0]) == [{"name": "work", "uri": "file:///work"}]
            assert not (await client.call_tool("test_sampling", {"prompt": "x"})).is_error
            assert not (await client.call_tool("test_elicitation", {"message": "x"})).is_error


async def test_missing_client_capability_is_a_clear_tool_error() -> None:
    async def elicitation(params: Any) -> dict[str, Any]:
        raise AssertionError("never asked: 2025-03-26 has no elicitation")

    with trio.fail_after(5):
        async with connected(build_server()) as (client, _):
            for tool, args in (("sample", {"prompt": "x"}), ("roots", {}), ("elicit", {"message": "x"})):
                result = await client.call_tool(tool, args)
                assert result.is_error
                assert "ClientCapabilityError" in texts(result)[0]
                assert "capability" in texts(result)[0]
        async with connected(build_server(), revision="2025-03-26", handlers=Handlers(elicitation=elicitation)) as (
            client,
            _,
        ):
            result = await client.call_tool("elicit", {"message": "x"})
            assert result.is_error and "2025-03-26 has no 'elicitation/create'" in texts(result)[0]


async def test_client_timeout_cancels_the_server_handler(autojump_clock: trio.abc.Clock) -> None:
    server = Server("cancel", "1")
    started, cancelled = trio.Event(), trio.Event()

    @server.tool()
    async def forever(ctx: Context) -> str:
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.set()
            raise
        return "unreachable"

    with trio.fail_after(60):
        async with connected(server) as (client, _):
            with pytest.raises(RequestTimeout):
                await client.call_tool("forever", timeout=5)
            assert started.is_set()
            await cancelled.wait()
            # The session still works and the cancelled call's answer was suppressed.
            assert client.connection.stats.unknown_responses == 0
            await client.ping()
            assert client.connection.stats.late_responses_dropped == 0


async def test_reference_slow_tool_is_cancellable(autojump_clock: trio.abc.Clock) -> None:
    with trio.fail_after(60):
        async with connected(build_server()) as (client, session):
            with trio.move_on_after(2.5) as scope:
                await client.call_tool("slow", {"seconds": 100, "steps": 100})
            assert scope.cancelled_caught
            await client.ping()
            # No handler of the session is left running.
            while session.driver.peer_requests.scopes:
                await trio.sleep(0.01)


# ---------------------------------------------------------------- resources


async def test_resources_read_static_binary_and_template() -> None:
    with trio.fail_after(5):
        async with connected(build_server()) as (client, _):
            listed = await client.list_resources()
            assert {"test://static-text", "test://static-binary", COUNTER_URI} <= {r.uri for r in listed}
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
            text = (await client.read_resource("test://static-text")).contents[0]
            assert isinstance(text, s.TextResourceContents) and text.mime_type == "text/plain"
            blob = (await client.read_resource("test://static-binary")).contents[0]
            assert isinstance(blob, s.BlobResourceContents)
            assert base64.b64decode(blob.blob) == PNG and blob.mime_type == "image/png"
            data = (await client.read_resource("test://template/a%20b/data")).contents[0]
            assert isinstance(data, s.TextResourceContents) and data.uri == "test://template/a%20b/data"
            assert json.loads(data.text)["id"] == "a b"
            with pytest.raises(McpError) as info:
                await client.read_resource("test://nowhere")
            assert (info.value.code, info.value.data) == (-32002, {"uri": "test://nowhere"})


async def test_template_reader_can_report_not_found() -> None:
    server = Server("nf", "1")

    @server.resource_template("db://items/{key}")
    async def item(ctx: Context, key: str) -> str:
        if key != "known":
            raise ResourceNotFound(f"db://items/{key}", "No such item")
        return "found"

    with trio.fail_after(5):
        async with connected(server) as (client, _):
            assert (await client.read_resource("db://items/known")).contents[0].text == "found"  # type: ignore[union-attr]
            with pytest.raises(McpError) as info:
                await client.read_resource("db://items/other")
            assert info.value.code == -32002 and info.value.message == "No such item"


async def test_subscribe_update_unsubscribe() -> None:
    notes: list[tuple[str, dict[str, Any]]] = []

    def on_note(method: str, params: dict[str, Any]) -> None:
        notes.append((method, params))

    server = build_server()
    with trio.fail_after(5):
        async with connected(server, handlers=Handlers(notification=on_note)) as (client, session):
            await client.call_tool("bump_counter")
            assert notes == []  # not subscribed yet
            await client.subscribe_resource(COUNTER_URI)
            assert session.subscriptions == {COUNTER_URI}
            assert texts(await client.call_tool("bump_counter")) == ["2"]
            assert notes == [("notifications/resources/updated", {"uri": COUNTER_URI})]
            assert (await client.read_resource(COUNTER_URI)).contents[0].text == "2"  # type: ignore[union-attr]
            await client.unsubscribe_resource(COUNTER_URI)
            await client.call_tool("bump_counter")
            assert len(notes) == 1


# ---------------------------------------------------------------- prompts and completion


async def test_prompts_list_and_get() -> None:
    with trio.fail_after(5):
        async with connected(build_server()) as (client, _):
            prompts = {p.name: p for p in await client.list_prompts()}
            assert {"test_simple_prompt", "test_prompt_with_arguments", "greeting"} <= set(prompts)
            args = prompts["test_prompt_with_arguments"].arguments
            assert args is not None and [(a.name, a.required) for a in args] == [("arg1", True), ("arg2", True)]
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
            message = got.messages[0]
            assert message.role == "user" and isinstance(message.content, s.TextContent)
            assert "hello" in message.content.text and "world" in message.content.text
            greet = await client.get_prompt("greeting", {"name": "Ada"})
            assert [m.role for m in greet.messages] == ["user", "assistant"]
            assert greet.description is not None
            embedded = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://x"})
            assert isinstance(embedded.messages[0].content, s.EmbeddedResource)
            image = await client.get_prompt("test_prompt_with_image")
            assert isinstance(image.messages[0].content, s.ImageContent)
            for name, arguments in (("greeting", {}), ("nope", {}), ("greeting", {"name": 3})):
                with pytest.raises(McpError) as info:
                    await client.request("prompts/get", {"name": name, "arguments": arguments})
                assert info.value.code == -32602


async def test_completion_of_prompt_argument_and_template_variable() -> None:
    with trio.fail_after(5):
        async with connected(build_server()) as (client, _):
            langs = await client.complete({"type": "ref/prompt", "name": "greeting"}, "language", "fr")
            assert langs.completion.values == ["French"]
            assert langs.completion.total == 1 and langs.completion.has_more is False
            ids = await client.complete({"type": "ref/resource", "uri": "test://template/{id}/data"}, "id", "1")
            assert len(ids.completion.values) == 100
            assert ids.completion.total == 111 and ids.completion.has_more is True
            none = await client.complete({"type": "ref/prompt", "name": "greeting"}, "name", "A")
            assert none.completion.values == []
            with pytest.raises(McpError) as info:
                await client.complete({"type": "ref/prompt", "name": "nope"}, "x", "")
            assert info.value.code == -32602


# ---------------------------------------------------------------- list_changed, roots_changed


async def test_tool_list_changed_notification() -> None:
    notes: list[str] = []
    with trio.fail_after(5):
        async with connected(build_server(), handlers=Handlers(notification=lambda m, p: notes.append(m))) as (
            client,
            _,
        ):
            assert texts(await client.call_tool("toggle_extra_tool")) == ["extra tool added"]
            assert notes == ["notifications/tools/list_changed"]
            assert "extra" in {t.name for t in await client.list_tools()}
            assert texts(await client.call_tool("extra")) == ["extra"]
            await client.call_tool("toggle_extra_tool")
            assert notes == ["notifications/tools/list_changed"] * 2
            assert "extra" not in {t.name for t in await client.list_tools()}


async def test_broadcast_reaches_every_session_and_roots_changed_is_delivered() -> None:
    server = build_server()
    notes: list[str] = []
    changed: list[ServerSession] = []

    @server.on_roots_changed
    async def roots_changed(session: ServerSession) -> None:
        changed.append(session)

    with trio.fail_after(5):
        async with connected(server, handlers=Handlers(notification=lambda m, p: notes.append("a:" + m), roots=[])) as (
            a,
            sa,
        ):
            async with connected(server, handlers=Handlers(notification=lambda m, p: notes.append("b:" + m))) as (b, _):
                assert len(server.sessions) == 2
                # A session is notified once operating: after the server read notifications/initialized.
                await b.ping()
                await server.notify_prompts_list_changed()
                await b.ping()
                await a.ping()
                assert sorted(notes) == ["a:notifications/prompts/list_changed", "b:notifications/prompts/list_changed"]
            await a.notify_roots_changed()
            await a.ping()
            assert changed == [sa]


# ---------------------------------------------------------------- per-revision shaping


async def test_fields_are_trimmed_for_2024_11_05() -> None:
    with trio.fail_after(5):
        async with connected(build_server(page_size=None), revision="2024-11-05") as (client, _):
            tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
            assert {"title", "outputSchema", "annotations"}.isdisjoint(tools["add"])
            added = await client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
            assert "structuredContent" not in added
            assert json.loads(added["content"][0]["text"]) == {"sum": 3}
            media = (await client.request("tools/call", {"name": "media"}))["content"]
            assert [b["type"] for b in media] == ["text", "image", "text", "text", "resource"]
            assert "audio" in media[2]["text"] and "test://static-text" in media[3]["text"]
            prompts = {p["name"]: p for p in (await client.request("prompts/list"))["prompts"]}
            assert "title" not in prompts["greeting"]
        async with connected(build_server(page_size=None)) as (client, _):
            tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
            assert {"title", "outputSchema", "annotations"} <= set(tools["add"])
            media = (await client.request("tools/call", {"name": "media"}))["content"]
            assert [b["type"] for b in media] == ["text", "image", "audio", "resource_link", "resource"]
        async with connected(build_server(page_size=None), revision="2025-03-26") as (client, _):
            tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
            assert "annotations" in tools["add"] and "title" not in tools["add"]
            media = (await client.request("tools/call", {"name": "media"}))["content"]
            assert [b["type"] for b in media] == ["text", "image", "audio", "text", "resource"]


# ---------------------------------------------------------------- fixtures, typed results


async def test_conformance_fixtures(autojump_clock: trio.abc.Clock) -> None:
    async def sampling(params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    async def elicitation(params: Any) -> dict[str, Any]:
        return {"action": "decline"}

    logs: list[str] = []
    with trio.fail_after(60):
        async with connected(
            build_server(),
            handlers=Handlers(sampling=sampling, elicitation=elicitation, logging=lambda p: logs.append(p.level)),
        ) as (client, _):
            kinds = {}
            for name in (
                "test_simple_text",
                "test_image_content",
                "test_audio_content",
                "test_embedded_resource",
                "test_multiple_content_types",
                "test_tool_with_logging",
                "test_tool_with_progress",
                "test_error_handling",
            ):
                result = await client.call_tool(name)
                assert result.content and result.is_error is (True if name == "test_error_handling" else None)
                kinds[name] = [b.type for b in result.content]
            assert kinds["test_audio_content"] == ["audio"]
            assert kinds["test_multiple_content_types"] == ["text", "image", "resource"]
            assert logs == ["info"] * 3
            assert texts(await client.call_tool("test_sampling", {"prompt": "p"})) == ["Model answer: ok"]
            declined = texts(await client.call_tool("test_elicitation", {"message": "m"}))[0]
            assert '"decline"' in declined
            for uri in ("test://static-text", "test://static-binary", "test://template/123/data"):
                assert (await client.read_resource(uri)).contents
            for name, args in (
                ("test_simple_prompt", None),
                ("test_prompt_with_image", None),
                ("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}),
                ("test_prompt_with_embedded_resource", {"resourceUri": "test://r"}),
            ):
                assert (await client.get_prompt(name, args)).messages


async def test_typed_results_and_plain_functions() -> None:
    server = Server("typed", "1")

    @server.tool()
    def sync_tool(ctx: Context, x: int) -> s.CallToolResult:
        return s.CallToolResult(content=[s.TextContent(text=f"typed {x}")])

    @server.resource("mem://r", mime_type="text/plain")
    def resource(ctx: Context) -> s.TextResourceContents:
        return s.TextResourceContents(uri="mem://r", text="typed resource")

    with trio.fail_after(5):
        async with connected(server) as (client, _):
            assert texts(await client.call_tool("sync_tool", {"x": 1})) == ["typed 1"]
            assert (await client.read_resource("mem://r")).contents[0].text == "typed resource"  # type: ignore[union-attr]


# ---------------------------------------------------------------- stdio


async def test_reference_server_over_stdio() -> None:
    with trio.fail_after(30):
        async with open_client([sys.executable, "-m", "trimcp.reference"]) as client:
            assert client.server_info["name"] == "trimcp-reference"
            assert len(await client.list_tools()) > 10
            assert texts(await client.call_tool("echo", {"message": "över stdio"})) == ["över stdio"]
            text = (await client.read_resource("test://static-text")).contents[0]
            assert isinstance(text, s.TextResourceContents)
            assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"sum": 2}
