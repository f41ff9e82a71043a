"""An agent over two real servers, for every provider: the example, strict mode's nulls, progress,
cancellation, calls that must not run, and the scripted model refusing what an API would.

The servers are real processes over stdio: trimcp's reference server (``python -m trimcp
serve``) and ``examples/notes_server.py``.  The model is ``trimcp.testing.ScriptedModel``;
its replies and the results the agent sends back are read by the provider SDKs' own types.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio
from provider_sdks import check_reply, check_result_messages
from repo_paths import REPO

from trimcp.config import StdioServerConfig
from trimcp.host import ToolCall, agent_turn, open_pool, provider_tools
from trimcp.testing import ScriptedModel, ScriptError, call

EXAMPLES = REPO / "examples"
PROVIDERS = ("anthropic", "openai", "openai-strict", "gemini")


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_example", EXAMPLES / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def servers(log: Path | None = None) -> list[StdioServerConfig]:
    env = {"NOTES_LOG": str(log)} if log is not None else {}
    return [
        StdioServerConfig(name="reference", command=sys.executable, args=("-m", "trimcp", "serve")),
        StdioServerConfig(name="notes", command=sys.executable, args=(str(EXAMPLES / "notes_server.py"),), env=env),
    ]


def first(provider: str, text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]} if provider == "gemini" else {"role": "user", "content": text}


@pytest.mark.deadline(60)
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_example_agent_plays_a_two_turn_conversation_over_two_real_servers(provider: str) -> None:
    agent = example()
    model = agent.scripted(provider)
    turns = await agent.converse(provider, model, "note milk")
    assert model.finished and len(turns) == 2
    one, two = turns
    assert [o.call.name for o in one.outcomes] == [
        "mcp__reference__echo",
        "mcp__notes__add_note",
        "mcp__notes__list_notes",
    ]
    assert not any(o.failed for o in one.outcomes)
    echo, added, listed = (o.result for o in one.outcomes)
    assert echo is not None and "hi" in echo.text
    assert added is not None and added.text == "noted (1 notes)"
    # The write ran alone and before the read that follows it: the read sees the note.
    assert listed is not None and listed.text == "milk"
    assert two.done and two.text == "Noted milk; the reference server echoed hi." and two.outcomes == ()
    assert one.tools.left_out == ()
    check_reply(provider, one.reply)
    check_result_messages(provider, one.messages[1:])
    assert len(model.results(0)) == 3


def test_the_example_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    before = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = str(REPO)
    try:
        out, err, status = api.run(
            [
                "--strict",
                "--no-incremental",
                "--cache-dir",
                str(tmp_path / "cache"),
                str(EXAMPLES / "agent.py"),
                str(EXAMPLES / "notes_server.py"),
            ]
        )
    finally:
        if before is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = before
    assert status == 0, out + err


@pytest.mark.deadline(60)
async def test_strict_mode_nulls_are_removed_before_the_server_sees_them() -> None:
    # slow(seconds, steps) has optional numbers; a strict model sends steps: null.
    model = ScriptedModel("openai-strict", [[call("mcp__reference__slow", seconds=0.01)], "done"])
    async with open_pool(servers()[:1]) as pool:
        await pool.connect_all()
        turn = await agent_turn(pool, "openai-strict", model, [first("openai", "go")])
    sent = model.requests[0]
    assert turn.calls[0].arguments == {"seconds": 0.01, "steps": None}
    (outcome,) = turn.outcomes
    assert not outcome.failed, outcome
    assert sent.tools and all(t["function"]["strict"] for t in sent.tools)


@pytest.mark.deadline(60)
async def test_progress_reaches_the_handler_and_cancelling_the_turn_reaches_the_server(tmp_path: Path) -> None:
    log = tmp_path / "notes.log"
    seen: list[tuple[str, float]] = []
    first_progress = trio.Event()

    def on_progress(tool: ToolCall, progress: Any) -> None:
        seen.append((tool.name, progress.progress))
        first_progress.set()

    async with open_pool(servers(log)) as pool:
        await pool.connect_all()
        quick = ScriptedModel("anthropic", [[call("mcp__notes__wait", seconds=0.2)]])
        turn = await agent_turn(pool, "anthropic", quick, [first("anthropic", "wait")], on_progress=on_progress)
        assert turn.outcomes[0].result is not None and turn.outcomes[0].result.text == "waited 0.2 s"
        assert seen and {name for name, _ in seen} == {"mcp__notes__wait"}
        first_progress = trio.Event()
        slow = ScriptedModel("anthropic", [[call("mcp__notes__wait", seconds=60)]])
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:

                async def run() -> None:
                    await agent_turn(pool, "anthropic", slow, [first("anthropic", "wait")], on_progress=on_progress)

                nursery.start_soon(run)
                await first_progress.wait()
                scope.cancel()
        assert scope.cancelled_caught
        with trio.fail_after(20):
            while "cancelled" not in (log.read_text() if log.exists() else ""):
                await trio.sleep(0.05)
    assert log.read_text().splitlines() == ["finished", "cancelled"]


@pytest.mark.deadline(60)
async def test_a_call_that_was_not_offered_or_cannot_be_read_is_answered_not_run() -> None:
    async def model(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "c1", "type": "function", "function": {"name": "mcp__nope__x", "arguments": "{}"}},
                            {
                                "id": "c2",
                                "type": "function",
                                "function": {"name": "mcp__notes__add_note", "arguments": "{"},
                            },
                            {
                                "id": "c3",
                                "type": "function",
                                "function": {"name": "mcp__notes__list_notes", "arguments": ""},
                            },
                        ],
                    }
                }
            ]
        }

    async with open_pool(servers()) as pool:
        await pool.connect_all()
        turn = await agent_turn(pool, "openai", model, [first("openai", "go")])
        after = await pool.call("mcp__notes__list_notes")
    missing, unreadable, ran = turn.outcomes
    assert missing.error is not None and missing.error.startswith("no tool named 'mcp__nope__x' was offered")
    assert unreadable.error is not None and "not valid JSON" in unreadable.error
    assert ran.result is not None and ran.result.text == "(no notes)"
    assert after.text == "(no notes)"  # the unreadable add_note never ran
    results = turn.messages[1:]
    assert [m["content"].split(":")[0] for m in results[:2]] == ["Error", "Error"]
    check_result_messages("openai", results)


@pytest.mark.deadline(60)
async def test_the_scripted_model_refuses_what_the_api_would() -> None:
    bad_tools = [{"name": "bad name", "input_schema": {"type": "object"}}]
    with pytest.raises(ScriptError, match="would refuse these tools"):
        await ScriptedModel("anthropic", ["hi"])([], bad_tools)
    good = [{"name": "mcp__s__t", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]
    with pytest.raises(ScriptError, match="not offered"):
        await ScriptedModel("anthropic", [[call("mcp__s__other")]])([], good)
    with pytest.raises(ScriptError, match="refuses"):
        await ScriptedModel("anthropic", [[call("mcp__s__t", n="three")]])([], good)
    model = ScriptedModel("anthropic", [[call("mcp__s__t", n=3)], "done"])
    await model([], good)
    with pytest.raises(ScriptError, match="result for each call"):
        await model([{"role": "user", "content": "no results here"}], good)
    with pytest.raises(ScriptError, match="one more"):
        await ScriptedModel("anthropic", [])([], good)


@pytest.mark.deadline(60)
async def test_a_tool_list_is_made_for_one_provider() -> None:
    async with open_pool(servers()[1:]) as pool:
        await pool.connect_all()
        offer = provider_tools(await pool.tools(), "gemini")
        with pytest.raises(ValueError, match="made for 'gemini', not 'anthropic'"):
            await agent_turn(pool, "anthropic", ScriptedModel("anthropic", ["x"]), [], tools=offer)


@pytest.mark.deadline(60)
@pytest.mark.parametrize("provider", ["anthropic", "openai", "gemini"])
async def test_the_agent_takes_the_sdks_own_reply_objects(provider: str) -> None:
    agent = example()
    scripted = agent.scripted(provider)

    async def sdk_model(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        return check_reply(provider, await scripted(messages, tools))  # the SDK's Message / ChatCompletion / ...

    turns = await agent.converse(provider, sdk_model, "note milk")
    assert scripted.finished and [len(t.outcomes) for t in turns] == [3, 0]
    assert not any(o.failed for o in turns[0].outcomes)
    assert turns[-1].text == "Noted milk; the reference server echoed hi."
