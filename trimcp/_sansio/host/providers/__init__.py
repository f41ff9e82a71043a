"""From a pool's tools to a model API and back: tool lists, calls and results in each provider's shape.

Theory of operation
-------------------
Spec "Server features / Tools" (``inputSchema``, ``CallToolResult``) on one side; the
Anthropic Messages API, OpenAI Chat Completions (default and strict mode) and Gemini
function calling on the other, each documented in its own module with its sources
(``anthropic.py``, ``openai.py``, ``gemini.py``).  A schema goes through ``inline.py``
(references, ``allOf``, cycle guard, depth and size caps), then ``shape.py`` under the
provider's ``Dialect``; what the model loses becomes ``notes.py``'s line in the
description; ``repair.py`` maps the model's arguments back.  ``tools.py`` converts a list
tool by tool (one refused schema leaves out that tool, with the reason, never the list);
``turn.py`` reads calls and writes results; ``check.py`` validates a tool list against
each provider's documented subset, independently of the converter.  No I/O: the host
layer (``trimcp.host.agent``) runs the calls.
"""

from __future__ import annotations

from .base import ToolCall as ToolCall
from .base import ToolOutcome as ToolOutcome
from .check import check_tools as check_tools
from .tools import PROVIDERS as PROVIDERS
from .tools import LeftOut as LeftOut
from .tools import Provider as Provider
from .tools import ProviderTools as ProviderTools
from .tools import ToolSpec as ToolSpec
from .tools import provider_tools as provider_tools
from .turn import assistant_message as assistant_message
from .turn import reply_text as reply_text
from .turn import tool_calls as tool_calls
from .turn import tool_results as tool_results

__all__ = [
    "PROVIDERS",
    "LeftOut",
    "Provider",
    "ProviderTools",
    "ToolCall",
    "ToolOutcome",
    "ToolSpec",
    "assistant_message",
    "check_tools",
    "provider_tools",
    "reply_text",
    "tool_calls",
    "tool_results",
]
