"""The ``trimcp`` command.

``trimcp check [--format text|json|junit|markdown|html] [--revision auto|REV] [URL | -- COMMAND...]``
(its own options and its run: ``check.py``)
tests a stdio server (the bundled reference server when no command is given)
or the server at an ``http(s)://`` URL (Streamable HTTP, plus the HTTP
transport checks) or a ``ws(s)://`` URL (WebSocket) and
prints the era and revision it negotiated, then one row per check; it exits 0
when no MUST check failed, else 1 (the exit statuses: below).  ``--revision`` takes any of the five
revisions (2024-11-05 .. 2026-07-28) or ``auto``, the default, which lets the
client negotiate as a dual-era client would.
``trimcp tools|resources|prompts ACTION ...`` are Inspector-style one-shot calls
(``inspector.py``; printed by ``render.py``); ``tools list --config FILE`` lists every
server of the file as an agent sees them (``pool_tools.py``).  The parsers, their help
and "did you mean" are ``parser.py``'s.

Every command that talks to a server takes its target as one URL, as a command after
``--``, or as ``--config FILE --server NAME`` (an mcpServers entry, ``server_spec.py``); with
none it runs the bundled reference server and says so on stderr; any other leftover word is
a usage error before anything starts (``targets``).  Options may come anywhere before
``--``.  ``--tool-arg K=V`` values are converted by the tool's ``inputSchema`` and
``--args-json`` gives them all at once (``arguments``); ``tools call`` and ``prompts get``
answer the server's elicitation forms in the terminal, from ``--elicit-json FILE``, or
with ``--elicit decline|cancel`` (``elicit``); ``-e`` and ``--header`` add to the
server's environment or headers; ``--connect-timeout`` (default: 30 s, or ``--timeout`` if
shorter) bounds the connect and the revision negotiation.  A failure is one line on
stderr (``failures.py``); with ``--format json`` one JSON line, ``{"error", "exit"}``.
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
import sys
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import trio

from .. import (
    AuthError,
    ConnectError,
    McpError,
    Timeouts,
    TrimcpError,
    open_client,
)
from ..config import Redactor
from ..oauth import OAuthError, StoreUnavailable, TokenStore, UrlPolicy
from .arguments import parse_args_json, parse_pairs, prompt_arguments
from .check import (
    prepare_check,
    run_check,
    run_check_many_command,
    run_requirements,
)
from .command_line import TARGET_COMMANDS, UsageError, parse, resolve_target
from .elicit import handler_from_args
from .exits import (
    EXIT_AUTH,
    EXIT_INTERRUPTED,
    EXIT_NOT_CHECKED,
    EXIT_OK,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    INTERRUPTED_LINE,
    run_command,
)
from .failures import one_line
from .parser import Parser, ParserTree, build_parsers, json_error
from .render import saver_for
from .server_spec import ServerSpec, server_spec

if TYPE_CHECKING:
    from ..oauth import AuthorizeCallback, OAuthProvider

REFERENCE_SERVER = [sys.executable, "-m", "trimcp.reference"]


def _wants_json(argv: Sequence[str]) -> bool:
    """``--format json`` (or ``--format=json``) before any ``--``."""
    own = list(argv)[: list(argv).index("--")] if "--" in argv else list(argv)
    return "--format=json" in own or any(a == "--format" and b == "json" for a, b in itertools.pairwise(own))


def _build_parsers() -> ParserTree:
    """Every parser of the command line (``parser.py``)."""
    return build_parsers()


def _build_parser() -> argparse.ArgumentParser:
    """The top-level parser."""
    return build_parsers().top


def _timeouts(ns: argparse.Namespace) -> None:
    if ns.connect_timeout is None:
        # A silent server must not outlast the --timeout the user asked for.
        ns.connect_timeout = min(30.0, ns.timeout) if ns.timeout > 0 else 30.0
    if ns.connect_timeout <= 0:
        raise UsageError("--connect-timeout must be a positive number of seconds")


def _read_command_line(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The namespace and the server command; every usage error is raised here, before any I/O."""
    ns, trailing = parse(_build_parsers(), argv)
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
    if (ns.command, getattr(ns, "action", None)) == ("tools", "list") and ns.config is not None and ns.server is None:
        # tools list --config FILE: every server of the file, as an agent sees them (pool_tools.py).
        if ns.words or trailing or ns.env or ns.header:
            raise UsageError(
                "tools list --config FILE lists every server of the file; name one with --server NAME "
                "to give a URL, a command, -e or --header"
            )
        _timeouts(ns)
        ns.every_server = True
        return ns, []
    target = resolve_target(ns, trailing)
    # Only a call or a get can make the server ask the user; a bad --elicit-json is a usage error now.
    action = (ns.command, getattr(ns, "action", None))
    asks_user = action in (("tools", "call"), ("prompts", "get"))
    ns.elicitation = handler_from_args(ns) if asks_user else None
    if action == ("tools", "call"):
        ns.raw_args = parse_pairs(ns.tool_arg, "--tool-arg")
        ns.base_args = parse_args_json(ns.args_json)
    elif action == ("prompts", "get"):
        ns.raw_args = parse_pairs(ns.prompt_arg, "--prompt-arg")
        ns.base_args = prompt_arguments(parse_args_json(ns.args_json), {})
    if getattr(ns, "save", None) is not None:
        # --save DIR is made now: a folder that cannot be is a usage error before anything starts.
        ns.saver = saver_for(ns.save, str(getattr(ns, "name", None) or getattr(ns, "uri", None) or "output"))
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


def main(argv: Sequence[str] | None = None) -> int:
    """The ``trimcp`` command: its exit status (``exits.py``); Ctrl-C is one line and 130."""
    args = sys.argv[1:] if argv is None else list(argv)
    line = json_error("interrupted", EXIT_INTERRUPTED) if _wants_json(args) else INTERRUPTED_LINE
    return run_command(lambda: _main(args), line)


def _main(args: list[str]) -> int:
    as_json = Parser.json_errors = _wants_json(args)
    ns: argparse.Namespace | None = None

    def fail(message: str, code: int) -> int:
        # A command that read a config file set ns.redact: its errors quote what the
        # transports were given, the expansions of the file's ${VAR}s.
        redact: Redactor | None = getattr(ns, "redact", None)
        if redact is not None:
            message = redact(message)
        sys.stderr.write(json_error(message, code) if as_json else f"trimcp: {message}\n")
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
        if getattr(ns, "every_server", False):
            from .pool_tools import run_pool_tools

            return trio.run(run_pool_tools, ns)
        from .inspector import run_inspect

        return trio.run(run_inspect, ns)
    except (ValueError, UsageError) as exc:
        return fail(str(exc), EXIT_USAGE)
    except OAuthError as exc:  # an AuthError: catch it first for its own words
        return fail(f"authorization failed: {exc}", EXIT_AUTH)
    except AuthError as exc:
        return fail(f"authorization needed: {exc}", EXIT_AUTH)
    except StoreUnavailable as exc:
        return fail(f"cannot use the token store: {exc}", EXIT_USAGE)
    except ConnectError as exc:
        # The library's words say what failed and where (cannot connect to URL, cannot start
        # COMMAND, the server exited with status N, no answer within N s): nothing to add.
        return fail(one_line(exc), EXIT_NOT_CHECKED)
    except McpError as exc:
        return fail(f"the server answered with an error: {one_line(exc)}", EXIT_TOOL_ERROR)
    except TrimcpError as exc:
        return fail(f"{type(exc).__name__}: {one_line(exc)}", EXIT_NOT_CHECKED)


if __name__ == "__main__":
    sys.exit(main())
