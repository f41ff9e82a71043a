"""``trimcp check --requirements``: how much of the specification the checks cover.

Theory of operation
-------------------
No server is contacted.  The requirements catalogue (``requirements/``: the
spec's testable server-side sentences, each linked to the checks testing it
fully or partly) gives, per revision and level (MUST counts MUST NOT, SHOULD
counts SHOULD NOT), how many sentences there are and how many a check that
runs under that revision tests fully or partly (``Catalogue.coverage``), the
core revision and the extensions (apps, tasks) apart: an optional extension's
sentences never raise the core figure.  Text is a table (revision, scope,
level, total, full, partial, uncovered, percent tested fully, percent covered
fully or partly); JSON is exactly ``{"revisions": {rev: {"core": {"MUST":
{"total", "full", "partial"}, "SHOULD": ...}, "extensions": {...}}}}``.
``--list`` adds the uncovered sentences of each revision, core first: id,
level, page#anchor, the quoted text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from .requirements import SCOPES, Catalogue, load

__all__ = ["coverage_document", "write_coverage", "write_requirements_coverage"]

_LEVELS = ("MUST", "SHOULD")


def coverage_document(catalogue: Catalogue, revisions: Sequence[str]) -> dict[str, Any]:
    return {"revisions": {rev: catalogue.coverage(rev) for rev in revisions}}


def _percent(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"


def write_coverage(
    catalogue: Catalogue,
    revisions: Sequence[str],
    out: TextIO,
    *,
    as_json: bool = False,
    listing: bool = False,
) -> None:
    doc = coverage_document(catalogue, revisions)
    if as_json:
        json.dump(doc, out, indent=2)
        out.write("\n")
        return
    head = ("revision", "scope", "level", "total", "full", "partial", "uncovered", "full%", "covered")
    table = [head]
    for rev, scopes in doc["revisions"].items():
        for scope in SCOPES:
            for level in _LEVELS:
                row = scopes[scope][level]
                if scope != "core" and not row["total"]:
                    continue  # no extension sentence at this revision: no row
                full, partial, total = row["full"], row["partial"], row["total"]
                table.append(
                    (
                        rev,
                        scope,
                        level,
                        str(total),
                        str(full),
                        str(partial),
                        str(total - full - partial),
                        _percent(full, total),
                        _percent(full + partial, total),
                    )
                )
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    for line in table:
        cells = [cell.ljust(width) for cell, width in zip(line[:3], widths[:3])]
        cells += [cell.rjust(width) for cell, width in zip(line[3:], widths[3:])]
        out.write("  ".join(cells).rstrip() + "\n")
    if not listing:
        return
    for rev in revisions:
        missing = sorted(catalogue.uncovered(rev), key=lambda r: r.extension)
        out.write(f"\nuncovered in {rev}: {len(missing)}\n")
        for req in missing:
            where = f"{req.page}#{req.anchor}" if req.anchor else req.page
            out.write(
                f"  {req.id}  {req.strength}  {where}{'  (extension)' if req.extension else ''}\n      {' '.join(req.text.split())}\n"
            )


def write_requirements_coverage(
    revisions: Sequence[str],
    out: TextIO,
    *,
    as_json: bool = False,
    listing: bool = False,
) -> None:
    """``write_coverage`` of the shipped requirements catalogue (``requirements.load()``)."""
    write_coverage(load(), revisions, out, as_json=as_json, listing=listing)
