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

``probe_tools`` is how many of the callable tools also get the invalid-input
probe (``feature_probes.py``); the validation check needs one, more only cost
time.
"""

from __future__ import annotations

from typing import Final, Literal

import attrs

from ..._sansio import schema as s
from ..values import invalid_arguments

CallTools = Literal["none", "read-only", "all"]
CALL_TOOLS: Final[tuple[str, ...]] = ("none", "read-only", "all")


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
        if self.call_tools == "all":
            return "no tool was called"
        return "no tool is annotated readOnlyHint" + ("" if self.open_world else " without openWorldHint")

    def probe_targets(self, tools: list[s.Tool]) -> list[s.Tool]:
        """The first ``probe_tools`` callable tools that have a required property to get wrong."""
        found = [t for t in tools if self.allows(t) and invalid_arguments(t.input_schema) is not None]
        return found[: self.probe_tools]
