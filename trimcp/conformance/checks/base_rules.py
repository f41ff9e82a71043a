"""JSON-RPC base rules read off every message of the run: the main conversation and each probe's.

Theory of operation
-------------------
basic (Messages) has three sentences about ids that no single probe can judge,
since a server may break them on any connection, in answer to anything:

* "Notifications MUST NOT include an ID": a message from the server whose
  method is a notification of the negotiated revision's schema and which
  carries an id (a black box parses it as a request; the method names it a
  notification) fails ``jsonrpc.valid-messages``.
* "Error responses MUST include the same ID as the request they correspond
  to (except in error cases where the ID could not be read due a malformed
  request)": every response must answer, once, an id the harness sent on that
  connection (``jsonrpc.ids``; ``validate.py`` already judges the main and
  negative-probe conversations for ids never sent or answered twice, this
  module every probe connection too).  A ``null`` id is an answer to a text
  whose id could not be read: each malformed text a probe wrote with an
  unreadable id (``RecordingStream.note_raw``) allows one.  Over HTTP a null-id
  error is not judged here: Streamable HTTP lets the body of an HTTP error
  status be "a JSON-RPC error response that has no id", and the recording does
  not keep the status (the malformed probes, which see it, judge theirs).
* "The receiver MUST NOT send a response" (to a notification): a notification
  has no id, so a response to one is a response that answers no request: an
  id never sent, a second answer, or a ``null`` id nothing malformed explains.
  One that arrives after the harness sent a notification on that connection
  fails ``jsonrpc.notification-no-response``.  Silence is proven by a round
  trip: a notification followed, on its connection, by a request that was
  answered (connections are ordered, so a response to it would have come
  before); the pass counts them.

The connections are the runner's main recording, the negative probes' and
every connection the run's probes opened (``Tour.probe_recordings``: the runner wraps the
connector with ``recorder.recording_connector``).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results
from .malformed import is_http

__all__ = ["check_base_rules"]


@attrs.define
class _Findings:
    connections: int = 0
    answers: int = 0
    errors: int = 0
    null_ids: int = 0
    notifications: int = 0
    proven: int = 0
    with_id: list[rpc.Request] = attrs.field(factory=list)
    bad_ids: list[tuple[str, rpc.Message]] = attrs.field(factory=list)
    to_notifications: list[tuple[str, rpc.Message]] = attrs.field(factory=list)


def check_base_rules(rec: Results, recordings: Sequence[RecordingStream], revision: str) -> None:
    """Judge the id rules of every message every connection of the run received (module doc)."""
    found = _Findings()
    seen: set[int] = set()
    for recording in recordings:
        if id(recording) in seen:
            continue
        seen.add(id(recording))
        _read(recording, revision, found)
    _verdicts(rec, found)


def _notification_methods(revision: str) -> set[str]:
    return set(s.notification_types(revision)) - set(s.request_types(revision))


def _read(recording: RecordingStream, revision: str, found: _Findings) -> None:
    notes = _notification_methods(revision)
    by_index: dict[int, list[rpc.Message]] = {}
    for index, msg in recording.messages():
        by_index.setdefault(index, []).append(msg)
    found.connections += 1
    http = is_http(recording)
    unreadable = [at for at, readable in recording.raw_sent if not readable]
    answered: set[rpc.RequestId] = set()
    notified = 0  # notifications sent so far on this connection
    pending: list[int] = []  # of them, those no answered request has followed yet
    asked_after: dict[rpc.RequestId, list[int]] = {}
    for direction, index in recording.order():
        if direction == "send":
            msg = recording.sent[index]
            if isinstance(msg, rpc.Notification):
                notified += 1
                found.notifications += 1
                pending.append(notified)
            elif isinstance(msg, rpc.Request):
                asked_after[msg.id] = pending
                pending = []
            continue
        for msg in by_index.get(index, ()):
            if isinstance(msg, rpc.Request) and msg.method in notes:
                found.with_id.append(msg)
            if not isinstance(msg, (rpc.Response, rpc.ErrorResponse)) or msg in recording.sent:
                continue  # (a copy of the client's own answer, from a server echoing lines, is not one)
            problem = _answer_problem(msg, recording, index, answered, unreadable, http)
            if problem is None:
                found.answers += 1
                found.errors += isinstance(msg, rpc.ErrorResponse)
                found.null_ids += msg.id is None
                if msg.id is not None:
                    # The notifications sent before this request are proven silent now.
                    found.proven += len(asked_after.pop(msg.id, []))
                continue
            if problem:
                found.bad_ids.append((problem, msg))
                if notified:
                    found.to_notifications.append((problem, msg))


def _answer_problem(
    msg: rpc.Response | rpc.ErrorResponse,
    recording: RecordingStream,
    index: int,
    answered: set[rpc.RequestId],
    unreadable: list[int],
    http: bool,
) -> str | None:
    """Why ``msg`` answers no request of its connection ("" when not judged), else ``None``."""
    if msg.id is None:
        if not isinstance(msg, rpc.ErrorResponse):
            return "a result with a null id"
        allowance = next((n for n, at in enumerate(unreadable) if at <= index), None)
        if allowance is not None:
            del unreadable[allowance]  # the answer to one text whose id could not be read
            return None
        if http:
            return ""  # maybe an HTTP error status's id-less error (see the module doc)
        return "an error with a null id, though no text sent before it had an unreadable id"
    if msg.id not in recording.sent_methods:
        return f"an answer to id {msg.id!r}, which was never sent on that connection"
    if msg.id in answered:
        return f"a second answer to id {msg.id!r}"
    answered.add(msg.id)
    return None


def _verdicts(rec: Results, found: _Findings) -> None:
    if found.with_id:
        first = found.with_id[0]
        rec.fail(
            "jsonrpc.valid-messages",
            f"{len(found.with_id)} notification(s) carry an id: {first.method} "
            f"with id {first.id!r} (notifications MUST NOT include an ID)",
            [received(first)],
        )
    if found.bad_ids:
        problem, msg = found.bad_ids[0]
        rec.fail("jsonrpc.ids", f"{len(found.bad_ids)} response(s) answer no request: {problem}", [received(msg)])
    elif found.answers:
        rec.ok(
            "jsonrpc.ids",
            f"{found.answers} responses on {found.connections} connections, each to a request "
            f"sent there, once ({found.errors} errors, {found.null_ids} with a null id to a text whose id "
            "could not be read)",
        )
    if found.to_notifications:
        problem, msg = found.to_notifications[0]
        rec.fail(
            "jsonrpc.notification-no-response",
            f"{len(found.to_notifications)} response(s) after the harness's notifications answer no request: {problem}",
            [received(msg)],
        )
    elif found.proven:
        rec.ok(
            "jsonrpc.notification-no-response",
            f"no response to {found.notifications} notifications on "
            f"{found.connections} connections ({found.proven} proven by an answered request sent after them)",
        )
