"""Render a Report for people (a table) and for machines (JSON)."""

from __future__ import annotations

import json
from typing import TextIO

from .model import Report, Status

_MARK = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.WARN: "warn", Status.SKIP: "skip"}


def print_table(report: Report, out: TextIO) -> None:
    info = report.server_info or {}
    out.write(f"target:   {report.target}\n")
    if info:
        out.write(f"server:   {info.get('name')} {info.get('version')}\n")
    out.write(f"era:      {report.era or '(none negotiated)'}\n")
    out.write(f"revision: {report.revision or '(none negotiated)'}\n\n")
    width = max(len(r.id) for r in report.results)
    level_width = max(len(r.level.value) for r in report.results)
    out.writelines(
        f"{r.id:<{width}}  {r.level.value:<{level_width}}  {_MARK[r.status]:<4}  {r.detail}\n"
        for r in report.results
    )
    counts = {st: sum(1 for r in report.results if r.status is st) for st in Status}
    out.write(
        f"\n{counts[Status.PASS]} passed, {counts[Status.FAIL]} failed, "
        f"{counts[Status.WARN]} warnings, {counts[Status.SKIP]} skipped; "
        f"{'no MUST failures' if report.ok else f'{len(report.must_failures)} MUST failures'}\n"
    )


def print_json(report: Report, out: TextIO) -> None:
    json.dump(report.to_json(), out, indent=2)
    out.write("\n")
