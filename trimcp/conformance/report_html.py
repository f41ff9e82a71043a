"""``trimcp check --format html``: the report as one page to open and read at a glance.

Theory of operation
-------------------
One self-contained file: its style and its script are inline and the page loads
nothing (a Content-Security-Policy in the page says so to the browser: no source is
allowed but the page's own style and script, named by their SHA-256), so it opens
the same from a CI artifact, an e-mail or a laptop without network.  The links to
the specification (``report_rows.spec_link``: the same page and anchor the text,
JSON and Markdown reports give) are links, followed only when clicked.

Reading order, as in every format (``report_rows``): a header with the target, the
server, era, revision and transport and the summary line (``summary_line``, with
the ``--fail-on`` / ``--expected-failures`` verdict); the counts (passed, failed,
warnings, skipped, MUST failures); then the failures, SHOULD failures and warnings
and best-practice advice ("advice", never "fail"), each a folded ``<details>`` whose
summary line names the check (linked to its spec sentence), its level, its status
and detail, and whose body holds the check's description, requirement ids and
evidence (one JSON text per item, ``report_evidence.shown``); then the counts per
category (those with failures, then warnings, first), the passes by category and
the skips by reason, folded.  With ``--only`` only the selected checks appear.

The page carries the run's JSON report (``report_json.document``, the same document
``--format json`` writes) in a ``<script type="application/json">`` data block, so
one file holds both the view and the data.  The script only filters: a search box
hides the checks whose id, title or detail do not match, and a button opens or
folds every check; without it the page reads the same.  Every text from the server
is HTML-escaped; the data block escapes ``<`` so nothing in it can end the block.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from typing import TYPE_CHECKING, Final, TextIO

from .._version import __version__
from .model import Report, Status
from .report_console import mark, summary_line
from .report_evidence import shown
from .report_json import document
from .report_rows import Row, by_category, omitted, ordered, rows, run_facts, skipped_summary, summary

if TYPE_CHECKING:
    from .expected import Verdict

__all__ = ["html_report", "write_html"]

#: Evidence characters shown per item (the JSON data block carries them all).
_EVIDENCE_LIMIT: Final = 4000
#: The counts in the summary, as the JSON report's ``summary`` keys name them.
_COUNTS: Final = (
    ("pass", "passed"),
    ("fail", "failed"),
    ("warn", "warnings"),
    ("skip", "skipped"),
    ("must_failures", "MUST failures"),
)

_STYLE: Final = """
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0;
  --pass: #1a7f37; --fail: #cf222e; --warn: #9a6700; --skip: #59636e; --advice: #8250df; --panel: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d;
  --pass: #3fb950; --fail: #f85149; --warn: #d29922; --skip: #9198a1; --advice: #ab7df8; --panel: #151b23; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem; color: var(--fg); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; word-break: break-all; }
h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
code, pre, .id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
a { color: inherit; }
.facts, .muted { color: var(--muted); }
.verdict { font-weight: 600; padding: .5rem .75rem; border-radius: 6px; background: var(--panel);
  border-left: 4px solid var(--pass); }
.verdict.failed { border-left-color: var(--fail); }
.counts { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; padding: 0; }
.counts div { min-width: 7rem; padding: .5rem .75rem; border: 1px solid var(--line); border-radius: 6px; }
.counts dt { color: var(--muted); font-size: .85rem; }
.counts dd { margin: 0; font-size: 1.5rem; font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid var(--line); }
td { font-variant-numeric: tabular-nums; }
td.zero { color: var(--muted); }
.status-pass { color: var(--pass); } .status-fail { color: var(--fail); } .status-warn { color: var(--warn); }
.status-skip { color: var(--skip); } .status-advice { color: var(--advice); }
details.check { border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; background: var(--bg); }
details.check > summary { cursor: pointer; padding: .4rem .6rem; list-style-position: inside; }
details.check > div { padding: .25rem .9rem .75rem; border-top: 1px solid var(--line); }
.badge { display: inline-block; min-width: 4.2rem; font-weight: 700; text-transform: uppercase; font-size: .8rem; }
.level { color: var(--muted); font-size: .8rem; margin: 0 .4rem; }
pre { white-space: pre-wrap; word-break: break-all; background: var(--panel); padding: .5rem; border-radius: 4px;
  margin: .25rem 0; max-height: 24rem; overflow: auto; }
details.group { margin: .5rem 0; } details.group > summary { cursor: pointer; font-weight: 600; }
ul.plain { list-style: none; padding-left: 1rem; } ul.plain li { margin: .15rem 0; }
.tools { display: flex; gap: .5rem; align-items: center; margin: .5rem 0; }
.tools input { flex: 1; max-width: 24rem; padding: .3rem .5rem; font: inherit; color: inherit; background: var(--bg);
  border: 1px solid var(--line); border-radius: 4px; }
.tools button { font: inherit; padding: .3rem .7rem; color: inherit; background: var(--panel);
  border: 1px solid var(--line); border-radius: 4px; cursor: pointer; }
[hidden] { display: none !important; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
"""

_SCRIPT: Final = """
(function () {
  "use strict";
  var checks = Array.prototype.slice.call(document.querySelectorAll("[data-check]"));
  var filter = document.getElementById("filter");
  var toggle = document.getElementById("toggle-all");
  var shownCount = document.getElementById("shown-count");
  function apply() {
    var words = filter.value.trim().toLowerCase();
    var visible = 0;
    checks.forEach(function (el) {
      var hit = !words || el.getAttribute("data-text").indexOf(words) !== -1;
      el.hidden = !hit;
      if (hit) { visible += 1; }
    });
    shownCount.textContent = words ? visible + " of " + checks.length + " checks match" : "";
  }
  filter.addEventListener("input", apply);
  toggle.addEventListener("click", function () {
    var folded = document.querySelectorAll("details.check:not([open]), details.group:not([open])");
    var open = folded.length > 0;
    document.querySelectorAll("details.check, details.group").forEach(function (el) { el.open = open; });
    toggle.textContent = open ? "Fold all" : "Open all";
  });
  document.body.setAttribute("data-ready", "1");
}());
"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


#: Nothing but the page's own style and script: no fetch, no font, no image from anywhere.
_POLICY: Final = (
    f"default-src 'none'; style-src {_hash(_STYLE)}; script-src {_hash(_SCRIPT)}; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _status_class(r: Row) -> str:
    return "status-advice" if r.advice else f"status-{r.status.value}"


def _ident(r: Row) -> str:
    if r.spec:
        return f'<a class="id" href="{_e(r.spec)}" title="the specification sentence it tests">{_e(r.id)}</a>'
    return f'<span class="id">{_e(r.id)}</span>'


def _search_text(r: Row) -> str:
    return _e(" ".join((r.id, r.title, r.detail, mark(r), r.level.value)).lower())


def _check(r: Row) -> str:
    """One check that found something, folded: its line, then its description, sentences, evidence."""
    body = []
    if r.title:
        body.append(f"<p>{_e(r.title)}</p>")
    if r.spec:
        body.append(f'<p>Specification: <a href="{_e(r.spec)}">{_e(r.spec)}</a></p>')
    if r.sentences:
        body.append(f'<p>Requirements: <span class="id">{_e(", ".join(r.sentences))}</span></p>')
    if r.evidence:
        body.append(f"<p>Evidence ({len(r.evidence)}):</p>")
        body += [f"<pre>{_e(shown(item, _EVIDENCE_LIMIT))}</pre>" for item in r.evidence]
    else:
        body.append('<p class="muted">No evidence kept.</p>')
    return (
        f'<details class="check" data-check="{_e(r.id)}" data-status="{_e(r.status.value)}" '
        f'data-text="{_search_text(r)}"><summary>'
        f'<span class="badge {_status_class(r)}">{_e(mark(r))}</span> {_ident(r)}'
        f'<span class="level">{_e(r.level.value)}</span> {_e(r.detail)}</summary>'
        f"<div>{''.join(body)}</div></details>"
    )


def _line(r: Row) -> str:
    """One passed or skipped check: a line, its id linked to its sentence."""
    detail = f' <span class="muted">{_e(r.detail)}</span>' if r.detail else ""
    return (
        f'<li data-check="{_e(r.id)}" data-status="{_e(r.status.value)}" data-text="{_search_text(r)}">'
        f"{_ident(r)}{detail}</li>"
    )


def _counts(doc_summary: dict[str, object]) -> str:
    cells = "".join(
        f'<div class="count-{key}"><dt>{_e(label)}</dt><dd data-count="{key}">{_e(doc_summary[key])}</dd></div>'
        for key, label in _COUNTS
    )
    return f'<dl class="counts" id="counts">{cells}</dl>'


def _categories(items: list[Row]) -> str:
    head = "".join(f"<th>{_e(label)}</th>" for key, label in _COUNTS if key != "must_failures")
    out = [f'<table id="categories"><thead><tr><th>category</th>{head}</tr></thead><tbody>']

    def worst_first(entry: tuple[str, list[Row]]) -> tuple[int, int, str]:
        name, group = entry
        return (-sum(r.status is Status.FAIL for r in group), -sum(r.status is Status.WARN for r in group), name)

    for name, group in sorted(by_category(items), key=worst_first):
        cells = []
        for status in (Status.PASS, Status.FAIL, Status.WARN, Status.SKIP):
            n = sum(1 for r in group if r.status is status)
            css = "zero" if n == 0 else f"status-{status.value}"
            cells.append(f'<td class="{css}" data-count="{status.value}">{n}</td>')
        out.append(f'<tr data-category="{_e(name)}"><th>{_e(name)}</th>{"".join(cells)}</tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _passes(passed: list[Row]) -> str:
    groups = []
    for name, group in by_category(passed):
        lines = "".join(_line(r) for r in group)
        groups.append(
            f'<details class="group"><summary>{_e(name)} ({len(group)})</summary><ul class="plain">{lines}</ul></details>'
        )
    return "".join(groups)


def _skips(items: list[Row]) -> str:
    by_id = {r.id: r for r in items}
    groups = []
    for g in skipped_summary(items):
        lines = "".join(_line(by_id[i]) for i in g.ids)
        groups.append(
            f'<details class="group"><summary>{len(g.ids)} skipped: {_e(g.reason)}</summary>'
            f'<ul class="plain">{lines}</ul></details>'
        )
    return "".join(groups)


def _data_block(doc: dict[str, object]) -> str:
    # "<" only occurs inside JSON strings, where \\u003c is the same character: nothing in
    # the block can close it.
    text = json.dumps(doc, ensure_ascii=False).replace("<", "\\u003c")
    return f'<script type="application/json" id="report-json">{text}</script>'


def html_report(report: Report, verdict: Verdict | None = None) -> str:
    """The report as one self-contained HTML page (see the module docstring)."""
    doc = document(report, verdict)
    items = ordered(rows(report))
    counts = summary(report)
    ok = verdict.ok if verdict is not None else counts.ok
    facts = run_facts(report)  # escaped below, joined
    found = [r for r in items if r.rank <= 2]
    passed = [r for r in items if r.status is Status.PASS]
    skipped = [r for r in items if r.status is Status.SKIP]
    title = f"trimcp check: {report.target} ({'passed' if ok else 'FAILED'})"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_POLICY)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<header><h1>trimcp check <code>{_e(report.target)}</code></h1>",
        f'<p class="facts">{_e(" · ".join(facts))}</p>',
    ]
    left_out = omitted(report)
    if left_out:
        parts.append(
            f'<p class="muted">Only {_e(", ".join(report.selection.only))}: {left_out} other checks not shown.</p>'
        )
    parts += [
        f'<p class="verdict{"" if ok else " failed"}" id="verdict">{_e(summary_line(report, verdict))}</p></header>',
        f'<section id="summary"><h2>Summary</h2>{_counts(doc["summary"])}</section>',
        '<div class="tools"><input id="filter" type="search" placeholder="Filter checks by id, title or detail" '
        'aria-label="Filter checks"><button id="toggle-all" type="button">Open all</button>'
        '<span id="shown-count" class="muted"></span></div>',
    ]
    if found:
        parts.append(
            f'<section id="failures"><h2>Failures, warnings and advice ({len(found)})</h2>'
            + "".join(_check(r) for r in found)
            + "</section>"
        )
    parts.append(f'<section id="by-category"><h2>By category</h2>{_categories(items)}</section>')
    if passed:
        parts.append(f'<section id="passed"><h2>Passed ({len(passed)})</h2>{_passes(passed)}</section>')
    if skipped:
        parts.append(f'<section id="skipped"><h2>Skipped ({len(skipped)})</h2>{_skips(items)}</section>')
    parts += [
        f"<footer>trimcp {_e(__version__)} · the JSON report of this run is in this page "
        "(<code>script#report-json</code>)</footer>",
        _data_block(doc),
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_html(report: Report, out: TextIO, verdict: Verdict | None = None) -> None:
    """Write the report as one self-contained HTML page (to open, or keep as a CI artifact)."""
    out.write(html_report(report, verdict))
