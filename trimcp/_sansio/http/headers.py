"""Request metadata headers of Streamable HTTP (2026-07-28, basic/transports/streamable-http).

Theory of operation
-------------------
From 2026-07-28 a client mirrors parts of each POSTed JSON-RPC body into HTTP
headers so that intermediaries can route without parsing JSON ("Request
Metadata"):

* ``Mcp-Method`` carries ``method``; ``Mcp-Name`` carries ``params.name``
  (``tools/call``, ``prompts/get``) or ``params.uri`` (``resources/read``);
* a tool may mark input parameters with ``x-mcp-header: <Name>`` in its
  ``inputSchema``; the client mirrors each such argument into
  ``Mcp-Param-<Name>``, converting integers and booleans to text
  (``42``, ``true``) and omitting the header when the argument is absent or
  null ("Custom Headers from Tool Parameters").

Header values are text the server compares with the body, so a value that is
not plain header-safe ASCII is carried in a sentinel form ("Value Encoding"):
``=?base64?<base64 of the UTF-8 bytes>?=`` with lowercase markers.  "Plain
header-safe" here means: only visible ASCII (0x21-0x7E) and spaces, no
leading or trailing space, and not itself looking like the sentinel (a value
that starts with ``=?base64?`` and ends with ``?=`` is always encoded, so
decoding is unambiguous).  A tab is encoded too: RFC 9110 allows it inside a
field value, but peers and proxies disagree about it.

``header_params`` reads an ``inputSchema`` and returns where its annotated
parameters live, or raises ``InvalidToolHeaders`` when an annotation breaks
the rules of "Schema Extension": the name must be a non-empty HTTP token,
unique ignoring case, on a primitive-typed property reachable from the root
through ``properties`` keys alone (never through ``items``, ``oneOf``,
``$ref`` and the like).  A client must then leave the tool out of its
``tools/list`` result; ``filter_tools`` does that for one result page of
raw tool objects, ``ToolHeaderBook`` for the typed tools a client session
lists (it keeps each tool's parameters for the ``tools/call`` that follows:
they travel to the transport with the message, in its ``SendMeta``).

``number``-typed parameters are refused, as the 2026-07-28 tools page says
(only string, integer and boolean may be mirrored).  Pure functions only.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar

from ..._errors import TrimcpError
from ..shared_methods import frozen
from .header_names import PARAM_HEADER_PREFIX

__all__ = [
    "NAME_SOURCES",
    "SENTINEL_PREFIX",
    "SENTINEL_SUFFIX",
    "HeaderParam",
    "InvalidHeaderValue",
    "InvalidToolHeaders",
    "ToolHeaderBook",
    "decode_header_value",
    "encode_header_value",
    "filter_tools",
    "header_params",
    "header_text",
    "is_header_safe",
    "is_token",
    "param_headers",
]

#: Methods whose ``Mcp-Name`` header mirrors a params key, and which key
#: (client and server read the same table).
NAME_SOURCES: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # ext-tasks (Streamable HTTP: Routing Headers): the task id routes the task methods.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

SENTINEL_PREFIX: Final = "=?base64?"
SENTINEL_SUFFIX: Final = "?="

#: RFC 9110 section 5.6.2 ``tchar``.
_TCHARS: Final = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
#: JSON Schema types a mirrored parameter may have (2026-07-28: not ``number``).
_PRIMITIVE_TYPES: Final = frozenset({"string", "integer", "boolean"})
#: Keywords whose values are subschemas that are *not* statically reachable.
_SUBSCHEMA_ONE: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
_SUBSCHEMA_LIST: Final = frozenset({"prefixItems", "oneOf", "anyOf", "allOf"})
_SUBSCHEMA_MAP: Final = frozenset({"$defs", "definitions", "patternProperties", "dependentSchemas"})
#: JavaScript's safe integer range, the limit the spec sets for mirrored integers.
_MAX_SAFE_INTEGER: Final = 2**53 - 1


def is_token(name: str) -> bool:
    """Whether ``name`` is an HTTP field-name token (``1*tchar``)."""
    return bool(name) and all(c in _TCHARS for c in name)


def _looks_like_sentinel(value: str) -> bool:
    return value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX)


#: Visible ASCII and inner spaces (no space first or last): a plain header value.
_PLAIN_SAFE: Final = re.compile(r"(?:[!-~](?:[ -~]*[!-~])?)?")


def is_header_safe(value: str) -> bool:
    """Whether ``value`` may travel as a plain header value (see the module docstring)."""
    return _PLAIN_SAFE.fullmatch(value) is not None and not _looks_like_sentinel(value)


def encode_header_value(value: str) -> str:
    """``value`` itself when header-safe, else ``=?base64?...?=`` of its UTF-8 bytes.

    A lone surrogate (possible in a str decoded from JSON) is carried as the
    ``surrogatepass`` bytes, as JSON decoding would produce on the other side.
    """
    if is_header_safe(value):
        return value
    raw = value.encode("utf-8", "surrogatepass")
    return SENTINEL_PREFIX + base64.b64encode(raw).decode("ascii") + SENTINEL_SUFFIX


class InvalidHeaderValue(TrimcpError, ValueError):
    """A header value that is neither plain header-safe text nor a valid Base64 sentinel."""


def _plain_ok(value: str) -> bool:
    """Visible ASCII, space and tab: what a plain header value may hold."""
    return all(c == "\t" or " " <= c <= "~" for c in value)


def decode_header_value(value: str, *, strict: bool = False) -> str:
    """Inverse of ``encode_header_value``; raises ``InvalidHeaderValue`` (a ``ValueError``).

    A malformed sentinel always raises.  ``strict`` (what a server validating
    mirrored headers uses) also rejects a plain value holding characters
    outside visible ASCII, space and tab, and decoded bytes that are not
    strict UTF-8 (no lone surrogates).
    """
    if strict and not _plain_ok(value):
        raise InvalidHeaderValue(f"invalid characters in header value {value!r}")
    if len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX) and _looks_like_sentinel(value):
        inner = value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
        try:
            raw = base64.b64decode(inner.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise InvalidHeaderValue(f"malformed base64 in header value {value!r}") from None
        try:
            return raw.decode("utf-8", "strict" if strict else "surrogatepass")
        except UnicodeDecodeError:
            raise InvalidHeaderValue(f"header value {value!r} is not UTF-8 once decoded") from None
    return value


def header_text(value: Any) -> str | None:
    """The text form of a mirrored argument, or ``None`` when it is not mirrored.

    Strings as they are, booleans as ``true``/``false``, integers in decimal
    (an integral float such as ``42.0`` too, as JavaScript would print it),
    other finite numbers in their shortest round-trip form.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return value
    return None


class InvalidToolHeaders(TrimcpError, ValueError):
    """A tool's ``x-mcp-header`` annotations break the rules; the tool must be left out."""


@frozen
class HeaderParam:
    """One annotated parameter: its property path from the schema root and header name."""

    path: tuple[str, ...]
    name: str

    @property
    def header(self) -> str:
        return PARAM_HEADER_PREFIX + self.name


def _types_of(schema: Mapping[str, Any]) -> list[Any]:
    declared = schema.get("type")
    if declared is None:
        return []
    return list(declared) if isinstance(declared, list) else [declared]


def _check_annotation(node: Mapping[str, Any], path: tuple[str, ...], reachable: bool) -> str:
    name = node["x-mcp-header"]
    where = "/".join(path) or "(root)"
    if not reachable or not path:
        raise InvalidToolHeaders(f"x-mcp-header on {where} is not reachable from the root through 'properties' alone")
    if not isinstance(name, str) or not is_token(name):
        raise InvalidToolHeaders(f"x-mcp-header {name!r} on {where} is not a non-empty HTTP token")
    types = _types_of(node)
    concrete = [t for t in types if t != "null"]
    if types and (not concrete or any(t not in _PRIMITIVE_TYPES for t in concrete)):
        raise InvalidToolHeaders(f"x-mcp-header {name!r} on {where} needs a primitive type, not {node.get('type')!r}")
    return name


def _walk(node: Any, path: tuple[str, ...], reachable: bool, found: list[HeaderParam], depth: int = 0) -> None:
    if not isinstance(node, Mapping):
        return
    if depth > 64:
        raise InvalidToolHeaders("inputSchema nests too deeply")
    if "x-mcp-header" in node:
        found.append(HeaderParam(path, _check_annotation(node, path, reachable)))
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            for prop, sub in value.items():
                _walk(sub, (*path, str(prop)), reachable, found, depth + 1)
        elif key in _SUBSCHEMA_ONE:
            _walk(value, (*path, key), False, found, depth + 1)
        elif key in _SUBSCHEMA_LIST and isinstance(value, list):
            for sub in value:
                _walk(sub, (*path, key), False, found, depth + 1)
        elif key in _SUBSCHEMA_MAP and isinstance(value, Mapping):
            for sub in value.values():
                _walk(sub, (*path, key), False, found, depth + 1)


def header_params(input_schema: Any) -> tuple[HeaderParam, ...]:
    """The annotated parameters of a tool's ``inputSchema`` (empty when none).

    Raises ``InvalidToolHeaders`` when an annotation breaks the rules.
    """
    found: list[HeaderParam] = []
    _walk(input_schema, (), True, found)
    seen: dict[str, str] = {}
    for param in found:
        key = param.name.lower()
        if key in seen:
            raise InvalidToolHeaders(f"x-mcp-header {param.name!r} repeats {seen[key]!r} (names are case-insensitive)")
        seen[key] = param.name
    return tuple(found)


def param_headers(params: Iterable[HeaderParam], arguments: Any) -> list[tuple[str, str]]:
    """``Mcp-Param-*`` headers for one call: absent or null arguments give no header."""
    out: list[tuple[str, str]] = []
    for param in params:
        node: Any = arguments
        for key in param.path:
            node = node.get(key) if isinstance(node, Mapping) else None
        text = header_text(node)
        if text is not None:
            out.append((param.header, encode_header_value(text)))
    return out


def filter_tools(
    tools: Any,
) -> tuple[list[Any], dict[str, tuple[HeaderParam, ...]], list[tuple[str, str]]]:
    """Split one ``tools/list`` page: kept tools, their header parameters, rejects.

    Returns ``(kept, headers_by_tool_name, [(tool name, reason), ...])``; a
    tool whose annotations are invalid is left out of ``kept``.  Entries that
    are not objects are kept untouched (schema validation is not this
    module's job).
    """
    kept: list[Any] = []
    by_name: dict[str, tuple[HeaderParam, ...]] = {}
    rejected: list[tuple[str, str]] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, Mapping):
            kept.append(tool)
            continue
        name = tool.get("name")
        try:
            params = header_params(tool.get("inputSchema"))
        except InvalidToolHeaders as exc:
            rejected.append((str(name), str(exc)))
            continue
        kept.append(tool)
        if isinstance(name, str):
            by_name[name] = params
    return kept, by_name, rejected


class _Tool(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def input_schema(self) -> Any: ...


ToolT = TypeVar("ToolT", bound=_Tool)


class ToolHeaderBook:
    """The ``x-mcp-header`` parameters of the tools a client listed, by tool name.

    ``learn`` reads a tool list and returns it; with ``reject_invalid`` (the
    Streamable HTTP transport, where the spec requires it) the tools whose
    annotations break the rules are left out and named in ``rejected`` as
    ``(tool name, reason)`` for the caller to log.  Without it they are kept,
    with no header parameters (other transports may ignore annotations).
    """

    def __init__(self, *, reject_invalid: bool) -> None:
        self.reject_invalid = reject_invalid
        self._params: dict[str, tuple[HeaderParam, ...]] = {}
        self.rejected: list[tuple[str, str]] = []

    def learn(self, tools: Sequence[ToolT]) -> list[ToolT]:
        kept: list[ToolT] = []
        self.rejected = []
        for tool in tools:
            try:
                params = header_params(tool.input_schema)
            except InvalidToolHeaders as exc:
                self._params.pop(tool.name, None)
                if self.reject_invalid:
                    self.rejected.append((tool.name, str(exc)))
                    continue
                params = ()
            if params:
                self._params[tool.name] = params
            else:
                self._params.pop(tool.name, None)
            kept.append(tool)
        return kept

    def params_for(self, tool_name: str) -> tuple[HeaderParam, ...]:
        """The parameters to mirror for a call of ``tool_name`` (empty when none or unknown)."""
        return self._params.get(tool_name, ())
