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
natural-language dates (``form_dates.py``, ``dateparser`` when installed).

``Elicitation`` is the flow that answers servers' elicitation requests (hooks, one
prompt at a time, result hooks, URL mode; ``elicitation.py``); ``client_handlers.py`` types
the sampling and roots handlers and sends servers' log messages to ``logging``.

``truncate_result`` fits a tool result into a model's context (``truncate.py``):
structure-preserving cuts from the pure core, an optional exact counter
(``counters.py``), images downscaled with Pillow when installed (``images.py``).

From the pool to the model: ``provider_tools(tools, provider)`` shapes the pool's tools
for ``anthropic``, ``openai``, ``openai-strict`` or ``gemini`` (a ``ProviderTools``: the
request's ``tools``, and the ``LeftOut`` ones with the reason); ``tool_calls`` reads a
reply's calls, ``tool_results`` writes their outcomes back in the provider's shape (the
pure core's ``providers``); ``agent_turn`` runs one turn over any model callable and
``run_tool_calls`` runs the calls through the pool (``agent.py``).

Import cost: nothing below is imported with this package.  Every export is a lazy
module attribute (PEP 562 ``__getattr__``): the first use of a name imports the
module that defines it (and with it trio, the schema, jsonschema...) and caches it
here; type checkers read the names from the ``TYPE_CHECKING`` block.
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from .._sansio.host.providers import LeftOut as LeftOut
    from .._sansio.host.providers import Provider as Provider
    from .._sansio.host.providers import ProviderTools as ProviderTools
    from .._sansio.host.providers import ToolCall as ToolCall
    from .._sansio.host.providers import ToolOutcome as ToolOutcome
    from .._sansio.host.providers import provider_tools as provider_tools
    from .._sansio.host.providers import tool_calls as tool_calls
    from .._sansio.host.providers import tool_results as tool_results
    from .agent import Turn as Turn
    from .agent import agent_turn as agent_turn
    from .agent import run_tool_calls as run_tool_calls
    from .batch import BatchOutcome as BatchOutcome
    from .client_handlers import RootsHandler as RootsHandler
    from .client_handlers import SamplingHandler as SamplingHandler
    from .client_handlers import log_to_python as log_to_python
    from .client_handlers import server_logger as server_logger
    from .counters import TokenCounter as TokenCounter
    from .counters import estimate as estimate
    from .counters import local_counter as local_counter
    from .elicitation import Elicitation as Elicitation
    from .elicitation import ElicitationContext as ElicitationContext
    from .elicitation import ServerElicitation as ServerElicitation
    from .event_hub import EventStream as EventStream
    from .form_dates import validate_form_async as validate_form_async
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

#: Lazy export -> the module defining it (relative to this package).  Keep in step with the
#: ``TYPE_CHECKING`` block (tests/project/test_import_cost.py checks).
_LAZY: dict[str, str] = {
    "Backoff": ".._sansio.host.backoff",
    "classify_tool": ".._sansio.host.classify",
    "FormField": ".._sansio.host.forms",
    "FormResult": ".._sansio.host.forms",
    "form_fields": ".._sansio.host.forms",
    "validate_form": ".._sansio.host.forms",
    "NameTable": ".._sansio.host.naming",
    "cap_description": ".._sansio.host.naming",
    "mcp_tool_name": ".._sansio.host.naming",
    "normalize_name": ".._sansio.host.naming",
    "unique_tool_name": ".._sansio.host.naming",
    "LeftOut": ".._sansio.host.providers",
    "Provider": ".._sansio.host.providers",
    "ProviderTools": ".._sansio.host.providers",
    "ToolCall": ".._sansio.host.providers",
    "ToolOutcome": ".._sansio.host.providers",
    "provider_tools": ".._sansio.host.providers",
    "tool_calls": ".._sansio.host.providers",
    "tool_results": ".._sansio.host.providers",
    "Turn": ".agent",
    "agent_turn": ".agent",
    "run_tool_calls": ".agent",
    "BatchOutcome": ".batch",
    "TokenCounter": ".counters",
    "estimate": ".counters",
    "local_counter": ".counters",
    "Elicitation": ".elicitation",
    "ElicitationContext": ".elicitation",
    "ServerElicitation": ".elicitation",
    "EventStream": ".event_hub",
    "validate_form_async": ".form_dates",
    "RootsHandler": ".client_handlers",
    "SamplingHandler": ".client_handlers",
    "log_to_python": ".client_handlers",
    "server_logger": ".client_handlers",
    "OutputValidationError": ".outputs",
    "Pool": ".pool",
    "UnknownServer": ".pool",
    "open_pool": ".pool",
    "ServerUnavailable": ".slot",
    "PoolEvent": ".status",
    "ServerNotification": ".status",
    "ServerState": ".status",
    "ServerStatus": ".status",
    "StatusChanged": ".status",
    "ToolsChanged": ".status",
    "config_key": ".status",
    "HostTool": ".tools",
    "UnknownTool": ".tools",
    "truncate_result": ".truncate",
    "truncate_result_sync": ".truncate",
}


def __getattr__(name: str) -> Any:
    """Import a lazy export on first use and cache it here (PEP 562)."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Backoff",
    "BatchOutcome",
    "Elicitation",
    "ElicitationContext",
    "EventStream",
    "FormField",
    "FormResult",
    "HostTool",
    "LeftOut",
    "NameTable",
    "OutputValidationError",
    "Pool",
    "PoolEvent",
    "Provider",
    "ProviderTools",
    "RootsHandler",
    "SamplingHandler",
    "ServerElicitation",
    "ServerNotification",
    "ServerState",
    "ServerStatus",
    "ServerUnavailable",
    "StatusChanged",
    "TokenCounter",
    "ToolCall",
    "ToolOutcome",
    "ToolsChanged",
    "Turn",
    "UnknownServer",
    "UnknownTool",
    "agent_turn",
    "cap_description",
    "classify_tool",
    "config_key",
    "estimate",
    "form_fields",
    "local_counter",
    "log_to_python",
    "mcp_tool_name",
    "normalize_name",
    "open_pool",
    "provider_tools",
    "run_tool_calls",
    "server_logger",
    "tool_calls",
    "tool_results",
    "truncate_result",
    "truncate_result_sync",
    "unique_tool_name",
    "validate_form",
    "validate_form_async",
]
