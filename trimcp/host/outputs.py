"""Checking a tool's ``structuredContent`` against its ``outputSchema``, in the client.

Theory of operation
-------------------
Spec 2025-06-18 "Server features / Tools", section "Output Schema": "Tools may also
provide an output schema for validation of structured results.  If an output schema
is provided: Servers MUST provide structured results that conform to this schema.
Clients SHOULD validate structured results against this schema."  So, for a tool
whose cached ``Tool`` has an ``outputSchema``:

* a result with ``isError`` is never checked (an error result describes the failure,
  not the output the schema is about);
* a result without ``structuredContent`` is a mismatch (the MUST above: a structured
  result is owed);
* otherwise ``structuredContent`` is validated with ``jsonschema`` under the draft the
  schema names in ``$schema`` (2020-12 when it names none or one jsonschema does not
  know), through ``trimcp._sansio.bounded.schemas``: the server wrote the schema, so
  its patterns run in RE2, its remote ``$ref`` are never fetched and its work is
  budgeted, inline first and then in a worker thread (``trimcp._trio.offload``), so
  no schema stalls the event loop.  What could not be enforced (a pattern RE2 cannot
  run, a result too costly to check) is logged once per (server, tool).

The schema comes from the pool's cached tool list (``slot.lists["tools"]``, filled on
connect and refreshed on ``list_changed``): a check never sends ``tools/list``.  An
``OutputChecker`` keeps, per server, the tuple that list was when it last looked,
that list's tools by name and the validators compiled from it; a new tuple (the list
changed, or the server reconnected) drops them all, so a validator is compiled once
per (server, tool, schema) and never outlives the schema it was made from.

What a mismatch does is the caller's choice (``validate_output``): ``"warn"`` logs
once per (server, tool) and returns the result, ``"raise"`` raises
``OutputValidationError`` with the JSON path and the message, ``"ignore"`` checks
nothing.  A schema that cannot be used is logged once and treated as accepting
anything: the server's mistake must not make every call fail.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from .._errors import TrimcpError
from .._sansio import schema as s
from .._trio import offload

if TYPE_CHECKING:
    from .._sansio.bounded.schemas import BoundedSchema

__all__ = ["OutputChecker", "OutputValidationError", "ValidateOutput", "json_path"]

logger = logging.getLogger("trimcp.host")

ValidateOutput = Literal["warn", "raise", "ignore"]
VALIDATE_OUTPUT_MODES: Final = ("warn", "raise", "ignore")


class OutputValidationError(TrimcpError):
    """A tool's result does not match its ``outputSchema``.

    ``path`` is where (a JSON path, ``$`` for the whole ``structuredContent``), ``reason``
    what is wrong there, ``result`` the ``CallToolResult`` as received.
    """

    def __init__(self, server: str, tool: str, path: str, reason: str, result: s.CallToolResult) -> None:
        super().__init__(f"tool {tool!r} of server {server!r}: output breaks its outputSchema at {path}: {reason}")
        self.server = server
        self.tool = tool
        self.path = path
        self.reason = reason
        self.result = result


def check_mode(mode: str) -> ValidateOutput:
    if mode not in VALIDATE_OUTPUT_MODES:
        raise ValueError(f"validate_output must be one of {VALIDATE_OUTPUT_MODES}, not {mode!r}")
    return mode  # type: ignore[return-value]


_PLAIN_KEY: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def json_path(parts: Any) -> str:
    """``$.a[0].b`` for jsonschema's ``absolute_path`` deque ``['a', 0, 'b']``; a key that
    is not a plain identifier is quoted (``$["a.b"]``) so the path stays unambiguous."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


@attrs.define
class _ServerCache:
    tools: tuple[s.Tool, ...]
    by_name: dict[str, s.Tool]
    validators: dict[str, BoundedSchema] = attrs.field(factory=dict)


class OutputChecker:
    """The pool's validators, per server and tool, keyed by the cached list they came from."""

    def __init__(self) -> None:
        self._servers: dict[str, _ServerCache] = {}
        #: (server, tool) pairs already warned about, so a bad tool logs once.
        self._warned: set[tuple[str, str]] = set()
        #: How many validators were compiled (the tests count them).
        self.compiled = 0

    def _cache(self, server: str, tools: tuple[s.Tool, ...]) -> _ServerCache:
        cache = self._servers.get(server)
        if cache is None or cache.tools is not tools:
            cache = self._servers[server] = _ServerCache(tools, {t.name: t for t in tools})
        return cache

    def forget(self, server: str) -> None:
        self._servers.pop(server, None)

    async def _validator(self, server: str, cache: _ServerCache, tool: str, schema: dict[str, Any]) -> BoundedSchema:
        found = cache.validators.get(tool)
        if found is not None:
            return found
        validator = await offload.read_schema(schema)
        if validator.problem is None:
            self.compiled += 1
        else:
            self._warn_once(
                server,
                tool,
                "outputSchema of tool %r of server %r is unusable, not checked: %s",
                tool,
                server,
                validator.problem,
            )
        cache.validators[tool] = validator
        return validator

    def _warn_once(self, server: str, tool: str, message: str, *args: Any) -> None:
        if (server, tool) not in self._warned:
            self._warned.add((server, tool))
            logger.warning(message, *args)

    async def problem(
        self, server: str, tools: tuple[s.Tool, ...] | None, tool: str, result: s.CallToolResult
    ) -> tuple[str, str] | None:
        """``(path, reason)`` of the first mismatch of ``result``, or ``None`` (it matches, or
        there is nothing to check against: no cached list, no such tool, no schema, or a
        schema that cannot be used)."""
        if tools is None or result.is_error:
            return None
        cache = self._cache(server, tools)
        known = cache.by_name.get(tool)
        if known is None or known.output_schema is None:
            return None
        validator = await self._validator(server, cache, tool, known.output_schema)
        if validator.problem is not None:
            return None
        if result.structured_content is None:
            return "$", "the tool has an outputSchema but the result has no structuredContent"
        verdict = await offload.validate(validator, result.structured_content)
        if verdict.unchecked or verdict.exhausted:
            left = list(verdict.unchecked) + (
                [f"the result was not checked in full (over {offload.THREAD_UNITS} work units)"]
                if verdict.exhausted
                else []
            )
            self._warn_once(
                server,
                tool,
                "outputSchema of tool %r of server %r not fully enforced: %s",
                tool,
                server,
                "; ".join(left),
            )
        error = verdict.best()
        if error is None:
            return None
        return json_path(error.absolute_path), error.message

    async def check(
        self,
        server: str,
        tools: tuple[s.Tool, ...] | None,
        tool: str,
        result: s.CallToolResult,
        mode: ValidateOutput,
    ) -> s.CallToolResult:
        """``result``, once checked as ``mode`` says (see the module docstring)."""
        if mode == "ignore":
            return result
        found = await self.problem(server, tools, tool, result)
        if found is None:
            return result
        path, reason = found
        if mode == "raise":
            raise OutputValidationError(server, tool, path, reason, result)
        self._warn_once(
            server, tool, "tool %r of server %r: output breaks its outputSchema at %s: %s", tool, server, path, reason
        )
        return result
