"""Asking the client for input: one handler API, two eras.

Theory of operation
-------------------
A handler asks with ``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots`` or,
for several questions at once, ``ctx.ask_all({key: request, ...})`` with
requests built by ``elicitation()``, ``sampling()`` and ``roots()`` here.

Handshake era: each question is a real server-to-client request, and the
handler simply awaits its answer.

Stateless era (2026-07-28, spec: basic/patterns/mrtr): the server cannot
send requests; it answers the client's request with an
``InputRequiredResult`` instead, and the client re-sends the original request
with ``inputResponses`` (and the echoed ``requestState``).  trimcp makes this
look the same to the handler by *re-running* it from the start on every
round:

* every question has a key - the one the handler gives, or ``<kind>-<n>``
  (``elicitation-1``, ``sampling-2``, ...) numbered per kind in call order,
  so an unchanged handler asks under the same keys on every run;
* an ``InputLedger`` (one per request) holds the answers: those of earlier
  rounds, verified out of ``requestState`` (``_request_state.py``), and those in
  this round's ``inputResponses``;
* a question whose key has a well-formed answer returns it at once; the
  first ``ask``/``ask_all`` with unanswered keys stops the handler
  (``_Suspend``, a ``BaseException`` so that a tool's ``except Exception``
  can't swallow it) and the request is answered with those questions plus a
  new ``requestState`` sealing every answer used so far.

So a handler must be deterministic up to each question (side effects before
a question happen once per round), and its answers arrive as plain result
dicts exactly as in the handshake era.  Answers under keys never asked are
ignored; an answer that doesn't parse as the expected result (``ElicitResult``,
``CreateMessageResult``, ``ListRootsResult``) is asked again rather than
failing the request (spec: mrtr, Error Handling).  A client that did not
declare the capability a question needs gets -32021 with
``data.requiredCapabilities`` (spec: basic/index, ``_meta``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from .._errors import McpError
from .._sansio import jsonrpc as rpc
from .._sansio import schema as s
from .._sansio.connection import stateless as sl
from .._sansio.revisions import has_capability
from .._trio.driver import NeedInput
from ._request_state import InvalidRequestState, StateSealer, request_digest

SamplingMessages = str | Sequence[str | Mapping[str, Any]]

_KIND: Final = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
_RESULT_TYPE: Final[Mapping[str, Any]] = {
    "elicitation/create": s.ElicitResult,
    "sampling/createMessage": s.CreateMessageResult,
    "roots/list": s.ListRootsResult,
}


@attrs.frozen
class InputRequest:
    """One question for the client: a server-to-client request method and its params."""

    method: str
    params: dict[str, Any] = attrs.field(factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {"method": self.method, "params": dict(self.params)}


def elicitation(message: str, requested_schema: Mapping[str, Any]) -> InputRequest:
    """A form-mode ``elicitation/create``: ask the user to fill ``requested_schema``."""
    return InputRequest("elicitation/create", {"message": message, "requestedSchema": dict(requested_schema)})


def _sampling_messages(messages: SamplingMessages) -> list[dict[str, Any]]:
    items: Sequence[str | Mapping[str, Any]] = [messages] if isinstance(messages, str) else messages
    return [{"role": "user", "content": {"type": "text", "text": m}} if isinstance(m, str) else dict(m) for m in items]


def sampling(
    messages: SamplingMessages,
    max_tokens: int,
    *,
    system_prompt: str | None = None,
    temperature: float | None = None,
    stop_sequences: Sequence[str] | None = None,
    model_preferences: Mapping[str, Any] | None = None,
    include_context: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> InputRequest:
    """A ``sampling/createMessage``; a string message is one user text message."""
    params: dict[str, Any] = {"messages": _sampling_messages(messages), "maxTokens": max_tokens}
    optional = {
        "systemPrompt": system_prompt,
        "temperature": temperature,
        "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
        "modelPreferences": dict(model_preferences) if model_preferences is not None else None,
        "includeContext": include_context,
        "metadata": dict(metadata) if metadata is not None else None,
    }
    params.update({k: v for k, v in optional.items() if v is not None})
    return InputRequest("sampling/createMessage", params)


def roots() -> InputRequest:
    """A ``roots/list``."""
    return InputRequest("roots/list", {})


class _Suspend(BaseException):
    """Stops a handler run; the request is answered with ``answer`` instead."""

    def __init__(self, answer: NeedInput | McpError) -> None:
        super().__init__("handler suspended")
        self.answer = answer


def find_suspension(exc: BaseException) -> _Suspend | None:
    """The ``_Suspend`` in ``exc`` (which may be an exception group from a nursery)."""
    if isinstance(exc, _Suspend):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = find_suspension(inner)
            if found is not None:
                return found
    return None


def missing_capability_error(
    requests: Sequence[InputRequest], client_capabilities: Mapping[str, Any]
) -> McpError | None:
    """-32021 naming every capability ``requests`` need that the client did not declare."""
    required: dict[str, Any] = {}
    for request in requests:
        gate = sl.INPUT_REQUEST_GATES.get(request.method)
        if gate is None:
            raise ValueError(f"{request.method!r} can't be asked of a client")
        if not has_capability(client_capabilities, gate):
            node = required
            for part in gate:
                node = node.setdefault(part, {})
    if not required:
        return None
    names = ", ".join(sorted(required))
    return McpError(
        rpc.MISSING_CLIENT_CAPABILITY,
        f"Server requires the {names} client capability for this request",
        {"requiredCapabilities": required},
    )


def _invalid(message: str) -> McpError:
    return McpError(rpc.INVALID_PARAMS, message)


class InputLedger:
    """Stateless era, one request: the client's answers, and what is still to ask."""

    def __init__(
        self,
        sealer: StateSealer,
        method: str,
        params: Mapping[str, Any],
        principal: str | None = None,
    ) -> None:
        """Read ``inputResponses`` and verify ``requestState``; -32602 ``McpError`` if either is bad."""
        responses = params.get("inputResponses")
        state = params.get("requestState")
        if responses is not None and not isinstance(responses, dict):
            raise _invalid("params.inputResponses must be an object")
        if state is not None and not isinstance(state, str):
            raise _invalid("params.requestState must be a string")
        self._sealer = sealer
        self._method = method
        self._digest = request_digest(method, params)
        self._principal = principal
        self._earlier: dict[str, Any] = {}
        if state is not None:
            try:
                self._earlier = sealer.open(state, method, self._digest, principal)
            except InvalidRequestState as exc:
                raise _invalid(f"invalid requestState: {exc}") from None
        #: Whether the request carried a ``requestState`` that verified.
        self.resumed = state is not None
        #: Whether the request is a retry (carried answers or state); its result must not be cached.
        self.is_retry = state is not None or bool(responses)
        self._fresh: dict[str, Any] = dict(responses or {})
        self._used: dict[str, Any] = {}
        self._counters: Counter[str] = Counter()

    def next_key(self, request: InputRequest) -> str:
        kind = _KIND.get(request.method, request.method)
        self._counters[kind] += 1
        return f"{kind}-{self._counters[kind]}"

    def answer(self, key: str, request: InputRequest) -> dict[str, Any] | None:
        """The well-formed answer under ``key``, or None when it must be asked (again)."""
        if key in self._used:
            raise ValueError(f"input key {key!r} was already used in this request")
        for source in (self._earlier, self._fresh):
            value = source.get(key)
            if value is not None and self._parses(request, value):
                assert isinstance(value, dict)
                self._used[key] = value
                return value
        return None

    @staticmethod
    def _parses(request: InputRequest, value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        try:
            s.from_wire(_RESULT_TYPE[request.method], value)
        except ValueError:
            return False
        return True

    def suspend(self, missing: Mapping[str, InputRequest]) -> _Suspend:
        """Stop the run: ask ``missing``, sealing every answer used so far into the state."""
        state = self._sealer.seal(self._method, self._digest, self._used, self._principal)
        return _Suspend(NeedInput({k: r.to_wire() for k, r in missing.items()}, state))
