"""``trimcp check``: its options, and running it.

Theory of operation
-------------------
``add_check_options`` adds the check subcommand's own options to its parser
(the target options are the ones every target command shares,
``commands.py``).  ``prepare_check`` reads and validates them before anything
starts: an ``--only`` / ``--skip`` pattern that matches no check, an
unreadable ``--expected-failures`` file or an unknown id in it, or a target
given with ``--requirements`` are usage errors (exit 2) here.

``run_requirements`` prints the requirements catalogue's coverage and
contacts nothing.  ``run_check`` tests the target: it probes an HTTP target
for a 401 (and runs OAuth, ``commands._provider``), runs the checks with the
selection and, on a terminal, a progress line on stderr, judges the report
(``conformance/expected.py``: ``--fail-on``, ``--expected-failures``) and
writes it in the chosen format (``text`` with colour on a terminal, ``json``
in the ``trimcp-check/1`` schema, ``junit``, ``markdown``, ``html``: one
self-contained page) to stdout or to
``--output FILE``; with ``--output`` the summary line still goes to stdout.
Exit status (the table: ``exits.py``): 0 when the verdict is ok, 1 when not (a
MUST failure, a SHOULD one with ``--fail-on should``, a stale expected failure),
3 authorization needed, 4 not checked: unreachable (``TargetUnreachable``, no
report) or silent (``exits.not_checked``: the report is written, then one line on
stderr, and the summary line, the report's own and ``--output``'s, says "NOT CHECKED: why";
a URL whose path answers 404 gets a hint there, ``failures.missing_path_hint``).

The checks run against the real target (a URL with its query, a command line
with its arguments); the report is redacted as soon as it is made, with the
spec's ``Redactor`` (a ``--config`` entry's ``${VAR}`` values show as
``${VAR}``), so every format, the summary and ``--record``'s files carry none.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import ALL_VERSIONS
from ..config import Redactor
from .command_line import UsageError
from .exits import EXIT_AUTH, EXIT_FAILED, EXIT_NOT_CHECKED, EXIT_OK, not_checked
from .logs import show_library_errors
from .server_spec import ServerSpec, file_redactor

# The conformance package (its catalogue, checks, reporters, and through its raw HTTP probe
# h11) is imported by the functions that run a check, not with the parser every command
# builds: ``trimcp serve`` and ``trimcp call`` do not pay for it.
if TYPE_CHECKING:
    from ..conformance import AuthTokens, Report
    from ..oauth import OAuthProvider

__all__ = ["FORMATS", "add_check_options", "prepare_check", "run_check", "run_check_many_command", "run_requirements"]

FORMATS = ("text", "json", "junit", "markdown", "html")
FAIL_ON = ("must", "should")
#: ``commands._provider``: the OAuth provider for a URL, as an async context manager.
ProviderFactory = Callable[[argparse.Namespace, str], AbstractAsyncContextManager["OAuthProvider"]]


def add_check_options(check: argparse.ArgumentParser) -> None:
    check.add_argument(
        "--no-auth",
        action="store_true",
        help="do not authorize: a server answering 401 is reported as needing authorization (exit 3)",
    )
    check.add_argument("--output", metavar="FILE", help="write the report to FILE; stdout gets only the summary line")
    check.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text report: auto (default) on a terminal unless NO_COLOR is set",
    )
    check.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="ID|GLOB",
        help="run only the checks matching this id or glob (http.*); repeatable",
    )
    check.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="ID|GLOB",
        help="report the checks matching this id or glob as skipped; repeatable",
    )
    check.add_argument(
        "--expected-failures",
        metavar="FILE",
        help="check ids known to fail (a JSON list, or one id a line, # comments): they do not "
        "fail the run, and one that passes fails it as stale",
    )
    check.add_argument(
        "--show-skipped",
        action="store_true",
        help="text report: list the skipped checks row by row, not one count per reason",
    )
    check.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="must",
        help="must (default): a failed MUST fails the run; should: a failed or warned SHOULD too",
    )
    check.add_argument(
        "--requirements",
        action="store_true",
        help="contact no server: print how many of the spec's sentences the checks cover, "
        "per revision (--revision) and level",
    )
    # The tool-calling policy (conformance/checks/tool_calls.py).
    check.add_argument(
        "--call-tools",
        choices=("none", "read-only", "all"),
        default="read-only",
        help="which tools to call: none; those annotated readOnlyHint (default); or all, including "
        "tools that may change the server's world (your choice: only on a server safe to exercise)",
    )
    check.add_argument(
        "--probe-tools",
        type=_count,
        default=1,
        metavar="N",
        help="how many valid example argument sets, generated from its inputSchema, each callable tool "
        "is called with (default 1: the minimal one; more fill optional properties, other enum "
        "members, boundary numbers, formats); 0 calls no tool",
    )
    check.add_argument(
        "--no-open-world",
        dest="open_world",
        action="store_false",
        help="with --call-tools read-only, do not call tools annotated openWorldHint true",
    )
    check.add_argument(
        "--record",
        metavar="DIR",
        help="keep the conversation: DIR/<revision>/<server>.jsonl in the spec/ corpus format "
        "(trimcp replay, trimcp diff read it)",
    )
    check.add_argument(
        "-v",
        "--list",
        dest="list_uncovered",
        action="store_true",
        help="with --requirements: list the sentences no check covers",
    )
    _add_token_options(check)


#: The tokens only the user can hand over (conformance/checks/auth_binding.py): option, field, help.
_TOKEN_OPTIONS = (
    ("--auth-token", "valid", "a valid access token: the run uses it instead of OAuth (identity A of the task check)"),
    ("--auth-token-other-resource", "other_resource", "a token issued for another resource (audience): must get 401"),
    ("--auth-token-expired", "expired", "an expired token: must get 401"),
    ("--auth-token-insufficient-scope", "insufficient_scope", "a token lacking a scope: should get 403"),
    ("--auth-token-second", "second", "a valid token of a second identity: must not see identity A's tasks"),
)


def _add_token_options(check: argparse.ArgumentParser) -> None:
    for option, field, text in _TOKEN_OPTIONS:
        check.add_argument(
            option,
            dest=f"auth_token_{field}",
            metavar="TOKEN|env:VAR|@FILE",
            help=text + " (env:VAR or @FILE keep it out of the shell history; every report hides it)",
        )


def _read_token(option: str, value: str | None) -> str | None:
    """A token option's value: as given, from the environment (``env:VAR``) or a file (``@FILE``)."""
    if value is None:
        return None
    if value.startswith("env:"):
        name = value[4:]
        token = os.environ.get(name, "").strip()
        if not token:
            raise UsageError(f"{option} {value}: the environment variable {name} is not set or empty")
        return token
    if value.startswith("@"):
        try:
            token = Path(value[1:]).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise UsageError(f"cannot read {option} {value}: {exc.strerror or exc}") from None
        if not token:
            raise UsageError(f"{option} {value}: the file is empty")
        return token
    if not value.strip():
        raise UsageError(f"{option}: empty token")
    return value.strip()


def _auth_tokens(ns: argparse.Namespace) -> AuthTokens:
    from ..conformance import AuthTokens

    return AuthTokens(
        **{field: _read_token(option, getattr(ns, f"auth_token_{field}", None)) for option, field, _ in _TOKEN_OPTIONS}
    )


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def prepare_check(ns: argparse.Namespace, trailing: list[str]) -> None:
    """Validate the check options; every mistake is a ``UsageError`` before any I/O."""
    if ns.requirements:
        if ns.words or trailing:
            raise UsageError("--requirements contacts no server: give no URL or command")
        if ns.format not in ("text", "json"):
            raise UsageError("--requirements prints text or json, not --format " + ns.format)
        return
    if ns.list_uncovered:
        raise UsageError("-v/--list goes with --requirements")
    from ..conformance import CATALOG, Selection, read_expected

    ns.selection = Selection(tuple(ns.only), tuple(ns.skip))
    ns.auth_tokens = _auth_tokens(ns)
    unknown = ns.selection.unknown_patterns(CATALOG)
    if unknown:
        raise UsageError(f"--only/--skip {unknown[0]!r} matches no check (see `trimcp check --format json`)")
    try:
        ns.expected = read_expected(ns.expected_failures, CATALOG) if ns.expected_failures else frozenset()
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run_requirements(ns: argparse.Namespace) -> int:
    from ..conformance import write_requirements_coverage

    revisions = ALL_VERSIONS if ns.revision == "auto" else (ns.revision,)
    with _destination(ns) as out:
        write_requirements_coverage(revisions, out, as_json=ns.format == "json", listing=ns.list_uncovered)
    if ns.output:
        sys.stdout.write(f"requirements coverage written to {ns.output}\n")
    return EXIT_OK


@contextlib.contextmanager
def _destination(ns: argparse.Namespace) -> Iterator[TextIO]:
    if not ns.output:
        yield sys.stdout
        return
    try:
        with open(ns.output, "w", encoding="utf-8") as out:
            yield out
    except OSError as exc:
        raise UsageError(f"cannot write --output {ns.output}: {exc.strerror or exc}") from None


async def run_check(
    ns: argparse.Namespace,
    command: list[str],
    open_provider: ProviderFactory,
    mark_auth_needed: Callable[[str], Awaitable[None]],
) -> int:
    """Check the target; ``open_provider`` and ``mark_auth_needed`` are the OAuth steps ``trimcp
    auth login`` shares (``commands.py``)."""
    from ..conformance import (
        Progress,
        connector_for,
        is_url,
        judge,
        print_report,
        run_checks,
        summary_line,
        use_color,
        write_html,
        write_json,
        write_junit,
        write_markdown,
    )

    spec: ServerSpec = ns.spec
    tokens: AuthTokens = ns.auth_tokens
    # The tokens handed over are hidden like a config file's secrets, everywhere.
    redact = spec.redact.merge(Redactor(tokens.secrets()))
    # The report names every protocol issue; the client's own warnings would only repeat them.
    show_library_errors(redact)

    unauthorized = None
    needs_auth = False
    if is_url(command) and command[0].startswith(("http://", "https://")):
        from ..conformance import ProbeError, probe_unauthenticated

        url = command[0]
        try:
            unauthorized = await probe_unauthenticated(url, ns.timeout)
        except ProbeError:
            unauthorized = None  # the run reports the server unreachable
        needs_auth = unauthorized is not None and unauthorized.status == 401
        if needs_auth:
            await mark_auth_needed(url)
            if ns.no_auth:
                sys.stderr.write(
                    redact(
                        f"trimcp: authorization required by {url} (run without "
                        f"--no-auth, or `trimcp auth login {url}` first)\n"
                    )
                )
                return EXIT_AUTH
    progress = Progress(sys.stderr)
    try:
        async with contextlib.AsyncExitStack() as stack:
            # --auth-token stands in for OAuth: the run sends it as it is.
            oauth = needs_auth and tokens.valid is None
            provider = await stack.enter_async_context(open_provider(ns, command[0])) if oauth else None
            headers = spec.headers
            if needs_auth and tokens.valid is not None:
                headers = {**(headers or {}), "Authorization": f"Bearer {tokens.valid}"}
            connect = connector_for(
                command,
                connect_timeout=ns.connect_timeout,
                auth=provider,
                env=spec.env,
                cwd=spec.cwd,
                headers=headers,
                transport=spec.transport,
                record_http=bool(ns.record),
            )
            report = await run_checks(
                connect,
                target=" ".join(command),
                revision=None if ns.revision == "auto" else str(ns.revision),
                request_timeout=ns.timeout,
                connect_timeout=ns.connect_timeout,
                auth=provider,
                unauthorized=unauthorized,
                selection=ns.selection,
                on_result=progress,
                auth_tokens=tokens,
                **_policy(ns),
            )
    finally:
        progress.close()
    report = redact.value(report)  # before anything renders it: every format is then clean
    verdict = judge(report, fail_on=ns.fail_on, expected=ns.expected)
    if ns.record:
        _record(ns.record, report)
    with _destination(ns) as out:
        if ns.format == "json":
            write_json(report, out, verdict)
        elif ns.format == "junit":
            write_junit(report, out, verdict)
        elif ns.format == "markdown":
            write_markdown(report, out, verdict)
        elif ns.format == "html":
            write_html(report, out, verdict)
        else:
            print_report(
                report,
                out,
                color=use_color(ns.color, out),
                verdict=verdict,
                show_skipped=getattr(ns, "show_skipped", False),
            )
    unchecked = None if needs_auth else not_checked(report)
    if ns.output:
        sys.stdout.write(summary_line(report, verdict) + f" (report: {ns.output})\n")
    if needs_auth and report.revision is None:
        sys.stderr.write("trimcp: authorization failed; see the auth.* checks\n")
        return EXIT_AUTH
    if unchecked is not None:
        if unauthorized is not None and unauthorized.status == 404:
            # The URL's path is not the endpoint: say where the server may be instead.
            from .failures import missing_path_hint

            hint = await missing_path_hint(command[0], min(5.0, ns.connect_timeout), spec.headers)
            unchecked += f"; {hint}" if hint else ""
        message = redact(f"could not be checked: {unchecked}")
        # (--format json: a failure is one JSON line on stderr, as main writes its own)
        sys.stderr.write(
            json.dumps({"error": message, "exit": EXIT_NOT_CHECKED}) + "\n"
            if ns.format == "json"
            else f"trimcp: {message}\n"
        )
        return EXIT_NOT_CHECKED
    return EXIT_OK if verdict.ok else EXIT_FAILED


def _policy(ns: argparse.Namespace) -> dict[str, Any]:
    """The tool-calling policy options, as ``run_checks`` keywords."""
    return {"call_tools": ns.call_tools, "probe_tools": ns.probe_tools, "open_world": ns.open_world}


def _record(folder: str, report: Report) -> None:
    from ..conformance import write_transcript

    meta = {
        "target": report.target,
        "transport": report.transport,
        "era": report.era,
        "revision": report.revision,
        "server_info": report.server_info,
    }
    try:
        path = write_transcript(Path(folder), report.conversation, meta)
    except OSError as exc:
        raise UsageError(f"cannot write --record {folder}: {exc.strerror or exc}") from None
    sys.stderr.write(f"trimcp: recorded {len(report.conversation)} messages in {path}\n")


async def run_check_many_command(ns: argparse.Namespace) -> int:
    """``check --config FILE [NAME...]``: the file's servers, concurrently, one summary table."""
    from ..conformance import judge
    from .check_many import exit_code, print_rows, print_rows_json, run_check_many

    ns.redact = file_redactor(ns.config)  # the rows and reports are redacted by their specs'
    show_library_errors(ns.redact)
    expected = ns.expected

    def failed(report: Report) -> bool:
        return not judge(report, fail_on=ns.fail_on, expected=expected).ok

    rows = await run_check_many(
        ns.config,
        ns.many,
        revision=None if ns.revision == "auto" else str(ns.revision),
        request_timeout=ns.timeout,
        connect_timeout=ns.connect_timeout,
        failed=failed,
        progress=sys.stderr,
        record_http=bool(ns.record),
        **_policy(ns),
    )
    if ns.record:
        for row in rows:
            if row.report is not None:
                _record(ns.record, row.report)
    with _destination(ns) as out:
        if ns.format == "json":
            print_rows_json(rows, out, ns.config, failed)
        else:
            print_rows(rows, out, failed)
    return exit_code(rows, failed)
