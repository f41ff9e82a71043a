"""The bundled reference server: an application built on trimcp.server.

``build_server()`` returns the ``Server`` (every feature of both eras, see
``server``); ``main(argv)`` serves it on stdio, as ``python -m trimcp.reference`` does.
"""

from .server import build_server as build_server
from .server import main as main

__all__ = ["build_server", "main"]
