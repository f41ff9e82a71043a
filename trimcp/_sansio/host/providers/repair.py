"""Mapping a model's arguments back to what the server's schema expects.

Theory of operation
-------------------
Two reshapings change what the model sends, not only what it is told:

* OpenAI's strict mode lists every property in ``required``; an optional property becomes
  nullable, and the model sends ``null`` for one it leaves out.  The server's schema may
  not accept ``null`` there (``{"type": "string"}``, optional), so each ``null`` the
  reshaping introduced is removed again.  ``NullPlan`` is a tree that follows the schema:
  for an object, per property, whether its ``null`` was introduced and the plan below it;
  for an array, the plan of its items; for an ``anyOf``, a plan per alternative (the first
  object alternative whose keys cover the value's is applied).  A ``null`` the server's
  schema allowed is left alone: it may mean something there.
* a top-level property name a provider refuses (Anthropic and Gemini each have a pattern)
  is sent under another name; ``renamed`` maps it back.

``Repair.apply(arguments)`` does both (names first: the plan uses the server's), on a copy; arguments that are not an object are
returned as they are (the server answers them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = ["NullPlan", "Repair"]


@attrs.frozen
class NullPlan:
    """Where strict mode introduced ``null`` (see the module docstring)."""

    properties: Mapping[str, tuple[bool, NullPlan | None]] = attrs.field(factory=dict)
    items: NullPlan | None = None
    branches: tuple[NullPlan | None, ...] = ()

    @staticmethod
    def of_properties(plans: Mapping[str, tuple[bool, NullPlan | None]]) -> NullPlan | None:
        return NullPlan(properties=dict(plans)) if plans else None

    @staticmethod
    def of_items(plan: NullPlan | None) -> NullPlan | None:
        return NullPlan(items=plan) if plan is not None else None

    @staticmethod
    def of_branches(plans: Sequence[NullPlan | None]) -> NullPlan | None:
        return NullPlan(branches=tuple(plans)) if any(p is not None for p in plans) else None

    def apply(self, value: Any) -> Any:
        if isinstance(value, list) and self.items is not None:
            return [self.items.apply(v) for v in value]
        if not isinstance(value, dict):
            return value
        if self.branches:
            for branch in self.branches:
                if branch is not None and branch.properties and set(value) <= set(branch.properties):
                    return branch.apply(value)
            return value
        out = {}
        for key, sub in value.items():
            introduced, below = self.properties.get(key, (False, None))
            if sub is None and introduced:
                continue
            out[key] = below.apply(sub) if below is not None else sub
        return out


@attrs.frozen
class Repair:
    """What turns the model's arguments for one tool back into the server's."""

    nulls: NullPlan | None = None
    #: Provider-facing top-level name -> the server's.
    renamed: Mapping[str, str] = attrs.field(factory=dict)

    def __bool__(self) -> bool:
        return self.nulls is not None or bool(self.renamed)

    def apply(self, arguments: Any) -> Any:
        if not isinstance(arguments, dict):
            return arguments
        # The plan was made on the server's names: rename first.
        out = {self.renamed.get(k, k): v for k, v in arguments.items()}
        return self.nulls.apply(out) if self.nulls is not None else out
