"""Reference-server fixtures for the ext-tasks server scenarios of the official
conformance suite (``tasks-*``, 2026-07-28).

Theory of operation
-------------------
The scenarios call these tools by name (``greet``, ``slow_compute``,
``failing_job``, ``protocol_error_job``, ``confirm_delete``, ``multi_input``,
``test_tool_with_task``) and expect the behaviour their descriptions state;
``register(server)`` adds them.  Task support only shows where a request
declares ``io.modelcontextprotocol/tasks`` (2026-07-28); elsewhere the
task-capable ones run as plain tools, and ``failing_job`` (task ``required``)
answers -32021 to a 2026-07-28 request that did not declare it.  Only
``greet`` and ``quick_task`` say they are read-only and closed-world: ``trimcp check`` calls such
tools and would meet those -32021 answers, the elicitations and the sleeps; ``quick_task``
(read-only too, a task when asked for) is the one it exercises the extension with.
"""

from __future__ import annotations

from typing import Any

import trio

from .._errors import McpError
from .._sansio import jsonrpc as rpc
from ..server import inputs
from ..server.context import Context
from ..server.definition import Server

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}

_CONFIRM: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
_NAME: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _accepted(answer: dict[str, Any], field: str) -> Any:
    content = answer.get("content") if answer.get("action") == "accept" else None
    return content.get(field) if isinstance(content, dict) else None


def register(server: Server) -> None:
    @server.tool(annotations=READ_ONLY)
    async def greet(ctx: Context, name: str) -> str:
        """Greet someone (an ordinary tool: never a task)."""
        return f"Hello, {name}!"

    @server.tool(annotations=READ_ONLY, task="optional")
    async def quick_task(ctx: Context) -> str:
        """Answer after a fifth of a second: a task when the client declared the tasks extension
        (read-only, so ``trimcp check`` exercises the extension with it)."""
        await trio.sleep(0.2)
        return "quick task done"

    @server.tool(task="optional")
    async def slow_compute(ctx: Context, seconds: float = 1, label: str = "") -> str:
        """Sleep ``seconds`` (a task when the client declared the tasks extension), then report."""
        await trio.sleep(max(0.0, min(seconds, 600.0)))
        return f"computed {label or 'result'} after {seconds}s"

    @server.tool(task="required")
    async def failing_job(ctx: Context) -> str:
        """Always fails as a tool (isError) after a moment; only ever runs as a task."""
        await trio.sleep(1)
        raise RuntimeError("failing_job always fails")

    @server.tool(task="optional")
    async def protocol_error_job(ctx: Context) -> str:
        """Ends in a JSON-RPC error (a task: status failed with that error)."""
        await trio.sleep(0.1)
        raise McpError(rpc.INTERNAL_ERROR, "protocol_error_job: internal failure")

    @server.tool(task="optional")
    async def confirm_delete(ctx: Context, filename: str) -> str:
        """Ask the user to confirm deleting ``filename`` (nothing is deleted)."""
        answer = await ctx.elicit(f"Delete {filename}?", _CONFIRM, key=f"confirm-{filename}")
        return f"{filename}: {'deleted' if _accepted(answer, 'confirm') else 'kept'} (simulated)"

    @server.tool(task="optional")
    async def multi_input(ctx: Context) -> str:
        """Ask two questions at once (two inputRequests pending together)."""
        answers = await ctx.ask_all(
            {
                "first_name": inputs.elicitation("Your first name?", _NAME),
                "last_name": inputs.elicitation("Your last name?", _NAME),
            }
        )
        return " ".join(str(_accepted(answers[k], "name")) for k in ("first_name", "last_name"))

    @server.tool(task="required", task_start="explicit")
    async def test_tool_with_task(ctx: Context) -> str:
        """Ask the user's name (multi-round-trip), then go on as a task and greet them."""
        answer = await ctx.elicit("What is your name?", _NAME, key="user_name")
        await ctx.start_task()
        await trio.sleep(0.1)
        return f"Hello, {_accepted(answer, 'name') or 'stranger'}!"
