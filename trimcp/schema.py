"""The MCP message types of every revision, under their public name.

``from trimcp.schema import CallToolResult, TextContent`` works as an import of a
module (``trimcp.schema`` was once only an attribute of ``trimcp``).  The types,
``from_wire`` / ``to_wire`` and the tables live in the sans-IO core
(``trimcp._sansio.schema``); this module re-exports exactly its ``__all__``.
"""

from typing import Any

from ._deprecate import deprecated_aliases as _deprecated_aliases
from ._sansio.schema import *  # noqa: F403
from ._sansio.schema import ResultType as _ResultType
from ._sansio.schema import __all__ as _ALL

__all__ = list(_ALL)

#: Old names: each use warns and names the one to use (``_deprecate.py``).
_DEPRECATED = _deprecated_aliases(
    __name__,
    {
        "RESULT_TYPE_COMPLETE": ("trimcp.schema.ResultType.COMPLETE", lambda: _ResultType.COMPLETE),
        "RESULT_TYPE_INPUT_REQUIRED": ("trimcp.schema.ResultType.INPUT_REQUIRED", lambda: _ResultType.INPUT_REQUIRED),
    },
)


def __getattr__(name: str) -> Any:
    return _DEPRECATED(name)
