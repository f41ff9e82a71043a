"""Bounded evaluation of what a peer sends: work budgets, regular expressions, schemas, echoes.

Theory of operation
-------------------
DESIGN.md's rule "every peer is a stranger": a schema or a pattern that a server (or
a client) sends is data we evaluate, and evaluating it must cost a bounded amount of
work whatever its author intended.  This package holds the pieces every layer shares:

* ``budget``: ``WorkBudget``, a count of abstract work units that evaluation spends
  and that raises ``BudgetExhausted`` when it runs out.  Units, not seconds: the core
  has no clock, and a count is deterministic (a test reproduces an exhaustion
  exactly).  A unit is calibrated to about a microsecond of CPU.
* ``patterns``: ``PeerPattern``, an ECMA-262 pattern (JSON Schema's dialect) run by
  RE2, a linear-time engine, with caps on the pattern and charges for the input; a
  pattern RE2 cannot run (lookaround, backreferences) is *not enforced*, with the
  reason, never handed to a backtracking engine.
* ``schemas``: ``BoundedSchema``, a ``jsonschema`` validator whose regex keywords go
  through ``PeerPattern``, whose every keyword application is charged to a budget,
  and which never fetches a remote ``$ref``.
* ``echo``: ``quote``, how a peer's value appears in an exception or a log line:
  truncated, control characters escaped.
"""
