"""One turn of an agent: the model's reply, its tool calls run through the pool, the results back.

Theory of operation
-------------------
The shapes are the pure core's (``trimcp._sansio.host.providers``: the tool lists, the
calls, the results, for ``anthropic``, ``openai``, ``openai-strict`` and ``gemini``); this
module adds the I/O.  ``agent_turn(pool, provider, model, messages)``:

1. offers the pool's tools (``Pool.tools()``, the names of ``naming.py``) in the
   provider's shape (``provider_tools``); a tool whose schema the provider cannot take is
   left out and logged once, never the list;
2. awaits ``model(messages, tools)``: any async callable (a thin wrapper around the
   provider SDK, or ``trimcp.testing.ScriptedModel``).  No model client is bundled; the
   reply may be the SDK's own object or its dict;
3. reads the tool calls of the reply and runs them with ``run_tool_calls``: each name is
   resolved through the pool's name table (never split on ``__``), the arguments mapped
   back (strict mode's ``null``s, renamed keys: ``repair.py``), and the calls run with
   ``run_batch`` (``batch.py``): reads together, each write alone and in order.  A name
   that was not offered, or arguments that could not be read, are answered with the
   problem and not run;
4. cuts every result to the token limit (``truncate_result``), and turns each outcome into
   the provider's result: ``isError``, a server's JSON-RPC error and a transport failure
   alike become a result the model can read (the text redacted by ``pool.redactor``: the
   values of a config's ``${VAR}``s never reach the model).

It returns a ``Turn``: the reply, its calls and their outcomes, and ``messages``, what to
append to the conversation (the reply as the provider's assistant message, then the
results).  ``turn.done`` says the model called no tool: its answer is ``turn.text``.

Progress of a call goes to ``on_progress(call, progress)`` as it arrives.  Cancellation
is Trio's: cancelling the scope around a turn cancels the model call or the batch, and
each running tool call tells its server (``notifications/cancelled``); nothing here
catches it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from .._errors import McpError
from .._sansio import events as ev
from .._sansio.host.classify import ToolKind
from .._sansio.host.providers import (
    ProviderTools,
    ToolCall,
    ToolOutcome,
    assistant_message,
    provider_tools,
    reply_text,
    tool_calls,
    tool_results,
)
from .._sansio.host.providers.tools import provider_format
from .._sansio.schema import CallToolResult
from .batch import run_batch
from .pool import Pool
from .truncate import truncate_result

__all__ = ["Model", "ProgressHandler", "Turn", "agent_turn", "run_tool_calls"]

logger = logging.getLogger("trimcp.host")

#: ``model(messages, tools)`` -> the model's reply (an SDK object or its dict).
Model = Callable[[list[Any], list[dict[str, Any]]], Awaitable[Any]]
#: ``on_progress(call, progress)``, sync or async.
ProgressHandler = Callable[[ToolCall, ev.ProgressReceived], Awaitable[None] | None]

#: Left-out tools already logged (provider, name, reason), so a long conversation logs each once.
_LOGGED: set[tuple[str, str, str]] = set()
_LOGGED_AT_MOST: Final = 4096


@attrs.frozen
class Turn:
    """One turn: what the model said and called, how the calls ended, what to append."""

    reply: Any
    calls: tuple[ToolCall, ...]
    outcomes: tuple[ToolOutcome, ...]
    #: Append these to the conversation: the reply as the assistant message, then the results.
    messages: list[Any]
    #: The tools the model was offered (``left_out`` says which could not be).
    tools: ProviderTools

    @property
    def done(self) -> bool:
        """The model called no tool: its answer is ``text``."""
        return not self.calls

    @property
    def text(self) -> str:
        """What the model said in this turn, besides its calls."""
        return reply_text(self.tools.provider, self.reply)


async def agent_turn(
    pool: Pool,
    provider: str,
    model: Model,
    messages: Sequence[Any],
    *,
    tools: ProviderTools | None = None,
    on_progress: ProgressHandler | None = None,
    max_concurrency: int = 8,
    max_tokens: int | None = None,
    call_options: Mapping[str, Any] | None = None,
) -> Turn:
    """Ask ``model`` once and run the tools it calls; see the module docstring.

    ``tools``: the list to offer (default: ``provider_tools(await pool.tools(), provider)``,
    built anew each turn, so a server's changed list is seen).  ``max_tokens``: the limit
    each result is cut to (default ``MAX_MCP_OUTPUT_TOKENS`` or 25 000).  ``call_options``
    go to every ``Pool.call`` (``timeout``, ``validate_output``, ...).
    """
    fmt = provider_format(provider)
    if tools is None:
        tools = provider_tools(await pool.tools(), fmt.name)
    elif tools.provider != fmt.name:
        raise ValueError(f"the tool list was made for {tools.provider!r}, not {fmt.name!r}")
    _log_left_out(tools)
    reply = await model(list(messages), tools.tools)
    calls = tool_calls(fmt.name, reply)
    out: list[Any] = [assistant_message(fmt.name, reply)]
    outcomes: list[ToolOutcome] = []
    if calls:
        outcomes = await run_tool_calls(
            pool,
            tools,
            calls,
            on_progress=on_progress,
            max_concurrency=max_concurrency,
            max_tokens=max_tokens,
            call_options=call_options,
        )
        out.extend(tool_results(fmt.name, outcomes))
    return Turn(reply, tuple(calls), tuple(outcomes), out, tools)


async def run_tool_calls(
    pool: Pool,
    tools: ProviderTools,
    calls: Sequence[ToolCall],
    *,
    on_progress: ProgressHandler | None = None,
    max_concurrency: int = 8,
    max_tokens: int | None = None,
    call_options: Mapping[str, Any] | None = None,
) -> list[ToolOutcome]:
    """Run a model's ``calls`` (offered as ``tools``) through ``pool``: one outcome per call,
    in call order; reads together, writes alone and in order (``run_batch``)."""
    options = dict(call_options or {})
    refused: dict[int, str] = {}
    batch: list[tuple[str, Mapping[str, Any] | None]] = []
    kinds: list[ToolKind] = []
    for index, call in enumerate(calls):
        problem = _refusal(pool, tools, call)
        if problem is not None:
            refused[index] = problem
            continue
        batch.append((str(index), tools.arguments(call.name, call.arguments)))
        kinds.append(pool.tool(call.name).kind)

    async def one(key: str, arguments: Mapping[str, Any] | None) -> CallToolResult:
        call = calls[int(key)]
        extra = dict(options)
        if on_progress is not None:
            extra["on_progress"] = _progress_to(on_progress, call)
        return await pool.call(call.name, arguments, **extra)

    ran = await run_batch(batch, kinds, one, max_concurrency=max_concurrency)
    by_index = {int(o.name): o for o in ran}
    outcomes: list[ToolOutcome] = []
    for index, call in enumerate(calls):
        if index in refused:
            outcomes.append(ToolOutcome(call, error=refused[index]))
            continue
        done = by_index[index]
        if done.result is not None:
            result = await truncate_result(done.result, max_tokens=max_tokens)
            outcomes.append(ToolOutcome(call, result=result))
        else:
            outcomes.append(ToolOutcome(call, error=pool.redactor(_error_text(done.error))))
    return outcomes


def _refusal(pool: Pool, tools: ProviderTools, call: ToolCall) -> str | None:
    if call.problem is not None:
        return f"{call.name}: {call.problem}; the tool was not called"
    if call.name not in tools:
        offered = ", ".join(sorted(tools)[:10]) or "none"
        return f"no tool named {call.name!r} was offered (offered: {offered})"
    try:
        pool.tool(call.name)
    except LookupError as exc:  # its server went away since the list was made
        return str(exc)
    return None


def _progress_to(handler: ProgressHandler, call: ToolCall) -> Callable[[ev.ProgressReceived], Awaitable[None] | None]:
    def forward(progress: ev.ProgressReceived) -> Awaitable[None] | None:
        return handler(call, progress)

    return forward


def _error_text(error: BaseException | None) -> str:
    if isinstance(error, McpError):
        return f"the server answered with an error: {error.message} (code {error.code})"
    return f"the call failed: {type(error).__name__}: {error}"


def _log_left_out(tools: ProviderTools) -> None:
    for left in tools.left_out:
        key = (tools.provider, left.name, left.reason)
        if key in _LOGGED:
            continue
        if len(_LOGGED) >= _LOGGED_AT_MOST:
            _LOGGED.clear()
        _LOGGED.add(key)
        logger.warning("tool %s is not offered to %s: %s", left.name, tools.provider, left.reason)
