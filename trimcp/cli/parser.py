"""The ``trimcp`` command line's parsers: every subcommand, its help, and "did you mean".

Theory of operation
-------------------
One ``argparse`` tree.  ``tools``, ``resources`` and ``prompts`` have one parser per
action (``tools list``, ``tools call``, ...), so ``trimcp tools call --help`` explains
the tool ``NAME`` and the options a call takes, and ``trimcp tools --help`` lists the
actions; every parser that talks to a server explains the forms its target takes
(``TARGET_FORMS``).  ``command_line.parse`` dispatches to the action's parser itself,
since argparse cannot intermix options and positionals in a parser that has subparsers.

``Parser`` is argparse's parser with three changes: a mistyped choice (a command, an
action, a ``--format``) or option gets "did you mean" (``difflib``, as Python 3.14's
``suggest_on_error`` does, here on every Python); with ``--format json`` on the
command line a usage error is one JSON line, ``{"error", "exit"}``; and the exit
status of a usage error is the table's (``exits.py``).
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn

from .. import ALL_VERSIONS, __version__
from .exits import EXIT_TABLE, EXIT_USAGE

__all__ = [
    "DEFAULT_REDIRECT_URI",
    "Parser",
    "ParserTree",
    "build_parsers",
    "closest",
    "json_error",
]

DEFAULT_REDIRECT_URI = "http://127.0.0.1:33418/callback"

#: How every command that talks to a server is told which one (every such ``--help`` shows it).
TARGET_FORMS = """the server, one of:
  URL                          http:// or https:// (Streamable HTTP; HTTP+SSE for a 2024-11-05
                               server), ws:// or wss:// (WebSocket); servers usually serve at
                               a path such as /mcp: http://127.0.0.1:8000/mcp
  -- COMMAND [ARG ...]         a stdio server: everything after -- is its command line, verbatim
  --config FILE --server NAME  the entry NAME of an mcpServers file (.mcp.json,
                               claude_desktop_config.json) or VS Code's mcp.json
  (none of them)               the bundled reference server; trimcp says so on stderr
options may come anywhere before --."""

CHECK_EXAMPLES = """examples:
  trimcp check                                   the bundled reference server
  trimcp check -- npx -y @modelcontextprotocol/server-everything stdio
  trimcp check http://127.0.0.1:8000/mcp --format json
  trimcp check http://127.0.0.1:8000/mcp --format html --output report.html
  trimcp check --config .mcp.json --server time --revision 2025-06-18
  trimcp check --config .mcp.json                every server of the file, one summary table
  trimcp check --record recordings/ -- python my_server.py"""
AUTH_EXAMPLES = """examples:
  trimcp auth login https://mcp.example.com/mcp
  trimcp auth status https://mcp.example.com/mcp --token-file tokens.json"""
TOOLS_EXAMPLES = """examples:
  trimcp tools list -- python my_server.py
  trimcp tools list --config .mcp.json           every server's tools, as an agent sees them
  trimcp tools call echo --tool-arg message=42 -- python my_server.py
  trimcp tools call add http://127.0.0.1:8000/mcp --args-json '{"a": 1, "b": 2}'"""
TOOLS_LIST_EXAMPLES = """examples:
  trimcp tools list -- python my_server.py
  trimcp tools list http://127.0.0.1:8000/mcp --format json
  trimcp tools list --config .mcp.json --server time -e TZ=UTC
  trimcp tools list --config .mcp.json           every server: mcp__time__get_current_time, ..."""
TOOLS_CALL_EXAMPLES = """examples:
  trimcp tools call echo --tool-arg message=42 -- python my_server.py
  trimcp tools call add http://127.0.0.1:8000/mcp --args-json '{"a": 1, "b": 2}'
  trimcp tools call screenshot --save shots/ --config .mcp.json --server browser
  trimcp tools call slow --progress always -- python my_server.py 2> progress.log"""
RESOURCES_EXAMPLES = """examples:
  trimcp resources list http://127.0.0.1:8000/mcp
  trimcp resources templates -- python my_server.py
  trimcp resources read test://static-text -- python my_server.py
  trimcp resources read file:///logo.png --save out/ -- python my_server.py"""
PROMPTS_EXAMPLES = """examples:
  trimcp prompts list --config .mcp.json --server notes
  trimcp prompts get review --prompt-arg file=main.py -- python my_server.py"""


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` closest to ``word`` (a typo of it), or ``None`` when none is close."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def json_error(message: str, code: int) -> str:
    return json.dumps({"error": message, "exit": code}, ensure_ascii=False) + "\n"


class Parser(argparse.ArgumentParser):
    #: ``--format json`` is on the command line: errors are one JSON line too.
    json_errors = False

    def error(self, message: str) -> NoReturn:
        if Parser.json_errors:
            self.exit(EXIT_USAGE, json_error(f"{self.prog}: {message}", EXIT_USAGE))
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse's own check, and "did you mean" for a choice mistyped (a command, an action,
        # a --format): the one hook argparse calls for every choice.
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            if isinstance(value, str) and action.choices is not None and "did you mean" not in str(exc.message):
                near = closest(value, [str(c) for c in action.choices])
                if near is not None:
                    raise argparse.ArgumentError(action, f"{exc.message} (did you mean {near!r}?)") from None
            raise

    def parse_intermixed_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_intermixed_args(args, namespace)
        if extras:
            self.error(self._unrecognized(extras))
        return ns

    def _unrecognized(self, extras: list[str]) -> str:
        message = f"unrecognized arguments: {' '.join(extras)}"
        for extra in extras:
            if extra.startswith("-"):
                near = closest(extra.partition("=")[0], self._option_string_actions)
                if near is not None:
                    return f"{message} (did you mean {near}?)"
        return message


def _subcommand(sub: Any, name: str, help: str, examples: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose help ends with its examples, as written, and the exit statuses."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        epilog=f"{examples}\n\n{EXIT_TABLE}" if examples else EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )
    return parser


def _actions(parser: argparse.ArgumentParser, what: str) -> Any:
    return parser.add_subparsers(
        dest="action", required=True, metavar="ACTION", title=what, parser_class=Parser, prog=parser.prog
    )


def target_opts(p: argparse.ArgumentParser, words: str = "URL", formats: Sequence[str] = ("text", "json")) -> None:
    """The options of every command that talks to one server, and its positional words
    (``words`` names them in the help: ``URL``, ``NAME [URL]``, ``URI [URL]``)."""
    p.add_argument("--format", choices=formats, default="text")
    p.add_argument(
        "--revision",
        choices=("auto", *ALL_VERSIONS),
        default="auto",
        help="the protocol revision to speak; auto (default) negotiates: server/discover, "
        "then initialize for a handshake-era server",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="per-request timeout, seconds")
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="give up connecting (and negotiating a revision) after this long "
        "(default: 30, or --timeout if that is shorter); a server that does "
        "not answer in time exits 4",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="an mcpServers file (.mcp.json, claude_desktop_config.json) or VS Code "
        "mcp.json; with --server NAME, the entry to use; ${VAR} is expanded",
    )
    p.add_argument("--server", metavar="NAME", help="the server entry of --config to use")
    p.add_argument(
        "-e",
        "--env",
        action="append",
        default=[],
        metavar="KEY=VAL",
        help="an environment variable for a stdio server (repeatable)",
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header for a server URL (repeatable)",
    )
    p.add_argument("words", nargs="*", metavar=words, help=argparse.SUPPRESS)


def _auth_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--token-file",
        metavar="PATH",
        help="keep OAuth tokens in this private (0600) JSON file instead of the keyring",
    )
    p.add_argument(
        "--headless", action="store_true", help="print the authorization URL and read the redirect URL from stdin"
    )
    p.add_argument(
        "--redirect-uri",
        default=DEFAULT_REDIRECT_URI,
        help=f"the redirect URI registered in headless mode (default {DEFAULT_REDIRECT_URI})",
    )
    p.add_argument(
        "--oauth-allow-private",
        action="store_true",
        help="let OAuth reach private, link-local and other non-public addresses that "
        "the server's metadata names (an authorization server on the company "
        "network); refused by default",
    )
    p.add_argument(
        "--oauth-allow-http",
        action="store_true",
        help="let OAuth use plain http:// authorization server URLs beyond loopback "
        "(the spec requires https); refused by default",
    )


def _output_opts(p: argparse.ArgumentParser, what: str) -> None:
    """How a result is printed: ``--raw`` and ``--save DIR`` (``render.py``)."""
    p.add_argument(
        "--raw",
        action="store_true",
        help=f"print {what} whole: every block in full (images and audio as base64) and the "
        "structured content even when a text block already says it",
    )
    p.add_argument(
        "--save",
        metavar="DIR",
        help="write each image, audio clip and binary resource to a file in DIR (created if "
        "missing); the output names the file",
    )


def _force_opt(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--force",
        action="store_true",
        help=f"send even if the server does not list {what} or its schema has no such argument",
    )


def _action(
    sub: Any, name: str, help: str, examples: str, usage: str, slot: str | None = None
) -> argparse.ArgumentParser:
    """One action of tools/resources/prompts: its usage line and the target forms explained."""
    paragraphs = [f"{help}.", *([slot] if slot is not None else [])]
    description = "".join(textwrap.fill(text, 88) + "\n\n" for text in paragraphs)
    return _subcommand(sub, name, help, examples, usage=usage, description=description + TARGET_FORMS)


def _tools(sub: Any) -> None:
    tools = _subcommand(
        sub,
        "tools",
        "list or call tools",
        TOOLS_EXAMPLES,
        usage="%(prog)s {list,call} ... (trimcp tools ACTION --help for each)",
        description="list a server's tools, or call one.\n\n" + TARGET_FORMS,
    )
    actions = _actions(tools, "actions")
    listing = _action(
        actions,
        "list",
        "list the server's tools: name, parameters (? for optional) and description; with "
        "--config FILE and no --server, every server's tools under the names an agent sees "
        "(mcp__SERVER__TOOL)",
        TOOLS_LIST_EXAMPLES,
        "%(prog)s [options] [URL | -- COMMAND ... | --config FILE [--server NAME]]",
    )
    target_opts(listing)
    call = _action(
        actions,
        "call",
        "call one tool and print its result: each content block once, images and audio "
        "summarised, the structured content when no text block already says it",
        TOOLS_CALL_EXAMPLES,
        "%(prog)s NAME [options] [URL | -- COMMAND ... | --config FILE --server NAME]",
        slot="NAME is the tool's name, as `trimcp tools list` shows it; a name the server does "
        "not list is refused (with the closest one it does), and so is an argument its "
        "inputSchema does not name, unless --force.",
    )
    call.add_argument(
        "--tool-arg",
        action="append",
        default=[],
        metavar="K=V",
        help="a tool argument, converted by the tool's inputSchema: a string stays "
        "text, numbers and booleans are parsed, objects and arrays are JSON",
    )
    call.add_argument(
        "--args-json", metavar="JSON", help="all tool arguments as one JSON object (--tool-arg values override)"
    )
    _force_opt(call, "the tool")
    _output_opts(call, "the result")
    call.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="a line on stderr while the tool reports progress: auto (default) on a terminal, "
        "rewritten in place; always: also to a pipe or file, one line per report",
    )
    from .elicit import add_elicit_arguments

    add_elicit_arguments(call)
    target_opts(call, "NAME [URL]")


def _resources(sub: Any) -> None:
    resources = _subcommand(
        sub,
        "resources",
        "list or read resources",
        RESOURCES_EXAMPLES,
        usage="%(prog)s {list,templates,read} ... (trimcp resources ACTION --help for each)",
        description="list a server's resources or resource templates, or read one.\n\n" + TARGET_FORMS,
    )
    actions = _actions(resources, "actions")
    target_opts(
        _action(
            actions,
            "list",
            "list the server's resources: URI, name and description",
            RESOURCES_EXAMPLES,
            "%(prog)s [options] [URL | -- COMMAND ... | --config FILE --server NAME]",
        )
    )
    target_opts(
        _action(
            actions,
            "templates",
            "list the server's resource templates (URI templates, RFC 6570)",
            RESOURCES_EXAMPLES,
            "%(prog)s [options] [URL | -- COMMAND ... | --config FILE --server NAME]",
        )
    )
    read = _action(
        actions,
        "read",
        "read one resource and print its contents: text as it is, binary summarised",
        RESOURCES_EXAMPLES,
        "%(prog)s URI [options] [URL | -- COMMAND ... | --config FILE --server NAME]",
        slot="URI is the resource's URI, as `trimcp resources list` shows it (or one a "
        "template makes); when the server refuses it, the closest URIs it lists are named.",
    )
    _output_opts(read, "the contents")
    target_opts(read, "URI [URL]")


def _prompts(sub: Any) -> None:
    prompts = _subcommand(
        sub,
        "prompts",
        "list or get prompts",
        PROMPTS_EXAMPLES,
        usage="%(prog)s {list,get} ... (trimcp prompts ACTION --help for each)",
        description="list a server's prompts, or get one.\n\n" + TARGET_FORMS,
    )
    actions = _actions(prompts, "actions")
    target_opts(
        _action(
            actions,
            "list",
            "list the server's prompts: name, arguments (? for optional) and description",
            PROMPTS_EXAMPLES,
            "%(prog)s [options] [URL | -- COMMAND ... | --config FILE --server NAME]",
        )
    )
    get = _action(
        actions,
        "get",
        "get one prompt and print its messages",
        PROMPTS_EXAMPLES,
        "%(prog)s NAME [options] [URL | -- COMMAND ... | --config FILE --server NAME]",
        slot="NAME is the prompt's name, as `trimcp prompts list` shows it; a name the server "
        "does not list is refused (with the closest one it does), and so is an argument the "
        "prompt does not declare, unless --force.",
    )
    get.add_argument(
        "--prompt-arg", action="append", default=[], metavar="K=V", help="a prompt argument (always a string)"
    )
    get.add_argument(
        "--args-json",
        metavar="JSON",
        help="all prompt arguments as one JSON object of strings (--prompt-arg overrides)",
    )
    _force_opt(get, "the prompt")
    _output_opts(get, "the messages")
    from .elicit import add_elicit_arguments

    add_elicit_arguments(get)
    target_opts(get, "NAME [URL]")


def _build_tree() -> argparse.ArgumentParser:
    parser = Parser(
        prog="trimcp",
        description="Trio-native Model Context Protocol toolkit",
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"trimcp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    check = _subcommand(
        sub,
        "check",
        "test a server against the MCP specification",
        CHECK_EXAMPLES,
        usage="%(prog)s [options] [URL | -- COMMAND ... | --config FILE [--server NAME]]",
        description="test a server against the MCP specification, check by check.\n\n"
        + TARGET_FORMS
        + "\nwith --config FILE and no --server, every server of the file (or the NAMEs given).",
    )
    from .check import FORMATS as CHECK_FORMATS
    from .check import add_check_options

    target_opts(check, formats=CHECK_FORMATS)
    _auth_opts(check)
    add_check_options(check)  # the check command's own options: check.py

    auth = _subcommand(sub, "auth", "log in to, inspect or log out of an OAuth-protected server", AUTH_EXAMPLES)
    auth.add_argument("action", choices=("login", "status", "logout"))
    auth.add_argument("url", help="the MCP server URL (http:// or https://)")
    auth.add_argument("--revision", choices=("auto", *ALL_VERSIONS), default="auto")
    auth.add_argument("--timeout", type=float, default=30.0, help="per-request timeout, seconds")
    _auth_opts(auth)

    _tools(sub)
    _resources(sub)
    _prompts(sub)

    from . import pool_status

    pool_status.add_arguments(
        _subcommand(
            sub,
            "servers",
            "connect every server of an mcpServers file and show each one's status",
            pool_status.EXAMPLES,
        )
    )

    from . import evidence

    evidence.add_replay_arguments(
        _subcommand(
            sub,
            "replay",
            "validate a recording of trimcp check --record again, offline",
            evidence.REPLAY_EXAMPLES,
        )
    )
    evidence.add_diff_arguments(
        _subcommand(
            sub,
            "diff",
            "compare two servers' surfaces: tools and their schemas, resources, prompts, capabilities",
            evidence.DIFF_EXAMPLES,
        )
    )

    from .serve import add_serve_arguments

    add_serve_arguments(
        _subcommand(
            sub,
            "serve",
            "run the bundled reference server (stdio, or --http/--sse/--ws HOST:PORT)",
            "",
        )
    )
    return parser


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of ``parser``'s subcommands (``{}`` when it has none)."""
    for action in parser._actions:  # argparse offers no public way back to its subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class ParserTree:
    """The top parser, each subcommand's, and each action's (``tools`` -> ``list``, ``call``)."""

    def __init__(self) -> None:
        self.top = _build_tree()
        self.commands: Mapping[str, argparse.ArgumentParser] = _choices(self.top)
        self.actions: Mapping[str, Mapping[str, argparse.ArgumentParser]] = {
            name: found for name, parser in self.commands.items() if (found := _choices(parser))
        }


def build_parsers() -> ParserTree:
    return ParserTree()
