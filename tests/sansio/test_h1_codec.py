"""The HTTP/1.1 client codec (trimcp._sansio.http.client.h1): one test per RFC 9112 rule it keeps.

Request side: RFC 9112 sections 3 (request line), 5 (field lines), 6 (body length) and 9.6
(Connection: close).  Response side: section 4 (status line), 5 and 5.2 (obs-fold), 6.3
(framing, in its order), 7.1 (chunked) and 9.3 (persistence).  The differential test
against h11 over generated responses, valid, odd and damaged, is tests/sansio/test_h1_differential.py
(its oracle, fuzz/targets_h1.py, also checks the fuzz seeds here).
"""

from __future__ import annotations

import pytest

from fuzz.targets_h1 import fuzz_h1_response
from trimcp._sansio.http import h1_syntax
from trimcp._sansio.http.client.h1 import (
    CLOSED,
    END,
    NEED_DATA,
    Data,
    EndOfMessage,
    H1Client,
    H1LocalError,
    H1RemoteError,
    Response,
)

HOST = [("Host", "example")]


def client(method: str = "GET", headers: list[tuple[str, str]] | None = None, **kw: int) -> H1Client:
    codec = H1Client(**kw)
    codec.send_request(method, "/", headers if headers is not None else HOST)
    return codec


def drain(codec: H1Client, *pieces: bytes) -> list[object]:
    """Feed each piece and collect events until the codec wants more (or says CLOSED)."""
    seen: list[object] = []
    for piece in pieces:
        codec.receive_data(piece)
        while True:
            event = codec.next_event()
            if event is NEED_DATA or event is CLOSED:
                seen.append(event)
                break
            seen.append(event)
    return seen


def read(raw: bytes, *, method: str = "GET", eof: bool = False, **kw: int) -> tuple[Response, bytes, H1Client]:
    codec = client(method, **kw)
    seen = drain(codec, raw, *([b""] if eof else []))
    heads = [e for e in seen if isinstance(e, Response)]
    assert len(heads) == 1, seen
    assert sum(isinstance(e, EndOfMessage) for e in seen) == 1, seen
    assert not any(isinstance(e, Data) for e in seen[seen.index(END) :]), seen
    body = b"".join(e.data for e in seen if isinstance(e, Data))
    return heads[0], body, codec


def fails(raw: bytes, match: str, *, method: str = "GET", eof: bool = False, **kw: int) -> H1Client:
    codec = client(method, **kw)
    with pytest.raises(H1RemoteError, match=match):
        drain(codec, raw, *([b""] if eof else []))
    return codec


# ---------------------------------------------------------------- request side


def test_request_bytes() -> None:
    codec = H1Client()
    wire = codec.send_request("POST", "/mcp?x=1", [("Host", "h:1"), ("X-A", "a\tb")], b"{}")
    assert wire == b"POST /mcp?x=1 HTTP/1.1\r\nHost: h:1\r\nX-A: a\tb\r\nContent-Length: 2\r\n\r\n{}"


@pytest.mark.parametrize("method", ["GE T", "", "GET\r\n", "G\u00e9T", "GET/"])
def test_method_is_a_token(method: str) -> None:
    with pytest.raises(H1LocalError, match="method"):
        H1Client().send_request(method, "/", HOST)


@pytest.mark.parametrize("target", ["/a b", "", "/\x00", "/\x7f", "/a\tb", "/\u00e9"])
def test_target_has_no_ctl_or_space(target: str) -> None:
    with pytest.raises(H1LocalError, match="target"):
        H1Client().send_request("GET", target, HOST)


@pytest.mark.parametrize("name", ["X A", "", "X:A", "X\r\n", "X@"])
def test_header_name_is_a_token(name: str) -> None:
    with pytest.raises(H1LocalError, match="header name"):
        H1Client().send_request("GET", "/", [*HOST, (name, "v")])


@pytest.mark.parametrize("value", ["a\r\nb", "a\nb", "a\rb", "a\x00b", " a", "a ", "a\x7f"])
def test_header_value_has_no_cr_lf_nul(value: str) -> None:
    with pytest.raises(H1LocalError, match="invalid value"):
        H1Client().send_request("GET", "/", [*HOST, ("X-A", value)])


def test_header_outside_latin1_refused() -> None:
    with pytest.raises(H1LocalError, match="cannot be sent"):
        H1Client().send_request("GET", "/", [*HOST, ("X-A", "\u2603")])


def test_host_required() -> None:
    with pytest.raises(H1LocalError, match="Host"):
        H1Client().send_request("GET", "/", [("X-A", "b")])
    H1Client().send_request("GET", "/", [("hOsT", "b")])


def test_content_length_added_only_for_a_body() -> None:
    assert b"Content-Length" not in H1Client().send_request("GET", "/", HOST)
    assert b"\r\nContent-Length: 3\r\n\r\nabc" in H1Client().send_request("POST", "/", HOST, b"abc")


def test_given_content_length_checked() -> None:
    wire = H1Client().send_request("POST", "/", [*HOST, ("Content-Length", "3")], b"abc")
    assert wire.count(b"Content-Length") == 1
    with pytest.raises(H1LocalError, match="Content-Length 4"):
        H1Client().send_request("POST", "/", [*HOST, ("content-length", "4")], b"abc")
    with pytest.raises(H1LocalError, match="Content-Length 1"):
        H1Client().send_request("POST", "/", [*HOST, ("Content-Length", "1")])


def test_transfer_encoding_refused() -> None:
    with pytest.raises(H1LocalError, match="Transfer-Encoding"):
        H1Client().send_request("POST", "/", [*HOST, ("Transfer-Encoding", "chunked")], b"x")


def test_request_connection_close_not_reusable() -> None:
    codec = client(headers=[*HOST, ("Connection", "keep-alive, Close")])
    drain(codec, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    assert codec.done and not codec.reusable
    with pytest.raises(H1LocalError):
        codec.start_next_cycle()


def test_one_request_per_cycle() -> None:
    with pytest.raises(H1LocalError, match="already"):
        client().send_request("GET", "/", HOST)


def test_validation_cache_lets_no_bad_value_through() -> None:
    H1Client().send_request("GET", "/", [*HOST, ("X-Token", "good")])
    for bad in [("X-Token", "good\r\nX-Evil: 1"), ("X-Token", "good "), ("X Token", "good"), ("X-Token", "go\x00od")]:
        with pytest.raises(H1LocalError):
            H1Client().send_request("GET", "/", [*HOST, bad])
    assert b"X-Token: good\r\n" in H1Client().send_request("GET", "/", [*HOST, ("X-Token", "good")])
    for n in range(h1_syntax._CACHE_MAX + 10):
        H1Client().send_request("GET", "/", [*HOST, ("X-N", str(n))])
    assert len(h1_syntax._line_cache) <= h1_syntax._CACHE_MAX


# --------------------------------------------------------------- status line


@pytest.mark.parametrize("version", [b"1.0", b"1.1"])
def test_status_line_versions(version: bytes) -> None:
    head, body, _ = read(b"HTTP/" + version + b" 200 OK\r\nContent-Length: 2\r\n\r\nhi")
    assert (head.status_code, head.http_version, head.reason, body) == (200, version, b"OK", b"hi")


@pytest.mark.parametrize("line", [b"HTTP/1.1 404", b"HTTP/1.1 404 "])
def test_status_line_empty_reason(line: bytes) -> None:
    head, _, _ = read(line + b"\r\nContent-Length: 0\r\n\r\n")
    assert (head.status_code, head.reason) == (404, b"")


def test_status_line_reason_with_spaces_and_bare_lf() -> None:
    head, body, _ = read(b"HTTP/1.1 500 Very  Bad\tDay\nContent-Length: 1\n\nx")
    assert (head.reason, head.headers, body) == (b"Very  Bad\tDay", [(b"content-length", b"1")], b"x")


def test_status_line_higher_minor_version_read_as_1_1() -> None:
    # RFC 9112 section 2.3: a higher minor version of a major version we speak is read as our highest.
    head, body, codec = read(b"HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\nhi")
    assert (head.status_code, head.http_version, body) == (200, b"1.2", b"hi")
    assert codec.reusable  # persistent by default, as HTTP/1.1 is (section 9.3)


@pytest.mark.parametrize(
    "line",
    [
        b"HTTP/2.0 200 OK",
        b"HTTP/0.9 200 OK",
        b"HTTP/1.1 20 OK",
        b"HTTP/1.1 2000 OK",
        b"http/1.1 200 OK",
        b"HTTP/1.1  200 OK",
        b"HTTP/1.1 200 O\x00K",
        b"ICY 200 OK",
    ],
)
def test_status_line_malformed(line: bytes) -> None:
    fails(line + b"\r\n\r\n", "status line")


@pytest.mark.parametrize("code", [b"000", b"099"])
def test_status_code_below_100_refused(code: bytes) -> None:
    fails(b"HTTP/1.1 " + code + b" X\r\n\r\n", "status code")


def test_informational_answers_skipped() -> None:
    raw = (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
    )
    head, body, codec = read(raw)
    assert (head.status_code, head.headers, body) == (200, [(b"content-length", b"2")], b"hi")
    assert codec.reusable


def test_informational_split_in_pieces() -> None:
    codec = client()
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
    seen = drain(codec, *[raw[i : i + 1] for i in range(len(raw))])
    assert [type(e) for e in seen if e is not NEED_DATA] == [Response, EndOfMessage]


def test_switching_protocols_is_an_error() -> None:
    fails(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "switched")


# ------------------------------------------------------------------- fields


@pytest.mark.parametrize("line", [b"Bad Name: x", b"X@: y", b": y", b"X", b"X\x00: y", b"X: a\x00b"])
def test_response_header_name_token(line: bytes) -> None:
    fails(b"HTTP/1.1 200 OK\r\n" + line + b"\r\n\r\n", "header")


def test_whitespace_before_colon_refused() -> None:
    fails(b"HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", "header line")
    fails(b"HTTP/1.1 200 OK\r\nContent-Length\t: 0\r\n\r\n", "header line")


def test_header_names_lowercased_values_trimmed() -> None:
    head, _, _ = read(b"HTTP/1.1 200 OK\r\nX-Mixed:  a b \t\r\nContent-Length:0\r\n\r\n")
    assert head.headers == [(b"x-mixed", b"a b"), (b"content-length", b"0")]


def test_obs_fold_unfolded() -> None:
    raw = b"HTTP/1.1 200 OK\r\nX-Fold: one  \r\n  two\r\n\tthree\r\nContent-Length: 1\r\nX-Lf: a\n b\r\n\r\nx"
    head, body, codec = read(raw)
    assert head.headers == [(b"x-fold", b"one two three"), (b"content-length", b"1"), (b"x-lf", b"a b")]
    assert body == b"x" and codec.reusable


def test_obs_fold_in_a_framing_header_counts() -> None:
    head, body, _ = read(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip,\r\n chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n")
    assert head.headers == [(b"transfer-encoding", b"gzip, chunked")] and body == b"x"


def test_obs_fold_first_line_refused() -> None:
    fails(b"HTTP/1.1 200 OK\r\n X-A: b\r\nContent-Length: 0\r\n\r\n", "starts with whitespace")
    fails(b"HTTP/1.1 200 OK\r\n\tX-A: b\r\n\r\n", "starts with whitespace")


def test_obs_fold_in_trailers() -> None:
    _, body, codec = read(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-T: a\r\n b\r\n\r\n")
    assert body == b"x" and codec.reusable
    fails(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n b\r\n\r\n", "trailer")


def test_head_cap() -> None:
    filler = b"X-Pad: " + b"a" * 200 + b"\r\n"
    fails(b"HTTP/1.1 200 OK\r\n" + filler, "longer than 100", max_head=100)  # no end in sight
    fails(b"HTTP/1.1 200 OK\r\n" + filler + b"\r\n", "longer than 100", max_head=100)
    head, _, _ = read(b"HTTP/1.1 200 OK\r\n" + filler + b"Content-Length: 0\r\n\r\n", max_head=300)
    assert head.status_code == 200


def test_head_cap_counted_across_pieces() -> None:
    codec = client(max_head=100)
    raw = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: a\r\n" * 20 + b"\r\n"
    with pytest.raises(H1RemoteError, match="longer"):
        drain(codec, *[raw[i : i + 7] for i in range(0, len(raw), 7)])


# ------------------------------------------------------------------ framing


@pytest.mark.parametrize(("method", "status"), [("HEAD", b"200"), ("GET", b"204"), ("GET", b"304")])
def test_no_body(method: str, status: bytes) -> None:
    head, body, codec = read(
        b"HTTP/1.1 " + status + b" X\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n", method=method
    )
    # the framing fields describe the body a GET would get: none is read, the connection stays
    assert head.status_code == int(status) and body == b"" and codec.done and codec.reusable


def test_head_then_next_request() -> None:
    codec = client("HEAD")
    drain(codec, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
    assert codec.done and codec.reusable
    codec.start_next_cycle()
    codec.send_request("GET", "/", HOST)
    seen = drain(codec, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz")
    assert [e.data for e in seen if isinstance(e, Data)] == [b"z"] and codec.reusable


def test_chunked_with_extensions_and_trailers() -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;name=value;flag\r\nhello\r\nA \r\n, world!!!\r\n0;last\r\nX-Trailer: t\r\nX-Two: 2\r\n\r\n"
    )
    head, body, codec = read(raw)
    assert body == b"hello, world!!!" and codec.reusable
    assert head.headers == [(b"transfer-encoding", b"chunked")]
    for n in (1, 3):  # any cutting gives the same
        codec = client()
        seen = drain(codec, *[raw[i : i + n] for i in range(0, len(raw), n)])
        assert b"".join(e.data for e in seen if isinstance(e, Data)) == body and codec.done


def test_chunk_size_leading_zeros_do_not_count_as_digits() -> None:
    # 16 significant hex digits at most (64 bits); zeros before them add nothing to the value
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * 30 + b"5\r\nhello\r\n000\r\n\r\n"
    _, body, codec = read(raw)
    assert body == b"hello" and codec.reusable


@pytest.mark.parametrize(
    ("chunks", "match"),
    [
        (b"5\nhello\r\n0\r\n\r\n", "CRLF"),
        (b"5\r\nhello\n0\r\n\r\n", "CRLF"),
        (b"3\r\nhello\r\n0\r\n\r\n", "longer than its size"),
        (b"x\r\n", "chunk size"),
        (b"-1\r\n", "chunk size"),
        (b"\r\n", "chunk size"),
        (b"5 ;a\r\n", "chunk size"),
        (b"11111111111111111\r\n", "chunk size"),
        (b"0\r\nBad Trailer: x\r\n\r\n", "trailer"),
    ],
)
def test_chunked_malformed(chunks: bytes, match: str) -> None:
    fails(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks, match)


def test_chunk_size_line_cap() -> None:
    te = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    fails(te + b"1;" + b"e" * 40 + b"\r\n", "too long", max_chunk_line=32)
    fails(te + b"1;" + b"e" * 40, "too long", max_chunk_line=32)  # before its end arrives
    _, body, _ = read(te + b"1;" + b"e" * 20 + b"\r\nx\r\n0\r\n\r\n", max_chunk_line=32)
    assert body == b"x"


def test_trailer_cap() -> None:
    te = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
    fails(te + b"X-T: aaaaaaaa\r\n" * 5 + b"\r\n", "trailer fields are too long", max_trailers=40)
    fails(te + b"X-T: " + b"a" * 60, "too long", max_trailers=40)
    _, _, codec = read(te + b"X-T: aaaaaaaa\r\n" * 2 + b"\r\n", max_trailers=40)
    assert codec.reusable


def test_eof_inside_chunked_body() -> None:
    fails(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "closed in the", eof=True)


@pytest.mark.parametrize("fields", [b"Content-Length: 5, 5", b"Content-Length: 5\r\nContent-Length: 5"])
def test_identical_content_lengths(fields: bytes) -> None:
    _, body, codec = read(b"HTTP/1.1 200 OK\r\n" + fields + b"\r\n\r\nhello")
    assert body == b"hello" and codec.reusable


@pytest.mark.parametrize("value", [b"5, 6", b"5\r\nContent-Length: 6", b"-1", b"abc", b"", b"5,", b"+5", b"0x5"])
def test_bad_content_length(value: bytes) -> None:
    fails(b"HTTP/1.1 200 OK\r\nContent-Length: " + value + b"\r\n\r\nhello", "Content-Length")


def test_content_length_body_then_eof_early() -> None:
    fails(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "closed in the middle", eof=True)


def test_transfer_encoding_beats_content_length() -> None:
    _, body, codec = read(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
    )
    assert body == b"hi" and codec.done and not codec.reusable


@pytest.mark.parametrize("coding", [b"gzip", b"chunked, gzip"])
def test_other_transfer_coding_read_to_close(coding: bytes) -> None:
    codec = client()
    seen = drain(codec, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: " + coding + b"\r\n\r\n0\r\n\r\nabc")
    assert seen[-1] is NEED_DATA and not codec.done
    seen = drain(codec, b"more", b"")
    assert [e.data for e in seen if isinstance(e, Data)] == [b"more"]
    assert isinstance(seen[-2], EndOfMessage) and codec.done and not codec.reusable


def test_chunked_after_another_coding() -> None:
    _, body, codec = read(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: Chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n"
    )
    assert body == b"z" and codec.reusable


def test_no_length_read_to_close() -> None:
    codec = client()
    seen = drain(codec, b"HTTP/1.1 200 OK\r\n\r\nab", b"cd")
    assert seen[-1] is NEED_DATA and not codec.done
    seen = drain(codec, b"")
    assert isinstance(seen[0], EndOfMessage) and seen[1] is CLOSED
    assert codec.done and not codec.reusable


# --------------------------------------------------------------------- reuse


@pytest.mark.parametrize(
    ("head", "reusable"),
    [
        (b"HTTP/1.1 200 OK\r\nConnection: close", False),
        (b"HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE", False),
        (b"HTTP/1.1 200 OK\r\nConnection: keep-alive", True),
        (b"HTTP/1.1 200 OK", True),
        (b"HTTP/1.0 200 OK", False),
        (b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive", True),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive, close", False),
    ],
)
def test_reuse_verdict(head: bytes, reusable: bool) -> None:
    _, _, codec = read(head + b"\r\nContent-Length: 1\r\n\r\nx")
    assert codec.done and codec.reusable is reusable
    if reusable:
        codec.start_next_cycle()
        codec.send_request("GET", "/", HOST)
    else:
        with pytest.raises(H1LocalError):
            codec.start_next_cycle()


def test_eof_after_the_answer_forbids_reuse() -> None:
    _, _, codec = read(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", eof=True)
    assert codec.done and not codec.reusable
    assert codec.next_event() is CLOSED


def test_error_forbids_reuse_and_sticks() -> None:
    codec = fails(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "Content-Length")
    assert not codec.reusable and not codec.done
    with pytest.raises(H1RemoteError, match="already failed"):
        codec.next_event()


def test_bytes_after_the_answer() -> None:
    codec = client()
    seen = drain(codec, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")
    assert codec.reusable and seen[-1] is NEED_DATA
    codec.receive_data(b"HTTP/1.1 200 OK\r\n")
    assert codec.done and not codec.reusable
    with pytest.raises(H1RemoteError, match="after its answer"):
        codec.next_event()
    codec = client()  # the extra byte in the same piece as the answer
    codec.receive_data(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy")
    assert [type(codec.next_event()) for _ in range(3)] == [Response, Data, EndOfMessage]
    assert codec.done and not codec.reusable


def test_bytes_before_any_request() -> None:
    codec = H1Client()
    codec.receive_data(b"HTTP/1.1 200 OK\r\n\r\n")
    with pytest.raises(H1RemoteError, match="before any request"):
        codec.next_event()


def test_eof_before_and_inside_the_head() -> None:
    codec = client()
    assert drain(codec, b"") == [CLOSED]
    with pytest.raises(H1RemoteError, match="after the end"):
        codec.receive_data(b"x")
    fails(b"HTTP/1.1 200 OK\r\nContent-Le", "closed in the middle of a response head", eof=True)


def test_bytearray_and_memoryview_input() -> None:
    codec = client()
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody"
    seen = drain(codec, bytearray(raw[:20]), memoryview(raw[20:]))
    assert b"".join(e.data for e in seen if isinstance(e, Data)) == b"body" and codec.reusable


# -------------------------------------------------------------- no copying


def test_large_body_passes_through_uncopied() -> None:
    big = bytes(range(256)) * (40 * 1024)  # 10 MiB
    codec = client()
    seen = drain(codec, b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big))
    assert isinstance(seen[0], Response) and seen[1] is NEED_DATA
    codec.receive_data(big)
    event = codec.next_event()
    assert isinstance(event, Data) and event.data is big
    assert isinstance(codec.next_event(), EndOfMessage) and codec.reusable


def test_large_chunk_passes_through_uncopied() -> None:
    big = b"z" * (10 * 1024 * 1024)
    codec = client()
    drain(codec, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % len(big))
    codec.receive_data(big)
    event = codec.next_event()
    assert isinstance(event, Data) and event.data is big
    assert drain(codec, b"\r\n0\r\n\r\n")[0].__class__ is EndOfMessage


# ------------------------------------------- the fuzz target's seeds (h11 as the oracle)


@pytest.mark.parametrize(
    "raw",
    [
        # the reuse verdict belongs to the final head, here HTTP/1.0 behind a 1.1 interim answer
        b"HTTP/1.1 100 Y\r\n\r\nHTTP/1.0 204 OK\r\nConnection: keep-alive\r\n\r\n",
        b"HTTP/1.0 100 Y\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-A: a \t\r\n\t b\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: a\r\n b\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n  ",
        b"HTTP/1.1 200 OK\r\n\r\n\r\n \r\n",
    ],
)
def test_fuzz_seeds(raw: bytes) -> None:
    fuzz_h1_response(raw)
