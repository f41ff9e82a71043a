"""trimcp's HTTP/1.1 server codec against h11, request stream for request stream.

Every HTTP server of trimcp reads its requests with its own codec
(``trimcp._sansio.http.server.h1``); h11, which it replaced, is the reference it is held
to.  Hypothesis writes request byte streams, valid and damaged (request lines, field
lines with obs-fold and bad characters, Host missing or repeated, Content-Length against
chunked, chunk extensions, trailers, bad sizes, empty lines before the request, bytes
after it), cuts them at arbitrary points, and feeds the same pieces to an ``H1Server``
and to an ``h11.Connection(h11.SERVER)``.  With the connection closed after the bytes,
both must accept the same request (method, target, version, headers, body, and whether
the connection may carry another) or both must refuse.  Without the close, whenever one
has a whole request so must the other, the same; a refusal and a wait for more bytes are
not told apart then.

Where the two legitimately differ, ``documented`` (in ``fuzz/targets_h1_server.py``,
shared with the fuzz target) names the difference with the RFC 9112 / RFC 9110 rule that
makes the codec's reading the right one; any other difference fails.
"""

from __future__ import annotations

import random

import pytest
from h1_strategies import MessageParts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.targets_h1_server import cut, difference, fuzz_h1_request, read_codec

#: Where a request may be odd, each with the valid choices and the odd ones.
_CHOICES: dict[str, tuple[list[bytes], list[bytes]]] = {
    "method": ([b"POST"] * 4 + [b"GET", b"DELETE", b"post", b"M-SEARCH"], [b"PO ST", b"", b"P\x00", b"[x]", b"\xe9"]),
    "target": ([b"/mcp"] * 4 + [b"/", b"*", b"/a?b=c", b"http://h/x"], [b"/a b", b"", b"/\x00", b"/\x7f", b"/\xe9"]),
    "version": (
        [b"HTTP/1.1"] * 4 + [b"HTTP/1.0"],
        [b"HTTP/2.0", b"HTTP/0.9", b"http/1.1", b"HTTP/1", b"HTTP/1.1 ", b"HTTP/11", b"HTTP/1.2"],
    ),
    "lead": ([b""], [b"\r\n", b"\n", b"\r\n\r\n", b" "]),
    "host": ([b"one"], [b"none", b"two"]),
    "name": ([], [b"a b", b"", b"x\x00", b"[x]", b"x\x7f", b" x"]),
    "colon": ([b":"], [b" :", b"\t:"]),
    "word": ([], [b"\x01", b"a\x7fb", b"\x00", b"a\rb", b"\x0b", b"\x1f", b"\xff"]),
    "ext": ([b""] * 4 + [b";a=b", b";x", b'; q="1;2"', b"  "], [b" ;x", b";\x00", b";\x7f", b";a\rb"]),
    "size": ([], [b"-1", b"0x5", b"", b"g", b"1" * 17, b"+1", b"zeros"]),
    "chunk-data": ([], [b"longer", b"shorter", b"no-crlf", b"lf"]),
    "length": ([b"exact", b"list"], [b"conflict", b"+5", b"-1", b" 5", b"0x5", b"", b"5 5", b"\xd9\xa5", b"9" * 21]),
    "codings": (
        [b"chunked"] * 3 + [b"Chunked"],
        [b"gzip, chunked", b"chunked, chunked", b"gzip", b"chunked , ", b"identity", b"two headers"],
    ),
    "after": ([b"", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"], [b"x", b"\r\n", b"\x00"]),
    "eol": ([b"\r\n"], [b"\n"]),  # in the trailer section
    "fold": ([], []),  # obs-fold in a field (a flag: no choice of its own)
    "both": ([], []),  # Content-Length and Transfer-Encoding (a flag)
}

_PARTS = MessageParts(
    _CHOICES, framing=("content-length", "transfer-encoding", "connection", "host", "expect"), fold=False, fold_one_in=4
)
_pick, _field, _chunked = _PARTS.pick, _PARTS.field, _PARTS.chunked


@st.composite
def _request(draw: st.DrawFn, odd: frozenset[str] = frozenset()) -> bytes:
    """A request; odd in the places named by ``odd`` (none: a valid one)."""
    version = draw(_pick("version", odd))
    raw = draw(_pick("lead", odd))
    raw += draw(_pick("method", odd)) + b" " + draw(_pick("target", odd)) + b" " + version + b"\r\n"
    fields = draw(st.lists(_field(odd), max_size=4))
    hosts = draw(_pick("host", odd))
    if hosts != b"none" and not (hosts == b"one" and version == b"HTTP/1.0" and draw(st.booleans())):
        for _ in range(2 if hosts == b"two" else 1):
            fields.append(draw(_field(odd, b"Host", b"127.0.0.1:8000")))
    body = draw(st.binary(max_size=64))
    framing = "both" if "both" in odd else draw(st.sampled_from(["length", "chunked", "none"]))
    if framing == "none":
        body = b""
    if draw(st.booleans()):
        value = draw(st.sampled_from([b"close", b"keep-alive", b"Keep-Alive, x", b"x, CLOSE"]))
        fields.append(draw(_field(odd, b"Connection", value)))
    if draw(st.integers(0, 5)) == 0:
        fields.append(draw(_field(odd, b"Expect", b"100-continue")))
    if framing in ("length", "both"):
        kind = draw(_pick("length", odd))
        value = {
            b"exact": b"%d" % len(body),
            b"list": b"%d, %d" % (len(body), len(body)),
            b"conflict": b"%d" % len(body),
        }.get(kind, kind)
        fields.append(draw(_field(odd, b"Content-Length", value)))
        if kind == b"conflict":
            fields.append(draw(_field(odd, b"Content-Length", b"%d" % (len(body) + 1))))
    if framing in ("chunked", "both"):
        codings = draw(_pick("codings", odd))
        value = b"chunked" if codings == b"two headers" else codings
        fields.append(draw(_field(odd, b"Transfer-Encoding", value)))
        if codings == b"two headers":
            fields.append(draw(_field(odd, b"Transfer-Encoding", b"chunked")))
        payload = draw(_chunked(body, odd))
    else:
        payload = body
    raw += b"".join(draw(st.permutations(fields))) + draw(st.sampled_from([b"\r\n", b"\n"])) + payload
    return raw + draw(_pick("after", odd))


def _odd_request() -> st.SearchStrategy[bytes]:
    sites = st.sets(st.sampled_from(sorted(_CHOICES)), min_size=1, max_size=2).map(frozenset)
    return sites.flatmap(lambda odd: _request(odd))


@st.composite
def _damaged(draw: st.DrawFn) -> bytes:
    raw = bytearray(draw(st.one_of(_request(), _odd_request())))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(raw)))
        how = draw(st.sampled_from(["flip", "insert", "delete"]))
        junk = draw(st.sampled_from([b"\r", b"\n", b" ", b"\t", b":", b"\x00", b";", b"0", b"\xff", b"HTTP/1.1"]))
        if how == "insert" or at >= len(raw):
            raw[at:at] = junk
        elif how == "flip":
            raw[at] ^= 1 << draw(st.integers(0, 7))
        else:
            del raw[at : at + draw(st.integers(1, 8))]
    return bytes(raw)


_SEED = st.integers(0, 2**32 - 1)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_request(), _SEED)
def test_valid_requests_both_accept_alike(raw: bytes, seed: int) -> None:
    for eof in (True, False):
        assert difference(raw, eof, seed) is None, difference(raw, eof, seed)
    ours = read_codec(cut(raw, random.Random(seed), 5), True)
    assert ours[0] == "accept", (raw, ours)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_odd_request(), st.booleans(), _SEED)
def test_odd_requests_read_alike(raw: bytes, eof: bool, seed: int) -> None:
    assert difference(raw, eof, seed) is None, difference(raw, eof, seed)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged(), st.booleans(), _SEED)
def test_damaged_requests_read_alike(raw: bytes, eof: bool, seed: int) -> None:
    assert difference(raw, eof, seed) is None, difference(raw, eof, seed)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\r",
        b"\r\n" * 3,
        b"\x16\x03\x01\x02\x00",  # a TLS ClientHello on the plain port
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
        b"GET / HTTP/1.0\r\n\r\n",
        # a trailer line ending CR CR LF: its value ends with a CR (found by hypothesis)
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: v\r\r\n\r\n",
        b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e="1"\r\nabc\r\n0\r\nT: 1\r\n\r\n',
    ],
)
def test_fuzz_seeds(raw: bytes) -> None:
    fuzz_h1_request(raw)
