"""Negative probes of the server features, on a fresh connection of their own.

Theory of operation
-------------------
Spec: ``server/utilities/pagination`` (error handling: invalid cursors -32602),
``server/prompts`` (error handling: invalid prompt name, missing required
arguments -32602), ``server/tools`` (error handling: malformed requests are
protocol errors; security: servers validate all tool inputs).

A correct client never sends these requests, so they do not go on the tour's
session: ``probe_features`` opens one connection (``initialize`` and
``notifications/initialized`` in the handshake era; ``server/discover`` and
the ``_meta`` envelope on every request in the stateless era) and sends them
one after the other.  None of them changes the server's state, so one cannot
spoil the next; only a probe that broke the connection makes the remaining
ones reopen it (at most ``_REOPENS`` times).  What is probed comes from the
tour's recording: the lists the server advertised, a listed prompt with a
required argument, the tools the calling policy lets the harness call (only
``probe_tools`` of them get invalid arguments).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.revisions import Era, get_revision
from ..evidence import received, sent
from ..results import Connector, Results, Tour
from ..values import invalid_arguments
from .probes import CLIENT_INFO, Answer, Probe, ProbeFailed, envelope, list_method, probe_connection
from .tool_calls import call_outcome

INVALID_CURSOR = "trimcp-check-invalid-cursor-\u00a7"
UNKNOWN_PROMPT = "trimcp-check-no-such-prompt-7d1f"
_REOPENS = 2
_LISTS = {
    "tools": ("tools/list",),
    "prompts": ("prompts/list",),
    "resources": ("resources/list", "resources/templates/list"),
}

#: One probe: the check it feeds, the request, and the judge of the answer.
Judge = Callable[[Results, rpc.Request, Answer], None]


@attrs.frozen
class _Planned:
    check: str
    method: str
    params: dict[str, Any]
    judge: Judge


def plan(tour: Tour, probe_tools: list[s.Tool], prompts: list[dict[str, Any]]) -> list[_Planned]:
    """The probes to send for what the server advertised (``prompts``: its listed prompts, raw)."""
    caps = tour.client.server_capabilities
    out: list[_Planned] = []
    revision = get_revision(tour.revision)
    # A server answering a feature it did not declare supports it undeclared (capabilities).
    for feature in ("tools", "prompts", "resources"):
        if feature not in caps:
            out.append(_Planned("features.declared", f"{feature}/list", {}, _judge_undeclared))
    if "completions" not in caps and revision.completions_capability:
        ref = {"ref": {"type": "ref/prompt", "name": UNKNOWN_PROMPT}, "argument": {"name": "a", "value": ""}}
        out.append(_Planned("features.declared", "completion/complete", ref, _judge_undeclared))
    if revision.era is Era.STATELESS:
        out.extend(
            _Planned("features.stable-lists", f"{feature}/list", {}, _stable_judge(tour, feature))
            for feature in ("tools", "prompts", "resources")
            if feature in caps
        )
    if "resources" in caps:
        out.append(
            _Planned("resources.invalid-uri", "resources/read", {"uri": "not a URI: \u00a7 <>"}, _judge_invalid_uri)
        )
    if "logging" in caps:
        if revision.era is Era.STATELESS:
            # server/utilities/logging (2026-07-28): an unrecognized logLevel in _meta is rejected.
            out.append(
                _Planned(
                    "logging.invalid-level",
                    list_method(caps) or "server/discover",
                    {"_meta": {"io.modelcontextprotocol/logLevel": "trimcp-bogus"}},
                    _judge_level,
                )
            )
        else:
            out.append(_Planned("logging.invalid-level", "logging/setLevel", {"level": "trimcp-bogus"}, _judge_level))
    if "completions" in caps:
        ref = {"ref": {"type": "ref/prompt", "name": UNKNOWN_PROMPT}, "argument": {"name": "a", "value": ""}}
        out.append(_Planned("completion.invalid-ref", "completion/complete", ref, _judge_32602))
    for feature, methods in _LISTS.items():
        if feature in caps:
            out.extend(
                _Planned("pagination.invalid-cursor", m, {"cursor": INVALID_CURSOR}, _judge_cursor) for m in methods
            )
    if "prompts" in caps:
        out.append(_Planned("prompts.unknown-name", "prompts/get", {"name": UNKNOWN_PROMPT}, _judge_32602))
        needy = next(
            (p for p in prompts if any(isinstance(a, dict) and a.get("required") for a in p.get("arguments") or ())),
            None,
        )
        if needy is not None:
            out.append(
                _Planned(
                    "prompts.missing-argument", "prompts/get", {"name": needy["name"], "arguments": {}}, _judge_32602
                )
            )
    if "tools" in caps:
        out.append(_Planned("tools.call-without-name", "tools/call", {"arguments": {}}, _judge_32602))
        judge = _refused_judge(accepted_tools(tour))
        for tool in probe_tools:
            bad = invalid_arguments(tool.input_schema)
            if bad is not None:
                out.append(
                    _Planned("tools.input-validation", "tools/call", {"name": tool.name, "arguments": bad}, judge)
                )
    return out


def skip_unplanned(rec: Results, tour: Tour, planned: list[_Planned]) -> None:
    caps = tour.client.server_capabilities
    ids = {p.check for p in planned}
    reasons = {
        "pagination.invalid-cursor": "the server offers no list",
        "prompts.unknown-name": "the server does not advertise prompts",
        "prompts.missing-argument": "no listed prompt has a required argument"
        if "prompts" in caps
        else "the server does not advertise prompts",
        "tools.call-without-name": "the server does not advertise tools",
        "features.declared": "the server advertises every feature",
        "features.stable-lists": "the server advertises no list",
        "resources.invalid-uri": "the server does not advertise resources",
        "logging.invalid-level": "the server does not advertise logging",
        "completion.invalid-ref": "the server does not advertise completions",
        "tools.input-validation": "no tool the calling policy allows has a required property to get wrong"
        if "tools" in caps
        else "the server does not advertise tools",
    }
    for check, why in reasons.items():
        if check not in ids:
            rec.skip(check, why)


async def probe_features(tour: Tour, probe_tools: list[s.Tool], timeout: float) -> None:
    rec = tour.rec
    planned = plan(tour, probe_tools, listed_prompts(tour))
    skip_unplanned(rec, tour, planned)
    queue = list(planned)
    for _ in range(_REOPENS + 1):
        if not queue:
            return
        current: _Planned | None = None
        try:
            async with _session(tour.connect, tour.revision, timeout) as (probe, params):
                while queue:
                    current = queue[0]
                    request = rpc.Request(len(queue) + 10, current.method, params(current.params))
                    answer = await probe.ask(request)
                    queue.pop(0)
                    current.judge(rec, request, answer)
                    current = None
        except ProbeFailed as exc:
            if current is None:
                rec.failed(
                    queue[0].check if queue else "pagination.invalid-cursor",
                    exc,
                    f"the probe connection could not be opened: {exc}",
                )
                return
            queue.pop(0)
            rec.failed(current.check, exc, f"{current.method} {_target(current.params)}: no answer ({exc})")


@asynccontextmanager
async def _session(
    connect: Connector, revision: str, timeout: float
) -> AsyncIterator[tuple[Probe, Callable[[dict[str, Any]], dict[str, Any]]]]:
    stateless = get_revision(revision).era is Era.STATELESS
    async with probe_connection(connect, timeout) as probe:
        if stateless:
            meta = envelope(revision)
            await probe.ask(rpc.Request(0, "server/discover", {"_meta": meta}))
            yield probe, lambda p: {**p, "_meta": {**meta, **(p.get("_meta") or {})}}
            return
        opened = await probe.ask(
            rpc.Request(
                0,
                "initialize",
                {
                    "protocolVersion": revision,
                    "capabilities": {},
                    "clientInfo": CLIENT_INFO,
                },
            )
        )
        if isinstance(opened, rpc.ErrorResponse):
            raise ProbeFailed(f"initialize failed: {opened.error.message}")
        chosen = opened.result.get("protocolVersion")
        probe.revision = chosen if isinstance(chosen, str) else revision
        await probe.tell(rpc.Notification("notifications/initialized"))
        yield probe, lambda p: dict(p)


def listed_prompts(tour: Tour) -> list[dict[str, Any]]:
    """The prompts of every prompts/list page the tour received."""
    out: list[dict[str, Any]] = []
    for request_id, (_, answer) in tour.recording.answers().items():
        if tour.recording.sent_methods.get(request_id) == "prompts/list" and isinstance(answer, rpc.Response):
            out.extend(p for p in answer.result.get("prompts") or () if isinstance(p, dict) and "name" in p)
    return out


def _target(params: dict[str, Any]) -> str:
    return str(params.get("name") or (params.get("cursor") and "with an invalid cursor") or "")


def _evidence(request: rpc.Request, answer: Answer) -> list[dict[str, Any]]:
    return [sent(request), received(answer)]


def _judge_cursor(rec: Results, request: rpc.Request, answer: Answer) -> None:
    check, ev = "pagination.invalid-cursor", _evidence(request, answer)
    if isinstance(answer, rpc.Response):
        rec.fail(check, f"{request.method} with an invalid cursor was answered with a result", ev)
    elif answer.error.code != rpc.INVALID_PARAMS:
        rec.warn(check, f"{request.method} with an invalid cursor: error {answer.error.code}, not -32602", ev)
    else:
        rec.ok(check, "-32602 for an invalid cursor on every list offered")


def _judge_32602(rec: Results, request: rpc.Request, answer: Answer) -> None:
    check = {
        "prompts/get": "prompts.missing-argument" if "arguments" in (request.params or {}) else "prompts.unknown-name",
        "completion/complete": "completion.invalid-ref",
    }.get(request.method, "tools.call-without-name")
    what = {
        "prompts.missing-argument": "prompts/get without its required arguments",
        "prompts.unknown-name": "prompts/get of an unknown prompt",
        "completion.invalid-ref": "completion/complete of an unknown prompt",
        "tools.call-without-name": "tools/call without a name",
    }[check]
    _expect_invalid_params(rec, check, what, request, answer)


def _expect_invalid_params(rec: Results, check: str, what: str, request: rpc.Request, answer: Answer) -> None:
    """A result fails ``check``, another error code warns (the page names -32602)."""
    ev = _evidence(request, answer)
    if isinstance(answer, rpc.Response):
        rec.fail(check, f"{what} was answered with a result", ev)
    elif answer.error.code != rpc.INVALID_PARAMS:
        rec.warn(check, f"{what}: error {answer.error.code}, not -32602", ev)
    else:
        rec.ok(check, f"{what}: -32602")


def accepted_tools(tour: Tour) -> set[str]:
    """The tools the tour called with valid arguments and saw succeed (``call_outcome``)."""
    recording, out = tour.recording, set()
    for request_id, (_, answer) in recording.answers().items():
        request = recording.requests.get(request_id)
        if request is None or request.method != "tools/call" or not isinstance(answer, rpc.Response):
            continue
        name = (request.params or {}).get("name")
        if isinstance(name, str) and call_outcome(answer.result) == "success":
            out.add(name)
    return out


def _refused_judge(accepted: set[str]) -> Judge:
    """server/tools: input validation errors are tool execution errors (isError) from 2025-11-25;
    a JSON-RPC error refuses the call just as well.  A refusal counts only for a tool seen to
    accept valid arguments: one that fails whatever it gets refuses invalid ones vacuously."""

    def judge(rec: Results, request: rpc.Request, answer: Answer) -> None:
        check, ev = "tools.input-validation", _evidence(request, answer)
        name = (request.params or {}).get("name")
        refused = (
            f"error {answer.error.code}"
            if isinstance(answer, rpc.ErrorResponse)
            else "an isError result"
            if answer.result.get("isError") is True
            else None
        )
        if refused is not None and name not in accepted:
            rec.skip(
                check,
                f"{name}: invalid arguments refused ({refused}), but no call with valid "
                "arguments succeeded: the refusal proves nothing",
            )
        elif refused is not None:
            rec.ok(check, f"{name}: valid arguments accepted, invalid ones refused with {refused}")
        elif isinstance(answer, rpc.Response) and answer.result.get("resultType") not in (None, s.ResultType.COMPLETE):
            rec.skip(check, f"{name}: answered {answer.result.get('resultType')!r}, not a refusal nor a result")
        else:
            rec.fail(check, f"{name}: arguments of the wrong type were accepted", ev)

    return judge


def _judge_undeclared(rec: Results, request: rpc.Request, answer: Answer) -> None:
    check = "features.declared"
    if isinstance(answer, rpc.Response):
        rec.fail(
            check, f"{request.method} answered with a result, its capability undeclared", _evidence(request, answer)
        )
    else:
        rec.ok(check, f"{request.method} refused ({answer.error.code}): the feature is not there undeclared")


def _judge_level(rec: Results, request: rpc.Request, answer: Answer) -> None:
    _expect_invalid_params(rec, "logging.invalid-level", f"{request.method} with an unknown log level", request, answer)


def _judge_invalid_uri(rec: Results, request: rpc.Request, answer: Answer) -> None:
    if isinstance(answer, rpc.Response):
        rec.fail("resources.invalid-uri", "a malformed URI was read successfully", _evidence(request, answer))
    else:
        rec.ok("resources.invalid-uri", f"a malformed URI: error {answer.error.code}")


_KEYS = {"tools": ("tools", "name"), "prompts": ("prompts", "name"), "resources": ("resources", "uri")}


def _stable_judge(tour: Tour, feature: str) -> Judge:
    """Compare the first ``feature`` list page of the probe connection with the tour's first one."""
    recording = tour.recording
    method, (key, field) = f"{feature}/list", _KEYS[feature]

    def _first_page_names(result: dict[str, Any]) -> list[str]:
        return [str(t.get(field)) for t in result.get(key) or () if isinstance(t, dict)]

    first = next(
        (
            answer
            for request_id, (_, answer) in sorted(recording.answers().items(), key=lambda kv: kv[1][0])
            if recording.sent_methods.get(request_id) == method
            and isinstance(answer, rpc.Response)
            and not (recording.requests[request_id].params or {}).get("cursor")
        ),
        None,
    )

    def judge(rec: Results, request: rpc.Request, answer: Answer) -> None:
        check = "features.stable-lists"
        if first is None or not isinstance(answer, rpc.Response):
            rec.skip(check, f"no two first pages of {method} to compare")
            return
        before, now = _first_page_names(first.result), _first_page_names(answer.result)
        if sorted(before) != sorted(now):
            rec.fail(
                check,
                f"{method} differs between connections: {before[:5]} vs {now[:5]}",
                [received(first), sent(request), received(answer)],
            )
        elif not before:
            # Two empty lists agree whatever the server does: nothing was compared.
            rec.skip(check, f"the first page of {method} is empty on both connections: nothing to compare")
        else:
            rec.ok(check, f"the same first page of {method} ({len(before)} {key}) on another connection")

    return judge
