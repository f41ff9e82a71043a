"""Reading trimcp's imports from its source (``ast``, never importing), for the layering tests.

``imports_of`` gives every module a file imports, as absolute dotted names; ``PUBLIC_API`` is
the set of public packages the CLI may import (``tests/project/test_layers.py`` holds the
rules, ``test_client_layout.py`` and ``test_config.py`` read single modules with it).
"""

from __future__ import annotations

import ast
from pathlib import Path

from repo_paths import PACKAGE

PACKAGE_DIR = PACKAGE

#: What the CLI may import of ours besides itself: the public packages, never one of their
#: modules (``from trimcp.conformance import is_url``, not ``from trimcp.conformance.connectors``).
PUBLIC_API = frozenset(
    {
        "trimcp",
        "trimcp.server",
        "trimcp.conformance",
        "trimcp.oauth",
        "trimcp.reference",
        "trimcp.schema",
        "trimcp.config",
        "trimcp.host",
    }
)


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
