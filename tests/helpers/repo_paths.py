"""Where things are in the checkout, for tests at any depth of ``tests/``.

Tests live in area folders (``tests/<area>/test_*.py``), so a path built from a test's own
``__file__`` depends on how deep it sits; these do not.
"""

from __future__ import annotations

from pathlib import Path

#: The repository root (the checkout).
REPO = Path(__file__).resolve().parents[2]
#: ``tests/``.
TESTS = REPO / "tests"
#: ``tests/helpers/``: the fake servers and scripts the tests run.
HELPERS = TESTS / "helpers"
#: The ``trimcp`` package's source folder.
PACKAGE = REPO / "trimcp"
#: The recorded spec corpus (``spec/``).
SPEC = REPO / "spec"
#: The project's reference data beside the checkout (``../shared``: the revisions' official
#: schemas). Absent on most machines; tests that read it skip when it is.
SHARED = REPO.parent / "shared"
