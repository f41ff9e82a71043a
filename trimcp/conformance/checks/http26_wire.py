"""Raw POSTs for the 2026-07-28 Streamable HTTP checks, read to the end of the answer.

Theory of operation
-------------------
The 2026-07-28 transport (``basic/transports/streamable-http``, "Sending
Messages" and "Receiving Messages") answers each POSTed request with one JSON
object or an SSE stream of related notifications followed by the response,
which should end the stream.  Judging that needs more than ``rawhttp.request``
gives (it stops at the first response): ``post`` writes one request with h11
on its own TCP connection (``Connection: close``) and reads the whole body,
then, for an event stream, keeps reading for ``linger`` seconds after the
response to see whether anything follows or whether the stream stays open.

Two probes need bytes a well-behaved h11 refuses to write (a header value
with a non-ASCII byte): ``raw_values`` maps a placeholder value to the raw
bytes that replace it in the serialised head, after h11 has checked it.

Every exchange runs under the caller's deadline; ``ProbeError`` says what
broke.  A ``Prober`` holds what the probes of one run share (URL, revision,
deadline, credentials) and builds the bodies and headers a correct client
would send, for the probes to spoil one thing each.  The answer keeps the exchange as ``evidence.exchange`` for a report.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import attrs
import h11
import trio

from ..._sansio.framing.sse import SSEDecoder
from ..._sansio.http import header_names as hn
from ..._sansio.http import headers as hh
from ..evidence import exchange
from ..rawhttp import MAX_BODY, ProbeError, RawClient
from .probes import envelope

__all__ = ["ACCEPT", "Answer", "Prober", "post"]

ACCEPT: Final = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@attrs.frozen
class Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes
    #: The JSON values of the body: the one JSON object, or each SSE event's data.
    messages: tuple[Any, ...]
    #: Messages that arrived after the first JSON-RPC response (SSE only).
    after_response: tuple[Any, ...]
    #: The body ended (for SSE: the server closed the stream within the linger time).
    ended: bool
    evidence: dict[str, Any]

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()

    @property
    def responses(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if isinstance(m, dict) and ("result" in m or "error" in m)]

    def error_code(self) -> int | None:
        for msg in self.responses:
            error = msg.get("error")
            if isinstance(error, dict):
                code = error.get("code")
                return code if isinstance(code, int) else None
        return None


async def post(
    url: str,
    headers: Mapping[str, str] | list[tuple[str, str]],
    body: Any,
    *,
    timeout: float,
    linger: float = 0.5,
    extra_headers: tuple[tuple[str, str], ...] = (),
    raw_values: Mapping[str, bytes] | None = None,
) -> Answer:
    """POST ``body`` (a JSON value) to ``url`` and read the whole answer."""
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    host = parts.hostname or "localhost"
    port = parts.port or (443 if tls else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    data = json.dumps(body).encode()
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    given = {k.lower() for k, _ in pairs}
    hdrs = [("Host", parts.netloc), ("Connection", "close"), *pairs]
    hdrs += [(k, v) for k, v in extra_headers if k.lower() not in given]
    hdrs.append(("Content-Length", str(len(data))))
    try:
        with trio.fail_after(timeout):
            stream: trio.abc.Stream = await trio.open_tcp_stream(host, port)
            if tls:
                stream = trio.SSLStream(stream, ssl.create_default_context(), server_hostname=host)
            async with stream:
                return await _exchange(stream, url, target, hdrs, data, linger, raw_values or {})
    except trio.TooSlowError:
        raise ProbeError(f"POST {target}: no answer within {timeout:g}s") from None
    except (OSError, trio.BrokenResourceError, h11.ProtocolError) as exc:
        raise ProbeError(f"POST {target}: {type(exc).__name__}: {exc}") from None


async def _exchange(
    stream: trio.abc.Stream,
    url: str,
    target: str,
    hdrs: list[tuple[str, str]],
    data: bytes,
    linger: float,
    raw_values: Mapping[str, bytes],
) -> Answer:
    conn = h11.Connection(h11.CLIENT)
    head = conn.send(h11.Request(method="POST", target=target, headers=hdrs)) or b""
    for placeholder, raw in raw_values.items():
        head = head.replace(placeholder.encode(), raw)
    await stream.send_all(head + (conn.send(h11.Data(data=data)) or b"") + (conn.send(h11.EndOfMessage()) or b""))
    response: h11.Response | None = None
    body = bytearray()
    sse: SSEDecoder | None = None
    messages: list[Any] = []
    after: list[Any] = []
    ended = False
    answered = False
    deadline = 0.0
    while not ended:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            if answered and sse is not None:
                # The response came: give the stream ``linger`` seconds to end (it should).
                with trio.move_on_at(deadline):
                    chunk = await stream.receive_some(65536)
                    conn.receive_data(bytes(chunk))
                    continue
                break
            conn.receive_data(bytes(await stream.receive_some(65536)))
        elif isinstance(event, h11.Response):
            response = event
            ctype = dict(event.headers).get(b"content-type", b"").split(b";")[0].strip().lower()
            sse = SSEDecoder() if ctype == b"text/event-stream" else None
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY:
                break
            if sse is not None:
                for ev in sse.feed(bytes(event.data)):
                    msg = _json(ev.data)
                    if msg is None and not ev.data:
                        continue
                    (after if answered else messages).append(msg)
                    if not answered and isinstance(msg, dict) and ("result" in msg or "error" in msg):
                        answered = True
                        deadline = trio.current_time() + linger
        elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
            ended = True
        elif isinstance(event, h11.InformationalResponse):
            continue
    if response is None:
        raise ProbeError(f"POST {target}: the connection closed before an answer")
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers}
    if sse is None and body:
        msg = _json(body.decode("utf-8", "replace"))
        if msg is not None:
            messages.append(msg)
    evidence = exchange(
        "POST",
        url,
        [(k, v) for k, v in hdrs if k.lower() not in ("host", "connection")],
        data,
        status=response.status_code,
        response_headers=headers,
        response_body=bytes(body),
    )
    return Answer(response.status_code, headers, bytes(body), tuple(messages), tuple(after), ended, evidence)


class Prober:
    """What the probes of one run share: the URL, revision, deadline and credentials."""

    def __init__(self, url: str, revision: str, raw: RawClient) -> None:
        self.url, self.revision, self.raw = url, revision, raw
        self._ids = iter(range(9001, 100000))
        #: Every answer, to look for a session id the server minted.
        self.answers: list[Answer] = []

    def body(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        version: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        full = {**(params or {}), "_meta": {**envelope(self.revision, version=version), **(meta or {})}}
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": full}

    def headers(self, body: dict[str, Any], **extra: str) -> dict[str, str]:
        """The headers a correct client sends for ``body``, then ``extra`` (``None``-less)."""
        out = {**ACCEPT, hn.VERSION_HEADER: self.revision, hn.METHOD_HEADER: body["method"]}
        source = hh.NAME_SOURCES.get(body["method"])
        value = body.get("params", {}).get(source) if source else None
        if isinstance(value, str):
            out[hn.NAME_HEADER] = hh.encode_header_value(value)
        return {**out, **extra}

    async def send(self, headers: dict[str, str] | list[tuple[str, str]], body: Any, **kw: Any) -> Answer:
        answer = await post(
            self.url, headers, body, timeout=self.raw.timeout, extra_headers=self.raw.extra_headers, **kw
        )
        self.answers.append(answer)
        return answer

    async def call(self, body: dict[str, Any], **extra: str) -> Answer:
        return await self.send(self.headers(body, **extra), body)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
