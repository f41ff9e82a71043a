"""Whether a run passes: ``--fail-on must|should`` and ``--expected-failures FILE``.

Theory of operation
-------------------
By default (``fail_on="must"``) a run fails when a MUST check failed, as
``Report.ok`` says.  With ``fail_on="should"`` a failed or warned SHOULD check
fails it too, and so does a warned MUST (a warning on a MUST check is a
server the spec's SHOULD-strength advice caught); BEST-PRACTICE rows never do.

An expected-failures file lists check ids a project knows its server fails
(a JSON list of strings, or text with one id a line, ``#`` starting a
comment).  A listed check that fails or warns does not fail the run; a listed
check that *passes* does, as stale: the list must shrink when the server gets
better, the way the official conformance suite treats its baseline.  A listed
check that was skipped is neither.  An id the catalogue does not know is a
usage error (``ValueError``), found before any server is started.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from .model import CheckResult, Level, Report, Status

__all__ = ["Verdict", "judge", "read_expected"]

FAIL_ON = ("must", "should")


def read_expected(path: str | Path, known: Iterable[str]) -> frozenset[str]:
    """The check ids listed in ``path``; ``ValueError`` for an unreadable file or an unknown id."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read --expected-failures {path}: {exc.strerror or exc}") from None
    ids = _parse(text, str(path))
    unknown = sorted(set(ids) - set(known))
    if unknown:
        raise ValueError(f"--expected-failures {path}: unknown check ids: {', '.join(unknown)}")
    return frozenset(ids)


def _parse(text: str, where: str) -> list[str]:
    if text.lstrip().startswith(("[", "{")):
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"--expected-failures {where}: not valid JSON: {exc}") from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"--expected-failures {where}: a JSON file must be a list of check ids")
        return [v.strip() for v in value]
    lines = (line.partition("#")[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


@attrs.frozen
class Verdict:
    fail_on: str
    #: Rows that fail the run (not excused by the list).
    blocking: tuple[CheckResult, ...]
    #: Listed rows that failed or warned: tolerated.
    expected: tuple[CheckResult, ...]
    #: Listed rows that passed: the list is out of date.
    stale: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return not self.blocking and not self.stale

    def to_json(self) -> dict[str, object]:
        return {
            "fail_on": self.fail_on,
            "blocking": [r.id for r in self.blocking],
            "expected_failures": [r.id for r in self.expected],
            "stale": [r.id for r in self.stale],
        }


def _blocks(result: CheckResult, fail_on: str) -> bool:
    if result.level is Level.MUST and result.status is Status.FAIL:
        return True
    if fail_on != "should":
        return False
    return result.status in (Status.FAIL, Status.WARN) and result.level in (Level.MUST, Level.SHOULD)


def judge(report: Report, *, fail_on: str = "must", expected: Iterable[str] = ()) -> Verdict:
    """The run's verdict: which results fail it at ``fail_on`` (``must`` or ``should``), the ``expected`` failures tolerated, and the stale ones."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    listed = frozenset(expected)
    by_id: Mapping[str, CheckResult] = {r.id: r for r in report.results}
    blocking = tuple(r for r in report.results if _blocks(r, fail_on) and r.id not in listed)
    tolerated = tuple(by_id[i] for i in sorted(listed) if i in by_id and by_id[i].status in (Status.FAIL, Status.WARN))
    stale = tuple(by_id[i] for i in sorted(listed) if i in by_id and by_id[i].status is Status.PASS)
    return Verdict(fail_on, blocking, tolerated, stale)
