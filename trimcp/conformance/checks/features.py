"""The server-feature tour, the same in both eras: tools, resources, prompts, completion.

Theory of operation
-------------------
``feature_tour`` walks what the server advertises with the typed client
helpers (which add the stateless era's envelope and answer its input requests
themselves): every list (all pages), every resource read, every prompt
fetched, every tool the calling policy allows called with
each of its example argument sets (``tool_calls.py``), plus the negative probes that
a correct client may send too (unknown method, unknown tool, unknown
resource; the unadvertised capability is asked on a connection of its own,
``probes.probe_gating``).  Where a rule changed between revisions the check follows the
negotiated one: a missing resource is -32002 (or -32602) up to 2025-11-25 and
must be -32602, never -32002, in 2026-07-28; ``completion/complete`` is not
capability-gated in 2024-11-05.  Tools are only *called* when annotated
read-only, since the harness must not change the server's world.
"""

from __future__ import annotations

import re
from typing import Any

from ..._errors import (
    InputRoundsExceeded,
    McpError,
    PaginationError,
    RemoteProtocolError,
    RequestTimeout,
    TrimcpError,
)
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.revisions import Era, get_revision
from ..._trio.client.client_session import ClientSession
from ..evidence import received, sent
from ..results import Results, Tour
from .feature_content import judge_received
from .prompt_args import prompt_arguments
from .sampling_balance import judge_tool_balance
from .server_requests import judge_server_requests
from .tool_calls import CallOutcome, ToolPolicy, call_outcome, requires_task

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
UNKNOWN_URI = "trimcp-check://no/such/resource"


async def feature_tour(tour: Tour, policy: ToolPolicy | None = None) -> None:
    rec, client = tour.rec, tour.client
    caps = client.server_capabilities
    await _probe_unknown_method(rec, client)
    if "tools" in caps:
        await _tools(tour, policy or ToolPolicy())
    for feature, run in (("resources", _resources), ("prompts", _prompts)):
        if feature in caps:
            await run(tour)
    for feature, checks in _FEATURE_CHECKS.items():
        if feature not in caps:
            for check_id in checks:
                rec.skip(check_id, f"the server does not advertise {feature}")
    _judge_pages(tour)
    judge_received(tour)
    judge_server_requests(tour)
    judge_tool_balance(tour)


_FEATURE_CHECKS = {
    "tools": (
        "tools.list",
        "tools.input-schema",
        "tools.unique-names",
        "tools.name-format",
        "tools.input-schema-legacy",
        "tools.unique-names-legacy",
        "tools.x-mcp-header",
        "tools.call-read-only",
        "tools.structured-output",
        "tools.unknown-tool",
    ),
    "resources": (
        "resources.list",
        "resources.templates",
        "resources.read",
        "resources.unknown",
        "resources.uri-syntax",
    ),
    "prompts": ("prompts.list", "prompts.get", "completion.complete"),
}


async def _probe_unknown_method(rec: Results, client: ClientSession) -> None:
    try:
        await client.request("trimcp/no-such-method", {})
        rec.fail("jsonrpc.unknown-method", "an unknown method got a result")
    except McpError as exc:
        if exc.code == rpc.METHOD_NOT_FOUND:
            rec.ok("jsonrpc.unknown-method")
        else:
            rec.fail("jsonrpc.unknown-method", f"answered with code {exc.code}, not -32601")
    except RequestTimeout as exc:
        await _silent_or_slow(rec, client, "jsonrpc.unknown-method", exc, "an unknown method got no answer")


async def _silent_or_slow(rec: Results, client: ClientSession, check: str, exc: RequestTimeout, detail: str) -> None:
    """``exc`` ended a request that needs no work of the server: if a ping sent after it is
    answered in time (any answer, even an error), the server answers other requests and this
    silence is its own (fail); if not, the run's timeout only cut it short (not reached)."""
    try:
        await client.ping()
    except McpError:
        pass
    except TrimcpError:
        rec.failed(check, exc, detail)
        return
    waited = f" within {exc.seconds:g} s" if exc.seconds is not None else ""
    rec.fail(check, f"{detail}{waited}, though a ping sent after it was answered")


async def _tools(tour: Tour, policy: ToolPolicy) -> None:
    rec, client = tour.rec, tour.client
    try:
        tools = await client.list_tools()
    except PaginationError as exc:
        rec.fail("pagination.cursors", str(exc))
        return
    except RemoteProtocolError as exc:
        rec.fail("tools.list", str(exc))
        return
    except TrimcpError as exc:
        rec.failed("tools.list", exc, str(exc))
        return
    tour.tools = tools
    rec.ok("tools.list", f"{len(tools)} tools")
    if tools:
        _judge_tool_list(rec, tools)
    else:
        # Names and schemas of no tool are no evidence of anything.
        # (the schemas: sent_schemas.judge_schemas, from the lists as the server sent them)
        for check_id in ("tools.unique-names", "tools.name-format", "tools.unique-names-legacy", "tools.x-mcp-header"):
            rec.skip(check_id, "the server lists no tools")
    callable_tools = [t for t in tools if policy.allows(t)] if policy.probe_tools else []
    outcomes: list[CallOutcome] = []
    for tool in callable_tools:
        if requires_task(tool):
            # A correct server refuses it (-32601) without a task; the tasks checks call it as one.
            rec.skip("tools.call-read-only", f"{tool.name}: execution.taskSupport is required (tasks checks)")
            continue
        outcomes.extend(await _call_read_only(tour, tool, policy.examples(tool)))
    if not callable_tools:
        rec.skip("tools.call-read-only", policy.describe())
    _judge_calls(rec, outcomes, len(set(tour.called_tools)))
    try:
        result = await client.call_tool("trimcp-no-such-tool-7d1f", {})
        if result.is_error:
            rec.ok("tools.unknown-tool", "isError result")
        else:
            rec.warn("tools.unknown-tool", "unknown tool returned a normal result")
    except McpError as exc:
        rec.ok("tools.unknown-tool", f"error {exc.code}")


def _judge_tool_list(rec: Results, tools: list[s.Tool]) -> None:
    names = [t.name for t in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    for unique in ("tools.unique-names", "tools.unique-names-legacy"):  # (one applies to the revision)
        (
            rec.warn(unique, f"duplicates: {', '.join(dupes)}")
            if dupes
            else rec.ok(unique, f"{len(names)} distinct names")
        )
    bad_names = [n for n in names if not _TOOL_NAME.match(n)]
    if bad_names:
        rec.warn("tools.name-format", ", ".join(bad_names[:5]))
    else:
        rec.ok("tools.name-format", f"{len(names)} names of 1-128 characters of [A-Za-z0-9_.-]")


_LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def _judge_pages(tour: Tour) -> None:
    """``pagination.cursors`` passes only when a cursor was followed (the client's pager
    raises ``PaginationError`` on a bad one): lists of one page test nothing."""
    recording = tour.recording
    followed = [
        method
        for request_id, (_, answer) in recording.answers().items()
        if (method := recording.sent_methods.get(request_id)) in _LISTS
        and isinstance(answer, rpc.Response)
        and answer.result.get("nextCursor") is not None
    ]
    if followed:
        lists = ", ".join(sorted(set(followed)))
        tour.rec.ok("pagination.cursors", f"followed {len(followed)} nextCursor ({lists})")
    else:
        tour.rec.skip("pagination.cursors", "every list came in one page: no cursor to follow")


def _judge_calls(rec: Results, outcomes: list[CallOutcome], tools: int) -> None:
    """A pass needs a call that succeeded: isError results (the harness invents the
    arguments, which a tool may rightly refuse) show the server answered, not that the
    tool can be called; nor does a text that only reports a failure ("fetch failed")."""
    if not outcomes:
        return  # nothing called, or every call already judged (fail / warn / skip)
    refused, failed = outcomes.count("is-error"), outcomes.count("error-text")
    calls = "" if len(outcomes) == tools else f" with {len(outcomes)} argument sets"
    detail = f"called {tools} tools{calls}, {refused} returned isError"
    if failed:
        detail += f", {failed} answered a text reporting an error without isError"
    if refused + failed == len(outcomes):
        rec.skip("tools.call-read-only", f"{detail}: no successful call to judge")
    else:
        rec.ok("tools.call-read-only", detail)


async def _call_read_only(tour: Tour, tool: s.Tool, examples: list[dict[str, Any]]) -> list[CallOutcome]:
    """Call ``tool`` with each argument set; the outcome of each call (``call_outcome``) not judged here."""
    rec = tour.rec
    if not examples:
        rec.skip("tools.call-read-only", f"{tool.name}: cannot invent arguments for its schema")
        return []
    tour.called_tools.append(tool.name)
    out: list[CallOutcome] = []
    for args in examples:
        try:
            await tour.client.call_tool(tool.name, args)
        except McpError as exc:
            rec.fail("tools.call-read-only", f"{tool.name} {args}: error {exc.code} {exc.message}", _last_call(tour))
            continue
        except InputRoundsExceeded as exc:
            # The harness declines every elicitation; a server may keep asking (spec: mrtr).
            rec.warn("tools.call-read-only", f"{tool.name}: {exc}", _last_call(tour))
            continue
        except TrimcpError as exc:  # (RemoteProtocolError among them: an invalid answer)
            rec.failed("tools.call-read-only", exc, f"{tool.name} {args}: {exc}", _last_call(tour))
            continue
        out.append(call_outcome(_last_result(tour)))
    return out


def _last_result(tour: Tour) -> dict[str, Any]:
    """The result of the latest tools/call answered (the raw one the typed result came from)."""
    answers = [a for _, a in _pairs(tour) if isinstance(a, rpc.Response)]
    return answers[-1].result if answers else {}


def _pairs(tour: Tour) -> list[tuple[rpc.Request, Any]]:
    recording = tour.recording
    request = next(
        (m for m in reversed(recording.sent) if isinstance(m, rpc.Request) and m.method == "tools/call"), None
    )
    if request is None:
        return []
    answer = recording.answers().get(request.id)
    return [(request, answer[1] if answer is not None else None)]


def _last_call(tour: Tour) -> list[dict[str, Any]]:
    """The latest tools/call the tour sent, and its answer if one came (a call's evidence)."""
    return [
        item
        for request, answer in _pairs(tour)
        for item in [sent(request)] + ([received(answer)] if answer is not None else [])
    ]


async def _resources(tour: Tour) -> None:
    rec, client, revision = tour.rec, tour.client, tour.revision
    try:
        resources = await client.list_resources()
        tour.resource_uris = [r.uri for r in resources]
        rec.ok("resources.list", f"{len(resources)} resources")
    except TrimcpError as exc:
        rec.failed("resources.list", exc, str(exc))
        resources = []
    try:
        templates = await client.list_resource_templates()
        rec.ok("resources.templates", f"{len(templates)} templates")
    except McpError as exc:
        if exc.code == rpc.METHOD_NOT_FOUND:
            rec.warn("resources.templates", "templates/list not implemented (-32601)")
        else:
            rec.fail("resources.templates", str(exc))
    except TrimcpError as exc:
        rec.failed("resources.templates", exc, str(exc))
    if not resources:
        rec.skip("resources.read", "the server lists no resources")
    for resource in resources[:50]:
        try:
            result = await client.read_resource(resource.uri)
        except TrimcpError as exc:
            rec.failed("resources.read", exc, f"{resource.uri}: {exc}")
            continue
        if not result.contents:
            rec.warn("resources.read", f"{resource.uri}: no contents")
        else:
            rec.ok("resources.read", f"read {min(len(resources), 50)} resources")
    await _unknown_resource(rec, client, revision)


async def _unknown_resource(rec: Results, client: ClientSession, revision: str) -> None:
    stateless = get_revision(revision).era is Era.STATELESS
    try:
        await client.read_resource(UNKNOWN_URI)
        rec.fail("resources.unknown", "an unknown URI was read successfully")
    except McpError as exc:
        if stateless:
            if exc.code == rpc.INVALID_PARAMS:
                rec.ok("resources.unknown", f"error {exc.code}")
            elif exc.code == rpc.RESOURCE_NOT_FOUND_LEGACY:
                rec.fail("resources.unknown", f"error -32002, which {revision} servers must not emit (use -32602)")
            else:
                rec.fail("resources.unknown", f"error {exc.code}, {revision} requires -32602")
        elif exc.code in (rpc.RESOURCE_NOT_FOUND_LEGACY, rpc.INVALID_PARAMS):
            rec.ok("resources.unknown", f"error {exc.code}")
        else:
            rec.warn("resources.unknown", f"error {exc.code}, the spec names -32002")
    except RemoteProtocolError as exc:
        rec.fail("resources.unknown", f"an unknown URI got an invalid answer: {exc}")


async def _prompts(tour: Tour) -> None:
    rec, client, revision = tour.rec, tour.client, tour.revision
    caps = client.server_capabilities
    try:
        prompts = await client.list_prompts()
        rec.ok("prompts.list", f"{len(prompts)} prompts")
    except TrimcpError as exc:
        rec.failed("prompts.list", exc, str(exc))
        return
    if not prompts:
        rec.skip("prompts.get", "the server lists no prompts")
    # 2024-11-05 has no completions capability: completion/complete is simply there or not.
    can_complete = "completions" in caps or not get_revision(revision).completions_capability
    for prompt in prompts[:50]:
        args = await prompt_arguments(client, can_complete, prompt)
        try:
            result = await client.get_prompt(prompt.name, args.values or None)
            rec.ok("prompts.get", f"fetched {min(len(prompts), 50)} prompts")
            if not result.messages:
                rec.warn("prompts.get", f"{prompt.name}: no messages")
        except McpError as exc:
            # Values the server never suggested may be refused, whatever code it picks for
            # "bad argument"; with its own suggestions, -32602 is still a fair answer.
            if args.invented and (
                exc.code in (rpc.INVALID_PARAMS, rpc.INTERNAL_ERROR) or any(name in exc.message for name in args.values)
            ):
                rec.skip(
                    "prompts.get",
                    f"{prompt.name}: the server refused the arguments the harness made up "
                    f"({args.describe()}): {exc.message}",
                )
            elif args.values and exc.code == rpc.INVALID_PARAMS:
                rec.skip("prompts.get", f"{prompt.name}: arguments {args.values} refused with -32602")
            else:
                (rec.warn if args.values else rec.fail)("prompts.get", f"{prompt.name} {args.values or ''}: {exc}")
        except TrimcpError as exc:
            rec.failed("prompts.get", exc, f"{prompt.name}: {exc}")
    if can_complete:
        await _complete(rec, client, prompts, "completions" in caps)
    else:
        rec.skip("completion.complete", "the server does not advertise completions")


async def _complete(rec: Results, client: ClientSession, prompts: list[s.Prompt], advertised: bool) -> None:
    target = next((p for p in prompts if p.arguments), None)
    if target is None or not target.arguments:
        rec.skip("completion.complete", "no prompt with arguments to complete")
        return
    try:
        done = await client.complete({"type": "ref/prompt", "name": target.name}, target.arguments[0].name, "")
        rec.ok("completion.complete", f"{len(done.completion.values)} values")
    except McpError as exc:
        if not advertised and exc.code == rpc.METHOD_NOT_FOUND:
            rec.skip("completion.complete", "the server does not implement completion/complete")
        else:
            rec.fail("completion.complete", str(exc))
    except TrimcpError as exc:
        rec.failed("completion.complete", exc, str(exc))
