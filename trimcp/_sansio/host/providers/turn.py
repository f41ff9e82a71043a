"""One turn of an agent in a provider's shape: the calls of a reply, the reply for the history,
the results as messages.

Theory of operation
-------------------
The host runs a turn (``trimcp.host.agent``); the shapes are the provider modules'
(``FORMATS``).  ``tool_calls(provider, reply)`` reads the calls out of a reply, an SDK
object or its dict; ``assistant_message`` is what goes back into the history so the
provider sees its own calls next to their results; ``tool_results`` turns the outcomes,
in call order, into the messages that follow it (Anthropic: one user message of
``tool_result`` blocks; OpenAI: one ``tool`` message per call; Gemini: one user turn of
``functionResponse`` parts); ``reply_text`` is what the model said besides its calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import ToolCall, ToolOutcome
from .tools import provider_format

__all__ = ["assistant_message", "reply_text", "tool_calls", "tool_results"]


def tool_calls(provider: str, reply: Any) -> list[ToolCall]:
    """The tool calls of a model's reply, in order."""
    return provider_format(provider).calls(reply)


def assistant_message(provider: str, reply: Any) -> Any:
    """The reply as the message that goes back into the conversation."""
    return provider_format(provider).assistant(reply)


def reply_text(provider: str, reply: Any) -> str:
    """What the model said in its reply, besides its tool calls."""
    return provider_format(provider).text(reply)


def tool_results(provider: str, outcomes: Sequence[ToolOutcome]) -> list[dict[str, Any]]:
    """The messages that answer the calls, from their outcomes in call order."""
    fmt = provider_format(provider)
    return fmt.messages([fmt.result(outcome) for outcome in outcomes])
