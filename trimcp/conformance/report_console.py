"""``trimcp check`` for people: the report as a table on a terminal, and a progress line.

Theory of operation
-------------------
Rows are grouped by category (the id prefix: ``lifecycle``, ``jsonrpc``,
``tools``, ``http``, ...), one header line per category, then one line per
check: id, level, status, detail.  Under a failed or warned row its spec
link (``report_rows.spec_link``) follows, indented, so the sentence broken
is one click away; the summary line closes the report.  Every row line still
starts with the check id and has the level and status as its next two
words, which scripts and the tests read.

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
from .report_rows import Row, by_category, rows, summary

if TYPE_CHECKING:
    from .expected import Verdict

__all__ = ["Progress", "print_report", "use_color"]

_MARK = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.WARN: "warn", Status.SKIP: "skip"}
_STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.WARN: "yellow", Status.SKIP: "dim"}


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
    return lines


def summary_line(report: Report, verdict: Verdict | None = None) -> str:
    counts = summary(report)
    text = (f"{counts.passed} passed, {counts.failed} failed, {counts.warned} warnings, "
            f"{counts.skipped} skipped; "
            f"{'no MUST failures' if counts.ok else f'{counts.must_failures} MUST failures'}")
    if verdict is None:
        return text
    extra = []
    if verdict.expected:
        extra.append(f"{len(verdict.expected)} expected failures")
    if verdict.stale:
        extra.append(f"{len(verdict.stale)} stale expected failures (they pass: remove them from the list): "
                     + ", ".join(r.id for r in verdict.stale))
    if verdict.fail_on == "should" and verdict.blocking:
        extra.append(f"{len(verdict.blocking)} failures at --fail-on should")
    return "; ".join([text, *extra]) + ("" if verdict.ok else "; FAILED")


def print_report(report: Report, out: TextIO, *, color: bool = False, verdict: Verdict | None = None) -> None:
    items = rows(report)
    if color:
        _print_rich(report, items, out, verdict)
        return
    out.write("\n".join(_header(report)) + "\n")
    if not items:
        out.write(f"\n{summary_line(report, verdict)}\n")
        return
    width = max(len(r.id) for r in items)
    level_width = max(len(r.level.value) for r in items)
    for name, group in by_category(items):
        out.write(f"\n[{name}]\n")
        for r in group:
            out.write(f"{r.id:<{width}}  {r.level.value:<{level_width}}  {_MARK[r.status]:<4}  {r.detail}".rstrip()
                      + "\n")
            if r.status in (Status.FAIL, Status.WARN) and r.spec:
                out.write(f"    see {r.spec}\n")
    out.write(f"\n{summary_line(report, verdict)}\n")


def _print_rich(report: Report, items: list[Row], out: TextIO, verdict: Verdict | None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(file=out, force_terminal=True, highlight=False, soft_wrap=False)
    for line in _header(report):
        key, _, value = line.partition(":")
        console.print(f"[bold]{key}:[/bold]{escape(value)}")
    id_width = max((len(r.id) for r in items), default=0)
    level_width = max((len(r.level.value) for r in items), default=0)
    for name, group in by_category(items):
        table = Table(title=f"[bold]{escape(name)}[/bold]", title_justify="left", show_header=False,
                      box=None, pad_edge=False, expand=False)
        # The same widths in every category's table, so the columns line up down the report.
        table.add_column("id", no_wrap=True, min_width=id_width)
        table.add_column("level", no_wrap=True, min_width=level_width)
        table.add_column("status", no_wrap=True)
        table.add_column("detail", overflow="fold")
        for r in group:
            ident = f"[link={r.spec}]{escape(r.id)}[/link]" if r.spec else escape(r.id)
            detail = escape(r.detail)
            if r.status in (Status.FAIL, Status.WARN) and r.spec:
                detail += f"\n[dim]see {escape(r.spec)}[/dim]"
            style = _STYLE[r.status]
            table.add_row(ident, r.level.value, f"[{style}]{_MARK[r.status]}[/{style}]", detail)
        console.print()
        console.print(table)
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
        text = f"trimcp: {self.count} results, last: {result.id} {_MARK[result.status]}"[:79]
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def close(self) -> None:
        if self.active and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
