"""``trimcp check --format markdown``: the report as GitHub-flavoured Markdown.

Theory of operation
-------------------
A heading with the target, then the negotiated era, revision and server, the
summary line, and one table per category (the id prefix): check (linked to
its spec page), level, status, detail.  Meant for a pull-request comment or
a job summary (``$GITHUB_STEP_SUMMARY``).  Table cells escape ``|`` and fold
newlines so that a detail quoting a server's answer cannot break the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from .model import Report, Status
from .report_console import summary_line
from .report_rows import by_category, rows

if TYPE_CHECKING:
    from .expected import Verdict

__all__ = ["markdown", "write_markdown"]

_MARK = {Status.PASS: "✅ pass", Status.FAIL: "❌ **fail**", Status.WARN: "⚠️ warn", Status.SKIP: "⏭️ skip"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def markdown(report: Report, verdict: Verdict | None = None) -> str:
    info = report.server_info or {}
    lines = [f"# trimcp check: `{_cell(report.target)}`", ""]
    if info:
        lines.append(f"- server: {_cell(str(info.get('name')))} {_cell(str(info.get('version')))}")
    lines.append(f"- era: {report.era or '(none negotiated)'}")
    lines.append(f"- revision: {report.revision or '(none negotiated)'}")
    if report.transport:
        lines.append(f"- transport: {report.transport}")
    lines += ["", f"**{_cell(summary_line(report, verdict))}**"]
    for name, group in by_category(rows(report)):
        lines += ["", f"## {name}", "", "| check | level | status | detail |", "| --- | --- | --- | --- |"]
        for r in group:
            ident = f"[`{r.id}`]({r.spec})" if r.spec else f"`{r.id}`"
            lines.append(f"| {ident} | {r.level.value} | {_MARK[r.status]} | {_cell(r.detail)} |")
    return "\n".join(lines) + "\n"


def write_markdown(report: Report, out: TextIO, verdict: Verdict | None = None) -> None:
    out.write(markdown(report, verdict))
