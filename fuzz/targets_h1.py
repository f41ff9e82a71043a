"""Fuzz target for the HTTP/1.1 client codec (``trimcp._sansio.http.client.h1``), h11 as the oracle.

``h1_response(data)``: the bytes are a server's answer to ``GET /`` (a status line is
put in front when they do not start with ``HTTP/``), cut into pieces at points derived
from the input and fed to the codec and to an ``h11.Connection(h11.CLIENT)``, with and
without a close after them.  The codec may raise only ``H1RemoteError``; ``difference``
is the oracle: both accept with the same final response (status, headers, body, and
whether the connection may be reused) or both refuse; without the close a refusal and a
wait for more bytes are not told apart.  Where the two legitimately differ,
``documented`` names the difference with the RFC 9112 / 9110 rule behind trimcp's
reading (a control character in a framing line, a major version other than 1, framing
fields on a response without a body, a transfer coding other than one ``chunked``, a
bare LF in the trailer section, a Content-Length beside Transfer-Encoding, a chunk size
of more than 20 digits).  obs-fold is unfolded by both, but RFC 9112 5.2 replaces the
whole ``OWS CRLF RWS`` with SP where h11 keeps the OWS before the CRLF, so h11 is given
the heads already unfolded the RFC's way (``rfc_unfold``).  ``tests/sansio/test_h1_differential.py``
runs the same oracle over generated responses.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import h11

from trimcp._sansio.http.client.h1 import CLOSED, NEED_DATA, Data, H1Client, H1RemoteError, Response

_HEAD_END = re.compile(rb"\n\r?\n")
_FOLD = re.compile(rb"[ \t]*\r?\n[ \t]+")


def rfc_unfold(data: bytes) -> bytes:
    """``data`` with each obs-fold in its 1xx and final heads replaced by one SP (RFC 9112 5.2)."""
    out, pos = [], 0
    while True:
        end = _HEAD_END.search(data, pos)
        if end is None:
            break
        # Only a field line can be folded: whitespace opening the first one is an error, not a fold.
        first = data.find(b"\n", pos, end.start())
        first = end.start() if first < 0 else first + 1
        out.append(data[pos:first] + _FOLD.sub(b" ", data[first : end.start()]) + end.group())
        final = data[pos + 9 : pos + 10] != b"1"  # "HTTP/1.1 1xx": another head follows
        pos = end.end()
        if final:
            break
    return b"".join(out) + data[pos:]


def cut(data: bytes, rng: random.Random, n: int) -> list[bytes]:
    points = sorted({rng.randrange(len(data) + 1) for _ in range(n)}) if data else []
    pieces, last = [], 0
    for point in [*points, len(data)]:
        pieces.append(data[last:point])
        last = point
    return [p for p in pieces if p]


#: ("accept", status, headers, body, reusable) | ("refuse", message) | ("incomplete",)
Outcome = tuple[Any, ...]


def read_codec(pieces: list[bytes], method: str, eof: bool) -> Outcome:
    codec = H1Client()
    codec.send_request(method, "/", [("Host", "example")])
    head: Response | None = None
    body: list[bytes] = []
    done = False
    try:
        for piece in [*pieces, b""] if eof else pieces:
            codec.receive_data(piece)
            while not done:
                event = codec.next_event()
                if event is NEED_DATA or event is CLOSED:
                    break
                if isinstance(event, Response):
                    head = event
                elif isinstance(event, Data):
                    body.append(bytes(event.data))
                else:
                    done = True
    except H1RemoteError as exc:
        return ("refuse", str(exc))
    if not done or head is None:  # after a close: CLOSED, the server hung up without answering
        return ("refuse", "closed without an answer") if eof else ("incomplete",)
    return ("accept", head.status_code, head.headers, b"".join(body), codec.reusable)


def read_h11(pieces: list[bytes], method: str, eof: bool) -> Outcome:
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
    conn.send(h11.Request(method=method, target="/", headers=[("Host", "example")]))
    conn.send(h11.EndOfMessage())
    head: Any = None
    body: list[bytes] = []
    done = False
    try:
        for piece in [*pieces, b""] if eof else pieces:
            conn.receive_data(piece)  # after the end of the message too: h11 keeps it as trailing data
            while not done:
                event = conn.next_event()
                if event is h11.NEED_DATA or isinstance(event, h11.ConnectionClosed):
                    break
                if isinstance(event, h11.Response):
                    head = event
                elif isinstance(event, h11.Data):
                    body.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    done = True
    except h11.RemoteProtocolError as exc:
        return ("refuse", str(exc))
    if not done or head is None:
        return ("refuse", "closed without an answer") if eof else ("incomplete",)
    reusable = conn.our_state is h11.DONE and conn.their_state is h11.DONE and not eof and not conn.trailing_data[0]
    headers = [(bytes(k), bytes(v)) for k, v in head.headers]
    return ("accept", head.status_code, headers, b"".join(body), reusable)


# ------------------------------------------------------------ the documented differences

#: Control characters other than HTAB (and the CR / LF that end lines).
_CTL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_LENIENT_CHUNK = re.compile(rb"([0-9A-Fa-f]+)(;[^\n]*)?")
#: The codec's refusals of one line of the framing.
_LINE_ERRORS = ("invalid status line", "invalid response header", "invalid chunk size line", "invalid trailer field")


def _heads(raw: bytes) -> list[bytes]:
    """The 1xx and final heads at the start of ``raw``, each without its blank line."""
    heads, pos = [], 0
    while (end := _HEAD_END.search(raw, pos)) is not None:
        heads.append(raw[pos : end.start() + 1])
        final = raw[pos + 9 : pos + 10] != b"1"
        pos = end.end()
        if final:
            break
    return heads


def _body_start(raw: bytes) -> int:
    pos = 0
    for head in _heads(raw):
        pos = _HEAD_END.search(raw, pos + len(head) - 1).end()  # type: ignore[union-attr]
    return pos


def _chunk_framing(raw: bytes) -> tuple[list[bytes], bool]:
    """The chunk-size and trailer lines of a chunked body, read leniently, and whether a
    line of the trailer section (its closing blank line included) ends in a bare LF."""
    lines, pos = [], _body_start(raw)
    while (nl := raw.find(b"\n", pos)) >= 0:
        line = raw[pos:nl].removesuffix(b"\r")
        lines.append(line)
        pos = nl + 1
        size = _LENIENT_CHUNK.match(line)
        if size is None:
            return lines, False
        if int(size[1], 16) == 0:
            break
        pos += int(size[1], 16) + 2
    bare_lf = False
    while (nl := raw.find(b"\n", pos)) >= 0:  # the trailer section, up to its blank line
        line = raw[pos:nl]
        bare_lf = bare_lf or not line.endswith(b"\r")
        pos = nl + 1
        if line in (b"", b"\r"):
            break
        lines.append(line.removesuffix(b"\r"))
    return lines, bare_lf


def _framing_lines(raw: bytes) -> list[bytes]:
    lines = [line.removesuffix(b"\r") for head in _heads(raw) for line in head.split(b"\n")]
    return lines + _chunk_framing(raw)[0]


def _no_body(status: int, method: str) -> bool:
    return method == "HEAD" or status in (204, 304)


def documented(raw: bytes, method: str, ours: Outcome, theirs: Outcome) -> str | None:
    """Which documented difference explains ``ours`` (the codec) against ``theirs`` (h11)."""
    ours_ok, theirs_ok = ours[0] == "accept", theirs[0] == "accept"
    if not ours_ok and ours[0] == "refuse":
        # RFC 9112 section 2.3: an HTTP/1.1 client reads HTTP/1.x; h11 takes any digit.digit.
        if "status line" in ours[1] and any(re.match(rb"HTTP/[02-9]\.", h) for h in _heads(raw)):
            return "a major HTTP version other than 1"
        # RFC 9112 section 4 (reason-phrase), RFC 9110 section 5.5 (field values, trailers) and
        # RFC 9112 section 7.1.1 (chunk-ext) leave no room for a control character but HTAB:
        # the codec refuses one (a smuggling risk where a peer reads it another way); h11 keeps it.
        line_refused = ours[1].startswith(_LINE_ERRORS)
        if theirs[0] != "refuse" and line_refused and any(_CTL.search(line) for line in _framing_lines(raw)):
            return "a control character in a status, field, chunk or trailer line"
        # RFC 9112 section 7.1 ends every line of the chunked framing, trailers included, with
        # CRLF; section 2.2 only permits reading a bare LF.  The codec does not in that framing
        # (where parsers that disagree let requests be smuggled); h11 reads one in the trailers.
        if theirs[0] != "refuse" and "does not end with CRLF" in ours[1] and _chunk_framing(raw)[1]:
            return "a bare LF in the trailer section"
    if ours_ok and not theirs_ok and theirs[0] == "refuse":
        # RFC 9112 section 6.3 rule 1: a HEAD answer and a 204 / 304 end at the blank line
        # whatever their framing fields say, so the codec does not read those; h11 checks them.
        if _no_body(ours[1], method) and ("Content-Length" in theirs[1] or "Transfer-Encoding" in theirs[1]):
            return "framing fields on a response without a body"
        # RFC 9112 section 6.3 rule 3: Transfer-Encoding overrides Content-Length, so the codec
        # does not read a Content-Length beside it (and never reuses the connection); h11 checks it.
        if "Content-Length" in theirs[1] and any(k == b"transfer-encoding" for k, _ in ours[2]):
            return "a Content-Length overridden by Transfer-Encoding"
    if ours[0] != "refuse" and theirs[0] == "refuse" and "chunk header" in theirs[1]:
        # RFC 9112 section 7.1 sets no length for chunk-size (only that a recipient must not
        # overflow): h11 reads at most 20 hex digits, the codec 16 significant ones after any zeros.
        sizes = [m[1] for line in _chunk_framing(raw)[0] if (m := _LENIENT_CHUNK.match(line))]
        if any(len(size) > 20 and len(size.lstrip(b"0")) <= 16 for size in sizes):
            return "a chunk size written with more than 20 digits"
    if theirs[0] == "refuse" and ("Transfer-Encoding" in theirs[1]):
        # RFC 9112 section 6.3 rule 4: chunked as the final coding is read chunked, any other
        # coding until close (section 6.1); h11 knows only a lone "chunked" and refuses the rest.
        return "a transfer coding other than one chunked"
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
        for k, v in outcome[2]
    ]
    return (*outcome[:2], headers, *outcome[3:])


def _same_accept(raw: bytes, ours: Outcome, theirs: Outcome) -> bool:
    ours, theirs = _as_compared(ours), _as_compared(theirs)
    if ours[1:4] != theirs[1:4]:
        return False
    if ours[4] == theirs[4]:
        return True
    names = {k for k, _ in ours[2]}
    # Both framings at once may be a smuggling attempt (RFC 9112 section 6.1, 11.2): the codec
    # reads it by Transfer-Encoding and never reuses the connection, h11 would.
    if {b"content-length", b"transfer-encoding"} <= names:
        return not ours[4]
    # h11 never reuses an HTTP/1.0 connection, even one answered with keep-alive (which
    # RFC 9112 section 9.3 lets a client reuse).
    final = _heads(raw)[-1]
    return final.startswith(b"HTTP/1.0") and not theirs[4]


def difference(raw: bytes, method: str, eof: bool, seed: int) -> str | None:
    """``None`` when the codec and h11 agree on ``raw`` (or differ as documented), else what differs."""
    ours = read_codec(cut(raw, random.Random(seed), random.Random(seed).randrange(8)), method, eof)
    # h11 keeps the whitespace before an obs-fold where RFC 9112 section 5.2 replaces the whole
    # fold with one SP; it is given the heads unfolded the RFC's way (the same bytes when unfolded).
    unfolded = rfc_unfold(raw)
    theirs = read_h11(cut(unfolded, random.Random(seed), random.Random(seed).randrange(8)), method, eof)
    if ours[0] == theirs[0] == "accept":
        if _same_accept(raw, ours, theirs):
            return None
    elif ours[0] == theirs[0] or (not eof and "accept" not in (ours[0], theirs[0])):
        return None
    if documented(raw, method, ours, theirs) is not None:
        return None
    return f"{method} {raw[:300]!r} eof={eof}:\n  trimcp {ours!r}\n  h11    {theirs!r}"


def fuzz_h1_response(data: bytes) -> None:
    raw = data if data.startswith(b"HTTP/") else b"HTTP/1.1 200 OK\r\n" + data
    seed = len(data) * 31 + (data[0] if data else 0)
    for eof in (True, False):
        found = difference(raw, "GET", eof, seed)
        assert found is None, found


TARGETS: dict[str, Callable[[bytes], None]] = {"h1_response": fuzz_h1_response}
