"""Checks of ``subscriptions/listen`` (2026-07-28, basic/patterns/subscriptions).

Theory of operation
-------------------
``listen_tour`` opens one subscription on the tour's session for every
change the server's capabilities advertise (the ``listChanged`` flags, one
resource when ``resources.subscribe``), waits for the acknowledgment and,
briefly, for a first notification, then cancels it.  The verdicts are read
off the recorded conversation:

* ``subscriptions.listen``: the acknowledgment is the first message carrying
  the subscription's id; a notification tagged with that id before it fails.
* ``subscriptions.ack-subset``: the acknowledged filter names nothing the
  request did not ask for (the page describes it as "the subset the server
  agreed to honor", without a keyword: best practice).
* ``subscriptions.tagged`` / ``subscriptions.filter``
  (``check_subscription_traffic``, over the whole run): the stateless era
  delivers change notifications (``*/list_changed``,
  ``resources/updated``) only on a listen stream, so every one must carry the
  ``io.modelcontextprotocol/subscriptionId`` of a listen request the harness
  sent, and be of a type (a URI) that request's filter asked for.  A run that
  saw no change notification skips both: silence proves nothing.
"""

from __future__ import annotations

from typing import Any

import trio

from ..._errors import McpError, TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio.connection import stateless as sl
from ..evidence import received, sent
from ..model import Status
from ..recorder import RecordingStream
from ..results import Tour

LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
UPDATED = "notifications/resources/updated"
#: Change notification -> the filter flag that asks for it.
FLAG_OF = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
    UPDATED: "resourceSubscriptions",
}
#: How long the tour waits for a first notification after the acknowledgment.
LINGER = 0.3


async def listen_tour(tour: Tour) -> None:
    check = "subscriptions.listen"
    client, caps = tour.client, tour.client.server_capabilities
    flags = {
        "tools_list_changed": _flag(caps, "tools", "listChanged"),
        "prompts_list_changed": _flag(caps, "prompts", "listChanged"),
        "resources_list_changed": _flag(caps, "resources", "listChanged"),
    }
    uris = tour.resource_uris[:1] if _flag(caps, "resources", "subscribe") else []
    if not any(flags.values()) and not uris:
        reason = "the server advertises no listChanged or resources.subscribe capability"
        tour.rec.skip(check, reason)
        tour.rec.skip("subscriptions.ack-subset", reason)
        return
    ack_timeout = min(tour.request_timeout, 10.0)
    try:
        with trio.fail_after(ack_timeout + 5):
            async with client.listen(**flags, resource_uris=uris, ack_timeout=ack_timeout) as sub:
                requested, acknowledged, sub_id = sub.requested, sub.acknowledged, sub.id
                with trio.move_on_after(LINGER):
                    async for _ in sub:
                        break
    except McpError as exc:
        tour.rec.warn(check, f"subscriptions/listen refused: {exc.code} {exc.message}", _listen_evidence(tour, None))
        return
    except trio.TooSlowError:
        tour.rec.skip(
            check, f"not reached: timed out after {ack_timeout:g} s (subscriptions/listen was not acknowledged in time)"
        )
        return
    except TrimcpError as exc:  # (a RequestTimeout too: not reached)
        tour.rec.failed(
            check, exc, f"subscriptions/listen failed: {exc}", _listen_evidence(tour, None), status=Status.WARN
        )
        return
    evidence = _listen_evidence(tour, sub_id)
    if acknowledged is None:
        # A response ends the subscription: the acknowledgment can no longer come first.
        tour.rec.fail(check, "the listen request was answered without an acknowledgment", evidence)
        return
    first = _first_on_subscription(tour.recording, sub_id)
    if first is not None and first.method != ACKNOWLEDGED:
        tour.rec.fail(check, f"{first.method} came before the acknowledgment", evidence)
    else:
        granted = sorted(k for k, v in acknowledged.items() if v)
        tour.rec.ok(check, f"acknowledged first: {', '.join(granted) or 'nothing'}")
    extra = _beyond(requested, acknowledged)
    if extra:
        tour.rec.warn("subscriptions.ack-subset", f"acknowledged more than was requested: {', '.join(extra)}", evidence)
    else:
        tour.rec.ok("subscriptions.ack-subset", "the acknowledged filter is within the requested one")


def _flag(caps: dict[str, Any], feature: str, flag: str) -> bool:
    node = caps.get(feature)
    return isinstance(node, dict) and node.get(flag) is True


def _beyond(requested: dict[str, Any], acknowledged: dict[str, Any]) -> list[str]:
    out = [
        k
        for k, v in acknowledged.items()
        if v is True and requested.get(k) is not True and k != "resourceSubscriptions"
    ]
    asked = set(requested.get("resourceSubscriptions") or [])
    granted = acknowledged.get("resourceSubscriptions")
    if isinstance(granted, list):
        out.extend(str(u) for u in granted if u not in asked)
    return out


def _tag(msg: rpc.Notification) -> Any:
    meta = msg.params.get("_meta") if isinstance(msg.params, dict) else None
    return meta.get(sl.SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None


def _first_on_subscription(recording: RecordingStream, sub_id: rpc.RequestId | None) -> rpc.Notification | None:
    if sub_id is None:
        return None
    for _, msg in recording.messages():
        if isinstance(msg, rpc.Notification) and _tag(msg) == sub_id:
            return msg
    return None


def _listen_evidence(tour: Tour, sub_id: rpc.RequestId | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [sent(r) for r in tour.recording.requests.values() if r.method == LISTEN][-1:]
    for _, msg in tour.recording.messages():
        if not isinstance(msg, rpc.Notification) or (msg.method != ACKNOWLEDGED and msg.method not in FLAG_OF):
            continue
        if sub_id is None or _tag(msg) == sub_id:
            out.append(received(msg))
    return out[:6]


def check_subscription_traffic(tour: Tour) -> None:
    """Every change notification of the run: tagged with a listen request's id, and asked for."""
    recording, rec = tour.recording, tour.rec
    filters = {
        r.id: (r.params or {}).get("notifications") or {} for r in recording.requests.values() if r.method == LISTEN
    }
    untagged: list[rpc.Notification] = []
    unasked: list[tuple[rpc.Notification, str]] = []
    seen = 0
    for _, msg in recording.messages():
        if not isinstance(msg, rpc.Notification) or msg.method not in FLAG_OF:
            continue
        seen += 1
        tag = _tag(msg)
        if tag is None or tag not in filters:
            untagged.append(msg)
            wanted = [f for f in filters.values() if _asks_for(f, msg)]
            if not wanted:
                unasked.append((msg, "no subscription asked for it"))
        elif not _asks_for(filters[tag], msg):
            unasked.append((msg, f"subscription {tag!r} did not ask for it"))
    if not seen:
        for check in ("subscriptions.tagged", "subscriptions.filter"):
            rec.skip(check, "no change notification arrived during the run")
        return
    if untagged:
        what = "; ".join(f"{m.method} with subscriptionId {_tag(m)!r}" for m in untagged[:3])
        rec.fail(
            "subscriptions.tagged",
            f"{len(untagged)} change notifications not tagged with a listen request's id: {what}",
            [received(m) for m in untagged[:3]],
        )
    else:
        rec.ok("subscriptions.tagged", f"{seen} change notifications, each tagged")
    if unasked:
        what = "; ".join(f"{m.method}{_uri(m)}: {why}" for m, why in unasked[:3])
        rec.fail(
            "subscriptions.filter",
            f"{len(unasked)} notifications not requested: {what}",
            [received(m) for m, _ in unasked[:3]],
        )
    else:
        rec.ok("subscriptions.filter", f"{seen} change notifications, each requested")


def _asks_for(notifications: Any, msg: rpc.Notification) -> bool:
    if not isinstance(notifications, dict):
        return False
    flag = FLAG_OF[msg.method]
    if msg.method != UPDATED:
        return notifications.get(flag) is True
    uris = notifications.get(flag)
    uri = msg.params.get("uri") if isinstance(msg.params, dict) else None
    return isinstance(uris, list) and uri in uris


def _uri(msg: rpc.Notification) -> str:
    uri = msg.params.get("uri") if isinstance(msg.params, dict) else None
    return f" {uri}" if uri else ""
