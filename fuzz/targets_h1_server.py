"""Fuzz target for the HTTP/1.1 server codec (``trimcp._sansio.http.server.h1``), h11 as the oracle.

``h1_request(data)``: the bytes are what a client sends a server (a request line is put
in front when they do not start with a method and a space), cut into pieces at points
derived from the input and fed to the codec and to an ``h11.Connection(h11.SERVER)``,
with and without a close after them.  The codec may raise only ``H1RemoteError``;
``difference`` is the oracle: both accept the first request with the same head (method,
target, version, headers), body and keep-alive, or both refuse; without the close a
refusal and a wait for more bytes are not told apart.  Where the two legitimately
differ, ``documented`` names the difference with the RFC 9112 / 9110 rule behind the
codec's reading: empty lines before the request line (ignored, section 2.2), obs-fold
(refused, section 5.2), Content-Length beside Transfer-Encoding (refused, section 6.1),
a major version other than 1 (505) or a minor one above 1 (read as 1.1, section 2.3),
a chunk extension or trailer line breaking the grammar, a bare LF in the trailer
section (section 7.1), a chunk size of more than 20 digits.
``tests/sansio/test_h1_server_differential.py`` runs the same oracle over generated requests.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import h11

from fuzz.targets_h1 import cut
from trimcp._sansio.http.server.h1 import CLOSED, NEED_DATA, Data, EndOfMessage, H1RemoteError, H1Server, Request

#: Both sides' head cap (h11's ``max_incomplete_event_size``, the codec's ``max_head``).
MAX_HEAD = 4096
_HEAD_END = re.compile(rb"\n\r?\n")
_LENIENT_CHUNK = re.compile(rb"([0-9A-Fa-f]+)(;[^\n]*)?")


#: ("accept", method, target, version, headers, body, keep_alive) | ("refuse", message) | ("incomplete",)
Outcome = tuple[Any, ...]


def read_codec(pieces: list[bytes], eof: bool) -> Outcome:
    codec = H1Server(max_head=MAX_HEAD)
    head: Request | None = None
    body: list[bytes] = []
    done = False
    try:
        for piece in [*pieces, b""] if eof else pieces:
            codec.receive_data(piece)
            while not done:
                event = codec.next_event()
                if event is NEED_DATA or event is CLOSED:
                    break
                if isinstance(event, Request):
                    head = event
                elif isinstance(event, Data):
                    body.append(event.data)
                else:
                    assert isinstance(event, EndOfMessage)
                    done = True
    except H1RemoteError as exc:
        return ("refuse", str(exc))
    if not done or head is None:
        return ("refuse", "closed before a whole request") if eof else ("incomplete",)
    codec.respond(200)
    headers = [(k.encode("ascii"), v.encode("latin-1")) for k, v in head.headers]
    keep = codec.start_next_cycle()
    return ("accept", head.method.encode(), head.target.encode(), head.http_version, headers, b"".join(body), keep)


def read_h11(pieces: list[bytes], eof: bool) -> Outcome:
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    head: Any = None
    body: list[bytes] = []
    done = False
    try:
        for piece in [*pieces, b""] if eof else pieces:
            conn.receive_data(piece)
            while not done:
                event = conn.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED or isinstance(event, h11.ConnectionClosed):
                    break
                if isinstance(event, h11.Request):
                    head = event
                elif isinstance(event, h11.Data):
                    body.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    done = True
    except h11.RemoteProtocolError as exc:
        return ("refuse", str(exc))
    if not done or head is None:
        return ("refuse", "closed before a whole request") if eof else ("incomplete",)
    conn.send(h11.Response(status_code=200, headers=[("content-length", "0")]))
    conn.send(h11.EndOfMessage())
    keep = conn.our_state is h11.DONE and conn.their_state is h11.DONE and not eof
    version = "1.0" if head.http_version == b"1.0" else "1.1"
    headers = [(bytes(k), bytes(v)) for k, v in head.headers]
    return ("accept", bytes(head.method), bytes(head.target), version, headers, b"".join(body), keep)


# ------------------------------------------------------------ the documented differences


def _head(raw: bytes) -> bytes:
    """The request head (after any empty lines before it), without its blank line."""
    start = len(raw) - len(raw.lstrip(b"\r\n"))
    end = _HEAD_END.search(raw, start)
    return raw[start : end.start() + 1] if end else raw[start:]


def _field_lines(raw: bytes) -> list[bytes]:
    return [line.removesuffix(b"\r") for line in _head(raw).split(b"\n")[1:] if line]


def _chunk_framing(raw: bytes) -> tuple[list[bytes], list[bytes], bool]:
    """The chunk-size lines and the trailer lines of a chunked body, read leniently, and
    whether a line of the trailer section (its blank line included) ends in a bare LF."""
    end = _HEAD_END.search(raw, len(raw) - len(raw.lstrip(b"\r\n")))
    if end is None:
        return [], [], False
    sizes: list[bytes] = []
    pos = end.end()
    while (nl := raw.find(b"\n", pos)) >= 0:
        line = raw[pos:nl].removesuffix(b"\r")
        sizes.append(line)
        pos = nl + 1
        size = _LENIENT_CHUNK.match(line)
        if size is None:
            return sizes, [], False
        if int(size[1], 16) == 0:
            break
        pos += int(size[1], 16) + 2
    trailers: list[bytes] = []
    bare_lf = False
    while (nl := raw.find(b"\n", pos)) >= 0:
        line = raw[pos:nl]
        bare_lf = bare_lf or not line.endswith(b"\r")
        pos = nl + 1
        if line in (b"", b"\r"):
            break
        trailers.append(line.removesuffix(b"\r"))
    return sizes, trailers, bare_lf


def documented(raw: bytes, ours: Outcome, theirs: Outcome) -> str | None:
    """Which documented difference explains ``ours`` (the codec) against ``theirs`` (h11)."""
    names = [line.partition(b":")[0].strip().lower() for line in _field_lines(raw)]
    request_line = _head(raw).split(b"\n")[0]
    # RFC 9112 section 2.2: a server SHOULD ignore at least one empty line before the
    # request line; h11 refuses one.
    if raw[:1] in (b"\r", b"\n") and theirs[0] == "refuse" and ours[0] != "refuse":
        return "empty lines before the request line"
    if ours[0] == "refuse":
        message = ours[1]
        # RFC 9112 section 5.2: a server MAY reject obs-fold with 400 (a folded framing field
        # is a smuggling shape); h11 unfolds it.
        if "obs-fold" in message:
            return "obs-fold"
        # RFC 9112 section 6.1: a server MAY reject a request with both framings (and MUST
        # close after serving one); h11 reads it by Transfer-Encoding and keeps the connection.
        if "both Content-Length and Transfer-Encoding" in message:
            return "Content-Length beside Transfer-Encoding"
        # RFC 9110 section 15.6.6 / RFC 9112 section 2.3: only HTTP/1.x is served here (505);
        # h11 reads any digit.digit.  A minor version above 1 is read as 1.1, which needs Host
        # (h11 asks Host of exactly 1.1).
        if "is not served here" in message or (re.search(rb" HTTP/1\.[2-9]\r?$", request_line) and "Host" in message):
            return "an HTTP version other than 1.0 and 1.1"
        # RFC 9112 section 7.1.1: a chunk-ext is token [= token / quoted-string]: no control
        # character; h11 takes anything after the ";".
        if "chunk size line" in message and any(
            re.search(rb";[^\n]*[\x00-\x08\x0a-\x1f\x7f]", line) for line in _chunk_framing(raw)[0]
        ):
            return "a control character in a chunk extension"
        # RFC 9112 section 7.1: every line of the chunked framing ends with CRLF; h11 reads a
        # bare LF in the trailer section (and unfolds a folded trailer field).
        sizes, trailers, bare_lf = _chunk_framing(raw)
        if ("does not end with CRLF" in message and bare_lf) or (
            "obs-fold" in message and any(t[:1] in b" \t" for t in trailers)
        ):
            return "a bare LF or obs-fold in the trailer section"
    if ours[0] == "accept" and theirs[0] == "accept" and ours[3] != theirs[3]:
        if re.search(rb" HTTP/1\.[2-9]\r?$", request_line):
            return "an HTTP version other than 1.0 and 1.1"
    if ours[0] != "refuse" and theirs[0] == "refuse" and "chunk header" in theirs[1]:
        # RFC 9112 section 7.1 sets no length for chunk-size (only that a recipient must not
        # overflow): h11 reads at most 20 hex digits, the codec 16 significant ones after any zeros.
        sizes = [m[1] for line in _chunk_framing(raw)[0] if (m := _LENIENT_CHUNK.match(line))]
        if any(len(size) > 20 and len(size.lstrip(b"0")) <= 16 for size in sizes):
            return "a chunk size written with more than 20 digits"
    if ours[0] != "refuse" and theirs[0] == "refuse" and b"transfer-encoding" in names and b"content-length" in names:
        return "Content-Length beside Transfer-Encoding"
    return None


def _as_compared(outcome: Outcome) -> Outcome:
    """The framing fields as h11 rewrites them; the codec hands on what was received.

    A Content-Length list of equal values becomes the one value (RFC 9110 section 8.6 lets a
    recipient keep or replace it); Transfer-Encoding is lowercased (coding names are
    case-insensitive, RFC 9112 section 7)."""
    if outcome[0] != "accept":
        return outcome
    headers = [
        (k, v.split(b",")[0].strip(b" \t") if k == b"content-length" else v.lower() if k == b"transfer-encoding" else v)
        for k, v in outcome[4]
    ]
    return (*outcome[:4], headers, *outcome[5:])


def difference(raw: bytes, eof: bool, seed: int) -> str | None:
    """``None`` when the codec and h11 agree on ``raw`` (or differ as documented), else what differs."""
    pieces = cut(raw, random.Random(seed), random.Random(seed).randrange(8))
    ours, theirs = read_codec(pieces, eof), read_h11(pieces, eof)
    if ours[0] == theirs[0] == "accept":
        if _as_compared(ours) == _as_compared(theirs):
            return None
    elif ours[0] == theirs[0] or (not eof and "accept" not in (ours[0], theirs[0])):
        return None
    if documented(raw, ours, theirs) is not None:
        return None
    return f"{raw[:300]!r} eof={eof}:\n  trimcp {ours!r}\n  h11    {theirs!r}"


_STARTS_REQUEST = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+ ")


def fuzz_h1_request(data: bytes) -> None:
    raw = data if _STARTS_REQUEST.match(data) else b"POST /mcp HTTP/1.1\r\nHost: x\r\n" + data
    seed = len(data) * 31 + (data[0] if data else 0)
    for eof in (True, False):
        found = difference(raw, eof, seed)
        assert found is None, found


TARGETS: dict[str, Callable[[bytes], None]] = {"h1_request": fuzz_h1_request}
