"""The release number is written once (``trimcp/_version.py``) and every place that states it reads it."""

from __future__ import annotations

import importlib.metadata
import re

from repo_paths import REPO

import trimcp
from trimcp import _version
from trimcp._sansio.http.client import plan
from trimcp._trio.client.connect import CLIENT_INFO
from trimcp.reference import server as reference

ROOT = REPO


def test_every_statement_of_the_version_is_the_one_source() -> None:
    version = _version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", version)
    assert trimcp.__version__ == version
    assert CLIENT_INFO["version"] == version
    assert plan.USER_AGENT == f"trimcp/{version}"
    assert reference.VERSION == version
    # the installed distribution's metadata came from the same attribute
    assert importlib.metadata.version("trimcp") == version


def test_pyproject_takes_the_version_from_the_module() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text
    assert 'version = { attr = "trimcp._version.__version__" }' in text
    assert not re.search(r'(?m)^version = "', text)


def test_no_other_module_spells_the_version_out() -> None:
    version = _version.__version__
    spelled = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "trimcp").rglob("*.py"))
        if f'"{version}"' in p.read_text(encoding="utf-8") or f'/{version}"' in p.read_text(encoding="utf-8")
    ]
    # _deprecate.SINCE is "deprecated since": a past release that stays when the version moves on.
    assert spelled == ["trimcp/_deprecate.py", "trimcp/_version.py"]
