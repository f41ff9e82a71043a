"""``import trimcp`` and ``import trimcp.host`` stay cheap: they load none of the heavy modules.

Both packages export lazily (PEP 562 ``__getattr__``): a name is imported on first use.
These tests run each import in a fresh interpreter and look at ``sys.modules``, so a later
change that imports one of the heavy modules eagerly again fails here, deterministically
(no timing: ``benchmarks/bench_import.py`` measures the milliseconds and megabytes).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import trimcp
import trimcp.host

ROOT = Path(__file__).resolve().parent.parent

#: What neither package may load at import: the Trio stack, attrs / cattrs and the schema
#: built on them, the HTTP, WebSocket and TLS stacks, the optional extras, and the upper layers.
HEAVY = (
    "trio",
    "attrs",
    "attr",
    "cattrs",
    "ssl",
    "h11",
    "httpx",
    "trio_websocket",
    "jsonschema",
    "referencing",
    "rpds",
    "rich",
    "keyring",
    "dateparser",
    "PIL",
    "email",
    "webbrowser",
    "trimcp._trio",
    "trimcp._sansio.schema",
    "trimcp.schema",
    "trimcp._sansio.connection",
    "trimcp._sansio.host",
    "trimcp.conformance",
    "trimcp.server",
    "trimcp.reference",
    "trimcp.oauth",
    "trimcp.config",
    "trimcp.cli",
    "trimcp.host.pool",
    "trimcp.host.outputs",
    "zoneinfo",
)


def _fresh(code: str) -> object:
    """Run ``code`` in a new interpreter importing this checkout; it prints one JSON value."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=60, cwd=ROOT
    )
    return json.loads(done.stdout)


def _loaded_after(statement: str) -> list[str]:
    code = (
        f"import sys, json\n{statement}\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy)))\n"
    )
    found = _fresh(code)
    assert isinstance(found, list)
    return found


@pytest.mark.parametrize("statement", ["import trimcp", "import trimcp.host"])
def test_importing_the_package_loads_no_heavy_module(statement: str) -> None:
    assert _loaded_after(statement) == []


def test_the_error_tree_is_there_without_loading_anything_heavy() -> None:
    # the exceptions are what an ``except`` clause names before anything ran: they are eager
    assert _loaded_after("from trimcp import TrimcpError, McpError, TransportClosed") == []


def test_the_host_imports_jsonschema_and_zoneinfo_only_when_used() -> None:
    loaded = _loaded_after("from trimcp.host import open_pool, OutputValidationError, validate_form_async")
    assert "trimcp.host.pool" in loaded and "trio" in loaded  # the probe sees what is loaded
    assert not {"jsonschema", "referencing", "rpds", "zoneinfo"} & set(loaded)


def test_the_server_package_imports_jsonschema_only_to_validate() -> None:
    loaded = _loaded_after("import trimcp.server, trimcp.reference")
    assert "trimcp.server" in loaded and "trio" in loaded
    assert not {"jsonschema", "referencing", "rpds", "h11", "httpx", "trio_websocket", "trimcp.conformance"} & set(
        loaded
    )


def test_the_cli_imports_the_conformance_package_only_to_check() -> None:
    # every command builds the whole parser, so ``trimcp serve`` would pay for the harness
    loaded = _loaded_after("import trimcp.cli")
    assert "trimcp.cli" in loaded
    assert not {"trimcp.conformance", "h11", "httpx", "jsonschema", "email"} & set(loaded)


@pytest.mark.parametrize("name", ["trimcp", "trimcp.host"])
def test_every_listed_name_resolves_in_a_fresh_interpreter(name: str) -> None:
    # fresh, so that each name goes through ``__getattr__`` rather than a cache this process filled
    code = (
        f"import json, {name} as m\n"
        "listed = set(m.__all__)\n"
        "missing = sorted(n for n in m.__all__ if getattr(m, n, None) is None)\n"
        "print(json.dumps([missing, sorted(listed - set(dir(m)))]))\n"
    )
    assert _fresh(code) == [[], []]


@pytest.mark.parametrize("package", [trimcp, trimcp.host])
def test_lazy_names_are_the_defining_modules_objects(package: ModuleType) -> None:
    lazy: dict[str, str] = package._LAZY
    name = package.__name__
    assert set(lazy) <= set(package.__all__)
    for attr, where in lazy.items():
        module = importlib.import_module(where, name)
        expected = module if attr == "schema" and name == "trimcp" else getattr(module, attr)
        assert getattr(package, attr) is expected, attr
    for attr in package.__all__:
        assert attr in dir(package)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        package.nothing  # noqa: B018


@pytest.mark.parametrize("path", ["trimcp/__init__.py", "trimcp/host/__init__.py"])
def test_the_type_checking_imports_match_the_lazy_table(path: str) -> None:
    """What mypy reads (the ``if TYPE_CHECKING:`` imports) is what ``__getattr__`` hands out."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    seen: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                for alias in stmt.names:
                    assert alias.asname == alias.name  # an explicit re-export
                    base = "." * stmt.level + (stmt.module or "")
                    seen[alias.name] = base + alias.name if stmt.module is None else base
    package = trimcp if path == "trimcp/__init__.py" else trimcp.host
    assert seen == package._LAZY
    eager = set(package.__all__) - set(package._LAZY)
    assert all(name in vars(package) for name in eager)
