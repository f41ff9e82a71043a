"""The requirements catalogue: the specification's testable server-side sentences, as data.

Theory of operation
-------------------
Each JSON file in ``data/`` holds the sentences of one area of the
specification (pages under ``docs/specification/<revision>/`` of the
``modelcontextprotocol/modelcontextprotocol`` repository) that put a
MUST / MUST NOT / SHOULD / SHOULD NOT on a *server* and that a black-box
tester can check.  Each sentence is quoted, with a stable id, its level, the
page and heading anchor it sits under, the revisions whose pages hold it, and
the checks that test it, each ``full`` (the check would fail every violation a
black box can see), ``joint`` (the joint checks of the entry, between them,
would: each sees its own kind of violation, and ``together`` says which) or
``partial`` (it sees some of them).  A sentence is fully covered in a revision
when a full check runs under it, or every joint check does.  Server-side sentences
judged untestable from outside are listed too, under ``untestable`` with the
reason, so that the denominator can be audited.

``coverage(revision)`` counts, per scope and level (MUST includes MUST NOT,
SHOULD includes SHOULD NOT), the sentences of that revision and how many are
tested fully or partly by a check that runs under that revision.  The scope is
``core`` (pages of the revision itself) or ``extensions`` (pages under
``extensions/``: apps, tasks), counted apart so that an optional extension
never raises the core percentage.

A sentence is listed once per revision: the same rule restated on two pages
(or twice on one) is one entry naming every check that tests it.  Where the
same words govern different things (``Servers SHOULD return standard JSON-RPC
errors`` on the prompts and the completion pages) each entry names what it
governs in ``subject``, and ``duplicates`` reports any two entries of one
revision whose normalized text and subject agree (``tests/check/test_requirements.py``).  ``check_level``
derives a check's level from its sentences (the strongest one present in the
revision; ``BEST-PRACTICE`` when none stands behind it): the catalogue of
checks must agree with it (``tests/check/test_requirements.py``).

The data is loaded on first use, not at import: ``trimcp check`` without
``--requirements`` never reads it.
"""

from __future__ import annotations

import enum
import functools
import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any, Final

import attrs

from ..._sansio.revisions import ALL_VERSIONS
from ..catalog import CATALOG
from ..model import Level

__all__ = [
    "SCOPES",
    "SPEC_BASE",
    "Catalogue",
    "Coverage",
    "Requirement",
    "Untestable",
    "check_level",
    "coverage",
    "load",
    "normalized",
    "spec_url",
]

SPEC_BASE: Final = "https://modelcontextprotocol.io/specification"
SCOPES: Final = ("core", "extensions")
STRENGTHS: Final = {"MUST": Level.MUST, "MUST NOT": Level.MUST, "SHOULD": Level.SHOULD, "SHOULD NOT": Level.SHOULD}


class Coverage(enum.Enum):
    FULL = "full"
    #: Full only with the entry's other joint checks: each sees one kind of violation.
    JOINT = "joint"
    PARTIAL = "partial"


#: Extension pages (``extensions/<name>``): the specification in its own repository,
#: at the version the requirements quote (extensions are versioned apart from revisions).
EXTENSION_PAGES: Final = {
    "extensions/apps": "https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx",
    "extensions/tasks": "https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md",
}


def spec_url(revision: str, page: str, anchor: str = "") -> str:
    """The published page of ``page`` (``basic/lifecycle``) in ``revision``, at ``anchor``."""
    base = EXTENSION_PAGES.get(page) or f"{SPEC_BASE}/{revision}/{page}"
    return base + (f"#{anchor}" if anchor else "")


@attrs.frozen
class Requirement:
    id: str
    #: ``MUST``, ``MUST NOT``, ``SHOULD`` or ``SHOULD NOT``, as the sentence says it.
    strength: str
    revisions: tuple[str, ...]
    page: str
    anchor: str
    text: str
    #: Check id -> how fully that check tests the sentence.
    checks: Mapping[str, Coverage]
    area: str = ""
    #: What the sentence governs, when its words alone do not say (optional in the data).
    subject: str = ""
    #: For joint links: which kind of violation each joint check sees (required with them).
    together: str = ""

    def coverage_in(self, revision: str) -> Coverage | None:
        """How fully the checks that run under ``revision`` test the sentence there (None: not at all)."""
        found = {cov for check_id, cov in self.checks.items() if _runs_under(check_id, revision)}
        joint = [check_id for check_id, cov in self.checks.items() if cov is Coverage.JOINT]
        if Coverage.FULL in found or (joint and all(_runs_under(check_id, revision) for check_id in joint)):
            return Coverage.FULL
        return Coverage.PARTIAL if found else None

    @property
    def extension(self) -> bool:
        """A sentence of an extension's page, counted apart from the core revision."""
        return self.page.startswith("extensions/")

    @property
    def scope(self) -> str:
        return "extensions" if self.extension else "core"

    @property
    def level(self) -> Level:
        """``MUST`` for MUST and MUST NOT, ``SHOULD`` for SHOULD and SHOULD NOT."""
        return STRENGTHS[self.strength]

    def url(self, revision: str | None = None) -> str:
        return spec_url(revision or self.revisions[-1], self.page, self.anchor)


@attrs.frozen
class Untestable:
    strength: str
    revisions: tuple[str, ...]
    page: str
    anchor: str
    text: str
    why: str
    area: str = ""


@attrs.frozen
class Catalogue:
    requirements: tuple[Requirement, ...]
    untestable: tuple[Untestable, ...]

    def for_revision(self, revision: str) -> list[Requirement]:
        return [r for r in self.requirements if revision in r.revisions]

    def sentences_of(self, check_id: str, revision: str | None = None) -> list[tuple[Requirement, Coverage]]:
        """The sentences ``check_id`` tests (in ``revision``, when given): full ones, then joint, then partial."""
        found = [
            (r, r.checks[check_id])
            for r in self.requirements
            if check_id in r.checks and (revision is None or revision in r.revisions)
        ]
        order = list(Coverage)
        return sorted(found, key=lambda pair: order.index(pair[1]))

    def coverage(self, revision: str) -> dict[str, dict[str, dict[str, int]]]:
        """``{"core": {"MUST": {"total", "full", "partial"}, "SHOULD": {...}}, "extensions": {...}}``."""
        out = {
            scope: {level: {"total": 0, "full": 0, "partial": 0} for level in ("MUST", "SHOULD")} for scope in SCOPES
        }
        for req in self.for_revision(revision):
            row = out[req.scope][req.level.value]
            row["total"] += 1
            found = req.coverage_in(revision)
            if found is Coverage.FULL:
                row["full"] += 1
            elif found is Coverage.PARTIAL:
                row["partial"] += 1
        return out

    def uncovered(self, revision: str) -> list[Requirement]:
        return [
            r for r in self.for_revision(revision) if not any(_runs_under(check_id, revision) for check_id in r.checks)
        ]

    def duplicates(self) -> list[str]:
        """Pairs of entries of one revision that quote the same sentence (normalized text and subject)."""
        out: list[str] = []
        for revision in ALL_VERSIONS:
            seen: dict[tuple[str, str], str] = {}
            for req in self.for_revision(revision):
                key = (normalized(req.text), req.subject)
                if key in seen:
                    out.append(f"{revision}: {seen[key]} and {req.id} quote the same sentence")
                else:
                    seen[key] = req.id
        return out

    def check_level(self, check_id: str, revision: str) -> Level:
        """The level the sentences behind ``check_id`` give it in ``revision``."""
        levels = {r.level for r, _ in self.sentences_of(check_id, revision)}
        if Level.MUST in levels:
            return Level.MUST
        if Level.SHOULD in levels:
            return Level.SHOULD
        return Level.BEST

    def problems(self) -> list[str]:
        """Everything wrong with the data: duplicate ids, unknown levels, revisions or checks."""
        out: list[str] = []
        seen: set[str] = set()
        for req in self.requirements:
            where = f"{req.area}:{req.id}"
            if req.id in seen:
                out.append(f"{where}: duplicate id")
            seen.add(req.id)
            out.extend(f"{where}: {p}" for p in _entry_problems(req.strength, req.revisions, req.page, req.text))
            for check_id in req.checks:
                spec = CATALOG.get(check_id)
                if spec is None:
                    out.append(f"{where}: unknown check {check_id!r}")
                elif not any(spec.applies_to(rev) for rev in req.revisions):
                    out.append(f"{where}: {check_id} runs under none of {req.revisions}")
            joint = [check_id for check_id, cov in req.checks.items() if cov is Coverage.JOINT]
            if len(joint) == 1:
                out.append(f"{where}: a joint link needs another joint check ({joint[0]} alone is full or partial)")
            if bool(joint) != bool(req.together.strip()):
                out.append(f"{where}: joint links and a 'together' text go together")
            elif joint and not all(check_id in req.together for check_id in joint):
                out.append(f"{where}: 'together' must say what each joint check sees")
        out.extend(self.duplicates())
        for item in self.untestable:
            where = f"{item.area}:untestable {item.text[:40]!r}"
            out.extend(f"{where}: {p}" for p in _entry_problems(item.strength, item.revisions, item.page, item.text))
            if not item.why.strip():
                out.append(f"{where}: no reason given")
        return out


def normalized(text: str) -> str:
    """``text`` lower-cased, with markup and punctuation gone: how two quotes of one sentence compare."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _runs_under(check_id: str, revision: str) -> bool:
    spec = CATALOG.get(check_id)
    return spec is not None and spec.applies_to(revision)


def _entry_problems(strength: str, revisions: Iterable[str], page: str, text: str) -> list[str]:
    out = []
    if strength not in STRENGTHS:
        out.append(f"level {strength!r} is none of {sorted(STRENGTHS)}")
    revs = list(revisions)
    if not revs or any(r not in ALL_VERSIONS for r in revs):
        out.append(f"revisions {revs} are not known revisions")
    if not page or page.startswith("/") or page.endswith(".mdx"):
        out.append(f"page {page!r} is not a page path like basic/lifecycle")
    if not text.strip():
        out.append("no sentence quoted")
    return out


def _requirement(area: str, raw: Mapping[str, Any]) -> Requirement:
    checks = {str(k): Coverage(v) for k, v in (raw.get("checks") or {}).items()}
    return Requirement(
        id=raw["id"],
        strength=raw["level"],
        revisions=tuple(raw["revisions"]),
        page=raw["page"],
        anchor=raw.get("anchor", ""),
        text=raw["text"],
        checks=checks,
        area=area,
        subject=raw.get("subject", ""),
        together=raw.get("together", ""),
    )


def _untestable(area: str, raw: Mapping[str, Any]) -> Untestable:
    return Untestable(
        strength=raw["level"],
        revisions=tuple(raw["revisions"]),
        page=raw["page"],
        anchor=raw.get("anchor", ""),
        text=raw["text"],
        why=raw.get("why", ""),
        area=area,
    )


@functools.cache
def load() -> Catalogue:
    """Every area file of ``data/``, in name order."""
    requirements: list[Requirement] = []
    untestable: list[Untestable] = []
    folder = resources.files(__package__) / "data"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        doc = json.loads(entry.read_text(encoding="utf-8"))
        area = str(doc.get("area") or entry.name.removesuffix(".json"))
        requirements.extend(_requirement(area, raw) for raw in doc.get("requirements", ()))
        untestable.extend(_untestable(area, raw) for raw in doc.get("untestable", ()))
    return Catalogue(tuple(requirements), tuple(untestable))


def coverage(revision: str) -> dict[str, dict[str, dict[str, int]]]:
    return load().coverage(revision)


def check_level(check_id: str, revision: str) -> Level:
    return load().check_level(check_id, revision)
