"""``_meta`` key names and the trace-context values, read off every recorded conversation.

Theory of operation
-------------------
The ``basic`` page (General fields, ``_meta``, from 2025-06-18) gives every
``_meta`` key an optional prefix and a name: the prefix "MUST be a series of
labels separated by dots (.), followed by a slash (/)", each label starting
with a letter and ending with a letter or digit (hyphens inside), and the
name, "Unless empty, MUST begin and end with an alphanumeric character"
(hyphens, underscores, dots and alphanumerics between).  2026-07-28 reserves
``traceparent``, ``tracestate`` and ``baggage``, whose values "MUST follow W3C
Trace Context and W3C Baggage formats": each is a string read against its
grammar in runs of 2026-07-28 and later (``trace_problem``: the traceparent fields, with the all-zero ids and
version ``ff`` the format forbids; the tracestate list of ``key=value``
members, at most 32; the baggage list of ``key=value`` members with
properties).  Limits on propagation (lengths a vendor may truncate at) are
no syntax and are not judged.

Every ``_meta`` object anywhere in a message the server sent (results,
notifications, its own requests, nested content items) is checked, on every
connection of the run that was recorded (the tour's, and each probe's); none
seen: ``skip``.  The raw HTTP transport probes (``http26_*``) are not message
streams and are not read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from ..._sansio import jsonrpc as rpc
from ..._sansio.revisions import get_revision, revisions_where
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results

CHECK: Final = "meta.key-names"
_LABEL: Final = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?")
_NAME: Final = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")

# W3C Trace Context: version "-" trace-id "-" parent-id "-" trace-flags, lowercase hex; a
# version above 00 may append "-" and more fields.
_TRACEPARENT: Final = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?", re.DOTALL)
# tracestate list members: key "=" value (keys simple or tenant@system; values printable, no , or =).
_TS_KEY: Final = re.compile(r"[a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13}")
_TS_VALUE: Final = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")
_TS_MEMBERS: Final = 32
# W3C Baggage: key (an RFC 7230 token) OWS "=" OWS value (baggage-octets) *(";" property).
_TOKEN: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_OCTETS: Final = r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"
_OWS: Final = r"[ \t]*"
_BAGGAGE_MEMBER: Final = re.compile(
    rf"{_TOKEN}{_OWS}={_OWS}{_OCTETS}(?:{_OWS};{_OWS}{_TOKEN}(?:{_OWS}={_OWS}{_OCTETS})?)*"
)
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")
#: The first revision that reserves them.
TRACE_REVISION: Final = revisions_where(lambda r: r.trace_meta_keys)[0]


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


def _traceparent_problem(value: str) -> str | None:
    match = _TRACEPARENT.fullmatch(value)
    if match is None:
        return "is not version-traceid-parentid-flags in lowercase hex"
    version, trace_id, parent_id, _, rest = match.groups()
    if version == "ff":
        return "has version ff, which W3C Trace Context forbids"
    if version == "00" and rest is not None:
        return "has version 00 and fields after the flags"
    if trace_id == "0" * 32:
        return "has an all-zero trace-id"
    if parent_id == "0" * 16:
        return "has an all-zero parent-id"
    return None


def _tracestate_problem(value: str) -> str | None:
    members = [m.strip(" \t") for m in value.split(",")]
    present = [m for m in members if m]
    if len(present) > _TS_MEMBERS:
        return f"has {len(present)} list-members (at most {_TS_MEMBERS})"
    for member in present:
        key, eq, item = member.partition("=")
        if not eq or not _TS_KEY.fullmatch(key) or not _TS_VALUE.fullmatch(item):
            return f"has the list-member {member[:60]!r}, no key=value"
    return None


def _baggage_problem(value: str) -> str | None:
    for member in value.strip(" \t").split(","):
        if not _BAGGAGE_MEMBER.fullmatch(member.strip(" \t")):
            return f"has the list-member {member[:60]!r}, no key=value[;property]"
    return None


_TRACE_RULES: Final = {
    "traceparent": ("W3C Trace Context traceparent", _traceparent_problem),
    "tracestate": ("W3C Trace Context tracestate", _tracestate_problem),
    "baggage": ("W3C Baggage", _baggage_problem),
}


def trace_problem(key: str, value: Any) -> str | None:
    """Why the value of the reserved trace-context key ``key`` breaks its W3C format, or ``None``
    (also for any other key)."""
    rule = _TRACE_RULES.get(key)
    if rule is None:
        return None
    name, problem_of = rule
    problem = problem_of(value) if isinstance(value, str) else "is not a string"
    return None if problem is None else f"_meta {key} {str(value)[:80]!r} is no {name}: it {problem}"


def _metas(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "_meta" and isinstance(item, dict):
                yield item
            yield from _metas(item)
    elif isinstance(value, list):
        for item in value:
            yield from _metas(item)


def check_meta_keys(rec: Results, recordings: list[RecordingStream], revision: str = TRACE_REVISION) -> None:
    """``revision``: the run's; the trace-context formats bind from 2026-07-28 on (before it
    the three are ordinary unprefixed names)."""
    traces = get_revision(revision).trace_meta_keys
    seen = traced = 0
    for recording in recordings:
        for _, msg in recording.messages():
            for meta in _metas(rpc.message_to_obj(msg)):
                for key, value in meta.items():
                    seen += 1
                    traced += traces and key in TRACE_KEYS
                    problem = key_problem(key) or (trace_problem(key, value) if traces else None)
                    if problem is not None:
                        rec.fail(CHECK, problem, [received(msg)])
                        return
    if seen:
        tail = f", {traced} trace-context values" if traced else ""
        rec.ok(CHECK, f"{seen} _meta keys on {len(recordings)} connections{tail}")
    else:
        rec.skip(CHECK, "the server sent no _meta keys")
