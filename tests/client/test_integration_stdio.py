"""The client against real third-party MCP servers on stdio.

Each test starts its peer (mcp-server-time from PyPI, a server built on the official ``mcp``
SDK, and @modelcontextprotocol/server-everything from npm) and skips cleanly when that peer is
not installed (``peers.require``).  They run in real time, each under a ``fail_after`` bound.
The peers' names and outputs asserted here are part of their published behaviour (pinned
versions: see tests/peers.py).  The SDK server speaks both eras: the dual-era client picks the
stateless one (2026-07-28) with it, and the tests where the eras differ (server-to-client
input, logging) also run with a handshake revision pinned.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import peers
import pytest
import trio

from trimcp import ClientSession, Era, Handlers, McpError, RequestTimeout, StdioOptions, open_client
from trimcp import schema as s
from trimcp._sansio.events import ProgressReceived

pytestmark = pytest.mark.integration

ROOTS = [s.Root(uri="file:///work/trimcp-project", name="trimcp-project")]


def text_of(result: s.CallToolResult) -> str:
    """All text content of a tool result, joined by newlines."""
    return "\n".join(block.text for block in result.content if isinstance(block, s.TextContent))


class Recorder:
    """Sampling and elicitation handlers that record what the server asked."""

    def __init__(self, sampled_text: str = "the model says 42") -> None:
        self.sampled_text = sampled_text
        self.sampling: list[s.CreateMessageRequestParams] = []
        self.elicitation: list[s.ElicitRequestParams] = []
        self.logs: list[s.LoggingMessageNotificationParams] = []
        self.roots_asked = 0

    async def sample(self, params: s.CreateMessageRequestParams) -> s.CreateMessageResult:
        self.sampling.append(params)
        return s.CreateMessageResult(
            role="assistant",
            content=s.TextContent(text=self.sampled_text),
            model="trimcp-test-model",
            stop_reason="endTurn",
        )

    async def elicit(self, params: s.ElicitRequestParams) -> s.ElicitResult:
        self.elicitation.append(params)
        return s.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True, "integer": 7})

    async def roots(self) -> list[s.Root]:
        self.roots_asked += 1
        return ROOTS

    def kwargs(self, *, roots: bool = True) -> dict[str, Any]:
        return {
            "stdio": StdioOptions(env=peers.peer_env()),
            "handlers": Handlers(
                sampling=self.sample,
                elicitation=self.elicit,
                roots=self.roots if roots else None,
                logging=self.logs.append,
            ),
        }


# --------------------------------------------------------------------------- mcp-server-time


async def test_time_server_current_time_and_a_bad_timezone() -> None:
    argv = peers.require(peers.time_server_argv(), "mcp-server-time")
    with trio.fail_after(60):
        async with open_client(argv, stdio=StdioOptions(env=peers.peer_env())) as client:
            assert client.server_info["name"] == "mcp-time"
            tools = {t.name: t for t in await client.list_tools()}
            assert {"get_current_time", "convert_time"} <= tools.keys()
            assert "timezone" in tools["get_current_time"].input_schema["properties"]

            result = await client.call_tool("get_current_time", {"timezone": "UTC"})
            assert not result.is_error
            data = json.loads(text_of(result))
            assert data["timezone"] == "UTC"
            when = datetime.fromisoformat(data["datetime"])
            assert when.utcoffset() == timedelta(0)
            assert abs(when - datetime.now(UTC)) < timedelta(minutes=5)

            try:
                bad = await client.call_tool("get_current_time", {"timezone": "Mars/Olympus_Mons"})
            except McpError as exc:  # either way of failing is allowed by the spec
                assert "Mars/Olympus_Mons" in exc.message
            else:
                assert bad.is_error
                assert "Mars/Olympus_Mons" in text_of(bad)
            again = await client.call_tool("get_current_time", {"timezone": "Europe/Paris"})
            assert json.loads(text_of(again))["timezone"] == "Europe/Paris"


# --------------------------------------------------------------------------- the mcp SDK server


@asynccontextmanager
async def sdk_client(handlers: Recorder | None = None, **kwargs: Any) -> AsyncIterator[ClientSession]:
    argv = peers.require(peers.sdk_server_argv(), "the mcp SDK (pip install -e '.[test]')")
    extra = handlers.kwargs() if handlers is not None else {"stdio": StdioOptions(env=peers.peer_env())}
    async with open_client(argv, **extra, **kwargs) as client:
        yield client


#: ``revision`` for the tests that run in both eras (None: the dual-era default, stateless here).
BOTH_ERAS = pytest.mark.parametrize("revision", [None, "2025-11-25"], ids=["stateless", "handshake"])


async def test_sdk_server_tools_resources_prompts() -> None:
    with trio.fail_after(60):
        async with sdk_client() as client:
            assert client.era is Era.STATELESS and client.protocol_version == "2026-07-28"
            assert client.supported_versions is not None and "2026-07-28" in client.supported_versions
            assert client.server_info["name"] == "trimcp-test-sdk-server"
            tools = {t.name: t for t in await client.list_tools()}
            assert set(tools) == {"echo", "add", "slow", "big", "progress", "fail", "ask_name", "sample", "roots"}
            assert tools["add"].output_schema is not None
            assert "sum" in tools["add"].output_schema["properties"]

            added = await client.call_tool("add", {"a": 2, "b": 40.5})
            assert not added.is_error
            assert added.structured_content == {"sum": 42.5}
            echoed = await client.call_tool("echo", {"text": "héllo\nworld"})
            assert text_of(echoed) == "héllo\nworld"
            failed = await client.call_tool("fail", {"message": "nope"})
            assert failed.is_error and "nope" in text_of(failed)

            (resource,) = await client.list_resources()
            assert resource.uri == "trimcp://static/hello"
            read = await client.read_resource(resource.uri)
            assert [c.text for c in read.contents] == ["hello from the mcp sdk server"]  # type: ignore[union-attr]
            (template,) = await client.list_resource_templates()
            assert template.uri_template == "trimcp://echo/{value}"
            read = await client.read_resource("trimcp://echo/abc")
            assert [c.text for c in read.contents] == ["echo: abc"]  # type: ignore[union-attr]

            (prompt,) = await client.list_prompts()
            assert prompt.name == "greet"
            got = await client.get_prompt("greet", {"name": "Ada", "style": "shout"})
            assert [m.content.text for m in got.messages] == ["HELLO, ADA!"]  # type: ignore[union-attr]


async def test_sdk_server_ten_megabyte_result_arrives_intact() -> None:
    size = 10 * 1024 * 1024
    with trio.fail_after(60):
        async with sdk_client() as client:
            result = await client.call_tool("big", {"size": size})
            text = text_of(result)
            assert len(text) == size
            assert text == "x" * size
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"


async def test_sdk_server_timeout_then_the_session_goes_on() -> None:
    with trio.fail_after(60):
        async with sdk_client() as client:
            start = trio.current_time()
            with pytest.raises(RequestTimeout, match="within 0.5 s"):
                await client.call_tool("slow", {"seconds": 30}, timeout=0.5)
            assert trio.current_time() - start < 5
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
            # The server stopped the slow call, so no late answer crosses the next one.
            slept = await client.call_tool("slow", {"seconds": 0.1})
            assert text_of(slept) == "slept 0.1"


@BOTH_ERAS
async def test_sdk_server_asks_our_handlers(revision: str | None) -> None:
    # Handshake era: server-to-client requests; stateless era: InputRequiredResult rounds.
    handlers = Recorder()
    with trio.fail_after(60):
        async with sdk_client(handlers, revision=revision) as client:
            assert client.era is (Era.STATELESS if revision is None else Era.HANDSHAKE)
            sampled = await client.call_tool("sample", {"prompt": "what is 6 * 7?"})
            assert text_of(sampled) == "the model says 42"
            (params,) = handlers.sampling
            assert params.max_tokens == 64
            assert params.system_prompt == "You are a test double."
            assert params.messages == [s.SamplingMessage(role="user", content=s.TextContent(text="what is 6 * 7?"))]

            named = await client.call_tool("ask_name")
            assert text_of(named) == "hello Ada Lovelace"
            (form,) = handlers.elicitation
            assert isinstance(form, s.ElicitRequestFormParams)
            assert form.message == "What is your name?"
            assert "name" in form.requested_schema["properties"]

            listed = await client.call_tool("roots")
            assert text_of(listed) == "file:///work/trimcp-project"
            assert handlers.roots_asked == 1


@BOTH_ERAS
async def test_sdk_server_progress_and_logging(revision: str | None) -> None:
    handlers = Recorder()
    events: list[ProgressReceived] = []
    with trio.fail_after(60):
        async with sdk_client(handlers, revision=revision) as client:
            if client.era is Era.STATELESS:
                client.log_level = "info"  # 2026-07-28: no logLevel in _meta, no log messages
            result = await client.call_tool("progress", {"steps": 4, "delay": 0.01}, on_progress=events.append)
            assert text_of(result) == "done 4"
    assert [e.progress for e in events] == [1, 2, 3, 4]
    assert all(e.total == 4 for e in events)
    assert [e.message for e in events] == [f"step {i}/4" for i in range(1, 5)]
    assert [(log.level, log.data) for log in handlers.logs] == [("info", "progress: starting 4 steps")]
    assert list(client.driver.issues) == []


# --------------------------------------------------------------------------- server-everything


@asynccontextmanager
async def everything_client(handlers: Recorder, *, roots: bool) -> AsyncIterator[ClientSession]:
    # With roots declared, server-everything sends roots/list ~350 ms after the handshake and
    # does not exit on stdin EOF while that request is unanswered (shutdown then waits out the
    # 2 s grace): declare roots only where the test uses them.
    argv = peers.require(peers.everything_stdio_argv(), "@modelcontextprotocol/server-everything (npm)")
    async with open_client(argv, **handlers.kwargs(roots=roots)) as client:
        yield client


async def test_everything_lists_reads_and_prompts() -> None:
    with trio.fail_after(60):
        async with everything_client(Recorder(), roots=False) as client:
            assert client.server_capabilities is not None
            assert {"tools", "resources", "prompts", "completions"} <= client.server_capabilities.keys()
            tools = {t.name for t in await client.list_tools()}
            assert {
                "echo",
                "get-sum",
                "get-structured-content",
                "trigger-sampling-request",
                "trigger-elicitation-request",
            } <= tools
            # The server offers get-roots-list only to clients that declared roots; we did not.
            assert "get-roots-list" not in tools

            resources = await client.list_resources()
            static = [r for r in resources if r.uri.startswith("demo://resource/static/")]
            assert len(static) >= 5
            for resource in static:
                read = await client.read_resource(resource.uri)
                (contents,) = read.contents
                assert contents.uri == resource.uri
                assert isinstance(contents, s.TextResourceContents) and contents.text.strip()

            templates = {t.uri_template for t in await client.list_resource_templates()}
            assert "demo://resource/dynamic/text/{resourceId}" in templates
            (dynamic,) = (await client.read_resource("demo://resource/dynamic/text/3")).contents
            assert isinstance(dynamic, s.TextResourceContents) and dynamic.text

            prompts = {p.name: p for p in await client.list_prompts()}
            assert {"simple-prompt", "args-prompt", "completable-prompt"} <= prompts.keys()
            assert [a.name for a in prompts["args-prompt"].arguments or []] == ["city", "state"]
            simple = await client.get_prompt("simple-prompt")
            assert simple.messages and simple.messages[0].role == "user"
            weather = await client.get_prompt("args-prompt", {"city": "Lyon", "state": "Rhône"})
            assert weather.messages[0].content == s.TextContent(text="What's weather in Lyon, Rhône?")
            promote = await client.get_prompt("completable-prompt", {"department": "Sales", "name": "Eve"})
            assert promote.messages[0].content == s.TextContent(
                text="Please promote Eve to the head of the Sales team."
            )

            ref = {"type": "ref/prompt", "name": "completable-prompt"}
            departments = await client.complete(ref, "department", "S")
            assert departments.completion.values == ["Sales", "Support"]
            members = await client.complete(ref, "name", "", context_arguments={"department": "Engineering"})
            assert members.completion.values == ["Alice", "Bob", "Charlie"]


async def test_everything_tools() -> None:
    with trio.fail_after(60):
        async with everything_client(Recorder(), roots=False) as client:
            assert text_of(await client.call_tool("echo", {"message": "hi there"})) == "Echo: hi there"
            summed = await client.call_tool("get-sum", {"a": 19, "b": 23})
            assert "42" in text_of(summed)
            weather = await client.call_tool("get-structured-content", {"location": "Chicago"})
            assert weather.structured_content == {
                "temperature": 36,
                "conditions": "Light rain / drizzle",
                "humidity": 82,
            }
            assert json.loads(text_of(weather)) == weather.structured_content


async def test_everything_server_requests_reach_our_handlers() -> None:
    handlers = Recorder(sampled_text="sampled by trimcp")
    with trio.fail_after(60):
        async with everything_client(handlers, roots=True) as client:
            assert "get-roots-list" in {t.name for t in await client.list_tools()}
            sampled = await client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})
            assert "sampled by trimcp" in text_of(sampled)
            assert "trimcp-test-model" in text_of(sampled)
            (params,) = handlers.sampling
            assert params.max_tokens == 20 and params.temperature == 0.7
            assert params.messages[0].content == s.TextContent(text="Resource trigger-sampling-request context: say hi")

            elicited = await client.call_tool("trigger-elicitation-request")
            text = text_of(elicited)
            assert "- Name: Ada Lovelace" in text
            assert "- Agreed to terms: true" in text
            assert "- Favorite Integer: 7" in text
            (form,) = handlers.elicitation
            assert isinstance(form, s.ElicitRequestFormParams)
            assert form.requested_schema["required"] == ["name"]

            listed = await client.call_tool("get-roots-list")
            assert "trimcp-project" in text_of(listed)
            assert "file:///work/trimcp-project" in text_of(listed)
            assert handlers.roots_asked >= 1
