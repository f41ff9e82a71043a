"""The MCP message types of every revision, under their public name.

``from trimcp.schema import CallToolResult, TextContent`` works as an import of a
module (``trimcp.schema`` was once only an attribute of ``trimcp``).  The types,
``from_wire`` / ``to_wire`` and the tables live in the sans-IO core
(``trimcp._sansio.schema``); this module re-exports exactly its ``__all__``.
"""

from typing import TYPE_CHECKING, Any

from ._deprecate import deprecated_aliases as _deprecated_aliases
from ._sansio import schema as _schema
from ._sansio.schema import __all__ as _ALL

if TYPE_CHECKING:
    from ._sansio.schema import *  # noqa: F403

__all__ = list(_ALL)
_EXPORTED = frozenset(_ALL)

#: Old names: each use warns and names the one to use (``_deprecate.py``).
_DEPRECATED = _deprecated_aliases(
    __name__,
    {
        "RESULT_TYPE_COMPLETE": ("trimcp.schema.ResultType.COMPLETE", lambda: _schema.ResultType.COMPLETE),
        "RESULT_TYPE_INPUT_REQUIRED": (
            "trimcp.schema.ResultType.INPUT_REQUIRED",
            lambda: _schema.ResultType.INPUT_REQUIRED,
        ),
    },
)


def __getattr__(name: str) -> Any:
    """A name of ``__all__`` is the core's object, looked up on first use (its submodule is
    imported then, as in the core: a cold start builds only the classes it uses)."""
    if name in _EXPORTED:
        value = getattr(_schema, name)
        globals()[name] = value
        return value
    return _DEPRECATED(name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | _EXPORTED)
