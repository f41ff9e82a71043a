"""The MCP message types of every revision, under their public name.

``from trimcp.schema import CallToolResult, TextContent`` works as an import of a
module (``trimcp.schema`` was once only an attribute of ``trimcp``).  The types,
``from_wire`` / ``to_wire`` and the tables live in the sans-IO core
(``trimcp._sansio.schema``); this module re-exports exactly its ``__all__``.
"""

from ._sansio.schema import *  # noqa: F403
from ._sansio.schema import __all__ as _ALL

__all__ = list(_ALL)
