"""Newline-delimited framing for the MCP stdio transport (all revisions).

Theory of operation
-------------------
Over stdio each JSON-RPC message is one line of UTF-8 JSON with no embedded
newline.  ``LineDecoder`` accepts bytes split anywhere, yields complete lines
(without the terminator; a CR before the LF is tolerated and removed), skips
blank lines, and enforces a cap on a line's length so a peer cannot make us
buffer without bound: an oversize line raises ``FramingOverflow`` carrying the
lines the same input finished before it, so a response followed by a runaway
line in one read is still delivered.  ``receive_data(b"")`` means end of input:
a partial line still buffered then is reported with ``RemoteProtocolError``.
``frame`` is the encoder.
"""

from __future__ import annotations

from typing import Final

from ..._errors import LocalProtocolError, RemoteProtocolError
from . import FramingOverflow

DEFAULT_MAX_LINE: Final = 64 * 1024 * 1024


def frame(payload: bytes) -> bytes:
    """Frame one serialized message as a stdio line."""
    if b"\n" in payload or b"\r" in payload:
        raise LocalProtocolError("a stdio message must not contain a raw newline")
    return payload + b"\n"


class LineDecoder:
    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        # Where to resume scanning for b"\n": avoids rescanning (quadratic) on drip-fed input.
        self._scan_from = 0
        self._eof = False
        self._broken = False

    @property
    def buffered(self) -> int:
        return len(self._buf)

    @property
    def eof(self) -> bool:
        return self._eof

    def receive_data(self, data: bytes) -> list[bytes]:
        """Feed bytes; return the complete, non-blank lines they finish.

        ``b""`` signals EOF.  Raises ``FramingOverflow`` for an oversize line (with
        the lines completed before it) or ``RemoteProtocolError`` for a partial line
        at EOF; after that the decoder is unusable.
        """
        if self._broken:
            raise LocalProtocolError("decoder already failed")
        if self._eof:
            if data:
                raise LocalProtocolError("data after EOF")
            return []
        if not data:
            self._eof = True
            if self._buf.strip():
                self._broken = True
                raise RemoteProtocolError(f"stream ended in the middle of a line ({len(self._buf)} bytes unterminated)")
            self._buf.clear()
            return []
        self._buf += data
        lines: list[bytes] = []
        start = 0
        buf = self._buf
        pos = buf.find(b"\n", self._scan_from)
        while pos != -1:
            end = pos
            if end > start and buf[end - 1] == 0x0D:  # tolerate CRLF
                end -= 1
            if end - start > self.max_line:
                self._fail(end - start, lines)
            line = bytes(buf[start:end])
            if line.strip():
                lines.append(line)
            start = pos + 1
            pos = buf.find(b"\n", start)
        if start:
            del buf[:start]
        self._scan_from = len(buf)
        # A trailing CR may be the first half of a CRLF: it doesn't count yet.
        if len(buf) - buf.endswith(b"\r") > self.max_line:
            self._fail(len(buf), lines)
        return lines

    def _fail(self, size: int, completed: list[bytes]) -> None:
        self._broken = True
        self._buf.clear()
        raise FramingOverflow(f"line of at least {size} bytes exceeds the {self.max_line}-byte limit", completed)
