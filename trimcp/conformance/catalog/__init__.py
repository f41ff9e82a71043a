"""Every check the harness knows: its id, level, spec section, revisions and title.

The checks are listed by area, one module each (``core`` holds the first
ones); ``CATALOG`` is their union, in report order, keyed by id.  A check's
level follows the sentences it tests (``requirements/``: the catalogue of the
specification's server-side sentences says which checks test each one, fully
or partly); ``tests/check/test_requirements.py`` holds the two together.

The names re-exported here (revision tuples, section names) are the
vocabulary the area modules share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..model import CheckSpec
from . import apps, auth, basic, core, ext_tasks, features, http26, stateless, tasks, transport
from .core import AUTH as AUTH
from .core import FROM_2025_06_18 as FROM_2025_06_18
from .core import FROM_2025_06_18_HANDSHAKE as FROM_2025_06_18_HANDSHAKE
from .core import FROM_2025_11_25 as FROM_2025_11_25
from .core import HANDSHAKE as HANDSHAKE
from .core import HTTP_2025 as HTTP_2025
from .core import HTTP_2026 as HTTP_2026
from .core import STATELESS as STATELESS
from .core import STREAMABLE as STREAMABLE
from .core import STREAMABLE_HANDSHAKE as STREAMABLE_HANDSHAKE

# One line per area module; each module's SPECS is a tuple of CheckSpec.
_AREAS: Final[tuple[tuple[CheckSpec, ...], ...]] = (
    core.SPECS,
    http26.SPECS,
    tasks.SPECS,
    stateless.SPECS,
    transport.SPECS,
    auth.SPECS,
    features.SPECS,
    basic.SPECS,
    apps.SPECS,
    ext_tasks.SPECS,
)


def _index(areas: tuple[tuple[CheckSpec, ...], ...]) -> dict[str, CheckSpec]:
    out: dict[str, CheckSpec] = {}
    for specs in areas:
        for spec in specs:
            if spec.id in out:
                raise RuntimeError(f"check id {spec.id!r} is defined twice")
            out[spec.id] = spec
    return out


CATALOG: Final[Mapping[str, CheckSpec]] = _index(_AREAS)
