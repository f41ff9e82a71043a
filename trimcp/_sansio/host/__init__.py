"""Pure host logic: what an agent decides about its servers and their tools without I/O.

Theory of operation
-------------------
Spec "Server features / Tools".  ``naming`` gives every (server, tool) pair a name a
model API accepts and maps it back; ``classify`` sorts tools into search, read and
write and plans a batch; ``truncation`` (with ``shrink``) fits a result into a token
limit without breaking its JSON or tables; ``backoff`` says how long to wait before
connecting to a failed server again.  No I/O, no clock: ``trimcp.host`` wraps
these for a pool of live sessions.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .classify import ToolKind as ToolKind
    from .classify import ToolTraits as ToolTraits
    from .classify import classify_tool as classify_tool
    from .classify import plan_batch as plan_batch
    from .classify import snake_case as snake_case
    from .classify import tool_traits as tool_traits
    from .naming import NameTable as NameTable
    from .naming import cap_description as cap_description
    from .naming import mcp_tool_name as mcp_tool_name
    from .naming import normalize_name as normalize_name
    from .naming import unique_tool_name as unique_tool_name
    from .shrink import shrink_json as shrink_json
    from .shrink import shrink_text as shrink_text
    from .truncation import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
    from .truncation import ImageHook as ImageHook
    from .truncation import TruncationPlan as TruncationPlan
    from .truncation import estimate_tokens as estimate_tokens
    from .truncation import notice_text as notice_text
    from .truncation import plan_truncation as plan_truncation
    from .truncation import truncate_result as truncate_result

#: Lazy export -> the submodule defining it (PEP 562): a form check does not build the
#: truncation planner and the schema classes it reads (the CLI's cold start).
_LAZY: dict[str, str] = {
    "ToolKind": ".classify",
    "ToolTraits": ".classify",
    "classify_tool": ".classify",
    "plan_batch": ".classify",
    "snake_case": ".classify",
    "tool_traits": ".classify",
    "NameTable": ".naming",
    "cap_description": ".naming",
    "mcp_tool_name": ".naming",
    "normalize_name": ".naming",
    "unique_tool_name": ".naming",
    "shrink_json": ".shrink",
    "shrink_text": ".shrink",
    "DEFAULT_MAX_TOKENS": ".truncation",
    "ImageHook": ".truncation",
    "TruncationPlan": ".truncation",
    "estimate_tokens": ".truncation",
    "notice_text": ".truncation",
    "plan_truncation": ".truncation",
    "truncate_result": ".truncation",
}


def __getattr__(name: str) -> Any:
    """Import a lazy export's submodule on first use and cache the name here."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "ImageHook",
    "NameTable",
    "ToolKind",
    "ToolTraits",
    "TruncationPlan",
    "cap_description",
    "classify_tool",
    "estimate_tokens",
    "mcp_tool_name",
    "normalize_name",
    "notice_text",
    "plan_batch",
    "plan_truncation",
    "shrink_json",
    "shrink_text",
    "snake_case",
    "tool_traits",
    "truncate_result",
    "unique_tool_name",
]
