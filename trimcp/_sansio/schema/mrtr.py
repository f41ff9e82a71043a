"""Multi round-trip requests (2026-07-28): how a server asks its client for input.

Theory of operation
-------------------
In the stateless era a server sends no requests of its own (spec:
basic/patterns/mrtr).  When it needs an elicitation, a sampling call or the
client's roots to answer ``tools/call``, ``prompts/get`` or ``resources/read``
(those only: ``MRTR_METHODS``), it answers the request with an
``InputRequiredResult`` (``resultType: "input_required"``) holding at least
one of

* ``inputRequests``: key -> ``InputRequest``, a ``{method, params}`` object
  for ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``
  (not a JSON-RPC message: no ``jsonrpc``, no id).  The union is told apart by
  ``method``; another method is a ``SchemaError``;
* ``requestState``: an opaque string the client must echo byte for byte and
  never interpret.

The client fulfils the requests and re-sends the original request, with a new
id, adding ``inputResponses`` (same keys -> the results) and the
``requestState``.  Those two members are declared on ``CallToolRequestParams``
(``tool_calls``), ``GetPromptRequestParams`` (``prompts``) and
``ReadResourceRequestParams`` (``resources``), which import ``InputResponses``
from here; this module imports none of them.

An input response carries no ``method``.  ``InputResponse`` is told apart by a
member only one class requires: ``action`` -> ``ElicitResult``, ``roots`` ->
``ListRootsResult``, ``model``/``role``/``content`` -> ``CreateMessageResult``,
tried in that order (an ``ElicitResult`` may have ``content`` too).  An object
with none of them is kept as ``UnknownInputResponse``: a server should ignore
what it does not recognise and ask again.  ``input_response(responses, key,
cls)`` is the typed accessor.  These results carry no ``resultType``: they
travel inside params, not as JSON-RPC results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, TypeVar

import attrs

from ..connection import stateless as _sl
from ..shared_methods import frozen
from ._converter import (
    WIRE_REQUIRED,
    SchemaError,
    converter,
    json_type,
    register_checked,
    register_tagged_union,
    register_union_hook,
)
from .base import RequestParams, Result, ResultType
from .elicitation import ElicitRequestParams, ElicitResult
from .misc import ListRootsResult
from .sampling import CreateMessageRequestParams, CreateMessageResult

__all__ = [
    "INPUT_REQUEST_TYPES",
    "MRTR_METHODS",
    "CreateMessageInputRequest",
    "ElicitInputRequest",
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputResponse",
    "InputResponses",
    "ListRootsInputRequest",
    "UnknownInputResponse",
    "input_response",
]

T = TypeVar("T")

#: Requests a server may answer with an ``InputRequiredResult`` (and that may carry
#: ``inputResponses`` / ``requestState``).
MRTR_METHODS: Final = _sl.MRTR_METHODS

_TAG = {WIRE_REQUIRED: True}


@frozen(kw_only=True)
class ElicitInputRequest:
    """Ask the user for input (answered with an ``ElicitResult``)."""

    params: ElicitRequestParams
    method: Literal["elicitation/create"] = attrs.field(default="elicitation/create", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class CreateMessageInputRequest:
    """Ask the client's model for a completion (answered with a ``CreateMessageResult``)."""

    params: CreateMessageRequestParams
    method: Literal["sampling/createMessage"] = attrs.field(default="sampling/createMessage", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


@frozen(kw_only=True)
class ListRootsInputRequest:
    """Ask for the client's roots (answered with a ``ListRootsResult``); ``params`` is optional."""

    params: RequestParams | None = None
    method: Literal["roots/list"] = attrs.field(default="roots/list", metadata=_TAG)
    extra: dict[str, Any] = attrs.field(factory=dict)


InputRequest: TypeAlias = ElicitInputRequest | CreateMessageInputRequest | ListRootsInputRequest
#: Key (chosen by the server, unique within the request) -> input request.
InputRequests: TypeAlias = dict[str, InputRequest]


@frozen(kw_only=True)
class UnknownInputResponse:
    """An input response of no known shape; ``raw`` is all of it."""

    raw: dict[str, Any]


InputResponse: TypeAlias = ElicitResult | CreateMessageResult | ListRootsResult | UnknownInputResponse
#: Key (as in the ``InputRequests`` answered) -> the client's result.
InputResponses: TypeAlias = dict[str, InputResponse]

#: Input request method -> (its class in ``inputRequests``, the class of its response).
INPUT_REQUEST_TYPES: Final[Mapping[str, tuple[type, type]]] = {
    "elicitation/create": (ElicitInputRequest, ElicitResult),
    "sampling/createMessage": (CreateMessageInputRequest, CreateMessageResult),
    "roots/list": (ListRootsInputRequest, ListRootsResult),
}


@frozen(kw_only=True)
class InputRequiredResult(Result):
    """The server needs input before it can answer; retry with ``inputResponses``.

    At least one of ``input_requests`` and ``request_state`` is present.
    """

    input_requests: InputRequests | None = None
    request_state: str | None = None
    result_type: Literal["input_required"] = attrs.field(default=ResultType.INPUT_REQUIRED, metadata=_TAG)


def input_response(responses: InputResponses | None, key: str, cls: type[T]) -> T | None:
    """The response under ``key`` if there is one and it is a ``cls``, else ``None``."""
    if responses is None:
        return None
    found = responses.get(key)
    return found if isinstance(found, cls) else None


# --------------------------------------------------------------------------- hooks

register_tagged_union(
    InputRequest,
    "method",
    {method: request_cls for method, (request_cls, _) in INPUT_REQUEST_TYPES.items()},
)

_elicit_hook = converter.get_structure_hook(ElicitResult)
_roots_hook = converter.get_structure_hook(ListRootsResult)
_sampling_hook = converter.get_structure_hook(CreateMessageResult)


def _structure_input_response(value: Any, _tp: Any) -> Any:
    if not isinstance(value, dict):
        raise SchemaError(f"expected object, got {json_type(value)}")
    if "action" in value:
        return _elicit_hook(value, ElicitResult)
    if "roots" in value:
        return _roots_hook(value, ListRootsResult)
    if "model" in value or "role" in value or "content" in value:
        return _sampling_hook(value, CreateMessageResult)
    return UnknownInputResponse(raw=value)


def _unstructure_unknown(obj: UnknownInputResponse) -> dict[str, Any]:
    return dict(obj.raw)


register_union_hook(InputResponse, _structure_input_response)
converter.register_unstructure_hook(UnknownInputResponse, _unstructure_unknown)


def _check_input_required(obj: InputRequiredResult) -> None:
    if obj.input_requests is None and obj.request_state is None:
        raise SchemaError("an InputRequiredResult needs inputRequests or requestState")


register_checked(InputRequiredResult, _check_input_required)
