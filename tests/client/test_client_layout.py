"""The session driver sits below the client: no import of the client from the driver, no cycle
among the driver's and the client's modules (read with tests/project/test_layers.py's ``imports_of``)."""

from __future__ import annotations

from source_imports import PACKAGE_DIR, imports_of, module_name

import trimcp
from trimcp._sansio.revisions import Era

TRIO = PACKAGE_DIR / "_trio"
#: The driver and what it is made of, then the client built on it.
SESSION_MODULES = sorted(
    p
    for p in [
        TRIO / "driver.py",
        TRIO / "driver_types.py",
        TRIO / "callbacks.py",
        TRIO / "request_slots.py",
        TRIO / "serving.py",
    ]
    + list((TRIO / "client").glob("*.py"))
    if p.exists()
)


def _graph() -> dict[str, set[str]]:
    names = {module_name(p, PACKAGE_DIR): p for p in SESSION_MODULES}
    return {
        name: {imported for _, imported in imports_of(path) if imported in names and imported != name}
        for name, path in names.items()
    }


def test_the_driver_imports_nothing_of_the_client() -> None:
    graph = _graph()
    below = (
        "trimcp._trio.driver",
        "trimcp._trio.driver_types",
        "trimcp._trio.callbacks",
        "trimcp._trio.request_slots",
        "trimcp._trio.serving",
    )
    for name in set(below) & set(graph):
        assert not [m for m in graph[name] if m.startswith("trimcp._trio.client")], name


def test_no_import_cycle_between_the_driver_and_the_client() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join((*path, name))
        if name in done:
            return
        for imported in graph[name]:
            visit(imported, (*path, name))
        done.add(name)

    for name in graph:
        visit(name, ())


def test_era_is_public_and_typed() -> None:
    assert trimcp.Era is Era
    assert {e.value for e in trimcp.Era} == {"handshake", "stateless"}


def test_era_still_compares_equal_to_its_old_string_value() -> None:
    assert Era.HANDSHAKE == "handshake" and Era.STATELESS == "stateless"
    assert f"{Era.STATELESS}" == "stateless" and Era("handshake") is Era.HANDSHAKE
