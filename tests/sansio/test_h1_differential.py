"""trimcp's HTTP/1.1 client codec against h11, byte stream for byte stream.

The keep-alive pool reads every response with trimcp's own codec
(``trimcp._sansio.http.client.h1``); h11 is the reference it is held to.  Hypothesis
writes response byte streams, valid and damaged (status lines, field lines with obs-fold
and bad characters, Content-Length against chunked, chunk extensions, trailers, bad
sizes, bytes after the answer), cuts them at arbitrary points, and feeds the same pieces
to an ``H1Client`` and to an ``h11.Connection(h11.CLIENT)`` that sent the same request.
With the connection closed after the bytes, both must accept with the same final
response (status, headers, body bytes, end of message, and whether the connection may be
reused) or both must refuse.  Without the close, whenever one has a complete response so
must the other, the same; a refusal and a wait for more bytes are not told apart then
(the codec refuses a malformed line as soon as it is whole, h11 may wait for its event).

Where the two legitimately differ, ``documented`` names the difference, each with the
RFC 9112 / RFC 9110 rule that makes trimcp's reading the right one; any other
difference fails.  The codec drops 1xx answers, so only final responses are compared.
The oracle (``difference``, ``documented``) is shared with the fuzz target and lives in
``fuzz/targets_h1.py``; the per-rule tests of the codec are in ``tests/sansio/test_h1_codec.py``.
"""

from __future__ import annotations

import random

from h1_strategies import MessageParts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.targets_h1 import cut, difference, read_codec

#: Where a response may be odd, each with the valid choices and the odd ones.
_CHOICES: dict[str, tuple[list[bytes], list[bytes]]] = {
    "version": (
        [b"HTTP/1.1"] * 4 + [b"HTTP/1.0", b"HTTP/1.2"],
        [b"HTTP/2.0", b"HTTP/0.9", b"http/1.1", b"HTTP/1", b"HTTP/1.1 ", b"HTTP/11"],
    ),
    "code": ([b"200"] * 4 + [b"201", b"204", b"304", b"404", b"599"], [b"099", b"1000", b"20", b"2x0", b"101"]),
    "reason": ([b" OK", b"", b" ", b" Not Found", b" a\tb", b" \xe9"], [b" \x7f", b" \x01", b"OK", b" a\x00"]),
    "name": ([], [b"a b", b"", b"x\x00", b"[x]", b"x\x7f", b" x"]),
    "colon": ([b":"], [b" :", b"\t:"]),
    "word": ([], [b"\x01", b"a\x7fb", b"\x00", b"a\rb", b"\x0b", b"\x1f"]),
    "ext": ([b""] * 4 + [b";a=b", b";x", b'; q="1;2"', b"  "], [b" ;x", b";\x00", b";\x7f", b";a\rb"]),
    "size": ([], [b"-1", b"0x5", b"", b"g", b"1" * 17, b"+1", b"zeros"]),
    "chunk-data": ([], [b"longer", b"shorter", b"no-crlf", b"lf"]),
    "length": ([b"exact", b"list"], [b"conflict", b"+5", b"-1", b" 5", b"0x5", b"", b"5 5", b"\xd9\xa5", b"9" * 20]),
    "codings": (
        [b"chunked"] * 3 + [b"Chunked"],
        [b"gzip, chunked", b"chunked, chunked", b"gzip", b"chunked , ", b"identity", b"two headers"],
    ),
    "after": ([b""], [b"x", b"HTTP/1.1 200 OK\r\n\r\n"]),
    "eol": ([b"\r\n"], [b"\n"]),  # in the trailer section
    "fold": ([], []),  # obs-fold in a framing field (a flag: no choice of its own)
}

_PARTS = MessageParts(_CHOICES, framing=("content-length", "transfer-encoding", "connection"), fold=True, fold_one_in=6)
_pick, _field, _chunked = _PARTS.pick, _PARTS.field, _PARTS.chunked


@st.composite
def _response(draw: st.DrawFn, odd: frozenset[str] = frozenset()) -> bytes:
    """A response; odd in the places named by ``odd`` (none: a valid one)."""
    raw = b""
    for _ in range(draw(st.integers(0, 2))):
        raw += b"HTTP/1.1 " + draw(st.sampled_from([b"100", b"102", b"103"])) + b" X\r\n"
        raw += b"".join(draw(st.lists(_field(frozenset()), max_size=2))) + b"\r\n"
    raw += draw(_pick("version", odd)) + b" " + draw(_pick("code", odd)) + draw(_pick("reason", odd)) + b"\r\n"
    fields = draw(st.lists(_field(odd), max_size=4))
    body = draw(st.binary(max_size=64))
    framing = draw(st.sampled_from(["length", "chunked", "close", "both"]))
    if framing == "close" and "length" in odd:
        framing = "length"
    if draw(st.booleans()):
        value = draw(st.sampled_from([b"close", b"keep-alive", b"Keep-Alive, x"]))
        fields.append(draw(_field(odd, b"Connection", value, fold=False)))
    if framing in ("length", "both"):
        kind = draw(_pick("length", odd))
        value = {
            b"exact": b"%d" % len(body),
            b"list": b"%d, %d" % (len(body), len(body)),
            b"conflict": b"%d" % len(body),
        }.get(kind, kind)
        fields.append(draw(_field(odd, b"Content-Length", value, fold=False)))
        if kind == b"conflict":
            fields.append(draw(_field(odd, b"Content-Length", b"%d" % (len(body) + 1), fold=False)))
    if framing in ("chunked", "both"):
        codings = draw(_pick("codings", odd))
        value = b"chunked" if codings == b"two headers" else codings
        fields.append(draw(_field(odd, b"Transfer-Encoding", value, fold=False)))
        if codings == b"two headers":
            fields.append(draw(_field(odd, b"Transfer-Encoding", b"chunked", fold=False)))
        payload = draw(_chunked(body, odd))
    else:
        payload = body
    raw += b"".join(draw(st.permutations(fields))) + draw(st.sampled_from([b"\r\n", b"\n"])) + payload
    return raw + draw(_pick("after", odd))


def _odd_response() -> st.SearchStrategy[bytes]:
    sites = st.sets(st.sampled_from(sorted(_CHOICES)), min_size=1, max_size=2).map(frozenset)
    return sites.flatmap(lambda odd: _response(odd))


@st.composite
def _damaged(draw: st.DrawFn) -> bytes:
    raw = bytearray(draw(st.one_of(_response(), _odd_response())))
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


_METHOD = st.sampled_from(["GET", "GET", "HEAD"])
_SEED = st.integers(0, 2**32 - 1)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_response(), _METHOD, _SEED)
def test_valid_responses_both_accept_alike(raw: bytes, method: str, seed: int) -> None:
    for eof in (True, False):
        assert difference(raw, method, eof, seed) is None, difference(raw, method, eof, seed)
    ours = read_codec(cut(raw, random.Random(seed), 5), method, True)
    assert ours[0] == "accept", (raw, ours)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_odd_response(), _METHOD, st.booleans(), _SEED)
def test_odd_responses_read_alike(raw: bytes, method: str, eof: bool, seed: int) -> None:
    assert difference(raw, method, eof, seed) is None, difference(raw, method, eof, seed)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_damaged(), st.binary(max_size=200)), _METHOD, st.booleans(), _SEED)
def test_damaged_responses_read_alike(raw: bytes, method: str, eof: bool, seed: int) -> None:
    assert difference(raw, method, eof, seed) is None, difference(raw, method, eof, seed)
