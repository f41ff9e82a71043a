"""``trimcp check --config FILE [NAME...]``: check many servers of an mcpServers file at once.

Theory of operation
-------------------
Without ``--server``, ``check --config FILE`` checks every server of the file
(or the NAMEs given), concurrently: at most 3 stdio servers and 8 remote ones
at a time (a stdio check spawns a process per probe, so more would only slow
each one down on a small machine).  Every server gets the whole catalogue, as
``trimcp check`` would give it alone; a disabled entry is listed and not run,
an entry the file cannot express (a config error, an OAuth or headersHelper
entry the CLI cannot authorize) is a row with its error.  While it runs, stderr
gets one line per server as it finishes; then stdout gets one summary table
(or, with ``--format json``, every report).  Exit 1 when any server failed a
MUST check (or, with ``--fail-on should``, a SHOULD), else 4 when one could not
be reached or run or never answered (a ``silent`` row: ``exits.not_checked``, the
same rule as ``trimcp check``), else 0.

A row's error and report are redacted when the row is made (the file's
``Redactor``: a value a ``${VAR}`` took shows as ``${VAR}``), so the progress
lines, the table, the JSON and ``--record``'s files carry none.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import attrs
import trio

from .. import ConnectError, TrimcpError
from ..config import ConfigError, load_config
from ..conformance import Report, Status, connector_for, run_checks, shown_status
from .command_line import UsageError
from .exits import EXIT_FAILED, EXIT_NOT_CHECKED, EXIT_OK, not_checked
from .server_spec import ServerSpec, from_config

__all__ = ["Row", "run_check_many"]

STDIO_AT_ONCE, REMOTE_AT_ONCE = 3, 8
#: The states of a server that could not be checked (exit 4).
NOT_CHECKED = ("unreachable", "silent", "error")


@attrs.define
class Row:
    name: str
    #: ``checked``, ``disabled``, ``unreachable``, ``silent`` (a report that judged nothing) or ``error``.
    state: str
    report: Report | None = None
    error: str = ""

    def counts(self) -> dict[str, int]:
        results = self.report.results if self.report is not None else []
        # A best-practice finding counts as a warning, as in every report.
        return {st.value: sum(1 for r in results if shown_status(r.level, r.status) is st) for st in Status}

    def verdict(self, failed: Callable[[Report], bool]) -> str:
        if self.report is None or self.state != "checked":
            return self.state if not self.error else f"{self.state}: {self.error}"
        return "FAILED" if failed(self.report) else "ok"


def _names(path: str, wanted: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    try:
        config = load_config(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    redact = config.redactor()
    known = [*config.servers, *config.errors]
    if not known:
        raise UsageError(f"{path}: defines no servers")
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise UsageError(f"{path}: no server {unknown[0]!r} (known: {', '.join(sorted(known))})")
    disabled = {n: "disabled" for n, entry in config.servers.items() if entry.disabled}
    errors = {n: redact(str(exc)) for n, exc in config.errors.items()}
    return list(wanted) or known, {**disabled, **errors}


async def run_check_many(
    path: str,
    wanted: Sequence[str],
    *,
    revision: str | None,
    request_timeout: float,
    connect_timeout: float,
    failed: Callable[[Report], bool] = lambda report: not report.ok,
    progress: TextIO | None = None,
    record_http: bool = False,
    **policy: Any,
) -> list[Row]:
    """One ``Row`` per server, in the file's order (or the order of ``wanted``);
    ``record_http`` keeps the HTTP evidence for ``--record`` (``connector_for``)."""
    names, blocked = _names(path, wanted)
    rows = {name: Row(name, "pending") for name in names}
    for name, why in blocked.items():
        if name in rows:
            rows[name] = Row(name, "disabled" if why == "disabled" else "error", error="" if why == "disabled" else why)
    specs: dict[str, ServerSpec] = {}
    for name, row in rows.items():
        if row.state != "pending":
            continue
        try:
            specs[name] = from_config(path, name)
        except UsageError as exc:  # (the file's words: nothing expanded is quoted)
            rows[name] = Row(name, "error", error=str(exc))
    stdio, remote = trio.CapacityLimiter(STDIO_AT_ONCE), trio.CapacityLimiter(REMOTE_AT_ONCE)
    done = 0

    async def one(name: str, spec: ServerSpec) -> None:
        nonlocal done
        async with remote if spec.is_url else stdio:
            connect = connector_for(
                spec.target,
                connect_timeout=connect_timeout,
                env=spec.env,
                cwd=spec.cwd,
                headers=spec.headers,
                transport=spec.transport,
                record_http=record_http,
            )
            redact = spec.redact
            try:
                report = await run_checks(
                    connect,
                    target=name,
                    revision=revision,
                    request_timeout=request_timeout,
                    connect_timeout=connect_timeout,
                    **policy,
                )
                report = redact.value(report)
                silent = not_checked(report)
                # A server that never answered is "not checked" (exit 4), its report kept.
                rows[name] = (
                    Row(name, "checked", report) if silent is None else Row(name, "silent", report, error=silent)
                )
            except ConnectError as exc:
                rows[name] = Row(name, "unreachable", error=redact(" ".join(str(exc).split())))
            except TrimcpError as exc:
                rows[name] = Row(name, "error", error=redact(f"{type(exc).__name__}: {exc}"))
            except ValueError as exc:  # a target the transport cannot use (a ws:// URL's bad port)
                rows[name] = Row(name, "error", error=redact(f"invalid target: {exc}"))
        done += 1
        if progress is not None:
            progress.write(f"trimcp: [{done}/{len(specs)}] {name}: {rows[name].verdict(failed)}\n")
            progress.flush()

    async with trio.open_nursery() as nursery:
        for name, spec in specs.items():
            nursery.start_soon(one, name, spec)
    return list(rows.values())


def exit_code(rows: Sequence[Row], failed: Callable[[Report], bool]) -> int:
    """1 when a checked server failed, else 4 when one was not checked, else 0 (``exits.py``)."""
    if any(r.state == "checked" and r.report is not None and failed(r.report) for r in rows):
        return EXIT_FAILED
    if any(r.state in NOT_CHECKED for r in rows):
        return EXIT_NOT_CHECKED
    return EXIT_OK


def print_rows(rows: Sequence[Row], out: TextIO, failed: Callable[[Report], bool]) -> None:
    header = ("server", "transport", "revision", "pass", "fail", "warn", "skip", "MUST fails", "verdict")
    table: list[tuple[str, ...]] = [header]
    for row in rows:
        counts, report = row.counts(), row.report
        table.append(
            (
                row.name,
                (report.transport or "?") if report else "-",
                (report.revision or "-") if report else "-",
                *(str(counts[k]) if report else "-" for k in ("pass", "fail", "warn", "skip")),
                str(len(report.must_failures)) if report else "-",
                row.verdict(failed),
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    out.writelines(
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False)) + f"  {line[-1]}\n" for line in table
    )
    checked = [r.report for r in rows if r.report is not None and r.state == "checked"]
    bad = sum(1 for report in checked if failed(report))
    out.write(
        f"\n{len(rows)} servers: {len(checked) - bad} ok, {bad} failed, "
        f"{sum(1 for r in rows if r.state in NOT_CHECKED)} not checked, "
        f"{sum(1 for r in rows if r.state == 'disabled')} disabled\n"
    )


def print_rows_json(rows: Sequence[Row], out: TextIO, path: str, failed: Callable[[Report], bool]) -> None:
    doc: dict[str, Any] = {
        "config": path,
        "ok": exit_code(rows, failed) == 0,
        "servers": [
            {
                "name": r.name,
                "state": r.state,
                "error": r.error or None,
                "report": r.report.to_json() if r.report is not None else None,
            }
            for r in rows
        ],
    }
    json.dump(doc, out, indent=2)
    out.write("\n")
