"""Streamable HTTP and legacy HTTP+SSE, seen from the server: what to do with a request.

Theory of operation
-------------------
The server's policy (``policy``: what the Trio app ``trimcp.server.transports.http.app``
does with each request it reads) asks this module, which does no I/O, what a
request is and whether to serve it.
Everything here is a function of the request head (method, target, headers)
and, for a POST, its body; the verdict is either a value to act on or an
``HttpError`` - the status, headers and JSON-RPC error body to answer with
instead.  Randomness (session ids), clocks and sockets stay with the caller.

The checks, in the order the policy applies them:

1. **DNS rebinding** (spec 2025-11-25 and 2026-07-28, transports, "Security
   Warning"; the official conformance scenario ``dns-rebinding-protection``).
   A request whose ``Origin`` header is present and not allowed gets **403**
   (a MUST).  The ``Host`` header is also checked against the allowed
   authorities, because a rebinding browser sends the attacker's host name
   there; a mismatch gets **421 Misdirected Request** ("this server is not
   the authority you named").  ``OriginPolicy.loopback(port)`` is the default
   for a server bound to a loopback address: ``http://localhost:PORT``,
   ``http://127.0.0.1:PORT`` and ``http://[::1]:PORT`` (and ``https``) as
   origins, the same three authorities as hosts.
2. **Routing**: the MCP endpoint takes POST, GET and DELETE; the legacy SSE
   endpoint GET; the legacy message endpoint POST.  Another path is 404,
   another method 405 with an ``Allow`` header.
3. **Content negotiation**: ``accepts`` reads ``Accept`` (a missing header
   or ``*/*`` accepts everything); a POST body must be ``application/json``
   when a ``Content-Type`` is given (else 415).
4. **The body** (``parse_post``), parsed once into a ``PostBody`` that the
   server hands on to the session: one JSON-RPC message, or a batch.
   Unparsable JSON is 400 with -32700, anything else malformed 400 with
   -32600.  A batch is served only in a session whose revision has batches
   (``check_batch``, reading ``Revision.batches``: 2025-03-26); elsewhere it
   is 400 with -32600.
5. **Which era** (``is_stateless_post``): a request whose ``params._meta``
   carries ``io.modelcontextprotocol/protocolVersion``, or any POST whose
   ``MCP-Protocol-Version`` header names a stateless-era revision, is served
   statelessly (2026-07-28: no session; an ``Mcp-Session-Id`` is ignored);
   the rest belongs to the handshake era, where ``initialize`` without a
   session id opens a session and everything else must name one
   (``session_id_of``: missing is 400, the caller answers 404 for an unknown
   one).  The stateless header rules are in ``metadata``.

Every ``HttpError`` that carries a JSON-RPC code answers with a JSON-RPC
error response whose ``id`` is the request's when it could be read (the
2026-07-28 conformance suite checks that ids are echoed) and ``null``
otherwise.
"""

from __future__ import annotations

import enum
import functools
import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import attrs

from ... import jsonrpc as rpc
from ...connection.stateless import has_envelope
from ...revisions import REVISIONS, STATELESS_VERSIONS, HttpTransport, revisions_where
from ..header_names import SESSION_HEADER, VERSION_HEADER

JSON_TYPE: Final = "application/json"
SSE_TYPE: Final = "text/event-stream"

#: The revision a server assumes when a handshake-era request carries no
#: ``MCP-Protocol-Version`` header (spec 2025-06-18+, "Protocol Version Header").
#: That is the newest Streamable HTTP revision whose clients sent no such header.
DEFAULT_HEADERLESS_VERSION: Final = revisions_where(
    lambda r: r.http_transport is HttpTransport.STREAMABLE and not r.protocol_version_header
)[-1]

_STATELESS_VERSIONS: Final = frozenset(STATELESS_VERSIONS)


@attrs.frozen
class RequestHead:
    """An HTTP request line and headers; names lower case, values as sent (OWS trimmed)."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    #: Every value of each header, by name (built once: a request's checks ask a dozen times).
    _index: dict[str, list[str]] = attrs.field(init=False, eq=False, repr=False)
    _path: str = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        index: dict[str, list[str]] = {}
        for name, value in self.headers:
            index.setdefault(name, []).append(value)
        object.__setattr__(self, "_index", index)
        target = self.target
        # (a plain path needs no URL parsing; anything else is read as before)
        plain = target[:1] == "/" and target[1:2] != "/" and "?" not in target and "#" not in target
        path = target if plain else urlsplit(target).path
        object.__setattr__(self, "_path", path or "/")

    @classmethod
    def build(cls, method: str, target: str, headers: Iterable[tuple[str, str]]) -> RequestHead:
        return cls(method.upper(), target, tuple((k.lower(), v) for k, v in headers))

    def values(self, name: str) -> list[str]:
        """Every value of header ``name`` (in order)."""
        return list(self._index.get(name.lower(), ()))

    def get(self, name: str) -> str | None:
        """The header's value; repeated headers are joined with ``, `` (RFC 9110, 5.3)."""
        found = self._index.get(name.lower())
        return ", ".join(found) if found else None

    @property
    def path(self) -> str:
        return self._path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query)


@attrs.frozen
class HttpError:
    """An answer that replaces serving the request."""

    status: int
    message: str
    #: JSON-RPC error code of the body; ``None``: a plain-text body.
    code: int | None = rpc.INVALID_REQUEST
    request_id: rpc.RequestId | None = None
    data: Any = None
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def content_type(self) -> str:
        return JSON_TYPE if self.code is not None else "text/plain; charset=utf-8"

    def body(self) -> bytes:
        if self.code is None:
            return (self.message + "\n").encode("utf-8")
        error = rpc.ErrorObject(self.code, self.message, self.data)
        return rpc.serialize(rpc.ErrorResponse(self.request_id, error))

    def with_id(self, request_id: rpc.RequestId | None) -> HttpError:
        return attrs.evolve(self, request_id=request_id)


# ---------------------------------------------------------------- origin and host


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address, IPv6 with or without brackets) is this machine only."""
    host = host.strip().lower().removeprefix("[").removesuffix("]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def authority(host: str, port: int) -> str:
    """``host:port`` as a ``Host`` header writes it (IPv6 in brackets)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host.lower()}:{port}"


def _norm_origin(origin: str) -> str:
    return origin.strip().lower().rstrip("/")


@attrs.frozen
class OriginPolicy:
    """Which ``Origin`` and ``Host`` values are served; ``None`` means any."""

    allowed_origins: frozenset[str] | None
    allowed_hosts: frozenset[str] | None

    @classmethod
    def build(cls, origins: Iterable[str] | None, hosts: Iterable[str] | None) -> OriginPolicy:
        def norm(values: Iterable[str] | None) -> frozenset[str] | None:
            if values is None:
                return None
            out = frozenset(_norm_origin(v) for v in values)
            return None if "*" in out else out

        return cls(norm(origins), norm(hosts))

    @classmethod
    def loopback(cls, port: int) -> OriginPolicy:
        """The default of a server bound to a loopback address on ``port``."""
        hosts = [authority(h, port) for h in ("localhost", "127.0.0.1", "::1")]
        origins = [f"{scheme}://{h}" for scheme in ("http", "https") for h in hosts]
        return cls(frozenset(origins), frozenset(hosts))

    def check(self, head: RequestHead) -> HttpError | None:
        """403 for a foreign ``Origin``, 421 for a foreign ``Host``; ``None`` to go on."""
        if self.allowed_origins is not None:
            for origin in head.values("origin"):
                if _norm_origin(origin) not in self.allowed_origins:
                    return HttpError(403, f"Forbidden: origin {origin!r} is not allowed")
        if self.allowed_hosts is not None:
            hosts = head.values("host")
            if len(hosts) != 1 or _norm_origin(hosts[0]) not in self.allowed_hosts:
                shown = hosts[0] if len(hosts) == 1 else hosts
                return HttpError(421, f"Misdirected request: host {shown!r} is not served here")
        return None


def default_policy(
    bound_host: str,
    port: int,
    allowed_origins: Iterable[str] | None = None,
    allowed_hosts: Iterable[str] | None = None,
) -> OriginPolicy:
    """The policy for a server bound to ``bound_host:port``.

    Unset lists default to the loopback authorities when the server is bound
    to a loopback address.  A server bound elsewhere has no default host list
    (its names are not knowable here) and allows only loopback origins unless
    told otherwise.
    """
    base = OriginPolicy.loopback(port)
    origins = (
        base.allowed_origins if allowed_origins is None else OriginPolicy.build(allowed_origins, None).allowed_origins
    )
    if allowed_hosts is not None:
        hosts = OriginPolicy.build(None, allowed_hosts).allowed_hosts
    elif is_loopback(bound_host):
        hosts = base.allowed_hosts
    else:
        hosts = None
    return OriginPolicy(origins, hosts)


# ---------------------------------------------------------------- routing


class Endpoint(enum.Enum):
    MCP = "mcp"
    LEGACY_SSE = "legacy-sse"
    LEGACY_MESSAGES = "legacy-messages"


_METHODS: Final[Mapping[Endpoint, tuple[str, ...]]] = {
    Endpoint.MCP: ("POST", "GET", "DELETE"),
    Endpoint.LEGACY_SSE: ("GET",),
    Endpoint.LEGACY_MESSAGES: ("POST",),
}


def route(
    head: RequestHead,
    *,
    mcp_path: str | None,
    sse_path: str | None = None,
    messages_path: str | None = None,
) -> Endpoint | HttpError:
    """Which endpoint ``head`` addresses, or 404/405."""
    paths = {
        mcp_path: Endpoint.MCP,
        sse_path: Endpoint.LEGACY_SSE,
        messages_path: Endpoint.LEGACY_MESSAGES,
    }
    endpoint = paths.get(head.path) if head.path else None
    if endpoint is None:
        return HttpError(404, f"Not Found: {head.path}", code=None)
    allowed = _METHODS[endpoint]
    if head.method not in allowed:
        return HttpError(
            405,
            f"Method Not Allowed: {head.method} {head.path}",
            headers=(("allow", ", ".join(allowed)),),
        )
    return endpoint


def method_not_allowed(head: RequestHead, allowed: str = "POST") -> HttpError:
    return HttpError(405, f"Method Not Allowed: {head.method} {head.path}", headers=(("allow", allowed),))


# ---------------------------------------------------------------- content negotiation


def _media_ranges(header: str) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    for item in header.split(","):
        parts = [p.strip() for p in item.split(";")]
        media = parts[0].lower()
        if not media:
            continue
        q = 1.0
        for param in parts[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        out.append((media, q))
    return out


def _accepts(ranges: list[tuple[str, float]], media: str) -> bool:
    kind = media.split("/")[0]
    return any(q > 0 and r in (media, f"{kind}/*", "*/*") for r, q in ranges)


def accepts(head: RequestHead) -> tuple[bool, bool]:
    """Whether the client takes ``(application/json, text/event-stream)``."""
    header = head.get("accept")
    if header is None or not header.strip():
        return True, True
    return _accepted(header)


@functools.lru_cache(maxsize=64)  # a client sends the same Accept on every request
def _accepted(header: str) -> tuple[bool, bool]:
    ranges = _media_ranges(header)
    return _accepts(ranges, JSON_TYPE), _accepts(ranges, SSE_TYPE)


def check_content_type(head: RequestHead) -> HttpError | None:
    value = head.get("content-type")
    if value is None:
        return None  # lenient: the body is parsed as JSON either way
    if value.split(";")[0].strip().lower() != JSON_TYPE:
        return HttpError(415, f"Unsupported Media Type: a POST body must be {JSON_TYPE}, not {value!r}")
    return None


NOT_ACCEPTABLE: Final = HttpError(406, f"Not Acceptable: the client must accept {JSON_TYPE} and/or {SSE_TYPE}")


# ---------------------------------------------------------------- the body


@attrs.frozen
class PostBody:
    """A POST body, parsed once: what the server checks, and what it hands the session
    (as a ``Received`` of the same bytes and payload, never parsed again)."""

    data: bytes
    payload: rpc.ParsedPayload

    @property
    def is_batch(self) -> bool:
        return self.payload.is_batch

    @property
    def messages(self) -> list[rpc.Message]:
        return self.payload.messages

    @property
    def message(self) -> rpc.Message:
        """The one message of a body that is not a batch (a batch: its first)."""
        return self.payload.messages[0]

    @property
    def requests(self) -> list[rpc.Request]:
        return [m for m in self.payload.messages if isinstance(m, rpc.Request)]

    @property
    def error_id(self) -> rpc.RequestId | None:
        """The id an error answer to the whole POST carries: its (first) request's."""
        requests = self.requests
        return requests[0].id if requests else None

    def is_request(self, method: str) -> bool:
        """Whether the body is one request (not a batch) for ``method``."""
        message = self.message
        return not self.is_batch and isinstance(message, rpc.Request) and message.method == method


def parse_post(body: bytes, *, max_size: int = rpc.DEFAULT_MAX_MESSAGE_SIZE) -> PostBody | HttpError:
    """The JSON-RPC message (or batch) of a POST body, or the 4xx to answer.

    Whether a batch may be served depends on the session's revision: see ``check_batch``.
    """
    if len(body) > max_size:
        return HttpError(413, f"Payload Too Large: more than {max_size} bytes")
    parsed = rpc.parse_payload(body, max_size=max_size)
    if parsed.invalid:
        # (A batch with a bad member is refused whole: the spec lets a server refuse input.)
        bad = parsed.invalid[0]
        return HttpError(400, f"Bad Request: {bad.error.message}", code=bad.error.code, request_id=bad.id)
    return PostBody(body, parsed)


def check_batch(post: PostBody, version: str | None) -> HttpError | None:
    """A batch served under revision ``version`` (``None``: none yet): 400 and -32600 unless
    the revision has batches (``Revision.batches``: 2025-03-26, whose implementations MUST
    accept them), and also for ``initialize`` inside one (2025-03-26 lifecycle: it MUST
    NOT be batched) or two requests with one id."""
    if not post.is_batch:
        return None
    rid = post.error_id
    requests = post.requests
    if any(r.method == "initialize" for r in requests):
        return HttpError(400, "Bad Request: initialize must not be part of a JSON-RPC batch", request_id=rid)
    revision = REVISIONS.get(version) if version is not None else None
    if revision is None or not revision.batches:
        where = f"revision {version}" if version is not None else "a request outside a session"
        return HttpError(400, f"Bad Request: JSON-RPC batches are not part of {where}", request_id=rid)
    if len({r.id for r in requests}) < len(requests):
        return HttpError(400, "Bad Request: two requests of the batch share an id", request_id=rid)
    return None


def is_stateless_post(head: RequestHead, post: PostBody) -> bool:
    """Whether a POST belongs to the stateless era (see the module docstring, step 5)."""
    if any(has_envelope(r.params) for r in post.requests):
        return True
    return is_stateless_version(head.get(VERSION_HEADER))


def is_stateless_version(version: str | None) -> bool:
    return version is not None and version.strip() in _STATELESS_VERSIONS


# ---------------------------------------------------------------- sessions


_SESSION_ID: Final = re.compile(r"[!-~]+")


def valid_session_id(value: str) -> bool:
    """Visible ASCII only, 0x21..0x7E (spec: Session Management)."""
    return _SESSION_ID.fullmatch(value) is not None


MISSING_SESSION: Final = HttpError(400, "Bad Request: Mcp-Session-Id header is required")


def session_id_of(head: RequestHead) -> str | HttpError:
    """The request's session id; 400 when missing, repeated or malformed."""
    values = head.values(SESSION_HEADER)
    if not values:
        return MISSING_SESSION
    if len(values) > 1 or not valid_session_id(values[0]):
        return HttpError(400, "Bad Request: malformed Mcp-Session-Id header")
    return values[0]


def unknown_session(session_id: str) -> HttpError:
    return HttpError(404, "Not Found: no such session (it may have ended); send initialize again")


def check_session_version(head: RequestHead, supported: Iterable[str]) -> HttpError | None:
    """Handshake era, after ``initialize``: an unsupported ``MCP-Protocol-Version`` is 400."""
    values = head.values(VERSION_HEADER)
    if not values:
        return None  # the server then assumes DEFAULT_HEADERLESS_VERSION
    version = values[0].strip()
    if len(values) > 1 or version not in set(supported) or version in _STATELESS_VERSIONS:
        return HttpError(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r}")
    return None


# ---------------------------------------------------------------- answers


#: Stateless era: the HTTP status of a JSON-RPC error answered as ``application/json``
#: (2026-07-28: transports/streamable-http, basic/index, schema).
_STATELESS_ERROR_STATUS: Final[Mapping[int, int]] = {
    rpc.METHOD_NOT_FOUND: 404,
    rpc.HEADER_MISMATCH: 400,
    rpc.MISSING_CLIENT_CAPABILITY: 400,
    rpc.UNSUPPORTED_PROTOCOL_VERSION: 400,
    rpc.PARSE_ERROR: 400,
    rpc.INVALID_REQUEST: 400,
}


def stateless_status(message: rpc.Message) -> int:
    """The HTTP status for a stateless request answered with ``message`` as JSON."""
    if isinstance(message, rpc.ErrorResponse):
        return _STATELESS_ERROR_STATUS.get(message.error.code, 200)
    return 200


def legacy_endpoint_url(messages_path: str, session_id: str) -> str:
    """The ``endpoint`` event's data (2024-11-05): the POST URI, relative to the server."""
    return f"{messages_path}?session_id={session_id}"


def legacy_session_of(head: RequestHead) -> str | HttpError:
    values = head.query.get("session_id", [])
    if not values:
        return HttpError(400, "Bad Request: the session_id query parameter is required")
    if len(values) > 1 or not valid_session_id(values[0]):
        return HttpError(400, "Bad Request: malformed session_id")
    return values[0]


__all__ = [
    "DEFAULT_HEADERLESS_VERSION",
    "JSON_TYPE",
    "MISSING_SESSION",
    "NOT_ACCEPTABLE",
    "SSE_TYPE",
    "Endpoint",
    "HttpError",
    "OriginPolicy",
    "PostBody",
    "RequestHead",
    "accepts",
    "authority",
    "check_batch",
    "check_content_type",
    "check_session_version",
    "default_policy",
    "is_loopback",
    "is_stateless_post",
    "is_stateless_version",
    "legacy_endpoint_url",
    "legacy_session_of",
    "method_not_allowed",
    "parse_post",
    "route",
    "session_id_of",
    "stateless_status",
    "unknown_session",
    "valid_session_id",
]
