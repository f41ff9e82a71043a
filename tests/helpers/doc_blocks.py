"""The fenced code blocks of the Markdown pages (README.md, docs/), and what a test does with each.

A block may be preceded (blank lines aside) by one HTML comment that says how it is tested;
the comment does not show on GitHub or on the documentation site::

    <!-- doc-test: run -->                       run it (a sh block: each line in bash; python: the file)
    <!-- doc-test: file=agent.py -->             write it into the page's work folder under that name
    <!-- doc-test: run file=agent.py -->        both: write it, then run ``python agent.py``
    <!-- doc-test: exit=1 -->                    with run: the exit status expected (default 0)
    <!-- doc-test: same-as=examples/x.py -->     it must be that file of the checkout, word for word
    <!-- doc-test: illustrative: REASON -->      not run (a sh block only), and the reason why

What is checked by language (``tests/project/test_doc_blocks.py``):

- ``python``: every block is type-checked with ``mypy --strict``; ``run`` also runs it;
- ``sh``: a block with a ``trimcp`` command must be ``run`` or ``illustrative``; others (installing,
  cloning) may be either or neither;
- ``json``, ``yaml``: parsed; ``text``: output shown to the reader, not checked;
- any other language, or none: refused, so that no block escapes by its label.

The blocks of one page run in order in one work folder (``examples`` in it is the checkout's), so
a tutorial's files and commands run as a reader runs them, one after the other.
MyST directives (a fence whose info string starts with ``{``) are not code blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("python", "sh", "json", "yaml", "text")
_DIRECTIVE = re.compile(r"^<!--\s*doc-test:\s*(?P<body>.*?)\s*-->$")
_OPEN = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
# A command in command position (line start, after &&, ||, ;, |, or a subshell's paren),
# possibly by path (.venv/bin/trimcp): "cd trimcp" and "pip install 'trimcp[x]'" are not.
_TRIMCP = re.compile(r"(?:^|&&|\|\||;|\||\()\s*(?:\S*/)?trimcp(?:\s|$)")


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    text: str
    run: bool = False
    file: str | None = None
    exit: int = 0
    same_as: str | None = None
    illustrative: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def trimcp_commands(self) -> list[str]:
        joined = self.text.replace("\\\n", " ")
        return [line for line in joined.splitlines() if _TRIMCP.search(line.split("#", 1)[0])]


def pages() -> list[Path]:
    """README.md and every page of the site (docs/, its build output left out)."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)
    return [ROOT / "README.md", *docs]


def _apply(block: Block, body: str) -> None:
    if body.startswith("illustrative"):
        reason = body.removeprefix("illustrative").lstrip(":").strip()
        if not reason:
            block.problems.append("illustrative without a reason")
        block.illustrative = reason
        return
    for word in body.split():
        key, _, value = word.partition("=")
        if key == "run" and not value:
            block.run = True
        elif key == "file" and value:
            block.file = value
        elif key == "exit" and value.isdigit():
            block.exit = int(value)
        elif key == "same-as" and value:
            block.same_as = value
        else:
            block.problems.append(f"unknown doc-test word {word!r}")


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    directive: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        match = _OPEN.match(stripped)
        if match is None:
            d = _DIRECTIVE.match(stripped)
            if d:
                directive = d.group("body")
            elif stripped:
                directive = None
            i += 1
            continue
        fence, info = match.group("fence"), match.group("info").strip()
        end = i + 1
        while end < len(lines) and not (lines[end].strip().startswith(fence) and set(lines[end].strip()) == {fence[0]}):
            end += 1
        if not info.startswith("{"):  # a MyST directive is no code block
            lang = info.split()[0] if info else ""
            block = Block(page, i + 1, lang, "\n".join(lines[i + 1 : end]) + "\n")
            if directive is not None:
                _apply(block, directive)
            if lang not in LANGUAGES:
                block.problems.append(f"a block must say its language, one of {LANGUAGES} (it says {lang!r})")
            if block.illustrative is not None and lang != "sh":
                block.problems.append("only a sh block may be illustrative")
            if lang == "sh" and block.trimcp_commands() and not (block.run or block.illustrative):
                block.problems.append("a trimcp command must be run or marked illustrative with a reason")
            found.append(block)
        directive = None
        i = end + 1
    return found
