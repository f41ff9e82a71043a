"""``trimcp tools|resources|prompts ...``: one-shot calls to one server, as the MCP Inspector makes them.

Theory of operation
-------------------
One ``open_client`` to the server the command line names (``server_spec.py``), one
listing or one call, printed (``render.py``), and the exit status (``exits.py``).

Before a call the server's list is read, so a mistake is caught before it is sent:
a tool or prompt name the server does not list is a usage error naming the closest
one it does ("did you mean"), and so is an argument the tool's ``inputSchema`` (or
the prompt's argument list) does not name (``arguments.refuse_unknown``);
``--force`` sends either anyway (a server may accept what it does not list).  The
list also gives the schema that converts each ``--tool-arg``.  A resource is read
directly (a template can make URIs no list shows); when the server refuses the URI,
the closest URIs it lists are named in the error.  A server URL that cannot be used
gets a hint when its path answers 404 (``failures.missing_path_hint``).

``tools call`` shows the progress the tool reports on stderr (``progress.py``), and
``--save DIR`` / ``--raw`` shape how the answer is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from .. import ConnectError, Handlers, HttpOptions, McpError, StdioOptions, Timeouts, open_client
from ..schema import to_wire
from .arguments import declared_names, prompt_arguments, refuse_unknown, tool_arguments
from .command_line import UsageError
from .exits import EXIT_OK, EXIT_TOOL_ERROR
from .failures import missing_path_hint, one_line
from .logs import show_library_errors
from .parser import closest
from .progress import CallProgress
from .render import print_listing, print_result
from .server_spec import ServerSpec

__all__ = ["run_inspect"]


def _revision(ns: argparse.Namespace) -> str | None:
    return None if ns.revision == "auto" else str(ns.revision)


def _emit(ns: argparse.Namespace, value: Any) -> None:
    if ns.format == "json":
        json.dump(value, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif isinstance(value, list):
        print_listing(value, sys.stdout)
    else:
        print_result(value, sys.stdout, raw=getattr(ns, "raw", False), saver=getattr(ns, "saver", None))


def _unknown(what: str, name: str, listed: Sequence[str], listing: str) -> UsageError:
    near = closest(name, listed)
    hint = f' (did you mean "{near}"?)' if near is not None else ""
    return UsageError(
        f'the server lists no {what} "{name}"{hint}; `trimcp {listing}` shows them; --force sends it anyway'
    )


async def _call_tool(ns: argparse.Namespace, client: Any) -> int:
    listed = {t.name: t for t in await client.list_tools()}
    tool = listed.get(ns.name)
    if tool is None and not ns.force:
        raise _unknown("tool", ns.name, list(listed), "tools list")
    # The schema says what each --tool-arg text means; without it (a tool the list does not
    # show, sent with --force) each value is read as JSON when it parses.
    schema = to_wire(tool).get("inputSchema") if tool is not None else None
    arguments = tool_arguments(ns.base_args, ns.raw_args, schema)
    if not ns.force:
        refuse_unknown(f'tool "{ns.name}"', list(arguments), declared_names(schema))
    progress = CallProgress(sys.stderr, ns.progress, ns.name)
    try:
        result = await client.call_tool(ns.name, arguments, on_progress=progress)
    finally:
        progress.close()
    _emit(ns, to_wire(result))
    return EXIT_TOOL_ERROR if result.is_error else EXIT_OK


async def _get_prompt(ns: argparse.Namespace, client: Any) -> int:
    arguments = prompt_arguments(ns.base_args, ns.raw_args)
    if not ns.force:
        listed = {p.name: p for p in await client.list_prompts()}
        prompt = listed.get(ns.name)
        if prompt is None:
            raise _unknown("prompt", ns.name, list(listed), "prompts list")
        declared = [a.name for a in prompt.arguments or ()]
        refuse_unknown(f'prompt "{ns.name}"', list(arguments), declared)
    _emit(ns, to_wire(await client.get_prompt(ns.name, arguments)))
    return EXIT_OK


async def _read_resource(ns: argparse.Namespace, client: Any) -> int:
    try:
        result = await client.read_resource(ns.uri)
    except McpError as exc:
        # Name the closest URIs the server lists (a template's URIs it cannot list).
        try:
            uris = [r.uri for r in await client.list_resources()]
        except McpError:
            raise exc from None
        near = closest(ns.uri, uris)
        if near is None:
            raise
        raise McpError(exc.code, f"{exc.message} (did you mean {near}?)", exc.data) from None
    _emit(ns, to_wire(result))
    return EXIT_OK


async def run_inspect(ns: argparse.Namespace) -> int:
    """The command's one list or call; its exit status."""
    # A failure is reported once, as the command's one line; the transport's own warnings
    # about the same failure would only repeat it.
    spec: ServerSpec = ns.spec
    show_library_errors(spec.redact)
    try:
        async with open_client(
            spec.open_target,
            revision=_revision(ns),
            transport=spec.transport,
            timeouts=Timeouts(request=ns.timeout, connect=ns.connect_timeout),
            stdio=StdioOptions(env=spec.env, cwd=spec.cwd),
            http=HttpOptions(headers=spec.headers),
            handlers=Handlers(elicitation=ns.elicitation),
        ) as client:
            return await _run(ns, client)
    except ConnectError as exc:
        url = spec.target[0] if spec.is_url else ""
        hint = await missing_path_hint(url, min(5.0, ns.connect_timeout), spec.headers) if url else None
        if hint is None:
            raise
        raise ConnectError(f"{one_line(exc)}; {hint}") from exc


async def _run(ns: argparse.Namespace, client: Any) -> int:
    if (ns.command, ns.action) == ("tools", "call"):
        return await _call_tool(ns, client)
    if (ns.command, ns.action) == ("prompts", "get"):
        return await _get_prompt(ns, client)
    if (ns.command, ns.action) == ("resources", "read"):
        return await _read_resource(ns, client)
    lister: Any = {
        ("tools", "list"): client.list_tools,
        ("resources", "list"): client.list_resources,
        ("resources", "templates"): client.list_resource_templates,
        ("prompts", "list"): client.list_prompts,
    }[(ns.command, ns.action)]
    _emit(ns, [to_wire(item) for item in await lister()])
    return EXIT_OK
