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
from types import ModuleType

import pytest
from repo_paths import REPO

import trimcp
import trimcp.host

ROOT = REPO

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


def test_building_the_command_line_imports_neither_the_harness_nor_the_server() -> None:
    # every command (``trimcp tools list`` too) builds the whole parser before it runs
    loaded = _loaded_after("import trimcp.cli.commands as c; c._build_parsers()")
    assert "trimcp.cli" in loaded
    assert not {"trimcp.conformance", "trimcp.server"} & set(loaded)


def test_the_client_imports_no_test_framework() -> None:
    # trio.testing imports pytest when it is installed: a tenth of a second of every cold start
    code = "import sys, trimcp._trio.offload, trimcp._trio.client.client_session\nprint(str(sys.modules.get('trio.testing') is None).lower())"
    assert _fresh(code) is True


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


def test_a_client_builds_only_the_schema_it_uses() -> None:
    # cold start (issue 29): open_client neither parses mcpServers files nor builds every schema class
    code = (
        "import sys, json\nfrom trimcp import open_client\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('trimcp.', 'cattrs')))))\n"
    )
    loaded = _fresh(code)
    assert isinstance(loaded, list) and "trimcp._trio.client.connect" in loaded
    assert not {"trimcp.config", "trimcp._redaction", "cattrs", "trimcp._sansio.schema._converter"} & set(loaded)
    assert not [m for m in loaded if m.startswith("trimcp._sansio.schema.") and m.split(".")[-1][0] != "_"]


def test_connecting_imports_cattrs_only_for_the_first_typed_view() -> None:
    # cold start (issue 29): the handshake and wire-level calls need no converter; the first
    # typed result (``list_tools``) builds it.  The probe shows it does see cattrs load.
    code = (
        "import sys, json, trio\nfrom trimcp import open_client\n"
        "async def main():\n"
        "    seen = []\n"
        "    async with open_client([sys.executable, '-m', 'trimcp.reference']) as client:\n"
        "        await client.request('tools/list')\n"
        "        seen.append('cattrs' in sys.modules)\n"
        "        await client.list_tools()\n"
        "        seen.append('cattrs' in sys.modules)\n"
        "    print(json.dumps(seen))\n"
        "trio.run(main)\n"
    )
    assert _fresh(code) == [False, True]


def test_the_lazy_schema_names_are_its_submodules_objects() -> None:
    from trimcp._sansio import schema as s

    for name, where in s._LAZY.items():
        assert getattr(s, name) is getattr(importlib.import_module(where, s.__name__), name), name
    assert set(s._LAZY) | {"SchemaError", "converter", "from_wire", "to_wire"} >= set(s.__all__)


def test_a_form_check_builds_no_truncation_planner() -> None:
    # the CLI's elicitation prompt checks forms on every command's start: it pays for no truncation or result class
    code = (
        "import sys, json\nfrom trimcp.host import FormField, form_fields\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('trimcp.'))))\n"
    )
    found = _fresh(code)
    assert isinstance(found, list) and "trimcp._sansio.host.forms" in found
    assert not {"trimcp._sansio.host.truncation", "trimcp._sansio.schema.tool_calls"} & set(found)
