"""What the server itself sends as a requester: its request ids and its cancellations.

Theory of operation
-------------------
The ``basic`` page (Requests) says "The request ID MUST NOT have been
previously used by the requestor within the same session" (handshake era;
each recorded connection is one session).  The cancellation pages say
cancellation notifications "MUST only reference requests that: Were
previously issued in the same direction" (handshake era) and, in
2026-07-28, "Server-sent cancellation notifications MUST reference a
subscriptions/listen request" and "Servers MUST NOT send
notifications/cancelled for any other purpose".  Both are read off the
recordings (the tour's and the probes'); nothing of the kind seen: ``skip``.

In 2026-07-28 the ``basic`` page (``_meta``) adds: "On notifications delivered
via a subscriptions/listen stream, the server MUST include
io.modelcontextprotocol/subscriptionId in _meta"; the change notifications a
subscription asks for (list changes, resource updates) come only that way, so
each one must name a ``subscriptions/listen`` request sent on its connection.
"""

from __future__ import annotations

from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio.revisions import Era, get_revision
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results


def check_server_request_ids(rec: Results, recordings: list[RecordingStream]) -> None:
    check = "jsonrpc.server-request-ids"
    seen = 0
    for recording in recordings:
        ids: set[Any] = set()
        for _, msg in recording.messages():
            if isinstance(msg, rpc.Request):
                seen += 1
                if msg.id in ids:
                    rec.fail(check, f"the server reused request id {msg.id!r} ({msg.method})", [received(msg)])
                    return
                ids.add(msg.id)
    if seen:
        rec.ok(check, f"{seen} server requests, no id reused")
    else:
        rec.skip(check, "the server sent no requests")


def check_server_cancellations(rec: Results, recordings: list[RecordingStream], revision: str) -> None:
    check = "cancellation.server-sent"
    stateless = get_revision(revision).era is Era.STATELESS
    seen = 0
    for recording in recordings:
        server_ids: set[Any] = set()
        for _, msg in recording.messages():
            if isinstance(msg, rpc.Request):
                server_ids.add(msg.id)
            if not (isinstance(msg, rpc.Notification) and msg.method == "notifications/cancelled"):
                continue
            seen += 1
            target = (msg.params or {}).get("requestId")
            if stateless:
                ok = isinstance(target, (str, int)) and recording.sent_methods.get(target) == "subscriptions/listen"
                why = "a request other than subscriptions/listen"
            else:
                ok = target in server_ids
                why = "no request the server had sent"
            if not ok:
                rec.fail(check, f"notifications/cancelled for {target!r}: {why}", [received(msg)])
                return
    if seen:
        rec.ok(check, f"{seen} cancellations, each of a request they may cancel")
    else:
        rec.skip(check, "the server sent no cancellations")


#: The notifications a subscriptions/listen stream delivers (2026-07-28).
_SUBSCRIBED = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def check_subscription_ids(rec: Results, recordings: list[RecordingStream]) -> None:
    check = "meta.subscription-id"
    seen = 0
    for recording in recordings:
        for _, msg in recording.messages():
            if not (isinstance(msg, rpc.Notification) and msg.method in _SUBSCRIBED):
                continue
            seen += 1
            meta = (msg.params or {}).get("_meta")
            sub = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
            if not (isinstance(sub, (str, int)) and recording.sent_methods.get(sub) == "subscriptions/listen"):
                rec.fail(
                    check,
                    f"{msg.method} without a subscriptionId naming a subscriptions/listen request (got {sub!r})",
                    [received(msg)],
                )
                return
    if seen:
        rec.ok(check, f"{seen} subscription notifications, each naming its subscription")
    else:
        rec.skip(check, "the server sent no subscription notifications")
