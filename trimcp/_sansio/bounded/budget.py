"""A budget of work units for evaluating something a peer sent.

Theory of operation
-------------------
Evaluation that a peer can make expensive (a schema that fans out through ``$ref``,
a pattern matched against a long string) spends units from a ``WorkBudget`` as it
goes; the spend that would take the total past the limit raises ``BudgetExhausted``
instead, so evaluation stops within one charge of its limit.  The caller decides what
an exhausted budget means: "not checked" for a validator, a retry off the event loop
with a larger budget for the host.

A unit is about a microsecond of CPU on a current core (``bounded/__init__``); the
charges are estimates of cost, not timings, so the same input always spends the same
units.
"""

from __future__ import annotations

from ..._errors import TrimcpError

__all__ = ["BudgetExhausted", "WorkBudget"]


class BudgetExhausted(TrimcpError):
    """The work budget ran out before the evaluation finished."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the work budget of {limit} units ran out")
        self.limit = limit


class WorkBudget:
    """``limit`` units to spend; ``spend`` raises ``BudgetExhausted`` past it."""

    __slots__ = ("limit", "spent")

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("a work budget cannot be negative")
        self.limit = limit
        self.spent = 0

    def spend(self, units: int) -> None:
        spent = self.spent + units
        if spent > self.limit:
            self.spent = self.limit
            raise BudgetExhausted(self.limit)
        self.spent = spent

    @property
    def remaining(self) -> int:
        return self.limit - self.spent

    def __repr__(self) -> str:
        return f"WorkBudget(spent={self.spent}, limit={self.limit})"
