"""Old names keep working, and every use says what to use instead (``trimcp/_deprecate.py``)."""

from __future__ import annotations

import importlib
import warnings

import pytest

from trimcp._deprecate import SINCE, deprecated, deprecated_aliases, warn_deprecated


def test_warn_deprecated_names_the_replacement_and_points_at_the_caller() -> None:
    def old_api() -> None:
        warn_deprecated("old_api()", "new_api()")

    with pytest.warns(
        DeprecationWarning, match=rf"old_api\(\) is deprecated since trimcp {SINCE}; use new_api\(\)"
    ) as got:
        old_api()
    assert got[0].filename == __file__  # the line that called old_api, not _deprecate.py


def test_the_decorator_warns_on_every_call_and_still_calls() -> None:
    @deprecated("twice()")
    def double(x: int) -> int:
        return 2 * x

    for _ in range(2):
        with pytest.warns(DeprecationWarning, match=r"double is deprecated .*; use twice\(\)"):
            assert double(4) == 8


def test_aliases_warn_hand_out_the_object_and_refuse_other_names() -> None:
    marker = object()
    lookup = deprecated_aliases("pkg", {"old": ("pkg.new", lambda: marker)})
    with pytest.warns(DeprecationWarning, match=r"pkg\.old is deprecated .*; use pkg\.new"):
        assert lookup("old") is marker
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'other'"):
        lookup("other")


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("trimcp", "from_wire", "trimcp.schema.from_wire"),
        ("trimcp", "to_wire", "trimcp.schema.to_wire"),
        ("trimcp.conformance", "print_table", "trimcp.conformance.print_report"),
        ("trimcp.conformance", "print_json", "trimcp.conformance.write_json"),
        ("trimcp.server", "Subscription", "trimcp.server.ListenStream"),
        ("trimcp.server", "run_stdio", "trio.run(trimcp.server.serve_stdio, server)"),
    ],
)
def test_each_duplicate_lives_on_only_as_a_warning(module: str, old: str, new: str) -> None:
    mod = importlib.import_module(module)
    assert old not in mod.__all__ and old not in dir(mod)
    with pytest.warns(
        DeprecationWarning, match=rf"{module}\.{old} is deprecated .*; use {new.replace('(', '.').replace(')', '.')}"
    ) as got:
        value = getattr(mod, old)
    assert got[0].filename == __file__
    assert value is not None
    with pytest.warns(DeprecationWarning):  # every use warns, not the first only
        getattr(mod, old)


def test_the_old_names_are_the_current_objects() -> None:
    import trimcp.conformance
    import trimcp.schema
    import trimcp.server

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert trimcp.to_wire is trimcp.schema.to_wire
        assert trimcp.from_wire is trimcp.schema.from_wire
        assert trimcp.conformance.print_table is trimcp.conformance.print_report
        assert trimcp.conformance.print_json is trimcp.conformance.write_json
        assert trimcp.server.Subscription is trimcp.server.ListenStream


def test_run_stdio_warns_when_called() -> None:
    from trimcp.server import serve

    with pytest.warns(DeprecationWarning, match=r"run_stdio is deprecated .*serve_stdio"), pytest.raises(TypeError):
        serve.run_stdio()  # type: ignore[call-arg]  # the warning comes before the call
