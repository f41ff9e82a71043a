"""``trimcp check`` for people: the report as a table on a terminal, and a progress line.

Theory of operation
-------------------
What needs reading comes first (``report_rows.ordered``): the MUST failures,
then SHOULD failures and warnings, then best-practice advice (a BEST-PRACTICE
check never shows as FAIL: its word is "advice"), each under a header line,
then the passes; one line per check: id, level, status, detail.  Under a
failed, warned or advice row its spec link (``report_rows.spec_link``) and
its evidence (one line of JSON, ``report_evidence.shown``) follow, indented,
so the sentence broken and what broke it are at hand.  The skips close the
list as one line per reason ("12 skipped: not in 2025-11-25");
``show_skipped`` (``--show-skipped``) lists them row by row instead.  With
``--only`` only the selected checks appear.  Every row line starts with the
check id and has the level and status as its next two words, which scripts
and the tests read; the summary line closes the report.

Colour comes from ``rich`` and only when asked (``--color always``) or when
the output is a terminal and ``NO_COLOR`` is not set (``--color auto``, the
default; https://no-color.org).  With colour each check id is also a
terminal hyperlink to its spec page.  ``rich`` is imported only then, so a
plain run never pays for it.

``Progress`` is the hook the runner calls as results arrive
(``Results.on_result``): on a terminal it rewrites one stderr line ("12
checks, last: tools.list pass"), and erases it when the run is over; on
anything else it writes nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

from .model import CheckResult, Report, Status
from .report_evidence import shown
from .report_rows import Row, omitted, ordered, rows, shown_status, skipped_summary, summary

if TYPE_CHECKING:
    from .expected import Verdict

__all__ = ["Progress", "print_report", "use_color"]

_MARK = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.WARN: "warn", Status.SKIP: "skip"}
_STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.WARN: "yellow", Status.SKIP: "dim"}
#: The section headers, by ``Row.rank``.
SECTIONS = ("MUST failures", "SHOULD failures and warnings", "best-practice advice", "passed", "skipped")
#: Evidence items shown under a row on a terminal (the JSON and Markdown reports carry them all).
_EVIDENCE_SHOWN = 3


def mark(r: Row) -> str:
    """The status word of a row: a best-practice finding is "advice", never "FAIL"."""
    return "advice" if r.advice else _MARK[r.status]


def use_color(choice: str, out: TextIO) -> bool:
    """``--color always|never|auto``: auto is a terminal without ``NO_COLOR``."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return not os.environ.get("NO_COLOR") and _isatty(out)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _header(report: Report) -> list[str]:
    info = report.server_info or {}
    lines = [f"target:   {report.target}"]
    if info:
        lines.append(f"server:   {info.get('name')} {info.get('version')}")
    lines.append(f"era:      {report.era or '(none negotiated)'}")
    lines.append(f"revision: {report.revision or '(none negotiated)'}")
    left_out = omitted(report)
    if left_out:
        lines.append(f"only:     {', '.join(report.selection.only)} ({left_out} other checks not shown)")
    return lines


def _sections(items: list[Row], show_skipped: bool) -> list[tuple[str, list[Row]]]:
    """``(header, rows)`` in reading order; without ``show_skipped`` the skips are left to ``_skip_lines``."""
    by_rank: dict[int, list[Row]] = {}
    for r in ordered(items):
        by_rank.setdefault(r.rank, []).append(r)
    return [(SECTIONS[rank], group) for rank, group in sorted(by_rank.items()) if rank < 4 or show_skipped]


def _skip_lines(items: list[Row]) -> list[str]:
    return [f"{len(g.ids)} skipped: {g.reason}" for g in skipped_summary(items)]


def _notes(r: Row) -> list[str]:
    """What follows a row that found something: its spec link and evidence."""
    if r.rank > 2:
        return []
    notes = [f"see {r.spec}"] if r.spec else []
    notes += [f"evidence: {shown(item, 300)}" for item in r.evidence[:_EVIDENCE_SHOWN]]
    if len(r.evidence) > _EVIDENCE_SHOWN:
        notes.append(f"(+{len(r.evidence) - _EVIDENCE_SHOWN} more evidence items in --format json)")
    return notes


def summary_line(report: Report, verdict: Verdict | None = None) -> str:
    """The one-line summary of a report (counts, MUST failures, and the verdict's notes)."""
    counts = summary(report)
    text = (
        f"{counts.passed} passed, {counts.failed} failed, {counts.warned} warnings, "
        f"{counts.skipped} skipped; "
        f"{'no MUST failures' if counts.ok else f'{counts.must_failures} MUST failures'}"
    )
    unchecked = report.not_checked
    if unchecked is not None:
        text += f"; NOT CHECKED: {unchecked}"
    if verdict is None:
        return text
    extra = []
    if verdict.expected:
        extra.append(f"{len(verdict.expected)} expected failures")
    if verdict.stale:
        extra.append(
            f"{len(verdict.stale)} stale expected failures (they pass: remove them from the list): "
            + ", ".join(r.id for r in verdict.stale)
        )
    if verdict.fail_on == "should" and verdict.blocking:
        extra.append(f"{len(verdict.blocking)} failures at --fail-on should")
    return "; ".join([text, *extra]) + ("" if verdict.ok or unchecked is not None else "; FAILED")


def print_report(
    report: Report,
    out: TextIO,
    *,
    color: bool = False,
    verdict: Verdict | None = None,
    show_skipped: bool = False,
) -> None:
    """Write the text report to ``out``: failures first, then warnings, advice and passes; skips summed up."""
    items = rows(report)
    if color:
        _print_rich(report, items, out, verdict, show_skipped)
        return
    out.write("\n".join(_header(report)) + "\n")
    if not items:
        out.write(f"\n{summary_line(report, verdict)}\n")
        return
    width = max(len(r.id) for r in items)
    level_width = max(len(r.level.value) for r in items)
    for header, group in _sections(items, show_skipped):
        out.write(f"\n[{header}]\n")
        for r in group:
            out.write(f"{r.id:<{width}}  {r.level.value:<{level_width}}  {mark(r):<6}  {r.detail}".rstrip() + "\n")
            out.writelines(f"    {note}\n" for note in _notes(r))
    if not show_skipped and any(r.status is Status.SKIP for r in items):
        out.write("\n[skipped] (--show-skipped lists them)\n")
        out.writelines(f"{line}\n" for line in _skip_lines(items))
    out.write(f"\n{summary_line(report, verdict)}\n")


def _print_rich(report: Report, items: list[Row], out: TextIO, verdict: Verdict | None, show_skipped: bool) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(file=out, force_terminal=True, highlight=False, soft_wrap=False)
    for line in _header(report):
        key, _, value = line.partition(":")
        console.print(f"[bold]{key}:[/bold]{escape(value)}")
    id_width = max((len(r.id) for r in items), default=0)
    level_width = max((len(r.level.value) for r in items), default=0)
    for header, group in _sections(items, show_skipped):
        table = Table(
            title=f"[bold]{escape(header)}[/bold]",
            title_justify="left",
            show_header=False,
            box=None,
            pad_edge=False,
            expand=False,
        )
        # The same widths in every section's table, so the columns line up down the report.
        table.add_column("id", no_wrap=True, min_width=id_width)
        table.add_column("level", no_wrap=True, min_width=level_width)
        table.add_column("status", no_wrap=True, min_width=6)
        table.add_column("detail", overflow="fold")
        for r in group:
            ident = f"[link={r.spec}]{escape(r.id)}[/link]" if r.spec else escape(r.id)
            detail = escape(r.detail)
            for note in _notes(r):
                detail += f"\n[dim]{escape(note)}[/dim]"
            style = _STYLE[r.status]
            table.add_row(ident, r.level.value, f"[{style}]{mark(r)}[/{style}]", detail)
        console.print()
        console.print(table)
    if not show_skipped and any(r.status is Status.SKIP for r in items):
        console.print()
        console.print("[bold]skipped[/bold] [dim](--show-skipped lists them)[/dim]")
        for line in _skip_lines(items):
            console.print(f"[dim]{escape(line)}[/dim]")
    ok = verdict.ok if verdict is not None else report.ok
    console.print()
    console.print(f"[{'green' if ok else 'bold red'}]{escape(summary_line(report, verdict))}[/]")


class Progress:
    """A one-line progress display on ``stream``, only when it is a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.active = _isatty(stream)
        self.count = 0
        self._width = 0

    def __call__(self, result: CheckResult) -> None:
        self.count += 1
        if not self.active:
            return
        status = shown_status(result.level, result.status)
        text = f"trimcp: {self.count} results, last: {result.id} {_MARK[status]}"[:79]
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        if self.active and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
