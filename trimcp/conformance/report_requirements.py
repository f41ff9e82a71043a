"""``trimcp check --requirements``: how much of the specification the checks cover.

Theory of operation
-------------------
No server is contacted.  The requirements catalogue (``requirements/``: the
spec's testable server-side sentences, each linked to the checks testing it
fully or partly) gives, per revision and level (MUST counts MUST NOT, SHOULD
counts SHOULD NOT), how many sentences there are and how many a check that
runs under that revision tests fully or partly (``Catalogue.coverage``).
Text is a table (revision, level, total, full, partial, uncovered, percent
covered, full and partial together); JSON is exactly
``{"revisions": {rev: {"MUST": {"total", "full", "partial"}, "SHOULD": ...}}}``.
``--list`` adds the uncovered sentences of each revision: id, page#anchor,
the quoted text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from .requirements import Catalogue, load

__all__ = ["coverage_document", "write_coverage", "write_requirements_coverage"]

_LEVELS = ("MUST", "SHOULD")


def coverage_document(catalogue: Catalogue, revisions: Sequence[str]) -> dict[str, Any]:
    return {"revisions": {rev: catalogue.coverage(rev) for rev in revisions}}


def _percent(row: dict[str, int]) -> str:
    if not row["total"]:
        return "-"
    return f"{100 * (row['full'] + row['partial']) / row['total']:.1f}%"


def write_coverage(
    catalogue: Catalogue, revisions: Sequence[str], out: TextIO, *, as_json: bool = False, listing: bool = False,
) -> None:
    doc = coverage_document(catalogue, revisions)
    if as_json:
        json.dump(doc, out, indent=2)
        out.write("\n")
        return
    head = ("revision", "level", "total", "full", "partial", "uncovered", "covered")
    table = [head]
    for rev, levels in doc["revisions"].items():
        for level in _LEVELS:
            row = levels[level]
            uncovered = row["total"] - row["full"] - row["partial"]
            table.append((rev, level, str(row["total"]), str(row["full"]), str(row["partial"]), str(uncovered),
                          _percent(row)))
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    for line in table:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(line[2:], widths[2:])]
        out.write("  ".join(cells).rstrip() + "\n")
    if not listing:
        return
    for rev in revisions:
        missing = catalogue.uncovered(rev)
        out.write(f"\nuncovered in {rev}: {len(missing)}\n")
        for req in missing:
            where = f"{req.page}#{req.anchor}" if req.anchor else req.page
            out.write(f"  {req.id}  {req.strength}  {where}\n      {' '.join(req.text.split())}\n")


def write_requirements_coverage(
    revisions: Sequence[str], out: TextIO, *, as_json: bool = False, listing: bool = False,
) -> None:
    """``write_coverage`` of the shipped requirements catalogue (``requirements.load()``)."""
    write_coverage(load(), revisions, out, as_json=as_json, listing=listing)
