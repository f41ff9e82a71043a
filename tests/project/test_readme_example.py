"""The README's client example type-checks under ``mypy --strict`` and its helpers behave.

The example is read out of README.md (the first ``python`` block of "Using the client"), so the
README and this test cannot drift apart."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from repo_paths import REPO

from trimcp.schema import CallToolResult, ImageContent, TextContent

ROOT = REPO


def _client_example() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Using the client", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "no python block in the README's client section"
    return match.group(1)


def test_the_readme_client_example_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    example = tmp_path / "example.py"
    example.write_text(_client_example())
    env_before = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = str(ROOT)  # the checkout's trimcp, however it is installed
    try:
        out, err, status = api.run(
            [
                "--strict",
                "--no-incremental",
                "--cache-dir",
                str(tmp_path / "cache"),
                str(example),
            ]
        )
    finally:
        if env_before is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = env_before
    assert status == 0, out + err


def test_call_tool_result_text_joins_the_text_blocks() -> None:
    result = CallToolResult(
        content=[
            TextContent(text="a"),
            ImageContent(data="AA==", mime_type="image/png"),
            TextContent(text="b"),
        ]
    )
    assert result.text == "a\nb"
    assert CallToolResult(content=[]).text == ""


def test_schema_is_a_module() -> None:
    import importlib

    import trimcp
    import trimcp._sansio.schema as core

    module = importlib.import_module("trimcp.schema")
    assert trimcp.schema is module
    assert sorted(module.__all__) == sorted(core.__all__)
    assert all(getattr(module, name) is getattr(core, name) for name in core.__all__)
