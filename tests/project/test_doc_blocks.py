"""No code block of the README or the documentation site can rot: each is run or type-checked.

``helpers.doc_blocks`` finds the blocks and reads the ``<!-- doc-test: ... -->`` comment before
each; its docstring gives the rules.  Every python block is checked with ``mypy --strict``; the
blocks marked ``run`` are run, page by page and in order, as a reader following the page would
run them (``python`` and ``trimcp`` are this interpreter's, first on PATH).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from doc_blocks import ROOT, Block, blocks, pages

ALL = [b for page in pages() for b in blocks(page)]
RUN_PAGES = [p for p in pages() if any(b.run for b in blocks(p))]
COMMAND_TIMEOUT = 180


def test_the_collector_sees_the_pages_and_their_blocks() -> None:
    names = {str(p.relative_to(ROOT)) for p in pages()}
    assert {"README.md", "docs/index.md", "docs/tutorials/check-your-server.md"} <= names
    assert len([b for b in ALL if b.lang == "python"]) >= 10
    assert RUN_PAGES


def test_every_block_says_its_language_and_how_it_is_tested() -> None:
    problems = [f"{b.where}: {p}" for b in ALL for p in b.problems]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("block", [b for b in ALL if b.same_as], ids=lambda b: b.where)
def test_a_block_shown_from_a_file_is_that_file(block: Block) -> None:
    assert block.same_as is not None
    assert block.text == (ROOT / block.same_as).read_text(encoding="utf-8"), f"{block.where} differs from the file"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang in ("json", "yaml")], ids=lambda b: b.where)
def test_json_and_yaml_blocks_parse(block: Block) -> None:
    if block.lang == "json":
        json.loads(block.text)
    else:
        yaml.safe_load(block.text)


def _mypy_folders(root: Path) -> list[Path]:
    """Each page's python blocks as files, in folders mypy checks one at a time: a block written
    to a file (``file=todo.py``) keeps its name, so that the page's later blocks import it; when a
    page writes the same file again, the blocks after it go to a new folder."""
    folders = []
    for page in pages():
        slug = re.sub(r"\W", "_", str(page.relative_to(ROOT)).removesuffix(".md"))
        folder: Path | None = None
        for b in blocks(page):
            if b.lang != "python":
                continue
            name = b.file or f"block_{b.line}.py"
            if folder is None or (folder / name).exists():
                previous = folder
                folder = root / f"{slug}_{len(folders)}"
                folder.mkdir(parents=True)
                folders.append(folder)
                for kept in previous.glob("*.py") if previous else ():
                    if kept.name != name and not kept.name.startswith("block_"):
                        (folder / kept.name).write_text(kept.read_text(encoding="utf-8"), encoding="utf-8")
            (folder / name).write_text(b.text, encoding="utf-8")
            (folder / f".{name}.where").write_text(f"{b.where} (block), line", encoding="utf-8")
    return folders


def test_every_python_block_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    failures = []
    env_before = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = str(ROOT)  # the checkout's trimcp, however it is installed
    try:
        for folder in _mypy_folders(tmp_path / "blocks"):
            out, err, status = api.run(["--strict", "--cache-dir", str(tmp_path / "cache"), str(folder)])
            if status:
                # name the page and line of each error, not the temporary file
                for where in folder.glob(".*.where"):
                    out = out.replace(str(folder / where.name[1:].removesuffix(".where")), where.read_text())
                failures.append(out + err)
    finally:
        if env_before is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = env_before
    assert not failures, "\n".join(failures)


def _run(block: Block, work: Path, env: dict[str, str]) -> None:
    if block.lang == "python":
        name = block.file or f"block_{block.line}.py"
        command = [sys.executable, name]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", block.text]
    done = subprocess.run(
        command,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == block.exit, (
        f"{block.where} exited {done.returncode}, not {block.exit}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    env = dict(os.environ, NO_COLOR="1", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for block in blocks(page):
        if block.file:
            (work / block.file).write_text(block.text, encoding="utf-8")
        elif block.run and block.lang == "python":
            (work / f"block_{block.line}.py").write_text(block.text, encoding="utf-8")
        if block.run:
            _run(block, work, env)
