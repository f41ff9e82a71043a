"""Fuzz target for the HTTP/1.1 client codec (``trimcp._sansio.http.client.h1``), h11 as the oracle.

``h1_response(data)``: the bytes are a server's answer to ``GET /`` (a status line is
put in front when they do not start with ``HTTP/``), fed in pieces cut at points
derived from the input, then EOF.  The codec may raise only ``H1RemoteError``; when
it accepts a whole response, h11 parsing the same bytes must give the same status,
headers and body (and, for HTTP/1.1, the same keep-alive verdict).  Where the codec
is stricter than h11 (HTTP/1.x versions other than 1.0/1.1, ...) it raises
and nothing is compared; obs-fold is unfolded by both, but RFC 9112 5.2 replaces the whole
``OWS CRLF RWS`` with SP where h11 keeps the OWS before the CRLF, so h11 is given the heads
already unfolded the RFC's way (``rfc_unfold``); where RFC 9112 asks for more than h11 does (a transfer coding
other than a lone ``chunked`` is read to close; h11 refuses it) nothing is compared either.  ``parse_codec`` and ``parse_h11`` are shared with
``tests/test_h1_codec.py``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Any

import h11

from trimcp._sansio.http.client.h1 import (
    CLOSED,
    NEED_DATA,
    Data,
    EndOfMessage,
    H1Client,
    H1RemoteError,
    Response,
)

#: What one parse saw: (status, headers, body, reusable).
Outcome = tuple[int, list[tuple[bytes, bytes]], bytes, bool]


def parse_codec(
    pieces: Sequence[bytes], *, method: str = "GET", eof: bool = True, max_head: int = 64 * 1024
) -> Outcome | None:
    """The codec's reading of ``pieces`` (``None``: the response is not complete)."""
    codec = H1Client(max_head=max_head)
    codec.send_request(method, "/", [("Host", "example")])
    head: Response | None = None
    body: list[bytes] = []
    done = False
    feed = [*pieces, b""] if eof else list(pieces)
    for piece in feed:
        codec.receive_data(piece)
        while not done:
            event = codec.next_event()
            if event is NEED_DATA or event is CLOSED:
                break
            if isinstance(event, Response):
                assert head is None, "two final heads in one exchange"
                head = event
            elif isinstance(event, Data):
                assert head is not None, "body before the head"
                body.append(bytes(event.data))
            else:
                assert isinstance(event, EndOfMessage)
                done = True
    if not done or head is None:
        return None
    return head.status_code, head.headers, b"".join(body), codec.reusable


def parse_h11(data: bytes, *, method: str = "GET", eof: bool = True) -> Outcome | None:
    """h11's reading of the same bytes (``None``: h11 rejected them or found no end)."""
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=10 * 1024 * 1024)
    conn.send(h11.Request(method=method, target="/", headers=[("Host", "example")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(rfc_unfold(data))
    if eof:
        conn.receive_data(b"")
    head: Any = None
    body: list[bytes] = []
    try:
        while True:
            event = conn.next_event()
            if isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                return None
    except h11.RemoteProtocolError:
        return None
    if head is None:
        return None
    reusable = conn.our_state is h11.DONE and conn.their_state is h11.DONE and not eof and not conn.trailing_data[0]
    headers = [(bytes(k), bytes(v)) for k, v in head.headers]
    return head.status_code, headers, b"".join(body), reusable


_HEAD_END = re.compile(rb"\n\r?\n")
_FOLD = re.compile(rb"[ \t]*\r?\n[ \t]+")


def rfc_unfold(data: bytes) -> bytes:
    """``data`` with each obs-fold in its 1xx and final heads replaced by one SP (RFC 9112 5.2)."""
    out, pos = [], 0
    while True:
        end = _HEAD_END.search(data, pos)
        if end is None:
            break
        out.append(_FOLD.sub(b" ", data[pos : end.start()]) + end.group())
        final = data[pos + 9 : pos + 10] != b"1"  # "HTTP/1.1 1xx": another head follows
        pos = end.end()
        if final:
            break
    return b"".join(out) + data[pos:]


def final_is_http10(data: bytes) -> bool:
    """Whether the final (non-1xx) head of ``data`` is HTTP/1.0, the one whose reuse is judged."""
    pos = 0
    while (end := _HEAD_END.search(data, pos)) is not None and data[pos + 9 : pos + 10] == b"1":
        pos = end.end()
    return data[pos : pos + 8] == b"HTTP/1.0"


def cut(data: bytes, rng: random.Random, n: int) -> list[bytes]:
    points = sorted({rng.randrange(len(data) + 1) for _ in range(n)}) if data else []
    pieces, last = [], 0
    for point in [*points, len(data)]:
        pieces.append(data[last:point])
        last = point
    return [p for p in pieces if p]


def same(ours: Outcome, theirs: Outcome, *, http10: bool) -> bool:
    if http10:  # h11 never reuses an HTTP/1.0 connection, even with keep-alive
        return ours[:3] == theirs[:3] and not theirs[3]
    return ours == theirs


def _beyond_h11(headers: list[tuple[bytes, bytes]]) -> bool:
    """A transfer coding other than a final ``chunked``: RFC 9112 6.3 reads to close, h11 refuses."""
    codings = [c.strip(b" \t").lower() for k, v in headers if k == b"transfer-encoding" for c in v.split(b",")]
    return bool(codings) and codings != [b"chunked"]


def fuzz_h1_response(data: bytes) -> None:
    raw = data if data.startswith(b"HTTP/") else b"HTTP/1.1 200 OK\r\n" + data
    rng = random.Random(len(data) * 31 + (data[0] if data else 0))
    for eof in (True, False):
        try:
            ours = parse_codec(cut(raw, rng, rng.randrange(8)), eof=eof)
        except H1RemoteError:
            continue
        if ours is None:
            continue
        if _beyond_h11(ours[1]):
            continue
        theirs = parse_h11(raw, eof=eof)
        assert theirs is not None, f"the codec accepted what h11 rejects: {raw[:200]!r} -> {ours!r}"
        assert same(ours, theirs, http10=final_is_http10(raw)), (raw[:200], ours, theirs)


TARGETS: dict[str, Callable[[bytes], None]] = {"h1_response": fuzz_h1_response}
