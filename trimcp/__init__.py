"""trimcp: a Trio-native Model Context Protocol library.

The public API is what this module exports, and the public packages beside it:
``trimcp.server`` (the server framework), ``trimcp.oauth`` (OAuth for HTTP
clients), ``trimcp.conformance`` (the harness), ``trimcp.reference`` (the
reference server) and ``trimcp.config`` (the ``mcpServers`` files of Claude and
VS Code); ``trimcp.cli`` is the ``trimcp`` command, written against these alone.  Underneath, ``trimcp._sansio`` holds the pure protocol core
(``Connection``) and ``trimcp._trio`` the transports and sessions.
"""

from ._errors import (
    AuthError as AuthError,
    ConnectError as ConnectError,
    InputRoundsExceeded as InputRoundsExceeded,
    LocalProtocolError as LocalProtocolError,
    McpError as McpError,
    PaginationError as PaginationError,
    ProtocolError as ProtocolError,
    RemoteProtocolError as RemoteProtocolError,
    RequestTimeout as RequestTimeout,
    SessionExpired as SessionExpired,
    TransportClosed as TransportClosed,
    TransportError as TransportError,
    TrimcpError as TrimcpError,
)
from . import schema as schema
from ._sansio.connection.lifecycle import Role as Role
from ._sansio.revisions import ALL_VERSIONS as ALL_VERSIONS
from ._sansio.revisions import HANDSHAKE_VERSIONS as HANDSHAKE_VERSIONS
from ._sansio.revisions import Era as Era
from ._sansio.schema import SchemaError as SchemaError
from ._sansio.schema import from_wire as from_wire
from ._sansio.schema import to_wire as to_wire
from ._sansio.connection.core import Connection as Connection
from ._trio.client import ClientSession as ClientSession
from ._trio.client import open_client as open_client
from ._trio.memory import memory_stream_pair as memory_stream_pair
from ._trio.driver import RequestContext as RequestContext
from ._trio.transports.stdio import open_stdio_process as open_stdio_process
from ._trio.transports.registry import TransportFactory as TransportFactory
from ._trio.transports.registry import TransportOptions as TransportOptions
from .config import ShutdownPolicy as ShutdownPolicy
from ._trio.transports.registry import register_transport as register_transport
from ._trio.stream import MessageStream as MessageStream

__version__ = "0.1.0"

__all__ = [
    "ALL_VERSIONS", "AuthError", "ClientSession", "ConnectError", "Connection", "Era",
    "HANDSHAKE_VERSIONS", "InputRoundsExceeded", "LocalProtocolError", "McpError", "MessageStream",
    "PaginationError", "ProtocolError",
    "RemoteProtocolError", "RequestContext", "RequestTimeout", "Role", "SchemaError",
    "SessionExpired", "ShutdownPolicy", "TransportClosed", "TransportError", "TransportFactory", "TransportOptions",
    "TrimcpError", "from_wire", "memory_stream_pair", "open_client", "open_stdio_process",
    "register_transport", "schema", "to_wire",
]
