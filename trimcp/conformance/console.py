"""Render a Report for people (a table) and for machines (JSON).

The reporters live in ``report_console`` (the table, colour, progress),
``report_json`` (the versioned JSON document), ``report_junit`` and
``report_markdown``; these two names stay for the public API.
"""

from __future__ import annotations

from typing import TextIO

from .model import Report
from .report_console import print_report
from .report_json import write_json


def print_table(report: Report, out: TextIO) -> None:
    print_report(report, out)


def print_json(report: Report, out: TextIO) -> None:
    write_json(report, out)
