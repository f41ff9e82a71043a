"""Streamable HTTP and legacy HTTP+SSE, client side: what to send (sans-IO).

Theory of operation
-------------------
MCP over HTTP comes in three shapes, all of which one client must speak
(spec: basic/transports for 2024-11-05 and 2025-11-25,
basic/transports/streamable-http for 2026-07-28):

* **Streamable HTTP, handshake era** (2025-03-26 .. 2025-11-25).  Every
  client message is its own POST to the one MCP endpoint with
  ``Accept: application/json, text/event-stream``.  The server may assign a
  session id in the ``Mcp-Session-Id`` header of the response that carries the
  InitializeResult; the client echoes it on every later request, and sends
  ``MCP-Protocol-Version: <negotiated>`` on every request after
  ``initialize``.  A GET opens the optional standalone server stream; a GET
  with ``Last-Event-ID`` resumes a broken stream; a DELETE ends the session.
* **Streamable HTTP, 2026-07-28.**  POST only, no session, no GET.  Every
  request states its revision in ``MCP-Protocol-Version`` (equal to the
  ``io.modelcontextprotocol/protocolVersion`` of its ``_meta``).
* **HTTP+SSE (2024-11-05).**  A GET to the SSE URL whose first event,
  ``endpoint``, names the URL to POST every message to; all server messages
  come back as ``message`` events on that one GET stream.

On every POST of a request or notification this client also sends the
2026-07-28 *request metadata* headers (``Mcp-Method``, ``Mcp-Name``,
``Mcp-Param-*``, see ``http_headers``): they are required from 2026-07-28 and
ignored by older servers, and the official conformance suite checks them on
the handshake-era messages too.

``HttpPlanner`` holds what the client has learnt (session id, the revision
the session sends under, legacy POST URL) and turns an outgoing JSON-RPC
message into an ``HttpRequest`` description (method, URL, headers, body);
``response.py`` interprets what comes back and ``policy.py`` decides what to
do next.  The era of a request is read off the message itself: one whose
``_meta`` carries a protocol version is a 2026-07-28 request (no session id,
that version in the header).  The revision of everything else comes with the
message (``sending_under``, from the session's ``SendMeta``), and so do the
``x-mcp-header`` parameters of a called tool (``header_params``): the planner
never reads a result.  Nothing here does I/O, reads a clock, or draws
randomness.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

import attrs

from ...._errors import LocalProtocolError, RemoteProtocolError
from ...._version import __version__
from ... import jsonrpc as rpc
from ...connection.stateless import PROTOCOL_VERSION_KEY
from ..header_names import LAST_EVENT_ID_HEADER, METHOD_HEADER, NAME_HEADER, SESSION_HEADER, VERSION_HEADER, lower
from ..headers import NAME_SOURCES, HeaderParam, encode_header_value, is_token, param_headers

__all__ = [
    "ACCEPT_POST",
    "ACCEPT_SSE",
    "HttpPlanner",
    "HttpRequest",
    "Mode",
    "Origin",
    "PostPlan",
    "parse_url",
    "resolve_endpoint",
]

ACCEPT_POST: Final = "application/json, text/event-stream"
ACCEPT_SSE: Final = "text/event-stream"
USER_AGENT: Final = f"trimcp/{__version__}"

#: Headers the planner owns; static user headers may not override them.
_RESERVED: Final = frozenset(
    {
        "accept",
        "content-type",
        "content-length",
        "host",
        "transfer-encoding",
        "connection",
        *map(lower, (SESSION_HEADER, VERSION_HEADER, METHOD_HEADER, NAME_HEADER, LAST_EVENT_ID_HEADER)),
    }
)
_DEFAULT_PORTS: Final[Mapping[str, int]] = {"http": 80, "https": 443}


class Mode(enum.Enum):
    """Which HTTP transport the client speaks with the server right now."""

    STREAMABLE = "streamable-http"
    LEGACY_SSE = "http+sse"


@attrs.frozen
class Origin:
    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = _DEFAULT_PORTS[self.scheme] == self.port
        return f"{self.scheme}://{host}" + ("" if default else f":{self.port}")


@attrs.frozen
class ParsedUrl:
    origin: Origin
    #: The request-target: path plus query, never empty.
    target: str


def parse_url(url: str) -> ParsedUrl:
    """Split an ``http``/``https`` URL; raises ``LocalProtocolError`` for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise LocalProtocolError(f"invalid URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise LocalProtocolError(f"not an http(s) URL: {url!r}")
    if not parts.hostname:
        raise LocalProtocolError(f"URL has no host: {url!r}")
    if parts.username is not None or parts.password is not None:
        raise LocalProtocolError("credentials in the URL are not supported; use headers")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return ParsedUrl(Origin(scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]), target)


def resolve_endpoint(sse_url: str, announced: str) -> str:
    """The POST URL a 2024-11-05 ``endpoint`` event names, made absolute.

    Relative references resolve against the SSE URL.  An endpoint on another
    origin is refused (``RemoteProtocolError``): following it would send the
    session's messages, and any credentials in our headers, to a third party.
    """
    text = announced.strip()
    if not text:
        raise RemoteProtocolError("the endpoint event is empty")
    try:
        absolute = urljoin(sse_url, text)
    except ValueError as exc:  # urllib refuses some hosts outright (e.g. "Invalid IPv6 URL")
        raise RemoteProtocolError(f"the endpoint event names an unusable URL: {exc}") from None
    try:
        parsed = parse_url(absolute)
    except LocalProtocolError as exc:
        raise RemoteProtocolError(f"the endpoint event names an unusable URL: {exc}") from None
    if parsed.origin != parse_url(sse_url).origin:
        raise RemoteProtocolError(f"the endpoint event names {absolute!r}, on another origin than {sse_url!r}; refused")
    return absolute.split("#", 1)[0]


@attrs.frozen
class HttpRequest:
    """One HTTP request to make: everything an executor needs, nothing it must decide."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None


class MessageKind(enum.Enum):
    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"


@attrs.frozen
class PostPlan:
    """A POST of one JSON-RPC message, and what the response interpreter must know."""

    request: HttpRequest
    kind: MessageKind
    method: str | None
    #: The JSON-RPC id on the wire (requests only).
    wire_id: rpc.RequestId | None
    #: The revision of a 2026-07-28 request (read from its ``_meta``), else ``None``.
    stateless_version: str | None
    #: Whether the request carried ``Mcp-Session-Id`` (a 404 then means "session expired").
    sent_session: bool
    #: The planner's session generation when planned (see ``HttpPlanner.generation``).
    generation: int
    mode: Mode

    @property
    def is_initialize(self) -> bool:
        return self.method == "initialize"


#: ``encode_header_value`` of the methods and names a client repeats (bounded: cleared when full).
_header_texts: dict[str, str] = {}
_HEADER_TEXTS_MAX: Final = 256


def _header_text(value: str) -> str:
    text = _header_texts.get(value)
    if text is None:
        if len(_header_texts) >= _HEADER_TEXTS_MAX:
            _header_texts.clear()
        text = _header_texts[value] = encode_header_value(value)
    return text


def _stateless_version(params: Mapping[str, Any] | None) -> str | None:
    meta = params.get("_meta") if params is not None else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, Mapping) else None
    return version if isinstance(version, str) else None


def _printable(value: str) -> bool:
    """Printable ASCII and tabs only: text any HTTP writer accepts in a field value."""
    return all(c == "\t" or " " <= c <= "~" for c in value)


def _plain_header_text(value: str) -> bool:
    """A field value as it is, with no surrounding whitespace for a writer to strip."""
    return value == value.strip(" \t") and _printable(value)


def check_static_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Validate user-supplied headers; raises ``LocalProtocolError`` for a bad one."""
    out: list[tuple[str, str]] = []
    for name, value in headers:
        if not isinstance(name, str) or not is_token(name):
            raise LocalProtocolError(f"invalid HTTP header name {name!r}")
        if not isinstance(value, str) or not _printable(value):
            raise LocalProtocolError(
                f"invalid value for HTTP header {name!r} (printable ASCII only; "
                "encode other text, e.g. with encode_header_value)"
            )
        if name.lower() in _RESERVED:
            raise LocalProtocolError(f"header {name!r} is set by the MCP transport itself")
        out.append((name, value.strip()))
    return out


class HttpPlanner:
    """What the client knows about the server, and the requests that follows from it.

    ``headers`` are static extra headers (e.g. ``Authorization``); ``dynamic``
    headers (from a headers helper) may be replaced at any time with
    ``set_dynamic_headers`` and win over static ones of the same name.
    """

    def __init__(self, url: str, *, headers: Iterable[tuple[str, str]] = ()) -> None:
        parse_url(url)
        self.url = url
        self.mode = Mode.STREAMABLE
        #: 2024-11-05: the URL the ``endpoint`` event named.
        self.legacy_post_url: str | None = None
        self.session_id: str | None = None
        #: Handshake era: the revision the InitializeResult named.
        self.protocol_version: str | None = None
        #: 2026-07-28: the revision agreed by ``server/discover`` (for messages with no ``_meta``).
        self.stateless_version: str | None = None
        #: Bumped whenever the session changes (assigned, expired, re-initialized).
        self.generation = 0
        #: The params of the client's ``initialize``, kept to re-initialize after a 404.
        self.initialize_params: dict[str, Any] | None = None
        self._static = check_static_headers(headers)
        self._dynamic: list[tuple[str, str]] = []
        #: ``_common()``'s answer until the dynamic headers change (it is asked once per request).
        self._common_cache: tuple[tuple[str, str], ...] | None = None
        #: ``_session_post_headers()``'s answer, with what it was made from.
        self._session_post_cache: tuple[object, tuple[tuple[str, str], ...]] | None = None

    # -- state the driver reports ------------------------------------------------

    def set_dynamic_headers(self, headers: Iterable[tuple[str, str]]) -> None:
        self._dynamic = check_static_headers(headers)
        self._common_cache = None

    def session_assigned(self, session_id: str) -> None:
        """The InitializeResult's response named a session id."""
        if not session_id or not all("!" <= c <= "~" for c in session_id):
            raise RemoteProtocolError(f"invalid Mcp-Session-Id {session_id!r} (must be visible ASCII, 0x21-0x7E)")
        if session_id != self.session_id:
            self.session_id = session_id
            self.generation += 1

    def initialized(self, protocol_version: str) -> None:
        """The handshake chose ``protocol_version``."""
        self.protocol_version = protocol_version

    def session_expired(self) -> None:
        """Forget the session (after a 404 on it); a new ``initialize`` follows."""
        self.session_id = None
        self.protocol_version = None
        self.generation += 1

    def use_legacy(self, post_url: str) -> None:
        """Switch to the 2024-11-05 HTTP+SSE transport, posting to ``post_url``."""
        self.mode = Mode.LEGACY_SSE
        self.legacy_post_url = post_url
        self.session_id = None
        self.generation += 1

    def sending_under(self, protocol_version: str, stateless: bool) -> None:
        """The session sends its next message under ``protocol_version`` (a
        2026-07-28-era one when ``stateless``): the revision for the header of
        messages that do not name their own."""
        if stateless:
            self.stateless_version = protocol_version
        elif self.mode is Mode.STREAMABLE:
            # A handshake-era session (e.g. after a discover probe the server refused).
            self.stateless_version = None
            self.protocol_version = protocol_version

    # -- requests ----------------------------------------------------------------

    def _common(self) -> list[tuple[str, str]]:
        return list(self._common_headers())

    def _common_headers(self) -> tuple[tuple[str, str], ...]:
        common = self._common_cache
        if common is None:
            dynamic = {name.lower() for name, _ in self._dynamic}
            headers = [("User-Agent", USER_AGENT)]
            headers += [(n, v) for n, v in self._static if n.lower() not in dynamic]
            headers += self._dynamic
            common = self._common_cache = tuple(headers)
        return common

    def _post_headers(self, extra: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
        """The headers every POST carries, then ``extra``."""
        return [*self._common_headers(), ("Accept", ACCEPT_POST), ("Content-Type", "application/json"), *extra]

    def _session_post_headers(self) -> list[tuple[str, str]]:
        """``_post_headers`` with the session's: made again only when one of them changes
        (a session's every POST carries the same ones)."""
        key = (self._common_headers(), self.session_id, self.protocol_version)
        cached = self._session_post_cache
        if cached is None or cached[0] != key:
            cached = self._session_post_cache = (key, tuple(self._post_headers(tuple(self._session_headers()))))
        return list(cached[1])

    def _session_headers(self) -> list[tuple[str, str]]:
        headers: list[tuple[str, str]] = []
        if self.session_id is not None:
            headers.append((SESSION_HEADER, self.session_id))
        if self.protocol_version is not None:
            headers.append((VERSION_HEADER, self.protocol_version))
        return headers

    def metadata_headers(
        self, method: str, params: Mapping[str, Any] | None, header_params: Iterable[HeaderParam] = ()
    ) -> list[tuple[str, str]]:
        """``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` for one message
        (``header_params``: the called tool's ``x-mcp-header`` parameters)."""
        headers = [(METHOD_HEADER, _header_text(method))]
        source = NAME_SOURCES.get(method)
        if source is not None and params is not None:
            name = params.get(source)
            if isinstance(name, str):
                headers.append((NAME_HEADER, _header_text(name)))
        if method == "tools/call" and params is not None and header_params:
            headers += param_headers(header_params, params.get("arguments"))
        return headers

    def plan_post(
        self,
        message: rpc.Message,
        body: bytes | None = None,
        *,
        header_params: Iterable[HeaderParam] = (),
    ) -> PostPlan:
        """The POST that carries ``message`` (``body`` is its serialization, if already
        made; ``header_params``: for a ``tools/call``, the tool's ``x-mcp-header``
        parameters)."""
        if body is None:
            body = rpc.serialize(message)
        method: str | None = None
        params: dict[str, Any] | None = None
        wire_id: rpc.RequestId | None = None
        if isinstance(message, rpc.Request):
            kind, method, params, wire_id = MessageKind.REQUEST, message.method, message.params, message.id
        elif isinstance(message, rpc.Notification):
            kind, method, params = MessageKind.NOTIFICATION, message.method, message.params
        else:
            kind = MessageKind.RESPONSE
        stateless = _stateless_version(params) if kind is MessageKind.REQUEST else None
        url = self.url
        sent_session = False
        if self.mode is Mode.LEGACY_SSE:
            assert self.legacy_post_url is not None
            url = self.legacy_post_url
            headers = self._post_headers(())
        elif method == "initialize":
            self.initialize_params = dict(params or {})
            headers = self._post_headers(())
        elif stateless is not None:
            headers = self._post_headers(((VERSION_HEADER, stateless),))
        elif self.stateless_version is not None and self.session_id is None:
            headers = self._post_headers(((VERSION_HEADER, self.stateless_version),))
        else:
            sent_session = self.session_id is not None
            headers = self._session_post_headers()
        headers.append(("Content-Length", str(len(body))))
        if method is not None:
            headers += self.metadata_headers(method, params, header_params)
        return PostPlan(
            HttpRequest("POST", url, tuple(headers), body),
            kind,
            method,
            wire_id,
            stateless,
            sent_session,
            self.generation,
            self.mode,
        )

    def plan_reinitialize(self, wire_id: rpc.RequestId) -> PostPlan:
        """A fresh ``initialize`` (no session id) repeating the client's first one."""
        if self.initialize_params is None:
            raise LocalProtocolError("no initialize to repeat: the session never started")
        return self.plan_post(rpc.Request(wire_id, "initialize", self.initialize_params))

    def plan_get(self, last_event_id: str | None = None) -> HttpRequest:
        """The standalone GET stream, or (with ``last_event_id``) a resumption.

        The id is the server's SSE ``id`` text, which may hold any character but
        CR, LF and NUL; one that is not plain header text (visible ASCII, inner
        spaces and tabs) cannot travel as a field value and is left out, so the
        GET opens a fresh stream instead of failing in the HTTP writer.
        """
        headers = self._common() + [("Accept", ACCEPT_SSE)] + self._session_headers()
        if last_event_id and _plain_header_text(last_event_id):
            headers.append((LAST_EVENT_ID_HEADER, last_event_id))
        return HttpRequest("GET", self.url, tuple(headers))

    def plan_delete(self) -> HttpRequest | None:
        """The DELETE that ends the session, or ``None`` when there is no session."""
        if self.mode is not Mode.STREAMABLE or self.session_id is None:
            return None
        return HttpRequest("DELETE", self.url, tuple(self._common() + self._session_headers()))

    def plan_legacy_get(self) -> HttpRequest:
        """The 2024-11-05 GET that opens the SSE stream and announces the POST endpoint."""
        return HttpRequest("GET", self.url, tuple(self._common() + [("Accept", ACCEPT_SSE)]))
