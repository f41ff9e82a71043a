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
  know).

The schema comes from the pool's cached tool list (``slot.lists["tools"]``, filled on
connect and refreshed on ``list_changed``): a check never sends ``tools/list``.  An
``OutputChecker`` keeps, per server, the tuple that list was when it last looked,
that list's tools by name and the validators compiled from it; a new tuple (the list
changed, or the server reconnected) drops them all, so a validator is compiled once
per (server, tool, schema) and never outlives the schema it was made from.

What a mismatch does is the caller's choice (``validate_output``): ``"warn"`` logs
once per (server, tool) and returns the result, ``"raise"`` raises
``OutputValidationError`` with the JSON path and the message, ``"ignore"`` checks
nothing.  A schema jsonschema cannot use is logged once and treated as accepting
anything: the server's mistake must not make every call fail.
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from typing import Any, Final, Literal

import attrs

from .._errors import TrimcpError
from .._sansio import schema as s

__all__ = ["OutputChecker", "OutputValidationError", "ValidateOutput", "json_path"]

logger = logging.getLogger("trimcp.host")

ValidateOutput = Literal["warn", "raise", "ignore"]
VALIDATE_OUTPUT_MODES: Final = ("warn", "raise", "ignore")
#: Stands in the validator cache for a schema that could not be compiled.
_UNUSABLE: Final = object()


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
    validators: dict[str, Any] = attrs.field(factory=dict)


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

    def _validator(self, server: str, cache: _ServerCache, tool: str, schema: dict[str, Any]) -> Any:
        found = cache.validators.get(tool)
        if found is not None:
            return found
        # jsonschema (with referencing and rpds) costs more to import than the rest of the
        # host package: paid by the first tool that has an outputSchema, not by the import.
        import jsonschema.exceptions

        try:
            with warnings.catch_warnings():
                # jsonschema warns (DeprecationWarning) about a $schema it does not know,
                # then uses the default: that default is what we want, quietly.
                warnings.simplefilter("ignore", DeprecationWarning)
                cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            validator: Any = cls(schema)
            self.compiled += 1
        except (jsonschema.exceptions.SchemaError, TypeError, ValueError) as exc:
            self._warn_once(server, tool, "outputSchema of tool %r of server %r is unusable, not checked: %s",
                            tool, server, exc)
            validator = _UNUSABLE
        cache.validators[tool] = validator
        return validator

    def _warn_once(self, server: str, tool: str, message: str, *args: Any) -> None:
        if (server, tool) not in self._warned:
            self._warned.add((server, tool))
            logger.warning(message, *args)

    def problem(
        self, server: str, tools: tuple[s.Tool, ...] | None, tool: str, result: s.CallToolResult
    ) -> tuple[str, str] | None:
        """``(path, reason)`` of the first mismatch of ``result``, or ``None`` (it matches, or
        there is nothing to check against: no cached list, no such tool, no schema)."""
        if tools is None or result.is_error:
            return None
        cache = self._cache(server, tools)
        known = cache.by_name.get(tool)
        if known is None or known.output_schema is None:
            return None
        validator = self._validator(server, cache, tool, known.output_schema)
        if validator is _UNUSABLE:
            return None
        if result.structured_content is None:
            return "$", "the tool has an outputSchema but the result has no structuredContent"
        import jsonschema.exceptions  # loaded by _validator above: a dict hit

        error = jsonschema.exceptions.best_match(validator.iter_errors(result.structured_content))
        if error is None:
            return None
        return json_path(error.absolute_path), error.message

    def check(
        self, server: str, tools: tuple[s.Tool, ...] | None, tool: str, result: s.CallToolResult,
        mode: ValidateOutput,
    ) -> s.CallToolResult:
        """``result``, once checked as ``mode`` says (see the module docstring)."""
        if mode == "ignore":
            return result
        found = self.problem(server, tools, tool, result)
        if found is None:
            return result
        path, reason = found
        if mode == "raise":
            raise OutputValidationError(server, tool, path, reason, result)
        self._warn_once(server, tool, "tool %r of server %r: output breaks its outputSchema at %s: %s",
                        tool, server, path, reason)
        return result

