"""Probes that need a pristine connection and raw JSON-RPC.

Theory of operation
-------------------
Some checks ask the server something a correct client never says: a revision
that does not exist (``1999-01-01``), a stateless-era request without its
``_meta`` envelope, an InputRequiredResult retry whose ``requestState`` was
altered, a request declaring no client capabilities, a method whose
capability the server did not advertise.  The trimcp client rightly refuses
to send these, so each probe opens a *new* connection through the run's
``Connector`` (another server process on stdio), writes the messages itself
and reads the answers by id, skipping whatever else the server sends
meanwhile; the client's own ``Connection`` is never touched.  One connection
per probe: a server that drops the connection after a malformed request must
not fail the next probe too.

* ``capabilities.gating`` (both eras): on a session of its own (handshake:
  ``initialize`` and ``notifications/initialized`` first; stateless: a
  ``server/discover`` first), the ``*/list`` of a feature the server did not
  advertise should be refused.

* ``lifecycle.unsupported-version`` (handshake era): ``initialize`` offering
  1999-01-01 must be answered with a revision the server supports.
* ``stateless.unsupported-version`` and ``versioning.initialize-error``: in
  ``version_probes.py``, since they need to know what the server implements
  (``versions.py``), which is itself probed with this module's ``exchange``.
* ``stateless.missing-envelope``: after a proper ``server/discover`` (so a
  dual-era server knows it is spoken to in the stateless era), a list request
  without ``_meta`` must get -32602.
* ``mrtr.input-required`` / ``mrtr.tampered-state``: the request that asked
  for input during the tour is re-sent declaring no capabilities (it must not
  ask for what was not declared), then with them, its input answered, and
  the retry carrying a ``requestState`` with one character changed (it should
  be refused); then, each time after asking afresh, retries whose
  ``inputResponses`` lack the input (``mrtr.missing-responses``: ask again),
  carry an unexpected key (``mrtr.extra-responses``: ignore it) or are no
  object (``mrtr.invalid-responses``: refuse), all on that one connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.connection import stateless as sl
from ..._sansio.revisions import ALL_VERSIONS, Era, get_revision
from ..._trio.stream import MessageStream, RequestFailed, SendMeta, StreamLost, meta_for
from .. import evidence
from ..recorder import RecordingStream
from ..results import Connector, Results
from ..timeouts import note_timeout, timed_out_after

BOGUS_REVISION = "1999-01-01"
CLIENT_INFO = {"name": "trimcp-check", "version": "0"}
#: Canned answers to the input requests of an InputRequiredResult.
CANNED_INPUT: dict[str, dict[str, Any]] = {
    "elicitation/create": {"action": "decline"},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "trimcp check"},
        "model": "trimcp-check",
    },
    "roots/list": {"roots": []},
}

Answer = rpc.Response | rpc.ErrorResponse
Ask = Callable[[rpc.Request], Awaitable[Answer]]


class ProbeFailed(Exception):
    """The probe connection broke or went silent; ``seconds`` is the time limit that ended
    it, when one did (then what it left unjudged is "not reached", ``Results.failed``)."""

    def __init__(self, message: str, *, seconds: float | None = None) -> None:
        super().__init__(message)
        self.seconds = seconds


@attrs.define
class Probe:
    """A raw connection: send requests and notifications as written, read answers by id."""

    stream: MessageStream
    #: The revision messages go out under once a probe negotiated one (the HTTP transport
    #: sends it as ``MCP-Protocol-Version``); ``None``: nothing negotiated.
    revision: str | None = None

    def meta(self, message: rpc.Message) -> SendMeta:
        """What the transport must know of ``message`` (``meta_for``: the messages are as written)."""
        return meta_for(message, self.revision)

    async def ask(self, request: rpc.Request) -> Answer:
        await self.stream.send(request, self.meta(request))
        return await answer_to(self.stream, request.id)

    async def tell(self, notification: rpc.Notification) -> None:
        await self.stream.send(notification, self.meta(notification))


async def exchange(connect: Connector, requests: Sequence[rpc.Request], timeout: float) -> list[Answer]:
    """Open a connection, send each request after the previous one is answered, return the answers."""
    async with probe_connection(connect, timeout) as probe:
        return [await probe.ask(request) for request in requests]


@asynccontextmanager
async def probe_connection(connect: Connector, timeout: float) -> AsyncIterator[Probe]:
    """A fresh connection as a ``Probe``; the whole block runs under ``timeout``.

    A broken or silent connection raises ``ProbeFailed``."""
    try:
        with trio.fail_after(timeout):
            async with connect() as stream:
                yield Probe(RecordingStream(stream))
    except (TrimcpError, trio.TooSlowError) as exc:
        seconds = timeout if isinstance(exc, trio.TooSlowError) else timed_out_after(exc)
        if seconds is not None:
            note_timeout(seconds)  # what it left unjudged is "not reached", not "not applicable"
        why = (
            "still silent when the time was up" if isinstance(exc, trio.TooSlowError) else f"{type(exc).__name__} {exc}"
        )
        raise ProbeFailed(why.strip(), seconds=seconds) from exc


async def answer_to(
    stream: MessageStream,
    request_id: rpc.RequestId,
    other: Callable[[rpc.Message], Awaitable[None]] | None = None,
) -> Answer:
    """The answer to ``request_id``; every other message received meanwhile goes to ``other``
    (when given), and the transport's word that the answer is lost is raised."""
    while True:
        item = await stream.receive()
        if isinstance(item, RequestFailed):
            if item.request_id == request_id:
                raise item.error
            continue
        if isinstance(item, StreamLost):
            continue
        for msg in item.payload.messages:
            if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id == request_id:
                return msg
            if other is not None:
                await other(msg)


def envelope(revision: str, capabilities: dict[str, Any] | None = None, version: str | None = None) -> dict[str, Any]:
    return sl.build_envelope(version or revision, capabilities or {}, CLIENT_INFO, None)


def list_method(capabilities: dict[str, Any]) -> str | None:
    """A harmless request the server advertised, to probe with."""
    for feature in ("tools", "prompts", "resources"):
        if feature in capabilities:
            return f"{feature}/list"
    return None


# --------------------------------------------------------------------------- both eras

#: The feature whose capability gates each list method (spec: basic/lifecycle, capability negotiation).
_LIST_OF = {"prompts": "prompts/list", "resources": "resources/list", "tools": "tools/list"}


async def probe_gating(
    rec: Results, connect: Connector, revision: str, capabilities: dict[str, Any], timeout: float
) -> None:
    """Ask for the list of a feature the server did not advertise, on a session of our own."""
    check = "capabilities.gating"
    absent = next((feature for feature in _LIST_OF if feature not in capabilities), None)
    if absent is None:
        rec.skip(check, "the server advertises tools, resources and prompts")
        return
    method = _LIST_OF[absent]
    stateless = get_revision(revision).era is Era.STATELESS
    try:
        async with probe_connection(connect, timeout) as probe:
            if stateless:
                meta = {"_meta": envelope(revision)}
                await probe.ask(rpc.Request(0, "server/discover", meta))
                answer = await probe.ask(rpc.Request(1, method, meta))
            else:
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
                    rec.fail(check, f"initialize on a fresh connection failed: {opened.error.message}")
                    return
                chosen = opened.result.get("protocolVersion")
                probe.revision = chosen if isinstance(chosen, str) else revision
                await probe.tell(rpc.Notification("notifications/initialized"))
                answer = await probe.ask(rpc.Request(1, method, {}))
    except ProbeFailed as exc:
        rec.failed(check, exc, f"{method} got no answer: {exc}")
        return
    if isinstance(answer, rpc.Response):
        rec.warn(check, f"{method} answered although {absent} was not advertised")
    else:
        rec.ok(check, f"{method} refused with {answer.error.code}")


# --------------------------------------------------------------------------- handshake era


async def probe_handshake_version(rec: Results, connect: Connector, timeout: float) -> None:
    request = rpc.Request(
        0,
        "initialize",
        {
            "protocolVersion": BOGUS_REVISION,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        },
    )
    try:
        [answer] = await exchange(connect, [request], timeout)
    except ProbeFailed as exc:
        rec.failed("lifecycle.unsupported-version", exc, f"no answer: {exc}")
        return
    if isinstance(answer, rpc.Response):
        chosen = answer.result.get("protocolVersion")
        if chosen in ALL_VERSIONS:
            rec.ok("lifecycle.unsupported-version", f"offered {BOGUS_REVISION}, got {chosen}")
        else:
            rec.fail("lifecycle.unsupported-version", f"offered {BOGUS_REVISION}, got {chosen!r}")
    else:
        rec.fail("lifecycle.unsupported-version", f"answered with an error: {answer.error.message}")


# --------------------------------------------------------------------------- stateless era


async def probe_missing_envelope(
    rec: Results,
    connect: Connector,
    revision: str,
    capabilities: dict[str, Any],
    timeout: float,
    dual_era: bool,
) -> None:
    check = "stateless.missing-envelope"
    method = list_method(capabilities) or "server/discover"
    requests = [
        rpc.Request(0, "server/discover", {"_meta": envelope(revision)}),
        rpc.Request(1, method, {}),
    ]
    try:
        answers = await exchange(connect, requests, timeout)
    except ProbeFailed as exc:
        rec.failed(check, exc, f"no answer: {exc}")
        return
    answer = answers[1]
    shown = [evidence.sent(requests[1]), evidence.received(answer)]
    if isinstance(answer, rpc.Response):
        rec.fail(check, f"{method} without _meta was answered with a result", shown)
    elif answer.error.code == rpc.INVALID_PARAMS:
        rec.ok(check, f"{method} without _meta: -32602")
    elif dual_era:
        # A dual-era server may take an envelope-less request for a legacy one.
        rec.warn(check, f"{method} without _meta: error {answer.error.code}, the spec names -32602", shown)
    else:
        rec.fail(check, f"{method} without _meta: error {answer.error.code}, not -32602", shown)


async def probe_input_requests(
    rec: Results,
    connect: Connector,
    revision: str,
    capabilities: dict[str, Any],
    original: rpc.Request,
    timeout: float,
) -> None:
    """Re-send ``original`` (a request that asked for input) without, then with, capabilities."""
    params = {k: v for k, v in (original.params or {}).items() if k not in ("_meta", "inputResponses", "requestState")}
    bare = rpc.Request(0, original.method, {**params, "_meta": envelope(revision, {})})
    full = rpc.Request(1, original.method, {**params, "_meta": envelope(revision, capabilities)})
    stage = "mrtr.input-required"
    try:
        async with probe_connection(connect, timeout) as probe:
            _judge_undeclared(rec, original, bare, await probe.ask(bare))
            first = await probe.ask(full)
            stage = "mrtr.tampered-state"
            await _tampered_state(rec, probe.ask, original, full, first)
            # Each retry below is a request of its own (stateless), so one cannot spoil the next.
            for check, variant in RETRY_VARIANTS:
                stage = check
                await _retry_variant(rec, probe.ask, original, full, check, variant)
    except ProbeFailed as exc:
        rec.failed(stage, exc, f"re-sending {_describe(original)}: {exc}")


# basic/patterns/mrtr, error handling: the inputResponses of a retry, altered three ways.
UNEXPECTED_KEY = "trimcp-check-unexpected"
RETRY_VARIANTS: tuple[tuple[str, str], ...] = (
    ("mrtr.missing-responses", "missing"),
    ("mrtr.extra-responses", "extra"),
    ("mrtr.invalid-responses", "invalid"),
)


async def _retry_variant(
    rec: Results,
    ask: Ask,
    original: rpc.Request,
    full: rpc.Request,
    check: str,
    variant: str,
) -> None:
    """Ask afresh for input (a requestState may be single-use), then retry with altered inputResponses."""
    base = 10 + 2 * [v for _, v in RETRY_VARIANTS].index(variant)
    first = await ask(rpc.Request(base, full.method, full.params))
    if not (isinstance(first, rpc.Response) and first.result.get("resultType") == s.ResultType.INPUT_REQUIRED):
        rec.skip(check, f"{_describe(original)} did not ask for input again")
        return
    requests = first.result.get("inputRequests")
    if variant != "invalid" and not (isinstance(requests, dict) and requests):
        rec.skip(check, f"{_describe(original)}: the InputRequiredResult asks for no input")
        return
    canned = {
        key: CANNED_INPUT.get(str(req.get("method")), {})
        for key, req in (requests or {}).items()
        if isinstance(req, dict)
    }
    responses: Any = {
        "missing": {},
        "extra": {**canned, UNEXPECTED_KEY: {"action": "decline"}},
        "invalid": ["not", "a", "map"],
    }[variant]
    state = first.result.get("requestState")
    params = {**{k: v for k, v in (full.params or {}).items()}, "inputResponses": responses}
    if isinstance(state, str):
        params["requestState"] = state
    retry = rpc.Request(base + 1, full.method, params)
    answer = await ask(retry)
    shown = [evidence.sent(retry), evidence.received(answer)]
    what = _describe(original)
    again = isinstance(answer, rpc.Response) and answer.result.get("resultType") == s.ResultType.INPUT_REQUIRED
    if variant == "missing":
        if isinstance(answer, rpc.ErrorResponse):
            rec.warn(
                check,
                f"{what} retried without the requested input: error {answer.error.code} "
                f"({answer.error.message}), not a new InputRequiredResult",
                shown,
            )
        else:
            rec.ok(check, f"{what} retried without input: " + ("asked again" if again else "completed"))
    elif variant == "extra":
        if isinstance(answer, rpc.ErrorResponse):
            rec.warn(
                check,
                f"{what}: an unexpected inputResponses key {UNEXPECTED_KEY!r} was refused with "
                f"{answer.error.code} ({answer.error.message})",
                shown,
            )
        else:
            rec.ok(check, f"{what}: the unexpected inputResponses key was ignored")
    elif isinstance(answer, rpc.ErrorResponse):
        rec.ok(check, f"{what}: inputResponses that is not an object refused with {answer.error.code}")
    elif again:
        # Not the error the sentence names, but the invalid value was not taken for input either.
        rec.ok(check, f"{what}: inputResponses that is not an object was not taken for input (asked again)")
    else:
        rec.warn(check, f"{what}: completed with an inputResponses that is not an object", shown)


def _judge_undeclared(rec: Results, original: rpc.Request, bare: rpc.Request, answer: Answer) -> None:
    # An error (-32021) or a result without input are both fine; the retries were judged already.
    if isinstance(answer, rpc.Response) and answer.result.get("resultType") == s.ResultType.INPUT_REQUIRED:
        problem = sl.input_required_problem(answer.result, {})
        if problem:
            rec.fail(
                "mrtr.input-required",
                f"{_describe(original)} declaring no capabilities: {problem}",
                [evidence.sent(bare), evidence.received(answer)],
            )


async def _tampered_state(rec: Results, ask: Ask, original: rpc.Request, full: rpc.Request, first: Answer) -> None:
    check = "mrtr.tampered-state"
    if not (isinstance(first, rpc.Response) and first.result.get("resultType") == s.ResultType.INPUT_REQUIRED):
        rec.skip(check, f"{_describe(original)} did not ask for input again")
        return
    state = first.result.get("requestState")
    if not isinstance(state, str) or not state:
        rec.skip(check, f"{_describe(original)}: the InputRequiredResult has no requestState")
        return
    requests = first.result.get("inputRequests") or {}
    responses = {
        key: CANNED_INPUT.get(str(req.get("method")), {}) for key, req in requests.items() if isinstance(req, dict)
    }
    retry = rpc.Request(2, full.method, sl.retry_params(full.params, responses, tamper(state)))
    answer = await ask(retry)
    if isinstance(answer, rpc.ErrorResponse):
        rec.ok(check, f"modified requestState refused with {answer.error.code}")
    elif answer.result.get("resultType") == s.ResultType.INPUT_REQUIRED:
        rec.ok(check, "modified requestState not trusted: the server asked for input again")
    else:
        rec.warn(
            check,
            f"{_describe(original)} completed with a modified requestState",
            [evidence.received(first), evidence.sent(retry), evidence.received(answer)],
        )


def tamper(state: str) -> str:
    """``state`` with the character in the middle replaced by another."""
    pos = len(state) // 2
    swap = "A" if state[pos] != "A" else "B"
    return state[:pos] + swap + state[pos + 1 :]


def _describe(request: rpc.Request) -> str:
    params = request.params or {}
    target = params.get("name") or params.get("uri")
    return f"{request.method} {target}" if target else request.method
