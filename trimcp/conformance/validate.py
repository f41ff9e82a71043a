"""Validate a recorded conversation against the typed MCP schema.

Each received JSON text is classified with the JSON-RPC parser; results are
typed by the method of the request they answer, notifications and requests by
their own method, and each is converted with the schema converter, whose
``SchemaError`` names the JSON path of the first problem.  Methods the schema
does not know (extensions) are skipped, not failed.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import attrs

from .._sansio import jsonrpc as rpc
from .._sansio import schema as s


@attrs.frozen
class ValidationOutcome:
    checked: int
    invalid_jsonrpc: list[str]
    schema_errors: list[str]
    unknown_ids: list[str]
    duplicate_ids: list[str]


def validate_conversation(received: Iterable[bytes], sent_methods: Mapping[rpc.RequestId, str]) -> ValidationOutcome:
    checked = 0
    invalid: list[str] = []
    schema_errors: list[str] = []
    unknown: list[str] = []
    duplicates: list[str] = []
    answered: set[rpc.RequestId] = set()
    for data in received:
        try:
            parsed = rpc.parse_payload(data)
        except Exception as exc:  # oversize
            invalid.append(str(exc))
            continue
        invalid.extend(f"{bad.error.message}: {_clip(bad.raw)}" for bad in parsed.invalid)
        for msg in parsed.messages:
            checked += 1
            problem = _check_message(msg, sent_methods, answered, unknown, duplicates)
            if problem:
                schema_errors.append(problem)
    return ValidationOutcome(checked, invalid, schema_errors, unknown, duplicates)


def _check_message(
    msg: rpc.Message,
    sent_methods: Mapping[rpc.RequestId, str],
    answered: set[rpc.RequestId],
    unknown: list[str],
    duplicates: list[str],
) -> str | None:
    if isinstance(msg, (rpc.Response, rpc.ErrorResponse)):
        if msg.id is None:
            return None
        method = sent_methods.get(msg.id)
        if method is None:
            unknown.append(f"answer to id {msg.id!r}, which was never sent")
            return None
        if msg.id in answered:
            duplicates.append(f"second answer to id {msg.id!r} ({method})")
            return None
        answered.add(msg.id)
        if isinstance(msg, rpc.ErrorResponse):
            return None
        types = s.REQUEST_TYPES.get(method)
        return _convert(types[1] if types else None, msg.result, f"{method} result")
    if isinstance(msg, rpc.Notification):
        cls = s.NOTIFICATION_TYPES.get(msg.method)
        return _convert(cls, msg.params or {}, f"{msg.method} params")
    types = s.REQUEST_TYPES.get(msg.method)
    return _convert(types[0] if types else None, msg.params or {}, f"{msg.method} request params")


def _convert(cls: type[Any] | None, data: Any, what: str) -> str | None:
    if cls is None:
        return None
    try:
        s.from_wire(cls, data)
    except s.SchemaError as exc:
        return f"{what}: {exc}"
    return None


def _clip(value: Any, limit: int = 120) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
