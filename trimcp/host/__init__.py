"""What an application holding many MCP servers needs on top of client sessions (public API).

``open_pool`` holds the servers of an mcpServers config (``trimcp.config``):
memoised sessions connected on use or in limited batches, a status per
server, failure detection, reconnects with back-off, and what is restored
after one.  See ``pool.py`` and ``slot.py``.  Above it, the tool layer: the
pool's tools named for a model (``tools.py``), batches that run reads together
and writes alone (``batch.py``), and output checked against ``outputSchema``
(``outputs.py``); the pure rules come from ``trimcp._sansio.host``.

``validate_form`` checks the values of a form-mode elicitation against its
``requestedSchema`` (the pure core's ``forms``); ``validate_form_async`` also reads
natural-language dates (``forms.py``, ``dateparser`` when installed).

``Elicitation`` is the flow that answers servers' elicitation requests (hooks, one
prompt at a time, result hooks, URL mode; ``elicitation.py``); ``handlers.py`` types
the sampling and roots handlers and sends servers' log messages to ``logging``.

``truncate_result`` fits a tool result into a model's context (``truncate.py``):
structure-preserving cuts from the pure core, an optional exact counter
(``counters.py``), images downscaled with Pillow when installed (``images.py``).
"""

from .._sansio.host.backoff import Backoff as Backoff
from .._sansio.host.classify import classify_tool as classify_tool
from .._sansio.host.forms import FormField as FormField
from .._sansio.host.forms import FormResult as FormResult
from .._sansio.host.forms import form_fields as form_fields
from .._sansio.host.forms import validate_form as validate_form
from .._sansio.host.naming import NameTable as NameTable
from .._sansio.host.naming import cap_description as cap_description
from .._sansio.host.naming import mcp_tool_name as mcp_tool_name
from .._sansio.host.naming import normalize_name as normalize_name
from .._sansio.host.naming import unique_tool_name as unique_tool_name
from .batch import BatchOutcome as BatchOutcome
from .counters import TokenCounter as TokenCounter
from .counters import estimate as estimate
from .counters import local_counter as local_counter
from .elicitation import Elicitation as Elicitation
from .elicitation import ElicitationContext as ElicitationContext
from .elicitation import ServerElicitation as ServerElicitation
from .events import EventStream as EventStream
from .forms import validate_form_async as validate_form_async
from .handlers import RootsHandler as RootsHandler
from .handlers import SamplingHandler as SamplingHandler
from .handlers import log_to_python as log_to_python
from .handlers import server_logger as server_logger
from .outputs import OutputValidationError as OutputValidationError
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
from .tools import HostTool as HostTool
from .tools import UnknownTool as UnknownTool
from .truncate import truncate_result as truncate_result
from .truncate import truncate_result_sync as truncate_result_sync

__all__ = [
    "Backoff", "BatchOutcome", "Elicitation", "ElicitationContext", "EventStream", "FormField",
    "FormResult", "HostTool", "NameTable", "OutputValidationError", "Pool", "PoolEvent",
    "RootsHandler", "SamplingHandler", "ServerElicitation", "ServerNotification", "ServerState",
    "ServerStatus", "ServerUnavailable", "StatusChanged", "TokenCounter", "ToolsChanged",
    "UnknownServer", "UnknownTool", "cap_description", "classify_tool", "config_key",
    "estimate", "form_fields", "local_counter", "log_to_python", "mcp_tool_name",
    "normalize_name", "open_pool", "server_logger", "truncate_result", "truncate_result_sync",
    "unique_tool_name", "validate_form", "validate_form_async",
]
