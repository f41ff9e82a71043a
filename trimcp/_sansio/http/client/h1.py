"""A sans-IO HTTP/1.1 client codec: one request out, one response in, per cycle.

Theory of operation
-------------------
Written from RFC 9112 (HTTP/1.1 message syntax) and RFC 9110 (semantics), in
the shape of h11 but only the client half and only what trimcp's keep-alive
pool needs.  ``H1Client`` does no I/O:

* ``send_request(method, target, headers, body)`` validates and serializes a
  whole request into one ``bytes`` (RFC 9112 section 3: method a token, the
  target without CTL or space; section 5: field names tokens, values without
  CR/LF/NUL or surrounding whitespace).  A validated ``(name, value)`` pair is
  remembered, so the fixed headers a client repeats on every request are
  checked once.  A body gets its ``Content-Length`` (section 6.2); a given one
  must match.  Misuse raises ``H1LocalError``.
* ``receive_data(data)`` (``b""`` = EOF) and ``next_event()`` return, in order,
  ``Response`` (1xx answers are skipped; 101 is an error, this client never
  asks for an upgrade), ``Data`` pieces, ``EndOfMessage``, then ``NEED_DATA``
  (or ``CLOSED`` after EOF).  The response head is capped (``max_head``).
  The status line names HTTP/1.x; a minor version above 1 is read as 1.1
  (RFC 9112 section 2.3), any other major version is refused.
  A response field line continued by obs-fold lines has each fold (with the
  whitespace around it) replaced by one SP, as RFC 9112 section 5.2 asks of a
  user agent; a first field line starting with whitespace is refused.
* Body framing is RFC 9112 section 6.3, in its order: no body after HEAD and
  for 1xx/204/304; ``Transfer-Encoding`` ending in ``chunked`` is chunked
  (section 7.1: hex sizes, extensions ignored, trailers read, capped and
  dropped), any other transfer coding is read until close; then
  ``Content-Length`` (a list of equal values is accepted, section 8.6);
  else read until close.  Both TE and CL: TE wins and the connection is not
  reused (section 6.1).
* ``reusable`` (section 9.3): false after ``Connection: close`` from either
  side, an HTTP/1.0 answer without ``keep-alive``, close-delimited framing,
  unsolicited bytes after the answer, or any error.

Body bytes are handed on without copying when a received piece lies wholly
inside the body (the common case for a large answer read 64 KiB at a time).
Everything the peer gets wrong raises ``H1RemoteError`` and poisons the codec.
"""

from __future__ import annotations

import re
from typing import Final

from ...._errors import LocalProtocolError, RemoteProtocolError
from ..h1_events import CLOSED, END, NEED_DATA, Data, EndOfMessage, Sentinel
from ..h1_syntax import CHUNK_RE, field_line
from ..h1_syntax import FIELD_BYTES as _FIELD_BYTES
from ..h1_syntax import TARGET_RE as _TARGET_RE
from ..h1_syntax import TOKEN as _TOKEN
from ..h1_syntax import TOKEN_RE as _TOKEN_RE

__all__ = [
    "CLOSED",
    "MAX_HEAD_SIZE",
    "NEED_DATA",
    "Data",
    "EndOfMessage",
    "H1Client",
    "H1LocalError",
    "H1RemoteError",
    "Response",
]

#: Longest response head (status line plus fields) accepted.
MAX_HEAD_SIZE: Final = 64 * 1024
#: Longest chunk-size line (size plus extensions), and all trailer fields together.
MAX_CHUNK_LINE: Final = 4 * 1024
MAX_TRAILERS: Final = 16 * 1024


class H1LocalError(LocalProtocolError):
    """This side asked for something HTTP/1.1 cannot carry (or out of turn)."""


class H1RemoteError(RemoteProtocolError):
    """The server's bytes are not a valid HTTP/1.1 response."""


class Response:
    """A final response head; ``headers`` are ``(lowercased name, value)`` bytes pairs."""

    __slots__ = ("headers", "http_version", "reason", "status_code")

    def __init__(
        self, status_code: int, headers: list[tuple[bytes, bytes]], reason: bytes, http_version: bytes
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        self.reason = reason
        self.http_version = http_version

    def __repr__(self) -> str:
        return f"Response({self.status_code}, {self.headers!r})"


# HTTP/1.x: a minor version above 1 is read as 1.1 (RFC 9112 section 2.3: "as if it were in the
# highest minor version within that major version to which the recipient is conformant").
_STATUS_RE: Final = re.compile(rb"HTTP/(1\.[0-9]) ([0-9]{3})(?: ([\t \x21-\x7e\x80-\xff]*))?\r?")
# The field lines of a head, checked in one match: token ":" field bytes, CRLF or LF, each
# line perhaps continued by obs-fold lines (starting with SP / HTAB, RFC 9112 section 5.2),
# which can never come first.
_FIELDS_RE: Final = re.compile(rb"(?:" + _TOKEN + rb":" + _FIELD_BYTES + rb"(?:[ \t]" + _FIELD_BYTES + rb")*)*")
# One obs-fold with the whitespace around it (OWS CRLF RWS), replaced by one SP.
_FOLD_RE: Final = re.compile(rb"[ \t]*\r?\n[ \t]+")

# Request states / response states.
_IDLE, _SENT, _DONE, _ERROR = range(4)
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILERS, _TO_CLOSE, _END = range(8)


#: The response fields that decide how the body is framed and whether the connection is reused.
_FRAMING: Final = frozenset({b"connection", b"transfer-encoding", b"content-length"})


class H1Client:
    """The client side of one HTTP/1.1 connection (see the module docstring)."""

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
        self._state = _IDLE
        self._rstate = _HEAD
        self._buf: bytes | bytearray = b""
        self._off = 0
        self._eof = False
        self._head_method = False
        self._remaining = 0
        self._scanned = 0
        self._reusable = True
        self._trailers = 0

    # ------------------------------------------------------------ request

    def send_request(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]] | tuple[tuple[str, str], ...],
        body: bytes = b"",
    ) -> bytes:
        """One whole request as bytes; ``headers`` must include ``Host``."""
        if self._state != _IDLE:
            raise H1LocalError("a request is already on this connection (call start_next_cycle)")
        if _TOKEN_RE.fullmatch(method.encode("latin-1", "replace")) is None:
            raise H1LocalError(f"invalid method {method!r}")
        if _TARGET_RE.fullmatch(target) is None:
            raise H1LocalError(f"invalid request target {target!r}")
        parts = [f"{method} {target} HTTP/1.1\r\n".encode("ascii")]
        has_host = False
        length: str | None = None
        for name, value in headers:
            line, lname = field_line(name, value, H1LocalError)
            parts.append(line)
            if lname == "host":
                has_host = True
            elif lname == "content-length":
                length = value
            elif lname == "transfer-encoding":
                raise H1LocalError("this client sends bodies with Content-Length, not Transfer-Encoding")
            elif lname == "connection" and "close" in value.lower():
                self._reusable = False
        if not has_host:
            raise H1LocalError("an HTTP/1.1 request needs a Host header")
        if length is None:
            if body:
                parts.append(b"Content-Length: %d\r\n" % len(body))
        elif length != str(len(body)):
            raise H1LocalError(f"Content-Length {length} but the body has {len(body)} bytes")
        parts.append(b"\r\n")
        if body:
            parts.append(body)
        self._head_method = method == "HEAD"
        self._state = _SENT
        return b"".join(parts)

    # ----------------------------------------------------------- response

    @property
    def reusable(self) -> bool:
        """Whether, once this exchange is complete, another request may follow."""
        if self._state == _DONE and self._avail():
            return False  # unsolicited bytes after the answer: nothing can follow safely
        return self._reusable and self._state != _ERROR and not self._eof

    @property
    def done(self) -> bool:
        """The request was sent and its whole response received."""
        return self._state == _DONE

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes from the server; ``b""`` means it closed its side."""
        if not data:
            self._eof = True
            return
        if self._eof:
            raise H1RemoteError("data after the end of the connection")
        if self._off >= len(self._buf):
            # Nothing buffered: keep the piece itself (a body slice of it may need no copy).
            self._buf = data if isinstance(data, bytes) else bytes(data)
            self._off = 0
            self._scanned = 0
        else:
            rest = bytearray(memoryview(self._buf)[self._off :])
            self._scanned -= self._off
            rest += data
            self._buf, self._off = rest, 0

    def next_event(self) -> Response | Data | EndOfMessage | Sentinel:
        """The next thing the server said (see the module docstring)."""
        if self._state == _ERROR:
            raise H1RemoteError("this connection already failed")
        try:
            return self._next()
        except H1RemoteError:
            self._state = _ERROR
            raise

    def start_next_cycle(self) -> None:
        """Ready for the next request after a complete, reusable exchange."""
        if self._state != _DONE or not self.reusable:
            raise H1LocalError("this connection cannot carry another request")
        self._state = _IDLE
        self._rstate = _HEAD

    def _avail(self) -> int:
        return len(self._buf) - self._off

    def _take(self, n: int) -> bytes:
        """Up to ``n`` buffered bytes, without a copy when they are the whole buffer."""
        buf, off = self._buf, self._off
        end = min(len(buf), off + n)
        if off == 0 and end == len(buf) and isinstance(buf, bytes):
            piece = buf
        else:
            piece = bytes(memoryview(buf)[off:end])
        self._off = end
        return piece

    def _next(self) -> Response | Data | EndOfMessage | Sentinel:
        while True:
            state = self._rstate
            if state == _LENGTH or state == _CHUNK_DATA:
                if not self._avail():
                    return self._starved()
                piece = self._take(self._remaining)
                self._remaining -= len(piece)
                if not self._remaining:
                    self._rstate = _END if state == _LENGTH else _CHUNK_END
                return Data(piece)
            if state == _HEAD:
                if self._state != _SENT:
                    if self._avail():
                        if self._state == _IDLE:
                            raise H1RemoteError("the server sent bytes before any request")
                        raise H1RemoteError("the server sent bytes after its answer")
                    return CLOSED if self._eof else NEED_DATA
                head = self._read_head()
                if head is not None:
                    return head
                if self._eof:
                    if self._avail():
                        raise H1RemoteError("the connection closed in the middle of a response head")
                    return CLOSED
                return NEED_DATA
            if state == _END:
                self._state = _DONE
                self._rstate = _HEAD
                return END
            if state == _TO_CLOSE:
                if self._avail():
                    return Data(self._take(self._avail()))
                if self._eof:
                    self._rstate = _END
                    continue
                return NEED_DATA
            line = self._line(self.max_chunk_line if state != _TRAILERS else self.max_trailers)
            if line is None:
                return self._starved()
            if state == _CHUNK_SIZE:
                chunk = CHUNK_RE.fullmatch(line)
                if chunk is None:
                    raise H1RemoteError(f"invalid chunk size line {line[:40]!r}")
                self._remaining = int(chunk[1], 16)
                self._rstate = _CHUNK_DATA if self._remaining else _TRAILERS
                self._scanned = self._off
            elif state == _CHUNK_END:
                if line:
                    raise H1RemoteError("a chunk is longer than its size")
                self._rstate = _CHUNK_SIZE
            elif not line:  # _TRAILERS: the empty line ends the message
                self._rstate = _END
            elif _FIELDS_RE.fullmatch(line + b"\n") is None and not (
                # an obs-fold line continues the trailer field before it (RFC 9112 5.2)
                self._trailers and line[:1] in b" \t" and _FIELDS_RE.fullmatch(b"x:" + line + b"\n")
            ):
                raise H1RemoteError(f"invalid trailer field {line[:40]!r}")
            else:
                self._trailers += len(line)
                if self._trailers > self.max_trailers:
                    raise H1RemoteError("the trailer fields are too long")

    def _starved(self) -> Sentinel:
        if self._eof:
            raise H1RemoteError("the connection closed in the middle of a response")
        return NEED_DATA

    def _line(self, cap: int) -> bytes | None:
        """One CRLF-ended line (RFC 9112 7.1: chunk lines take no bare LF), or ``None`` until whole."""
        buf, off = self._buf, self._off
        nl = buf.find(b"\n", off)
        if nl < 0:
            if len(buf) - off > cap:
                raise H1RemoteError("a chunk size or trailer line is too long")
            return None
        if nl - off > cap:
            raise H1RemoteError("a chunk size or trailer line is too long")
        if nl == off or buf[nl - 1] != 13:
            raise H1RemoteError("a chunk line does not end with CRLF")
        line = bytes(buf[off : nl - 1])
        self._off = nl + 1
        return line

    def _read_head(self) -> Response | None:
        while True:
            buf, off = self._buf, self._off
            start = max(off, self._scanned - 2)
            crlf = buf.find(b"\n\r\n", start)
            lf = buf.find(b"\n\n", start)
            if crlf < 0 and lf < 0:
                self._scanned = len(buf)
                if len(buf) - off > self.max_head:
                    raise H1RemoteError(f"the response head is longer than {self.max_head} bytes")
                return None
            stop = lf + 2 if crlf < 0 or 0 <= lf < crlf else crlf + 3
            if stop - off > self.max_head:
                raise H1RemoteError(f"the response head is longer than {self.max_head} bytes")
            head = bytes(buf[off:stop])
            self._off = self._scanned = stop
            response = self._parse_head(head)
            if response is not None:
                return response
            # A 1xx head is dropped; the final answer follows it.

    def _parse_head(self, head: bytes) -> Response | None:
        nl = head.find(b"\n")
        status = _STATUS_RE.fullmatch(head, 0, nl)
        if status is None:
            raise H1RemoteError(f"invalid status line {head[:nl][:60]!r}")
        version, code_text, reason = status.groups()
        code = int(code_text)
        fields = head[nl + 1 : -2] if head.endswith(b"\r\n") else head[nl + 1 : -1]
        if fields:
            if _FIELDS_RE.fullmatch(fields) is None:
                raise H1RemoteError(self._field_error(fields))
            if b"\n " in fields or b"\n\t" in fields:
                # RFC 9112 5.2: a user agent replaces each obs-fold with SP before reading the value.
                fields = _FOLD_RE.sub(b" ", fields)
            headers: list[tuple[bytes, bytes]] = []
            # The fields that frame the body, gathered in the same pass (most answers have none
            # but Content-Length): name -> its comma-separated items, lowercased.
            framing: dict[bytes, list[bytes]] = {}
            for line in fields.split(b"\n")[:-1]:
                name, _, value = line.partition(b":")
                if value.endswith(b"\r"):
                    value = value[:-1]
                name, value = name.lower(), value.strip(b" \t")
                headers.append((name, value))
                if name in _FRAMING:
                    framing.setdefault(name, []).extend(item.strip(b" \t").lower() for item in value.split(b","))
        else:
            headers, framing = [], {}
        if code < 200:
            if code < 100:
                raise H1RemoteError(f"invalid status code {code_text.decode()}")
            if code == 101:
                raise H1RemoteError("the server switched protocols, which this client never asks for")
            return None
        self._frame(code, version, framing)
        return Response(code, headers, reason or b"", version)

    @staticmethod
    def _field_error(fields: bytes) -> str:
        for n, line in enumerate(fields.split(b"\n")):
            if line and line[:1] in b" \t":
                if n == 0:
                    return "the first response header line starts with whitespace"
                continue  # an obs-fold continuation line, valid after a field line
            if _FIELDS_RE.fullmatch(line + b"\n") is None:
                return f"invalid response header line {line[:60]!r}"
        return "invalid response header"  # pragma: no cover - the block failed as a whole

    def _frame(self, code: int, version: bytes, framing: dict[bytes, list[bytes]]) -> None:
        """Body framing and reuse from the ``_FRAMING`` fields (each a list of its items)."""
        connection = framing.get(b"connection") or []
        if b"close" in connection or (version == b"1.0" and b"keep-alive" not in connection):
            self._reusable = False
        if self._head_method or code == 204 or code == 304:
            self._rstate = _END
            return
        codings = framing.get(b"transfer-encoding")
        lengths = framing.get(b"content-length")
        if codings is not None:
            if lengths is not None:
                self._reusable = False  # a request smuggling shape: never reuse (RFC 9112 6.1)
            if codings and codings[-1] == b"chunked":
                self._rstate = _CHUNK_SIZE
                self._trailers = 0
            else:
                self._rstate = _TO_CLOSE
                self._reusable = False
            return
        if lengths is not None:
            if not lengths or any(not v.isdigit() for v in lengths):
                raise H1RemoteError(f"invalid Content-Length {b', '.join(lengths)!r}")
            if len(set(lengths)) > 1:  # only a repeated identical value is a mere duplicate
                raise H1RemoteError(f"conflicting Content-Length values {b', '.join(lengths)!r}")
            self._remaining = int(lengths[0])
            self._rstate = _LENGTH if self._remaining else _END
            return
        self._rstate = _TO_CLOSE
        self._reusable = False
