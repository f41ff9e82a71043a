"""Every exception class trimcp defines is in its one error tree, rooted at ``TrimcpError``.

The test imports every module of the package and looks at the exception classes each one
defines: a class outside the tree fails here, unless it is on the allow-list below, where
each entry says why it must stay out.  What stays out is control flow that trimcp raises
and catches itself; none of it reaches a caller.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import trimcp
from trimcp import TrimcpError

#: Exceptions that are signals, not errors, each with why it is no ``TrimcpError``.  Keyed by
#: class name, not path, so that moving a module does not stale the list.
OUTSIDE_THE_TREE: dict[str, str] = {
    "ScriptError": "trimcp.testing.ScriptedModel's verdict in a user's test: an AssertionError so the test "
    "fails as on a failed assert, and the agent's own `except TrimcpError` cannot swallow it",
    "_Suspend": "unwinds a server handler that asked for input; a BaseException so that the handler's "
    "own `except Exception` (or `except TrimcpError`) cannot swallow it",
    "NeedInput": "what the server's handler table hands the driver to answer with an InputRequiredResult; "
    "raised and caught inside the request's task, after user code has returned",
    "_TooSlow": "a read deadline inside the HTTP server's connection loop, caught a few lines up",
    "_Rejected": "an argument reader's verdict, turned into an argparse message by its one caller",
    "ProbeFailed": "ends one probe of `trimcp check`; the harness records what it left as not reached, and "
    "an `except TrimcpError` in a check must not mistake it for the server's answer",
    "Broken": "ends one malformed-input probe's connection; the next probe starts a new one (as ProbeFailed)",
}


def _modules() -> list[str]:
    names = ["trimcp"]
    for info in pkgutil.walk_packages(trimcp.__path__, "trimcp."):
        if info.name.rsplit(".", 1)[-1] != "__main__":  # (runs the command line on import)
            names.append(info.name)
    return names


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name:
                found[f"{name}.{attr}"] = value
    return found


CLASSES = _exception_classes()


def _named(short: str) -> type[BaseException]:
    [cls] = [cls for name, cls in CLASSES.items() if name.rsplit(".", 1)[-1] == short]
    return cls


def test_the_walk_sees_the_tree() -> None:
    # A walk that imported nothing would pass the test below vacuously.
    assert "trimcp._errors.TrimcpError" in CLASSES
    assert "trimcp._sansio.schema._rules.SchemaError" in CLASSES
    assert len(CLASSES) > 40


def test_every_exception_class_is_in_the_tree() -> None:
    outside = sorted(
        name
        for name, cls in CLASSES.items()
        if not issubclass(cls, TrimcpError) and name.rsplit(".", 1)[-1] not in OUTSIDE_THE_TREE
    )
    assert outside == [], "put these under trimcp._errors.TrimcpError (or allow-list them, saying why)"


def test_the_allow_list_names_only_what_exists_and_is_outside() -> None:
    for name in OUTSIDE_THE_TREE:
        # (_named fails when the class is gone, or when two classes share the name)
        assert not issubclass(_named(name), TrimcpError), f"{name} is in the tree now: drop it"


@pytest.mark.parametrize(
    ("name", "also"),
    [
        # A second base where callers (ours, or a user's) catch the builtin.
        ("SchemaError", ValueError),
        ("InvalidHeaderValue", ValueError),
        ("InvalidToolHeaders", ValueError),
        ("UsageError", ValueError),
        ("TranscriptError", ValueError),
        ("UnsafeVariable", ValueError),
        ("UnknownServer", LookupError),
        ("UnknownTool", LookupError),
    ],
)
def test_moved_classes_keep_the_builtin_base_callers_catch(name: str, also: type[Exception]) -> None:
    assert issubclass(_named(name), TrimcpError) and issubclass(_named(name), also)


def test_transport_failures_are_transport_errors() -> None:
    from trimcp import TransportError

    for name in ("ClientGone", "WriteAborted", "ProbeError"):
        assert issubclass(_named(name), TransportError), name
