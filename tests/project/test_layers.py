"""The layer arrows of DESIGN.md, checked by reading the source (``ast``, never importing).

``cli -> conformance -> _trio -> _sansio``, with ``server`` built on ``_trio``/``_sansio``.
``trimcp/_sansio`` is pure: it imports no I/O, concurrency, clock or OS module, and
nothing of ours above it.  The CLI is written against the public API only (``PUBLIC_API``),
as a user's program would be.  No two of our modules import each other, directly or round
a circle, not even under ``TYPE_CHECKING`` or inside a function: a reader must be able
to read the package bottom up.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from source_imports import PACKAGE_DIR, PUBLIC_API, imports_of, module_name

#: Modules that do I/O, concurrency, read clocks or draw randomness: never in trimcp/_sansio
#: (randomness, like clocks, is passed in so the core stays deterministic).
IMPURE = frozenset(
    {
        "trio",
        "trio_websocket",
        "httpx",
        "httpcore",
        "socket",
        "ssl",
        "subprocess",
        "asyncio",
        "anyio",
        "threading",
        "time",
        "keyring",
        "webbrowser",
        "os",
        "selectors",
        "multiprocessing",
        "http.client",
        "urllib.request",
        "shutil",
        "signal",
        "secrets",
        "random",
    }
)

#: package prefix -> our packages it must not import
FORBIDDEN_ARROWS: dict[str, tuple[str, ...]] = {
    "trimcp._sansio": ("trimcp._trio", "trimcp.server", "trimcp.conformance", "trimcp.cli", "trimcp.host"),
    "trimcp._trio": ("trimcp.server", "trimcp.conformance", "trimcp.cli", "trimcp.host"),
    # the host layer holds client sessions: it serves nothing and checks nothing
    "trimcp.host": ("trimcp.server", "trimcp.conformance", "trimcp.cli", "trimcp.reference"),
    "trimcp.server": ("trimcp.conformance", "trimcp.cli", "trimcp.reference"),
    "trimcp.reference": ("trimcp.conformance", "trimcp.cli"),
    "trimcp.conformance": ("trimcp.cli",),
    # test helpers stand on the client and the server; nothing of ours imports them (test_testing.py)
    "trimcp.testing": ("trimcp.conformance", "trimcp.cli", "trimcp.reference", "trimcp.host"),
    "trimcp.cli": ("trimcp._sansio", "trimcp._trio"),
    # reading a config file starts nothing: no transport, server, harness or OAuth flow
    "trimcp.config": (
        "trimcp._sansio",
        "trimcp._trio",
        "trimcp.server",
        "trimcp.conformance",
        "trimcp.cli",
        "trimcp.reference",
        "trimcp.oauth",
    ),
}


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(path: Path, root: Path = PACKAGE_DIR) -> list[str]:
    name = module_name(path, root)
    problems: list[str] = []
    for lineno, imported in imports_of(path, root):
        where = f"{path.relative_to(root.parent)}:{lineno}"
        if _within(name, f"{root.name}._sansio"):
            if any(_within(imported, bad) for bad in IMPURE):
                problems.append(f"{where}: the sans-IO core imports {imported}")
            if imported == root.name:
                problems.append(f"{where}: the sans-IO core imports the public package root")
        if _within(name, f"{root.name}.cli") and _within(imported, root.name):
            public = {m.replace("trimcp", root.name, 1) for m in PUBLIC_API}
            if imported not in public and not _within(imported, f"{root.name}.cli"):
                problems.append(f"{where}: the CLI uses the public API only, not {imported}")
        for layer, forbidden in FORBIDDEN_ARROWS.items():
            layer = layer.replace("trimcp", root.name, 1)
            if _within(name, layer):
                for bad in forbidden:
                    bad = bad.replace("trimcp", root.name, 1)
                    if _within(imported, bad):
                        problems.append(f"{where}: {layer} must not import {imported}")
    return problems


ALL_MODULES = sorted(PACKAGE_DIR.rglob("*.py"))


def test_the_walk_finds_the_core() -> None:
    names = {module_name(p, PACKAGE_DIR) for p in ALL_MODULES}
    for expected in (
        "trimcp._sansio.connection.core",
        "trimcp._sansio.jsonrpc",
        "trimcp._sansio.framing.lines",
        "trimcp._sansio.connection.lifecycle",
        "trimcp._sansio.revisions",
        "trimcp._errors",
    ):
        assert expected in names
    # relative imports are resolved to our absolute names
    core = PACKAGE_DIR / "_sansio" / "connection" / "core.py"
    imported = {m for _, m in imports_of(core)}
    assert {"trimcp._errors", "trimcp._sansio.jsonrpc", "trimcp._sansio.connection.lifecycle"} <= imported


@pytest.mark.parametrize(
    "path",
    ALL_MODULES,
    ids=[str(p.relative_to(PACKAGE_DIR.parent)) for p in ALL_MODULES],
)
def test_layer_rules(path: Path) -> None:
    assert violations(path) == []


# ---------------------------------------------------------------- the checker itself can fail

BAD_SANSIO = """
import os.path
import trio, json
from time import monotonic
from .. import _trio
from ..server.app import App
from .jsonrpc import Request
from . import jsonrpc
from .. import _errors
import importlib
importlib.import_module("socket")
__import__("threading")
import trimcp
if False:
    import asyncio
"""


def _fake_tree(tmp_path: Path) -> Path:
    root = tmp_path / "trimcp"
    for pkg in ("", "_sansio", "_trio", "server", "conformance", "cli", "reference"):
        (root / pkg).mkdir(parents=True, exist_ok=True)
        (root / pkg / "__init__.py").write_text("")
    (root / "_errors.py").write_text("")
    (root / "oauth.py").write_text("")
    (root / "conformance" / "runner.py").write_text("")
    (root / "_trio" / "driver.py").write_text("")
    (root / "_sansio" / "jsonrpc.py").write_text("")
    (root / "server" / "app.py").write_text("")
    return root


def test_checker_reports_impure_and_upward_imports(tmp_path: Path) -> None:
    root = _fake_tree(tmp_path)
    bad = root / "_sansio" / "bad.py"
    bad.write_text(BAD_SANSIO)
    found = {m for _, m in imports_of(bad, root)}
    assert {
        "trimcp._trio",
        "trimcp.server.app",
        "trimcp._sansio.jsonrpc",
        "trimcp._errors",
        "socket",
        "threading",
        "os.path",
        "time",
        "trio",
        "json",
        "asyncio",
        "trimcp",
    } <= found
    problems = "\n".join(violations(bad, root))
    for flagged in (
        "imports os.path",
        "imports trio",
        "imports time",
        "imports socket",
        "imports threading",
        "imports asyncio",
        "must not import trimcp._trio",
        "must not import trimcp.server.app",
        "public package root",
    ):
        assert flagged in problems
    assert "json" not in problems.replace("jsonrpc", "")
    assert "_errors" not in problems


def test_checker_reports_wrong_arrows_between_upper_layers(tmp_path: Path) -> None:
    root = _fake_tree(tmp_path)
    (root / "_trio" / "x.py").write_text("from ..conformance import runner\nimport trio\nfrom .. import cli\n")
    (root / "server" / "y.py").write_text("from trimcp.cli import main\nfrom .._trio import x\nimport os\n")
    (root / "conformance" / "z.py").write_text("from ..server import app\nfrom .. import cli\n")
    trio_problems = violations(root / "_trio" / "x.py", root)
    assert len(trio_problems) == 2 and all("trimcp._trio must not import" in p for p in trio_problems)
    assert violations(root / "server" / "y.py", root) == [
        "trimcp/server/y.py:1: trimcp.server must not import trimcp.cli",
    ]
    # conformance may use anything below it, never the CLI above
    assert violations(root / "conformance" / "z.py", root) == [
        "trimcp/conformance/z.py:2: trimcp.conformance must not import trimcp.cli",
    ]
    assert violations(root / "_sansio" / "jsonrpc.py", root) == []


def test_checker_keeps_the_cli_on_the_public_api(tmp_path: Path) -> None:
    root = _fake_tree(tmp_path)
    (root / "cli" / "serve.py").write_text("")
    (root / "cli" / "main.py").write_text(
        "from .. import open_client\n"  # trimcp: public
        "from ..conformance import run_checks\n"  # a public package's export
        "from ..oauth import OAuthProvider\n"
        "from ..reference import build_server\n"
        "from ..server import Server\n"
        "from . import serve\n"  # the CLI's own module
        "import json, trio\n"
        "from ..conformance.runner import run_checks\n"  # 8: a module of a public package
        "from .._trio.driver import SessionDriver\n"  # 9: private
        "def f():\n"
        "    from .._sansio import jsonrpc\n"  # 11: private, even lazily
        "    import trimcp._errors\n"  # 12: private module of the root
    )
    assert sorted(violations(root / "cli" / "main.py", root)) == [
        "trimcp/cli/main.py:11: the CLI uses the public API only, not trimcp._sansio.jsonrpc",
        "trimcp/cli/main.py:11: trimcp.cli must not import trimcp._sansio.jsonrpc",
        "trimcp/cli/main.py:12: the CLI uses the public API only, not trimcp._errors",
        "trimcp/cli/main.py:8: the CLI uses the public API only, not trimcp.conformance.runner",
        "trimcp/cli/main.py:9: the CLI uses the public API only, not trimcp._trio.driver",
        "trimcp/cli/main.py:9: trimcp.cli must not import trimcp._trio.driver",
    ]


# ---------------------------------------------------------------- no import cycles

#: Import cycles tolerated for now, each with the one sentence that justifies it.
#: (None: every cycle the layout once had is gone.)
ALLOWED_CYCLES: frozenset[frozenset[str]] = frozenset()


def import_graph(root: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    """Module -> the modules of our package it names in any import statement.

    Every import counts: module level, inside a function, under ``TYPE_CHECKING``.
    Only the imports written count: that importing ``a.b.c`` first runs ``a/__init__``
    and ``a/b/__init__`` is not an arrow the reader follows.
    """
    modules = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    return {
        name: {imported for _, imported in imports_of(path, root) if imported in modules and imported != name}
        for name, path in modules.items()
    }


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(frozenset(component))
    return cycles


def cycle_problems(graph: dict[str, set[str]], allowed: frozenset[frozenset[str]] = ALLOWED_CYCLES) -> list[str]:
    """Every cycle not on the allow-list, and every allow-list entry that is no longer a cycle."""
    found = import_cycles(graph)
    problems = []
    for cycle in found:
        if cycle not in allowed:
            arrows = "; ".join(f"{m} -> {', '.join(sorted(graph[m] & cycle))}" for m in sorted(cycle))
            problems.append(f"import cycle: {arrows}")
    problems += [f"allowed cycle no longer exists (remove it): {sorted(c)}" for c in allowed - set(found)]
    return problems


def test_no_import_cycles() -> None:
    assert cycle_problems(import_graph()) == []


def test_the_cycle_checker_finds_cycles(tmp_path: Path) -> None:
    root = _fake_tree(tmp_path)
    (root / "server" / "app.py").write_text("from .context import Context\n")
    (root / "server" / "context.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .app import Server\n"
    )
    # a circle of three, one arrow a function-level import, one through a package's __init__
    (root / "_trio" / "a.py").write_text("from . import b\n")
    (root / "_trio" / "b.py").write_text("def f():\n    import trimcp._trio.c\n")
    (root / "_trio" / "c.py").write_text("from .. import _trio\n")
    (root / "_trio" / "__init__.py").write_text("from .a import thing\n")
    # not cycles: a module importing itself, a chain, and a module importing its own package
    (root / "_sansio" / "jsonrpc.py").write_text("from . import jsonrpc\nfrom .. import _errors\n")
    (root / "_sansio" / "x.py").write_text("from .. import _sansio\n")
    graph = import_graph(root)
    assert graph["trimcp._trio.b"] == {"trimcp._trio.c"}
    assert graph["trimcp._trio.c"] == {"trimcp._trio"}
    cycles = set(import_cycles(graph))
    assert cycles == {
        frozenset({"trimcp.server.app", "trimcp.server.context"}),
        frozenset({"trimcp._trio", "trimcp._trio.a", "trimcp._trio.b", "trimcp._trio.c"}),
    }
    problems = cycle_problems(graph, frozenset())
    assert len(problems) == 2
    assert any(
        "trimcp.server.app -> trimcp.server.context; trimcp.server.context -> trimcp.server.app" in p for p in problems
    )
    # an allowed cycle passes; an allow-list entry that matches no cycle any more does not
    allowed = frozenset(
        {frozenset({"trimcp.server.app", "trimcp.server.context"}), frozenset({"trimcp.x", "trimcp.y"})}
    )
    problems = cycle_problems(graph, allowed)
    assert len(problems) == 2
    assert not any("trimcp.server.app ->" in p for p in problems)
    assert any("no longer exists" in p and "trimcp.x" in p for p in problems)
