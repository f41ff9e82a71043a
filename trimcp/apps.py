"""MCP Apps (``io.modelcontextprotocol/ui``): declare the extension, read a tool's
view link, check a view and build the Content-Security-Policy to serve it under.

``open_client(..., extensions=apps.client_extension())`` declares it;
``ClientSession.read_view(tool)`` reads and checks a tool's view.
"""

from ._sansio.apps import *  # noqa: F403 - the sans-IO module is the whole public face
from ._sansio.apps import __all__ as _ALL

__all__ = list(_ALL)
