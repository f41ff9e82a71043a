"""Keep Trio's exception groups away from users.

Trio nurseries wrap whatever escapes them in an ``ExceptionGroup``.  Our
context managers run background tasks (a reader, a stderr drain) next to the
user's code, so the group almost always holds exactly one real error;
``collapse`` raises that error itself, as trio's own ``open_tcp_stream`` does,
keeping its original ``__cause__`` and ``__context__``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import trio


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def raise_single(group: BaseExceptionGroup[BaseException]) -> NoReturn:
    """Re-raise the one real error in ``group`` as itself; else the group."""
    leaves = _leaves(group)
    # Cancelled siblings are noise next to a real error.
    real = [e for e in leaves if not isinstance(e, trio.Cancelled)] or leaves
    if len(real) != 1:
        raise group
    exc = real[0]
    context = exc.__context__
    try:
        raise exc
    finally:
        # ``raise`` inside the handler set __context__ to the group; restore the original.
        exc.__context__ = context
        del exc, context


@contextmanager
def collapse() -> Iterator[None]:
    try:
        yield
    except BaseExceptionGroup as group:
        raise_single(group)
