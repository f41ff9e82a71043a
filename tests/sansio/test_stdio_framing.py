"""Newline-delimited stdio framing (trimcp._sansio.framing.lines)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._errors import LocalProtocolError, RemoteProtocolError
from trimcp._sansio.framing import FramingOverflow
from trimcp._sansio.framing.lines import DEFAULT_MAX_LINE, LineDecoder, frame

STREAM = b'{"a":1}\n{"b":"\xc3\xa9"}\r\n\n   \n{"c":[1,2]}\n'
LINES = [b'{"a":1}', b'{"b":"\xc3\xa9"}', b'{"c":[1,2]}']


def feed_all(dec: LineDecoder, chunks: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for chunk in chunks:
        out += dec.receive_data(chunk)
    out += dec.receive_data(b"")
    return out


def test_defaults() -> None:
    dec = LineDecoder()
    assert dec.max_line == DEFAULT_MAX_LINE
    assert dec.buffered == 0 and not dec.eof


def test_whole_input() -> None:
    dec = LineDecoder()
    assert dec.receive_data(STREAM) == LINES
    assert dec.buffered == 0
    assert dec.receive_data(b"") == []
    assert dec.eof


def test_byte_by_byte() -> None:
    dec = LineDecoder()
    out: list[bytes] = []
    for i in range(len(STREAM)):
        got = dec.receive_data(STREAM[i : i + 1])
        # a line is released exactly when its newline arrives
        if got:
            assert STREAM[i : i + 1] == b"\n"
        out += got
    assert out == LINES
    assert dec.receive_data(b"") == []


def test_partial_line_is_buffered() -> None:
    dec = LineDecoder()
    assert dec.receive_data(b'{"a":') == []
    assert dec.buffered == 5
    assert dec.receive_data(b'1}\n{"b"') == [b'{"a":1}']
    assert dec.buffered == 4
    assert dec.receive_data(b":2}\n") == [b'{"b":2}']
    assert dec.buffered == 0


def test_crlf_tolerated_even_when_split() -> None:
    dec = LineDecoder()
    assert dec.receive_data(b"abc\r") == []
    assert dec.receive_data(b"\n") == [b"abc"]
    assert dec.receive_data(b"def\r\nghi\r\n") == [b"def", b"ghi"]


def test_lone_cr_inside_line_is_kept() -> None:
    # only a CR immediately before the LF is a terminator
    assert LineDecoder().receive_data(b"a\rb\n") == [b"a\rb"]


def test_blank_lines_skipped() -> None:
    dec = LineDecoder()
    assert dec.receive_data(b"\n\n\r\n \t \n") == []
    assert dec.receive_data(b"x\n\n") == [b"x"]
    assert dec.buffered == 0


def test_eof_with_only_whitespace_buffered_is_clean() -> None:
    dec = LineDecoder()
    assert dec.receive_data(b"x\n  \t") == [b"x"]
    assert dec.receive_data(b"") == []
    assert dec.eof and dec.buffered == 0


def test_eof_mid_line() -> None:
    dec = LineDecoder()
    assert dec.receive_data(b'{"a":1}\n{"b":') == [b'{"a":1}']
    with pytest.raises(RemoteProtocolError, match="middle of a line"):
        dec.receive_data(b"")
    assert dec.eof
    # the decoder is unusable afterwards
    with pytest.raises(LocalProtocolError):
        dec.receive_data(b"")
    with pytest.raises(LocalProtocolError):
        dec.receive_data(b"x\n")


def test_data_after_eof() -> None:
    dec = LineDecoder()
    dec.receive_data(b"a\n")
    dec.receive_data(b"")
    assert dec.receive_data(b"") == []  # repeated EOF is harmless
    with pytest.raises(LocalProtocolError, match="after EOF"):
        dec.receive_data(b"b\n")


def test_oversize_line_when_newline_arrives() -> None:
    dec = LineDecoder(max_line=10)
    # exactly at the limit is fine, with LF or CRLF
    assert dec.receive_data(b"0123456789\n") == [b"0123456789"]
    assert dec.receive_data(b"0123456789\r\n") == [b"0123456789"]
    with pytest.raises(RemoteProtocolError, match="exceeds the 10-byte limit"):
        dec.receive_data(b"ok\n01234567890\n")
    assert dec.buffered == 0
    with pytest.raises(LocalProtocolError):
        dec.receive_data(b"more\n")


def test_oversize_line_while_buffering() -> None:
    dec = LineDecoder(max_line=10)
    assert dec.receive_data(b"0123456789") == []  # at the limit: keep waiting
    with pytest.raises(RemoteProtocolError):
        dec.receive_data(b"0")  # one more byte without a newline
    assert dec.buffered == 0
    with pytest.raises(LocalProtocolError):
        dec.receive_data(b"")


def test_oversize_tail_after_complete_lines() -> None:
    dec = LineDecoder(max_line=4)
    with pytest.raises(RemoteProtocolError):
        dec.receive_data(b"ab\n" + b"x" * 5)


@pytest.mark.parametrize("tail", [b"01234567890\n", b"01234567890"])
def test_oversize_hands_over_the_lines_completed_before_it(tail: bytes) -> None:
    # Read in one piece or split, the lines before a runaway one are the same.
    stream = b"ok\n\nsecond\r\n" + tail
    for chunks in ([stream], [stream[:4], stream[4:]], [bytes([c]) for c in stream]):
        dec = LineDecoder(max_line=10)
        got: list[bytes] = []
        with pytest.raises(FramingOverflow, match="exceeds the 10-byte limit") as info:
            for chunk in chunks:
                got += dec.receive_data(chunk)
        assert got + info.value.completed == [b"ok", b"second"]
        assert isinstance(info.value, RemoteProtocolError) and dec.buffered == 0


def test_max_length_crlf_line_split_before_lf() -> None:
    # A max-length line whose CR arrives before its LF must be accepted, as it is
    # when the CRLF arrives in one piece: framing must not depend on the split.
    dec = LineDecoder(max_line=10)
    assert dec.receive_data(b"0123456789\r") == []
    assert dec.receive_data(b"\n") == [b"0123456789"]


def test_drip_feed_does_not_rescan() -> None:
    # Many small chunks without a newline, then one: works and stays linear.
    dec = LineDecoder()
    for _ in range(20_000):
        assert dec.receive_data(b"x") == []
    assert dec.receive_data(b"\n") == [b"x" * 20_000]


def test_frame() -> None:
    assert frame(b'{"a":1}') == b'{"a":1}\n'
    assert frame("é".encode()) == "é\n".encode()
    for bad in (b"a\nb", b"a\rb", b"\n", b"ab\r"):
        with pytest.raises(LocalProtocolError):
            frame(bad)


# ---------------------------------------------------------------- hypothesis

line_bytes = st.binary(min_size=1, max_size=30).filter(lambda b: b"\n" not in b and b"\r" not in b and b.strip() != b"")


@st.composite
def stream_and_splits(draw: st.DrawFn) -> tuple[list[bytes], bytes, list[bytes]]:
    lines = draw(st.lists(line_bytes, max_size=8))
    pieces = []
    for line in lines:
        pieces.append(draw(st.sampled_from([b"", b"\n", b"\r\n", b"  \n"])))  # blank lines
        pieces.append(line + draw(st.sampled_from([b"\n", b"\r\n"])))
    stream = b"".join(pieces)
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    return lines, stream, [c for c in chunks if c]


@settings(max_examples=300, deadline=None)
@given(stream_and_splits())
def test_random_splits_reassemble_identically(case: tuple[list[bytes], bytes, list[bytes]]) -> None:
    lines, stream, chunks = case
    assert b"".join(chunks) == stream
    assert feed_all(LineDecoder(), chunks) == lines
    assert feed_all(LineDecoder(), [stream]) == lines


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.binary(min_size=1, max_size=12).filter(lambda b: b"\n" not in b and b"\r" not in b and b.strip() != b""),
        min_size=1,
        max_size=5,
    ),
    st.data(),
)
def test_random_splits_with_cap(lines: list[bytes], data: st.DataObject) -> None:
    """Whether the cap trips never depends on how the input is split."""
    cap = 8
    eol = data.draw(st.sampled_from([b"\n", b"\r\n"]))
    stream = b"".join(line + eol for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)]) if b > a]

    def run(chunks: list[bytes]) -> list[bytes] | str:
        try:
            return feed_all(LineDecoder(max_line=cap), chunks)
        except RemoteProtocolError:
            return "too long"

    expected: list[bytes] | str = "too long" if any(len(x) > cap for x in lines) else lines
    assert run([stream]) == expected
    assert run(chunks) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(line_bytes, min_size=1, max_size=5))
def test_frame_then_decode(lines: list[bytes]) -> None:
    assert feed_all(LineDecoder(), [b"".join(frame(x) for x in lines)]) == lines
