"""Running a batch of tool calls: reads together, writes alone and in order.

Theory of operation
-------------------
A model often asks for several tool calls in one turn.  ``plan_batch`` (pure,
``_sansio/host/classify.py``) cuts the list into groups: consecutive non-writes form
one group, each write is a group of its own.  ``run_batch`` runs the groups one after
another; inside a read group the calls run concurrently under a ``CapacityLimiter``
of ``max_concurrency``.  So a write starts only once every call before it has ended,
and nothing after it starts before it ends: writes keep their order relative to
everything, while reads between two writes overlap.

What is read and what is a write comes from the tool's class (search / read / write:
``readOnlyHint`` and ``destructiveHint`` first, the name otherwise; see
``classify.py``).  A name the pool does not know never runs, so it cannot conflict:
it joins the reads and its outcome is its ``UnknownTool``.

Every call ends as a ``BatchOutcome`` in call order: its ``result`` (a
``CallToolResult``, which may itself carry ``isError``: the tool ran and failed) or its
``error`` (the exception the call raised: ``McpError``, a transport error,
``OutputValidationError``...).  One failed call never loses the others.  Cancellation
is not an outcome: it cancels the whole batch, as it should.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs
import trio

from .._sansio import schema as s
from .._sansio.host.classify import ToolKind, plan_batch

__all__ = ["BatchOutcome", "run_batch"]

#: A call as the batch takes it: the model-facing name and the arguments.
Call = tuple[str, Mapping[str, Any] | None]


@attrs.frozen
class BatchOutcome:
    """How one call of a batch ended: exactly one of ``result`` and ``error`` is set."""

    name: str
    result: s.CallToolResult | None = None
    error: Exception | None = None

    @property
    def ok(self) -> bool:
        """The call returned a result (``result.is_error`` may still say the tool failed)."""
        return self.error is None

    def unwrap(self) -> s.CallToolResult:
        """The result, or the call's exception raised."""
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


async def run_batch(
    calls: Sequence[Call],
    kinds: Sequence[ToolKind],
    call: Callable[[str, Mapping[str, Any] | None], Awaitable[s.CallToolResult]],
    *,
    max_concurrency: int = 8,
) -> list[BatchOutcome]:
    """Run ``calls`` (whose classes are ``kinds``) with ``call``; see the module docstring."""
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, not {max_concurrency}")
    if len(calls) != len(kinds):
        raise ValueError("one kind per call is needed")
    outcomes: list[BatchOutcome | None] = [None] * len(calls)
    limiter = trio.CapacityLimiter(max_concurrency)

    async def one(index: int) -> None:
        name, arguments = calls[index]
        async with limiter:
            try:
                outcomes[index] = BatchOutcome(name, result=await call(name, arguments))
            except Exception as exc:
                outcomes[index] = BatchOutcome(name, error=exc)

    for group in plan_batch(kinds):
        if len(group) == 1:
            await one(group[0])
            continue
        async with trio.open_nursery() as nursery:
            for index in group:
                nursery.start_soon(one, index)
    assert all(o is not None for o in outcomes)
    return [o for o in outcomes if o is not None]
