"""A sans-IO HTTP/1.1 server codec: one request in, one response out, per cycle.

Theory of operation
-------------------
Written from RFC 9112 (HTTP/1.1 message syntax) and RFC 9110 (semantics), the
server half of what ``client/h1.py`` is for the client, and what every HTTP
server of trimcp reads its requests with (``trimcp._trio.http1.server``).
``H1Server`` does no I/O:

* ``receive_data(data)`` (``b""`` = EOF) and ``next_event()`` return, in order,
  ``Request`` (the head), ``Data`` pieces of its body, ``EndOfMessage``; then
  ``NEED_DATA`` until the response is done and ``start_next_cycle`` is called
  (bytes of a pipelined request wait in the buffer meanwhile), or ``CLOSED``
  when the client closed between requests.
* The request head (capped at ``max_head``, else 431) is read as RFC 9112
  sections 2-5 say: empty lines before the request line are ignored
  (section 2.2); a line ends with CRLF or a bare LF (section 2.2); the request
  line is ``method SP target SP HTTP/1.x`` (a minor version above 1 is read as
  1.1, section 2.3; another major version is 505); each field line is a token,
  a colon, and a value with optional whitespace around it; the value holds no
  NUL, CR, LF or other ASCII whitespace than SP and HTAB between its words
  (RFC 9110 section 5.5; other control characters are kept, as that section
  allows and as a Streamable HTTP server needs: see ``_VALUE_RE``).
  Refused with 400: whitespace before the colon (section 5.1), obs-fold
  (section 5.2 lets a server reject it, and a folded framing field is a
  request-smuggling shape), an HTTP/1.1 request without exactly one ``Host``
  (section 3.2), ``Content-Length`` that is not one decimal number (a list of
  equal values is that number, RFC 9110 section 8.6), and ``Content-Length``
  together with ``Transfer-Encoding`` (section 6.1: a server may reject it;
  serving it would need the connection closed anyway).  A transfer coding
  other than ``chunked`` alone is 501 (section 7: a server that does not
  understand one SHOULD answer 501).  The field lines a client repeats on
  every request (host, content type, session id, protocol version) are read
  once per connection: a line seen before is not parsed again.
* The body is ``Content-Length`` bytes, or chunked (section 7.1: hex sizes of
  at most 64 bits, extensions ignored, CRLF after every line and chunk,
  trailer fields read, capped and dropped); a request with neither has none.
* ``they_are_waiting_for_100_continue``: an HTTP/1.1 request with
  ``Expect: 100-continue`` whose body has not begun and that has no answer
  yet (RFC 9110 section 10.1.1); ``informational`` makes the 100.
* Responses: ``respond`` makes a whole one (``Content-Length`` computed),
  ``start_response``/``data``/``end`` a streamed one: chunked to an HTTP/1.1
  request, delimited by the close to an HTTP/1.0 one (RFC 9112 section 6.3).
  No body goes with 1xx, 204 and 304 or after HEAD.  A response is always
  written as HTTP/1.1 (section 2.3).  ``Connection: close`` is added when the
  connection will close after it: the client asked, an HTTP/1.0 request, the
  handler said so, a close-delimited body, or a refused request.  A response
  may also be made before any request was read (a 408 for a head too slow),
  or after a refused one (``H1RemoteError``); the connection closes after it.
* ``start_next_cycle`` (RFC 9112 section 9.3): another request may follow
  only when both the request and the response are complete and neither side
  asked to close.

Everything the client gets wrong raises ``H1RemoteError`` with the status to
answer (``status``); misuse by the server raises ``H1LocalError``.  The codec
is differential-tested against h11 (``tests/sansio/test_h1_server_differential.py``),
which served trimcp before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from http import HTTPStatus
from typing import Final, TypeAlias

from ...._errors import LocalProtocolError, RemoteProtocolError
from ..h1_events import CLOSED, END, NEED_DATA, Data, EndOfMessage, Sentinel
from ..h1_syntax import CHUNK_RE, TOKEN, TOKEN_RE, field_line

__all__ = [
    "CLOSED",
    "MAX_HEAD_SIZE",
    "NEED_DATA",
    "Data",
    "EndOfMessage",
    "Event",
    "H1LocalError",
    "H1RemoteError",
    "H1Server",
    "Request",
]

#: Longest request head (request line and fields) accepted.
MAX_HEAD_SIZE: Final = 16 * 1024
#: Longest chunk-size line (size plus extensions), and all trailer fields together.
MAX_CHUNK_LINE: Final = 4 * 1024
MAX_TRAILERS: Final = 16 * 1024
#: Field lines remembered per connection (each at most ``_CACHED_LINE`` bytes).
_CACHE_LINES: Final = 32
_CACHED_LINE: Final = 256


class H1LocalError(LocalProtocolError):
    """The server asked for something HTTP/1.1 cannot carry (or out of turn)."""


class H1RemoteError(RemoteProtocolError):
    """The client's bytes are not a request this server reads; ``status`` is the answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Request:
    """A request head: ``headers`` are ``(lowercased name, value)`` pairs, ASCII and latin-1 text."""

    __slots__ = ("headers", "http_version", "method", "target")

    def __init__(self, method: str, target: str, headers: list[tuple[str, str]], http_version: str) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        #: ``"1.1"`` or ``"1.0"``.
        self.http_version = http_version

    def __repr__(self) -> str:
        return f"Request({self.method} {self.target}, {self.headers!r})"


#: What ``next_event`` returns.
Event: TypeAlias = "Request | Data | EndOfMessage | Sentinel"

# method SP request-target SP HTTP-version; the target's characters as h11 and RFC 9112 3.2.
_REQUEST_LINE_RE: Final = re.compile(rb"(" + TOKEN + rb") ([\x21-\x7e]+) HTTP/([0-9])\.([0-9])\r?")
# A field value once the whitespace around it is stripped: no NUL, CR or LF (RFC 9110 section
# 5.5 makes a recipient refuse those), no other ASCII whitespace but SP and HTAB between words.
# Other control characters are kept, as RFC 9110 section 5.5 allows "for the sake of
# robustness" and as h11 did: a Streamable HTTP server must itself answer a parameter header
# holding one (2026-07-28: 400 with -32020), which it cannot if HTTP refused the request.
_VALUE_RE: Final = re.compile(rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
_LENGTH_RE: Final = re.compile(r"[0-9]{1,20}")
_BLANK_LINE_RE: Final = re.compile(rb"\n\r?\n")
#: The fields the codec reads itself (framing, keep-alive, Host, 100-continue).
_FRAMING: Final = frozenset({"host", "content-length", "transfer-encoding", "connection", "expect"})

# What is being read.
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS, _END, _DONE, _ERROR = range(9)
# The response: none begun, head sent with a body to follow (length / chunked / to close), done.
_R_IDLE, _R_LENGTH, _R_CHUNKED, _R_TO_CLOSE, _R_DONE = range(5)

_NO_BODY_STATUS: Final = frozenset({204, 304})


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""


_REASONS: Final = {status: _reason(status) for status in range(100, 600)}


class H1Server:
    """The server side of one HTTP/1.1 connection (see the module docstring)."""

    def __init__(
        self,
        *,
        max_head: int = MAX_HEAD_SIZE,
        max_chunk_line: int = MAX_CHUNK_LINE,
        max_trailers: int = MAX_TRAILERS,
    ) -> None:
        self.max_head = max_head
        self.max_chunk_line = max_chunk_line
        self.max_trailers = max_trailers
        self._buf = bytearray()
        self._eof = False
        self._state = _HEAD
        self._scanned = 0
        self._skipped = 0
        self._remaining = 0
        self._trailers = 0
        self._rstate = _R_IDLE
        self._rremaining = 0
        #: The request being served (``None`` before its head is read).
        self.request: Request | None = None
        self._keep_alive = True
        self._expect_continue = False
        self._head_method = False
        self._lines: dict[bytes, tuple[str, str]] = {}

    # ------------------------------------------------------------ state

    @property
    def buffered(self) -> bool:
        """Whether bytes of a request not yet read are held (a partial head, a pipelined request)."""
        return bool(self._buf)

    @property
    def can_respond(self) -> bool:
        """Whether a response may still be begun for the current request (or refusal)."""
        return self._rstate == _R_IDLE

    @property
    def request_done(self) -> bool:
        """The whole request (head and body) was read."""
        return self._state == _DONE

    @property
    def response_done(self) -> bool:
        return self._rstate == _R_DONE

    @property
    def keep_alive(self) -> bool:
        """Whether the connection can carry another request once this exchange is complete."""
        return self._keep_alive and not self._eof and self._state != _ERROR

    @property
    def they_are_waiting_for_100_continue(self) -> bool:
        return self._expect_continue and self._rstate == _R_IDLE and self._state in (_LENGTH, _CHUNK_SIZE)

    def start_next_cycle(self) -> bool:
        """Ready for the next request after a complete exchange; False when the connection must close."""
        if not (self._state == _DONE and self._rstate == _R_DONE and self.keep_alive):
            return False
        self._state = _HEAD
        self._rstate = _R_IDLE
        self._scanned = 0
        self._skipped = 0
        self.request = None
        self._expect_continue = False
        self._head_method = False
        return True

    # ------------------------------------------------------------ reading

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes from the client; ``b""`` means it closed its side."""
        if not data:
            self._eof = True
        else:
            self._buf += data

    def next_event(self) -> Event:
        """The next thing the client said (see the module docstring)."""
        if self._state == _ERROR:
            raise H1RemoteError("this connection already failed")
        try:
            return self._next()
        except H1RemoteError:
            self._state = _ERROR
            self._keep_alive = False
            raise

    def _next(self) -> Event:
        while True:
            state = self._state
            if state == _LENGTH or state == _CHUNK_DATA:
                buf = self._buf
                if not buf:
                    return self._starved()
                n = self._remaining
                if len(buf) <= n:
                    piece = bytes(buf)
                    buf.clear()
                else:
                    piece = bytes(buf[:n])
                    del buf[:n]
                self._remaining = n - len(piece)
                if not self._remaining:
                    self._state = _END if state == _LENGTH else _CHUNK_END
                self._expect_continue = False
                return Data(piece)
            if state == _HEAD:
                return self._read_head()
            if state == _END:
                self._state = _DONE
                return END
            if state == _DONE:
                return NEED_DATA
            line = self._line(self.max_chunk_line if state != _TRAILERS else self.max_trailers)
            if line is None:
                return self._starved()
            if state == _CHUNK_SIZE:
                chunk = CHUNK_RE.fullmatch(line)
                if chunk is None:
                    raise H1RemoteError(f"invalid chunk size line {line[:40]!r}")
                self._remaining = int(chunk[1], 16)
                self._state = _CHUNK_DATA if self._remaining else _TRAILERS
                self._expect_continue = False
            elif state == _CHUNK_END:
                if line:
                    raise H1RemoteError("a chunk is longer than its size")
                self._state = _CHUNK_SIZE
            elif not line:  # _TRAILERS: the empty line ends the message
                self._state = _END
            else:
                self._field(line, cr=False)  # (read like a header field, then dropped)
                self._trailers += len(line)
                if self._trailers > self.max_trailers:
                    raise H1RemoteError("the trailer fields are too long")

    def _starved(self) -> Sentinel:
        if self._eof:
            raise H1RemoteError("the client closed the connection in the middle of the request body")
        return NEED_DATA

    def _line(self, cap: int) -> bytes | None:
        """One CRLF-ended line (RFC 9112 7.1: chunk lines take no bare LF), or ``None`` until whole."""
        buf = self._buf
        nl = buf.find(b"\n")
        if nl < 0:
            if len(buf) > cap:
                raise H1RemoteError("a chunk size or trailer line is too long")
            return None
        if nl > cap:
            raise H1RemoteError("a chunk size or trailer line is too long")
        if nl == 0 or buf[nl - 1] != 13:
            raise H1RemoteError("a chunk line does not end with CRLF")
        line = bytes(buf[: nl - 1])
        del buf[: nl + 1]
        return line

    def _read_head(self) -> Request | Sentinel:
        buf = self._buf
        # RFC 9112 2.2: empty lines before the request line are ignored.
        while buf and (buf[0] == 10 or (buf[0] == 13 and buf[1:2] == b"\n")):
            n = 1 if buf[0] == 10 else 2
            del buf[:n]
            self._skipped += n
            if self._skipped > self.max_head:  # (they count as head bytes: no endless stream of them)
                raise H1RemoteError("too many empty lines before the request line")
        found = _BLANK_LINE_RE.search(buf, max(0, self._scanned - 2))
        if found is None:
            self._scanned = len(buf)
            if len(buf) > self.max_head:
                raise H1RemoteError(f"the request head is longer than {self.max_head} bytes", 431)
            if self._eof:
                if buf:
                    raise H1RemoteError("the client closed the connection in the middle of a request head")
                return CLOSED
            if buf and buf[0] < 0x21 and buf != b"\r":  # (a lone CR may begin an empty line)
                raise H1RemoteError("illegal request line")  # (a TLS handshake, say: no need to wait)
            return NEED_DATA
        stop = found.end()
        if stop > self.max_head:
            raise H1RemoteError(f"the request head is longer than {self.max_head} bytes", 431)
        head = bytes(buf[: found.start() + 1])  # up to and with the LF ending the last line
        del buf[:stop]
        self._scanned = 0
        request = self._parse_head(head)
        self.request = request
        return request

    def _parse_head(self, head: bytes) -> Request:
        nl = head.find(b"\n")
        line = _REQUEST_LINE_RE.fullmatch(head, 0, nl)
        if line is None:
            raise H1RemoteError(f"invalid request line {head[:nl][:60]!r}")
        raw_method, raw_target, major, minor = line.groups()
        if major != b"1":
            raise H1RemoteError(f"HTTP/{major.decode()}.{minor.decode()} is not served here", 505)
        version = "1.0" if minor == b"0" else "1.1"
        headers: list[tuple[str, str]] = []
        lines = self._lines
        lengths: list[str] = []
        codings: list[str] = []
        connection = ""
        expect = ""
        hosts = 0
        for raw in head[nl + 1 : -1].split(b"\n") if nl + 1 < len(head) else ():
            field = lines.get(raw)
            if field is None:
                field = self._field(raw)
                if len(raw) <= _CACHED_LINE:
                    if len(lines) >= _CACHE_LINES:
                        lines.clear()
                    lines[raw] = field
            headers.append(field)
            name = field[0]
            if name not in _FRAMING:
                continue
            if name == "host":
                hosts += 1
            elif name == "content-length":
                lengths.append(field[1])
            elif name == "transfer-encoding":
                codings.append(field[1])
            elif name == "connection":
                connection += "," + field[1].lower()
            elif name == "expect":
                expect += "," + field[1].lower()
        if hosts > 1 or (hosts == 0 and version == "1.1"):
            raise H1RemoteError(
                "an HTTP/1.1 request needs one Host header" if hosts == 0 else "more than one Host header"
            )
        method = raw_method.decode("ascii")
        self._head_method = method == "HEAD"
        tokens = {token.strip(" \t") for token in connection.split(",")} if connection else ()
        self._keep_alive = version == "1.1" and "close" not in tokens
        self._expect_continue = (
            bool(expect) and version == "1.1" and "100-continue" in {t.strip(" \t") for t in expect.split(",")}
        )
        self._frame(lengths, codings)
        return Request(method, raw_target.decode("ascii"), headers, version)

    @staticmethod
    def _field(raw: bytes, *, cr: bool = True) -> tuple[str, str]:
        """One field line, name lowercased, value without the OWS; ``cr``: the line's CR
        (before its LF, if any) is still on (a trailer line comes without its CRLF)."""
        if cr and raw[-1:] == b"\r":
            raw = raw[:-1]
        name, colon, value = raw.partition(b":")
        if not colon or TOKEN_RE.fullmatch(name) is None:
            if raw[:1] in (b" ", b"\t"):
                raise H1RemoteError("obs-fold (a header line starting with whitespace) is not accepted")
            if colon and name.rstrip(b" \t") != name:
                raise H1RemoteError(f"whitespace before the colon of header {name.strip()[:40]!r}")
            raise H1RemoteError(f"invalid header line {raw[:60]!r}")
        value = value.strip(b" \t")
        if _VALUE_RE.fullmatch(value) is None:
            raise H1RemoteError(f"invalid value for header {name[:40]!r}")
        return name.decode("ascii").lower(), value.decode("latin-1")

    def _frame(self, lengths: list[str], codings: list[str]) -> None:
        if codings:
            if lengths:
                raise H1RemoteError("both Content-Length and Transfer-Encoding")
            if len(codings) > 1 or codings[0].lower() != "chunked":
                raise H1RemoteError("only Transfer-Encoding: chunked is served", 501)
            self._state = _CHUNK_SIZE
            self._trailers = 0
            return
        if lengths:
            values = {v.strip(" \t") for value in lengths for v in value.split(",")}
            if len(values) != 1:
                raise H1RemoteError(f"conflicting Content-Length values {', '.join(lengths)!r}")
            value = values.pop()
            if _LENGTH_RE.fullmatch(value) is None:
                raise H1RemoteError(f"invalid Content-Length {value[:30]!r}")
            self._remaining = int(value)
            self._state = _LENGTH if self._remaining else _END
            return
        self._state = _END

    def body_length(self) -> int | None:
        """The declared length of the current request's body (``None``: chunked)."""
        if self._state in (_CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS):
            return None
        return self._remaining if self._state == _LENGTH else 0

    # ------------------------------------------------------------ writing

    def informational(self, status: int, headers: Iterable[tuple[str, str]] = ()) -> bytes:
        """A 1xx response (``100 Continue``); the final one follows."""
        if not 100 <= status < 200 or status == 101:
            raise H1LocalError(f"{status} is not an informational status this codec sends")
        if self._rstate != _R_IDLE:
            raise H1LocalError("the response has begun")
        self._expect_continue = False
        return self._head(status, headers, b"")

    def _head(self, status: int, headers: Iterable[tuple[str, str]], extra: bytes) -> bytes:
        parts = [b"HTTP/1.1 %d %s\r\n" % (status, _REASONS.get(status, b""))]
        for name, value in headers:
            parts.append(field_line(name, value, H1LocalError)[0])
        parts.append(extra)
        parts.append(b"\r\n")
        return b"".join(parts)

    def _begin(self, headers: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], str | None, bytes]:
        """The headers, a ``Content-Length`` among them, and the ``Connection: close`` to add."""
        if self._rstate != _R_IDLE:
            raise H1LocalError("a response was already begun for this request")
        hdrs = list(headers)
        length: str | None = None
        said_close = False
        for name, value in hdrs:
            lname = name.lower()
            if lname == "content-length":
                length = value
            elif lname == "transfer-encoding":
                raise H1LocalError("the codec frames the body itself: no Transfer-Encoding")
            elif lname == "connection" and "close" in value.lower():
                said_close = True
                self._keep_alive = False
        if self.request is None or self._state == _ERROR:
            self._keep_alive = False  # a refusal: nothing can follow on this connection
        return hdrs, length, b"" if said_close else b"connection: close\r\n"

    def _no_body(self, status: int) -> bool:
        return status in _NO_BODY_STATUS or self._head_method or status < 200

    def respond(self, status: int, headers: Iterable[tuple[str, str]] = (), body: bytes = b"") -> bytes:
        """A whole response; its ``Content-Length`` is added (none for 204 and 304)."""
        hdrs, length, close = self._begin(headers)
        if length is not None:
            raise H1LocalError("respond computes Content-Length itself")
        extra = b"" if status in _NO_BODY_STATUS else b"content-length: %d\r\n" % len(body)
        if not self._keep_alive:
            extra += close
        head = self._head(status, hdrs, extra)
        self._rstate = _R_DONE
        return head if self._no_body(status) else head + body

    def start_response(self, status: int, headers: Iterable[tuple[str, str]] = ()) -> bytes:
        """The head of a streamed response (``data`` and ``end`` follow)."""
        hdrs, length, close = self._begin(headers)
        extra = b""
        if self._no_body(status):
            self._rstate = _R_LENGTH
            self._rremaining = 0
        elif length is not None:
            if _LENGTH_RE.fullmatch(length) is None:
                raise H1LocalError(f"invalid Content-Length {length!r}")
            self._rstate = _R_LENGTH
            self._rremaining = int(length)
        elif self.request is not None and self.request.http_version == "1.1":
            self._rstate = _R_CHUNKED
            extra = b"transfer-encoding: chunked\r\n"
        else:
            self._rstate = _R_TO_CLOSE
            self._keep_alive = False
        if not self._keep_alive:
            extra += close
        return self._head(status, hdrs, extra)

    def data(self, data: bytes) -> bytes:
        """A piece of the streamed body, framed."""
        state = self._rstate
        if state == _R_CHUNKED:
            return b"%x\r\n%b\r\n" % (len(data), data) if data else b""
        if state == _R_TO_CLOSE:
            return data
        if state == _R_LENGTH:
            if len(data) > self._rremaining:
                raise H1LocalError("more body than the declared Content-Length")
            self._rremaining -= len(data)
            return data
        raise H1LocalError("no streamed response is being written")

    def end(self) -> bytes:
        """The end of the streamed body (for a close-delimited one: the connection must close)."""
        state = self._rstate
        self._rstate = _R_DONE
        if state == _R_CHUNKED:
            return b"0\r\n\r\n"
        if state == _R_LENGTH and self._rremaining:
            raise H1LocalError(f"the body is {self._rremaining} bytes short of its Content-Length")
        if state == _R_IDLE or state == _R_DONE:
            raise H1LocalError("no streamed response is being written")
        return b""
