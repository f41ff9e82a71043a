"""``trimcp check --format markdown``: the report as GitHub-flavoured Markdown.

Theory of operation
-------------------
Meant for a pull-request comment or a job summary (``$GITHUB_STEP_SUMMARY``),
so it is short and what needs reading is open: a heading with the target, one
line naming the server, era, revision and transport, the summary line, then
the failures in full: a table of every MUST failure, SHOULD failure or
warning and best-practice advice (``report_rows.ordered``; advice is never
"fail"), each check linked to its spec page, followed by each one's
requirement ids and evidence (one JSON text per item,
``report_evidence.shown``) in a folded table, one row per check.  The passes (one line per category, each check with its
detail) and the skips (one line per reason shared by several checks, with
their ids, and one line for the checks whose reason is their own) are folded
in ``<details>`` blocks.  With ``--only`` only the selected checks appear.
Table cells and inline text escape ``|`` and fold newlines so that a detail
quoting a server's answer cannot break the table; evidence sits in code spans
whose backtick fence is longer than any run inside.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TextIO

from .model import Report, Status
from .report_console import summary_line
from .report_evidence import shown
from .report_rows import Row, by_category, omitted, ordered, rows, run_facts, skipped_summary

if TYPE_CHECKING:
    from .expected import Verdict

__all__ = ["markdown", "write_markdown"]

_MARK = {Status.PASS: "✅ pass", Status.FAIL: "❌ **fail**", Status.WARN: "⚠️ warn", Status.SKIP: "⏭️ skip"}
_ADVICE = "💡 advice"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def _mark(r: Row) -> str:
    return _ADVICE if r.advice else _MARK[r.status]


def _ident(r: Row) -> str:
    return f"[`{r.id}`]({r.spec})" if r.spec else f"`{r.id}`"


def _code(text: str) -> str:
    """``text`` as a code span a table cell can hold (GFM: ``\\|`` is a pipe even in code)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{' '.join(text.split()).replace('|', chr(92) + '|')}{pad}{tick}"


def _failures(found: list[Row]) -> list[str]:
    out = [
        "",
        f"## Failures, warnings and advice ({len(found)})",
        "",
        "| check | level | status | detail |",
        "| --- | --- | --- | --- |",
    ]
    out += [f"| {_ident(r)} | {r.level.value} | {_mark(r)} | {_cell(r.detail)} |" for r in found]
    with_more = [r for r in found if r.evidence or r.sentences]
    if with_more:
        out += [
            "",
            "<details><summary>Requirements and evidence (JSON)</summary>",
            "",
            "| check | requirements | evidence |",
            "| --- | --- | --- |",
        ]
        for r in with_more:
            evidence = "<br>".join(_code(shown(item, 1500)) for item in r.evidence) or "(none kept)"
            out.append(f"| `{r.id}` | {_cell(', '.join(r.sentences))} | {evidence} |")
        out += ["", "</details>"]
    return out


def _passes(passed: list[Row]) -> list[str]:
    out = ["", f"<details><summary>{len(passed)} passed</summary>", ""]
    for name, group in by_category(passed):
        listed = " · ".join(f"`{r.id}`" + (f" ({_cell(r.detail)})" if r.detail else "") for r in group)
        out.append(f"- **{name}**: {listed}")
    return [*out, "", "</details>"]


def _skips(items: list[Row]) -> list[str]:
    groups = skipped_summary(items)
    count = sum(len(g.ids) for g in groups)
    out = ["", f"<details><summary>{count} skipped</summary>", ""]
    out += [
        f"- {len(g.ids)} {_cell(g.reason)}: " + ", ".join(f"`{i}`" for i in g.ids) for g in groups if len(g.ids) > 1
    ]
    # A reason only one check has shares one line with the others like it.
    single = [g for g in groups if len(g.ids) == 1]
    if single:
        out.append(
            f"- {len(single)} with a reason of their own: "
            + " · ".join(f"`{g.ids[0]}` ({_cell(g.reason)})" for g in single)
        )
    return [*out, "", "</details>"]


def markdown(report: Report, verdict: Verdict | None = None) -> str:
    facts = run_facts(report, _cell)
    lines = [f"# trimcp check: `{_cell(report.target)}`", "", " · ".join(facts)]
    left_out = omitted(report)
    if left_out:
        lines += ["", f"Only {_cell(', '.join(report.selection.only))}: {left_out} other checks not shown."]
    lines += ["", f"**{_cell(summary_line(report, verdict))}**"]
    items = ordered(rows(report))
    found = [r for r in items if r.rank <= 2]
    if found:
        lines += _failures(found)
    passed = [r for r in items if r.status is Status.PASS]
    if passed:
        lines += _passes(passed)
    if any(r.status is Status.SKIP for r in items):
        lines += _skips(items)
    return "\n".join(lines) + "\n"


def write_markdown(report: Report, out: TextIO, verdict: Verdict | None = None) -> None:
    """Write the report as Markdown (for a CI job summary or a pull-request comment)."""
    out.write(markdown(report, verdict))
