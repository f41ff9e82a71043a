"""The harness's vocabulary: checks, levels, statuses, reports.

Every check has a stable id, an RFC 2119 level taken from the sentence of the
specification it tests, and the spec section that sentence lives in.  The
catalog (``catalog.py``) lists them all, so a report always shows every check,
including the ones skipped because the server lacks the feature.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs


class Level(enum.Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"


class Status(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"


@attrs.frozen
class CheckSpec:
    id: str
    level: Level
    section: str
    title: str


@attrs.frozen
class CheckResult:
    id: str
    level: Level
    status: Status
    detail: str = ""


@attrs.define
class Report:
    target: str
    revision: str | None = None
    server_info: dict[str, Any] | None = None
    results: list[CheckResult] = attrs.field(factory=list)

    @property
    def must_failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.status is Status.FAIL and r.level is Level.MUST]

    @property
    def ok(self) -> bool:
        return not self.must_failures

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "revision": self.revision,
            "checks": [
                {"id": r.id, "level": r.level.value, "status": r.status.value, "detail": r.detail}
                for r in self.results
            ],
        }
