"""2026-07-28 Streamable HTTP: the request headers a server checks against the body.

Theory of operation
-------------------
In the stateless era the transport mirrors body fields into headers so that
intermediaries can route without parsing JSON (spec 2026-07-28,
basic/transports/streamable-http, "Request Metadata").  A server that reads
the body MUST check the two agree, since a proxy may have acted on the
headers alone; any disagreement is **400 Bad Request** with JSON-RPC error
**-32020** (HeaderMismatch).  ``check_stateless_request`` applies, in order:

1. the ``_meta`` envelope: a request without ``protocolVersion`` or
   ``clientCapabilities`` is malformed, **400** with -32602 (basic/index,
   "Per-request protocol fields").  This comes first, so that a request
   missing its version reads as malformed rather than as a mismatch;
2. ``MCP-Protocol-Version`` present and equal to the envelope's version;
3. ``Mcp-Method`` present and equal to ``method`` (values are case-sensitive);
4. ``Mcp-Name`` for ``tools/call`` and ``prompts/get`` (``params.name``) and
   ``resources/read`` (``params.uri``);
5. ``Mcp-Param-{Name}`` for each ``tools/call`` argument the tool's input
   schema marks with ``x-mcp-header`` (reachable from the root through
   ``properties`` keys only; ``header_annotations`` finds them): present
   exactly when the argument has a non-null value, and equal to it
   (integers compared numerically, booleans as ``true``/``false``).

Header values arrive with surrounding whitespace already trimmed (RFC 9110,
5.5).  A value may be carried as ``=?base64?<base64 of UTF-8>?=`` (lowercase
markers); ``decode_header_value`` (``http_headers``, strict mode) undoes it strictly - bad padding or a
character outside the alphabet is an invalid value, not a literal - and
treats anything without both markers as literal text.  A plain value may only
hold visible ASCII, space and tab; anything else is an invalid value.

The spec leaves open what to do with a header whose body value is absent; we
reject it as a mismatch (the header cannot match a value that is not there).
Methods outside the table above carry no ``Mcp-Name`` requirement and an
``Mcp-Name`` on them is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from ... import jsonrpc as rpc
from ...connection.core import LOG_LEVELS
from ...connection.stateless import read_envelope
from ..header_names import METHOD_HEADER, NAME_HEADER, PARAM_HEADER_PREFIX, VERSION_HEADER
from ..headers import NAME_SOURCES, InvalidHeaderValue, encode_header_value
from ..headers import decode_header_value as _decode
from .routing import HttpError, RequestHead

_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_MAX_SAFE_INT: Final = 2**53 - 1


def decode_header_value(value: str) -> str:
    """The text a mirrored header carries (Base64 sentinel decoded); raises ``InvalidHeaderValue``."""
    return _decode(value, strict=True)


def header_annotations(schema: Any) -> list[tuple[str, tuple[str, ...]]]:
    """``(header name, property path)`` for each valid ``x-mcp-header`` in an input schema.

    Only properties reachable through ``properties`` keys count; an annotation
    that is not a token, or repeats another case-insensitively, is skipped (a
    client would reject the tool; the server just does not expect its header).
    """
    found: list[tuple[str, tuple[str, ...]]] = []
    seen: set[str] = set()

    def walk(node: Any, path: tuple[str, ...]) -> None:
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict):
            return
        for key, sub in props.items():
            if not isinstance(sub, dict):
                continue
            name = sub.get("x-mcp-header")
            if isinstance(name, str) and _TOKEN.fullmatch(name) and name.lower() not in seen:
                seen.add(name.lower())
                found.append((name, (*path, key)))
            walk(sub, (*path, key))

    walk(schema, ())
    return found


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _matches(header_text: str, body_value: Any) -> bool:
    if isinstance(body_value, bool):
        return header_text == ("true" if body_value else "false")
    if isinstance(body_value, (int, float)):
        try:
            return Decimal(header_text.strip()) == Decimal(str(body_value))
        except InvalidOperation:
            return False
    if isinstance(body_value, str):
        return header_text == body_value
    return False


def _mismatch(request: rpc.Request, message: str) -> HttpError:
    return HttpError(400, f"Header mismatch: {message}", code=rpc.HEADER_MISMATCH, request_id=request.id)


def _single(head: RequestHead, name: str, request: rpc.Request) -> str | HttpError:
    values = head.values(name)
    if not values:
        return _mismatch(request, f"required header {name} is missing")
    if len(values) > 1:
        return _mismatch(request, f"header {name} is repeated")
    return values[0]


def _check_mirrored(head: RequestHead, header: str, body_value: Any, request: rpc.Request) -> HttpError | None:
    values = head.values(header)
    present = body_value is not None
    if not values:
        return _mismatch(request, f"header {header} is missing but the body has a value") if present else None
    if len(values) > 1:
        return _mismatch(request, f"header {header} is repeated")
    try:
        text = decode_header_value(values[0])
    except InvalidHeaderValue as exc:
        return _mismatch(request, f"{header}: {exc}")
    if not present:
        return _mismatch(request, f"header {header} is present but the body has no value for it")
    if not _matches(text, body_value):
        return _mismatch(request, f"{header} header value {text!r} does not match body value {body_value!r}")
    return None


def check_stateless_request(
    head: RequestHead,
    request: rpc.Request,
    *,
    tool_schema: Mapping[str, Any] | None = None,
) -> HttpError | None:
    """The 400 to answer a stateless-era request with, or ``None`` to serve it.

    ``tool_schema`` is the input schema of the tool a ``tools/call`` names,
    when the server knows it (for the ``Mcp-Param-*`` checks).
    """
    params = request.params or {}
    envelope = read_envelope(params, LOG_LEVELS)
    if isinstance(envelope, str):
        return HttpError(400, f"Invalid params: {envelope}", code=rpc.INVALID_PARAMS, request_id=request.id)
    version = _single(head, VERSION_HEADER, request)
    if isinstance(version, HttpError):
        return version
    if version != envelope.protocol_version:
        return _mismatch(
            request,
            f"MCP-Protocol-Version header value {version!r} does not match body value {envelope.protocol_version!r}",
        )
    method = _single(head, METHOD_HEADER, request)
    if isinstance(method, HttpError):
        return method
    if method != request.method:
        return _mismatch(
            request,
            f"Mcp-Method header value {method!r} does not match body value {request.method!r}",
        )
    source = NAME_SOURCES.get(request.method)
    if source is not None:
        value = params.get(source)
        problem = _check_mirrored(head, NAME_HEADER, value if isinstance(value, str) else None, request)
        if problem is not None:
            return problem
    if request.method == "tools/call" and tool_schema is not None:
        arguments = params.get("arguments")
        for name, path in header_annotations(tool_schema):
            value = _value_at(arguments, path)
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_SAFE_INT:
                return _mismatch(request, f"argument {'.'.join(path)} is outside the safe integer range")
            problem = _check_mirrored(head, PARAM_HEADER_PREFIX + name, value, request)
            if problem is not None:
                return problem
    return None


__all__ = [
    "NAME_SOURCES",
    "InvalidHeaderValue",
    "check_stateless_request",
    "decode_header_value",
    "encode_header_value",
    "header_annotations",
]
