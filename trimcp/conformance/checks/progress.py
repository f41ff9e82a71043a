"""Progress notifications, read off the recorded conversations.

Theory of operation
-------------------
The progress pages (``basic/utilities/progress``; 2026-07-28
``basic/patterns/progress``) say the ``progress`` value "MUST increase with
each notification", that progress notifications "MUST only reference tokens
that" were provided in an active request, and that they "MUST stop after
completion".  The harness's client puts a ``progressToken`` in the ``_meta``
of every ``tools/call`` it sends (the tour calls the read-only tools), so the
recordings (``RecordingStream``: what was received, in order, and after how
many received texts each request was sent) hold everything needed: each
``notifications/progress`` must name the token of a request already sent and
not yet answered at that point of the conversation, and its ``progress`` must
exceed the previous one for that token.  No progress seen: ``skip``.

``cancel_target`` picks, from the same recording, the ``tools/call`` that
reported progress most often: a tool that runs long enough for the
cancellation probe (``checks/negative.py``) to cancel it in flight.
"""

from __future__ import annotations

from typing import Any

from ..._sansio import jsonrpc as rpc
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results

CHECK = "progress.notifications"


def _tokens(recording: RecordingStream) -> dict[Any, rpc.Request]:
    out: dict[Any, rpc.Request] = {}
    for request in recording.requests.values():
        meta = (request.params or {}).get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, (str, int)) and not isinstance(token, bool):
            out[token] = request
    return out


def _progress(recording: RecordingStream) -> list[tuple[int, rpc.Notification]]:
    return [
        (index, msg)
        for index, msg in recording.messages()
        if isinstance(msg, rpc.Notification) and msg.method == "notifications/progress"
    ]


def _problem(
    recording: RecordingStream,
    index: int,
    note: rpc.Notification,
    last: dict[Any, float],
    tokens: dict[Any, rpc.Request],
) -> str | None:
    params = note.params or {}
    token, value = params.get("progressToken"), params.get("progress")
    request = tokens.get(token)
    if request is None or recording.sent_at.get(request.id, index + 1) > index:
        return f"progress for token {token!r}, which no request in flight carried"
    answered = recording.answers().get(request.id)
    if answered is not None and answered[0] < index:
        return f"progress for token {token!r} after the response to {request.method}"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return f"progress {value!r} for token {token!r} is not a number"
    if token in last and value <= last[token]:
        return f"progress for token {token!r} went from {last[token]} to {value}"
    last[token] = value
    return None


def check_progress(rec: Results, recordings: list[RecordingStream]) -> None:
    seen = 0
    for recording in recordings:
        tokens = _tokens(recording)
        last: dict[Any, float] = {}
        for index, note in _progress(recording):
            seen += 1
            problem = _problem(recording, index, note, last, tokens)
            if problem is not None:
                rec.fail(CHECK, problem, [received(note)])
                return
    if seen:
        rec.ok(CHECK, f"{seen} progress notifications")
    else:
        rec.skip(CHECK, "the server sent no progress notifications")


def cancel_target(recording: RecordingStream) -> tuple[str, dict[str, Any]] | None:
    """``(tool name, arguments)`` of the tools/call that reported progress most often."""
    tokens = _tokens(recording)
    counts: dict[Any, int] = {}
    for _, note in _progress(recording):
        token = (note.params or {}).get("progressToken")
        request = tokens.get(token)
        if request is not None and request.method == "tools/call":
            counts[token] = counts.get(token, 0) + 1
    if not counts:
        return None
    params = tokens[max(counts, key=lambda t: counts[t])].params or {}
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        return None
    return name, dict(arguments) if isinstance(arguments, dict) else {}
