"""The host's tool layer over the pool: names, resolve, batches, output validation.

In virtual time (``autojump_clock``) against real in-process trimcp ``Server``s reached
through a transport kind registered for the test (the pattern of test_host_pool.py).
Every server end is wrapped in a ``Spy`` that records the methods the server receives
and can add an ``outputSchema`` to what ``tools/list`` answers, so a server can break
its own schema (trimcp's ``Server`` checks its output, as it should).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from trimcp import MessageStream, TransportOptions, register_transport
from trimcp._sansio import jsonrpc
from trimcp._sansio.schema import Tool, ToolAnnotations
from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.stream import NO_META, Received, SendMeta
from trimcp._trio.transports import registry
from trimcp._trio.transports.registry import Target
from trimcp.config import RemoteServerConfig
from trimcp.host import (
    BatchOutcome,
    HostTool,
    OutputValidationError,
    ServerState,
    ToolsChanged,
    UnknownTool,
    classify_tool,
    mcp_tool_name,
    open_pool,
)
from trimcp.server import Context, Server, serve_stream

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: The first revision with outputSchema, and the stateless era.
REVISIONS = ["2025-06-18", "2026-07-28"]
UUID = "3f2b8c1e-9d4a-4e7b-a6c5-1b2d3e4f5a6b"


class Spy:
    """A server end that records what the server receives and patches its tool lists."""

    def __init__(self, inner: MessageStream, methods: list[str], schemas: dict[str, Any]) -> None:
        self._inner = inner
        self._methods = methods
        self._schemas = schemas

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        if isinstance(message, jsonrpc.Response) and isinstance(message.result.get("tools"), list):
            tools = [
                {**t, "outputSchema": self._schemas[t["name"]]} if t["name"] in self._schemas else t
                for t in message.result["tools"]
            ]
            message = jsonrpc.Response(message.id, {**message.result, "tools": tools})
        await self._inner.send(message, meta)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        if isinstance(item, Received):
            payload = json.loads(item.data)
            if isinstance(payload, dict) and "method" in payload and "id" in payload:
                self._methods.append(payload["method"])
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class Fleet:
    """In-process servers by config name; ``opens`` counts connects per server."""

    def __init__(self) -> None:
        self.servers: dict[str, Server] = {}
        self.methods: dict[str, list[str]] = {}
        self.schemas: dict[str, dict[str, Any]] = {}
        self.opens: dict[str, int] = {}
        #: the server ends of live connections, to kill them
        self.live: dict[str, MessageStream] = {}
        self._by_index: list[str] = []

    def add(self, name: str, server: Server | None = None) -> Server:
        self._by_index.append(name)
        self.methods[name] = []
        self.schemas.setdefault(name, {})
        return self.servers.setdefault(name, server or Server(name, "1"))

    def entry(self, name: str) -> RemoteServerConfig:
        return RemoteServerConfig(name=name, transport="http", url=f"http://fleet.invalid/{self._by_index.index(name)}")

    @asynccontextmanager
    async def __call__(self, target: Target, options: TransportOptions) -> AsyncIterator[MessageStream]:
        name = self._by_index[int(str(target).rsplit("/", 1)[-1])]
        self.opens[name] = self.opens.get(name, 0) + 1
        await trio.sleep(0.1)
        client_end, server_end = memory_stream_pair()
        spy = Spy(server_end, self.methods[name], self.schemas[name])
        async with trio.open_nursery() as nursery:
            server = self.servers[name]
            await nursery.start(lambda task_status: serve_stream(server, spy, task_status=task_status))  # type: ignore[arg-type]
            self.live[name] = server_end
            try:
                yield client_end
            finally:
                await client_end.aclose()
                nursery.cancel_scope.cancel()

    def pool(self, **kw: Any) -> Any:
        kw.setdefault("random", lambda: 0.0)
        options = {name: {"transport": "pooltest"} for name in self.servers}
        return open_pool({n: self.entry(n) for n in self.servers}, server_options=options, **kw)


@pytest.fixture
def fleet(monkeypatch: pytest.MonkeyPatch) -> Fleet:
    monkeypatch.setattr(registry, "TRANSPORTS", registry.TRANSPORTS.copy())
    fleet = Fleet()
    register_transport("pooltest", fleet, schemes=("pooltest",))
    return fleet


async def tools_changed(events: Any, match: Any) -> None:
    """Wait for the pool to publish a tool list that ``match``es (the connect's comes first)."""
    with trio.fail_after(5):
        async for event in events:
            if isinstance(event, ToolsChanged) and match(event.tools):
                return


async def _text(ctx: Context) -> str:
    return "ok"


def simple(name: str, *tools: str, description: str | None = None) -> Server:
    server = Server(name, "1")
    for tool in tools:
        server.add_tool(_text, tool, description=description)
    return server


# ------------------------------------------------------------------ entry points


def test_the_public_entry_points_are_the_pure_cores() -> None:
    assert mcp_tool_name("github", "search_code") == "mcp__github__search_code"
    long = mcp_tool_name(UUID, "x" * 40)
    assert NAME.match(long) and len(long) == 64
    assert classify_tool({"name": "read_file"}) == "read"
    assert classify_tool({"name": "delete_file", "annotations": {"readOnlyHint": True}}) == "read"
    assert classify_tool(Tool(name="search_code", input_schema={})) == "search"
    assert classify_tool(Tool(name="frobnicate", input_schema={})) == "write"
    assert (
        classify_tool(Tool(name="get_x", input_schema={}, annotations=ToolAnnotations(destructive_hint=True)))
        == "write"
    )


# ------------------------------------------------------------------ tools() and resolve


async def test_tools_names_every_connected_servers_tools_and_resolves_them_back(
    fleet: Fleet, autojump_clock: Any
) -> None:
    long_tool = "fetch_the_repository_contributors_statistics_weekly"
    fleet.add(UUID, simple(UUID, long_tool, "read_file"))
    fleet.add("my.server", simple("my.server", "get"))
    fleet.add("my_server", simple("my_server", "get"))
    fleet.add("a__b", simple("a__b", "c__d"))
    fleet.add("idle", simple("idle", "get"))
    async with fleet.pool() as pool:
        assert await pool.tools() == []  # nothing connected, and nothing is connected for it
        assert fleet.opens == {}
        for name in (UUID, "my.server", "my_server", "a__b"):
            await pool.session(name)
        tools = await pool.tools()
        assert "idle" not in fleet.opens
        assert [(t.server, t.tool.name) for t in tools] == [
            (UUID, long_tool),
            (UUID, "read_file"),
            ("my.server", "get"),
            ("my_server", "get"),
            ("a__b", "c__d"),
        ]
        names = [t.name for t in tools]
        assert len(set(names)) == len(names)
        assert all(NAME.match(n) for n in names)
        # The 72-character plain form is shortened to fit, and still resolves back.
        assert len(f"mcp__{UUID}__{long_tool}") > 64 and len(names[0]) <= 64
        # Two servers whose names normalise alike get distinct names.
        assert names[2] != names[3]
        for tool in tools:
            assert pool.resolve(tool.name) == (tool.server, tool.tool.name)
        assert pool.resolve(names[4]) == ("a__b", "c__d")  # never split on "__"
        assert tools[1].kind == "read" and tools[1].read_only and tools[1].concurrent
        # Stable while the set does not change.
        assert [t.name for t in await pool.tools()] == names
        # connect=True brings in the rest.
        everything = await pool.tools(connect=True)
        assert fleet.opens["idle"] == 1
        assert [t.server for t in everything][-1] == "idle"


async def test_unknown_names_are_lookup_errors_counting_the_known_ones(fleet: Fleet, autojump_clock: Any) -> None:
    fleet.add("few", simple("few", "one", "two"))
    fleet.add("many", simple("many", *(f"tool{i}" for i in range(20))))
    async with fleet.pool() as pool:
        with pytest.raises(UnknownTool, match="no tools are known"):
            pool.resolve("mcp__few__one")
        await pool.session("few")
        await pool.tools()
        with pytest.raises(LookupError, match=r"known: mcp__few__one, mcp__few__two"):
            pool.resolve("mcp__few__three")
        await pool.session("many")
        with pytest.raises(UnknownTool, match=r"\(22 tools are known\)$"):
            pool.resolve("mcp__few__three")
        with pytest.raises(UnknownTool):
            await pool.call("mcp__few__three", {})
        assert (await pool.call("mcp__many__tool7", {})).text == "ok"


async def test_descriptions_are_capped_with_the_marker(fleet: Fleet, autojump_clock: Any) -> None:
    fleet.add("openapi", simple("openapi", "get_thing", description="word " * 10_000))
    async with fleet.pool() as pool:
        await pool.session("openapi")
        (tool,) = await pool.tools()
        assert tool.description is not None and 2040 <= len(tool.description) <= 2048
        assert tool.description.endswith("… [truncated]")
        (short,) = await pool.tools(description_cap=100, marker="[cut]")
        assert short.description is not None and len(short.description) <= 100 and short.description.endswith("[cut]")
        assert tool.tool.description == "word " * 10_000  # the Tool itself is untouched


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_changed_list_renames_only_when_the_set_changes_and_old_names_resolve_while_reconnecting(
    fleet: Fleet, autojump_clock: Any, revision: str
) -> None:
    server = fleet.add("srv", simple("srv", "get"))
    async with fleet.pool(client_options={"revision": revision}) as pool, pool.events() as events:
        await pool.session("srv")
        await trio.sleep(1)  # the stateless era opens its listen stream once connected
        (before,) = await pool.tools()
        server.add_tool(_text, "list_more")
        await server.notify_tools_list_changed()
        await tools_changed(events, lambda tools: len(tools) == 2)
        after = await pool.tools()
        assert [t.name for t in after] == ["mcp__srv__get", "mcp__srv__list_more"]
        assert after[0].name == before.name
        # The server goes away: its tools leave tools(), but a name the model was shown
        # still resolves (the call reconnects).
        await fleet.live.pop("srv").aclose()
        with trio.fail_after(5):
            while pool.status()["srv"].state is ServerState.CONNECTED:
                await trio.sleep(0.01)
        assert pool.resolve("mcp__srv__list_more") == ("srv", "list_more")
        assert (await pool.call("mcp__srv__list_more", {})).text == "ok"


async def test_refresh_lists_again_and_nothing_else_does(fleet: Fleet, autojump_clock: Any) -> None:
    server = fleet.add("srv", simple("srv", "get"))
    async with fleet.pool() as pool:
        await pool.session("srv")
        server.add_tool(_text, "search")  # no list_changed: the pool cannot know
        assert [t.tool.name for t in await pool.tools()] == ["get"]
        assert fleet.methods["srv"].count("tools/list") == 1
        assert [t.tool.name for t in await pool.tools(refresh=True)] == ["get", "search"]
        assert fleet.methods["srv"].count("tools/list") == 2
        assert pool.resolve("mcp__srv__search") == ("srv", "search")


def test_json_paths_quote_keys_that_are_not_identifiers() -> None:
    from trimcp.host.outputs import json_path

    assert json_path([]) == "$"
    assert json_path(["a", 0, "b_1"]) == "$.a[0].b_1"
    assert json_path(["a.b", 2, "c d", '"']) == '$["a.b"][2]["c d"]["\\""]'


# ------------------------------------------------------------------ batches


def timed_server(log: list[tuple[str, str, float]]) -> Server:
    server = Server("timed", "1")

    def add(name: str, *, read_only: bool | None = None, seconds: float = 1.0) -> None:
        async def fn(ctx: Context, tag: str = "") -> str:
            log.append(("start", f"{name}{tag}", trio.current_time()))
            await trio.sleep(seconds)
            log.append(("end", f"{name}{tag}", trio.current_time()))
            return f"{name}{tag}"

        annotations = None if read_only is None else {"readOnlyHint": read_only}
        server.add_tool(fn, name, annotations=annotations)

    add("search_docs")  # a search by its name
    add("read_file")  # a read by its name
    add("frob", read_only=True)  # a read by its annotation only
    add("write_file")  # a write by its name
    add("get_and_burn", read_only=False)  # a write by its annotation, whatever its name says
    return server


async def test_a_batch_runs_consecutive_reads_together_and_each_write_alone_in_order(
    fleet: Fleet, autojump_clock: Any
) -> None:
    log: list[tuple[str, str, float]] = []
    fleet.add("timed", timed_server(log))
    async with fleet.pool() as pool:
        await pool.session("timed")
        names = {t.tool.name: t.name for t in await pool.tools()}
        calls = [
            (names["search_docs"], {}),
            (names["read_file"], {}),
            (names["frob"], {}),
            (names["write_file"], {"tag": "1"}),
            (names["read_file"], {"tag": "2"}),
            (names["get_and_burn"], {}),
            (names["write_file"], {"tag": "3"}),
            (names["frob"], {"tag": "4"}),
            (names["search_docs"], {"tag": "5"}),
        ]
        t0 = trio.current_time()
        outcomes = await pool.call_batch(calls)
        took = trio.current_time() - t0
    assert [o.unwrap().text for o in outcomes] == [
        "search_docs",
        "read_file",
        "frob",
        "write_file1",
        "read_file2",
        "get_and_burn",
        "write_file3",
        "frob4",
        "search_docs5",
    ]
    starts = {what: round(at - t0) for kind, what, at in log if kind == "start"}
    ends = {what: round(at - t0) for kind, what, at in log if kind == "end"}
    # Six groups of one second each: [3 reads] [write] [read] [write] [write] [2 reads].
    assert starts == {
        "search_docs": 0,
        "read_file": 0,
        "frob": 0,
        "write_file1": 1,
        "read_file2": 2,
        "get_and_burn": 3,
        "write_file3": 4,
        "frob4": 5,
        "search_docs5": 5,
    }
    assert ends["write_file1"] == 2 and ends["search_docs5"] == 6
    assert 6 <= took < 6.5


async def test_a_batch_bounds_its_reads_and_keeps_failures_as_values(fleet: Fleet, autojump_clock: Any) -> None:
    log: list[tuple[str, str, float]] = []
    fleet.add("timed", timed_server(log))
    async with fleet.pool(validate_output="raise") as pool:
        await pool.session("timed")
        read = mcp_tool_name("timed", "read_file")
        calls: list[tuple[str, Any]] = [(read, {"tag": str(i)}) for i in range(5)]
        calls.insert(2, ("mcp__timed__nope", {}))
        calls.insert(4, (read, {"tag": 7}))  # the server says the arguments are wrong: a result
        outcomes = await pool.call_batch(calls, max_concurrency=2)
    assert len(outcomes) == 7
    assert all(isinstance(o, BatchOutcome) for o in outcomes)
    missing = outcomes[2]
    assert not missing.ok and isinstance(missing.error, UnknownTool) and missing.result is None
    with pytest.raises(UnknownTool):
        missing.unwrap()
    assert outcomes[4].ok and outcomes[4].result is not None and outcomes[4].result.is_error
    assert [o.unwrap().text for i, o in enumerate(outcomes) if i not in (2, 4)] == [f"read_file{i}" for i in range(5)]
    running = peak = 0
    for kind, _, _ in sorted(log, key=lambda e: (e[2], e[0] == "start")):
        running += 1 if kind == "start" else -1
        peak = max(peak, running)
    assert peak == 2
    with pytest.raises(ValueError):
        await pool.call_batch([], max_concurrency=0)


# ------------------------------------------------------------------ output validation


SCHEMA = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["temperature"],
}


def weather_server(answers: dict[str, Any]) -> Server:
    """``weather`` returns whatever ``answers["weather"]`` is, as a whole result."""
    server = Server("weather", "1")

    async def weather(ctx: Context) -> dict[str, Any]:
        value: dict[str, Any] = answers["weather"]
        return value

    server.add_tool(weather, "get_weather")
    return server


def result(structured: Any = None, *, is_error: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(structured)}]}
    if structured is not None:
        out["structuredContent"] = structured
    if is_error:
        out["isError"] = True
    return out


@pytest.mark.parametrize("revision", REVISIONS)
async def test_output_is_checked_against_the_cached_schema_with_no_extra_listing(
    fleet: Fleet, autojump_clock: Any, revision: str, caplog: pytest.LogCaptureFixture
) -> None:
    answers = {"weather": result({"temperature": 21.5, "tags": ["sunny"]})}
    fleet.add("weather", weather_server(answers))
    fleet.schemas["weather"]["get_weather"] = SCHEMA
    async with fleet.pool(client_options={"revision": revision}) as pool:
        await pool.session("weather")
        await trio.sleep(1)  # the stateless era opens its listen stream once connected
        name = mcp_tool_name("weather", "get_weather")
        before = len(fleet.methods["weather"])
        for _ in range(5):
            assert (await pool.call(name, {})).structured_content["temperature"] == 21.5
        assert fleet.methods["weather"].count("tools/list") == 1
        assert fleet.methods["weather"][before:] == ["tools/call"] * 5
        assert pool._outputs.compiled == 1

        # "warn" (the default): logged once per tool, the result still returned.
        answers["weather"] = result({"temperature": "warm", "tags": ["sunny", 3]})
        with caplog.at_level(logging.WARNING, logger="trimcp.host"):
            for _ in range(3):
                got = await pool.call(name, {})
                assert got.structured_content["temperature"] == "warm"
        warnings = [r for r in caplog.records if "outputSchema" in r.getMessage()]
        assert len(warnings) == 1 and "$.temperature" in warnings[0].getMessage()

        # "raise": the path and the message.
        with pytest.raises(OutputValidationError) as raised:
            await pool.call(name, {}, validate_output="raise")
        assert raised.value.path == "$.temperature" and "'warm' is not of type 'number'" in raised.value.reason
        assert raised.value.result.structured_content["temperature"] == "warm"
        answers["weather"] = result({"temperature": 3, "tags": ["a", 3]})
        with pytest.raises(OutputValidationError, match=r"at \$\.tags\[1\]: 3 is not of type 'string'"):
            await pool.call(name, {}, validate_output="raise")

        # "ignore": nothing is checked.
        assert (await pool.call(name, {}, validate_output="ignore")).structured_content["tags"] == ["a", 3]

        # No structuredContent where a schema is declared: a mismatch (spec 2025-06-18
        # server/tools "Output Schema": servers MUST provide structured results that conform).
        answers["weather"] = result(None)
        with pytest.raises(OutputValidationError, match="no structuredContent") as raised:
            await pool.call(name, {}, validate_output="raise")
        assert raised.value.path == "$"

        # An error result is never checked.
        answers["weather"] = result(None, is_error=True)
        assert (await pool.call(name, {}, validate_output="raise")).is_error
        with pytest.raises(ValueError):
            await pool.call(name, {}, validate_output="loudly")
        assert fleet.methods["weather"].count("tools/list") == 1
        assert pool._outputs.compiled == 1


@pytest.mark.parametrize("revision", REVISIONS)
async def test_validators_are_dropped_when_the_list_changes_and_the_draft_is_the_schemas(
    fleet: Fleet, autojump_clock: Any, revision: str
) -> None:
    answers = {"weather": result({"pair": ["a", "b"]})}
    server = fleet.add("weather", weather_server(answers))
    # Draft 7's tuple form of ``items``: under 2020-12 the schema itself would be invalid.
    fleet.schemas["weather"]["get_weather"] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
    }
    async with (
        fleet.pool(validate_output="raise", client_options={"revision": revision}) as pool,
        pool.events() as events,
    ):
        await pool.session("weather")
        name = mcp_tool_name("weather", "get_weather")
        with pytest.raises(OutputValidationError) as raised:
            await pool.call(name, {})
        assert raised.value.path == "$.pair[1]"
        assert pool._outputs.compiled == 1
        await trio.sleep(1)  # the stateless era opens its listen stream once connected

        # The list changes (the schema now allows any pair): the old validator is dropped.
        fleet.schemas["weather"]["get_weather"] = {"type": "object"}
        await server.notify_tools_list_changed()
        await tools_changed(events, lambda tools: tools[0].output_schema == {"type": "object"})
        assert (await pool.call(name, {})).structured_content == {"pair": ["a", "b"]}
        assert pool._outputs.compiled == 2


async def test_an_unusable_schema_accepts_anything_and_a_tool_without_schema_is_not_checked(
    fleet: Fleet, autojump_clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    answers = {"weather": result({"temperature": "warm"})}
    fleet.add("weather", weather_server(answers))
    fleet.schemas["weather"]["get_weather"] = {"type": "no-such-type"}
    fleet.add("plain", weather_server(answers))
    async with fleet.pool(validate_output="raise") as pool:
        await pool.session("weather")
        await pool.session("plain")
        with caplog.at_level(logging.WARNING, logger="trimcp.host"):
            for _ in range(2):
                await pool.call(mcp_tool_name("weather", "get_weather"), {})
        assert len([r for r in caplog.records if "unusable" in r.getMessage()]) == 1
        assert (await pool.call(mcp_tool_name("plain", "get_weather"), {})).structured_content == {
            "temperature": "warm"
        }


def test_host_tool_is_frozen() -> None:
    tool = Tool(name="t", input_schema={})
    from trimcp._sansio.host.classify import tool_traits

    host = HostTool(name="mcp__s__t", server="s", tool=tool, kind="write", description=None, traits=tool_traits(tool))
    with pytest.raises(AttributeError):
        host.name = "other"  # type: ignore[misc]
    assert not host.read_only and not host.concurrent


def test_app_only_tools_stay_out_of_the_agents_list() -> None:
    # MCP Apps: a host MUST NOT put a tool whose visibility leaves out "model" in the
    # agent's tool list; tools with no link, or visible to both, stay.
    from trimcp.host.tools import ToolCatalog

    def tool(name: str, meta: dict[str, Any] | None = None) -> Tool:
        return Tool(name=name, input_schema={"type": "object"}, meta=meta)

    view = {"ui": {"resourceUri": "ui://s/v"}}
    snapshot = [
        (
            "srv",
            (
                tool("plain"),
                tool("both", view),
                tool("refresh", {"ui": {**view["ui"], "visibility": ["app"]}}),
                tool("model", {"ui": {**view["ui"], "visibility": ["model"]}}),
            ),
        )
    ]
    catalog = ToolCatalog()
    assert sorted(t.tool.name for t in catalog.tools(snapshot)) == ["both", "model", "plain"]
    with pytest.raises(UnknownTool):
        catalog.lookup(snapshot, "mcp__srv__refresh")
