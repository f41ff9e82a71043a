"""Server-Sent Events decoder and encoder (trimcp._sansio.framing.sse)."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._errors import LocalProtocolError, RemoteProtocolError
from trimcp._sansio.framing import FramingOverflow
from trimcp._sansio.framing.sse import (
    DEFAULT_MAX_EVENT_SIZE,
    ServerSentEvent,
    SSEDecoder,
    encode_comment,
    encode_event,
)

E = ServerSentEvent


def feed_chunks(dec: SSEDecoder, chunks: list[bytes], *, eof: bool = True) -> list[E]:
    out: list[E] = []
    for chunk in chunks:
        out += dec.feed(chunk)
    if eof:
        out += dec.feed(b"")
    return out


def whole(stream: bytes, **kw: Any) -> list[E]:
    return feed_chunks(SSEDecoder(**kw), [stream])


def bytewise(stream: bytes, **kw: Any) -> list[E]:
    return feed_chunks(SSEDecoder(**kw), [stream[i : i + 1] for i in range(len(stream))])


def split_at(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(max(c, 0), len(stream)) for c in cuts})
    bounds = [0, *points, len(stream)]
    # No empty chunks: b"" means end of input.
    return [stream[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def all_ways(stream: bytes, **kw: Any) -> list[E]:
    """Decode whole and byte by byte; both must agree; return the events."""
    a = whole(stream, **kw)
    b = bytewise(stream, **kw)
    assert a == b
    return a


# -- a reference decoder written straight from the WHATWG text (non-incremental) --


def reference(stream: bytes) -> tuple[list[E], str | None, int | None]:
    text = stream.decode("utf-8", "replace")
    text = text.removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)[:-1]  # the unterminated remainder is discarded
    events: list[E] = []
    data = ""
    etype = ""
    id_buf: str | None = None
    last_id: str | None = None
    retry: int | None = None
    block_retry: int | None = None
    for line in lines:
        if line == "":
            last_id = id_buf
            if data:
                events.append(E(etype or "message", data[:-1], last_id, block_retry, retry))
            data, etype, block_retry = "", "", None
            continue
        if line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "event":
            etype = value
        elif name == "data":
            data += value + "\n"
        elif name == "id":
            if "\0" not in value:
                id_buf = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = block_retry = int(value)
    return events, last_id, retry


# -- basics -------------------------------------------------------------------------


def test_defaults() -> None:
    dec = SSEDecoder()
    assert dec.max_event_size == DEFAULT_MAX_EVENT_SIZE == 64 * 1024 * 1024
    assert dec.last_event_id is None and dec.retry_ms is None
    assert dec.buffered == 0 and not dec.eof and not dec.truncated
    assert dec.comments == 0 and dec.dataless_blocks == 0
    assert E() == E("message", "", None, None)
    with pytest.raises(ValueError):
        SSEDecoder(0)


STREAM = (
    b": welcome\n"
    b"event: endpoint\ndata: /messages?session=1\n\n"
    b'id: 1\ndata: {"jsonrpc":"2.0",\ndata: "method":"x"}\n\n'
    b"retry: 500\nid: 2\ndata: caf\xc3\xa9\n\n"
    b"data: last\n\n"
)
EVENTS = [
    E("endpoint", "/messages?session=1"),
    E("message", '{"jsonrpc":"2.0",\n"method":"x"}', "1"),
    E("message", "caf\u00e9", "2", 500, 500),
    E("message", "last", "2", None, 500),  # the reconnection time persists
]


def test_whole_stream() -> None:
    dec = SSEDecoder()
    assert dec.feed(STREAM) == EVENTS
    assert dec.buffered == 0
    assert dec.comments == 1
    assert dec.last_event_id == "2" and dec.retry_ms == 500
    assert dec.feed(b"") == []
    assert dec.eof and not dec.truncated


def test_byte_by_byte() -> None:
    assert bytewise(STREAM) == EVENTS


@given(st.lists(st.integers(0, len(STREAM)), max_size=20))
def test_random_splits(cuts: list[int]) -> None:
    assert feed_chunks(SSEDecoder(), split_at(STREAM, cuts)) == EVENTS


def test_events_come_out_as_soon_as_complete() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: a\n") == []
    assert dec.buffered > 0
    assert dec.feed(b"\n") == [E(data="a")]
    assert dec.buffered == 0


def test_receive_data_alias() -> None:
    dec = SSEDecoder()
    assert dec.receive_data(b"data: x\n\n") == [E(data="x")]


# -- line endings -----------------------------------------------------------------------


@pytest.mark.parametrize("nl", [b"\n", b"\r", b"\r\n"])
def test_line_endings(nl: bytes) -> None:
    stream = b"event: e" + nl + b"data: a" + nl + b"data: b" + nl + nl + b"data: c" + nl + nl
    assert all_ways(stream) == [E("e", "a\nb"), E("message", "c")]


def test_mixed_line_endings() -> None:
    stream = b"data: a\rdata: b\r\ndata: c\n\r\n\rdata: d\n\r"
    assert all_ways(stream) == [E(data="a\nb\nc"), E(data="d")]


def test_cr_at_chunk_boundary_is_not_two_line_ends() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: a\r") == []
    # If the LF were counted again it would be a blank line and dispatch "a" alone.
    assert dec.feed(b"\ndata: b\r") == []
    assert dec.feed(b"\n\r") == [E(data="a\nb")]
    assert dec.feed(b"\n") == []  # the LF of that CRLF, not another blank line
    assert dec.feed(b"data: c\n\n") == [E(data="c")]


def test_cr_then_cr_across_chunks_is_a_blank_line() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: a\r") == []
    assert dec.feed(b"\r") == [E(data="a")]


def test_cr_cr_lf_is_two_line_ends() -> None:
    assert all_ways(b"data: a\r\r\n") == [E(data="a")]


# -- BOM --------------------------------------------------------------------------------------


def test_bom_skipped_once() -> None:
    bom = b"\xef\xbb\xbf"
    assert all_ways(bom + b"data: a\n\n") == [E(data="a")]
    # A second BOM is part of the first line's field name: an unknown field.
    assert all_ways(bom + bom + b"data: a\n\ndata: b\n\n") == [E(data="b")]
    # A BOM later in the stream is ordinary text.
    assert all_ways(b"data: \xef\xbb\xbfa\n\n") == [E(data="\ufeffa")]


def test_bom_split_across_chunks() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"\xef") == []
    assert dec.feed(b"\xbb") == []
    assert dec.feed(b"\xbf") == []
    assert dec.feed(b"data: a\n\n") == [E(data="a")]


def test_bom_prefix_that_is_not_a_bom() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"\xef\xbb") == []
    assert dec.feed(b"x\n\ndata: a\n\n") == [E(data="a")]
    assert dec.comments == 0


def test_partial_bom_at_eof_is_truncated() -> None:
    dec = SSEDecoder()
    dec.feed(b"\xef\xbb")
    assert dec.buffered == 2
    assert dec.close() is True


# -- fields ---------------------------------------------------------------------------------


def test_comments_ignored_and_counted() -> None:
    stream = b":\n: keep-alive\ndata: a\n:: inside\ndata: b\n\n:ping\n\n"
    dec = SSEDecoder()
    assert feed_chunks(dec, [stream]) == [E(data="a\nb")]
    assert dec.comments == 4
    assert not dec.truncated


def test_multi_line_data_and_empty_lines_inside() -> None:
    stream = b"data\ndata: \ndata:x\ndata\n\n"
    assert all_ways(stream) == [E(data="\n\nx\n")]


def test_field_without_colon() -> None:
    assert all_ways(b"data\n\n") == [E(data="")]
    # "event" without a value leaves the type empty, i.e. "message".
    assert all_ways(b"event: x\nevent\ndata: y\n\n") == [E("message", "y")]
    dec = SSEDecoder()
    assert feed_chunks(dec, [b"id\ndata: z\n\n"]) == [E(data="z", id="")]
    assert dec.last_event_id == ""


def test_space_after_colon() -> None:
    assert all_ways(b"data:a\n\n") == [E(data="a")]
    assert all_ways(b"data: a\n\n") == [E(data="a")]
    assert all_ways(b"data:  a\n\n") == [E(data=" a")]
    assert all_ways(b"data:\ta\n\n") == [E(data="\ta")]
    assert all_ways(b"data: a \n\n") == [E(data="a ")]
    assert all_ways(b"event:  sp\ndata: a:b: c\n\n") == [E(" sp", "a:b: c")]


def test_field_names_are_exact() -> None:
    stream = b"Data: no\n data: no\ndata : no\nDATA: no\nfoo: bar\nretryx: 1\ndata: yes\n\n"
    dec = SSEDecoder()
    assert feed_chunks(dec, [stream]) == [E(data="yes")]
    assert dec.retry_ms is None


def test_event_type() -> None:
    assert all_ways(b"event: a\nevent: b\ndata: x\n\ndata: y\n\n") == [
        E("b", "x"),
        E("message", "y"),  # the type does not persist
    ]
    assert all_ways(b"event: \x00\xff\ndata: x\n\n") == [E("\x00\ufffd", "x")]


def test_invalid_utf8_is_replaced() -> None:
    stream = b"data: \xc3\ndata: \xff\xfe ok \xe2\x82\n\n"
    assert all_ways(stream) == [E(data="\ufffd\n\ufffd\ufffd ok \ufffd")]


def test_utf8_split_across_chunks() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: \xe2\x82") == []
    assert dec.feed(b"\xac\n\n") == [E(data="\u20ac")]


# -- id -----------------------------------------------------------------------------------------


def test_id_persists_across_events() -> None:
    stream = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid:\ndata: d\n\ndata: e\n\n"
    dec = SSEDecoder()
    assert feed_chunks(dec, [stream]) == [
        E(data="a", id="1"),
        E(data="b", id="1"),
        E(data="c", id="2"),
        E(data="d", id=""),
        E(data="e", id=""),
    ]
    assert dec.last_event_id == ""


def test_id_with_nul_is_ignored() -> None:
    dec = SSEDecoder()
    out = feed_chunks(dec, [b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n"])
    assert out == [E(data="a", id="1"), E(data="b", id="1")]
    assert dec.last_event_id == "1"
    assert dec.dataless_blocks == 0


def test_id_only_block_updates_last_event_id_without_an_event() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"id: prime-1\n") == []
    assert dec.last_event_id is None  # takes effect at the blank line (WHATWG dispatch step 1)
    assert dec.feed(b"\n") == []
    assert dec.last_event_id == "prime-1"
    assert dec.dataless_blocks == 1
    assert dec.feed(b"data: x\n\n") == [E(data="x", id="prime-1")]


def test_priming_event_with_empty_data_is_dispatched() -> None:
    # The official SDKs write priming events as id + empty data + retry.
    assert all_ways(b"id: 0\ndata: \nretry: 500\n\n") == [E(data="", id="0", retry=500, reconnection_ms=500)]


def test_id_of_unfinished_event_is_not_applied() -> None:
    dec = SSEDecoder()
    dec.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n")
    assert dec.close() is True
    assert dec.last_event_id == "1"


def test_seeded_last_event_id_and_retry() -> None:
    dec = SSEDecoder(last_event_id="41", retry_ms=1000)
    assert dec.last_event_id == "41" and dec.retry_ms == 1000
    assert dec.feed(b"data: a\n\n") == [E(data="a", id="41", reconnection_ms=1000)]


# -- retry -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"500", 500),
        (b"0", 0),
        (b"007", 7),
        (b"000000000000000000000000000001", 1),
        (b"999999999999999999", 999999999999999999),
        (b"9" * 19, None),  # absurdly long: ignored
        (b"9" * 5000, None),  # would make int() raise
        (b"", None),
        (b" 500", None),  # two spaces: one is stripped, the other is not a digit
        (b"500 ", None),
        (b"-1", None),
        (b"+1", None),
        (b"1.5", None),
        (b"1e3", None),
        (b"5a", None),
        ("\u0663".encode(), None),  # ARABIC-INDIC DIGIT THREE: a digit, but not ASCII
        ("\uff15".encode(), None),  # FULLWIDTH DIGIT FIVE
    ],
)
def test_retry_parsing(value: bytes, expected: int | None) -> None:
    dec = SSEDecoder()
    out = feed_chunks(dec, [b"retry: " + value + b"\ndata: x\n\n"])
    assert out == [E(data="x", retry=expected, reconnection_ms=expected)]
    assert dec.retry_ms == expected


def test_retry_takes_effect_immediately_and_persists() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"retry: 100\n") == []
    assert dec.retry_ms == 100
    assert dec.feed(b"\n") == []
    assert dec.dataless_blocks == 1
    assert dec.feed(b"retry: bad\ndata: a\n\ndata: b\nretry:200\n\n") == [
        E(data="a", reconnection_ms=100),  # a bad value changes nothing
        E(data="b", retry=200, reconnection_ms=200),  # a block's own retry, before its end
    ]
    assert dec.retry_ms == 200
    assert dec.feed(b"retry: 1\nretry: 2\ndata: c\n\n") == [E(data="c", retry=2, reconnection_ms=2)]


# -- blocks without data ---------------------------------------------------------------------


def test_empty_data_buffer_not_dispatched() -> None:
    dec = SSEDecoder()
    out = feed_chunks(dec, [b"\n\n\nevent: x\n\nfoo: 1\n\n: c\n\nid: 9\n\nretry: 5\n\n"])
    assert out == []
    assert dec.last_event_id == "9" and dec.retry_ms == 5
    assert dec.dataless_blocks == 2  # the id block and the retry block
    # The event type of an undispatched block does not leak into the next event.
    assert all_ways(b"event: x\n\ndata: y\n\n") == [E("message", "y")]


# -- end of input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "truncated"),
    [
        (b"", False),
        (b"data: a\n\n", False),
        (b"data: a\n\n: ping\n", False),
        (b"data: a\n\n: partial comment", False),
        (b"data: a\n\n\n\n", False),
        (b"data: a\n\ndata: b\n", True),
        (b"data: a\n\ndata: b", True),
        (b"data: a\n\nid: 3\n", True),
        (b"data: a\n\nevent: x\n", True),
        (b"data: a\n\nunknown\n", True),
        (b"data: a\n\nd", True),
        (b"data: a\n\ndata: b\r", True),  # CR ends the line, not the event
    ],
)
def test_unterminated_event_at_eof(stream: bytes, truncated: bool) -> None:
    for chunks in ([stream], [stream[i : i + 1] for i in range(len(stream))]):
        dec = SSEDecoder()
        out = feed_chunks(dec, chunks, eof=False)
        assert dec.close() is truncated
        assert dec.truncated is truncated
        assert out == ([E(data="a")] if stream else [])
        assert dec.buffered == 0


def test_eof_is_final() -> None:
    dec = SSEDecoder()
    dec.feed(b"data: a\n")
    assert dec.feed(b"") == []
    assert dec.eof and dec.truncated
    assert dec.feed(b"") == []
    assert dec.close() is True
    with pytest.raises(LocalProtocolError):
        dec.feed(b"\n")


# -- size cap -----------------------------------------------------------------------------------


def test_size_cap_inside_one_line() -> None:
    dec = SSEDecoder(max_event_size=100)
    dec.feed(b"data: " + b"x" * 90)
    with pytest.raises(RemoteProtocolError, match="larger than 100 bytes"):
        dec.feed(b"x" * 20)
    with pytest.raises(LocalProtocolError):
        dec.feed(b"\n\n")
    with pytest.raises(LocalProtocolError):
        dec.feed(b"")


def test_overflow_hands_over_the_events_completed_before_it() -> None:
    # Found by reading the reader's fuzz findings: events the failing chunk held
    # whole were lost when it was read in one piece and delivered when split.
    stream = b"retry: 5\nid: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: " + b"x" * 200 + b"\n\n"
    for chunks in ([stream], [stream[:30], stream[30:]], [bytes([c]) for c in stream]):
        dec = SSEDecoder(max_event_size=100)
        got: list[E] = []
        with pytest.raises(FramingOverflow, match="larger than 100 bytes") as info:
            for chunk in chunks:
                got += dec.feed(chunk)
        got += info.value.completed
        assert got == [E(data="a", id="1", retry=5, reconnection_ms=5), E(data="b", id="1", reconnection_ms=5)]
        # The id of the event that overflowed was never applied.
        assert dec.last_event_id == "1" and dec.retry_ms == 5
        assert isinstance(info.value, RemoteProtocolError)


def test_size_cap_inside_one_line_in_one_chunk() -> None:
    dec = SSEDecoder(max_event_size=100)
    with pytest.raises(RemoteProtocolError):
        dec.feed(b"data: " + b"x" * 200 + b"\n\n")


def test_size_cap_in_a_partial_line_drip_fed() -> None:
    dec = SSEDecoder(max_event_size=100)
    with pytest.raises(RemoteProtocolError):
        for _ in range(200):
            dec.feed(b"y")


def test_size_cap_across_many_lines() -> None:
    dec = SSEDecoder(max_event_size=100)
    with pytest.raises(RemoteProtocolError):
        for _ in range(100):
            dec.feed(b"data: 0123456789\n")
    with pytest.raises(LocalProtocolError):
        dec.feed(b"\n")


def test_size_cap_resets_per_event() -> None:
    dec = SSEDecoder(max_event_size=100)
    for _ in range(50):
        assert dec.feed(b"data: " + b"z" * 80 + b"\n\n") == [E(data="z" * 80)]
    # Comments, ids and unknown fields are not buffered and do not count.
    for _ in range(50):
        assert dec.feed(b": " + b"c" * 90 + b"\nid: 1\nfoo: bar\n") == []


def test_size_cap_boundary() -> None:
    # Counted: data values plus one byte per data line (the joining LF), plus the
    # line being read (whole, field name included).
    dec = SSEDecoder(max_event_size=14)
    assert dec.feed(b"data:abcd\ndata:efgh\n\n") == [E(data="abcd\nefgh")]
    with pytest.raises(RemoteProtocolError):
        dec.feed(b"data:abcd\ndata:efghi\n\n")


def test_ten_megabyte_event_in_4k_chunks() -> None:
    payload = ('{"jsonrpc":"2.0","id":1,"result":{"text":"' + "\u00e9a" * 3_500_000 + '"}}').encode()
    assert len(payload) > 10_000_000
    stream = b"id: big\nevent: message\ndata: " + payload + b"\n\n"
    dec = SSEDecoder()
    out: list[E] = []
    for i in range(0, len(stream), 4096):
        out += dec.feed(stream[i : i + 4096])
    assert len(out) == 1
    assert out[0].id == "big" and out[0].event == "message"
    assert out[0].data.encode() == payload
    assert dec.buffered == 0


def test_many_small_events_drip_fed() -> None:
    stream = b"".join(encode_event(str(i), id=str(i)) for i in range(2000))
    out = bytewise(stream)
    assert [e.data for e in out] == [str(i) for i in range(2000)]
    assert out[-1].id == "1999"


# -- differential: incremental decoder vs the reference, arbitrary byte streams ----------

PIECES = [
    b"data",
    b"event",
    b"id",
    b"retry",
    b"foo",
    b":",
    b" ",
    b"\r",
    b"\n",
    b"\r\n",
    b"\x00",
    b"7",
    b"x",
    b"\xef\xbb\xbf",
    b"\xc3",
    b"\xa9",
    b"\xff",
]


@settings(max_examples=400)
@given(
    st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join),
    st.lists(st.integers(0, 400), max_size=10),
)
def test_matches_reference(stream: bytes, cuts: list[int]) -> None:
    events, last_id, retry = reference(stream)
    dec = SSEDecoder()
    assert feed_chunks(dec, split_at(stream, cuts)) == events
    assert dec.last_event_id == last_id
    assert dec.retry_ms == retry
    assert bytewise(stream) == events


# -- encoder -------------------------------------------------------------------------------------


def test_encode_event() -> None:
    assert encode_event("x") == b"data: x\n\n"
    assert encode_event("") == b"data: \n\n"
    assert encode_event("a\nb\r\nc\rd", event="e", id="7", retry=500) == (
        b"event: e\nid: 7\nretry: 500\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
    )
    assert encode_event(" lead", event=" sp", id="") == b"event:  sp\nid: \ndata:  lead\n\n"
    assert encode_event("caf\u00e9\u2028") == "data: caf\u00e9\u2028\n\n".encode()


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\x00b", "\n"])
def test_encode_rejects_bad_event_and_id(bad: str) -> None:
    with pytest.raises(LocalProtocolError):
        encode_event("x", event=bad)
    with pytest.raises(LocalProtocolError):
        encode_event("x", id=bad)


@pytest.mark.parametrize("bad", [-1, True, 1.5, "5"])
def test_encode_rejects_bad_retry(bad: Any) -> None:
    with pytest.raises(LocalProtocolError):
        encode_event("x", retry=bad)


def test_encode_rejects_unencodable_text() -> None:
    with pytest.raises(LocalProtocolError):
        encode_event("\ud800")


def test_encode_comment() -> None:
    assert encode_comment() == b":\n"
    assert encode_comment("ping") == b": ping\n"
    assert encode_comment("a\r\nb\n") == b": a\n: b\n:\n"
    dec = SSEDecoder()
    stream = encode_comment("x\ny") + encode_event("d") + encode_comment("z")
    assert feed_chunks(dec, [stream]) == [E(data="d")]
    assert dec.comments == 3 and not dec.truncated


# -- round trip -------------------------------------------------------------------------------

field_text = st.text().filter(lambda s: not any(c in s for c in "\r\n\x00"))
# Data with plenty of line breaks of every kind.
data_text = st.lists(st.one_of(st.text(), st.sampled_from(["\r", "\n", "\r\n", "\n\r"]))).map("".join)
event_spec = st.tuples(
    data_text,
    st.none() | field_text,
    st.none() | field_text,
    st.none() | st.integers(0, 10**12),
)


@settings(max_examples=300)
@given(
    st.lists(event_spec, max_size=8),
    st.sampled_from([b"\n", b"\r", b"\r\n"]),
    st.booleans(),
    st.lists(st.integers(0, 5000), max_size=12),
)
def test_round_trip(
    specs: list[tuple[str, str | None, str | None, int | None]],
    newline: bytes,
    bom: bool,
    cuts: list[int],
) -> None:
    stream = b"\xef\xbb\xbf" if bom else b""
    expected: list[E] = []
    last_id: str | None = None
    in_effect: int | None = None
    for data, event, id_, retry in specs:
        stream += encode_comment("keep\nalive") + encode_event(data, event=event, id=id_, retry=retry)
        if id_ is not None:
            last_id = id_
        in_effect = retry if retry is not None else in_effect
        normalized = re.sub(r"\r\n|\r", "\n", data)
        expected.append(E(event or "message", normalized, last_id, retry, in_effect))
    # The encoder writes LF only and never a raw CR or LF inside a line, so any
    # line-end style can be substituted.
    stream = stream.replace(b"\n", newline)
    dec = SSEDecoder()
    assert feed_chunks(dec, split_at(stream, cuts)) == expected
    assert not dec.truncated
    assert dec.last_event_id == last_id
