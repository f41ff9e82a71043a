"""The package metadata a user and an index see: license, classifiers, keywords, URLs, extras.

The build itself (sdist, then the wheel from the sdist), ``twine check`` and a ``trimcp check``
run from the wheel installed in a fresh venv are ``.ci/wheel-check``, a step of ``.ci/run``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_license_is_an_spdx_expression_with_its_file() -> None:
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    # PEP 639: no license classifier beside the expression (setuptools refuses both)
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]


def test_classifiers_say_what_the_package_is_and_claim_only_the_tested_python() -> None:
    classifiers = PROJECT["classifiers"]
    assert {"Framework :: Trio", "Typing :: Typed", "Programming Language :: Python :: 3 :: Only"} <= set(classifiers)
    versions = [c.rsplit(" ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3.")]
    minimum = PROJECT["requires-python"].removeprefix(">=")
    assert versions and min(versions, key=lambda v: tuple(map(int, v.split(".")))) == minimum
    assert (ROOT / "trimcp" / "py.typed").is_file()  # what "Typing :: Typed" promises


def test_keywords_and_the_optional_extras() -> None:
    assert {"mcp", "trio"} <= set(PROJECT["keywords"])
    # No project URLs until trimcp has a public home: a made-up address would send users astray.
    assert "urls" not in PROJECT
    extras = PROJECT["optional-dependencies"]
    assert {"test", "docs", "release"} <= set(extras)
    assert not set(PROJECT["dependencies"]) & set(extras["docs"] + extras["release"])


def test_the_sdist_leaves_the_test_suite_out_and_takes_the_docs_and_examples() -> None:
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").splitlines()
    assert {"prune tests", "graft docs", "prune docs/_build", "graft examples"} <= set(manifest)


def test_the_ci_cache_is_not_tracked() -> None:
    """``.ci/cache`` is built by ``.ci/install-peers.sh``; a tracked one (a worktree's symlink was
    committed twice) replaces the real cache on checkout."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files", ".ci/cache"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert tracked == ""
