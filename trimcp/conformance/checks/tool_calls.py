"""Which tools ``trimcp check`` may call: the tool-calling policy.

Theory of operation
-------------------
Spec: ``server/tools`` (tool annotations: ``readOnlyHint``, ``openWorldHint``;
clients "MUST consider tool annotations to be untrusted unless they come from
trusted servers").  Calling a tool can change the server's world, so the
harness calls only what the user allowed:

* ``call_tools="none"``: no tool is called;
* ``"read-only"`` (the default): tools annotated ``readOnlyHint: true``, and
  with ``open_world=False`` not those annotated ``openWorldHint: true`` (they
  reach outside systems: the network, third-party services);
* ``"all"``: every tool, annotated read-only or not: the user's choice, on a
  server they know to be safe to exercise.

``probe_tools`` (``--probe-tools N``) is how many valid example argument sets
each callable tool is called with (``values.example_argument_sets``: the
minimal one first, then fuller ones), so that ``tools.structured-output`` and
the progress check judge the tool on more than one input; 0 calls nothing.
Every callable tool with a required property also gets the invalid-input
probe (``feature_probes.py``), at most ``MAX_INVALID_PROBES`` of them.

A tool whose ``execution.taskSupport`` is ``required`` is not called without a
task (a correct server refuses that with -32601, server/tools): the tasks
checks exercise it.

``call_outcome`` sorts one answered call: ``success``, ``is-error``, or
``error-text`` - no ``isError`` but a text that only says something failed
("fetch failed").  Tool execution errors are "reported in tool results with
``isError: true``" (server/tools), so such a text is no failure to blame on
the server either, but it is no evidence that the call worked: it never counts
as a success (the call and input-validation checks skip on it).
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

import attrs

from ..._sansio import schema as s
from ..values import example_argument_sets, invalid_arguments

CallTools = Literal["none", "read-only", "all"]
CALL_TOOLS: Final[tuple[str, ...]] = ("none", "read-only", "all")
#: How many tools get the invalid-argument probe at most (each is one request on the probe connection).
MAX_INVALID_PROBES: Final = 20


@attrs.frozen
class ToolPolicy:
    call_tools: CallTools = "read-only"
    probe_tools: int = 1
    open_world: bool = True

    def __attrs_post_init__(self) -> None:
        if self.call_tools not in CALL_TOOLS:
            raise ValueError(f"call_tools must be one of {', '.join(CALL_TOOLS)}, not {self.call_tools!r}")
        if self.probe_tools < 0:
            raise ValueError("probe_tools must be 0 or more")

    def allows(self, tool: s.Tool) -> bool:
        if self.call_tools == "none":
            return False
        if self.call_tools == "all":
            return True
        hints = tool.annotations
        if hints is None or not hints.read_only_hint:
            return False
        # openWorldHint defaults to true when absent (schema: ToolAnnotations).
        return self.open_world or hints.open_world_hint is False

    def describe(self) -> str:
        if self.call_tools == "none":
            return "--call-tools none: no tool is called"
        if self.probe_tools == 0:
            return "--probe-tools 0: no tool is called"
        if self.call_tools == "all":
            return "no tool was called"
        return "no tool is annotated readOnlyHint" + ("" if self.open_world else " without openWorldHint")

    def examples(self, tool: s.Tool) -> list[dict[str, Any]]:
        """The argument sets to call ``tool`` with (empty: none can be invented)."""
        return example_argument_sets(tool.input_schema, self.probe_tools)

    def probe_targets(self, tools: list[s.Tool]) -> list[s.Tool]:
        """The callable tools that have a required property to get wrong (at most ``MAX_INVALID_PROBES``)."""
        if self.probe_tools == 0:
            return []
        found = [
            t
            for t in tools
            if self.allows(t) and not requires_task(t) and invalid_arguments(t.input_schema) is not None
        ]
        return found[:MAX_INVALID_PROBES]


def requires_task(tool: s.Tool) -> bool:
    """``execution.taskSupport: required``: the tool may only be called as a task (2025-11-25)."""
    if tool.execution is not None:
        return tool.execution.task_support == "required"
    raw = tool.extra.get("execution")  # (2026-07-28: the tasks extension's field, kept raw)
    return isinstance(raw, dict) and raw.get("taskSupport") == "required"


CallOutcome = Literal["success", "is-error", "error-text"]
#: A result text that reports a failure and nothing else (short, and it says so up front).
_ERROR_TEXT = re.compile(
    r"^\W*(error|failed|failure|exception|traceback|fetch failed|an error occurred|internal error)\b"
    r"|\b(fetch failed|failed to \w+|an error occurred|traceback \(most recent call last\))",
    re.IGNORECASE,
)
_ERROR_TEXT_MAX = 500


def call_outcome(result: dict[str, Any]) -> CallOutcome:
    """How one ``tools/call`` result (raw) ended: see the module docstring."""
    if result.get("isError") is True:
        return "is-error"
    if result.get("structuredContent") is not None:
        return "success"
    content = result.get("content")
    texts = [b.get("text") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if texts and all(isinstance(x, str) for x in texts):
        text = "\n".join(texts)  # type: ignore[arg-type]
        if len(text) <= _ERROR_TEXT_MAX and _ERROR_TEXT.search(text):
            return "error-text"
    return "success"
