"""The ``trimcp`` command.

``trimcp check [--format json] [--revision auto|REV] [URL | -- COMMAND...]``
tests a stdio server (the bundled reference server when no command is given)
or the server at an ``http(s)://`` URL (Streamable HTTP, plus the HTTP
transport checks; ``ws(s)://`` when trimcp has the WebSocket transport) and
prints the era and revision it negotiated, then one row per check; it exits 0
when no MUST check failed, else 1.  ``--revision`` takes any of the five
revisions (2024-11-05 .. 2026-07-28) or ``auto``, the default, which lets the
client negotiate as a dual-era client would.
``trimcp tools|resources|prompts ...`` are Inspector-style one-shot calls.
``trimcp serve [--http|--sse|--ws HOST:PORT]`` runs the reference server (stdio by default).

Exit codes: 0 ok, 1 usage error or failed MUST check, 3 authorization needed,
4 server unreachable, 5 the tool reported an error.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import trio

from . import AuthError, ConnectError, McpError, TrimcpError, open_client, to_wire
from ._sansio.revisions import ALL_VERSIONS
from .conformance import run_checks
from .conformance.connectors import connector_for, is_url
from .conformance.console import print_json, print_table

EXIT_OK, EXIT_USAGE, EXIT_AUTH, EXIT_UNREACHABLE, EXIT_TOOL_ERROR = 0, 1, 3, 4, 5
REFERENCE_SERVER = [sys.executable, "-m", "trimcp.server.reference"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="trimcp", description="Trio-native Model Context Protocol toolkit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def target_opts(p: argparse.ArgumentParser) -> None:
        p.add_argument("--format", choices=("text", "json"), default="text")
        p.add_argument(
            "--revision", choices=("auto", *ALL_VERSIONS), default="auto",
            help="the protocol revision to speak; auto (default) negotiates: server/discover, "
                 "then initialize for a handshake-era server",
        )
        p.add_argument("--timeout", type=float, default=30.0, help="per-request timeout, seconds")
        p.add_argument("target", nargs="*",
                       help="server URL (http://, https://, ws://, wss://) or command line (after --); "
                            "default: the reference server")

    check = sub.add_parser("check", help="test a server against the MCP specification")
    target_opts(check)

    tools = sub.add_parser("tools", help="list or call tools")
    tools.add_argument("action", choices=("list", "call"))
    tools.add_argument("name", nargs="?")
    tools.add_argument("--tool-arg", action="append", default=[], metavar="K=V",
                       help="a tool argument; V is parsed as JSON when it can be")
    target_opts(tools)

    resources = sub.add_parser("resources", help="list or read resources")
    resources.add_argument("action", choices=("list", "templates", "read"))
    resources.add_argument("uri", nargs="?")
    target_opts(resources)

    prompts = sub.add_parser("prompts", help="list or get prompts")
    prompts.add_argument("action", choices=("list", "get"))
    prompts.add_argument("name", nargs="?")
    prompts.add_argument("--prompt-arg", action="append", default=[], metavar="K=V")
    target_opts(prompts)

    from .server.http_cli import add_serve_arguments

    add_serve_arguments(sub.add_parser(
        "serve", help="run the bundled reference server (stdio, or --http/--sse/--ws HOST:PORT)"
    ))
    return parser


def _split_argv(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Everything after the first ``--`` is the server command, verbatim."""
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _command(ns: argparse.Namespace, trailing: list[str]) -> list[str]:
    return trailing or list(ns.target) or REFERENCE_SERVER


def _kv(pairs: Sequence[str], *, as_json: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"expected K=V, got {pair!r}")
        if as_json:
            try:
                out[key] = json.loads(value)
                continue
            except ValueError:
                pass
        out[key] = value
    return out


def _emit(ns: argparse.Namespace, value: Any) -> None:
    if ns.format == "json":
        json.dump(value, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    if isinstance(value, list):
        for item in value:
            title = item.get("name") or item.get("uri") or item.get("uriTemplate")
            desc = (item.get("description") or "").splitlines()[0:1]
            sys.stdout.write(f"{title}{'  - ' + desc[0] if desc else ''}\n")
        return
    for block in value.get("content", []) + value.get("contents", []) + value.get("messages", []):
        block = block.get("content", block)
        sys.stdout.write((block.get("text") if isinstance(block.get("text"), str) else json.dumps(block)) + "\n")
    if "structuredContent" in value:
        sys.stdout.write(json.dumps(value["structuredContent"], indent=2) + "\n")


async def _check(ns: argparse.Namespace, command: list[str]) -> int:
    # The report names every protocol issue; the client's own warnings would only repeat them.
    logging.getLogger("trimcp").setLevel(logging.ERROR)

    connect = connector_for(command)
    report = await run_checks(connect, target=" ".join(command), revision=_revision(ns), request_timeout=ns.timeout)
    (print_json if ns.format == "json" else print_table)(report, sys.stdout)
    return EXIT_OK if report.ok else 1


def _revision(ns: argparse.Namespace) -> str | None:
    return None if ns.revision == "auto" else str(ns.revision)


async def _inspect(ns: argparse.Namespace, command: list[str]) -> int:
    target: str | list[str] = command[0] if is_url(command) else command
    async with open_client(target, revision=_revision(ns), request_timeout=ns.timeout) as client:
        if ns.command == "tools":
            if ns.action == "list":
                _emit(ns, [to_wire(t) for t in await client.list_tools()])
                return EXIT_OK
            if not ns.name:
                raise ValueError("tools call needs a tool NAME")
            result = await client.call_tool(ns.name, _kv(ns.tool_arg, as_json=True))
            _emit(ns, to_wire(result))
            return EXIT_TOOL_ERROR if result.is_error else EXIT_OK
        if ns.command == "resources":
            if ns.action == "list":
                _emit(ns, [to_wire(r) for r in await client.list_resources()])
            elif ns.action == "templates":
                _emit(ns, [to_wire(r) for r in await client.list_resource_templates()])
            else:
                if not ns.uri:
                    raise ValueError("resources read needs a URI")
                _emit(ns, to_wire(await client.read_resource(ns.uri)))
            return EXIT_OK
        if ns.action == "list":
            _emit(ns, [to_wire(p) for p in await client.list_prompts()])
        else:
            if not ns.name:
                raise ValueError("prompts get needs a prompt NAME")
            _emit(ns, to_wire(await client.get_prompt(ns.name, _kv(ns.prompt_arg, as_json=False))))
        return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    own, trailing = _split_argv(sys.argv[1:] if argv is None else argv)
    ns = _build_parser().parse_args(own)
    if ns.command == "serve":
        from .server.http_cli import run_serve

        return run_serve(ns)
    command = _command(ns, trailing)
    try:
        if ns.command == "check":
            return trio.run(_check, ns, command)
        return trio.run(_inspect, ns, command)
    except BrokenPipeError:
        # The reader of our output went away (``| head``): not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except ValueError as exc:
        sys.stderr.write(f"trimcp: {exc}\n")
        return EXIT_USAGE
    except AuthError as exc:
        sys.stderr.write(f"trimcp: authorization needed: {exc}\n")
        return EXIT_AUTH
    except ConnectError as exc:
        sys.stderr.write(f"trimcp: cannot reach the server: {exc}\n")
        return EXIT_UNREACHABLE
    except McpError as exc:
        sys.stderr.write(f"trimcp: the server answered with an error: {exc}\n")
        return EXIT_TOOL_ERROR
    except TrimcpError as exc:
        sys.stderr.write(f"trimcp: {type(exc).__name__}: {exc}\n")
        return EXIT_UNREACHABLE


if __name__ == "__main__":
    sys.exit(main())
