"""What every reporter shows of one check: the row of a report, with its category and spec link.

Theory of operation
-------------------
A ``Report`` holds bare ``CheckResult`` rows (id, level, status, detail,
evidence).  The reporters (console, JSON, JUnit, Markdown) all show more: the
check's description (``CheckSpec.title``), its category (the id's prefix:
``lifecycle``, ``jsonrpc``, ``tools``, ``http``, ...), the requirement ids of
the specification's sentences it tests in the run's revision, and a link to
the spec: the page and heading anchor of its first sentence (full coverage
first) in the requirements catalogue, else the page of its ``section``.  The
link points at the negotiated revision's page, or at the newest revision the
check belongs to when nothing was negotiated.

What a row shows is the same in every format:

* a BEST-PRACTICE check that "failed" is advice, never a failure: its row's
  status is ``warn`` (``shown_status``), rendered as "advice" where words are
  shown; its level still says BEST-PRACTICE;
* with ``--only`` the report is the selected rows alone (``rows`` leaves the
  others out; ``omitted`` counts them); ``--skip`` alone still shows what it
  skipped, as skipped "not selected";
* ``ordered`` puts what needs reading first: MUST failures, then SHOULD (and
  MAY) failures and warnings, then best-practice advice, then passes, then
  skips, each in catalogue order; ``skipped_summary`` folds the skips into one
  count per reason.

``Summary`` counts the statuses of the rows shown; ``Verdict``
(``expected.py``) decides the exit status.  The requirements catalogue is read
once, on the first report.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import attrs

from .catalog import CATALOG
from .model import CheckResult, Level, Report, Status
from .requirements import Catalogue, load, spec_url

__all__ = [
    "Row",
    "SkipGroup",
    "Summary",
    "category",
    "omitted",
    "ordered",
    "rows",
    "shown_status",
    "skipped_summary",
    "spec_link",
    "summary",
]


@attrs.frozen
class Row:
    id: str
    title: str
    category: str
    level: Level
    status: Status
    detail: str
    #: The published spec page (and anchor) of the sentence the check tests.
    spec: str
    #: The ids of the requirements catalogue's sentences it tests in this revision.
    sentences: tuple[str, ...]
    evidence: tuple[object, ...]
    #: Seconds the check took, when the run timed it.
    duration: float | None = None

    @property
    def advice(self) -> bool:
        """A best-practice check that found something: shown, never failing."""
        return self.level is Level.BEST and self.status is Status.WARN

    @property
    def rank(self) -> int:
        """0 MUST failure, 1 SHOULD/MAY failure or warning, 2 advice, 3 pass, 4 skip."""
        if self.status is Status.FAIL and self.level is Level.MUST:
            return 0
        if self.advice:
            return 2
        if self.status in (Status.FAIL, Status.WARN):
            return 1
        return 3 if self.status is Status.PASS else 4


@attrs.frozen
class SkipGroup:
    reason: str
    ids: tuple[str, ...]


@attrs.frozen
class Summary:
    passed: int
    failed: int
    warned: int
    skipped: int
    must_failures: int

    @property
    def ok(self) -> bool:
        return self.must_failures == 0


def category(check_id: str) -> str:
    return check_id.partition(".")[0]


@functools.cache
def _catalogue() -> Catalogue:
    # A data file being edited must not cost the user the report: links fall back to sections.
    try:
        return load()
    except (OSError, ValueError, KeyError, TypeError):
        return Catalogue((), ())


def spec_link(check_id: str, revision: str | None) -> tuple[str, tuple[str, ...]]:
    """``(url, sentence ids)`` for ``check_id`` in ``revision``."""
    spec = CATALOG.get(check_id)
    in_run = revision if revision is not None and (spec is None or spec.applies_to(revision)) else None
    found = _catalogue().sentences_of(check_id, in_run)
    ids = tuple(req.id for req, _ in found)
    if found:
        first = found[0][0]
        return first.url(in_run if in_run in first.revisions else None), ids
    if spec is None:
        return "", ids
    return spec_url(in_run or spec.revisions[-1], spec.section), ids


def shown_status(level: Level, status: Status) -> Status:
    """A best-practice check never shows as failed: what it found is advice (``warn``)."""
    return Status.WARN if level is Level.BEST and status is Status.FAIL else status


def row(result: CheckResult, revision: str | None) -> Row:
    spec = CATALOG.get(result.id)
    link, ids = spec_link(result.id, revision)
    return Row(
        id=result.id,
        title=spec.title if spec is not None else "",
        category=category(result.id),
        level=result.level,
        status=shown_status(result.level, result.status),
        detail=result.detail,
        spec=link,
        sentences=ids,
        evidence=result.evidence,
        duration=result.duration,
    )


def _shown(report: Report) -> list[CheckResult]:
    """The results a report shows: with ``--only``, the selected ones alone."""
    if not report.selection.only:
        return list(report.results)
    return [r for r in report.results if report.selection.selected(r.id)]


def rows(report: Report) -> list[Row]:
    return [row(r, report.revision) for r in _shown(report)]


def omitted(report: Report) -> int:
    """How many rows ``--only`` left out of the report."""
    return len(report.results) - len(_shown(report))


def ordered(items: list[Row]) -> list[Row]:
    """Failures first (MUST, then SHOULD, then advice), passes, skips; stable within each."""
    return sorted(items, key=lambda r: r.rank)


def skipped_summary(items: list[Row]) -> list[SkipGroup]:
    """The skipped rows, one group per reason, the largest first."""
    groups: dict[str, list[str]] = {}
    for item in items:
        if item.status is Status.SKIP:
            groups.setdefault(item.detail or "(no reason given)", []).append(item.id)
    found = [SkipGroup(reason, tuple(ids)) for reason, ids in groups.items()]
    return sorted(found, key=lambda g: (-len(g.ids), g.reason))


def by_category(items: list[Row]) -> Iterator[tuple[str, list[Row]]]:
    """The rows grouped by category, categories in order of first appearance."""
    groups: dict[str, list[Row]] = {}
    for item in items:
        groups.setdefault(item.category, []).append(item)
    yield from groups.items()


def summary(report: Report) -> Summary:
    shown = [shown_status(r.level, r.status) for r in _shown(report)]

    def count(status: Status) -> int:
        return sum(1 for s in shown if s is status)

    return Summary(
        count(Status.PASS), count(Status.FAIL), count(Status.WARN), count(Status.SKIP), len(report.must_failures)
    )


def run_facts(report: Report, cell: Callable[[str], str] = str) -> list[str]:
    """The facts a written report opens with: server (its name and version through ``cell``,
    which escapes for the format), era, revision and transport."""
    info = report.server_info or {}
    facts = []
    if info:
        facts.append(f"server {cell(str(info.get('name')))} {cell(str(info.get('version')))}")
    facts.append(f"era {report.era or '(none negotiated)'}")
    facts.append(f"revision {report.revision or '(none negotiated)'}")
    if report.transport:
        facts.append(f"transport {report.transport}")
    return facts
