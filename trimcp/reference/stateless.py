"""Reference-server fixtures for the 2026-07-28 server scenarios of the official
conformance suite (multi-round-trip input, capabilities, logging, subscriptions).

Theory of operation
-------------------
The suite calls fixtures by name and, for MRTR, expects particular
``inputRequests`` keys (``user_name``, ``capital_question``, ...); each tool
here asks through the ordinary ``Context`` API with those keys, so it also
works in the handshake era (as real server-to-client requests).  Names and
behaviour follow the scenario descriptions of
``modelcontextprotocol/conformance`` (``input-required-result``,
``server-stateless``); ``register(server)`` adds them to a ``Server``.
"""

from __future__ import annotations

import json
from typing import Any

from ..server import inputs
from ..server.context import Context
from ..server.definition import Server
from . import task_fixtures as _tasks

#: Every tool here touches nothing outside the process (asking the client is not the outside
#: world), so it is closed-world too: ``trimcp check --no-open-world`` still calls it.
READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


def _schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


def _field(answer: dict[str, Any], name: str, default: str = "(none)") -> str:
    content = answer.get("content") if answer.get("action") == "accept" else None
    value = content.get(name) if isinstance(content, dict) else None
    return default if value is None else str(value)


def _sampled(result: dict[str, Any]) -> str:
    content = result.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return " ".join(texts) if texts else json.dumps(content)


def _root_uris(roots: list[dict[str, Any]]) -> str:
    return ", ".join(str(r.get("uri")) for r in roots) or "(no roots)"


def register(server: Server) -> None:
    _register_input_tools(server)
    _register_stateless_tools(server)
    _tasks.register(server)

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> list[Any]:
        """A prompt that first asks the user for its context (elicitation, when the client can)."""
        context = "(none)"
        if ctx.can_ask("elicitation/create"):
            answer = await ctx.elicit(
                "What context should the prompt use?", _schema(context="string"), key="user_context"
            )
            context = _field(answer, "context")
        return [f"Use this context: {context}"]

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        mime_type="text/plain",
        description="A resource clients subscribe to.",
    )
    async def watched(ctx: Context) -> str:
        return "A resource to watch for updates."


def _register_input_tools(server: Server) -> None:
    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Ask the user's name (elicitation, key user_name) and greet them."""
        answer = await ctx.elicit("What is your name?", _schema(name="string"), key="user_name")
        return f"Hello, {_field(answer, 'name', 'stranger')}!"

    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Ask the client's model a question (sampling, key capital_question)."""
        result = await ctx.sample("What is the capital of France?", 100, key="capital_question")
        return f"Model answer: {_sampled(result)}"

    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """List the client's roots (roots/list, key client_roots)."""
        return f"Client roots: {_root_uris(await ctx.list_roots(key='client_roots'))}"

    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Ask for a confirmation; the answer says state-ok when the requestState verified."""
        answer = await ctx.elicit("Please confirm", _schema(ok="boolean"), key="confirm")
        verdict = "state-ok" if ctx.resumed else "no request state"
        return f"{verdict}; confirmed: {_field(answer, 'ok')}"

    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Ask for a name, a sampled greeting and the roots in one round."""
        answers = await ctx.ask_all(
            {
                "user_name": inputs.elicitation("What is your name?", _schema(name="string")),
                "greeting": inputs.sampling("Generate a greeting", 50),
                "client_roots": inputs.roots(),
            }
        )
        roots = answers["client_roots"].get("roots")
        return (
            f"{_sampled(answers['greeting'])}, {_field(answers['user_name'], 'name')}! "
            f"Roots: {_root_uris(roots if isinstance(roots, list) else [])}"
        )

    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Ask two questions one after the other (two rounds: step1, step2)."""
        first = await ctx.elicit("Step 1: What is your name?", _schema(name="string"), key="step1")
        second = await ctx.elicit("Step 2: What is your favorite color?", _schema(color="string"), key="step2")
        return f"{_field(first, 'name')} likes {_field(second, 'color')}"

    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Ask for a confirmation; a tampered requestState on the retry is refused (-32602)."""
        answer = await ctx.elicit("Please confirm", _schema(ok="boolean"), key="confirm")
        return f"confirmed: {_field(answer, 'ok')}"

    @server.tool(annotations=READ_ONLY)
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Ask only what the client declared it can answer (elicitation, sampling, roots)."""
        wanted: dict[str, inputs.InputRequest] = {}
        if ctx.client_supports("elicitation"):
            wanted["user_name"] = inputs.elicitation("What is your name?", _schema(name="string"))
        if ctx.client_supports("sampling"):
            wanted["greeting"] = inputs.sampling("Generate a greeting", 50)
        if ctx.client_supports("roots"):
            wanted["client_roots"] = inputs.roots()
        if not wanted:
            return "the client declared none of elicitation, sampling and roots"
        answers = await ctx.ask_all(wanted)
        return f"answered: {', '.join(sorted(answers))}"


def _register_stateless_tools(server: Server) -> None:
    @server.tool(annotations=READ_ONLY)
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the sampling capability: without it the request fails with -32021 (2026-07-28)."""
        return f"Model answer: {_sampled(await ctx.sample('Say hello', 20))}"

    @server.tool(annotations=READ_ONLY)
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Report progress, then ask the user for a confirmation (elicitation)."""
        await ctx.report_progress(0, 1, "asking for confirmation")
        answer = await ctx.elicit("Continue?", _schema(ok="boolean"), key="confirmation")
        return f"confirmed: {_field(answer, 'ok')}"

    @server.tool(annotations=READ_ONLY)
    async def test_logging_tool(ctx: Context) -> str:
        """Log at info three times (nothing is sent unless the request set a logLevel)."""
        for step in ("starting", "working", "done"):
            await ctx.log("info", f"test_logging_tool: {step}", logger="reference")
        return "logged three messages"

    @server.tool()
    async def test_trigger_tool_change(ctx: Context) -> str:
        """Add or remove the tool test_dynamic_tool and announce tools/list_changed."""
        if "test_dynamic_tool" in ctx.server.tools:
            ctx.server.remove_tool("test_dynamic_tool")
            state = "removed"
        else:
            ctx.server.add_tool(_dynamic_tool, "test_dynamic_tool", annotations=READ_ONLY)
            state = "added"
        await ctx.server.notify_tools_list_changed()
        return f"test_dynamic_tool {state}"

    @server.tool()
    async def test_trigger_prompt_change(ctx: Context) -> str:
        """Add or remove the prompt test_dynamic_prompt and announce prompts/list_changed."""
        if "test_dynamic_prompt" in ctx.server.prompts:
            ctx.server.remove_prompt("test_dynamic_prompt")
            state = "removed"
        else:
            ctx.server.add_prompt(_dynamic_prompt, "test_dynamic_prompt")
            state = "added"
        await ctx.server.notify_prompts_list_changed()
        return f"test_dynamic_prompt {state}"


async def _dynamic_tool(ctx: Context) -> str:
    """A tool that test_trigger_tool_change adds and removes."""
    return "dynamic"


async def _dynamic_prompt(ctx: Context) -> str:
    """A prompt that test_trigger_prompt_change adds and removes."""
    return "A prompt that comes and goes."
