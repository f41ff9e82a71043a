"""Old names live on only through a warning.

Theory of operation
-------------------
A public name that is renamed, merged into another or regrouped is not dropped at once:
it keeps working for a while and says, each time it is used, what to use instead.
``warn_deprecated`` is that sentence, a ``DeprecationWarning`` pointing at the caller's
line; ``deprecated_aliases`` serves a module's old attribute names from its PEP 562
``__getattr__`` (the alias is left out of ``__all__`` and ``dir()``, so the API listing
shows only the name that stays); ``deprecated`` wraps a function that is itself the old
name.  Every warning names the release that deprecated it, so a reader knows how long
it has had to go.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

#: The release in which the current round of deprecations was made (a fact of the past, not
#: ``trimcp._version.__version__``: it stays when the release number moves on).
SINCE = "0.1.0"


def warn_deprecated(old: str, new: str, *, since: str = SINCE, stacklevel: int = 2) -> None:
    """Warn that ``old`` is deprecated in favour of ``new``.

    ``stacklevel`` counts from the caller of this function (2: the line that called the
    function which calls ``warn_deprecated``)."""
    warnings.warn(
        f"{old} is deprecated since trimcp {since}; use {new}",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def deprecated(new: str, *, since: str = SINCE) -> Callable[[_F], _F]:
    """Decorate a function kept under an old name: each call warns, naming ``new``."""

    def wrap(fn: _F) -> _F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            warn_deprecated(f"{fn.__module__}.{fn.__qualname__}", new, since=since)
            return fn(*args, **kwargs)

        return call  # type: ignore[return-value]

    return wrap


def deprecated_aliases(
    module: str, aliases: Mapping[str, tuple[str, Callable[[], Any]]], *, since: str = SINCE
) -> Callable[[str], Any]:
    """A lookup for a module's ``__getattr__``: old name -> (replacement, getter).

    Returns a function that, for an old name, warns and hands out the current object,
    and raises ``AttributeError`` for any other name (so the module can try its own
    lazy exports first and fall back to this)."""

    def lookup(name: str) -> Any:
        entry = aliases.get(name)
        if entry is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, get = entry
        # stacklevel 2 from here: lookup <- module __getattr__ <- the user's line.
        warn_deprecated(f"{module}.{name}", new, since=since, stacklevel=3)
        return get()

    return lookup


__all__ = ["SINCE", "deprecated", "deprecated_aliases", "warn_deprecated"]
