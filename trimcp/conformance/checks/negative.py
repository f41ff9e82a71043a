"""Negative probes of the base protocol: malformed messages, unknown methods, stray notifications.

Theory of operation
-------------------
The specification's ``basic`` page (Messages) binds every message to
JSON-RPC 2.0 and says the receiver of a notification "MUST NOT send a
response"; the cancellation pages (``basic/utilities/cancellation``, and
``basic/patterns/cancellation`` in 2026-07-28) say invalid cancellation
notifications "SHOULD be ignored".  A correct client never sends what tests
these, so the probes run on fresh connections (``probes.probe_connection``),
wrapped in a ``RecordingStream`` handed back to the runner so that the
conversation checks see what the probe connections received too.

One connection carries them all, in an order where no probe can spoil the
next (each waits for its answer before the next):

1. handshake era: ``tools/list`` before ``initialize`` (not judged: the
   lifecycle page names no answer, its SHOULD NOT is the client's), then the
   handshake itself with a ``ping`` before ``notifications/initialized``
   (``lifecycle.before-initialize``: the server SHOULD NOT send requests
   other than pings before it);
2. malformed messages, on every transport (``checks/malformed.py`` carries
   the bytes: a line or a text frame followed by a sentinel request, or a raw
   POST with the session's headers): invalid JSON (``jsonrpc.parse-error``:
   -32700), a request without ``method`` and a bare number
   (``jsonrpc.invalid-request``: -32600), requests whose ``params`` is an array
   and a string (``jsonrpc.invalid-params``).  The sentinel proves silence in
   one round trip; when not even it is answered within the run's timeout the
   check is "not reached: timed out", not judged;
3. an unknown method (``jsonrpc.unknown-method``);
4. three notifications (cancelling an id never sent, cancelling an id already
   answered, a notification nobody defined) followed by a liveness request: no
   response may arrive for them (``jsonrpc.notification-no-response``) and
   the liveness request must still be answered (``cancellation.ignored``);
5. a cancellation in flight (``cancellation.honoured``).

A probe that breaks the connection (it closed, or went silent past the bound)
ends the sequence there; the remaining probes run on one new connection.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import trio

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio.revisions import REVISIONS, Era, get_revision
from ..._trio.stream import RequestFailed, StreamLost, meta_for
from ..evidence import received, sent
from ..recorder import RecordingStream
from ..results import Connector, Results
from ..timeouts import note_timeout
from .malformed import Broken, Heard, deliver, is_http
from .probes import CLIENT_INFO, envelope

#: How long a malformed message may wait for its answer (capped by the run's timeout).
ANSWER_BOUND = 5.0
NO_SUCH_METHOD = "trimcp-check/no-such-method"

Stray = list[rpc.Message]


class _ProbeConnection:
    """One probe connection: raw or typed sends, answers read by id within a bound."""

    def __init__(self, stream: RecordingStream, revision: str, bound: float, wait: float | None = None) -> None:
        self.stream = stream
        self.revision = revision
        self.stateless = get_revision(revision).era is Era.STATELESS
        self.bound = bound
        #: How long a malformed message and its sentinel may wait (the run's timeout).
        self.wait = bound if wait is None else wait
        #: The ids of the sentinels sent; a late answer to one is nobody's stray.
        self.sentinels: set[rpc.RequestId] = set()
        #: HTTP: whether the session's own messages are known to be through (see ``malformed``).
        self._settled = False
        #: The revision messages go out under once initialize chose one (``None`` before).
        self.sent_under: str | None = None
        self._next = 0
        #: A read-only tool (name, arguments) that runs long enough to be cancelled in flight.
        self.cancel_target: tuple[str, dict[str, Any]] | None = None

    @property
    def raw(self) -> bool:
        return is_http(self.stream) or callable(getattr(self.stream.inner, "send_raw", None))

    @property
    def live_method(self) -> str:
        return "server/discover" if self.stateless else "ping"

    def sentinel(self) -> rpc.Request:
        return rpc.Request(self.new_id(), self.live_method, self.params())

    def new_id(self) -> str:
        self._next += 1
        return f"neg-{self._next}"

    def params(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        out = dict(extra or {})
        if self.stateless:
            out["_meta"] = envelope(self.revision)
        return out

    async def malformed(self, data: bytes, ids: tuple[rpc.RequestId | None, ...]) -> Heard:
        """Deliver one malformed message; what the server said about it (``malformed.deliver``)."""
        try:
            obj = json.loads(data)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("id"), (str, int)):
            # So that the conversation checks know the answer's id was sent.
            self.stream.sent_methods[obj["id"]] = str(obj.get("method", ""))
        self.stream.note_raw(id_readable(obj))
        if is_http(self.stream) and not self._settled:
            # The transport POSTs each message from a task of its own: one answered request
            # makes sure the handshake's last notification is through before a raw POST.
            await self.ask(self.live_method)
            self._settled = True
        return await deliver(self.stream, data, ids, self.sentinel, self.wait, self.sentinels)

    async def send(self, msg: rpc.Message) -> None:
        try:
            await self.stream.send(msg, meta_for(msg, self.sent_under))
        except TrimcpError as exc:
            raise Broken(f"writing failed: {exc}") from exc

    async def answer(self, ids: tuple[rpc.RequestId | None, ...]) -> tuple[rpc.Message | None, Stray]:
        """The first response whose id is in ``ids``; ``None`` after the bound.  Other responses
        that arrived meanwhile are returned as strays."""
        strays: Stray = []
        with trio.move_on_after(self.bound):
            while True:
                try:
                    item = await self.stream.receive()
                except TrimcpError as exc:
                    raise Broken(f"the connection closed: {exc}") from exc
                if isinstance(item, (RequestFailed, StreamLost)):
                    if isinstance(item, RequestFailed) and item.request_id in ids:
                        raise Broken(f"the request failed: {item.error}")
                    continue
                for msg in item.payload.messages:
                    if isinstance(msg, (rpc.Response, rpc.ErrorResponse)):
                        if msg.id in ids:
                            return msg, strays
                        if msg.id not in self.sentinels:
                            strays.append(msg)
        return None, strays

    async def first_progress(self, request_id: rpc.RequestId) -> rpc.Message | None:
        """The answer to ``request_id`` or the first progress for it, whichever comes first."""
        with trio.move_on_after(self.bound):
            while True:
                try:
                    item = await self.stream.receive()
                except TrimcpError as exc:
                    raise Broken(f"the connection closed: {exc}") from exc
                if isinstance(item, (RequestFailed, StreamLost)):
                    continue
                for msg in item.payload.messages:
                    if isinstance(msg, (rpc.Response, rpc.ErrorResponse)) and msg.id == request_id:
                        return msg
                    if (
                        isinstance(msg, rpc.Notification)
                        and msg.method == "notifications/progress"
                        and (msg.params or {}).get("progressToken") == request_id
                    ):
                        return msg
        return None

    async def ask(self, method: str, params: dict[str, Any] | None = None) -> tuple[rpc.Request, rpc.Message]:
        request = rpc.Request(self.new_id(), method, self.params(params))
        await self.send(request)
        answer, _ = await self.answer((request.id,))
        if answer is None:
            raise Broken(f"{method} got no answer within {self.bound:g} s", seconds=self.bound)
        return request, answer


def id_readable(obj: Any) -> bool:
    """Whether a malformed text's id can be read: it is a well-formed JSON-RPC request (only its
    params are wrong for the method).  basic (Error Responses) excepts from the same-id rule only
    "error cases where the ID could not be read due a malformed request": invalid JSON, a
    non-object, a request without ``method`` or with params that are no structured value."""
    return (
        isinstance(obj, dict)
        and obj.get("jsonrpc") == "2.0"
        and isinstance(obj.get("id"), (str, int))
        and not isinstance(obj.get("id"), bool)
        and isinstance(obj.get("method"), str)
        and isinstance(obj.get("params", {}), (dict, list))
    )


def _code(msg: rpc.Message | None) -> int | None:
    return msg.error.code if isinstance(msg, rpc.ErrorResponse) else None


def _raw(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


Step = Callable[[Results, _ProbeConnection], Any]


def _judge(
    rec: Results,
    check: str,
    what: str,
    heard: Heard,
    fits: tuple[int, ...],
    sess: _ProbeConnection,
) -> bool:
    """Judge what the server said about one malformed message against the error codes that
    ``fits``; True when it fits.  One oracle whatever the transport carried (``malformed``)."""
    evidence = list(heard.evidence)
    expected = " or ".join(map(str, fits))
    if heard.timed_out:
        rec.skip(
            check,
            f"not reached: timed out after {sess.wait:g} s ({what}: neither it nor the "
            f"{sess.live_method} sent behind it got an answer)",
        )
        raise Broken(f"{what}: no answer within {sess.wait:g} s", seconds=sess.wait)
    if heard.answer is not None:
        code = heard.code
        if code in fits:
            return True
        rec.fail(check, f"{what} answered with {_describe(heard.answer)}, not {expected}", evidence)
        return False
    if heard.status is not None and heard.status >= 400:
        # The Streamable HTTP transport lets an HTTP error status refuse input the server cannot
        # accept, its body a JSON-RPC error only MAY; JSON-RPC itself asks for the error object.
        rec.warn(check, f"{what} refused with HTTP {heard.status} but no JSON-RPC error ({expected})", evidence)
        return False
    if heard.status is not None:
        rec.fail(check, f"{what} accepted with HTTP {heard.status}: no error ({expected}) answers it", evidence)
        return False
    rec.fail(check, f"{what} got no answer (the {sess.live_method} sent right behind it was answered)", evidence)
    return False


async def _parse_error(rec: Results, sess: _ProbeConnection) -> None:
    check = "jsonrpc.parse-error"
    text = b'{"jsonrpc": "2.0", "id": "neg-parse", "method": "ping"'
    heard = await sess.malformed(text, (None, "neg-parse"))
    if _judge(rec, check, "invalid JSON", heard, (rpc.PARSE_ERROR,), sess):
        rec.ok(check, f"invalid JSON: {_how(heard)}")


async def _invalid_request(rec: Results, sess: _ProbeConnection) -> None:
    check = "jsonrpc.invalid-request"
    for what, text, ids in (
        ("a request without method", _raw({"jsonrpc": "2.0", "id": "neg-nomethod"}), (None, "neg-nomethod")),
        ("a bare number", b"42", (None,)),
    ):
        heard = await sess.malformed(text, ids)
        if not _judge(rec, check, what, heard, (rpc.INVALID_REQUEST,), sess):
            return
    rec.ok(check, f"a request without method and a non-object: {_how(heard)}")


def _how(heard: Heard) -> str:
    return f"error {heard.code}" + (f" (HTTP {heard.status})" if heard.status is not None else "")


async def _before_initialize(rec: Results, sess: _ProbeConnection) -> None:
    # An early request (not judged: that a client SHOULD NOT send one is the client's duty, and
    # the lifecycle page names no answer); its answer still feeds jsonrpc.error-codes.
    request = rpc.Request(sess.new_id(), "tools/list", {})
    await sess.send(request)
    await sess.answer((request.id,))


async def _initialize(rec: Results, sess: _ProbeConnection) -> None:
    _, answer = await sess.ask(
        "initialize",
        {
            "protocolVersion": sess.revision,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        },
    )
    if not isinstance(answer, rpc.Response):
        rec.skip("lifecycle.before-initialize", f"initialize on the probe connection failed: {_describe(answer)}")
        raise Broken("initialize failed")
    chosen = answer.result.get("protocolVersion")
    if isinstance(chosen, str):
        sess.sent_under = chosen
    # "The server SHOULD NOT send requests other than pings and logging before receiving the
    # initialized notification": one ping round trip gives it the room to, then it is judged.
    start = len(sess.stream.received)
    await sess.ask("ping")
    early = [m for i, m in sess.stream.messages() if isinstance(m, rpc.Request) and m.method != "ping"]
    if early:
        rec.warn(
            "lifecycle.before-initialize",
            f"the server sent {early[0].method} before the initialized notification",
            [received(early[0])],
        )
    elif "lifecycle.before-initialize" not in rec.results:
        seen = len(sess.stream.received) - start
        rec.ok(
            "lifecycle.before-initialize",
            f"no request from the server between the initialize answer and "
            f"initialized ({seen} messages read, the ping answered)",
        )
    await sess.send(rpc.Notification("notifications/initialized"))


async def _invalid_params(rec: Results, sess: _ProbeConnection) -> None:
    check = "jsonrpc.invalid-params"
    method = sess.live_method
    worst = ""
    for shape, params in (("an array", [1]), ("a string", "x")):
        rid = sess.new_id()
        text = _raw({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        heard = await sess.malformed(text, (rid, None))
        if isinstance(heard.answer, rpc.Response):
            rec.fail(check, f"{method} with params {shape} was answered with a result", list(heard.evidence))
            return
        if (
            isinstance(heard.answer, rpc.ErrorResponse)
            and heard.answer.id != rid
            and shape == "an array"
            and not (heard.answer.id is None and heard.status is not None and heard.status >= 400)
        ):
            # Well-formed JSON-RPC whose id is readable: its error must carry that id (basic);
            # Streamable HTTP lets an HTTP error status carry an error that has no id.
            rec.fail(
                "jsonrpc.ids",
                f"the error to {method} with params {shape} (id {rid!r}) carries id "
                f"{heard.answer.id!r}, not the request's",
                list(heard.evidence),
            )
        # A string is not a JSON-RPC params at all (-32600 fits); an array is valid JSON-RPC
        # that the method cannot take (-32602).  A wrong code is a SHOULD-style finding.
        fits = (rpc.INVALID_PARAMS,) if shape == "an array" else (rpc.INVALID_PARAMS, rpc.INVALID_REQUEST)
        if heard.answer is not None and heard.code not in fits:
            if not worst:
                worst = f"{method} with params {shape}: error {heard.code}, expected {' or '.join(map(str, fits))}"
                rec.warn(check, worst, list(heard.evidence))
            continue
        if not _judge(rec, check, f"{method} with params {shape}", heard, fits, sess):
            return
    if not worst:
        rec.ok(check, f"{method} with params an array and a string: errors")


async def _unknown_method(rec: Results, sess: _ProbeConnection) -> None:
    check = "jsonrpc.unknown-method"
    request, answer = await sess.ask(NO_SUCH_METHOD)
    if _code(answer) == rpc.METHOD_NOT_FOUND:
        rec.ok(check, f"{NO_SUCH_METHOD} on a fresh session: -32601")
    else:
        rec.fail(
            check,
            f"{NO_SUCH_METHOD} on a fresh session: {_describe(answer)}, not -32601",
            [sent(request), received(answer)],
        )


async def _notifications(rec: Results, sess: _ProbeConnection) -> None:
    finished, _ = await sess.ask("server/discover" if sess.stateless else "ping")
    notes = [
        rpc.Notification("notifications/cancelled", {"requestId": "neg-never-sent", "reason": "trimcp check"}),
        rpc.Notification("notifications/cancelled", {"requestId": finished.id, "reason": "trimcp check"}),
        rpc.Notification("notifications/trimcp-check/undefined", {}),
    ]
    for note in notes:
        await sess.send(note)
    live = rpc.Request(sess.new_id(), finished.method, sess.params())
    await sess.send(live)
    answer, strays = await sess.answer((live.id,))
    evidence = [sent(n) for n in notes] + [sent(live)] + [received(m) for m in strays]
    if strays:
        rec.fail(
            "jsonrpc.notification-no-response",
            f"{len(strays)} response(s) to notifications: {_describe(strays[0])}",
            evidence,
        )
        rec.warn("cancellation.ignored", "a cancellation of an unknown or finished request was answered", evidence)
    elif answer is not None:
        rec.ok("jsonrpc.notification-no-response", "no response to 3 notifications")
    if answer is None:
        # Silence after the notifications, or a server only slower than --timeout: not reached.
        rec.cut_short(
            "cancellation.ignored", sess.bound, f"after two invalid cancellations {live.method} got no answer"
        )
        raise Broken("no answer after the notifications", seconds=sess.bound)
    if not strays:
        rec.ok("cancellation.ignored", f"unknown and finished ids ignored; {live.method} still answered")


#: How long a cancelled request's response is waited for (it should never come).
CANCEL_WATCH = 1.0


async def _cancel_in_flight(rec: Results, sess: _ProbeConnection) -> None:
    check = "cancellation.honoured"
    if sess.cancel_target is None:
        rec.skip(check, "no read-only tool reported progress in the tour: none is known to run long enough")
        return
    name, arguments = sess.cancel_target
    rid = sess.new_id()
    params = sess.params({"name": name, "arguments": arguments})
    params["_meta"] = {**params.get("_meta", {}), "progressToken": rid}
    call = rpc.Request(rid, "tools/call", params)
    await sess.send(call)
    first = await sess.first_progress(rid)
    if first is None:
        rec.skip(check, f"{name} neither reported progress nor answered within {sess.bound:g} s")
        return
    if not isinstance(first, rpc.Notification):
        rec.skip(check, f"{name} finished before its first progress: nothing to cancel")
        return
    cancel = rpc.Notification("notifications/cancelled", {"requestId": rid, "reason": "trimcp check"})
    await sess.send(cancel)
    live = rpc.Request(sess.new_id(), "server/discover" if sess.stateless else "ping", sess.params())
    await sess.send(live)
    answer, strays = await sess.answer((live.id,))
    late: rpc.Message | None = next((m for m in strays if getattr(m, "id", None) == rid), None)
    if answer is None:
        rec.cut_short(check, sess.bound, f"after cancelling {name}, {live.method} got no answer")
        raise Broken("no answer after a cancellation", seconds=sess.bound)
    if late is None:
        with trio.move_on_after(min(CANCEL_WATCH, sess.bound)):
            late, _ = await sess.answer((rid,))
    if late is not None:
        rec.warn(check, f"{name} was answered after its cancellation", [sent(call), sent(cancel), received(late)])
    else:
        rec.ok(check, f"{name} cancelled in flight: no response, {live.method} still answered")


_RAW_ONLY = {_parse_error, _invalid_request, _invalid_params}
_CHECKS_OF: dict[Step, tuple[str, ...]] = {
    _parse_error: ("jsonrpc.parse-error",),
    _invalid_request: ("jsonrpc.invalid-request",),
    _before_initialize: (),
    _initialize: ("lifecycle.before-initialize",),
    _invalid_params: ("jsonrpc.invalid-params",),
    _unknown_method: ("jsonrpc.unknown-method",),
    _notifications: ("jsonrpc.notification-no-response", "cancellation.ignored"),
    _cancel_in_flight: ("cancellation.honoured",),
}


async def probe_negative(
    rec: Results,
    connect: Connector,
    revision: str,
    timeout: float,
    recordings: list[RecordingStream],
    cancel_target: tuple[str, dict[str, Any]] | None = None,
) -> None:
    """Run the negative probes on as few fresh connections as possible (see the module doc)."""
    stateless = get_revision(revision).era is Era.STATELESS
    steps: list[Step] = [] if stateless else [_before_initialize, _initialize]
    steps += [_parse_error, _invalid_request, _invalid_params, _unknown_method, _notifications, _cancel_in_flight]
    bound = min(ANSWER_BOUND, timeout)
    for attempt in range(2):
        try:
            steps = await _run(rec, connect, revision, bound, timeout, steps, recordings, cancel_target)
        except trio.TooSlowError:
            note_timeout(timeout * 2)  # the steps left are "not reached" (results.timed)
            steps = []
        if not steps:
            return
        if attempt == 0 and not stateless and _initialize not in steps:
            steps.insert(0, _initialize)  # a new connection needs its own handshake
    for step in steps:
        for check in _CHECKS_OF[step]:
            rec.skip(check, "the probe connections broke before this probe")


async def _run(
    rec: Results,
    connect: Connector,
    revision: str,
    bound: float,
    timeout: float,
    steps: list[Step],
    recordings: list[RecordingStream],
    cancel_target: tuple[str, dict[str, Any]] | None,
) -> list[Step]:
    """Run ``steps`` on one connection; return those left when it broke."""
    left = list(steps)
    with trio.fail_after(timeout * 2):
        try:
            async with connect() as stream:
                recording = RecordingStream(stream)
                recordings.append(recording)
                sess = _ProbeConnection(recording, revision, bound, wait=timeout)
                sess.cancel_target = cancel_target
                while left:
                    step = left[0]
                    if step in _RAW_ONLY and not sess.raw:
                        left.pop(0)
                        for check in _CHECKS_OF[step]:
                            rec.skip(check, "this transport cannot send raw bytes to the server")
                        continue
                    try:
                        await step(rec, sess)
                    except Broken as exc:
                        _unjudged(rec, left.pop(0), exc, f"the probe connection broke: {exc}")
                        return left
                    left.pop(0)
        except TrimcpError as exc:
            if left:
                _unjudged(rec, left.pop(0), exc, f"the probe connection failed: {exc}")
    return left


def _unjudged(rec: Results, step: Step, exc: Exception, detail: str) -> None:
    # The step broke the connection before it could judge: a server that drops the
    # connection instead of answering has not answered (one only slower than the
    # time limit was not reached).
    for check in _CHECKS_OF[step]:
        if check not in rec.results:
            rec.failed(check, exc, detail)


def _describe(msg: rpc.Message) -> str:
    if isinstance(msg, rpc.ErrorResponse):
        return f"error {msg.error.code} ({msg.error.message})"
    if isinstance(msg, rpc.Response):
        return "a result"
    return type(msg).__name__


# --------------------------------------------------------------------------- error codes

#: JSON-RPC 2.0's own codes; the rest of -32768..-32000 is reserved (basic: Error Codes).
_JSONRPC_CODES = frozenset(
    {rpc.PARSE_ERROR, rpc.INVALID_REQUEST, rpc.METHOD_NOT_FOUND, rpc.INVALID_PARAMS, rpc.INTERNAL_ERROR}
)


def code_problem(code: int, revision: str) -> tuple[bool, str] | None:
    """``(must, why)`` when ``code`` breaks the reserved-range rules of ``revision``."""
    if not -32768 <= code <= -32000 or code in _JSONRPC_CODES:
        return None
    row = REVISIONS.get(revision)
    defined = row.error_codes if row is not None else frozenset()
    if code in defined:
        return None
    if get_revision(revision).era is not Era.STATELESS:
        # JSON-RPC leaves -32000..-32099 to implementations; the rest is reserved for it.
        if -32099 <= code <= -32000:
            return None
        return True, f"{code} is reserved by JSON-RPC and defined by neither it nor {revision}"
    if code in (rpc.RESOURCE_NOT_FOUND_LEGACY, rpc.URL_ELICITATION_REQUIRED):
        return True, f"{code} was retired: {revision} forbids it"
    if -32099 <= code <= -32020:
        return True, f"{code} is in the MCP sub-range and {revision} does not define it"
    if -32019 <= code <= -32000:
        return False, f"{code} is in the legacy sub-range new implementations should not use"
    return False, f"{code} is in the JSON-RPC reserved range; new codes belong outside it"


def check_error_codes(rec: Results, recordings: list[RecordingStream], revision: str) -> None:
    """Judge the code of every error response the run received (tour and probes)."""
    check = "jsonrpc.error-codes"
    seen = 0
    worst: tuple[bool, str, rpc.Message] | None = None
    for recording in recordings:
        for _, msg in recording.messages():
            if not isinstance(msg, rpc.ErrorResponse):
                continue
            seen += 1
            problem = code_problem(msg.error.code, revision)
            if problem is not None and (worst is None or (problem[0] and not worst[0])):
                worst = (problem[0], problem[1], msg)
    if worst is not None:
        must, why, msg = worst
        (rec.fail if must else rec.warn)(check, why, [received(msg)])
    elif seen:
        rec.ok(check, f"{seen} error responses")
    else:
        rec.skip(check, "the server sent no error responses")
