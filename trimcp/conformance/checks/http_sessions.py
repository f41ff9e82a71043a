"""Streamable HTTP session and stream checks, handshake era (spec 2025-03-26 .. 2025-11-25,
basic/transports: "Session Management", "Listening for Messages from the Server",
"Multiple Connections", "Resumability and Redelivery", "Sending Messages to the Server").

Theory of operation
-------------------
``checks/http.py`` opens a raw session (``initialize``, ``notifications/initialized``)
and, before it DELETEs it, hands its headers here.  The raw requests keep sending
the server's ``Mcp-Session-Id`` exactly as issued, even a malformed one (the trimcp
client would drop it; the harness must not, or every later probe fails for a
reason ``http.session-id`` already reports).

* ``http.session-required``: a ``ping`` without the session id should get 400
  (a 2xx answer means the server does not require the id: skip);
  ``http.refused-notification``: a notification naming a session never issued
  cannot be accepted, so its answer must be an HTTP error status;
* the stream probe: the standalone GET stream is opened, then two ``ping``s
  are POSTed at once, each on its own connection; every stream is read until its
  answer came and a short grace passed.  ``http.get-no-response``: no JSON-RPC
  response on the GET stream (the harness never resumes, so none may come);
  ``http.concurrent-streams``: each POST carries its own answer, neither carries
  the other's, and no message arrives on two streams; ``http.event-ids``: an
  event id seen on one stream is never seen on another, nor again later on the
  same one; ``http.sse-priming`` (2025-11-25): an SSE answer opens with an
  id-only event; ``http.sse-response``: an SSE answer holds the response and
  then ends; ``http.resume``: a GET with ``Last-Event-ID`` naming the first
  ping's first event id (when it had one) replays nothing that was sent on the
  other ping's stream or on the GET stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import attrs
import trio

from ..._sansio import jsonrpc as rpc
from ..._sansio.http import header_names as hn
from ..evidence import exchange, received
from ..rawhttp import OpenStream, ProbeError, RawClient
from ..results import Results

__all__ = ["SESSION_CHECKS", "check_sessions"]

SESSION_CHECKS: Final = (
    "http.valid-host",
    "http.session-required",
    "http.refused-notification",
    "http.session-unique",
    "http.get-no-response",
    "http.concurrent-streams",
    "http.event-ids",
    "http.resume",
    "http.sse-priming",
    "http.sse-response",
)
#: How long a stream is watched after the answers came (messages that follow them).
GRACE: Final = 0.3
_PING_IDS: Final = (21, 22)
UNKNOWN_SESSION: Final = "trimcp-check-no-such-session"


@attrs.define
class _Seen:
    """What one stream carried."""

    name: str
    status: int | None = None
    content_type: str = ""
    messages: list[Any] = attrs.field(factory=list)
    #: Event ids in order of arrival, each block once (id-only blocks included).
    ids: list[str] = attrs.field(factory=list)
    primed: bool | None = None
    ended: bool = False
    error: str | None = None
    #: Trio clock times: the response headers came; the awaited answer came (POSTs); the stream ended.
    opened_at: float | None = None
    answered_at: float | None = None
    ended_at: float | None = None

    @property
    def sse(self) -> bool:
        return self.status == 200 and self.content_type == "text/event-stream"

    def answer(self, request_id: int) -> Any:
        return next((m for m in self.messages if _is_answer(m) and m.get("id") == request_id), None)

    def shown(self) -> list[Any]:
        return [received(json.dumps(m)) for m in self.messages[:5]]


def _is_answer(msg: Any) -> bool:
    return isinstance(msg, dict) and "id" in msg and ("result" in msg or "error" in msg) and "method" not in msg


async def check_sessions(
    rec: Results, url: str, revision: str, base: Mapping[str, str], sid: str | None, raw: RawClient
) -> None:
    """The session and stream checks, in the session ``base`` names (not yet deleted)."""
    if sid is None:
        rec.skip("http.session-required", "the server issues no session id")
        rec.skip("http.refused-notification", "the server issues no session id")
    else:
        await _session_required(rec, url, base, raw)
        await _refused_notification(rec, url, base, raw)
    await _streams(rec, url, revision, base, raw)


async def _session_required(rec: Results, url: str, base: Mapping[str, str], raw: RawClient) -> None:
    check = "http.session-required"
    headers = {k: v for k, v in base.items() if k.lower() != hn.lower(hn.SESSION_HEADER)}
    body = rpc.message_to_obj(rpc.Request(20, "ping", None))
    resp = await raw.request(url, "POST", headers, body)
    shown = [
        exchange(
            "POST",
            url,
            headers,
            json.dumps(body),
            status=resp.status,
            response_headers=resp.headers,
            response_body=resp.body,
        )
    ]
    if resp.status == 400:
        rec.ok(check, "ping without Mcp-Session-Id: 400")
    elif 200 <= resp.status < 300:
        rec.skip(check, f"ping without Mcp-Session-Id answered {resp.status}: the server does not require it")
    else:
        rec.warn(check, f"ping without Mcp-Session-Id: HTTP {resp.status}, the spec advises 400", shown)


async def _refused_notification(rec: Results, url: str, base: Mapping[str, str], raw: RawClient) -> None:
    check = "http.refused-notification"
    headers = {**base, hn.SESSION_HEADER: UNKNOWN_SESSION}
    body = rpc.message_to_obj(rpc.Notification("notifications/initialized", None))
    resp = await raw.request(url, "POST", headers, body)
    if resp.status >= 400:
        rec.ok(check, f"notifications/initialized naming an unknown session: {resp.status}")
    else:
        rec.fail(
            check,
            f"notifications/initialized naming an unknown session: HTTP {resp.status}, not an error",
            [
                exchange(
                    "POST",
                    url,
                    headers,
                    json.dumps(body),
                    status=resp.status,
                    response_headers=resp.headers,
                    response_body=resp.body,
                )
            ],
        )


async def _streams(rec: Results, url: str, revision: str, base: Mapping[str, str], raw: RawClient) -> None:
    get_headers = {k: v for k, v in base.items() if k != "Content-Type"} | {"Accept": "text/event-stream"}
    get = _Seen("GET")
    posts = [_Seen(f"POST ping {i}") for i in _PING_IDS]
    done = trio.Event()
    async with trio.open_nursery() as nursery:
        opened = trio.Event()
        nursery.start_soon(_watch_get, url, get_headers, raw, get, opened, done)
        with trio.move_on_after(raw.timeout):
            await opened.wait()
        async with trio.open_nursery() as inner:
            for request_id, seen in zip(_PING_IDS, posts, strict=True):
                inner.start_soon(_post, url, base, raw, request_id, seen)
        await trio.sleep(GRACE)
        done.set()
    _judge_get(rec, get, posts)
    _judge_concurrent(rec, get, posts)
    _judge_ids(rec, [get, *posts])
    _judge_sse(rec, revision, posts)
    await _resume(rec, url, get_headers, raw, get, posts)


async def _read(stream: OpenStream, seen: _Seen, until: Any) -> None:
    """Read events into ``seen`` until ``until()`` is true (checked after each event) or the end."""
    while not until():
        event = await stream.next_event()
        _note_ids(stream, seen)
        if event is None:
            seen.ended = stream.ended
            return
        if not event.data:
            continue  # a priming event
        try:
            seen.messages.append(json.loads(event.data))
        except ValueError:
            seen.messages.append(event.data)


def _note_ids(stream: OpenStream, seen: _Seen) -> None:
    ids: list[str] = []
    last: str | None = None
    for current, _ in stream.order:
        # An event without its own id field inherits the last one: count each id once in a row.
        if current is not None and current != last:
            ids.append(current)
        last = current
    seen.ids = ids
    if stream.order:
        # A priming event is an id with empty data: a block without data, or ``data:`` alone.
        first_id, first = stream.order[0]
        seen.primed = first_id is not None and (first is None or not first.data)


async def _watch_get(
    url: str, headers: Mapping[str, str], raw: RawClient, seen: _Seen, opened: trio.Event, done: trio.Event
) -> None:
    try:
        async with raw.stream(url, "GET", headers) as stream:
            seen.status, seen.content_type = stream.status, stream.content_type
            seen.opened_at = trio.current_time()
            opened.set()
            if seen.sse:
                with trio.CancelScope() as scope:

                    async def stop() -> None:
                        await done.wait()
                        scope.cancel()

                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(stop)
                        await _read(stream, seen, lambda: False)
                        seen.ended_at = trio.current_time()  # (the server ended it: not cancelled)
                        nursery.cancel_scope.cancel()
    except ProbeError as exc:
        seen.error = str(exc)
        seen.ended_at = trio.current_time()
    finally:
        opened.set()


async def _post(url: str, base: Mapping[str, str], raw: RawClient, request_id: int, seen: _Seen) -> None:
    body = rpc.message_to_obj(rpc.Request(request_id, "ping", None))
    try:
        async with raw.stream(url, "POST", base, body) as stream:
            seen.status, seen.content_type = stream.status, stream.content_type
            seen.opened_at = trio.current_time()
            if seen.sse:
                await _read(stream, seen, lambda: seen.answer(request_id) is not None)
                seen.answered_at = trio.current_time()
                if not stream.ended:
                    # After the answer the stream should end: wait a little for it.
                    tail = await stream.next_event(GRACE)
                    if tail is not None and tail.data:
                        seen.messages.append(tail.data)
                    seen.ended = stream.ended
                    _note_ids(stream, seen)
            else:
                data = await stream.read_body()
                seen.answered_at = trio.current_time()
                try:
                    seen.messages.append(json.loads(data))
                except ValueError:
                    seen.messages.append(data.decode("utf-8", "replace"))
    except ProbeError as exc:
        seen.error = str(exc)


def _judge_get(rec: Results, get: _Seen, posts: list[_Seen]) -> None:
    check = "http.get-no-response"
    if not get.sse:
        rec.skip(check, f"no GET stream (HTTP {get.status})" if get.error is None else f"no GET stream: {get.error}")
        return
    answers = [m for m in get.messages if _is_answer(m)]
    if answers:
        rec.fail(check, f"{len(answers)} JSON-RPC responses on the GET stream", get.shown())
    elif not all(p.answer(i) is not None for p, i in zip(posts, _PING_IDS, strict=True)):
        rec.skip(check, "the pings were not answered on their POSTs")
    elif not _open_throughout(get, posts):
        # A stream that had ended could carry nothing: the server was never put to the choice.
        rec.skip(check, "the GET stream ended before the pings were answered: nothing could arrive on it")
    else:
        rec.ok(
            check,
            f"the GET stream stayed open while {len(posts)} pings were answered on their POSTs; "
            f"{len(get.messages)} messages on it, none a response",
        )


def _open_throughout(get: _Seen, posts: list[_Seen]) -> bool:
    """Whether the GET stream was open from before the first answer until after the last."""
    answered = [p.answered_at for p in posts if p.answered_at is not None]
    if not get.sse or get.opened_at is None or not answered:
        return False
    return get.opened_at <= min(answered) and (get.ended_at is None or get.ended_at >= max(answered))


def _overlapping(posts: list[_Seen]) -> bool:
    """Whether each POST stream was open before the other's answer came (both in flight at once)."""
    first, second = posts
    times = (first.opened_at, first.answered_at, second.opened_at, second.answered_at)
    if any(x is None for x in times):
        return False
    a_open, a_done, b_open, b_done = times
    assert a_open is not None and a_done is not None and b_open is not None and b_done is not None
    return a_open < b_done and b_open < a_done


def _judge_concurrent(rec: Results, get: _Seen, posts: list[_Seen]) -> None:
    check = "http.concurrent-streams"
    problems: list[str] = []
    for seen, own, other in ((posts[0], 21, 22), (posts[1], 22, 21)):
        if seen.error is not None:
            problems.append(f"{seen.name}: {seen.error}")
        elif seen.answer(own) is None:
            problems.append(f"{seen.name}: no answer (HTTP {seen.status})")
        if seen.answer(other) is not None:
            problems.append(f"{seen.name} carried the answer to ping {other}")
    texts: dict[str, str] = {}
    for seen in (get, *posts):
        for msg in seen.messages:
            if not isinstance(msg, dict):
                continue
            key = json.dumps(msg, sort_keys=True)
            if key in texts and texts[key] != seen.name:
                problems.append(f"the same message on {texts[key]} and {seen.name}")
            texts.setdefault(key, seen.name)
    if problems:
        rec.fail(check, "; ".join(problems[:3]), [m for s in (get, *posts) for m in s.shown()])
        return
    # "Only one of the connected streams" needs two streams connected when a message is sent:
    # two POSTs answered one after the other, with no GET stream open, put nothing to the test.
    together = [
        what
        for what, yes in (
            ("the two POST streams overlapped", _overlapping(posts)),
            ("the GET stream was open throughout", _open_throughout(get, posts)),
        )
        if yes
    ]
    if not together:
        rec.skip(
            check,
            "the two POSTs were answered one after the other with no GET stream open: "
            "no message was sent while two streams were connected",
        )
    else:
        count = sum(len(s.messages) for s in (get, *posts))
        streams = sum(1 for s in (get, *posts) if s.opened_at is not None)
        rec.ok(
            check,
            f"pings {_PING_IDS[0]} and {_PING_IDS[1]} each answered on its own POST ("
            f"{' and '.join(together)}); {count} messages on {streams} streams, none on two",
        )


def _judge_ids(rec: Results, streams: list[_Seen]) -> None:
    check = "http.event-ids"
    owner: dict[str, str] = {}
    problems: list[str] = []
    for seen in streams:
        for event_id in seen.ids:
            if event_id in owner:
                where = "again" if owner[event_id] == seen.name else f"on {owner[event_id]} and"
                problems.append(f"event id {event_id!r} {where} {seen.name}")
            owner.setdefault(event_id, seen.name)
    if problems:
        rec.fail(check, "; ".join(problems[:3]), [m for s in streams for m in s.shown()])
    elif owner:
        rec.ok(check, f"{len(owner)} distinct event ids on {sum(1 for s in streams if s.ids)} streams")
    else:
        rec.skip(check, "the server sets no event ids")


async def _resume(
    rec: Results, url: str, get_headers: Mapping[str, str], raw: RawClient, get: _Seen, posts: list[_Seen]
) -> None:
    """GET with ``Last-Event-ID`` set to the first id of the first ping's stream: whatever is
    replayed must belong to that stream, never the other ping's answer or the GET stream's messages."""
    check = "http.resume"
    first = posts[0]
    if not first.ids:
        rec.skip(check, "the server set no event id on a POST stream")
        return
    headers = {**get_headers, hn.LAST_EVENT_ID_HEADER: first.ids[0]}
    replay = _Seen("GET with Last-Event-ID")
    try:
        async with raw.stream(url, "GET", headers) as stream:
            replay.status, replay.content_type = stream.status, stream.content_type
            if replay.sse:
                with trio.move_on_after(GRACE * 2):
                    await _read(stream, replay, lambda: False)
    except ProbeError as exc:
        rec.skip(check, f"no resumption: {exc}")
        return
    if not replay.sse:
        rec.skip(check, f"the server does not resume (HTTP {replay.status})")
        return

    def keys(seen: _Seen) -> set[str]:
        return {json.dumps(m, sort_keys=True) for m in seen.messages if isinstance(m, dict)}

    # (A message the resumed stream carried itself is its own, wherever else it went.)
    foreign = (keys(get) | keys(posts[1])) - keys(first)
    wrong = [m for m in replay.messages if isinstance(m, dict) and json.dumps(m, sort_keys=True) in foreign]
    shown = [exchange("GET", url, headers, status=replay.status), *replay.shown()]
    if wrong:
        rec.fail(check, f"resuming {first.name} replayed {len(wrong)} messages of another stream", shown)
    elif not replay.messages:
        # Replaying nothing is allowed (the server may keep no history) and shows nothing either.
        rec.skip(check, f"resuming {first.name} from {first.ids[0]!r} replayed no message: nothing to judge")
    else:
        own = sum(1 for m in replay.messages if _is_answer(m) and m.get("id") == _PING_IDS[0])
        rec.ok(
            check,
            f"resumed {first.name} from {first.ids[0]!r}: {len(replay.messages)} messages replayed"
            f" ({own} its own answer), none of another stream",
        )


def _judge_sse(rec: Results, revision: str, posts: list[_Seen]) -> None:
    sse = [p for p in posts if p.sse]
    if not sse:
        rec.skip("http.sse-priming", "the server answers POSTs with JSON")
        rec.skip("http.sse-response", "the server answers POSTs with JSON")
        return
    unprimed = [p.name for p in sse if not p.primed]
    if unprimed:
        rec.warn(
            "http.sse-priming",
            f"{', '.join(unprimed)}: the stream does not open with an id-only event",
            [m for p in sse for m in p.shown()],
        )
    else:
        rec.ok("http.sse-priming", f"{len(sse)} streams primed")
    unanswered = [p.name for p, i in zip(posts, _PING_IDS, strict=True) if p.sse and p.answer(i) is None]
    open_after = [p.name for p in sse if not p.ended]
    if unanswered or open_after:
        detail = "; ".join(
            [f"{n}: no response" for n in unanswered]
            + [f"{n}: still open {GRACE:g}s after the response" for n in open_after if n not in unanswered]
        )
        rec.warn("http.sse-response", detail, [m for p in sse for m in p.shown()])
    else:
        rec.ok("http.sse-response", f"{len(sse)} streams: the response, then the end")
