"""The ``trimcp`` command.

``trimcp check [--format text|json|junit|markdown] [--revision auto|REV] [URL | -- COMMAND...]``
(its own options and its run: ``check.py``)
tests a stdio server (the bundled reference server when no command is given)
or the server at an ``http(s)://`` URL (Streamable HTTP, plus the HTTP
transport checks) or a ``ws(s)://`` URL (WebSocket) and
prints the era and revision it negotiated, then one row per check; it exits 0
when no MUST check failed, else 1 (the exit statuses: below).  ``--revision`` takes any of the five
revisions (2024-11-05 .. 2026-07-28) or ``auto``, the default, which lets the
client negotiate as a dual-era client would.
``trimcp tools|resources|prompts ...`` are Inspector-style one-shot calls.

Every command that talks to a server takes its target as one URL, as a command after
``--``, or as ``--config FILE --server NAME`` (an mcpServers entry, ``server_spec.py``); with
none it runs the bundled reference server and says so on stderr; any other leftover word is
a usage error before anything starts (``targets``).  Options may come anywhere before
``--``.  ``--tool-arg K=V`` values are converted by the tool's ``inputSchema`` and
``--args-json`` gives them all at once (``arguments``); ``tools call`` and ``prompts get``
answer the server's elicitation forms in the terminal, from ``--elicit-json FILE``, or
with ``--elicit decline|cancel`` (``elicit``); ``-e`` and ``--header`` add to the
server's environment or headers; ``--connect-timeout`` (default: 30 s, or ``--timeout`` if
shorter) bounds the connect and the revision negotiation.  With ``--format json`` a
failure is one JSON line on stderr, ``{"error", "exit"}``.
``trimcp servers status [--config FILE]`` connects every server of an mcpServers file
through a ``trimcp.host`` pool and shows each one's status (``pool_status.py``).
``trimcp serve [--http|--sse|--ws HOST:PORT]`` runs the reference server (stdio by default).
``trimcp auth login|status|logout URL`` runs the OAuth flow for the server at
URL and stores its tokens, shows what is stored (scope, expiry - never a
token), or deletes them.

Authorization: when an ``http(s)://`` server answers 401, ``check`` (and
``auth login``) run the OAuth 2.1 flow - in the browser with a loopback
redirect, or with ``--headless`` by printing the authorization URL and reading
the URL the browser was redirected to from stdin.  ``check --no-auth`` instead reports "authorization required" and
exits 3.  Tokens go to the system keyring when it is usable, else stay in
memory (with a warning); ``--token-file PATH`` opts in to a private 0600 file.
A 401 is remembered for 15 minutes in the auth-needed cache
(``trimcp.oauth.AuthNeededCache``), which nothing reads yet.

Exit statuses (``exits.py`` has the one table): 0 passed, 1 failed (a MUST check; a
difference), 2 usage error, 3 authorization needed, 4 could not be checked (unreachable, or
silent), 5 the tool reported an error, 130 interrupted (Ctrl-C: one line, no traceback).  A
closed stdout (``| head``) changes none of them.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import sys
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import trio

from .. import (
    ALL_VERSIONS,
    AuthError,
    ConnectError,
    Handlers,
    HttpOptions,
    McpError,
    StdioOptions,
    Timeouts,
    TrimcpError,
    __version__,
    open_client,
)
from ..config import Redactor
from ..oauth import OAuthError, StoreUnavailable, TokenStore, UrlPolicy
from ..schema import to_wire
from .arguments import parse_args_json, parse_pairs, prompt_arguments, tool_arguments
from .check import FORMATS as CHECK_FORMATS
from .check import (
    add_check_options,
    prepare_check,
    run_check,
    run_check_many_command,
    run_requirements,
)
from .command_line import TARGET_COMMANDS, UsageError, parse, resolve_target
from .elicit import add_elicit_arguments, handler_from_args
from .exits import (
    EXIT_AUTH,
    EXIT_INTERRUPTED,
    EXIT_NOT_CHECKED,
    EXIT_OK,
    EXIT_TABLE,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    INTERRUPTED_LINE,
    run_command,
)
from .logs import show_library_errors
from .server_spec import ServerSpec, server_spec

if TYPE_CHECKING:
    from ..oauth import AuthorizeCallback, OAuthProvider

DEFAULT_REDIRECT_URI = "http://127.0.0.1:33418/callback"
REFERENCE_SERVER = [sys.executable, "-m", "trimcp.reference"]


CHECK_EXAMPLES = """examples:
  trimcp check                                   the bundled reference server
  trimcp check -- npx -y @modelcontextprotocol/server-everything stdio
  trimcp check http://127.0.0.1:8000/mcp --format json
  trimcp check --config .mcp.json --server time --revision 2025-06-18
  trimcp check --config .mcp.json                every server of the file, one summary table
  trimcp check --record recordings/ -- python my_server.py"""
AUTH_EXAMPLES = """examples:
  trimcp auth login https://mcp.example.com/mcp
  trimcp auth status https://mcp.example.com/mcp --token-file tokens.json"""
TOOLS_EXAMPLES = """examples:
  trimcp tools list -- python my_server.py
  trimcp tools call echo --tool-arg message=42 -- python my_server.py
  trimcp tools call add http://127.0.0.1:8000/mcp --args-json '{"a": 1, "b": 2}'
  trimcp tools list --config .mcp.json --server time -e TZ=UTC"""
RESOURCES_EXAMPLES = """examples:
  trimcp resources list http://127.0.0.1:8000/mcp
  trimcp resources read test://static-text -- python my_server.py"""
PROMPTS_EXAMPLES = """examples:
  trimcp prompts list --config .mcp.json --server notes
  trimcp prompts get review --prompt-arg file=main.py -- python my_server.py"""


class _Parser(argparse.ArgumentParser):
    #: ``--format json`` is on the command line: errors are one JSON line too.
    json_errors = False

    def error(self, message: str) -> NoReturn:
        if _Parser.json_errors:
            self.exit(EXIT_USAGE, _json_error(f"{self.prog}: {message}", EXIT_USAGE))
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _json_error(message: str, code: int) -> str:
    return json.dumps({"error": message, "exit": code}, ensure_ascii=False) + "\n"


def _wants_json(argv: Sequence[str]) -> bool:
    """``--format json`` (or ``--format=json``) before any ``--``."""
    own = list(argv)[: list(argv).index("--")] if "--" in argv else list(argv)
    return "--format=json" in own or any(a == "--format" and b == "json" for a, b in itertools.pairwise(own))


def _subcommand(sub: Any, name: str, help: str, examples: str) -> argparse.ArgumentParser:
    """A subcommand whose help ends with its examples, as written, and the exit statuses."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        epilog=f"{examples}\n\n{EXIT_TABLE}" if examples else EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _build_parser_tree() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="trimcp",
        description="Trio-native Model Context Protocol toolkit",
        epilog=EXIT_TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"trimcp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def target_opts(
        p: argparse.ArgumentParser, metavar: str = "URL", formats: Sequence[str] = ("text", "json")
    ) -> None:
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
        p.add_argument(
            "words",
            nargs="*",
            metavar=metavar,
            help="the server URL (http://, https://, ws://, wss://); a server command "
            "goes after --; with neither, the bundled reference server runs",
        )

    def auth_opts(p: argparse.ArgumentParser) -> None:
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

    check = _subcommand(sub, "check", "test a server against the MCP specification", CHECK_EXAMPLES)
    target_opts(check, formats=CHECK_FORMATS)
    auth_opts(check)
    add_check_options(check)  # the check command's own options: check.py

    auth = _subcommand(sub, "auth", "log in to, inspect or log out of an OAuth-protected server", AUTH_EXAMPLES)
    auth.add_argument("action", choices=("login", "status", "logout"))
    auth.add_argument("url", help="the MCP server URL (http:// or https://)")
    auth.add_argument("--revision", choices=("auto", *ALL_VERSIONS), default="auto")
    auth.add_argument("--timeout", type=float, default=30.0, help="per-request timeout, seconds")
    auth_opts(auth)

    tools = _subcommand(sub, "tools", "list or call tools", TOOLS_EXAMPLES)
    tools.add_argument("action", choices=("list", "call"))
    tools.add_argument(
        "--tool-arg",
        action="append",
        default=[],
        metavar="K=V",
        help="a tool argument, converted by the tool's inputSchema: a string stays "
        "text, numbers and booleans are parsed, objects and arrays are JSON",
    )
    tools.add_argument(
        "--args-json", metavar="JSON", help="all tool arguments as one JSON object (--tool-arg values override)"
    )
    add_elicit_arguments(tools)
    target_opts(tools, "[NAME] URL")

    resources = _subcommand(sub, "resources", "list or read resources", RESOURCES_EXAMPLES)
    resources.add_argument("action", choices=("list", "templates", "read"))
    target_opts(resources, "[URI] URL")

    prompts = _subcommand(sub, "prompts", "list or get prompts", PROMPTS_EXAMPLES)
    prompts.add_argument("action", choices=("list", "get"))
    prompts.add_argument(
        "--prompt-arg", action="append", default=[], metavar="K=V", help="a prompt argument (always a string)"
    )
    prompts.add_argument(
        "--args-json",
        metavar="JSON",
        help="all prompt arguments as one JSON object of strings (--prompt-arg overrides)",
    )
    add_elicit_arguments(prompts)
    target_opts(prompts, "[NAME] URL")

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


def _build_parser() -> argparse.ArgumentParser:
    return _build_parsers()[0]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse offers no public way back to its subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the trimcp parser has subcommands")


def _build_parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = _build_parser_tree()
    return parser, _subparsers(parser)


def _timeouts(ns: argparse.Namespace) -> None:
    if ns.connect_timeout is None:
        # A silent server must not outlast the --timeout the user asked for.
        ns.connect_timeout = min(30.0, ns.timeout) if ns.timeout > 0 else 30.0
    if ns.connect_timeout <= 0:
        raise UsageError("--connect-timeout must be a positive number of seconds")


def _read_command_line(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The namespace and the server command; every usage error is raised here, before any I/O."""
    parser, subparsers = _build_parsers()
    ns, trailing = parse(parser, subparsers, argv)
    if ns.command not in TARGET_COMMANDS:
        return ns, trailing
    if ns.command == "check":
        prepare_check(ns, trailing)
        if ns.requirements:
            return ns, []
        if ns.config is not None and ns.server is None:
            # check --config FILE [NAME...]: every (or each named) server of the file (check_many.py).
            if trailing:
                raise UsageError("check --config FILE takes server NAMEs, not a command after --")
            if ns.auth_tokens.secrets():
                # Tokens belong to one resource: handed over for a whole file, they would be sent
                # to servers they were never issued for.
                if len(ns.words) != 1:
                    raise UsageError(
                        "the --auth-token options hold one server's tokens: name that server (check --config FILE NAME)"
                    )
                ns.server, ns.words = ns.words[0], []  # one server: checked as --server NAME
            else:
                ns.many = list(ns.words)
                _timeouts(ns)
                return ns, []
    target = resolve_target(ns, trailing)
    # Only a call or a get can make the server ask the user; a bad --elicit-json is a usage error now.
    asks_user = (ns.command, getattr(ns, "action", None)) in (("tools", "call"), ("prompts", "get"))
    ns.elicitation = handler_from_args(ns) if asks_user else None
    if ns.command == "tools":
        ns.raw_args = parse_pairs(ns.tool_arg, "--tool-arg")
        ns.base_args = parse_args_json(ns.args_json)
    elif ns.command == "prompts":
        ns.raw_args = parse_pairs(ns.prompt_arg, "--prompt-arg")
        ns.base_args = prompt_arguments(parse_args_json(ns.args_json), {})
    _timeouts(ns)
    spec = server_spec(ns, target)
    if spec is None or not spec.target:
        # Say it: a forgotten or misread target must not pass for a real server.
        sys.stderr.write(
            "trimcp: no server given; running the bundled reference server "
            "(give a URL, a command after --, or --config FILE --server NAME)\n"
        )
        spec = ServerSpec(REFERENCE_SERVER, env=spec.env if spec is not None else None)
    ns.spec = spec
    ns.redact = spec.redact  # every error the command reports goes through it (main)
    return ns, spec.target


def _emit(ns: argparse.Namespace, value: Any) -> None:
    if ns.format == "json":
        json.dump(value, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    if isinstance(value, list):
        for item in value:
            desc = (item.get("description") or "").splitlines()[0:1]
            sys.stdout.write(f"{_headline(item)}{'  - ' + desc[0] if desc else ''}\n")
        return
    for block in value.get("content", []) + value.get("contents", []) + value.get("messages", []):
        block = block.get("content", block)
        sys.stdout.write((block.get("text") if isinstance(block.get("text"), str) else json.dumps(block)) + "\n")
    if "structuredContent" in value:
        sys.stdout.write(json.dumps(value["structuredContent"], indent=2) + "\n")


def _headline(item: dict[str, Any]) -> str:
    """One listed item in text mode: a tool with its parameters (``?``: optional), a resource
    with its URI, a prompt with its arguments."""
    if "inputSchema" in item:
        schema = item["inputSchema"] if isinstance(item["inputSchema"], dict) else {}
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = set(schema.get("required") or [])
        params = ", ".join(f"{name}{'' if name in required else '?'}: {_type_of(spec)}" for name, spec in props.items())
        return f"{item['name']}  ({params})"
    if "uri" in item or "uriTemplate" in item:
        return f"{item.get('uri') or item.get('uriTemplate')}  {item.get('name', '')}".rstrip()
    if "arguments" in item:
        args = ", ".join(f"{a.get('name')}{'' if a.get('required') else '?'}" for a in item["arguments"] or [])
        return f"{item['name']}  ({args})"
    return str(item.get("name"))


def _type_of(spec: object) -> str:
    kind = spec.get("type") if isinstance(spec, dict) else None
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    return str(kind) if kind else "any"


# --------------------------------------------------------------------------- OAuth


async def _mark_auth_needed(url: str) -> None:
    from ..oauth import AuthNeededCache

    with contextlib.suppress(OSError):
        await AuthNeededCache().mark(url)


def _store(ns: argparse.Namespace) -> TokenStore:
    from ..oauth import FileStore, MemoryStore, default_store

    if ns.token_file:
        return FileStore(ns.token_file)
    # default_store warns through logging, which the CLI may have silenced: say it here.
    store = default_store()
    if isinstance(store, MemoryStore):
        sys.stderr.write(
            "trimcp: no usable system keyring; OAuth tokens are kept in memory only "
            "(pass --token-file PATH to keep them)\n"
        )
    return store


async def _headless_authorize(url: str) -> str:
    """Print the authorization URL; read the URL the browser was redirected to from stdin."""
    sys.stderr.write(
        f"Open this URL in a browser and authorize trimcp:\n\n    {url}\n\n"
        "then paste the full URL the browser was redirected to:\n"
    )
    sys.stderr.flush()
    line = str(await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True))
    if not line.strip():
        raise OAuthError("access_denied", "no redirect URL was entered")
    return line.strip()


@contextlib.asynccontextmanager
async def _authorizer(ns: argparse.Namespace) -> AsyncIterator[tuple[AuthorizeCallback, str]]:
    """The user agent: the loopback redirect in a browser, or (``--headless``) the prompt."""
    if ns.headless:
        yield _headless_authorize, str(ns.redirect_uri)
        return
    from ..oauth import interactive_authorizer, open_loopback_callback

    async with open_loopback_callback() as callback:
        yield interactive_authorizer(callback), str(callback.redirect_uri)


def _url_policy(ns: argparse.Namespace) -> UrlPolicy:
    """``--oauth-allow-private`` / ``--oauth-allow-http`` (the check and auth commands')."""
    return UrlPolicy(allow_private=ns.oauth_allow_private, allow_http=ns.oauth_allow_http)


@contextlib.asynccontextmanager
async def _provider(ns: argparse.Namespace, url: str) -> AsyncIterator[OAuthProvider]:
    from ..oauth import OAuthProvider

    store = _store(ns)
    async with _authorizer(ns) as (authorize, redirect_uri):
        provider = OAuthProvider(
            authorize=authorize,
            redirect_uri=redirect_uri,
            store=store,
            revision=_revision(ns),
            url_policy=_url_policy(ns),
        )
        provider.bind(url)
        yield provider


def _describe(url: str, tokens: Any) -> str:
    parts = [f"{url}: logged in"]
    parts.append(f"scope: {tokens.scope}" if tokens.scope else "scope: (none granted explicitly)")
    if tokens.expires_at is None:
        parts.append("expiry: not stated")
    else:
        left = tokens.expires_at - time.time()
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(tokens.expires_at))
        parts.append(f"expires {stamp} ({f'in {int(left // 60)} min' if left > 0 else 'expired'})")
    parts.append("refresh token: " + ("yes" if tokens.refresh_token else "no"))
    return "; ".join(parts)


async def _auth(ns: argparse.Namespace) -> int:
    url = str(ns.url)
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"auth needs an http:// or https:// URL, not {url!r}")
    if ns.action == "status":
        from ..oauth import OAuthProvider

        provider = OAuthProvider(authorize=_headless_authorize, store=_store(ns))
        provider.bind(url)
        tokens = await provider.stored_tokens()
        if tokens is None:
            sys.stdout.write(f"{url}: not logged in\n")
            return EXIT_AUTH
        sys.stdout.write(_describe(url, tokens) + "\n")
        return EXIT_OK
    if ns.action == "logout":
        from ..oauth import OAuthProvider

        provider = OAuthProvider(authorize=_headless_authorize, store=_store(ns))
        provider.bind(url)
        had = await provider.forget()
        sys.stdout.write(f"{url}: {'logged out' if had else 'was not logged in'}\n")
        return EXIT_OK
    from ..conformance import ProbeError, probe_unauthenticated

    try:
        probe = await probe_unauthenticated(url, ns.timeout)
    except ProbeError as exc:
        raise ConnectError(str(exc)) from None
    if probe.status == 401:
        await _mark_auth_needed(url)
    async with _provider(ns, url) as provider:
        try:
            async with open_client(url, revision=_revision(ns), timeouts=Timeouts(request=ns.timeout), auth=provider):
                pass
        except TrimcpError as exc:
            if probe.status != 401 or await provider.stored_tokens() is not None:
                raise
            sys.stderr.write(f"trimcp: authorization failed: {exc}\n")
            return EXIT_AUTH
        tokens = await provider.stored_tokens()
    if tokens is None:
        sys.stdout.write(f"{url}: the server did not ask for authorization; nothing stored\n")
        return EXIT_OK
    from ..oauth import AuthNeededCache

    with contextlib.suppress(OSError):
        await AuthNeededCache().clear(url)
    sys.stdout.write(_describe(url, tokens) + "\n")
    return EXIT_OK


def _revision(ns: argparse.Namespace) -> str | None:
    return None if ns.revision == "auto" else str(ns.revision)


async def _inspect(ns: argparse.Namespace, command: list[str]) -> int:
    # A failure is reported once, as the command's one line; the transport's own warnings
    # about the same failure would only repeat it.
    spec: ServerSpec = ns.spec
    show_library_errors(spec.redact)
    async with open_client(
        spec.open_target,
        revision=_revision(ns),
        transport=spec.transport,
        timeouts=Timeouts(request=ns.timeout, connect=ns.connect_timeout),
        stdio=StdioOptions(env=spec.env, cwd=spec.cwd),
        http=HttpOptions(headers=spec.headers),
        handlers=Handlers(elicitation=ns.elicitation),
    ) as client:
        if ns.command == "tools":
            if ns.action == "list":
                _emit(ns, [to_wire(t) for t in await client.list_tools()])
                return EXIT_OK
            schema = None
            if ns.raw_args:
                # The schema says what each --tool-arg text means; without it (a tool the
                # list does not show) each value is read as JSON when it parses.
                listed = {t.name: t for t in await client.list_tools()}
                if ns.name in listed:
                    schema = to_wire(listed[ns.name]).get("inputSchema")
            result = await client.call_tool(ns.name, tool_arguments(ns.base_args, ns.raw_args, schema))
            _emit(ns, to_wire(result))
            return EXIT_TOOL_ERROR if result.is_error else EXIT_OK
        if ns.command == "resources":
            if ns.action == "list":
                _emit(ns, [to_wire(r) for r in await client.list_resources()])
            elif ns.action == "templates":
                _emit(ns, [to_wire(r) for r in await client.list_resource_templates()])
            else:
                _emit(ns, to_wire(await client.read_resource(ns.uri)))
            return EXIT_OK
        if ns.action == "list":
            _emit(ns, [to_wire(p) for p in await client.list_prompts()])
        else:
            arguments = prompt_arguments(ns.base_args, ns.raw_args)
            _emit(ns, to_wire(await client.get_prompt(ns.name, arguments)))
        return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """The ``trimcp`` command: its exit status (``exits.py``); Ctrl-C is one line and 130."""
    args = sys.argv[1:] if argv is None else list(argv)
    line = _json_error("interrupted", EXIT_INTERRUPTED) if _wants_json(args) else INTERRUPTED_LINE
    return run_command(lambda: _main(args), line)


def _main(args: list[str]) -> int:
    as_json = _Parser.json_errors = _wants_json(args)
    ns: argparse.Namespace | None = None

    def fail(message: str, code: int) -> int:
        # A command that read a config file set ns.redact: its errors quote what the
        # transports were given, the expansions of the file's ${VAR}s.
        redact: Redactor | None = getattr(ns, "redact", None)
        if redact is not None:
            message = redact(message)
        sys.stderr.write(_json_error(message, code) if as_json else f"trimcp: {message}\n")
        return code

    try:
        ns, command = _read_command_line(args)
    except UsageError as exc:
        return fail(str(exc), EXIT_USAGE)
    if ns.command == "serve":
        from .serve import run_serve

        return run_serve(ns)
    try:
        if ns.command == "servers":
            from .pool_status import run_servers

            return run_servers(ns)
        if ns.command == "auth":
            return trio.run(_auth, ns)
        if ns.command in ("replay", "diff"):
            from . import evidence

            return evidence.run_replay(ns) if ns.command == "replay" else trio.run(evidence.run_diff, ns)
        if ns.command == "check":
            if ns.requirements:
                return run_requirements(ns)
            if getattr(ns, "many", None) is not None:
                return trio.run(run_check_many_command, ns)
            return trio.run(run_check, ns, command, _provider, _mark_auth_needed)
        return trio.run(_inspect, ns, command)
    except (ValueError, UsageError) as exc:
        return fail(str(exc), EXIT_USAGE)
    except OAuthError as exc:  # an AuthError: catch it first for its own words
        return fail(f"authorization failed: {exc}", EXIT_AUTH)
    except AuthError as exc:
        return fail(f"authorization needed: {exc}", EXIT_AUTH)
    except StoreUnavailable as exc:
        return fail(f"cannot use the token store: {exc}", EXIT_USAGE)
    except ConnectError as exc:
        return fail(f"cannot reach the server: {exc}", EXIT_NOT_CHECKED)
    except McpError as exc:
        return fail(f"the server answered with an error: {exc}", EXIT_TOOL_ERROR)
    except TrimcpError as exc:
        return fail(f"{type(exc).__name__}: {exc}", EXIT_NOT_CHECKED)


if __name__ == "__main__":
    sys.exit(main())
