"""Checking tool arguments (and structured output) against a JSON Schema.

Theory of operation
-------------------
A tool declares ``inputSchema`` (and, from 2025-06-18, ``outputSchema``); the
server checks what arrives before calling the tool and what the tool returns
before sending it ("Servers MUST validate all tool inputs").  The ``jsonschema``
library does the work (every keyword, every draft, chosen by ``$schema``; 2020-12
when absent, as 2025-11-25 asks), through ``trimcp._sansio.bounded.schemas``: the
schema is the tool author's, but the arguments are a client's, and a pattern as
ordinary as ``^(\\w+\\s?)*$`` backtracks for minutes on a crafted string.  So
patterns run in RE2, the work is budgeted and runs off the event loop when it is
large (``trimcp._trio.offload``).  Arguments too costly to check are refused (the
MUST); a pattern RE2 cannot run is logged once and not enforced.  Arguments a
plain schema (types, properties, required: ``_sansio/bounded/plain.py``) certainly
accepts skip the validator: it only ever runs to find and word the errors.

A schema that jsonschema itself cannot use is treated as accepting anything:
a tool author's schema mistake must not make every call fail.  Each schema is
read once (per schema object, while the tool is registered).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from .._trio import offload

if TYPE_CHECKING:
    from .._sansio.bounded.schemas import BoundedSchema

_MAX_PROBLEMS: Final = 10
#: Schemas kept read (a server has a bounded set of tools; a dynamic one may churn).
_MAX_CACHED: Final = 256

logger = logging.getLogger("trimcp.server")

# id(schema) -> (schema, its reading): the schema is kept so that its id is not reused.
_read: dict[int, tuple[Any, BoundedSchema]] = {}
_warned: set[int] = set()


async def _reading(schema: dict[str, Any]) -> BoundedSchema:
    found = _read.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    reading = await offload.read_schema(schema)
    if reading.problem is not None:
        logger.warning("cannot validate against schema: %s", reading.problem)
    if len(_read) >= _MAX_CACHED:
        del _read[next(iter(_read))]
    _read[id(schema)] = (schema, reading)
    return reading


async def validate(value: Any, schema: Any, *, trusted: bool = False) -> list[str]:
    """Problems with ``value`` under ``schema`` (empty when valid).

    ``trusted`` (the tool's own output): a value too costly to check in full is logged
    and let through instead of refused."""
    if not isinstance(schema, dict):
        return []  # ``true``-like schemas accept anything
    reading = await _reading(schema)
    if reading.problem is not None:
        return []
    if reading.plain is not None and reading.plain(value):
        return []  # certainly valid (a plain schema, ``bounded/plain.py``): no validator run
    verdict = await offload.validate(reading, value, max_errors=_MAX_PROBLEMS)
    if verdict.unchecked and id(schema) not in _warned:
        if len(_warned) >= _MAX_CACHED:
            _warned.clear()
        _warned.add(id(schema))
        logger.warning("schema not fully enforced: %s", "; ".join(verdict.unchecked))
    problems = []
    for error in verdict.errors:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        problems.append(f"{where.lstrip('.') or 'arguments'}: {error.message}")
    if verdict.exhausted and not problems:
        costly = f"too costly to validate (over {offload.THREAD_UNITS} work units)"
        if not trusted:
            problems.append(costly)
        else:
            logger.warning("tool output not checked in full: %s", costly)
    return problems
