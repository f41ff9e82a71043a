"""The reserved ``_meta`` keys of the 2026-07-28 stateless era, and the per-request envelope.

Theory of operation
-------------------
From 2026-07-28 there is no ``initialize`` and no session (spec: basic/index
"_meta", basic/versioning).  What the handshake used to settle once travels in
the ``_meta`` of every message instead, under keys with the reserved
``io.modelcontextprotocol/`` prefix:

* every client request carries the *envelope*: the protocol version and the
  client's capabilities (both required: a request without them is malformed
  and answered with -32602), and optionally the client's ``Implementation`` and
  the minimum level of the ``notifications/message`` it wants for this request
  (absent: none at all).  There is no carry-over: a server must not infer
  capabilities from an earlier request;
* a result may name the server (``SERVER_INFO_META``, an ``Implementation``);
* a notification delivered on a ``subscriptions/listen`` stream, and the
  result that closes the stream, name the stream (``SUBSCRIPTION_ID_META``:
  the JSON-RPC id of the ``subscriptions/listen`` request).

``Envelope`` is a wire class whose members are those keys (plus
``progressToken``), so the converter does the checking and ``to_wire(env)`` —
or ``env.to_meta()`` — gives the ``_meta`` dict back, other keys (trace context,
vendor keys) included from ``extra``.  ``envelope(meta)`` *returns* the
``SchemaError`` instead of raising it: a server turns it into a -32602 answer,
a client-side check into a message, neither wants a ``try``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from ..connection import stateless as _sl
from ..shared_methods import frozen
from ._converter import WIRE_NAME, SchemaError, converter, json_type
from .base import ProgressToken, RequestId
from .lifecycle import ClientCapabilities, Implementation
from .misc import LoggingLevel

__all__ = [
    "CLIENT_CAPABILITIES_META",
    "CLIENT_INFO_META",
    "LOG_LEVEL_META",
    "PROTOCOL_VERSION_META",
    "SERVER_INFO_META",
    "SUBSCRIPTION_ID_META",
    "Envelope",
    "envelope",
    "server_info",
    "subscription_id",
]

# The reserved ``_meta`` keys are defined once, beside the Connection's envelope rules.
PROTOCOL_VERSION_META: Final = _sl.PROTOCOL_VERSION_KEY  # request: revision (required)
CLIENT_CAPABILITIES_META: Final = _sl.CLIENT_CAPABILITIES_KEY  # request: capabilities (required)
CLIENT_INFO_META: Final = _sl.CLIENT_INFO_KEY  # request: client Implementation (should be sent)
LOG_LEVEL_META: Final = _sl.LOG_LEVEL_KEY  # request: minimum LoggingLevel (optional)
SUBSCRIPTION_ID_META: Final = _sl.SUBSCRIPTION_ID_KEY  # notification / listen result: listen id
SERVER_INFO_META: Final = _sl.SERVER_INFO_KEY  # result: server Implementation (should be sent)


@frozen(kw_only=True)
class Envelope:
    """The protocol members of a 2026-07-28 request's ``_meta`` (the schema's ``RequestMetaObject``)."""

    protocol_version: str = attrs.field(metadata={WIRE_NAME: PROTOCOL_VERSION_META})
    client_capabilities: ClientCapabilities = attrs.field(metadata={WIRE_NAME: CLIENT_CAPABILITIES_META})
    client_info: Implementation | None = attrs.field(default=None, metadata={WIRE_NAME: CLIENT_INFO_META})
    log_level: LoggingLevel | None = attrs.field(default=None, metadata={WIRE_NAME: LOG_LEVEL_META})
    progress_token: ProgressToken | None = None
    #: Every other ``_meta`` key (``traceparent``, vendor keys …).
    extra: dict[str, Any] = attrs.field(factory=dict)

    def to_meta(self) -> dict[str, Any]:
        """The ``_meta`` dict: the reserved keys, ``progressToken`` and ``extra``."""
        out: dict[str, Any] = converter.unstructure(self)
        return out


_envelope_hook = converter.get_structure_hook(Envelope)


def envelope(meta: object) -> Envelope | SchemaError:
    """Read and check the envelope in a request's ``_meta``; the problem is returned, not raised.

    ``meta`` is the ``_meta`` value (``None`` when the request has none).  The
    error's path is relative to ``_meta``, e.g.
    ``["io.modelcontextprotocol/protocolVersion"]``.
    """
    if meta is None:
        return SchemaError("required member missing")
    try:
        env: Envelope = _envelope_hook(meta, Envelope)
    except SchemaError as exc:
        return exc
    return env


_implementation_hook = converter.get_structure_hook(Implementation)


def server_info(meta: Mapping[str, Any] | None) -> Implementation | None:
    """``_meta["io.modelcontextprotocol/serverInfo"]`` of a result, typed; ``None`` when absent.

    Raises ``SchemaError`` (path relative to ``_meta``) when it is malformed.
    """
    if meta is None or SERVER_INFO_META not in meta:
        return None
    try:
        info: Implementation = _implementation_hook(meta[SERVER_INFO_META], Implementation)
    except SchemaError as exc:
        exc.path.insert(0, SERVER_INFO_META)
        raise
    return info


def subscription_id(meta: Mapping[str, Any] | None) -> RequestId | None:
    """``_meta["io.modelcontextprotocol/subscriptionId"]``; ``None`` when absent.

    Raises ``SchemaError`` when it is not a JSON-RPC id (a string or an integer).
    """
    if meta is None or SUBSCRIPTION_ID_META not in meta:
        return None
    value = meta[SUBSCRIPTION_ID_META]
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise SchemaError(f"expected integer or string, got {json_type(value)}", [SUBSCRIPTION_ID_META])
