"""The host's elicitation flow (trimcp.host.Elicitation): hooks, the UI one prompt at a time,
result hooks, validation, cancellation, URL mode and the -32042 retry, the capabilities it
declares; sampling/roots handler types and server logs to ``logging``.

The flow against the scripted fake server runs in virtual time (``autojump_clock``); the end-to-end
tests run real peers (server-everything from npm, a server on the ``mcp`` SDK 2.x) in both eras.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import attrs
import peers
import pytest
import trio
from fake_server import connected, memory_peer

from trimcp import Handlers, McpError, RequestTimeout, StdioOptions, Timeouts, open_client
from trimcp import schema as s
from trimcp._sansio import jsonrpc
from trimcp.config import StdioServerConfig
from trimcp.host import Elicitation, ElicitationContext, log_to_python, open_pool

FORM = {
    "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
}


def form(message: str = "Name?") -> s.ElicitRequestFormParams:
    return s.ElicitRequestFormParams(message=message, requested_schema=FORM["requestedSchema"])


def url_params(eid: str = "e1", url: str = "https://example.com/auth") -> s.ElicitRequestURLParams:
    return s.ElicitRequestURLParams(message="Sign in", url=url, elicitation_id=eid)


@attrs.frozen
class Checked:
    content: Mapping[str, Any]
    errors: Mapping[str, str]


async def name_required(schema: Mapping[str, Any], content: Mapping[str, Any]) -> Checked:
    """A stand-in validator: ``name`` must be a non-empty string; it is stripped."""
    name = content.get("name")
    if not isinstance(name, str) or not name.strip():
        return Checked(content, {"name": "required"})
    return Checked({**content, "name": name.strip()}, {})


# ---------------------------------------------------------------- the flow alone


async def test_first_hook_that_answers_wins_and_the_ui_is_not_asked() -> None:
    asked: list[str] = []

    async def abstain(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult | None:
        asked.append("abstain")
        return None

    async def answer(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult | None:
        asked.append(f"answer:{ctx.server}")
        return s.ElicitResult(action="accept", content={"name": "Ada"})

    async def never(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult | None:
        raise AssertionError("a later hook ran")

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        raise AssertionError("the UI ran")

    flow = Elicitation(hooks=[abstain, answer, never], ui=ui)
    result = await flow.for_server("alpha").handler(form())
    assert result == s.ElicitResult(action="accept", content={"name": "Ada"})
    assert asked == ["abstain", "answer:alpha"]


async def test_no_hook_and_no_ui_declines() -> None:
    assert (await Elicitation().handler(form())).action == "decline"


async def test_result_hooks_change_the_answer_in_order() -> None:
    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        return s.ElicitResult(action="accept", content={"name": "ada"})

    async def upper(params: Any, ctx: Any, result: s.ElicitResult) -> s.ElicitResult | None:
        return s.ElicitResult(action="accept", content={"name": result.content["name"].upper()})  # type: ignore[index]

    async def keep(params: Any, ctx: Any, result: s.ElicitResult) -> s.ElicitResult | None:
        return None

    async def refuse_bob(params: Any, ctx: Any, result: s.ElicitResult) -> s.ElicitResult | None:
        return s.ElicitResult(action="decline") if result.content == {"name": "BOB"} else None

    flow = Elicitation(ui=ui, result_hooks=[upper, keep, refuse_bob])
    assert await flow.handler(form()) == s.ElicitResult(action="accept", content={"name": "ADA"})


async def test_invalid_ui_content_is_asked_again_with_the_errors_then_cancelled() -> None:
    seen: list[ElicitationContext] = []
    answers = iter([{"name": " "}, {"name": "  Ada "}])

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        seen.append(ctx)
        return s.ElicitResult(action="accept", content=next(answers))

    flow = Elicitation(ui=ui, validate=name_required)
    assert await flow.handler(form()) == s.ElicitResult(action="accept", content={"name": "Ada"})
    assert [(c.attempt, dict(c.errors), c.previous) for c in seen] == [
        (1, {}, None),
        (2, {"name": "required"}, {"name": " "}),
    ]

    async def stubborn(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        seen.append(ctx)
        return s.ElicitResult(action="accept", content={})

    seen.clear()
    flow = Elicitation(ui=stubborn, validate=name_required, max_attempts=2)
    assert await flow.handler(form()) == s.ElicitResult(action="cancel")
    assert len(seen) == 2
    # A decline is never validated.

    async def decline(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        return s.ElicitResult(action="decline")

    assert (await Elicitation(ui=decline, validate=name_required).handler(form())).action == "decline"


async def test_by_default_the_flow_validates_with_validate_form_async() -> None:
    # No validate= given: validate_form_async coerces, applies defaults and re-asks.
    schema = {
        "type": "object",
        "required": ["age"],
        "properties": {
            "age": {"type": "integer", "minimum": 0},
            "newsletter": {"type": "boolean", "default": False},
        },
    }
    params = s.ElicitRequestFormParams(message="Age?", requested_schema=schema)
    answers = iter([{"age": "-3"}, {"age": "42"}])
    errors: list[dict[str, str]] = []

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        errors.append(dict(ctx.errors))
        return s.ElicitResult(action="accept", content=next(answers))

    result = await Elicitation(ui=ui).handler(params)
    assert result == s.ElicitResult(action="accept", content={"age": 42, "newsletter": False})
    assert errors[0] == {} and list(errors[1]) == ["age"] and "0" in errors[1]["age"]


async def test_an_invalid_hook_answer_is_not_sent_the_ui_gets_its_errors() -> None:
    async def bad_hook(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult | None:
        return s.ElicitResult(action="accept", content={"name": ""})

    got: list[ElicitationContext] = []

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        got.append(ctx)
        return s.ElicitResult(action="accept", content={"name": "Grace"})

    flow = Elicitation(hooks=[bad_hook], ui=ui, validate=name_required)
    assert await flow.handler(form()) == s.ElicitResult(action="accept", content={"name": "Grace"})
    assert dict(got[0].errors) == {"name": "required"} and got[0].previous == {"name": ""}
    # Without a UI the invalid content still never reaches the server.
    assert (await Elicitation(hooks=[bad_hook], validate=name_required).handler(form())).action == "decline"


async def test_one_prompt_at_a_time_in_arrival_order_across_servers(autojump_clock: Any) -> None:
    log: list[str] = []

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        log.append(f"open {ctx.server}:{params.message}")
        await trio.sleep(1)
        log.append(f"close {ctx.server}:{params.message}")
        return s.ElicitResult(action="accept", content={"name": params.message})

    flow = Elicitation(ui=ui)
    results: dict[str, s.ElicitResult] = {}

    async def ask(server: str, message: str) -> None:
        results[message] = await flow.for_server(server).handler(form(message))

    async with trio.open_nursery() as nursery:
        for i, server in enumerate(["a", "b", "a", "c"]):
            nursery.start_soon(ask, server, f"q{i}")
            await trio.sleep(0.01)  # arrival order
    assert log == [f"{edge} {srv}:q{i}" for i, srv in enumerate("abac") for edge in ("open", "close")]
    assert trio.current_time() == pytest.approx(4.0)  # one after another (together: ~1.03)
    assert {m: r.content for m, r in results.items()} == {f"q{i}": {"name": f"q{i}"} for i in range(4)}


async def test_timeout_cancels_the_prompt(autojump_clock: Any) -> None:
    cancelled = False

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        nonlocal cancelled
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled = True
            raise
        raise AssertionError("unreachable")

    flow = Elicitation(ui=ui, timeout=30)
    assert (await flow.handler(form())).action == "cancel"
    assert cancelled and trio.current_time() == pytest.approx(30)


async def test_url_mode_refused_unless_enabled() -> None:
    with pytest.raises(McpError) as info:
        await Elicitation().handler(url_params())
    assert info.value.code == jsonrpc.INVALID_PARAMS


async def test_url_mode_opens_replies_accept_and_waits_for_completion(autojump_clock: Any) -> None:
    opened: list[str] = []

    async def open_url(url: str) -> None:
        opened.append(url)

    flow = Elicitation(url=True, open_url=open_url, complete_timeout=60)
    one = flow.for_server("s1")
    assert await one.handler(url_params("e1")) == s.ElicitResult(action="accept")
    assert opened == ["https://example.com/auth"]
    one.completed("nobody-asked")  # unknown ids are ignored
    flow.completed("e1", server="s2")  # another server's id of the same name: not ours
    assert await flow.wait_complete("e1", server="s1", timeout=5) is False
    assert trio.current_time() == pytest.approx(5)

    async def complete_later() -> None:
        await trio.sleep(2)
        one.completed("e1")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(complete_later)
        assert await flow.wait_complete("e1", server="s1") is True
    assert trio.current_time() == pytest.approx(7)
    assert await flow.wait_complete("e1", server="s1") is False  # already completed: forgotten

    async def no(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        return s.ElicitResult(action="decline")

    opened.clear()
    assert (await Elicitation(url=True, open_url=open_url, ui=no).handler(url_params("e2"))).action == "decline"
    assert opened == []


# ---------------------------------------------------------------- through a session


async def test_capabilities_are_minimal_for_form_and_list_both_modes_for_url() -> None:
    flow = Elicitation()
    async with connected(**flow.client_options()) as (_, peer):
        assert peer.initialize["params"]["capabilities"] == {"elicitation": {}}
    async with connected(**Elicitation(url=True).client_options()) as (_, peer):
        assert peer.initialize["params"]["capabilities"] == {"elicitation": {"form": {}, "url": {}}}
    stream, _ = memory_peer()
    with pytest.raises(ValueError, match="elicitation_modes"):
        async with open_client(stream, handlers=Handlers(elicitation=flow.handler, elicitation_modes=("forms",))):
            pass


async def test_the_servers_cancellation_cancels_the_prompt_and_nothing_is_answered(autojump_clock: Any) -> None:
    state: dict[str, Any] = {"started": trio.Event(), "cancelled": False}

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        state["started"].set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            state["cancelled"] = True
            raise
        raise AssertionError("unreachable")

    with trio.fail_after(10):
        async with connected(**Elicitation(ui=ui).client_options()) as (_, peer):
            await peer.send({"id": 5, "method": "elicitation/create", "params": FORM})
            await state["started"].wait()
            await peer.notify("notifications/cancelled", {"requestId": 5, "reason": "user left"})
            await peer.send({"id": 6, "method": "ping"})
            assert await peer.recv() == {"jsonrpc": "2.0", "id": 6, "result": {}}  # no answer to 5
            assert state["cancelled"]


async def test_completion_notification_reaches_the_flow(autojump_clock: Any) -> None:
    async def open_url(url: str) -> None:
        pass

    flow = Elicitation(url=True, open_url=open_url)
    with trio.fail_after(10):
        async with connected(**flow.client_options("srv")) as (_, peer):
            await peer.send(
                {
                    "id": 1,
                    "method": "elicitation/create",
                    "params": {
                        "mode": "url",
                        "message": "Sign in",
                        "url": "https://example.com/x",
                        "elicitationId": "abc",
                    },
                }
            )
            assert await peer.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"action": "accept"}}
            await peer.notify("notifications/elicitation/complete", {"elicitationId": "abc"})
            assert await flow.wait_complete("abc", server="srv", timeout=5) is True
            assert trio.current_time() < 1


async def _serve_tool_calls(peer: Any, answers: list[dict[str, Any]], seen: list[dict[str, Any]]) -> None:
    for answer in answers:
        request = await peer.expect("tools/call")
        seen.append(request)
        await peer.send({"id": request["id"], **answer})


URL_REQUIRED = {
    "error": {
        "code": -32042,
        "message": "needs auth",
        "data": {
            "elicitations": [
                {"mode": "url", "elicitationId": "p1", "url": "https://example.com/p1", "message": "Authorize"},
            ]
        },
    }
}
OK = {"result": {"content": [{"type": "text", "text": "done"}]}}


async def test_url_elicitation_required_is_elicited_completed_and_retried_once(autojump_clock: Any) -> None:
    opened: list[str] = []
    flow = Elicitation(url=True, complete_timeout=100)

    async def open_url(url: str) -> None:
        opened.append(url)
        flow.completed("p1", server=None)  # the server would send the notification

    flow.open_url = open_url
    seen: list[dict[str, Any]] = []
    with trio.fail_after(10):
        async with connected(**flow.client_options()) as (client, peer), trio.open_nursery() as nursery:
            nursery.start_soon(_serve_tool_calls, peer, [URL_REQUIRED, OK], seen)
            result = await client.call_tool("secret", {"q": 1})
    assert result.content == [s.TextContent(text="done")]
    assert opened == ["https://example.com/p1"]
    assert [r["params"]["arguments"] for r in seen] == [{"q": 1}, {"q": 1}]
    assert trio.current_time() < 1  # the completion, not the bound, ended the wait


async def test_a_second_refusal_is_raised_and_a_declined_one_is_not_retried(autojump_clock: Any) -> None:
    async def open_url(url: str) -> None:
        pass

    flow = Elicitation(url=True, open_url=open_url, complete_timeout=7)
    seen: list[dict[str, Any]] = []
    with trio.fail_after(60):
        async with connected(**flow.client_options()) as (client, peer), trio.open_nursery() as nursery:
            nursery.start_soon(_serve_tool_calls, peer, [URL_REQUIRED, URL_REQUIRED], seen)
            with pytest.raises(McpError) as info:
                await client.call_tool("secret")
    assert info.value.code == jsonrpc.URL_ELICITATION_REQUIRED and len(seen) == 2
    assert trio.current_time() == pytest.approx(7, abs=0.5)  # no completion came: waited the bound, retried

    async def no(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        return s.ElicitResult(action="decline")

    seen.clear()
    declining = Elicitation(url=True, open_url=open_url, ui=no)
    with trio.fail_after(10):
        async with connected(**declining.client_options()) as (client, peer), trio.open_nursery() as nursery:
            nursery.start_soon(_serve_tool_calls, peer, [URL_REQUIRED], seen)
            with pytest.raises(McpError):
                await client.call_tool("secret")
    assert len(seen) == 1
    # Without url_elicitation (form-only flow) the refusal is simply raised.
    seen.clear()
    with trio.fail_after(10):
        async with connected(**Elicitation().client_options()) as (client, peer), trio.open_nursery() as nursery:
            nursery.start_soon(_serve_tool_calls, peer, [URL_REQUIRED], seen)
            with pytest.raises(McpError):
                await client.call_tool("secret")
    assert len(seen) == 1


# ---------------------------------------------------------------- logs


def test_server_logs_go_to_a_logger_per_server_with_levels_mapped(caplog: pytest.LogCaptureFixture) -> None:
    handle = log_to_python("files")
    with caplog.at_level(logging.DEBUG, logger="trimcp.server"):
        for level, data in [("debug", "d"), ("notice", {"n": 1}), ("warning", "w"), ("emergency", "boom")]:
            handle(s.LoggingMessageNotificationParams(level=level, data=data, logger="db"))  # type: ignore[arg-type]
    got = [(r.name, r.levelno, r.getMessage(), r.__dict__["mcp_level"]) for r in caplog.records]
    assert got == [
        ("trimcp.server.files", logging.DEBUG, "[db] d", "debug"),
        ("trimcp.server.files", 25, '[db] {"n": 1}', "notice"),
        ("trimcp.server.files", logging.WARNING, "[db] w", "warning"),
        ("trimcp.server.files", logging.CRITICAL, "[db] boom", "emergency"),
    ]


# ---------------------------------------------------------------- real peers, both eras


def _sdk() -> list[str]:
    return peers.require(peers.sdk_server_argv(), "the mcp SDK")


def _answer_name(name: str) -> Any:
    async def hook(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult | None:
        assert isinstance(params, s.ElicitRequestFormParams)
        assert params.requested_schema["properties"]["name"]["type"] == "string"
        return s.ElicitResult(action="accept", content={"name": name})

    return hook


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
async def test_mcp_sdk_server_accepts_the_minimal_capability_in_both_eras(revision: str) -> None:
    seen: list[ElicitationContext] = []

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        seen.append(ctx)
        return s.ElicitResult(action="accept", content={"name": "  Ada "})

    flow = Elicitation(ui=ui, validate=name_required)
    with trio.fail_after(60):
        async with open_client(
            _sdk(), stdio=StdioOptions(env=peers.peer_env()), revision=revision, **flow.client_options()
        ) as client:
            result = await client.call_tool("ask_name")
    assert result.content == [s.TextContent(text="hello Ada")]  # validated (stripped) content was sent
    assert len(seen) == 1


async def test_stateless_era_the_requests_deadline_cancels_the_prompt() -> None:
    # 2026-07-28: the elicitation is an inputRequest of the tools/call, answered under that
    # call's deadline; a prompt still open when it passes is cancelled.
    state = {"cancelled": False}

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            state["cancelled"] = True
            raise
        raise AssertionError("unreachable")

    flow = Elicitation(ui=ui)
    with trio.fail_after(60):
        async with open_client(
            _sdk(),
            stdio=StdioOptions(env=peers.peer_env()),
            timeouts=Timeouts(request=1.0),
            revision="2026-07-28",
            **flow.client_options(),
        ) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool("ask_name")
            assert state["cancelled"]
            assert (await client.call_tool("echo", {"text": "still here"})).content == [
                s.TextContent(text="still here")
            ]


async def test_pool_passes_the_flow_and_logs_per_server(caplog: pytest.LogCaptureFixture) -> None:
    argv = _sdk()
    servers = [
        StdioServerConfig(name=n, command=argv[0], args=tuple(argv[1:]), env=peers.peer_env()) for n in ("one", "two")
    ]
    asked: list[str | None] = []

    async def ui(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
        asked.append(ctx.server)
        return s.ElicitResult(action="accept", content={"name": ctx.server})

    with trio.fail_after(60), caplog.at_level(logging.INFO, logger="trimcp.server"):
        # Pinned: under load a dual-era probe can time out and fall back to initialize,
        # which this server then refuses (the stateless era is covered above).
        async with open_pool(
            servers, elicitation=Elicitation(ui=ui), client_options={"revision": "2025-11-25"}
        ) as pool:
            async with trio.open_nursery() as nursery:
                for name in ("one", "two"):
                    nursery.start_soon(pool.call_tool, name, "ask_name")
            assert (await pool.call_tool("two", "ask_name")).content == [s.TextContent(text="hello two")]
            await pool.call_tool("one", "progress", {"steps": 1})
            with trio.move_on_after(5):
                while not any(r.name == "trimcp.server.one" for r in caplog.records):
                    await trio.sleep(0.05)
    assert sorted(asked, key=str) == ["one", "two", "two"]
    logged = [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.name.startswith("trimcp.server")]
    assert ("trimcp.server.one", logging.INFO, "progress: starting 1 steps") in logged


def _everything() -> list[str]:
    return peers.require(peers.everything_stdio_argv(), "@modelcontextprotocol/server-everything (npm)")


async def test_server_everything_form_elicitation_answered_by_a_hook() -> None:
    async def hook(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult | None:
        return s.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True, "integer": 7})

    flow = Elicitation(hooks=[hook])
    with trio.fail_after(60):
        async with open_client(
            _everything(), stdio=StdioOptions(env=peers.peer_env()), **flow.client_options()
        ) as client:
            tools = {t.name for t in await client.list_tools()}
            assert "trigger-elicitation-request" in tools and "trigger-url-elicitation" not in tools
            text = "\n".join(
                c.text
                for c in (await client.call_tool("trigger-elicitation-request")).content
                if isinstance(c, s.TextContent)
            )
    assert "- Name: Ada Lovelace" in text and "- Favorite Integer: 7" in text


async def test_server_everything_url_mode_and_its_32042_error_path() -> None:
    opened: list[str] = []

    async def open_url(url: str) -> None:
        opened.append(url)

    # server-everything sends no completion notification: the retry follows the (short) bound.
    flow = Elicitation(url=True, open_url=open_url, complete_timeout=0.2)
    with trio.fail_after(60):
        async with open_client(
            _everything(), stdio=StdioOptions(env=peers.peer_env()), **flow.client_options()
        ) as client:
            assert "trigger-url-elicitation" in {t.name for t in await client.list_tools()}
            direct = await client.call_tool("trigger-url-elicitation", {"url": "https://example.com/a"})
            via_error = await client.call_tool(
                "trigger-url-elicitation", {"url": "https://example.com/b", "errorPath": True}
            )
    texts = [c.text for r in (direct, via_error) for c in r.content if isinstance(c, s.TextContent)]
    assert "User completed the URL elicitation flow" in texts[0]
    assert any("URL: https://example.com/b" in t for t in texts[1:])
    assert opened == ["https://example.com/a", "https://modelcontextprotocol.io", "https://example.com/b"]


async def test_registered_urls_are_bounded_the_oldest_forgotten() -> None:
    from trimcp.host import elicitation as module

    async def open_url(url: str) -> None:
        pass

    flow = Elicitation(url=True, open_url=open_url)
    for i in range(module.MAX_PENDING_URLS + 1):
        await flow.handler(url_params(f"e{i}"))
    flow.completed("e0")
    flow.completed(f"e{module.MAX_PENDING_URLS}")
    assert await flow.wait_complete("e0", timeout=0) is False  # evicted: its completion was ignored
    assert await flow.wait_complete(f"e{module.MAX_PENDING_URLS}", timeout=0) is True
