"""``trimcp check --format json``: the report as a versioned JSON document.

Theory of operation
-------------------
The document names its shape in ``"schema": "trimcp-check/1"``; the JSON
Schema of that shape ships in the package (``schemas/trimcp-check-1.json``,
``json_schema()``).  Within a schema version keys are only ever added, never
renamed or removed, so a consumer that checks ``schema`` keeps working.  The
keys of the first JSON output (``target``, ``transport``, ``revision``,
``era``, and per check ``id``, ``level``, ``status``, ``detail``) are kept.

Per check it carries the description, category, spec link and requirement
ids (``report_rows``) and the evidence; ``summary`` counts statuses.  When the
CLI judged the run with ``--fail-on`` / ``--expected-failures`` the
``verdict`` key says which rows blocked it, which were tolerated and which are
stale, and ``summary.ok`` is that verdict; otherwise ``ok`` means no MUST
check failed.

As in every format (``report_rows``): a BEST-PRACTICE finding has status
``warn``, never ``fail``; with ``--only`` the document holds the selected
checks alone, and ``selection`` names the patterns and how many checks were
left out; ``skipped_summary`` counts the skips by reason; each check's
``duration`` is its seconds (``Results``' clock) or ``null``; evidence is JSON
values (``report_evidence.jsonable``: bytes that are not UTF-8 as
``{"base64", "bytes"}``).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any, Final, TextIO

from . import model
from .report_evidence import jsonable
from .report_rows import omitted, rows, skipped_summary, summary

if TYPE_CHECKING:
    from .expected import Verdict
    from .model import Report

__all__ = ["SCHEMA", "document", "json_schema", "write_json"]

SCHEMA: Final = "trimcp-check/1"


def document(report: Report, verdict: Verdict | None = None) -> dict[str, Any]:
    counts = summary(report)
    items = rows(report)
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "target": report.target,
        "transport": report.transport,
        "revision": report.revision,
        "era": report.era,
        "server_info": report.server_info,
        "summary": {
            "pass": counts.passed,
            "fail": counts.failed,
            "warn": counts.warned,
            "skip": counts.skipped,
            "must_failures": counts.must_failures,
            "ok": verdict.ok if verdict is not None else counts.ok,
        },
        "checks": [
            {
                "id": r.id,
                "title": r.title,
                "category": r.category,
                "level": r.level.value,
                "status": r.status.value,
                "detail": r.detail,
                "spec": r.spec,
                "sentences": list(r.sentences),
                "evidence": [jsonable(item) for item in r.evidence],
                "duration": None if r.duration is None else round(r.duration, 6),
            }
            for r in items
        ],
        "selection": {
            "only": list(report.selection.only),
            "skip": list(report.selection.skip),
            "omitted": omitted(report),
        },
        "skipped_summary": [
            {"reason": g.reason, "count": len(g.ids), "checks": list(g.ids)} for g in skipped_summary(items)
        ],
    }
    if verdict is not None:
        doc["verdict"] = verdict.to_json()
    return doc


def write_json(report: Report, out: TextIO, verdict: Verdict | None = None) -> None:
    """Write the report as the versioned ``trimcp-check/1`` JSON document."""
    # (ASCII escapes, as before: a report piped through a non-UTF-8 stdout still writes)
    json.dump(document(report, verdict), out, indent=2)
    out.write("\n")


model.render_json = document


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``document``'s output."""
    text = (resources.files(__package__) / "schemas" / "trimcp-check-1.json").read_text(encoding="utf-8")
    value: dict[str, Any] = json.loads(text)
    return value
