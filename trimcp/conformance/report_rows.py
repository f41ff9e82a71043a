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

``Summary`` counts the statuses; ``Verdict`` (``expected.py``) decides the
exit status.  The requirements catalogue is read once, on the first report.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import attrs

from .catalog import CATALOG
from .model import CheckResult, Level, Report, Status
from .requirements import Catalogue, load, spec_url

__all__ = ["Row", "Summary", "category", "rows", "spec_link", "summary"]


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


def row(result: CheckResult, revision: str | None) -> Row:
    spec = CATALOG.get(result.id)
    link, ids = spec_link(result.id, revision)
    return Row(
        id=result.id, title=spec.title if spec is not None else "", category=category(result.id),
        level=result.level, status=result.status, detail=result.detail, spec=link, sentences=ids,
        evidence=result.evidence,
    )


def rows(report: Report) -> list[Row]:
    return [row(r, report.revision) for r in report.results]


def by_category(items: list[Row]) -> Iterator[tuple[str, list[Row]]]:
    """The rows grouped by category, categories in order of first appearance."""
    groups: dict[str, list[Row]] = {}
    for item in items:
        groups.setdefault(item.category, []).append(item)
    yield from groups.items()


def summary(report: Report) -> Summary:
    def count(status: Status) -> int:
        return sum(1 for r in report.results if r.status is status)

    return Summary(count(Status.PASS), count(Status.FAIL), count(Status.WARN), count(Status.SKIP),
                   len(report.must_failures))
