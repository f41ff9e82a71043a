"""The conversation ``spec/record.py`` has with every server.

Theory of operation: one client session (``trimcp.open_client`` over a recording stream)
declares sampling, elicitation (form) and roots, with fixed answers, so a server that asks
the client (client/sampling, client/elicitation, client/roots) is recorded asking; then,
where the server offers it: every list, page by page (basic/utilities/pagination), up to
three reads and the resource templates, prompts (argument-less ones and those with known
arguments), the server's tool calls, one call with a progress token
(basic/utilities/progress), one cancelled after its first progress notification or 1.5 s
(basic/utilities/cancellation), the errors (an unknown tool, bad arguments, an unknown
resource and prompt), the tools that make the server ask, and a ping (handshake era).  A step
that fails is noted in the outcome and the conversation goes on: the failure is in the
transcript, which is the point.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import attrs
import trio
from _servers import Server

import trimcp
from trimcp import schema as s
from trimcp._errors import ConnectError, McpError


@attrs.define
class Outcome:
    revision: str | None
    era: str
    server_info: dict[str, Any]
    steps: list[str] = attrs.field(factory=list)


async def _sample(params: s.CreateMessageRequestParams) -> s.CreateMessageResult:
    return s.CreateMessageResult(
        role="assistant", content=s.TextContent(text="4"), model="corpus-model", stop_reason="endTurn"
    )


def _fill(schema: dict[str, Any]) -> dict[str, Any]:
    """Content for a form elicitation: a plausible value for each property."""
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type")
        if "default" in prop:
            out[name] = prop["default"]
        elif prop.get("enum"):
            out[name] = prop["enum"][0]
        elif kind == "boolean":
            out[name] = True
        elif kind in ("number", "integer"):
            out[name] = prop.get("minimum", 1)
        elif kind == "array":
            items = (prop.get("items") or {}).get("enum") or [
                (prop.get("items") or {}).get("anyOf", [{}])[0].get("const")
            ]
            out[name] = [x for x in items[:1] if x is not None]
        else:
            fmt = prop.get("format")
            out[name] = {
                "email": "ada@example.invalid",
                "date": "2026-01-01",
                "uri": "https://example.invalid/",
                "date-time": "2026-01-01T00:00:00Z",
            }.get(fmt, "Ada")
    return out


async def _elicit(params: s.ElicitRequestParams) -> s.ElicitResult:
    schema = getattr(params, "requested_schema", None) or {}
    return s.ElicitResult(action="accept", content=_fill(dict(schema)))


ROOTS = [s.Root(uri="file:///corpus/root", name="corpus")]


def _subst(value: Any, tmp: Path, page: str) -> Any:
    if isinstance(value, str):
        return value.replace("{tmp}", str(tmp)).replace("{page}", page)
    if isinstance(value, dict):
        return {k: _subst(v, tmp, page) for k, v in value.items()}
    if isinstance(value, list):
        return [_subst(v, tmp, page) for v in value]
    return value


async def run(stream: Any, server: Server, revision: str, tmp: Path, page: str, capture: Any = None) -> Outcome | None:
    """Converse over ``stream``; None when the server does not speak ``revision``."""
    try:
        async with trimcp.open_client(
            stream,
            revision=revision,
            request_timeout=20,
            connect_timeout=20,
            probe_timeout=5,
            sampling_handler=_sample,
            roots=ROOTS,
            # elicitation is 2025-06-18 on: declaring it earlier would invite a method the revision lacks
            elicitation_handler=_elicit if revision >= "2025-06-18" else None,
        ) as client:
            outcome = Outcome(client.protocol_version, client.era.name.lower(), dict(client.server_info or {}))
            await _steps(client, server, outcome, tmp, page)
            return outcome
    except ConnectError as exc:
        print(f"  {server.name} {revision}: {exc}", file=sys.stderr)
        return None


async def _step(outcome: Outcome, name: str, coro: Any) -> Any:
    try:
        result = await coro
    except McpError as exc:
        outcome.steps.append(f"{name}: error {exc.code}")
        return None
    except (trimcp.TrimcpError, s.SchemaError) as exc:  # recorded: the transcript shows what happened
        outcome.steps.append(f"{name}: {type(exc).__name__}")
        print(f"    step {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    outcome.steps.append(name)
    return result


async def _steps(client: Any, server: Server, outcome: Outcome, tmp: Path, page: str) -> None:
    caps = client.server_capabilities
    stateless = outcome.era == "stateless"
    names: set[str] = set()
    if "tools" in caps:
        tools = await _step(outcome, "tools/list", client.list_tools())
        names = {t.name for t in tools or []}
    if "resources" in caps:
        resources = await _step(outcome, "resources/list", client.list_resources()) or []
        await _step(outcome, "resources/templates/list", client.list_resource_templates())
        for r in resources[:3]:
            await _step(outcome, "resources/read", client.read_resource(r.uri))
        await _step(outcome, "resources/read unknown", client.read_resource("corpus://no/such/resource"))
    if "prompts" in caps:
        prompts = await _step(outcome, "prompts/list", client.list_prompts()) or []
        done = 0
        for p in prompts:
            if p.name in server.prompt_args:
                await _step(
                    outcome, "prompts/get", client.get_prompt(p.name, _subst(server.prompt_args[p.name], tmp, page))
                )
            elif not any(a.required for a in (p.arguments or [])) and done < 2:
                await _step(outcome, "prompts/get", client.get_prompt(p.name))
                done += 1
        await _step(outcome, "prompts/get unknown", client.get_prompt("no-such-prompt"))
    if "tools" not in caps:
        if not stateless:
            await _step(outcome, "ping", client.ping())
        return
    for name, args in server.calls:
        if name in names:
            await _step(outcome, f"tools/call {name}", client.call_tool(name, _subst(args, tmp, page)))
    if server.progress and server.progress[0] in names:
        seen: list[Any] = []
        await _step(outcome, "tools/call with progress", client.call_tool(*server.progress, on_progress=seen.append))
        outcome.steps.append(f"progress notifications: {len(seen)}")
    if server.cancel and server.cancel[0] in names:
        await _cancel(client, server.cancel, outcome)
    await _step(
        outcome, "tools/call unknown tool", client.request("tools/call", {"name": "no-such-tool", "arguments": {}})
    )
    if server.bad_args and server.bad_args[0] in names:
        name, args = server.bad_args
        await _step(
            outcome, "tools/call bad arguments", client.request("tools/call", {"name": name, "arguments": args})
        )
    for name, args in server.asks:
        if name in names:
            await _step(outcome, f"tools/call {name}", client.call_tool(name, args))
    if not stateless:
        await _step(outcome, "ping", client.ping())


async def _cancel(client: Any, call: tuple[str, dict[str, Any]], outcome: Outcome) -> None:
    """Call a slow tool and cancel it after its first progress notification (or 1.5 s)."""
    first = trio.Event()
    with trio.move_on_after(10) as guard:
        async with trio.open_nursery() as nursery:

            async def calling() -> None:
                with trio.CancelScope() as scope:
                    cancel_scopes.append(scope)
                    try:
                        await client.call_tool(*call, on_progress=lambda _p: first.set())
                    except McpError:
                        pass

            cancel_scopes: list[trio.CancelScope] = []
            nursery.start_soon(calling)
            with trio.move_on_after(1.5):
                await first.wait()
            for scope in cancel_scopes:
                scope.cancel()
    outcome.steps.append("tools/call cancelled" if not guard.cancelled_caught else "tools/call cancel: timed out")
    await trio.sleep(0.3)  # a late answer or progress after the cancellation is recorded too
