"""``_meta`` key names, read off the recorded conversations.

Theory of operation
-------------------
The ``basic`` page (General fields, ``_meta``, from 2025-06-18) gives every
``_meta`` key an optional prefix and a name: the prefix "MUST be a series of
labels separated by dots (.), followed by a slash (/)", each label starting
with a letter and ending with a letter or digit (hyphens inside), and the
name, "Unless empty, MUST begin and end with an alphanumeric character"
(hyphens, underscores, dots and alphanumerics between); 2026-07-28 adds that
``traceparent`` follows W3C Trace Context (its format is checked; ``tracestate``
and ``baggage`` are not).  Every ``_meta``
object anywhere in a message the server sent (results, notifications, its
own requests, nested content items) is checked; none seen: ``skip``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from ..._sansio import jsonrpc as rpc
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results

CHECK: Final = "meta.key-names"
_LABEL: Final = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?")
#: W3C Trace Context, version-traceid-parentid-flags (lowercase hex).
_TRACEPARENT: Final = re.compile(r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")
_NAME: Final = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")


def key_problem(key: str) -> str | None:
    """Why ``key`` is no valid ``_meta`` key name, or ``None``."""
    prefix, slash, name = key.rpartition("/")
    if slash:
        labels = prefix.split(".")
        if not all(_LABEL.fullmatch(label) for label in labels):
            return f"_meta key {key!r}: the prefix {prefix + '/'!r} is not dot-separated labels"
    if not _NAME.fullmatch(name):
        return f"_meta key {key!r}: the name {name!r} must begin and end with a letter or digit"
    return None


def _metas(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "_meta" and isinstance(item, dict):
                yield item
            yield from _metas(item)
    elif isinstance(value, list):
        for item in value:
            yield from _metas(item)


def check_meta_keys(rec: Results, recordings: list[RecordingStream]) -> None:
    seen = 0
    for recording in recordings:
        for _, msg in recording.messages():
            for meta in _metas(rpc.message_to_obj(msg)):
                for key, value in meta.items():
                    seen += 1
                    problem = key_problem(key)
                    if key == "traceparent" and not (isinstance(value, str) and _TRACEPARENT.fullmatch(value)):
                        problem = f"_meta traceparent {value!r} is no W3C Trace Context traceparent"
                    if problem is not None:
                        rec.fail(CHECK, problem, [received(msg)])
                        return
    if seen:
        rec.ok(CHECK, f"{seen} _meta keys")
    else:
        rec.skip(CHECK, "the server sent no _meta keys")
