"""Validate a recorded conversation against the typed MCP schema of one revision.

Each received JSON text is classified with the JSON-RPC parser; results are
typed by the method of the request they answer, notifications and requests by
their own method, and each is converted with the schema helpers, whose
``SchemaError`` names the JSON path of the first problem.

With ``revision`` the tables and rules of that revision apply
(``schema.request_types(revision)``, ``schema.parse_result(..., revision=...)``):
in 2026-07-28 a result must carry ``resultType`` and cacheable results their
cache hints, a notification's ``subscriptionId`` must be an id; before it,
``structuredContent`` must be an object.  A method of another revision (a
``notifications/tasks/status`` at 2025-06-18) is reported; a method no
revision knows (an extension) is skipped, not failed.  Without ``revision``
the union of the handshake-era tables applies.

Requests *from* the server are listed in ``server_requests``: in the
stateless era there are none (they travel inside an InputRequiredResult).
A request or notification only a client sends (``initialize``,
``notifications/initialized``) is a schema error of its own, the direction
rule: the schema's ``ServerRequest`` union has no ``InitializeRequest`` and
basic/lifecycle says "The client MUST initiate this phase by sending an
``initialize`` request"; a server echoing the client's messages (``cat``)
breaks it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .._errors import RemoteProtocolError
from .._sansio import jsonrpc as rpc
from .._sansio import schema as s
from .._sansio.revisions import HANDSHAKE_VERSIONS, get_revision


@attrs.frozen
class ValidationOutcome:
    checked: int
    invalid_jsonrpc: list[str]
    schema_errors: list[str]
    unknown_ids: list[str]
    duplicate_ids: list[str]
    server_requests: list[str] = attrs.field(factory=list)


def validate_conversation(
    received: Iterable[bytes],
    sent_methods: Mapping[rpc.RequestId, str],
    revision: str | None = None,
) -> ValidationOutcome:
    checked = 0
    invalid: list[str] = []
    schema_errors: list[str] = []
    unknown: list[str] = []
    duplicates: list[str] = []
    server_requests: list[str] = []
    answered: set[rpc.RequestId] = set()
    for data in received:
        try:
            parsed = rpc.parse_payload(data)
        except RemoteProtocolError as exc:  # oversize
            invalid.append(str(exc))
            continue
        invalid.extend(f"{bad.error.message}: {_clip(bad.raw)}" for bad in parsed.invalid)
        for msg in parsed.messages:
            checked += 1
            if isinstance(msg, rpc.Request):
                server_requests.append(msg.method)
            problem = _check_message(msg, sent_methods, answered, unknown, duplicates, revision)
            if problem:
                schema_errors.append(problem)
    return ValidationOutcome(checked, invalid, schema_errors, unknown, duplicates, server_requests)


def _check_message(
    msg: rpc.Message,
    sent_methods: Mapping[rpc.RequestId, str],
    answered: set[rpc.RequestId],
    unknown: list[str],
    duplicates: list[str],
    revision: str | None,
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
        if method not in _requests(revision):
            return None  # our own probe of an unknown method, or an extension
        return _guard(lambda: s.parse_result(method, msg.result, None, revision), f"{method} result")
    params = msg.params
    backwards = _client_only(msg, revision)
    if backwards:
        return backwards
    if isinstance(msg, rpc.Notification):
        if msg.method not in _notifications(revision):
            return _foreign(msg.method, s.NOTIFICATION_TYPES, revision)
        return _guard(lambda: s.parse_notification_params(msg.method, params, revision), f"{msg.method} params")
    if msg.method not in _requests(revision):
        return _foreign(msg.method, s.REQUEST_TYPES, revision)
    return _guard(lambda: s.parse_request_params(msg.method, params, revision), f"{msg.method} request params")


def _client_only(msg: rpc.Request | rpc.Notification, revision: str | None) -> str | None:
    """The direction rule: a method only the client may send, received from the server."""
    names = [revision] if revision is not None else list(HANDSHAKE_VERSIONS)
    revs = [get_revision(n) for n in names]
    if isinstance(msg, rpc.Request):
        client = {m for r in revs for m in r.client_requests}
        server = {m for r in revs for m in r.server_requests}
        kind = "request"
    else:
        client = {m for r in revs for m in r.client_notifications}
        server = {m for r in revs for m in r.server_notifications}
        kind = "notification"
    if msg.method in client and msg.method not in server:
        return f"request direction: the server sent {msg.method}, a {kind} only a client sends"
    return None


def _requests(revision: str | None) -> Mapping[str, Any]:
    return s.REQUEST_TYPES if revision is None else s.request_types(revision)


def _notifications(revision: str | None) -> Mapping[str, Any]:
    return s.NOTIFICATION_TYPES if revision is None else s.notification_types(revision)


def _foreign(method: str, union: Mapping[str, Any], revision: str | None) -> str | None:
    """A method another revision has is an error here; a method none has is an extension."""
    if revision is None or method not in union:
        return None
    return f"{method} does not exist in revision {revision}"


def _guard(parse: Any, what: str) -> str | None:
    try:
        parse()
    except s.SchemaError as exc:
        return f"{what}: {exc}"
    return None


def _clip(value: Any, limit: int = 120) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
