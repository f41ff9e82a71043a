"""Rules on what the server sends, read off the recorded conversations (no probe of their own).

Theory of operation
-------------------
Each function reads every ``RecordingStream`` of the run (the tour's and the
negative probes'), in the order the texts crossed (``sends_before``: how many
messages the harness had sent when each text arrived), and judges one sentence:

* ``lifecycle.init-first`` (handshake era; basic/lifecycle "The initialization
  phase MUST be the first interaction between client and server"): before the
  answer to ``initialize``, the server starts nothing but what the same page lets
  it send during that phase (``ping`` requests and ``notifications/message``).
  Answers to requests a probe sent early are the client's doing, not judged here.
* ``progress.server-tokens`` (handshake era; basic/utilities/progress "Progress
  tokens MUST be a string or integer value" and "MUST be unique across all active
  requests"): a ``progressToken`` in the ``_meta`` of a request the server sent
  is a string or an integer, and no other server request still in flight carries
  the same one.
* ``cancellation.task-requests`` (2025-11-25, basic/utilities/cancellation "For
  task-augmented requests, the tasks/cancel request MUST be used instead of the
  notifications/cancelled notification"): the server sends no
  ``notifications/cancelled`` naming a task-augmented request of its own.
* ``jsonrpc.request-ids-in-flight`` (2026-07-28, basic "The request ID MUST NOT
  match the ID of any other request the sender has issued and not yet received a
  response for"): no server request reuses the id of one still in flight.
* ``mrtr.unique-keys`` (2026-07-28, basic/patterns/mrtr "inputRequests keys ...
  MUST be unique within the scope of the request"): the ``inputRequests`` object
  of an InputRequiredResult names no key twice in its JSON text (a parser keeps
  the last one, so the duplicate is looked for in the text itself).

A server request is *in flight* at a point of the conversation when it arrived
earlier and the harness had not yet sent its answer: only then did the server
certainly send the second request before it could know of the answer.  Each
check skips, with the reason, when the conversation holds nothing it judges.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results

__all__ = [
    "check_init_first",
    "check_input_request_keys",
    "check_request_ids_in_flight",
    "check_server_progress_tokens",
    "check_task_cancellations",
]

#: What a server may start before its initialize answer (basic/lifecycle, Initialization).
_EARLY_REQUESTS = frozenset({"ping"})
_EARLY_NOTIFICATIONS = frozenset({"notifications/message"})


def _crossed(recording: RecordingStream) -> Iterator[tuple[int, int, rpc.Message]]:
    """``(text index, messages sent before it, message)`` for every message received."""
    sends = recording.sends_before()
    for index, msg in recording.messages():
        yield index, sends[index] if index < len(sends) else len(recording.sent), msg


def _answered_at(recording: RecordingStream) -> dict[rpc.RequestId, int]:
    """The position (in ``recording.sent``) of the harness's answer to each server request."""
    out: dict[rpc.RequestId, int] = {}
    for position, msg in enumerate(recording.sent):
        if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id is not None:
            out.setdefault(msg.id, position)
    return out


def _in_flight(
    recording: RecordingStream,
) -> Iterator[tuple[rpc.Request, list[rpc.Request]]]:
    """Every server request, with the server requests still in flight when it arrived."""
    answered = _answered_at(recording)
    earlier: list[rpc.Request] = []
    for _, before, msg in _crossed(recording):
        if not isinstance(msg, rpc.Request):
            continue
        live = [r for r in earlier if answered.get(r.id, len(recording.sent)) >= before]
        yield msg, live
        earlier.append(msg)


def check_init_first(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    check = "lifecycle.init-first"
    judged = 0
    for recording in recordings:
        init = next((i for i, m in recording.sent_methods.items() if m == "initialize"), None)
        answer = recording.answers().get(init) if init is not None else None
        if answer is None:
            continue
        judged += 1
        for index, _, msg in _crossed(recording):
            if index >= answer[0]:
                break
            if isinstance(msg, rpc.Request) and msg.method not in _EARLY_REQUESTS:
                rec.fail(check, f"the server sent a {msg.method} request before answering initialize", [received(msg)])
                return
            if isinstance(msg, rpc.Notification) and msg.method not in _EARLY_NOTIFICATIONS:
                rec.fail(check, f"the server sent {msg.method} before answering initialize", [received(msg)])
                return
    if judged:
        rec.ok(check, f"{judged} connections: nothing but ping and logging before the initialize answer")
    else:
        rec.skip(check, "no initialize request was answered")


def _token(request: rpc.Request) -> tuple[bool, Any]:
    meta = (request.params or {}).get("_meta") if isinstance(request.params, dict) else None
    if isinstance(meta, dict) and "progressToken" in meta:
        return True, meta["progressToken"]
    return False, None


def check_server_progress_tokens(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    check = "progress.server-tokens"
    seen = 0
    for recording in recordings:
        for request, live in _in_flight(recording):
            has, token = _token(request)
            if not has:
                continue
            seen += 1
            if isinstance(token, bool) or not isinstance(token, (str, int)):
                rec.fail(
                    check,
                    f"{request.method} carries progressToken {token!r}, not a string or integer",
                    [received(request)],
                )
                return
            clash = next((r for r in live if _token(r) == (True, token) and type(_token(r)[1]) is type(token)), None)
            if clash is not None:
                rec.fail(
                    check,
                    f"{request.method} carries progressToken {token!r}, already the token of "
                    f"{clash.method} (id {clash.id!r}), still in flight",
                    [received(clash), received(request)],
                )
                return
    if seen:
        rec.ok(check, f"{seen} server requests with a progressToken: each a string or integer, unique in flight")
    else:
        rec.skip(check, "no request from the server carried a progressToken")


def check_task_cancellations(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    check = "cancellation.task-requests"
    augmented = 0
    for recording in recordings:
        tasks: dict[rpc.RequestId, rpc.Request] = {}
        for _, _, msg in _crossed(recording):
            if isinstance(msg, rpc.Request) and isinstance(msg.params, dict) and "task" in msg.params:
                tasks[msg.id] = msg
                augmented += 1
            elif isinstance(msg, rpc.Notification) and msg.method == "notifications/cancelled":
                target = (msg.params or {}).get("requestId")
                if isinstance(target, (str, int)) and target in tasks:
                    rec.fail(
                        check,
                        f"notifications/cancelled for the task-augmented {tasks[target].method} "
                        f"(id {target!r}), where tasks/cancel is due",
                        [received(tasks[target]), received(msg)],
                    )
                    return
    if augmented:
        rec.ok(check, f"{augmented} task-augmented server requests, none cancelled with notifications/cancelled")
    else:
        rec.skip(check, "the server sent no task-augmented request")


def check_request_ids_in_flight(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    check = "jsonrpc.request-ids-in-flight"
    seen = 0
    for recording in recordings:
        for request, live in _in_flight(recording):
            seen += 1
            clash = next((r for r in live if r.id == request.id and type(r.id) is type(request.id)), None)
            if clash is not None:
                rec.fail(
                    check,
                    f"{request.method} has id {request.id!r}, the id of {clash.method}, still in flight",
                    [received(clash), received(request)],
                )
                return
    if seen:
        rec.ok(check, f"{seen} server requests, ids distinct among those in flight")
    else:
        rec.skip(check, "the server sent no requests")


class _Keys(dict[str, Any]):
    """A JSON object that remembers the keys its text named more than once."""

    twice: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Keys:
    out = _Keys(pairs)
    if len(out) != len(pairs):
        names = [k for k, _ in pairs]
        out.twice = tuple(sorted({k for k in names if names.count(k) > 1}))
    return out


def _duplicate_input_keys(text: bytes) -> tuple[str, ...] | None:
    """Keys named twice in the ``inputRequests`` of an InputRequiredResult; ``None``: no such result."""
    try:
        doc = json.loads(text, object_pairs_hook=_object)
    except ValueError:
        return None
    result = doc.get("result") if isinstance(doc, dict) else None
    if not isinstance(result, dict) or result.get("resultType") != s.ResultType.INPUT_REQUIRED:
        return None
    asks = result.get("inputRequests")
    if not isinstance(asks, dict):
        return None
    return asks.twice if isinstance(asks, _Keys) else ()


def check_input_request_keys(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    check = "mrtr.unique-keys"
    seen = 0
    for recording in recordings:
        for text in recording.received:
            twice = _duplicate_input_keys(text)
            if twice is None:
                continue
            seen += 1
            if twice:
                rec.fail(
                    check,
                    f"an InputRequiredResult names inputRequests key(s) {', '.join(map(repr, twice))} more than once",
                    [received(text.decode("utf-8", "replace"))],
                )
                return
    if seen:
        rec.ok(check, f"{seen} InputRequiredResults, each inputRequests key named once")
    else:
        rec.skip(check, "no InputRequiredResult carried inputRequests")
