"""trimcp: a Trio-native Model Context Protocol library.

The public API is what this module exports, and the public packages beside it:
``trimcp.server`` (the server framework), ``trimcp.oauth`` (OAuth for HTTP
clients), ``trimcp.conformance`` (the harness), ``trimcp.reference`` (the
reference server), ``trimcp.config`` (the ``mcpServers`` files of Claude and
VS Code), ``trimcp.host`` (many servers in a pool), ``trimcp.schema``, ``trimcp.apps``
and ``trimcp.testing`` (a client on a ``Server`` in-process, the ``MessageStream``
contract checker); ``trimcp.cli`` is the ``trimcp`` command, written against these
alone.  Underneath, ``trimcp._sansio`` holds the pure protocol core (``Connection``)
and ``trimcp._trio`` the transports and sessions.

Import cost: only the error tree is imported with the package.  Every other
export is a lazy module attribute (PEP 562 ``__getattr__``): the first
``trimcp.open_client`` or ``from trimcp import Connection`` imports the module
that defines it (and with it trio, attrs, cattrs, the schema) and caches the
object in this module's namespace, so later look-ups are plain dict hits.
Type checkers read the same names from the ``TYPE_CHECKING`` block below.
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING, Any

from ._deprecate import deprecated_aliases as _deprecated_aliases
from ._errors import AuthError as AuthError
from ._errors import ConnectError as ConnectError
from ._errors import ConnectTimeout as ConnectTimeout
from ._errors import InputRoundsExceeded as InputRoundsExceeded
from ._errors import LocalProtocolError as LocalProtocolError
from ._errors import McpError as McpError
from ._errors import PaginationError as PaginationError
from ._errors import ProtocolError as ProtocolError
from ._errors import RemoteProtocolError as RemoteProtocolError
from ._errors import RequestTimeout as RequestTimeout
from ._errors import SessionExpired as SessionExpired
from ._errors import TaskCancelled as TaskCancelled
from ._errors import TransportClosed as TransportClosed
from ._errors import TransportError as TransportError
from ._errors import TrimcpError as TrimcpError
from ._version import __version__ as __version__

if TYPE_CHECKING:
    from . import schema as schema
    from ._sansio.connection.core import Connection as Connection
    from ._sansio.connection.lifecycle import Role as Role
    from ._sansio.revisions import ALL_VERSIONS as ALL_VERSIONS
    from ._sansio.revisions import HANDSHAKE_VERSIONS as HANDSHAKE_VERSIONS
    from ._sansio.revisions import Era as Era
    from ._sansio.schema import SchemaError as SchemaError
    from ._sansio.task_poll import TaskState as TaskState
    from ._shutdown import ShutdownPolicy as ShutdownPolicy
    from ._trio.client import ClientSession as ClientSession
    from ._trio.client import ToolTask as ToolTask
    from ._trio.client import open_client as open_client
    from ._trio.client.options import Handlers as Handlers
    from ._trio.client.options import HttpOptions as HttpOptions
    from ._trio.client.options import Limits as Limits
    from ._trio.client.options import StdioOptions as StdioOptions
    from ._trio.client.options import Timeouts as Timeouts
    from ._trio.driver import RequestContext as RequestContext
    from ._trio.memory import memory_stream_pair as memory_stream_pair
    from ._trio.stream import MessageStream as MessageStream
    from ._trio.transports.registry import TransportFactory as TransportFactory
    from ._trio.transports.registry import TransportOptions as TransportOptions
    from ._trio.transports.registry import register_transport as register_transport
    from ._trio.transports.stdio import open_stdio_process as open_stdio_process

#: Lazy export -> the module defining it (relative to this package); ``schema`` is that module
#: itself.  Keep in step with the ``TYPE_CHECKING`` block (tests/project/test_import_cost.py checks).
_LAZY: dict[str, str] = {
    "schema": ".schema",
    "Connection": "._sansio.connection.core",
    "Role": "._sansio.connection.lifecycle",
    "ALL_VERSIONS": "._sansio.revisions",
    "HANDSHAKE_VERSIONS": "._sansio.revisions",
    "Era": "._sansio.revisions",
    "SchemaError": "._sansio.schema",
    "TaskState": "._sansio.task_poll",
    "ClientSession": "._trio.client",
    "ToolTask": "._trio.client",
    "open_client": "._trio.client",
    "Handlers": "._trio.client.options",
    "HttpOptions": "._trio.client.options",
    "Limits": "._trio.client.options",
    "StdioOptions": "._trio.client.options",
    "Timeouts": "._trio.client.options",
    "RequestContext": "._trio.driver",
    "memory_stream_pair": "._trio.memory",
    "MessageStream": "._trio.stream",
    "TransportFactory": "._trio.transports.registry",
    "TransportOptions": "._trio.transports.registry",
    "register_transport": "._trio.transports.registry",
    "open_stdio_process": "._trio.transports.stdio",
    "ShutdownPolicy": "._shutdown",
}


def _schema_attr(name: str) -> Any:
    return lambda: getattr(_import_module(".schema", __name__), name)


#: Old names: each use warns and names the one to use (``_deprecate.py``).
_DEPRECATED = _deprecated_aliases(
    __name__,
    {
        "from_wire": ("trimcp.schema.from_wire", _schema_attr("from_wire")),
        "to_wire": ("trimcp.schema.to_wire", _schema_attr("to_wire")),
    },
)


def __getattr__(name: str) -> Any:
    """Import a lazy export on first use and cache it here (PEP 562)."""
    where = _LAZY.get(name)
    if where is None:
        return _DEPRECATED(name)
    module = _import_module(where, __name__)
    value = module if name == "schema" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "ALL_VERSIONS",
    "HANDSHAKE_VERSIONS",
    "AuthError",
    "ClientSession",
    "ConnectError",
    "ConnectTimeout",
    "Connection",
    "Era",
    "Handlers",
    "HttpOptions",
    "InputRoundsExceeded",
    "Limits",
    "LocalProtocolError",
    "McpError",
    "MessageStream",
    "PaginationError",
    "ProtocolError",
    "RemoteProtocolError",
    "RequestContext",
    "RequestTimeout",
    "Role",
    "SchemaError",
    "SessionExpired",
    "ShutdownPolicy",
    "StdioOptions",
    "TaskCancelled",
    "TaskState",
    "Timeouts",
    "ToolTask",
    "TransportClosed",
    "TransportError",
    "TransportFactory",
    "TransportOptions",
    "TrimcpError",
    "memory_stream_pair",
    "open_client",
    "open_stdio_process",
    "register_transport",
    "schema",
]
