"""The committed public API listing (``docs/api.md``) is the one the code generates.

A change of any public module's ``__all__`` (or of a listed name's first docstring sentence)
fails here until ``python -m trimcp._api_listing --write`` is run and the diff committed: the
surface only changes in plain view.
"""

from __future__ import annotations

import importlib
import warnings

import pytest
from source_imports import PUBLIC_API

from trimcp import _api_listing


def test_the_committed_listing_is_the_generated_one() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the listing touches no old name
        generated = _api_listing.listing()
    committed = _api_listing.DOC.read_text(encoding="utf-8")
    assert committed == generated, "the public surface changed: run python -m trimcp._api_listing --write"


def test_the_listing_covers_every_public_module() -> None:
    # the modules the CLI may import (test_layers.PUBLIC_API), plus trimcp.apps
    assert set(PUBLIC_API) <= set(_api_listing.PUBLIC_MODULES)


@pytest.mark.parametrize("name", _api_listing.PUBLIC_MODULES)
def test_each_listed_name_appears_once_with_its_kind(name: str) -> None:
    module = importlib.import_module(name)
    text = "\n".join(_api_listing.section(name))
    assert len(module.__all__) == len(set(module.__all__)), "a name listed twice in __all__"
    for attr in module.__all__:
        assert text.count(f"- `{attr}` (") == 1, attr


def test_first_sentence_stops_at_a_full_stop_outside_code() -> None:
    assert _api_listing.first_sentence("Do it (e.g. ``a.b``). More.\n\nOther.") == "Do it (e.g. ``a.b``)."
    assert _api_listing.first_sentence("Wrapped\n   over lines") == "Wrapped over lines"
    assert _api_listing.first_sentence(None) == ""
