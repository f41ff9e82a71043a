"""What an application holding many MCP servers needs on top of client sessions (public API).

``open_pool`` holds the servers of an mcpServers config (``trimcp.config``):
memoised sessions connected on use or in limited batches, a status per
server, failure detection, reconnects with back-off, and what is restored
after one.  See ``pool.py`` and ``slot.py``.
"""

from .._sansio.host.backoff import Backoff as Backoff
from .events import EventStream as EventStream
from .pool import Pool as Pool
from .pool import UnknownServer as UnknownServer
from .pool import open_pool as open_pool
from .slot import ServerUnavailable as ServerUnavailable
from .status import PoolEvent as PoolEvent
from .status import ServerNotification as ServerNotification
from .status import ServerState as ServerState
from .status import ServerStatus as ServerStatus
from .status import StatusChanged as StatusChanged
from .status import ToolsChanged as ToolsChanged
from .status import config_key as config_key

__all__ = [
    "Backoff", "EventStream", "Pool", "PoolEvent", "ServerNotification", "ServerState",
    "ServerStatus", "ServerUnavailable", "StatusChanged", "ToolsChanged", "UnknownServer",
    "config_key", "open_pool",
]
