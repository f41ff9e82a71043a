"""``trimcp check --format junit``: the report as JUnit XML, for CI test-report viewers.

Theory of operation
-------------------
The shape is the common one that GitHub Actions' JUnit publishers, GitLab's
``artifacts:reports:junit`` and Jenkins' JUnit plugin all read: a
``<testsuites>`` root holding one ``<testsuite>`` per category (the id
prefix), each holding one ``<testcase name="<check id>"
classname="<category>">`` per check.  A failed check carries ``<failure
message="..." type="<LEVEL>">`` with its detail, spec link and evidence as
the element text; a warned one is a ``<failure type="warning">`` when the run
fails on SHOULDs (``--fail-on should``) and otherwise a passing testcase with
the warning in ``<system-out>``; a skipped one ``<skipped message="..."/>``.
A check listed in ``--expected-failures`` that failed is ``<skipped
message="expected failure: ...">``: CI must not go red for a known defect;
one that passed is a ``<failure type="stale">``.  A BEST-PRACTICE failure
never fails the run, so it too is reported in ``<system-out>`` of a passing
testcase, as "advice: ...".  Counts (``tests``, ``failures``, ``errors``,
``skipped``) are on every suite and on the root.  ``time`` is each check's
seconds as ``Results`` timed it (0 for a row nothing timed), and a suite's and
the root's the sum of theirs.  Evidence is one line of JSON per item
(``report_evidence.shown``).  With ``--only`` only the selected checks are
testcases.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, TextIO

from .model import Level, Report, Status
from .report_evidence import shown
from .report_rows import Row, by_category, rows

if TYPE_CHECKING:
    from .expected import Verdict

__all__ = ["junit_xml", "write_junit"]


def _body(r: Row) -> str:
    parts = [r.detail] if r.detail else []
    if r.spec:
        parts.append(f"spec: {r.spec}")
    if r.sentences:
        parts.append("requirements: " + ", ".join(r.sentences))
    parts.extend(f"evidence: {shown(item, 4000)}" for item in r.evidence)
    return "\n".join(parts)


def _outcome(r: Row, verdict: Verdict | None) -> tuple[str, str, str] | None:
    """``(element, type, message)`` for a non-passing testcase, ``None`` for a pass."""
    expected = {x.id for x in verdict.expected} if verdict is not None else set()
    stale = {x.id for x in verdict.stale} if verdict is not None else set()
    blocking = {x.id for x in verdict.blocking} if verdict is not None else None
    if r.id in stale:
        return "failure", "stale", f"listed as an expected failure but passes: remove it from the list ({r.detail})"
    if r.status is Status.SKIP:
        return "skipped", "", r.detail
    if r.id in expected:
        return "skipped", "", f"expected failure: {r.detail}"
    if r.status in (Status.FAIL, Status.WARN):
        blocks = r.id in blocking if blocking is not None else (r.status is Status.FAIL and r.level is Level.MUST)
        # A SHOULD failure is still a failure to read, even when the run passes on MUSTs.
        if blocks or (r.status is Status.FAIL and r.level is not Level.BEST):
            return "failure", r.level.value if r.status is Status.FAIL else "warning", r.detail
    return None


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def junit_xml(report: Report, verdict: Verdict | None = None) -> str:
    root = ET.Element("testsuites", name=f"trimcp check {report.target}")
    totals: dict[str, int] = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for name, group in by_category(rows(report)):
        suite = ET.SubElement(root, "testsuite", name=name)
        counts: dict[str, int] = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite_time = 0.0
        props = ET.SubElement(suite, "properties")
        for prop, text in (("revision", report.revision), ("era", report.era), ("transport", report.transport)):
            ET.SubElement(props, "property", name=prop, value=text or "")
        for r in group:
            seconds = r.duration or 0.0
            suite_time += seconds
            case = ET.SubElement(suite, "testcase", name=r.id, classname=name, time=_seconds(seconds))
            counts["tests"] += 1
            outcome = _outcome(r, verdict)
            if outcome is None:
                if r.status is not Status.PASS:  # a warning or best-practice failure: shown, not failing
                    word = "advice" if r.advice else r.status.value
                    ET.SubElement(case, "system-out").text = f"{word}: {_body(r)}"
                continue
            element, kind, message = outcome
            if element == "skipped":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=message)
                continue
            counts["failures"] += 1
            ET.SubElement(case, "failure", message=message or r.status.value, type=kind).text = _body(r)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", _seconds(suite_time))
        total_time += suite_time
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", _seconds(total_time))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: Report, out: TextIO, verdict: Verdict | None = None) -> None:
    """Write the report as JUnit XML: a test suite per category, a test case per check (see the module docstring)."""
    out.write(junit_xml(report, verdict))
