"""``trimcp check --format html``: one self-contained page, checked in a real headless browser.

* In a browser (Debian's Chromium, driven over the DevTools protocol by
  ``helpers/headless_browser.py``; the tests skip, saying so, when no Chromium is found, and
  ``.ci/run`` installs it): the page a CLI run writes renders with no console error, no
  Content-Security-Policy refusal and no request but its own file; the counts it shows are
  those of the JSON report of the same run (carried in the page, and checked against the
  ``trimcp-check/1`` schema), per category too; the failures come first, folded, their
  evidence hidden until opened, each linked to the same spec sentence as the JSON report;
  the filter box hides what does not match.
* Without a browser: what a server says cannot break out of the page (escaping, the data
  block), and the policy names the page's own style and script by their hashes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import trio
from headless_browser import chromium, open_page
from repo_paths import REPO

from trimcp.conformance import run_checks
from trimcp.conformance.model import CheckResult, Level, Report, Status
from trimcp.conformance.report_html import html_report
from trimcp.conformance.report_json import document, json_schema
from trimcp.reference import build_server
from trimcp.testing import serve_in_process

BAD_SERVER = [sys.executable, str(REPO / "tests" / "helpers" / "bad_server.py"), "--mode", "bad-tool-schema"]
CHROMIUM = chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium binary found (chromium, chromium-browser, google-chrome): "
    "apt-get install chromium (.ci/run installs it when missing)",
)

#: What the page shows, read from the rendered DOM: each count as its visible text.
SHOWN = """JSON.stringify({
  counts: Object.fromEntries([...document.querySelectorAll('#counts [data-count]')]
    .map(e => [e.dataset.count, e.innerText])),
  categories: Object.fromEntries([...document.querySelectorAll('#categories tr[data-category]')]
    .map(r => [r.dataset.category, Object.fromEntries([...r.querySelectorAll('[data-count]')]
      .map(c => [c.dataset.count, Number(c.innerText)]))])),
  checks: [...document.querySelectorAll('details.check')].map(d => ({
    id: d.dataset.check, status: d.dataset.status, open: d.open,
    href: d.querySelector('summary a') ? d.querySelector('summary a').getAttribute('href') : null,
    evidenceShown: [...d.querySelectorAll('pre')].some(p => p.checkVisibility()),
    evidence: d.querySelectorAll('pre').length})),
  verdict: document.getElementById('verdict').innerText,
  ready: document.body.dataset.ready,
})"""


def embedded(page_html: str) -> dict[str, Any]:
    """The JSON report the page carries."""
    found = re.search(r'<script type="application/json" id="report-json">(.*?)</script>', page_html, re.S)
    assert found is not None
    value: dict[str, Any] = json.loads(found.group(1))
    return value


def per_category(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter[str]] = {}
    for check in doc["checks"]:
        out.setdefault(check["category"], Counter())[check["status"]] += 1
    return {name: {s: counts[s] for s in ("pass", "fail", "warn", "skip")} for name, counts in out.items()}


async def assert_renders(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """Load ``path`` in Chromium: no error of any kind, nothing fetched, the counts of ``doc``."""
    assert CHROMIUM is not None
    async with open_page(path, binary=CHROMIUM) as page:
        shown = json.loads(await page.evaluate(SHOWN))
        assert page.errors == []
        assert page.requests == [path.resolve().as_uri()]  # no font, script, style or image fetched
        assert shown["ready"] == "1"  # the page's script ran: the policy allowed it, and only it
        summary = doc["summary"]
        assert shown["counts"] == {k: str(summary[k]) for k in ("pass", "fail", "warn", "skip", "must_failures")}
        assert shown["categories"] == per_category(doc)
        found = [c for c in doc["checks"] if c["status"] in ("fail", "warn")]
        # Failures first (MUST before the others), each folded, its link the JSON report's.
        assert [c["id"] for c in shown["checks"]] == [c["id"] for c in _ordered(found)]
        spec = {c["id"]: c["spec"] for c in doc["checks"]}
        for check in shown["checks"]:
            assert not check["open"] and not check["evidenceShown"]
            assert check["href"] == (spec[check["id"]] or None)
        if shown["checks"]:
            # Opening a check shows its evidence.
            await page.evaluate("document.querySelector('details.check').open = true")
            assert await page.evaluate(
                "[...document.querySelector('details.check').querySelectorAll('pre')].every(p => p.checkVisibility())"
            )
        # The filter box hides the checks that do not match, and says how many do.
        await page.evaluate(
            "(() => { const f = document.getElementById('filter'); f.value = 'lifecycle.';"
            " f.dispatchEvent(new Event('input')); })()"
        )
        visible = await page.evaluate("[...document.querySelectorAll('[data-check]')].filter(e => !e.hidden).length")
        matching = [
            c for c in doc["checks"] if "lifecycle." in " ".join((c["id"], c["title"], c["detail"], c["level"])).lower()
        ]
        assert visible == len(matching) > 0
        assert await page.evaluate("document.getElementById('shown-count').innerText") == (
            f"{len(matching)} of {len(doc['checks'])} checks match"
        )
        await page.settle(0.2)
        assert page.errors == []
        return dict(shown)


def _ordered(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def rank(c: dict[str, Any]) -> int:
        if c["status"] == "fail" and c["level"] == "MUST":
            return 0
        if c["level"] == "BEST-PRACTICE":
            return 2
        return 1

    return sorted(found, key=rank)


@needs_chromium
@pytest.mark.deadline(180)
async def test_cli_html_report_renders_in_chromium_with_the_json_counts(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    with trio.fail_after(150):
        done = await trio.run_process(
            [sys.executable, "-m", "trimcp", "check", "--format", "html", "--output", str(out), "--", *BAD_SERVER],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 1, done.stderr  # a MUST failed: tools.input-schema
    assert done.stdout.decode().endswith(f"FAILED (report: {out})\n")
    page_html = out.read_text(encoding="utf-8")
    doc = embedded(page_html)
    jsonschema.validate(doc, json_schema())  # the JSON report of the run, as --format json writes it
    assert doc["summary"]["must_failures"] == 1
    shown = await assert_renders(out, doc)
    assert shown["checks"][0]["id"] == "tools.input-schema" and shown["checks"][0]["evidence"] > 0
    assert "1 MUST failures; FAILED" in shown["verdict"]


@needs_chromium
@pytest.mark.deadline(180)
async def test_reference_server_report_renders_in_chromium(tmp_path: Path) -> None:
    # A run of the reference server in process: passes and skips in every category.
    with trio.fail_after(150):
        report = await run_checks(lambda: serve_in_process(build_server()), target="reference (in-process)")
    out = tmp_path / "reference.html"
    out.write_text(html_report(report), encoding="utf-8")
    doc = json.loads(json.dumps(document(report)))
    assert embedded(out.read_text(encoding="utf-8")) == doc
    shown = await assert_renders(out, doc)
    assert shown["counts"]["fail"] == "0" and len(shown["categories"]) > 10


# --------------------------------------------------------------------------- without a browser


HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)> & \u2028"


def _hostile_report() -> Report:
    return Report(
        target=f"python server.py {HOSTILE}",
        revision="2025-11-25",
        era="handshake",
        server_info={"name": HOSTILE, "version": "1"},
        results=[
            CheckResult("tools.input-schema", Level.MUST, Status.FAIL, HOSTILE, ({"body": HOSTILE},)),
            CheckResult("lifecycle.initialize", Level.MUST, Status.PASS, HOSTILE),
            CheckResult("http.origin", Level.MUST, Status.SKIP, HOSTILE),
        ],
    )


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def test_what_a_server_says_cannot_break_out_of_the_page() -> None:
    report = _hostile_report()
    page = html_report(report)
    parser = _Tags()
    parser.feed(page)
    # The page's own script and its data block; neither the target, the server's name, a
    # detail nor evidence adds a tag or an event handler.
    scripts = [dict(attrs) for tag, attrs in parser.tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "report-json"}, {}]
    assert "img" not in {tag for tag, _ in parser.tags}
    assert not any(name.startswith("on") for _, attrs in parser.tags for name, _ in attrs)
    assert embedded(page) == json.loads(json.dumps(document(report)))


def test_the_policy_allows_the_page_s_own_style_and_script_and_nothing_else() -> None:
    page = html_report(_hostile_report())
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    directives = dict(d.strip().split(" ", 1) for d in policy.group(1).replace("&#x27;", "'").split(";"))
    assert directives["default-src"] == "'none'"
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        (body,) = re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.S)
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert directives[directive] == f"'sha256-{digest}'"
    assert not re.search(r'(src|href)="(https?:)?//', page.split("<body>")[0])  # nothing loaded from anywhere


def test_cli_html_to_stdout() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trimcp", "check", "--format", "html", "--only", "lifecycle.*", "--", *BAD_SERVER],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!doctype html>") and done.stdout.endswith("</html>\n")
    doc = embedded(done.stdout)
    assert {c["category"] for c in doc["checks"]} == {"lifecycle"}
