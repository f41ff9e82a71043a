"""Hypothesis strategies for the parts of HTTP/1.1 messages, valid or odd where asked.

The two differential tests (``tests/sansio/test_h1_differential.py`` for responses,
``test_h1_server_differential.py`` for requests) write their messages from the same parts:
field lines (names, values, obs-fold, line ends) and chunked bodies (sizes, extensions,
chunk data, trailers).  Each test gives its own table of choices, site -> (valid choices,
odd ones), and asks for a part odd at the sites it names.
"""

from __future__ import annotations

from collections.abc import Collection

from hypothesis import strategies as st

#: tchar (RFC 9110 section 5.6.2).
TCHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-!#$%&'*+.^_`|~"
#: A word of a field value: visible bytes and obs-text.
VCHARS = st.binary(min_size=1, max_size=6).map(lambda b: bytes(c for c in b if 0x21 <= c <= 0x7E or c >= 0x80) or b"v")

Choices = dict[str, tuple[list[bytes], list[bytes]]]


class MessageParts:
    """The parts of one kind of message.

    ``choices``: site -> (valid, odd); ``framing``: field names a random field must not take
    (the test writes those itself); ``fold``: whether a field may be folded when the caller
    does not say; ``fold_one_in``: how rarely a foldable field is folded."""

    def __init__(self, choices: Choices, *, framing: Collection[str], fold: bool, fold_one_in: int) -> None:
        self.choices = choices
        self.fold = fold
        self.fold_one_in = fold_one_in
        names = frozenset(framing)
        self.token = st.text(TCHARS, min_size=1, max_size=8).filter(lambda n: n.lower() not in names).map(str.encode)

    def pick(self, site: str, odd: frozenset[str]) -> st.SearchStrategy[bytes]:
        valid, strange = self.choices[site]
        return st.sampled_from(strange if site in odd else valid)

    def field(
        self,
        odd: frozenset[str],
        name: bytes | None = None,
        value: bytes | None = None,
        *,
        fold: bool | None = None,
        crlf: bool = False,
    ) -> st.SearchStrategy[bytes]:
        """One field line, its name and value drawn unless given."""
        return _field(self, odd, name, value, self.fold if fold is None else fold, crlf)

    def chunked(self, body: bytes, odd: frozenset[str]) -> st.SearchStrategy[bytes]:
        """``body`` as chunks, the last chunk and a trailer section."""
        return _chunked(self, body, odd)


@st.composite
def _field(
    draw: st.DrawFn,
    parts: MessageParts,
    odd: frozenset[str],
    name: bytes | None,
    value: bytes | None,
    fold: bool,
    crlf: bool,
) -> bytes:
    pick = parts.pick
    # an odd name or word goes into one field of the head in four, not all of them
    here = odd if draw(st.integers(0, 3)) == 0 else odd - {"name", "word"}
    if name is None:
        name = draw(pick("name", here)) if "name" in here else draw(parts.token)
    if value is None:
        words = draw(st.lists(VCHARS, max_size=3))
        if "word" in here:
            words.insert(draw(st.integers(0, len(words))), draw(pick("word", here)))
        value = b" ".join(words)
    line = name + draw(pick("colon", here)) + draw(st.sampled_from([b"", b" ", b"\t", b"  "]))
    line += value + draw(st.sampled_from([b"", b" ", b"\t"]))
    # a bare LF ends a head line for both (RFC 9112 section 2.2), a trailer line for neither
    eol = st.just(b"\r\n") if crlf and "eol" not in here else st.sampled_from([b"\r\n", b"\r\n", b"\n"])
    if value and (fold or "fold" in here) and draw(st.integers(1, parts.fold_one_in)) == 1:  # obs-fold
        line += draw(st.sampled_from([b"", b" "])) + draw(eol) + draw(st.sampled_from([b" ", b"\t", b" \t"]))
        line += draw(VCHARS)
    return line + draw(eol)


@st.composite
def _chunked(draw: st.DrawFn, parts: MessageParts, body: bytes, odd: frozenset[str]) -> bytes:
    pick = parts.pick
    out, rest = b"", body
    odd_at = draw(st.integers(0, 3))  # the chunk an odd size or data goes into (the last one if fewer)
    index = 0
    while rest:
        n = draw(st.integers(1, len(rest)))
        here = odd if index == odd_at or n == len(rest) else frozenset()
        size = draw(st.sampled_from([b"%x" % n, b"%X" % n, b"0" * 15 + b"%x" % n, b"00%x" % n]))
        if "size" in here:
            size = draw(pick("size", here))
            if size == b"zeros":  # the right size, behind more zeros than h11 reads
                size = b"0" * 24 + b"%x" % n
        data, end = rest[:n], b"\r\n"
        if "chunk-data" in here:
            how = draw(pick("chunk-data", here))
            data = {b"longer": data + b"x", b"shorter": data[:-1]}.get(how, data)
            end = {b"no-crlf": b"", b"lf": b"\n"}.get(how, end)
        out += size + draw(pick("ext", here)) + b"\r\n" + data + end
        rest = rest[n:]
        index += 1
    trailers = b"".join(draw(st.lists(parts.field(odd, crlf=True), max_size=2)))
    return out + b"0" + draw(pick("ext", odd)) + b"\r\n" + trailers + draw(pick("eol", odd))
