"""Fuzz targets for trimcp's wire parsers: SSE, HTTP response reader and planner,
``WWW-Authenticate``, the request-metadata header codec.

Each target is a pure function of one ``bytes`` input.  It raises only
``AssertionError`` when one of its oracles fails; the errors the modules
document (``RemoteProtocolError`` / ``LocalProtocolError`` from the SSE codec
and the planner, ``InvalidHeaderValue`` / ``InvalidToolHeaders`` from the
header codec; ``parse_challenges`` documents none) are caught inside, where
they are allowed, so anything else escaping is a bug.

Structured inputs are decoded from the bytes by ``_Bytes`` (a tiny cursor:
a byte picks from a table, a length-prefixed slice gives text), so that
libFuzzer's mutations reach the interesting branches.  Random splits are
derived from the input itself (``random.Random(data)``), so every run of a
given input is the same.  The oracles:

* ``sse`` (WHATWG HTML "Server-sent events"): whole vs. split feeding give
  the same events and decoder state; a small reference parser written from
  the standard agrees; data/ids/types within the size cap; ``encode_event``
  output decodes back to the event it was given (or it raises
  ``LocalProtocolError`` for text it documents as refused).
* ``http_response`` (Streamable HTTP, client side): at most one terminal
  event and it is the last; nothing after it; split body == whole body;
  every message within ``max_message_size``; a session id is visible ASCII.
* ``http_plan``: every planned header name is a token and every value
  printable ASCII (no header injection); ``Content-Length`` matches the body;
  ``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-*`` decode back to what the
  message says; the endpoint resolver stays on the SSE URL's origin.
* ``www_authenticate`` (RFC 9110 section 11.6.1, RFC 6750 section 3): never
  raises; schemes and param names are tokens, values strings; serialising
  the parsed challenges and parsing again gives them back.
* ``headers``: ``decode(encode(v)) == v``; encodings are header-safe; decode
  of anything raises only ``InvalidHeaderValue``; ``header_params`` of any
  JSON raises only ``InvalidToolHeaders`` and its names are unique tokens.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from typing import Any

from trimcp import LocalProtocolError, RemoteProtocolError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.auth.challenge import bearer_challenge, parse_challenges
from trimcp._sansio.framing import FramingOverflow
from trimcp._sansio.framing.sse import (
    ServerSentEvent,
    SSEDecoder,
    encode_comment,
    encode_event,
)
from trimcp._sansio.http import headers as hh
from trimcp._sansio.http.client import response as hr
from trimcp._sansio.http.client.plan import HttpPlanner, parse_url, resolve_endpoint

#: Small caps, so the oversize paths are reachable from short inputs.
MAX_EVENT = 256
MAX_MESSAGE = 512


class _Bytes:
    """A cursor that turns fuzz bytes into structured choices (0 / empty when exhausted)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def pick(self, table: Sequence[Any]) -> Any:
        return table[self.byte() % len(table)]

    def chunk(self, limit: int = 64) -> bytes:
        n = self.byte() % (limit + 1)
        out = self.data[self.pos : self.pos + n]
        self.pos += len(out)
        return out

    def text(self, limit: int = 64) -> str:
        return self.chunk(limit).decode("utf-8", "surrogateescape")

    def rest(self) -> bytes:
        out = self.data[self.pos :]
        self.pos = len(self.data)
        return out


def _splits(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randint(0, 8))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)]) if b > a]


def _printable(value: str) -> bool:
    return all(c == "\t" or " " <= c <= "~" for c in value)


# ------------------------------------------------------------------ sse


def _sse_reference(data: bytes) -> tuple[list[ServerSentEvent], str | None, int | None]:
    """WHATWG "Interpreting an event stream", written plainly over the whole text."""
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
    lines = re.split(r"\r\n|\r|\n", text)[:-1]  # the piece after the last line end is unfinished
    events: list[ServerSentEvent] = []
    last_id: str | None = None
    id_buf: str | None = None
    retry: int | None = None
    block_retry: int | None = None
    ev_type, buf = "", []
    for line in lines:
        if not line:
            last_id = id_buf
            if buf:
                events.append(ServerSentEvent(ev_type or "message", "\n".join(buf), last_id, block_retry, retry))
            ev_type, buf, block_retry = "", [], None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            buf.append(value)
        elif name == "event":
            ev_type = value
        elif name == "id" and "\x00" not in value:
            id_buf = value
        elif (
            name == "retry" and value and all("0" <= c <= "9" for c in value) and len(value.lstrip("0")) <= 18
        ):  # longer values: the module's documented choice
            retry = block_retry = int(value)
    return events, last_id, retry


def _sse_run(chunks: list[bytes], cap: int) -> tuple[list[ServerSentEvent], SSEDecoder, bool]:
    decoder = SSEDecoder(cap)
    events: list[ServerSentEvent] = []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        decoder.close()
    except FramingOverflow as exc:
        events += exc.completed
        return events, decoder, True
    assert decoder.eof and decoder.buffered == 0
    return events, decoder, False


def _sse_state(decoder: SSEDecoder) -> tuple[object, ...]:
    return (decoder.last_event_id, decoder.retry_ms, decoder.truncated, decoder.comments, decoder.dataless_blocks)


def _sse_round_trip(data: bytes) -> None:
    cur = _Bytes(data)
    blocks: list[tuple[bytes, ServerSentEvent | None]] = []
    for _ in range(1 + cur.byte() % 4):
        body, event, ident = cur.text(), cur.text(8), cur.text(8)
        flags = cur.byte()
        retry = cur.byte() * 1000 + cur.byte() if flags & 4 else None
        if flags & 8:
            try:
                blocks.append((encode_comment(body), None))
            except LocalProtocolError:
                assert any("\udc80" <= c <= "\udcff" for c in body)
            continue  # a comment dispatches nothing
        try:
            wire = encode_event(body, event=event if flags & 1 else None, id=ident if flags & 2 else None, retry=retry)
        except LocalProtocolError:
            refused = (
                (flags & 1 and re.search("[\r\n\x00]", event))
                or (flags & 2 and re.search("[\r\n\x00]", ident))
                or any("\udc80" <= c <= "\udcff" for c in body + event + ident)
            )
            assert refused, (body, event, ident)
            continue
        blocks.append(
            (
                wire,
                ServerSentEvent(
                    (event if flags & 1 else "") or "message",
                    re.sub(r"\r\n|\r", "\n", body),
                    ident if flags & 2 else None,
                    retry,
                ),
            )
        )
    stream = b"".join(wire for wire, _ in blocks)
    got, decoder, failed = _sse_run([stream], 1 << 20)
    assert not failed and not decoder.truncated
    # ``id`` persists across events (WHATWG lastEventId): carry it forward in the expectation.
    expected, last, in_effect = [], None, None
    for _, ev in blocks:
        if ev is not None:
            last = ev.id if ev.id is not None else last
            in_effect = ev.retry if ev.retry is not None else in_effect
            expected.append(ServerSentEvent(ev.event, ev.data, last, ev.retry, in_effect))
    assert got == expected, (stream, got, expected)


def fuzz_sse(data: bytes) -> None:
    """Split-invariance, the reference parser, caps, and the encoder round trip."""
    whole, dec_whole, failed_whole = _sse_run([data], MAX_EVENT)
    for event in whole:
        assert len(event.data) <= MAX_EVENT and len(event.event) <= MAX_EVENT
        assert "\r" not in event.data and not re.search("[\r\n]", event.event)
        assert event.id is None or (len(event.id) <= MAX_EVENT and not re.search("[\r\n\x00]", event.id))
        assert event.retry is None or event.retry >= 0
    rng = random.Random(data)
    for _ in range(2):
        chunks = _splits(data, rng)
        split, dec_split, failed_split = _sse_run(chunks, MAX_EVENT)
        assert failed_split == failed_whole, (chunks, failed_whole)
        # An overflow hands over what came before it, so even a failed stream's
        # events and state do not depend on the cuts.
        assert split == whole, (chunks, split, whole)
        assert _sse_state(dec_split) == _sse_state(dec_whole), chunks
    events, last_id, retry = _sse_reference(data)
    unlimited, dec, failed = _sse_run(_splits(data, rng), 1 << 24)
    assert not failed
    assert (unlimited, dec.last_event_id, dec.retry_ms) == (events, last_id, retry)
    # Under the cap the events are the uncapped ones, up to the overflow when there is one.
    assert whole == (unlimited[: len(whole)] if failed_whole else unlimited)
    _sse_round_trip(data)


# ------------------------------------------------------------------ http_response

_PURPOSES = list(hr.Purpose)
_STATUSES = (200, 200, 202, 204, 400, 401, 404, 405, 500, 201, 301, 503, 100, 299, 300, 999)
_CONTENT_TYPES = (
    "application/json",
    "text/event-stream",
    "text/event-stream; charset=utf-8",
    "Application/JSON; charset=utf-8",
    "application/problem+json",
    "text/plain",
    "text/html",
    "",
    None,
)
_SESSIONS = (None, "abc123", "", "a b", "\u00e9", "x" * 100, "tok\x00")
_IDS: tuple[rpc.RequestId | None, ...] = (None, 1, 0, "a", 7)
_URLS = ("http://127.0.0.1:8000/mcp", "https://example.com/sse", "")


def _http_bodies(cur: _Bytes) -> bytes:
    """The body: raw bytes, or JSON-RPC / SSE assembled from pieces."""
    kind = cur.byte() % 4
    rest = cur.rest()
    if kind == 0:
        return rest
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"x": rest.decode("latin-1")}}
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "session gone"}}
    if kind == 1:
        return json.dumps(answer).encode() if rest[:1] != b"e" else json.dumps(error).encode()
    if kind == 2:
        return b"id: 1\nretry: 10\ndata:\n\n" + b"event: message\ndata: " + json.dumps(answer).encode() + b"\n\n" + rest
    return b"event: endpoint\ndata: " + rest.split(b"\n")[0] + b"\n\n" + rest


def _event_key(event: hr.HttpEvent) -> object:
    if isinstance(event, hr.MessageReceived):
        return ("message", event.data, event.answers, event.payload)
    return type(event).__name__


def _http_run(
    case: dict[str, Any], status: int, headers: list[tuple[str, str]], chunks: list[bytes], broken: bool
) -> tuple[list[hr.HttpEvent], hr.ResponseReader]:
    reader = hr.ResponseReader(**case)
    events = list(reader.head(status, headers))
    for chunk in chunks:
        events += reader.data(chunk)
    events += reader.broken("cut") if broken else reader.end()
    assert reader.finished
    assert reader.end() == [] and reader.broken("again") == [] and reader.data(b"x") == []
    return events, reader


def fuzz_http_response(data: bytes) -> None:
    """A ResponseReader over any status, headers and body, whole and split."""
    cur = _Bytes(data)
    flags = cur.byte()
    case = {
        "purpose": cur.pick(_PURPOSES),
        "answer_id": cur.pick(_IDS),
        "expects_answer": bool(flags & 1),
        "sent_session": bool(flags & 2),
        "is_initialize": bool(flags & 4),
        "legacy_fallback": bool(flags & 8),
        "legacy_mode": bool(flags & 16),
        "max_message_size": MAX_MESSAGE,
        "url": cur.pick(_URLS),
    }
    status = cur.pick(_STATUSES)
    headers: list[tuple[str, str]] = []
    ctype = cur.pick(_CONTENT_TYPES)
    if ctype is not None:
        headers.append(("Content-Type" if flags & 32 else "content-type", ctype))
    session = cur.pick(_SESSIONS)
    if session is not None:
        headers.append(("Mcp-Session-Id", session))
    if flags & 64:
        headers.append((cur.text(8), cur.text(16)))
    broken = bool(flags & 128)
    body = _http_bodies(cur)
    whole, reader = _http_run(case, status, headers, [body], broken)
    terminals = [i for i, e in enumerate(whole) if isinstance(e, hr.TERMINAL)]
    assert terminals == [len(whole) - 1], whole
    received = [e for e in whole if isinstance(e, hr.MessageReceived)]
    assert reader.messages >= len(received)  # an error body's stray message is counted, not sent
    for event in received:
        assert len(event.data) <= MAX_MESSAGE
        for msg in event.payload.messages:
            rpc.serialize(msg)  # valid JSON in, valid JSON out
    for event in whole:
        if isinstance(event, hr.SessionAssigned):
            assert event.session_id and all("!" <= c <= "~" for c in event.session_id)
        elif isinstance(event, hr.RetryAfter):
            assert event.ms >= 0
        elif isinstance(event, hr.EndpointAnnounced):
            assert case["purpose"] is hr.Purpose.LEGACY_SSE
            assert parse_url(event.url).origin == parse_url(case["url"]).origin
    if reader.answered:
        assert any(case["answer_id"] in e.answers for e in received)
    rng = random.Random(data)
    split, again = _http_run(case, status, headers, _splits(body, rng), broken)
    strip = [_event_key(e) for e in whole if not isinstance(e, hr.RetryAfter)]
    assert [_event_key(e) for e in split if not isinstance(e, hr.RetryAfter)] == strip
    assert (again.last_event_id, again.retry_ms, again.answered) == (
        reader.last_event_id,
        reader.retry_ms,
        reader.answered,
    )


# ------------------------------------------------------------------ http_plan

_PLAN_URLS = (
    "http://127.0.0.1:8000/mcp",
    "https://example.com/a/b?x=1",
    "http://[::1]:9/",
    "ftp://x/",
    "http://",
    "http://u:p@h/",
    "http://h:99999/",
)
_METHODS = (
    "tools/call",
    "prompts/get",
    "resources/read",
    "initialize",
    "ping",
    "tools/list",
    "notifications/initialized",
)
_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
_HEADER_NAMES = ("Authorization", "X-Trace", "accept", "Mcp-Session-Id", "Bad Name", "", "X\u00e9")


def _checked_request(request: Any) -> None:
    for name, value in request.headers:
        assert hh.is_token(name), (name, request.headers)
        assert _printable(value) and value == value.strip(), (name, value)
    parse_url(request.url)  # only http(s) URLs are ever planned


def fuzz_http_plan(data: bytes) -> None:
    """HttpPlanner and its helpers over URLs, headers, ids and messages built from the bytes."""
    cur = _Bytes(data)
    flags = cur.byte()
    url = cur.pick(_PLAN_URLS) if flags & 1 else cur.text(40)
    static = [(cur.pick(_HEADER_NAMES) if flags & 2 else cur.text(8), cur.text(16)) for _ in range(cur.byte() % 3)]
    try:
        planner = HttpPlanner(url, headers=static)
    except LocalProtocolError:
        return
    try:
        planner.set_dynamic_headers([(cur.pick(_HEADER_NAMES), cur.text(16))])
    except LocalProtocolError:
        pass
    session = cur.text(16)
    try:
        planner.session_assigned(session)
        assert planner.session_id == session
    except RemoteProtocolError:
        assert not session or not all("!" <= c <= "~" for c in session)
    # Revisions reach the planner already checked (a known revision), so they come from the table.
    if flags & 4:
        planner.initialized(cur.pick(_REVISIONS))
    if flags & 8:
        planner.sending_under(cur.pick(_REVISIONS), bool(flags & 16))
    announced = cur.text(40)
    try:
        endpoint = resolve_endpoint(planner.url, announced)
    except RemoteProtocolError:
        pass
    else:
        assert parse_url(endpoint).origin == parse_url(planner.url).origin and "#" not in endpoint
        if flags & 32:
            planner.use_legacy(endpoint)
    method = cur.pick(_METHODS) if flags & 64 else cur.text(16)
    name, hname = cur.text(24), cur.text(8)
    schema = {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": hname}}}
    try:
        params = hh.header_params(schema)
    except hh.InvalidToolHeaders:
        params = ()
    arg = cur.pick((cur.text(24), 42, True, None, 1.5, [1], 2.0**60))
    message_params: dict[str, Any] = {"name": name, "uri": name, "arguments": {"a": arg}}
    if flags & 128:
        message_params["_meta"] = {"io.modelcontextprotocol/protocolVersion": cur.pick(_REVISIONS)}
    message = cur.pick(
        (
            rpc.Request(cur.byte(), method, message_params),
            rpc.Notification(method, message_params),
            rpc.Response(1, {"ok": name}),
        )
    )
    plan = planner.plan_post(message, header_params=params)
    _checked_request(plan.request)
    assert plan.request.header("Content-Length") == str(len(plan.request.body))
    assert plan.request.body == rpc.serialize(message)
    if isinstance(message, (rpc.Request, rpc.Notification)):
        got = plan.request.header("Mcp-Method")
        assert got is not None and hh.decode_header_value(got) == method
        nm = plan.request.header("Mcp-Name")
        if method in hh.NAME_SOURCES:
            assert nm is not None and hh.decode_header_value(nm) == name
        for param in params if method == "tools/call" else ():
            value = plan.request.header(param.header)
            expected = hh.header_text(arg)
            assert (value is None) == (expected is None)
            assert value is None or hh.decode_header_value(value) == expected
    # A Last-Event-ID is the server's SSE ``id`` text: it must not reach a header unchecked.
    for request in (planner.plan_get(cur.text(16) or None), planner.plan_legacy_get(), planner.plan_delete()):
        if request is not None:
            _checked_request(request)


# ------------------------------------------------------------------ www_authenticate

_TCHAR = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_T68 = set("-._~+/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ=")


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fuzz_www_authenticate(data: bytes) -> None:
    """parse_challenges never raises; what it parsed re-serialises and parses back the same."""
    for text in (data.decode("utf-8", "replace"), data.decode("latin-1")):
        challenges = parse_challenges(text)
        for ch in challenges:
            assert ch.scheme and set(ch.scheme) <= _TCHAR
            assert ch.token68 is None or (ch.token68 and set(ch.token68) <= _T68)
            assert not (ch.token68 and ch.params)
            for key, value in ch.params.items():
                assert isinstance(key, str) and isinstance(value, str)
                assert key and set(key) <= _TCHAR and key == key.lower()
            for prop in (ch.resource_metadata, ch.scope, ch.error):
                assert prop is None or isinstance(prop, str)
        bearer = bearer_challenge([text])
        assert bearer == next((c for c in challenges if c.scheme.lower() == "bearer"), None)
        wire = ", ".join(
            ch.scheme
            + (" " + ch.token68 if ch.token68 else "")
            + ("" if not ch.params else " " + ", ".join(f"{k}={_quote(v)}" for k, v in ch.params.items()))
            for ch in challenges
        )
        assert parse_challenges(wire) == challenges, (text, wire)


# ------------------------------------------------------------------ headers


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def fuzz_headers(data: bytes) -> None:
    """The header value codec, header_text, header_params / param_headers / filter_tools."""
    for value in (data.decode("utf-8", "surrogateescape"), data.decode("latin-1")):
        encoded = hh.encode_header_value(value)
        assert all(" " <= c <= "~" for c in encoded) and encoded == encoded.strip(" ")
        assert hh.decode_header_value(encoded) == value
        if not any("\ud800" <= c <= "\udfff" for c in value):
            assert hh.decode_header_value(encoded, strict=True) == value
        for strict in (False, True):
            try:
                decoded = hh.decode_header_value(value, strict=strict)
            except hh.InvalidHeaderValue:
                continue
            if hh.is_header_safe(value):
                assert decoded == value
        assert hh.is_token(value) == (bool(value) and set(value) <= _TCHAR)
    doc = _loads(data)
    text = hh.header_text(doc)
    assert text is None or isinstance(text, str)
    for schema in (doc, {"type": "object", "properties": doc}):
        try:
            params = hh.header_params(schema)
        except hh.InvalidToolHeaders:
            continue
        names = [p.name.lower() for p in params]
        assert len(set(names)) == len(names) and all(hh.is_token(p.name) for p in params)
        args = doc if isinstance(doc, dict) else {}
        for header, value in hh.param_headers(params, args):
            assert header.startswith("Mcp-Param-") and hh.is_token(header)
            assert all(" " <= c <= "~" for c in value)
    tools = doc.get("tools") if isinstance(doc, dict) else doc
    kept, by_name, rejected = hh.filter_tools(tools)
    assert len(kept) + len(rejected) == (len(tools) if isinstance(tools, list) else 0)
    assert all(isinstance(n, str) for n in by_name)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "sse": fuzz_sse,
    "http_response": fuzz_http_response,
    "http_plan": fuzz_http_plan,
    "www_authenticate": fuzz_www_authenticate,
    "headers": fuzz_headers,
}
