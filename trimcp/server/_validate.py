"""Checking tool arguments (and structured output) against a JSON Schema.

Theory of operation
-------------------
A tool declares ``inputSchema`` (and, from 2025-06-18, ``outputSchema``); the
server checks what arrives before calling the tool and what the tool returns
before sending it.  The ``jsonschema`` library does the work (every keyword,
every draft, chosen by ``$schema``; 2020-12 when absent, as 2025-11-25 asks).
A schema that jsonschema itself cannot use is treated as accepting anything:
a tool author's schema mistake must not make every call fail.
"""

from __future__ import annotations

import logging
from typing import Any, Final

_MAX_PROBLEMS: Final = 10

logger = logging.getLogger("trimcp.server")


def validate(value: Any, schema: Any) -> list[str]:
    """Problems with ``value`` under ``schema`` (empty when valid)."""
    if not isinstance(schema, dict):
        return []  # ``true``-like schemas accept anything
    # jsonschema (with referencing and rpds) is the heaviest import of the server package:
    # the first call with a schema pays it, not every server's start (a stdio spawn).
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        problems: list[str] = []
        for error in cls(schema).iter_errors(value):
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            problems.append(f"{where.lstrip('.') or 'arguments'}: {error.message}")
            if len(problems) >= _MAX_PROBLEMS:
                break
        return problems
    except Exception as exc:  # noqa: BLE001 - an unusable schema must not fail the call
        logger.warning("cannot validate against schema %r: %s", schema, exc)
        return []
