"""The HTTP/1.1 server codec rule by rule (RFC 9112, RFC 9110); against h11 in test_h1_server_differential.py."""

from __future__ import annotations

import h11
import pytest

from trimcp._sansio.http.server.h1 import (
    CLOSED,
    NEED_DATA,
    Data,
    EndOfMessage,
    H1LocalError,
    H1RemoteError,
    H1Server,
    Request,
)

POST = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"


def events(codec: H1Server) -> list[object]:
    out: list[object] = []
    while (event := codec.next_event()) is not NEED_DATA and event is not CLOSED:
        out.append(event)
        if isinstance(event, EndOfMessage):
            break
    return out


def read(raw: bytes, **kw: int) -> tuple[Request, bytes, H1Server]:
    codec = H1Server(**kw)
    codec.receive_data(raw)
    got = events(codec)
    head = got[0]
    assert isinstance(head, Request) and isinstance(got[-1], EndOfMessage)
    return head, b"".join(e.data for e in got if isinstance(e, Data)), codec


def refused(raw: bytes, **kw: int) -> H1RemoteError:
    codec = H1Server(**kw)
    codec.receive_data(raw)
    with pytest.raises(H1RemoteError) as caught:
        events(codec)
    return caught.value


def test_a_request_and_its_body() -> None:
    head, body, codec = read(POST)
    assert (head.method, head.target, head.http_version) == ("POST", "/mcp", "1.1")
    assert head.headers == [("host", "x"), ("content-length", "2")]
    assert body == b"{}" and codec.request_done and codec.keep_alive


def test_a_body_arriving_byte_by_byte() -> None:
    codec = H1Server()
    got: list[object] = []
    for i in range(len(POST)):
        codec.receive_data(POST[i : i + 1])
        got += events(codec)
    assert isinstance(got[0], Request) and b"".join(e.data for e in got if isinstance(e, Data)) == b"{}"
    assert isinstance(got[-1], EndOfMessage)


def test_values_lose_their_surrounding_whitespace_and_keep_inner_and_control_characters() -> None:
    head, _, _ = read(b"GET / HTTP/1.1\r\nHost:x\r\nX-A: \t a  b\t \r\nX-B:\x01c\x7f\r\nX-C:\r\n\r\n")
    assert head.headers[1:] == [("x-a", "a  b"), ("x-b", "\x01c\x7f"), ("x-c", "")]


@pytest.mark.parametrize(
    ("raw", "status", "why"),
    [
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", 400, "obs-fold"),
        (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, "whitespace before the colon"),
        (b"GET / HTTP/1.1\r\n\r\n", 400, "Host"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, "Host"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", 400, "invalid value"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", 400, "invalid value"),
        (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP/2.0"),
        (b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400, "request line"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "chunked"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 2\r\n\r\n", 400, "conflicting"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n", 400, "Content-Length"),
        (b"\x16\x03\x01\x02\x00", 400, "illegal request line"),
    ],
)
def test_refusals_carry_their_status(raw: bytes, status: int, why: str) -> None:
    error = refused(raw)
    assert error.status == status and why in str(error)


def test_a_head_over_the_cap_is_431_whether_or_not_it_ended() -> None:
    long_head = b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 200 + b"\r\n\r\n"
    assert refused(long_head, max_head=100).status == 431
    assert refused(long_head[:150], max_head=100).status == 431
    read(long_head, max_head=1000)


def test_empty_lines_before_the_request_line_are_ignored_but_bounded() -> None:
    head, _, _ = read(b"\r\n\n" + POST)
    assert head.target == "/mcp"
    codec = H1Server(max_head=64)
    codec.receive_data(b"\r")
    assert codec.next_event() is NEED_DATA  # a lone CR may begin an empty line
    codec.receive_data(b"\n" * 100)
    with pytest.raises(H1RemoteError, match="empty lines"):
        codec.next_event()


def test_chunked_body_with_extensions_and_trailers() -> None:
    raw = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n2;a=b\r\n{}\r\n1\r\n \r\n0\r\nT: 1\r\n\r\n"
    _, body, codec = read(raw)
    assert body == b"{} " and codec.body_length() == 0


@pytest.mark.parametrize(
    "chunks",
    [b"2\r\n{}x\r\n0\r\n\r\n", b"2\n{}\r\n0\r\n\r\n", b"g\r\n", b"0\r\nT: 1\n\r\n", b"1;\x01\r\nx\r\n0\r\n\r\n"],
)
def test_bad_chunked_framing_is_refused(chunks: bytes) -> None:
    refused(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)


def test_a_chunk_size_line_cannot_cost_quadratic_time() -> None:
    import time

    start = time.perf_counter()
    refused(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" + b" " * 4000 + b"\x01\r\n")
    refused(b"GET / HTTP/1.1\r\nHost: x\r\nX:" + b" " * 8000 + b"\x00\r\n\r\n", max_head=16000)
    assert time.perf_counter() - start < 0.5  # (quadratic regular expressions took seconds here)


def test_eof_between_requests_is_closed_and_inside_one_is_refused() -> None:
    codec = H1Server()
    codec.receive_data(b"")
    assert codec.next_event() is CLOSED
    codec = H1Server()
    codec.receive_data(POST[:-1])
    events(codec)
    codec.receive_data(b"")
    with pytest.raises(H1RemoteError, match="body"):
        codec.next_event()
    codec = H1Server()
    codec.receive_data(POST[:10])
    codec.receive_data(b"")
    with pytest.raises(H1RemoteError, match="head"):
        codec.next_event()


def test_100_continue_is_awaited_until_the_body_begins() -> None:
    codec = H1Server()
    codec.receive_data(b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
    assert isinstance(codec.next_event(), Request) and codec.next_event() is NEED_DATA
    assert codec.they_are_waiting_for_100_continue
    assert codec.informational(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert not codec.they_are_waiting_for_100_continue
    _, _, codec = read(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n")
    assert not codec.they_are_waiting_for_100_continue  # RFC 9110 10.1.1: ignored for HTTP/1.0


def parse_response(data: bytes, method: str = "POST") -> tuple[h11.Response, bytes, bool]:
    """The response as h11 (a strict client) reads it, and whether it may be reused."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method=method, target="/", headers=[("host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(data)
    client.receive_data(b"")
    head = client.next_event()
    assert isinstance(head, h11.Response)
    body = b""
    while isinstance(event := client.next_event(), h11.Data):
        body += event.data
    assert isinstance(event, h11.EndOfMessage), event
    return head, body, client.our_state is h11.DONE and client.their_state is h11.DONE


def test_whole_response_and_keep_alive() -> None:
    _, _, codec = read(POST)
    data = codec.respond(200, [("content-type", "application/json")], b'{"a":1}')
    head, body, _ = parse_response(data)
    assert head.status_code == 200 and body == b'{"a":1}' and (b"content-length", b"7") in head.headers
    assert codec.start_next_cycle() and codec.next_event() is NEED_DATA


def test_streamed_response_is_chunked_for_1_1_and_close_delimited_for_1_0() -> None:
    _, _, codec = read(POST)
    data = codec.start_response(200, [("content-type", "text/event-stream")]) + codec.data(b"a") + codec.data(b"")
    data += codec.data(b"bc") + codec.end()
    head, body, reusable = parse_response(data)
    assert reusable
    assert body == b"abc" and (b"transfer-encoding", b"chunked") in head.headers
    assert codec.start_next_cycle()
    _, _, codec = read(b"POST / HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
    data = codec.start_response(200, []) + codec.data(b"abc") + codec.end()
    assert data == b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nabc"  # (h11 writes no HTTP/1.0 request)
    assert not codec.start_next_cycle()


def test_connection_close_from_either_side_is_said_once() -> None:
    _, _, codec = read(POST)
    data = codec.respond(413, [("connection", "close")], b"x")
    assert data.lower().count(b"connection: close") == 1 and not codec.start_next_cycle()
    _, _, codec = read(POST.replace(b"Host: x", b"Host: x\r\nConnection: keep-alive, Close"))
    assert b"connection: close" in codec.respond(200) and not codec.start_next_cycle()


def test_no_body_after_head_or_with_204_and_304() -> None:
    _, _, codec = read(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert codec.respond(200, [], b"abc").endswith(b"content-length: 3\r\n\r\n")
    _, _, codec = read(POST)
    assert b"content-length" not in codec.respond(204, [], b"")


def test_a_refusal_before_any_request_closes() -> None:
    codec = H1Server()
    codec.receive_data(b"GET / HT")
    assert codec.next_event() is NEED_DATA
    assert codec.respond(408, [], b"slow").startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert not codec.start_next_cycle()
    codec = H1Server()
    codec.receive_data(b"GET / HTTP/1.1\r\n\r\n")
    with pytest.raises(H1RemoteError):
        codec.next_event()
    assert codec.can_respond and b"connection: close" in codec.respond(400, [], b"bad")


def test_a_pipelined_request_waits_for_the_next_cycle() -> None:
    _, _, codec = read(POST + POST.replace(b"/mcp", b"/two"))
    assert codec.next_event() is NEED_DATA and codec.buffered
    codec.respond(200)
    assert codec.start_next_cycle()
    got = events(codec)
    assert isinstance(got[0], Request) and got[0].target == "/two"


def test_misuse_is_a_local_error() -> None:
    _, _, codec = read(POST)
    codec.respond(200)
    with pytest.raises(H1LocalError):
        codec.respond(200)
    _, _, codec = read(POST)
    with pytest.raises(H1LocalError):
        codec.respond(200, [("x", "a\r\nb")])
    _, _, codec = read(POST)
    codec.start_response(200, [("content-length", "3")])
    with pytest.raises(H1LocalError):
        codec.data(b"abcd")
    with pytest.raises(H1LocalError):
        codec.end()


def test_repeated_field_lines_are_remembered_within_bounds() -> None:
    codec = H1Server()
    for n in range(100):
        codec.receive_data(POST.replace(b"Host: x", b"Host: x\r\nX-N: %d" % n))
        assert isinstance(events(codec)[0], Request)
        codec.respond(200)
        assert codec.start_next_cycle()
    assert len(codec._lines) <= 32
