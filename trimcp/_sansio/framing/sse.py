"""Server-Sent Events (``text/event-stream``): an incremental decoder and an encoder.

Theory of operation
-------------------
MCP carries JSON-RPC messages inside Server-Sent Events on two transports: the
2024-11-05 *HTTP+SSE* transport (a long-lived GET stream whose first event,
``event: endpoint``, names the POST URL; every later ``message`` event holds one
JSON-RPC message) and *Streamable HTTP* (2025-03-26 and later), where a POST or
the standalone GET may be answered with ``text/event-stream``.  Streamable HTTP
also uses the SSE ``id`` field for resumption (``Last-Event-ID`` on a GET) and,
from 2025-11-25, a *priming* event (an id, empty or absent data, often a
``retry``) after which the server may close the stream and the client
reconnects after ``retry`` milliseconds.

The wire format and its parsing are defined by the WHATWG HTML Living Standard,
section "Server-sent events" ("Parsing an event stream" and "Interpreting an
event stream").  ``SSEDecoder`` follows those rules exactly:

* the stream is UTF-8, decoded with replacement of invalid sequences; one
  leading byte-order mark is skipped;
* lines end with CRLF, LF or CR.  A CR that ends one chunk may be followed by
  the LF of the next; that pair is one line end, not two;
* an empty line dispatches the event being built; a line starting with ``:`` is
  a comment; otherwise the text before the first ``:`` is the field name and the
  rest the value (one leading space removed).  A line without ``:`` is a field
  with an empty value;
* ``event`` sets the type (``"message"`` when empty or absent); ``data`` appends
  its value and a LF to the data buffer; ``id`` sets the last-event-id buffer
  unless the value contains NUL; ``retry`` sets the reconnection time when the
  value is ASCII digits only; any other field is ignored;
* on dispatch the last event id takes the buffer's value (even when no event is
  dispatched); an empty data buffer dispatches nothing; one trailing LF is
  removed from the data;
* at end of input an unfinished event is discarded, never dispatched.

Choices this module makes where the standard leaves room
--------------------------------------------------------
* **Undispatched blocks (id- or retry-only "priming").**  ``feed`` returns only
  events the standard dispatches, so ``ServerSentEvent.data`` is always a
  ``str``.  A block with no ``data`` line is not an event, but its effects are
  visible on the decoder: ``last_event_id`` (updated at the blank line that ends
  the block, as WHATWG's EventSource does), ``retry_ms`` (updated as soon as the
  field is read) and the ``dataless_blocks`` counter.  A priming event written as
  ``id: 7`` / ``data:`` (what the official SDKs send) *is* dispatched, with
  ``data == ""``; a transport should skip empty data rather than parse it.
* **``id`` on an event** is the last event id in effect when it was dispatched
  (WHATWG ``MessageEvent.lastEventId``), so it persists across events.  ``None``
  means the stream never set one; ``""`` means the server reset it (then send no
  ``Last-Event-ID``).  ``retry`` on an event is the ``retry`` field of that
  event's own block (``None`` if it had none); the value in effect is
  ``SSEDecoder.retry_ms``.
* **End of input.**  ``feed(b"")`` / ``close()`` returns nothing more;
  ``truncated`` then tells whether an unfinished event (any field line after
  the last blank line, or a partial non-comment line) was discarded, so a
  transport can report "stream broken mid-event".  Its id is *not* applied, so
  resuming never skips the lost event.
* **Size cap.**  ``max_event_size`` bounds the bytes held for the current event:
  the ``data`` values (plus one per line for the joining LF) and the partial
  line.  Exceeding it raises ``FramingOverflow`` (a ``RemoteProtocolError``)
  carrying the events the same chunk completed before it; the decoder is
  unusable afterwards.  The default (64 MiB) lets a 10 MB tool result through.

Work is linear in the input however it is split: each chunk is scanned once
for line ends and a partial line is only ever appended to.  Nothing here does
I/O or reads a clock.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from ..._errors import LocalProtocolError, RemoteProtocolError
from . import FramingOverflow

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "SSEDecoder",
    "ServerSentEvent",
    "encode_comment",
    "encode_event",
]

#: Default cap on one event's buffered bytes: generous (a tool result can be
#: many megabytes) but finite.
DEFAULT_MAX_EVENT_SIZE: Final = 64 * 1024 * 1024

_BOM: Final = b"\xef\xbb\xbf"
_LINE_END: Final = re.compile(rb"\r\n?|\n")
_TEXT_LINE_END: Final = re.compile(r"\r\n|\r|\n")
_CR: Final = 0x0D
_LF: Final = 0x0A
_COLON: Final = 0x3A
# A retry value longer than this (after leading zeros) is ignored: no sane
# reconnection time needs it, and int() refuses very long digit strings.
_MAX_RETRY_DIGITS: Final = 18


@attrs.frozen
class ServerSentEvent:
    """One dispatched event.

    ``event`` is the type (``"message"`` by default); ``data`` the joined data
    lines; ``id`` the last event id in effect (``None`` if never set); ``retry``
    the reconnection time in ms given by this event's own ``retry`` field;
    ``reconnection_ms`` the reconnection time in effect when it was dispatched
    (the stream's latest ``retry`` field so far, this block's included, or the
    decoder's starting value).  ``id`` and ``reconnection_ms`` are what a reader
    that stops at this event must report as the stream's state.
    """

    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None
    reconnection_ms: int | None = None


def _decode(raw: bytes | bytearray) -> str:
    return raw.decode("utf-8", "replace")


class SSEDecoder:
    """Incremental ``text/event-stream`` parser (WHATWG rules).

    ``feed(bytes)`` returns the events the bytes complete; ``feed(b"")`` or
    ``close()`` marks end of input.  ``last_event_id`` and ``retry_ms`` may be
    seeded from a previous connection of the same logical stream.
    """

    def __init__(
        self,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        *,
        last_event_id: str | None = None,
        retry_ms: int | None = None,
    ) -> None:
        if max_event_size < 1:
            raise ValueError("max_event_size must be positive")
        self.max_event_size = max_event_size
        self._last_event_id = last_event_id
        self._id_buffer = last_event_id
        self._retry_ms = retry_ms
        # Event being built.
        self._data: list[str] = []
        self._data_size = 0
        self._event_type = ""
        self._block_retry: int | None = None
        self._block_has_id_or_retry = False
        self._in_event = False
        # Line assembly.
        self._partial = bytearray()
        self._skip_lf = False
        self._bom_pending = True
        self._head = b""  # up to 2 bytes that may be the start of a BOM
        # Status.
        self._eof = False
        self._broken = False
        self._truncated = False
        self._comments = 0
        self._dataless_blocks = 0

    # -- read-only state -------------------------------------------------------

    @property
    def last_event_id(self) -> str | None:
        """The id to send as ``Last-Event-ID`` when resuming (``None``/``""``: send none)."""
        return self._last_event_id

    @property
    def retry_ms(self) -> int | None:
        """The reconnection time in effect, in milliseconds, if the server set one."""
        return self._retry_ms

    @property
    def comments(self) -> int:
        """How many comment lines (keep-alives) have been seen."""
        return self._comments

    @property
    def dataless_blocks(self) -> int:
        """Blocks ended by a blank line that set ``id`` or ``retry`` but had no data.

        WHATWG dispatches no event for these; their id/retry still took effect.
        """
        return self._dataless_blocks

    @property
    def buffered(self) -> int:
        """Bytes counted against ``max_event_size`` right now."""
        return self._data_size + len(self._partial) + len(self._head)

    @property
    def eof(self) -> bool:
        return self._eof

    @property
    def truncated(self) -> bool:
        """After EOF: whether an unfinished event was discarded."""
        return self._truncated

    # -- input -------------------------------------------------------------------

    def close(self) -> bool:
        """Mark end of input (same as ``feed(b"")``); return ``truncated``."""
        self.feed(b"")
        return self._truncated

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Feed bytes split anywhere; return the events they complete, in order.

        ``b""`` means end of input.  Raises ``FramingOverflow`` (with the events
        completed before it) when the current event outgrows ``max_event_size``.
        """
        if self._broken:
            raise LocalProtocolError("SSE decoder already failed")
        if self._eof:
            if data:
                raise LocalProtocolError("SSE data after end of input")
            return []
        if not data:
            self._finish()
            return []
        if self._bom_pending:
            head = self._head + data
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._head = head
                return []
            self._head = b""
            self._bom_pending = False
            data = head.removeprefix(_BOM)
            if not data:
                return []
        out: list[ServerSentEvent] = []
        try:
            self._scan(data, out)
        except RemoteProtocolError as exc:
            raise FramingOverflow(str(exc), out) from None
        return out

    def _scan(self, data: bytes, out: list[ServerSentEvent]) -> None:
        pos = 0
        if self._skip_lf:
            self._skip_lf = False
            if data[0] == _LF:
                pos = 1
        for match in _LINE_END.finditer(data, pos):
            start = match.start()
            if self._partial:
                self._check_size(len(self._partial) + start - pos)
                self._partial += data[pos:start]
                line = bytes(self._partial)
                self._partial.clear()
            else:
                self._check_size(start - pos)
                line = data[pos:start]
            self._line(line, out)
            pos = match.end()
        self._skip_lf = data[-1] == _CR
        if pos < len(data):
            self._check_size(len(self._partial) + len(data) - pos)
            self._partial += data[pos:]

    def receive_data(self, data: bytes) -> list[ServerSentEvent]:
        """Alias of ``feed`` for the h11-style verb used elsewhere in trimcp."""
        return self.feed(data)

    # -- internals -----------------------------------------------------------------

    def _check_size(self, line_bytes: int) -> None:
        total = self._data_size + line_bytes
        if total > self.max_event_size:
            self._broken = True
            self._partial.clear()
            self._data.clear()
            raise RemoteProtocolError(
                f"SSE event larger than {self.max_event_size} bytes ({total} bytes buffered and still no end of event)"
            )

    def _finish(self) -> None:
        self._eof = True
        pending = self._partial or self._head
        self._truncated = self._in_event or (bool(pending) and pending[0] != _COLON)
        self._partial.clear()
        self._head = b""
        self._reset_block()

    def _reset_block(self) -> None:
        self._data.clear()
        self._data_size = 0
        self._event_type = ""
        self._block_retry = None
        self._block_has_id_or_retry = False
        self._in_event = False

    def _line(self, line: bytes, out: list[ServerSentEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line[0] == _COLON:
            self._comments += 1
            return
        self._in_event = True
        colon = line.find(b":")
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            value = line[colon + 1 :]
            if value[:1] == b" ":
                value = value[1:]
        if name == b"data":
            self._data_size += len(value) + 1
            self._check_size(0)
            self._data.append(_decode(value))
        elif name == b"event":
            self._event_type = _decode(value)
        elif name == b"id":
            if b"\x00" not in value:
                self._id_buffer = _decode(value)
                self._block_has_id_or_retry = True
        elif name == b"retry" and value.isdigit():  # bytes.isdigit(): ASCII digits only
            digits = value.lstrip(b"0")
            if len(digits) <= _MAX_RETRY_DIGITS:
                self._retry_ms = self._block_retry = int(digits or b"0")
                self._block_has_id_or_retry = True
        # Any other field is ignored, as WHATWG requires.

    def _dispatch(self, out: list[ServerSentEvent]) -> None:
        self._last_event_id = self._id_buffer
        if self._data:
            out.append(
                ServerSentEvent(
                    event=self._event_type or "message",
                    data="\n".join(self._data),
                    id=self._last_event_id,
                    retry=self._block_retry,
                    reconnection_ms=self._retry_ms,
                )
            )
        elif self._block_has_id_or_retry:
            self._dataless_blocks += 1
        self._reset_block()


# -- encoder ---------------------------------------------------------------------


def _check_field(name: str, value: str) -> None:
    if "\r" in value or "\n" in value or "\x00" in value:
        raise LocalProtocolError(f"SSE {name} must not contain CR, LF or NUL: {value!r}")


def _to_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LocalProtocolError(f"SSE text is not encodable as UTF-8: {exc}") from None


def encode_event(
    data: str,
    *,
    event: str | None = None,
    id: str | None = None,
    retry: int | None = None,
) -> bytes:
    """One complete event, ending with the blank line that dispatches it.

    ``data`` is split on CRLF, CR and LF into ``data:`` lines (the receiver
    rejoins them with LF).  ``event`` and ``id`` must not contain CR, LF or NUL;
    ``retry`` must be a non-negative int.  ``data=""`` gives a dispatched event
    with empty data (the form MCP SDKs use for priming events).
    """
    parts: list[str] = []
    if event is not None:
        _check_field("event", event)
        parts.append(f"event: {event}\n")
    if id is not None:
        _check_field("id", id)
        parts.append(f"id: {id}\n")
    if retry is not None:
        if isinstance(retry, bool) or not isinstance(retry, int) or retry < 0:
            raise LocalProtocolError(f"SSE retry must be a non-negative int: {retry!r}")
        parts.append(f"retry: {retry}\n")
    for line in _TEXT_LINE_END.split(data):
        parts.append(f"data: {line}\n")
    parts.append("\n")
    return _to_bytes("".join(parts))


def encode_comment(text: str = "") -> bytes:
    """Comment line(s), e.g. a keep-alive; receivers ignore them.

    Multi-line text becomes one comment line per line.  No blank line is added,
    so a comment never dispatches (or interrupts) an event.
    """
    return _to_bytes("".join(f": {line}\n" if line else ":\n" for line in _TEXT_LINE_END.split(text)))
