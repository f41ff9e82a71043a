"""Checks of the stateless era (2026-07-28): discovery, envelopes, results, input, caching.

Theory of operation
-------------------
The client negotiated with ``server/discover``; ``check_discover`` judges
the DiscoverResult it kept.  ``stateless_tour`` runs what only this era has:
the logging tool called once *with* a ``logLevel`` (every other request of
the run carries none, so any other ``notifications/message`` breaks the
logging rule) and a ``subscriptions/listen`` stream (``subscriptions.py``).
``check_discover`` also reads the extension identifiers the capabilities
declare (basic/versioning: ``_meta`` keys with a mandatory prefix).

Most checks are read off the recorded conversation afterwards
(``check_stateless_conversation``), since the trimcp client is lenient where
a server must be strict (an absent ``resultType`` is read as ``"complete"``):
every result must carry ``resultType`` and, by SHOULD, the server's identity;
cacheable complete results carry ``ttlMs``/``cacheScope``; every
InputRequiredResult the read-only calls met must be well-formed, ask only
for capabilities the client declared, and be followed by a retry (same
method and target, ``requestState`` echoed) that the server answers with a
result; the server must send no request of its own (basic/patterns: input
goes through InputRequiredResult).  The page-by-page cache rules
(``caching.py``) and the subscription traffic (``subscriptions.py``) are read
off the same recording.  ``input_target`` picks, from those, the request the raw probes in
``probes.py`` re-send.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.connection import stateless as sl
from ..._sansio.revisions import has_capability
from ..._trio.client.client_session import ClientSession
from ..evidence import received, sent
from ..model import Status
from ..recorder import RecordingStream
from ..results import Results, Tour
from ..values import example_arguments
from .caching import check_cache_scopes, check_interim_hints
from .subscriptions import check_subscription_traffic, listen_tour

CACHE_SCOPES = ("public", "private")
LOG_MESSAGE = "notifications/message"


# --------------------------------------------------------------------------- discovery


def check_discover(rec: Results, client: ClientSession) -> None:
    result = client.discover_result or {}
    problems: list[str] = []
    supported = result.get("supportedVersions")
    if not isinstance(supported, list) or client.protocol_version not in supported:
        problems.append(f"supportedVersions {supported!r} lacks {client.protocol_version}")
    if not isinstance(result.get("capabilities"), dict):
        problems.append("no capabilities object")
    hint = _cache_hint_problem(result)
    if hint:
        problems.append(hint)
    if problems:
        rec.fail("discover.result", "; ".join(problems), [{"received": {"result": result}}])
    else:
        rec.ok("discover.result", f"supportedVersions {', '.join(supported or [])}; ttlMs {result['ttlMs']}")
    _check_extension_ids(rec, result)
    info = _server_info(result)
    if info is None:
        rec.warn(
            "discover.server-info",
            "no _meta io.modelcontextprotocol/serverInfo with name and version",
            [{"received": {"result": result}}],
        )
    else:
        rec.ok("discover.server-info", f"{info['name']} {info['version']}")


#: A _meta key prefix (basic/index#meta): dot-separated labels, each starting with a letter and
#: ending with a letter or digit, hyphens inside; then "/" and a name that, unless empty,
#: begins and ends with an alphanumeric ([-_.] allowed inside).
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_EXTENSION_ID = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")


def _check_extension_ids(rec: Results, result: dict[str, Any]) -> None:
    """ "Extension identifiers MUST follow the _meta key naming rules, with a mandatory prefix."""
    check = "discover.extension-ids"
    caps = result.get("capabilities")
    extensions = caps.get("extensions") if isinstance(caps, dict) else None
    if not isinstance(extensions, dict) or not extensions:
        rec.skip(check, "the DiscoverResult declares no extensions")
        return
    bad = [k for k in extensions if not _EXTENSION_ID.fullmatch(k)]
    if bad:
        rec.fail(
            check,
            f"extension identifiers without a valid prefix: {', '.join(map(repr, bad[:4]))}",
            [{"received": {"capabilities": {"extensions": extensions}}}],
        )
    else:
        rec.ok(check, ", ".join(sorted(extensions)))


def _server_info(result: dict[str, Any]) -> dict[str, Any] | None:
    meta = result.get("_meta")
    info = meta.get(sl.SERVER_INFO_KEY) if isinstance(meta, dict) else None
    if isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str):
        return info
    return None


def _cache_hint_problem(result: dict[str, Any]) -> str | None:
    ttl = result.get("ttlMs")
    if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
        return "no ttlMs" if ttl is None else f"ttlMs {ttl!r} is not an integer >= 0"
    scope = result.get("cacheScope")
    if scope not in CACHE_SCOPES:
        return "no cacheScope" if scope is None else f"cacheScope {scope!r} is not public or private"
    return None


# --------------------------------------------------------------------------- the live part


async def stateless_tour(tour: Tour) -> None:
    await _log_with_level(tour)
    await listen_tour(tour)


def _logging_tool(tour: Tour) -> s.Tool | None:
    called = set(tour.called_tools)
    return next((t for t in tour.tools if t.name in called and "log" in t.name.lower()), None)


async def _log_with_level(tour: Tour) -> None:
    """Call the logging tool once with logLevel debug (the messages it sends are allowed)."""
    tool = _logging_tool(tour)
    if tool is None:
        return
    args = example_arguments(tool.input_schema) or {}
    start = len(tour.recording.received)
    tour.client.log_level = "debug"
    try:
        await tour.client.call_tool(tool.name, args)
    except TrimcpError:
        pass  # tools.call-read-only judged this tool already
    finally:
        tour.client.log_level = None
        tour.log_windows.append((start, len(tour.recording.received)))


# --------------------------------------------------------------------------- the recording


def check_stateless_conversation(tour: Tour, server_requests: list[str]) -> None:
    recording, rec = tour.recording, tour.rec
    missing_type: list[str] = []
    bad_type: list[str] = []
    no_info: set[str] = set()
    hint_problems: list[str] = []
    cacheable = total = 0
    #: check id -> the answers its verdict rests on (the first few)
    shown_by: dict[str, list[rpc.Response]] = {"type": [], "info": [], "hints": []}
    for request_id, (_, answer) in recording.answers().items():
        method = recording.sent_methods.get(request_id)
        if method is None or not isinstance(answer, rpc.Response):
            continue
        total += 1
        result = answer.result
        kind = result.get("resultType")
        before = len(missing_type) + len(bad_type)
        if "resultType" not in result:
            missing_type.append(method)
        elif kind not in (s.ResultType.COMPLETE, s.ResultType.INPUT_REQUIRED):
            bad_type.append(f"{method}: resultType {kind!r}")
        elif kind == s.ResultType.INPUT_REQUIRED and method not in sl.MRTR_METHODS:
            bad_type.append(f"{method}: input_required is not allowed there")
        if len(missing_type) + len(bad_type) > before:
            shown_by["type"].append(answer)
        if _server_info(result) is None:
            no_info.add(method)
            shown_by["info"].append(answer)
        if kind in (None, s.ResultType.COMPLETE) and method in s.CACHEABLE_METHODS:
            cacheable += 1
            problem = _cache_hint_problem(result)
            if problem:
                hint_problems.append(f"{method}: {problem}")
                shown_by["hints"].append(answer)
    if missing_type or bad_type:
        shown = [f"{m}: no resultType" for m in sorted(set(missing_type))] + bad_type
        count = len(missing_type) + len(bad_type)
        rec.fail(
            "stateless.result-type",
            f"{count} results without a valid resultType: " + "; ".join(shown[:4]),
            [received(a) for a in shown_by["type"][:3]],
        )
    elif total:
        rec.ok("stateless.result-type", f"{total} results")
    if no_info:
        rec.warn(
            "stateless.server-info",
            f"no serverInfo in results of {', '.join(sorted(no_info)[:6])}",
            [received(a) for a in shown_by["info"][:3]],
        )
    elif total:
        rec.ok("stateless.server-info", f"{total} results")
    if hint_problems:
        rec.fail("caching.hints", "; ".join(hint_problems[:4]), [received(a) for a in shown_by["hints"][:3]])
    elif cacheable:
        rec.ok("caching.hints", f"{cacheable} cacheable results")
    _check_input_chains(tour, server_requests)
    _check_log_messages(tour)
    check_cache_scopes(tour)
    check_interim_hints(tour)
    check_subscription_traffic(tour)


def _target(request: rpc.Request) -> Any:
    params = request.params or {}
    return params.get("name", params.get("uri"))


def _is_retry(request: rpc.Request) -> bool:
    params = request.params or {}
    return "inputResponses" in params or "requestState" in params


def input_required_answers(recording: RecordingStream) -> list[tuple[int, rpc.Request, rpc.Response]]:
    out = []
    for request_id, (index, answer) in recording.answers().items():
        request = recording.requests.get(request_id)
        if (
            request is not None
            and isinstance(answer, rpc.Response)
            and answer.result.get("resultType") == s.ResultType.INPUT_REQUIRED
        ):
            out.append((index, request, answer))
    return sorted(out, key=lambda item: item[0])


def _check_input_chains(tour: Tour, server_requests: list[str]) -> None:
    check, rec, recording = "mrtr.input-required", tour.rec, tour.recording
    _check_no_server_requests(tour, server_requests)
    declared = tour.client.connection.capabilities
    found = input_required_answers(recording)
    ordered = sorted(recording.requests.values(), key=lambda r: recording.sent_at[r.id])
    answers = recording.answers()
    for index, request, answer in found:
        what = f"{request.method} {_target(request)}"
        problem = input_requests_problem(answer.result, declared)
        if problem:
            rec.fail(check, f"{what}: {problem}", [sent(request), received(answer)])
            continue
        state = answer.result.get("requestState")
        retry = next(
            (
                r
                for r in ordered
                if recording.sent_at[r.id] > index
                and r.method == request.method
                and _target(r) == _target(request)
                and _is_retry(r)
                and (r.params or {}).get("requestState") == state
            ),
            None,
        )
        if retry is None:
            if _is_retry(request):
                # Allowed (a server may ask again until it has what it needs); the client gave up.
                rec.warn(
                    check,
                    f"{what}: still asking for input after the harness's last retry",
                    [sent(request), received(answer)],
                )
            else:
                rec.fail(check, f"{what}: no retry followed the InputRequiredResult", [sent(request), received(answer)])
            continue
        retry_answer = answers.get(retry.id)
        if retry_answer is None:
            rec.fail(check, f"{what}: the retry got no answer", [received(answer), sent(retry)])
        elif isinstance(retry_answer[1], rpc.ErrorResponse):
            err = retry_answer[1].error
            rec.fail(
                check,
                f"{what}: the retry with inputResponses was refused: {err.code} {err.message}",
                [received(answer), sent(retry), received(retry_answer[1])],
            )
    if found:
        rec.ok(check, f"{len(found)} InputRequiredResults answered and retried")


def _declared(request: rpc.Request) -> dict[str, Any]:
    """The client capabilities ``request`` itself declared (none: an empty object)."""
    meta = (request.params or {}).get("_meta")
    caps = meta.get(sl.CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return caps if isinstance(caps, dict) else {}


def input_kind_problem(ask: Any, declared: dict[str, Any]) -> str | None:
    """Beyond the method's capability: the kind of request it is must be declared too
    (client/elicitation: a mode the client supports, an empty ``elicitation`` meaning form
    only; client/sampling: a tool-enabled sampling needs ``sampling.tools``)."""
    if not isinstance(ask, dict):
        return None  # (input_required_problem says so)
    given = ask.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    if ask.get("method") == "elicitation/create":
        caps = declared.get("elicitation")
        modes = {m for m in ("form", "url") if isinstance(caps, dict) and caps.get(m) not in (None, False)}
        mode = params.get("mode", "form")
        if mode not in (modes or {"form"}):
            return f"a {mode!r} elicitation, a mode the client did not declare"
    if (
        ask.get("method") == "sampling/createMessage"
        and params.get("tools")
        and not has_capability(declared, ("sampling", "tools"))
    ):
        return "a tool-enabled sampling, and the client did not declare sampling.tools"
    return None


def input_requests_problem(result: dict[str, Any], declared: dict[str, Any]) -> str | None:
    """What is wrong with an InputRequiredResult answering a request that declared ``declared``."""
    problem = sl.input_required_problem(result, declared)
    requests = result.get("inputRequests")
    for key, ask in requests.items() if problem is None and isinstance(requests, dict) else ():
        kind = input_kind_problem(ask, declared)
        if kind:
            return f"inputRequests[{key!r}] is {kind}"
    return problem


def check_input_request_kinds(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    """Every InputRequiredResult of the run (the tour's and every probe's connection) asks
    only for ElicitRequest, CreateMessageRequest or ListRootsRequest, and only of kinds the
    request it answers declared in its own ``clientCapabilities`` (basic/patterns/mrtr)."""
    check = "mrtr.input-required"
    judged = asks = 0
    for recording in recordings:
        for _, request, answer in input_required_answers(recording):
            judged += 1
            declared = _declared(request)
            what = f"{request.method} {_target(request)}"
            requests = answer.result.get("inputRequests")
            asks += len(requests) if isinstance(requests, dict) else 0
            problem = input_requests_problem(answer.result, declared)
            if problem:
                caps = ", ".join(sorted(declared)) or "no capabilities"
                rec.fail(check, f"{what} declaring {caps}: {problem}", [sent(request), received(answer)])
                return
    if not judged:
        return
    before = rec.results.get(check)
    mine = (
        f"{judged} InputRequiredResults on {len(recordings)} connections asked {asks} input requests, "
        "each of a declared kind"
    )
    if before is None or before.status is Status.PASS:
        rec.ok(check, f"{before.detail}; run-wide, {mine}" if before is not None else mine)


def _check_no_server_requests(tour: Tour, server_requests: list[str]) -> None:
    """ "Servers MUST NOT initiate JSON-RPC requests" (basic/patterns): input goes through MRTR."""
    check = "mrtr.no-server-requests"
    if server_requests:
        mine = [m for _, m in tour.recording.messages() if isinstance(m, rpc.Request)]
        tour.rec.fail(
            check,
            f"the server sent requests ({', '.join(sorted(set(server_requests)))}) instead of InputRequiredResults",
            [received(m) for m in mine[:3]],
        )
    elif tour.recording.answers():
        tour.rec.ok(check, f"{len(tour.recording.answers())} requests answered; the server sent none of its own")
    else:
        tour.rec.skip(check, "the server answered no request")


def input_target(recording: RecordingStream) -> rpc.Request | None:
    """A first-round request that asked for input: elicitation only and a requestState preferred."""
    first_rounds = [(req, ans) for _, req, ans in input_required_answers(recording) if not _is_retry(req)]

    def rank(item: tuple[rpc.Request, rpc.Response]) -> int:
        result = item[1].result
        asks = result.get("inputRequests")
        methods = {r.get("method") for r in asks.values() if isinstance(r, dict)} if isinstance(asks, dict) else set()
        return (0 if isinstance(result.get("requestState"), str) else 2) + (
            0 if methods == {"elicitation/create"} else 1
        )

    return min(first_rounds, key=rank)[0] if first_rounds else None


def _check_log_messages(tour: Tour) -> None:
    check = "stateless.log-level"
    stray = allowed = 0
    strays: list[rpc.Notification] = []
    for index, msg in tour.recording.messages():
        if isinstance(msg, rpc.Notification) and msg.method == LOG_MESSAGE:
            if any(start <= index < end for start, end in tour.log_windows):
                allowed += 1
            else:
                stray += 1
                strays.append(msg)
    tool = _logging_tool(tour)
    if stray:
        rec_detail = f"{stray} notifications/message for requests without a logLevel"
        tour.rec.fail(check, rec_detail, [received(m) for m in strays[:3]])
    elif tool is None:
        tour.rec.skip(check, "no read-only logging tool to call")
    elif "logging" not in tour.client.server_capabilities:
        tour.rec.skip(check, f"{tool.name} is no logging tool: the server does not advertise logging")
    elif not allowed:
        # A name is no evidence: silence without a logLevel means something only from a
        # tool seen to log when asked to.
        tour.rec.skip(check, f"{tool.name} sent no notifications/message even with logLevel debug")
    else:
        tour.rec.ok(check, f"none while calling {tool.name} without a logLevel ({allowed} with logLevel debug)")
