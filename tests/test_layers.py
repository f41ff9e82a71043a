"""The layer arrows of DESIGN.md, checked by reading the source (``ast``, never importing).

``cli -> conformance -> _trio -> _sansio``, with ``server`` built on ``_trio``/``_sansio``.
``trimcp/_sansio`` is pure: it imports no I/O, concurrency, clock or OS module, and
nothing of ours above it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "trimcp"

#: Modules that do I/O, concurrency, read clocks or draw randomness: never in trimcp/_sansio
#: (randomness, like clocks, is passed in so the core stays deterministic).
IMPURE = frozenset({
    "trio", "trio_websocket", "httpx", "httpcore", "socket", "ssl", "subprocess", "asyncio",
    "anyio", "threading", "time", "keyring", "webbrowser", "os", "selectors", "multiprocessing",
    "http.client", "urllib.request", "shutil", "signal", "secrets", "random",
})

#: package prefix -> our packages it must not import
FORBIDDEN_ARROWS: dict[str, tuple[str, ...]] = {
    "trimcp._sansio": ("trimcp._trio", "trimcp.server", "trimcp.conformance", "trimcp.cli"),
    "trimcp._trio": ("trimcp.server", "trimcp.conformance", "trimcp.cli"),
    "trimcp.server": ("trimcp.conformance", "trimcp.cli", "trimcp.reference"),
    "trimcp.reference": ("trimcp.conformance", "trimcp.cli"),
    "trimcp.conformance": ("trimcp.cli",),
}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package_module(dotted: str, root: Path) -> bool:
    """Whether ``dotted`` (inside our package) names a module or package on disk."""
    rel = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    base = root / rel
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(path: Path, root: Path = PACKAGE_DIR) -> list[tuple[int, str]]:
    """Every module ``path`` imports, as absolute dotted names, with line numbers.

    Relative imports are resolved; ``from pkg import name`` counts as importing
    ``pkg.name`` when that is one of our modules on disk.  String-literal dynamic
    imports (``importlib.import_module("x")``, ``__import__("x")``) count too.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level - 1:
                    base_parts = base_parts[: -(node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if base.split(".")[0] == root.name and _is_package_module(candidate, root):
                    found.append((node.lineno, candidate))
                else:
                    found.append((node.lineno, base))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "__import__")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            found.append((node.lineno, node.args[0].value))
    return found


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
    for expected in ("trimcp._sansio.connection.core", "trimcp._sansio.jsonrpc", "trimcp._sansio.framing.lines",
                     "trimcp._sansio.connection.lifecycle", "trimcp._sansio.revisions", "trimcp._errors"):
        assert expected in names
    # relative imports are resolved to our absolute names
    core = PACKAGE_DIR / "_sansio" / "connection" / "core.py"
    imported = {m for _, m in imports_of(core)}
    assert {"trimcp._errors", "trimcp._sansio.jsonrpc", "trimcp._sansio.connection.lifecycle"} <= imported


@pytest.mark.parametrize(
    "path", ALL_MODULES, ids=[str(p.relative_to(PACKAGE_DIR.parent)) for p in ALL_MODULES],
)
def test_layer_rules(path: Path) -> None:
    assert violations(path) == []


# ---------------------------------------------------------------- the checker itself can fail

BAD_SANSIO = '''
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
'''


def _fake_tree(tmp_path: Path) -> Path:
    root = tmp_path / "trimcp"
    for pkg in ("", "_sansio", "_trio", "server", "conformance"):
        (root / pkg).mkdir(parents=True, exist_ok=True)
        (root / pkg / "__init__.py").write_text("")
    (root / "_errors.py").write_text("")
    (root / "cli.py").write_text("")
    (root / "_sansio" / "jsonrpc.py").write_text("")
    (root / "server" / "app.py").write_text("")
    return root


def test_checker_reports_impure_and_upward_imports(tmp_path: Path) -> None:
    root = _fake_tree(tmp_path)
    bad = root / "_sansio" / "bad.py"
    bad.write_text(BAD_SANSIO)
    found = {m for _, m in imports_of(bad, root)}
    assert {"trimcp._trio", "trimcp.server.app", "trimcp._sansio.jsonrpc", "trimcp._errors",
            "socket", "threading", "os.path", "time", "trio", "json", "asyncio", "trimcp"} <= found
    problems = "\n".join(violations(bad, root))
    for flagged in ("imports os.path", "imports trio", "imports time", "imports socket",
                    "imports threading", "imports asyncio", "must not import trimcp._trio",
                    "must not import trimcp.server.app", "public package root"):
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
