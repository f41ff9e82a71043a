"""Evaluating a peer's schema without stalling the event loop.

Theory of operation
-------------------
``trimcp._sansio.bounded`` bounds the *work* a peer's schema can cost; this module
bounds how much of it the event loop carries.  Each evaluation first runs inline with
``INLINE_UNITS`` (a few milliseconds of CPU: the common small result costs no thread
hop); if that budget runs out, it runs again from the start in a worker thread with
the full budget (``THREAD_UNITS`` by default, about a second and a half).  Cancelling
the caller abandons the thread, whose own budget then ends it.

Two lanes keep the loop's stall bounded however many servers answer at once:

* the *inline lane*, one evaluation at a time per run: each waits its turn behind a
  ``trio.StrictFIFOLock``, whose hand-over reschedules the next one, so between two
  evaluations every other ready task runs.  Without it twenty results arriving in one
  scheduling batch would run twenty inline budgets back to back;
* the *thread lane*, one worker thread at a time per run (``trio.CapacityLimiter(1)``):
  a worker running Python code takes the GIL from the loop thread for up to a switch
  interval (5 ms) at a time, and two CPU-bound workers on a two-core machine starve
  the loop thread of both the GIL and a core.  Validations past the inline budget are
  a safety valve, not a throughput feature: they queue.

So the loop's longest stall on any schema is one inline budget plus one switch interval,
and a hostile schema costs at most one full budget per call.  Under trio's
``MockClock`` (a test's virtual time) nothing goes to a thread: a stall costs no
virtual time there, but an autojumping clock would jump to the next deadline while
the loop waited for the worker, and a caller's timeouts would fire at once.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import trio

from .._sansio.bounded.budget import WorkBudget

if TYPE_CHECKING:
    from .._sansio.bounded.schemas import BoundedSchema, Verdict

__all__ = ["INLINE_UNITS", "THREAD_UNITS", "read_schema", "validate"]

#: Units an evaluation may spend on the event loop before it moves to a thread.
INLINE_UNITS: Final = 5_000
#: Units a validation may spend in all (in a worker thread past ``INLINE_UNITS``).
THREAD_UNITS: Final = 1_000_000

T = TypeVar("T")

_INLINE_LANE: Final[trio.lowlevel.RunVar[trio.StrictFIFOLock]] = trio.lowlevel.RunVar("trimcp_inline_lane")
_THREAD_LANE: Final[trio.lowlevel.RunVar[trio.CapacityLimiter]] = trio.lowlevel.RunVar("trimcp_thread_lane")


def _lanes() -> tuple[trio.StrictFIFOLock, trio.CapacityLimiter]:
    try:
        return _INLINE_LANE.get(), _THREAD_LANE.get()
    except LookupError:
        inline, thread = trio.StrictFIFOLock(), trio.CapacityLimiter(1)
        _INLINE_LANE.set(inline)
        _THREAD_LANE.set(thread)
        return inline, thread


def _virtual_time() -> bool:
    """Whether the run's clock is trio's ``MockClock`` (a test's, often autojumping).

    ``trio.testing`` is not imported here (it imports pytest when installed, a tenth of a
    second): a run whose clock is a MockClock has imported it already."""
    testing = sys.modules.get("trio.testing")
    return testing is not None and isinstance(trio.lowlevel.current_clock(), testing.MockClock)


async def _inline_then_thread(run: Callable[[WorkBudget], T], exhausted: Callable[[T], bool], units: int) -> T:
    inline, thread = _lanes()
    # Under a virtual clock a stall costs no time, while waiting for a thread lets an
    # autojumping clock run ahead to the next deadline: everything stays inline there.
    first = units if _virtual_time() else min(INLINE_UNITS, units)
    async with inline:
        result = run(WorkBudget(first))
    if first == units or not exhausted(result):
        return result
    return await trio.to_thread.run_sync(
        functools.partial(run, WorkBudget(units)), abandon_on_cancel=True, limiter=thread
    )


async def read_schema(schema: Any, *, formats: bool = False, units: int | None = None) -> BoundedSchema:
    """``BoundedSchema(schema)``, read inline or, when it is large, in a worker thread
    (``units`` default: ``schemas.READ_UNITS``)."""
    # jsonschema (with referencing and rpds) is the heaviest import of the host and the
    # server: paid once by the first schema (tens of milliseconds, on the loop: a thread
    # would let a test's autojump clock run ahead), not by importing this module.
    from .._sansio.bounded import schemas

    return await _inline_then_thread(
        lambda budget: schemas.BoundedSchema(schema, formats=formats, budget=budget),
        lambda read: read.exhausted,
        schemas.READ_UNITS if units is None else units,
    )


async def validate(schema: BoundedSchema, instance: Any, *, units: int = THREAD_UNITS, max_errors: int = 50) -> Verdict:
    """``schema.validate(instance)`` with at most ``units``, inline or in a worker thread."""
    return await _inline_then_thread(
        lambda budget: schema.validate(instance, budget, max_errors=max_errors),
        lambda verdict: verdict.exhausted,
        units,
    )
