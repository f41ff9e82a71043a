"""``trimcp check`` reports and selection: the reporters, --only/--skip, expected failures, --requirements.

* In process: the reporters (console, JSON against its shipped JSON Schema,
  JUnit, Markdown) on real reports of the reference server and on small
  hand-made ones; ``Selection`` and the runner's skipping of probe groups
  none of whose checks is selected; ``judge`` (``--fail-on``,
  ``--expected-failures``); the progress hook; the coverage table on a
  synthetic requirements catalogue.
* A few CLI runs as subprocesses (each costs about a second): the options
  end to end against ``tests/helpers/bad_server.py --mode bad-tool-schema``
  (whose ``tools.input-schema`` fails, a MUST), and the usage errors found
  before anything starts.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import jsonschema
import pytest
import trio
from repo_paths import REPO
from test_check import reference_connector

from trimcp._trio.stream import MessageStream
from trimcp.cli.command_line import UsageError
from trimcp.cli.commands import _read_command_line
from trimcp.conformance import report_rows, run_checks, write_json
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.evidence import received, sent
from trimcp.conformance.expected import judge, read_expected
from trimcp.conformance.model import CheckResult, Level, Report, Status
from trimcp.conformance.report_console import Progress, print_report, use_color
from trimcp.conformance.report_json import SCHEMA, document, json_schema
from trimcp.conformance.report_junit import junit_xml
from trimcp.conformance.report_markdown import markdown
from trimcp.conformance.report_requirements import coverage_document, write_coverage
from trimcp.conformance.report_rows import spec_link
from trimcp.conformance.requirements import Catalogue, Coverage, Requirement, spec_url
from trimcp.conformance.results import Results
from trimcp.conformance.selection import Selection

REPO = REPO
BAD_SERVER = str(REPO / "tests" / "helpers" / "bad_server.py")
CLI_TIMEOUT = 60


class Counting:
    """The in-process reference server as a connector that counts the connections opened."""

    def __init__(self) -> None:
        self.opened = 0

    @asynccontextmanager
    async def __call__(self) -> AsyncIterator[MessageStream]:
        self.opened += 1
        async with reference_connector() as stream:
            yield stream


async def _reference(**kwargs: object) -> tuple[Report, int]:
    connect = Counting()
    with trio.fail_after(300):
        report = await run_checks(connect, target="reference (in-process)", **kwargs)  # type: ignore[arg-type]
    return report, connect.opened


def _report(*results: CheckResult, revision: str | None = "2025-11-25") -> Report:
    return Report(target="t", revision=revision, era="handshake" if revision else None, results=list(results))


FAILING = _report(
    CheckResult("lifecycle.initialize", Level.MUST, Status.PASS, "ok"),
    CheckResult(
        "tools.input-schema",
        Level.MUST,
        Status.FAIL,
        "hello: type is 'string' | not object",
        (sent(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'), received("not json")),
    ),
    CheckResult("tools.unique-names", Level.SHOULD, Status.WARN, "hello twice"),
    CheckResult("tools.unknown-tool", Level.BEST, Status.FAIL, "answered {}"),
    CheckResult("http.origin", Level.MUST, Status.SKIP, "not an HTTP target"),
)


# --------------------------------------------------------------------------- selection


def test_selection_by_id_and_glob() -> None:
    sel = Selection(only=("http.*", "tools.list"), skip=("http.origin",))
    assert sel.selected("http.delete") and sel.selected("tools.list")
    assert not sel.selected("http.origin") and not sel.selected("tools.input-schema")
    assert Selection(skip=("*.unsupported-version",)).selected("tools.list")
    assert not Selection(skip=("*.unsupported-version",)).selected("lifecycle.unsupported-version")
    assert Selection().everything and Selection().selected("anything.at-all")
    assert sel.unknown_patterns(CATALOG) == []
    assert Selection(only=("htp.*",), skip=("tools.lst",)).unknown_patterns(CATALOG) == ["htp.*", "tools.lst"]


def test_results_report_unselected_checks_as_not_selected() -> None:
    seen: list[str] = []
    rec = Results("2025-11-25", Selection(only=("tools.*",)), on_result=lambda r: seen.append(r.id))
    rec.fail("lifecycle.ping", "no answer")  # ran anyway (the tour always runs): not reported
    rec.ok("tools.list", "1 tool")
    rows = {r.id: r for r in rec.finish("not reached")}
    assert (rows["lifecycle.ping"].status, rows["lifecycle.ping"].detail) == (Status.SKIP, "not selected")
    assert rows["tools.list"].status is Status.PASS
    assert seen == ["tools.list"]
    assert rec.wants("tools.*") and rec.wants("http.*", "tools.list") and not rec.wants("http.*", "mrtr.*")
    assert Results().wants("anything")


async def test_only_tools_runs_no_probe_connection(autojump_clock: trio.abc.Clock) -> None:
    full, opened_all = await _reference()
    only, opened_only = await _reference(selection=Selection(only=("tools.list", "tools.name-format")))
    # The stateless tour's probes (unknown revision, missing envelope, input requests, the
    # feature probes) each open connections of their own; with only two tour checks
    # selected none of them runs.
    assert opened_all > 1 and opened_only == 1
    statuses = {r.id: r for r in only.results}
    assert statuses["tools.list"].status is Status.PASS
    assert statuses["stateless.missing-envelope"].detail == "not selected"
    assert all(r.detail == "not selected" for r in only.results if r.id not in ("tools.list", "tools.name-format"))
    assert {r.id: r.status for r in full.results}["stateless.missing-envelope"] is Status.PASS


async def test_progress_hook_sees_results_as_they_arrive(autojump_clock: trio.abc.Clock) -> None:
    seen: list[CheckResult] = []
    report, _ = await _reference(on_result=seen.append)
    final = {r.id: r for r in report.results}
    # Every outcome was announced as it was put (a check run per tool, more than once) ...
    assert seen and all(final[r.id].status is not Status.SKIP or r.status is Status.SKIP for r in seen)
    # ... and every check that passed or failed was announced at least once.
    decided = {r.id for r in report.results if r.status is not Status.SKIP}
    assert decided <= {r.id for r in seen}


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_writes_only_to_a_terminal() -> None:
    quiet = io.StringIO()
    progress = Progress(quiet)
    progress(CheckResult("tools.list", Level.MUST, Status.PASS))
    progress.close()
    assert quiet.getvalue() == "" and progress.count == 1
    tty = _Tty()
    progress = Progress(tty)
    progress(CheckResult("tools.list", Level.MUST, Status.PASS))
    progress(CheckResult("tools.input-schema", Level.MUST, Status.FAIL))
    assert "\rtrimcp: 2 results, last: tools.input-schema FAIL" in tty.getvalue()
    progress.close()
    assert tty.getvalue().endswith("\r")  # the line is erased when the run ends


# --------------------------------------------------------------------------- verdicts


def test_expected_failures_file_formats(tmp_path: Path) -> None:
    text = tmp_path / "expected.txt"
    text.write_text("# known defects\ntools.input-schema   # until 2.0\n\nhttp.origin\n")
    assert read_expected(text, CATALOG) == {"tools.input-schema", "http.origin"}
    as_json = tmp_path / "expected.json"
    as_json.write_text('["tools.input-schema"]')
    assert read_expected(as_json, CATALOG) == {"tools.input-schema"}
    as_json.write_text('{"tools.input-schema": 1}')
    with pytest.raises(ValueError, match="list of check ids"):
        read_expected(as_json, CATALOG)
    text.write_text("tools.nope\n")
    with pytest.raises(ValueError, match="unknown check ids: tools.nope"):
        read_expected(text, CATALOG)
    with pytest.raises(ValueError, match="cannot read"):
        read_expected(tmp_path / "missing.txt", CATALOG)


def test_judge_must_should_expected_and_stale() -> None:
    must = judge(FAILING)
    assert not must.ok and [r.id for r in must.blocking] == ["tools.input-schema"]
    should = judge(FAILING, fail_on="should")
    # The warned SHOULD blocks too; the failed BEST-PRACTICE never does.
    assert [r.id for r in should.blocking] == ["tools.input-schema", "tools.unique-names"]
    excused = judge(FAILING, expected={"tools.input-schema"})
    assert excused.ok and [r.id for r in excused.expected] == ["tools.input-schema"]
    stale = judge(FAILING, expected={"tools.input-schema", "lifecycle.initialize", "http.origin"})
    assert not stale.ok and stale.blocking == () and [r.id for r in stale.stale] == ["lifecycle.initialize"]
    with pytest.raises(ValueError):
        judge(FAILING, fail_on="may")


# --------------------------------------------------------------------------- reporters


def test_spec_link_from_sentences_else_section(monkeypatch: pytest.MonkeyPatch) -> None:
    cat = Catalogue(
        (
            Requirement(
                "lifecycle.answer",
                "MUST",
                ("2025-06-18", "2025-11-25"),
                "basic/lifecycle",
                "initialization",
                "A sentence.",
                {"lifecycle.initialize": Coverage.PARTIAL},
            ),
            Requirement(
                "lifecycle.answer-2",
                "MUST",
                ("2025-11-25",),
                "basic/lifecycle",
                "version-negotiation",
                "Another.",
                {"lifecycle.initialize": Coverage.FULL},
            ),
        ),
        (),
    )
    monkeypatch.setattr(report_rows, "_catalogue", lambda: cat)
    url, ids = report_rows.spec_link("lifecycle.initialize", "2025-11-25")
    assert url == spec_url("2025-11-25", "basic/lifecycle", "version-negotiation")  # the full one first
    assert ids == ("lifecycle.answer-2", "lifecycle.answer")
    assert report_rows.spec_link("lifecycle.initialize", "2025-06-18") == (
        spec_url("2025-06-18", "basic/lifecycle", "initialization"),
        ("lifecycle.answer",),
    )
    # No sentence: the check's section, in the run's revision or its newest one.
    assert report_rows.spec_link("tools.list", "2025-03-26")[0] == spec_url("2025-03-26", "server/tools")
    assert report_rows.spec_link("tools.list", None)[0] == spec_url("2026-07-28", "server/tools")


def test_console_puts_failures_first_and_folds_skips() -> None:
    out = io.StringIO()
    print_report(FAILING, out)
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["target:   t", "era:      handshake", "revision: 2025-11-25"]
    assert [line for line in lines if line.startswith("[")] == [
        "[MUST failures]",
        "[SHOULD failures and warnings]",
        "[best-practice advice]",
        "[passed]",
        "[skipped] (--show-skipped lists them)",
    ]
    ids = [line.split()[0] for line in lines if line.split() and line.split()[0] in CATALOG]
    assert ids == ["tools.input-schema", "tools.unique-names", "tools.unknown-tool", "lifecycle.initialize"]
    at = lines.index(next(line for line in lines if line.startswith("tools.input-schema")))
    assert lines[at].split()[:3] == ["tools.input-schema", "MUST", "FAIL"]
    # The link: the page of the check's first sentence, else of its section, in the run's revision.
    assert lines[at + 1].startswith("    see https://modelcontextprotocol.io/specification/2025-11-25/server/tools")
    # The evidence as JSON, one line per item; the bytes sent are JSON, not a Python repr.
    assert lines[at + 2] == '    evidence: {"sent": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}'
    assert lines[at + 3] == '    evidence: {"received": "not json"}'
    # A best-practice finding is advice, never FAIL.
    advice = next(line for line in lines if line.startswith("tools.unknown-tool"))
    assert advice.split()[:3] == ["tools.unknown-tool", "BEST-PRACTICE", "advice"]
    assert "FAIL" not in advice
    passed = lines.index(next(line for line in lines if line.startswith("lifecycle.initialize")))
    assert not lines[passed + 1].startswith("    ")
    # The skip is a count by reason, not a row.
    assert "1 skipped: not an HTTP target" in lines and not any(line.startswith("http.origin") for line in lines)
    assert lines[-1] == "1 passed, 1 failed, 2 warnings, 1 skipped; 1 MUST failures"
    verdict = judge(FAILING, expected={"tools.input-schema", "lifecycle.initialize"})
    out = io.StringIO()
    print_report(FAILING, out, verdict=verdict)
    last = out.getvalue().splitlines()[-1]
    assert "1 expected failures" in last and "lifecycle.initialize" in last and last.endswith("; FAILED")


def test_console_show_skipped_lists_them_row_by_row() -> None:
    out = io.StringIO()
    print_report(FAILING, out, show_skipped=True)
    lines = out.getvalue().splitlines()
    assert lines.index("[skipped]") == lines.index(next(x for x in lines if x.startswith("http.origin"))) - 1
    row = next(line for line in lines if line.startswith("http.origin"))
    assert row.split()[:3] == ["http.origin", "MUST", "skip"] and row.endswith("not an HTTP target")
    assert not any("skipped: not an HTTP target" in line for line in lines)


def test_results_time_each_check_and_split_a_burst_evenly() -> None:
    now = [100.0]
    rec = Results(clock=lambda: now[0])
    now[0] += 2.0  # two seconds of work, then one verdict
    rec.ok("tools.list", "3 tools")
    now[0] += 3.0  # a probe group's three seconds, then its two verdicts in a row
    rec.ok("tools.unique-names")
    rec.warn("tools.name-format", "bad")
    now[0] += 1.0
    rec.fail("tools.list", "later, worse")  # a check put twice sums its shares
    by_id = {r.id: r for r in rec.finish("not reached")}
    assert by_id["tools.list"].duration == pytest.approx(3.0)
    assert by_id["tools.unique-names"].duration == pytest.approx(1.5)
    assert by_id["tools.name-format"].duration == pytest.approx(1.5)
    assert by_id["lifecycle.ping"].duration is None  # never put
    cases = {c.get("name"): c for c in _junit(_report(*by_id.values())).iter("testcase")}
    assert cases["tools.list"].get("time") == "3.000" and cases["lifecycle.ping"].get("time") == "0.000"
    assert document(_report(*by_id.values()))["checks"][0]["duration"] is None


def test_evidence_is_json_whatever_a_check_handed_over() -> None:
    from trimcp._sansio import jsonrpc as rpc
    from trimcp.conformance.report_evidence import jsonable, shown

    weird = CheckResult(
        "tools.input-schema",
        Level.MUST,
        Status.FAIL,
        "x",
        (
            b"\xff\xfe",
            b"ok\n",
            rpc.Request(id=1, method="tools/list"),
            ("a", 1),
            {1: {"b"}},
            {"request": {"body": '{"jsonrpc": "2.0"}'}},
        ),
    )
    doc = document(_report(weird))
    jsonschema.validate(doc, json_schema())
    assert doc["checks"][0]["evidence"] == [
        {"base64": "//4=", "bytes": 2},
        "ok\n",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        ["a", 1],
        {"1": ["b"]},
        {"request": {"body": '{"jsonrpc": "2.0"}'}},
    ]
    assert jsonable(object())["type"] == "object"
    # For a reader, a JSON body is shown parsed; nothing is a Python repr.
    assert shown({"request": {"body": '{"jsonrpc": "2.0"}'}}) == '{"request": {"body": {"jsonrpc": "2.0"}}}'
    for text in (markdown(_report(weird)), junit_xml(_report(weird))):
        assert "b'" not in text and "Request(" not in text


def test_skipped_summary_counts_by_reason_largest_first() -> None:
    report = _report(
        CheckResult("http.origin", Level.MUST, Status.SKIP, "not an HTTP target"),
        CheckResult("lifecycle.ping", Level.SHOULD, Status.SKIP, "not in 2025-11-25"),
        CheckResult("http.content-type", Level.MUST, Status.SKIP, "not an HTTP target"),
        CheckResult("tools.list", Level.MUST, Status.PASS, "1 tools"),
    )
    groups = report_rows.skipped_summary(report_rows.rows(report))
    assert [(g.reason, g.ids) for g in groups] == [
        ("not an HTTP target", ("http.origin", "http.content-type")),
        ("not in 2025-11-25", ("lifecycle.ping",)),
    ]
    out = io.StringIO()
    print_report(report, out)
    assert "2 skipped: not an HTTP target\n1 skipped: not in 2025-11-25\n" in out.getvalue()


def test_best_practice_is_never_fail_in_any_format() -> None:
    best = _report(CheckResult("tools.unknown-tool", Level.BEST, Status.FAIL, "answered {}"))
    doc = document(best)
    jsonschema.validate(doc, json_schema())
    assert doc["checks"][0]["status"] == "warn" and doc["summary"]["fail"] == 0 and doc["summary"]["warn"] == 1
    # The schema itself refuses a best-practice row marked fail.
    doc["checks"][0]["status"] = "fail"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, json_schema())
    text = markdown(best)
    assert "💡 advice" in text and "fail" not in text.split("**", 2)[2].replace("failed", "")
    case = next(_junit(best).iter("testcase"))
    assert case.find("failure") is None and (case.findtext("system-out") or "").startswith("advice: ")
    out = io.StringIO()
    print_report(best, out)
    assert "FAIL" not in out.getvalue()


def test_only_shows_the_selected_rows_in_every_format() -> None:
    rows_ = [CheckResult(i, CATALOG[i].level, Status.SKIP, "not selected") for i in CATALOG]
    by_id = {r.id: r for r in rows_}
    by_id["tools.list"] = CheckResult("tools.list", Level.MUST, Status.PASS, "3 tools")
    by_id["tools.input-schema"] = CheckResult("tools.input-schema", Level.MUST, Status.FAIL, "bad")
    report = _report(*by_id.values())
    report.selection = Selection(only=("tools.list", "tools.input-schema"))
    text = io.StringIO()
    print_report(report, text, show_skipped=True)
    assert "not selected" not in text.getvalue()
    assert f"({len(CATALOG) - 2} other checks not shown)" in text.getvalue()
    assert "not selected" not in markdown(report)
    cases = {c.get("name") for c in _junit(report).iter("testcase")}
    assert cases == {"tools.list", "tools.input-schema"}
    doc = document(report)
    jsonschema.validate(doc, json_schema())
    assert [c["id"] for c in doc["checks"]] == ["tools.list", "tools.input-schema"]
    assert doc["selection"] == {"only": ["tools.list", "tools.input-schema"], "skip": [], "omitted": len(CATALOG) - 2}
    assert doc["summary"]["skip"] == 0 and doc["skipped_summary"] == []
    # --skip alone still reports what it skipped, as skipped.
    report.selection = Selection(skip=("tools.name-format",))
    assert any(c["id"] == "tools.name-format" for c in document(report)["checks"])


def test_console_colour_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color("auto", _Tty()) and not use_color("auto", io.StringIO())
    assert use_color("always", io.StringIO()) and not use_color("never", _Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color("auto", _Tty()) and use_color("always", _Tty())


def test_console_in_colour_links_every_id() -> None:
    pytest.importorskip("rich")
    out = io.StringIO()
    print_report(FAILING, out, color=True, show_skipped=True)
    text = out.getvalue()
    assert "\x1b[" in text  # ANSI styles
    assert "\x1b]8;" in text and spec_url("2025-11-25", "server/tools") in text  # OSC 8 hyperlinks
    for result in FAILING.results:
        assert result.id in text
    assert "advice" in text and "FAIL" in text
    folded = io.StringIO()
    print_report(FAILING, folded, color=True)
    assert "http.origin" not in folded.getvalue() and "1 skipped: not an HTTP target" in folded.getvalue()


async def test_json_report_of_a_real_run_matches_its_schema(autojump_clock: trio.abc.Clock) -> None:
    report, _ = await _reference()
    doc = json.loads(json.dumps(report.to_json()))
    jsonschema.Draft202012Validator.check_schema(json_schema())
    jsonschema.validate(doc, json_schema())
    assert doc["schema"] == SCHEMA == "trimcp-check/1"
    assert doc["server_info"]["name"] == "trimcp-reference"
    assert doc["summary"]["ok"] is True and doc["summary"]["fail"] == 0
    assert doc["summary"]["pass"] == sum(1 for c in doc["checks"] if c["status"] == "pass")
    by_id = {c["id"]: c for c in doc["checks"]}
    assert by_id["tools.list"]["category"] == "tools"
    assert by_id["tools.list"]["title"] == CATALOG["tools.list"].title
    assert by_id["tools.list"]["spec"].startswith("https://modelcontextprotocol.io/specification/2026-07-28/")
    # The added keys: no selection, the skips counted by reason, every check that ran timed.
    assert doc["selection"] == {"only": [], "skip": [], "omitted": 0}
    assert sum(g["count"] for g in doc["skipped_summary"]) == doc["summary"]["skip"] > 0
    assert all(c["duration"] is not None for c in doc["checks"] if c["status"] != "skip")


def test_json_report_carries_evidence_and_verdict() -> None:
    out = io.StringIO()
    write_json(FAILING, out)
    doc = json.loads(out.getvalue())
    jsonschema.validate(doc, json_schema())
    row = next(c for c in doc["checks"] if c["id"] == "tools.input-schema")
    assert row["evidence"] == [{"sent": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}, {"received": "not json"}]
    assert "verdict" not in doc and doc["summary"]["ok"] is False
    judged = document(FAILING, judge(FAILING, expected={"tools.input-schema"}))
    jsonschema.validate(judged, json_schema())
    assert judged["summary"]["ok"] is True and judged["summary"]["must_failures"] == 1
    assert judged["verdict"] == {
        "fail_on": "must",
        "blocking": [],
        "expected_failures": ["tools.input-schema"],
        "stale": [],
    }
    # A document that drops a required key is refused by the schema.
    del judged["summary"]["ok"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(judged, json_schema())


def _junit(report: Report, **judging: object) -> ET.Element:
    root = ET.fromstring(junit_xml(report, judge(report, **judging)))  # type: ignore[arg-type]
    # The shape every JUnit reader takes: testsuites > testsuite > testcase, integer counts.
    assert root.tag == "testsuites"
    for suite in root:
        assert suite.tag == "testsuite" and suite.get("name")
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "")) == len(cases)
        assert int(suite.get("failures", "")) == len(suite.findall("testcase/failure"))
        assert int(suite.get("skipped", "")) == len(suite.findall("testcase/skipped"))
        assert suite.get("errors") == "0"
        for case in cases:
            assert case.get("classname") == suite.get("name") and case.get("name")
            assert {child.tag for child in case} <= {"failure", "skipped", "system-out"}
    assert int(root.get("tests", "")) == sum(int(s.get("tests", "")) for s in root)
    return root


def test_junit_report() -> None:
    root = _junit(FAILING)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    failure = cases["tools.input-schema"].find("failure")
    assert failure is not None and failure.get("type") == "MUST"
    assert failure.get("message", "").startswith("hello: type is 'string'")
    assert '"method": "tools/list"' in (failure.text or "") and "spec: https://" in (failure.text or "")
    skipped = cases["http.origin"].find("skipped")
    assert skipped is not None and skipped.get("message") == "not an HTTP target"
    # A warning and a best-practice failure are shown, but do not fail the suite at --fail-on must.
    assert cases["tools.unique-names"].find("failure") is None
    assert "warn: hello twice" in (cases["tools.unique-names"].findtext("system-out") or "")
    assert cases["tools.unknown-tool"].find("failure") is None
    assert root.get("failures") == "1"
    strict = {c.get("name"): c for c in _junit(FAILING, fail_on="should").iter("testcase")}
    assert strict["tools.unique-names"].find("failure") is not None
    listed = {
        c.get("name"): c
        for c in _junit(FAILING, expected={"tools.input-schema", "lifecycle.initialize"}).iter("testcase")
    }
    assert listed["tools.input-schema"].find("skipped") is not None and "expected failure" in listed[
        "tools.input-schema"
    ].find("skipped").get("message", "")  # type: ignore[union-attr]
    stale = listed["lifecycle.initialize"].find("failure")
    assert stale is not None and stale.get("type") == "stale" and "remove it" in stale.get("message", "")


def test_markdown_report() -> None:
    text = markdown(_report(*FAILING.results, CheckResult("tools.list", Level.MUST, Status.PASS, "a | b\nc")))
    lines = text.splitlines()
    assert lines[0] == "# trimcp check: `t`"
    assert [line for line in lines if line.startswith("## ")] == ["## Failures, warnings and advice (3)"]
    link, _ = spec_link("tools.input-schema", "2025-11-25")
    # The link is the check's first sentence's page and anchor (else its section's page).
    assert link.startswith(spec_url("2025-11-25", "server/tools"))
    assert f"| [`tools.input-schema`]({link}) | MUST | ❌ **fail** |" in text
    assert "| BEST-PRACTICE | 💡 advice | answered {} |" in text
    # The failures' evidence as JSON (code spans, a pipe escaped), not Python reprs.
    row = next(line for line in lines if line.startswith("| `tools.input-schema` |"))
    assert '`{"sent": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}`<br>`{"received": "not json"}`' in row
    # Passes and skips are folded, a detail cannot break its line.
    assert "<details><summary>2 passed</summary>" in lines and "<details><summary>1 skipped</summary>" in lines
    assert "`tools.list` (a \\| b c)" in text
    assert "- 1 with a reason of their own: `http.origin` (not an HTTP target)" in lines
    assert text.count("<details>") == text.count("</details>") == 3


# --------------------------------------------------------------------------- --requirements


def _catalogue() -> Catalogue:
    def req(rid: str, strength: str, checks: dict[str, Coverage]) -> Requirement:
        return Requirement(rid, strength, ("2025-11-25",), "server/tools", "listing-tools", f"Text of {rid}.", checks)

    return Catalogue(
        (
            req("tools.a", "MUST", {"tools.list": Coverage.FULL}),
            req("tools.b", "MUST NOT", {"tools.input-schema": Coverage.PARTIAL}),
            req("tools.c", "MUST", {}),
            req("tools.d", "SHOULD", {"tools.unique-names": Coverage.FULL}),
        ),
        (),
    )


def test_requirements_coverage_json_and_table() -> None:
    zero = {"total": 0, "full": 0, "partial": 0}
    assert coverage_document(_catalogue(), ("2025-11-25", "2026-07-28")) == {
        "revisions": {
            "2025-11-25": {
                "core": {
                    "MUST": {"total": 3, "full": 1, "partial": 1},
                    "SHOULD": {"total": 1, "full": 1, "partial": 0},
                },
                "extensions": {"MUST": zero, "SHOULD": zero},
            },
            "2026-07-28": {"core": {"MUST": zero, "SHOULD": zero}, "extensions": {"MUST": zero, "SHOULD": zero}},
        }
    }
    out = io.StringIO()
    write_coverage(_catalogue(), ("2025-11-25",), out, listing=True)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == [
        "revision",
        "scope",
        "level",
        "total",
        "full",
        "partial",
        "uncovered",
        "full%",
        "covered",
    ]
    assert lines[1].split() == ["2025-11-25", "core", "MUST", "3", "1", "1", "1", "33.3%", "66.7%"]
    assert lines[2].split() == ["2025-11-25", "core", "SHOULD", "1", "1", "0", "0", "100.0%", "100.0%"]
    assert "uncovered in 2025-11-25: 1" in lines
    assert "  tools.c  MUST  server/tools#listing-tools" in lines and "      Text of tools.c." in lines


# --------------------------------------------------------------------------- the CLI


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trimcp.cli", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        cwd=cwd,
        check=False,
    )


BAD_TOOL = ["--", sys.executable, BAD_SERVER, "--mode", "bad-tool-schema"]


def test_cli_requirements_contacts_nothing() -> None:
    proc = cli("check", "--requirements", "--format", "json", "--revision", "2025-11-25")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert list(doc) == ["revisions"] and list(doc["revisions"]) == ["2025-11-25"]
    assert set(doc["revisions"]["2025-11-25"]) == {"core", "extensions"}
    assert set(doc["revisions"]["2025-11-25"]["core"]) == {"MUST", "SHOULD"}
    assert set(doc["revisions"]["2025-11-25"]["core"]["MUST"]) == {"total", "full", "partial"}
    assert proc.stderr == ""  # not even "running the bundled reference server"
    listing = cli("check", "--requirements", "-v")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.splitlines()[0].split()[:3] == ["revision", "scope", "level"]
    assert sum(1 for line in listing.stdout.splitlines() if line.startswith("uncovered in ")) == 5


@pytest.mark.parametrize(
    "args, message",
    [
        (("--only", "tols.*"), "'tols.*' matches no check"),
        (("--skip", "http.orign"), "'http.orign' matches no check"),
        (("--requirements", "http://127.0.0.1:1/mcp"), "contacts no server"),
        (("--list",), "goes with --requirements"),
        (("--requirements", "--format", "junit"), "text or json"),
        (("--expected-failures", "/nonexistent/expected.txt"), "cannot read"),
    ],
)
def test_usage_errors_before_anything_starts(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        _read_command_line(["check", *args])


def test_cli_usage_error_exits_2() -> None:
    proc = cli("check", "--only", "tols.*")
    assert proc.returncode == 2 and "'tols.*' matches no check" in proc.stderr, proc.stderr
    assert "running the bundled reference server" not in proc.stderr


def test_cli_junit_output_expected_failures_and_selection(tmp_path: Path) -> None:
    expected = tmp_path / "expected.txt"
    expected.write_text("tools.input-schema  # the hello tool's schema is a string\n")
    report = tmp_path / "report.xml"
    proc = cli(
        "check",
        "--format",
        "junit",
        "--output",
        str(report),
        "--only",
        "tools.*",
        "--skip",
        "tools.name-format",
        "--expected-failures",
        str(expected),
        "--fail-on",
        "should",
        *BAD_TOOL,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The report is in the file; stdout holds only the summary line.
    assert proc.stdout.count("\n") == 1 and "1 expected failures" in proc.stdout and str(report) in proc.stdout
    root = _junit_file(report)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    # --only: the selected checks alone (--skip takes tools.name-format out of them).
    assert set(cases) == {i for i in CATALOG if i.startswith("tools.") and i != "tools.name-format"}
    assert "expected failure" in cases["tools.input-schema"].find("skipped").get("message", "")  # type: ignore[union-attr]
    assert cases["tools.list"].find("failure") is None and cases["tools.list"].find("skipped") is None
    # Real durations: every check that ran was timed, the suites sum them.
    times = [float(c.get("time", "")) for c in root.iter("testcase")]
    assert all(t >= 0 for t in times) and sum(times) > 0
    assert float(root.get("time", "")) == pytest.approx(sum(float(s.get("time", "")) for s in root), abs=0.01)


def _junit_file(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites" and int(root.get("tests", "")) == len(list(root.iter("testcase")))
    return root


def test_cli_json_failing_run_matches_schema() -> None:
    proc = cli("check", "--format", "json", "--only", "tools.*", *BAD_TOOL)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, json_schema())
    assert doc["verdict"]["blocking"] == ["tools.input-schema"] and doc["summary"]["ok"] is False
    row = next(c for c in doc["checks"] if c["id"] == "tools.input-schema")
    assert row["status"] == "fail" and row["category"] == "tools"


def test_cli_text_in_colour_on_request() -> None:
    pytest.importorskip("rich")
    proc = cli("check", "--color", "always", "--only", "tools.input-schema", *BAD_TOOL)
    assert proc.returncode == 1, proc.stderr
    assert "\x1b[" in proc.stdout and "tools.input-schema" in proc.stdout
    plain = cli("check", "--color", "never", "--only", "tools.input-schema", "--format", "markdown", *BAD_TOOL)
    assert plain.returncode == 1 and "\x1b[" not in plain.stdout and "## Failures" in plain.stdout


def test_cli_progress_on_a_terminal_stderr_only() -> None:
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "trimcp.cli", "check", "--only", "tools.*", *BAD_TOOL],
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=CLI_TIMEOUT,
            cwd=REPO,
            check=False,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    stderr = b"".join(chunks).decode()
    assert proc.returncode == 1
    assert "\rtrimcp: 1 results, last: " in stderr and "tools.input-schema FAIL" in stderr
    assert "\r" not in proc.stdout and "trimcp: " not in proc.stdout  # the report itself is untouched


def test_probe_groups_name_every_check_they_decide() -> None:
    """The runner skips a probe group when none of its listed checks is selected: a check the
    group decides but the list forgets would never run under ``--only`` that names it."""
    from trimcp.conformance import runner

    root = Path(runner.__file__).parent / "checks"
    for module, listed in (
        ("negative.py", runner.NEGATIVE_PROBE_CHECKS),
        ("feature_probes.py", runner.FEATURE_PROBE_CHECKS),
    ):
        named = set(re.findall(r'"([a-z]+\.[a-z0-9-]+)"', (root / module).read_text())) & set(CATALOG)
        decided = named - {"jsonrpc.unknown-method", "jsonrpc.error-codes"}  # (decided elsewhere too)
        assert decided <= set(listed), (module, sorted(decided - set(listed)))


def test_cli_show_skipped() -> None:
    folded = cli("check", "--color", "never", "--only", "tools.*", *BAD_TOOL)
    listed = cli("check", "--color", "never", "--only", "tools.*", "--show-skipped", *BAD_TOOL)
    assert folded.returncode == listed.returncode == 1, folded.stderr + listed.stderr
    skipped = [line.split()[0] for line in listed.stdout.splitlines() if line.split()[2:3] == ["skip"]]
    assert skipped and all(i.startswith("tools.") for i in skipped)
    assert not any(line.startswith(tuple(skipped)) for line in folded.stdout.splitlines())
    assert "(--show-skipped lists them)" in folded.stdout and "not selected" not in folded.stdout + listed.stdout
