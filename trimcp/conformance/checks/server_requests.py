"""What the server asked of the client: sampling, elicitation and roots requests, as a client sees them.

Theory of operation
-------------------
Spec: ``client/sampling`` (servers MUST NOT send tool-enabled requests unless
the client declared ``sampling.tools``; messages carry ``role`` and
``content``; a user message with tool results holds only tool results),
``client/elicitation`` (modes the client supports; every request a
``message``; form mode a ``requestedSchema``, URL mode a valid ``url`` and an
``elicitationId``; the -32042 error lists URL-mode elicitations with ids;
``notifications/elicitation/complete`` names an id the server established).

``judge_server_requests`` reads the recording once the tour is over.  In the
handshake era the requests are JSON-RPC requests from the server; in the
stateless era they are the ``inputRequests`` of InputRequiredResults.  Both
are judged against the capabilities the harness declared: the tour's (sampling
with tools, elicitation in form and URL mode, so that a server using them is
seen), and none on the negative-probe sessions (``judge_probe_sessions``).
Since the tour declares everything, what a client declaring less must not get
(tool-enabled sampling without ``sampling.tools``, URL mode without
``elicitation.url``) is seen on a session of its own: ``probe_narrow_session``
replays the tour's tool calls that led to such a request (at most
``MAX_REPLAYS``) on a connection declaring ``sampling: {}`` and
``elicitation: {}`` (form only), and judges what that session is asked.  A
server that used neither is not replayed.
Messages are read in the order they arrived, one session at a time: an
``elicitationId`` is established by a URL-mode request (or a -32042 error)
received earlier on that same session.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import trio

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._trio.client import open_client
from ..._trio.client.options import Handlers, Timeouts
from ..evidence import received
from ..model import Status
from ..recorder import RecordingStream
from ..results import Results, Tour

CHECK = "features.server-requests"


def requests_in(msg: rpc.Message) -> list[tuple[str, dict[str, Any]]]:
    """The requests one received message makes of the client: itself, or an InputRequiredResult's."""
    if isinstance(msg, rpc.Request):
        return [(msg.method, msg.params or {})]
    if isinstance(msg, rpc.Response) and msg.result.get("resultType") == s.ResultType.INPUT_REQUIRED:
        requests = msg.result.get("inputRequests")
        return [
            (r["method"], r.get("params") or {})
            for r in (requests.values() if isinstance(requests, dict) else ())
            if isinstance(r, dict) and isinstance(r.get("method"), str)
        ]
    return []


def judge_server_requests(tour: Tour) -> None:
    declared = tour.client.connection.capabilities or {}
    if judged := _judge_session(tour.rec, tour.recording, declared):
        tour.rec.ok(CHECK, f"{judged} sampling/elicitation requests, -32042 errors and completions")
    else:
        tour.rec.skip(CHECK, "the server asked for no sampling or elicitation")


def judge_probe_sessions(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    """The same judgement on the probe sessions, whose client declared no capabilities."""
    judged = sum(_judge_session(rec, recording, {}) for recording in recordings)
    previous = rec.results.get(CHECK)
    if judged and (previous is None or previous.status is Status.SKIP):
        rec.ok(CHECK, f"{judged} sampling/elicitation requests, -32042 errors and completions on probe sessions")


MAX_REPLAYS = 2
#: What the replay session declares: sampling without tools, elicitation in form mode only.
NARROW: dict[str, Any] = {"sampling": {}, "elicitation": {}}


def _needs_more(method: str, params: dict[str, Any]) -> bool:
    """A request only a client declaring more than ``NARROW`` may get."""
    if method == "sampling/createMessage":
        return bool(params.get("tools") or params.get("toolChoice"))
    return method == "elicitation/create" and params.get("mode", "form") != "form"


def replay_targets(recording: RecordingStream) -> list[rpc.Request]:
    """The tools/call requests of the tour during which the server asked for more than ``NARROW``."""
    out: list[rpc.Request] = []
    answers = recording.answers()
    for index, msg in recording.messages():
        if isinstance(msg, rpc.Request):
            # Handshake era: the tools/call sent before this request arrived and answered after it.
            calls = [
                r
                for i, r in recording.requests.items()
                if r.method == "tools/call"
                and recording.sent_at[i] <= index
                and answers.get(i, (len(recording.received),))[0] > index
            ]
        elif isinstance(msg, rpc.Response) and msg.id in recording.requests:
            calls = [recording.requests[msg.id]] if recording.requests[msg.id].method == "tools/call" else []
        else:
            continue
        if any(_needs_more(m, p) for m, p in requests_in(msg)):
            out.extend(c for c in calls[-1:] if not any(_same_call(c, o) for o in out))
    return out[:MAX_REPLAYS]


def _same_call(a: rpc.Request, b: rpc.Request) -> bool:
    pa, pb = a.params or {}, b.params or {}
    return bool(pa.get("name") == pb.get("name") and pa.get("arguments") == pb.get("arguments"))


async def _decline(params: s.ElicitRequestParams) -> dict[str, Any]:
    return {"action": "decline"}


async def _text(params: s.CreateMessageRequestParams) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "trimcp check"}, "model": "trimcp-check"}


async def probe_narrow_session(tour: Tour, timeout: float) -> None:
    """Replay the calls that asked for more on a session declaring ``NARROW``; judge what it is asked."""
    targets = replay_targets(tour.recording)
    if not targets:
        return
    recording: RecordingStream | None = None
    # (what arrived before the session broke or timed out is still judged)
    with contextlib.suppress(TrimcpError, trio.TooSlowError), trio.fail_after(timeout * (1 + len(targets))):
        async with tour.connect() as raw:
            recording = RecordingStream(raw)
            async with open_client(
                recording,
                revision=tour.revision,
                timeouts=Timeouts(connect=timeout, request=timeout),
                handlers=Handlers(sampling=_text, elicitation=_decline, roots=[]),
            ) as client:
                for call in targets:
                    params = call.params or {}
                    with contextlib.suppress(TrimcpError):
                        await client.call_tool(str(params.get("name")), params.get("arguments") or {})
    if recording is not None and (judged := _judge_session(tour.rec, recording, NARROW)):
        previous = tour.rec.results.get(CHECK)
        if previous is None or previous.status is Status.SKIP:
            tour.rec.ok(CHECK, f"{judged} sampling/elicitation requests on a session declaring {NARROW}")


def _judge_session(rec: Results, recording: RecordingStream, declared: dict[str, Any]) -> int:
    """Judge one session's recording; how many requests, errors and completions it held."""
    judged = 0
    # The ids established so far on this session: a completion must name one established
    # *earlier* (client/elicitation, "Completion Notifications for URL Mode Elicitation").
    elicitation_ids: set[str] = set()
    for _, msg in recording.messages():
        for method, params in requests_in(msg):
            problem = None
            if method == "sampling/createMessage":
                judged += 1
                problem = _sampling_problem(params, declared)
            elif method == "elicitation/create":
                judged += 1
                problem = _elicitation_problem(params, declared)
                if params.get("mode") == "url" and isinstance(params.get("elicitationId"), str):
                    elicitation_ids.add(params["elicitationId"])
            if problem:
                rec.fail(CHECK, f"{method}: {problem}", [received(msg)])
        if isinstance(msg, rpc.ErrorResponse) and msg.error.code == rpc.URL_ELICITATION_REQUIRED:
            judged += 1
            problem = _url_required_problem(msg.error.data)
            if problem:
                rec.fail(CHECK, f"error -32042: {problem}", [received(msg)])
            for item in (msg.error.data or {}).get("elicitations") or () if isinstance(msg.error.data, dict) else ():
                if isinstance(item, dict) and isinstance(item.get("elicitationId"), str):
                    elicitation_ids.add(item["elicitationId"])
        elif isinstance(msg, rpc.Notification) and msg.method == "notifications/elicitation/complete":
            judged += 1
            eid = (msg.params or {}).get("elicitationId")
            if not isinstance(eid, str) or eid not in elicitation_ids:
                rec.fail(
                    CHECK,
                    f"notifications/elicitation/complete names {eid!r}, which no earlier URL-mode "
                    "elicitation on this session established",
                    [received(msg)],
                )
    return judged


def _sampling_problem(params: dict[str, Any], declared: dict[str, Any]) -> str | None:
    sampling = declared.get("sampling")
    if not isinstance(sampling, dict):
        return "sent although the client did not declare sampling"
    if (params.get("tools") or params.get("toolChoice")) and "tools" not in sampling:
        return "tool-enabled, although the client did not declare sampling.tools"
    for message in params.get("messages") or ():
        if (
            not isinstance(message, dict)
            or message.get("role") not in ("user", "assistant")
            or "content" not in message
        ):
            return f"a message without role user/assistant and content: {message!r}"[:200]
        content = message["content"]
        blocks = content if isinstance(content, list) else [content]
        kinds = {b.get("type") for b in blocks if isinstance(b, dict)}
        if message["role"] == "user" and "tool_result" in kinds and kinds != {"tool_result"}:
            return "a user message mixes tool results with other content"
    return None


def _elicitation_problem(params: dict[str, Any], declared: dict[str, Any]) -> str | None:
    elicitation = declared.get("elicitation")
    if not isinstance(elicitation, dict):
        return "sent although the client did not declare elicitation"
    mode = params.get("mode", "form")
    # An empty elicitation capability means form mode only (client/elicitation, capabilities).
    supported = {m for m in ("form", "url") if m in elicitation} or {"form"}
    if mode not in supported:
        return f"mode {mode!r}, which the client did not declare"
    if not isinstance(params.get("message"), str):
        return "no message"
    if mode == "form":
        schema = params.get("requestedSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return "form mode without a requestedSchema of type object"
        return None
    url, eid = params.get("url"), params.get("elicitationId")
    if not _valid_url(url):
        return f"url {url!r} is not a valid absolute URL"
    if not isinstance(eid, str) or not eid:
        return "url mode without an elicitationId"
    return None


def _url_required_problem(data: Any) -> str | None:
    items = data.get("elicitations") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        return "no list of required elicitations in data.elicitations"
    for item in items:
        if not isinstance(item, dict) or item.get("mode") != "url" or not isinstance(item.get("elicitationId"), str):
            return f"an elicitation that is not URL mode with an elicitationId: {item!r}"[:200]
        # Each item is a URL-mode elicitation request's params: the URL-mode rules hold for it too.
        if problem := _elicitation_problem(item, {"elicitation": {"url": {}}}):
            return f"elicitation {item['elicitationId']!r}: {problem}"
    return None


#: An RFC 3986 scheme; the characters no URL may hold unescaped (RFC 3986 section 2, WHATWG's
#: forbidden code points): a server author's relative path or pasted text fails, an IRI passes.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_FORBIDDEN = frozenset('<>"{}|\\^`')


def _valid_url(url: Any) -> bool:
    """An absolute URL: a scheme and nothing forbidden; after ``//`` a numeric port, and for the
    schemes whose URLs name a host (WHATWG "special" schemes but ``file``) a host."""
    if not isinstance(url, str) or any(c.isspace() or ord(c) < 0x20 or c == "\x7f" or c in _FORBIDDEN for c in url):
        return False
    parts = urlsplit(url)
    if not _SCHEME.fullmatch(parts.scheme) or url[len(parts.scheme) + 1 :] == "":
        return False
    try:
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError:
        return False
    return bool(parts.hostname) or parts.scheme.lower() not in ("http", "https", "ws", "wss", "ftp")
