"""HTTP/1.1 message syntax both of trimcp's codecs read and write (RFC 9110, RFC 9112).

Theory of operation
-------------------
One table for the grammar the client codec (``client/h1.py``) and the server codec
(``server/h1.py``) share: tokens (RFC 9110 section 5.6.2: field names, methods,
transfer codings), field values (section 5.5: visible characters and obs-text with
inner SP/HTAB, no CTL, no surrounding whitespace), request targets (visible ASCII),
the chunk-size line (RFC 9112 section 7.1), and ``field_line``: a validated ``name: value`` line to send, cached because the
headers a peer repeats on every message (content type, session id, server name)
need checking once.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["CHUNK_RE", "FIELD_BYTES", "TARGET_RE", "TOKEN", "TOKEN_RE", "VALUE_RE", "field_line"]

TOKEN: Final = rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+"
TOKEN_RE: Final = re.compile(TOKEN)
TARGET_RE: Final = re.compile(r"[\x21-\x7e]+")
# A value: no CTL but HTAB, no DEL; no surrounding whitespace (RFC 9110 section 5.5).
VALUE_RE: Final = re.compile(r"(?:[\x21-\x7e\x80-\xff](?:[\t \x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?")
#: What may follow the colon of a field line received, up to its end (CRLF or LF).
FIELD_BYTES: Final = rb"[\t \x21-\x7e\x80-\xff]*\r?\n"
#: chunk-size [ chunk-ext ] (RFC 9112 section 7.1), the extensions ignored; trailing whitespace
#: tolerated as h11 does (section 7.1.1 also allows BWS before ";", which is not accepted here).
#: At most 16 significant hex digits (64 bits: a recipient must not overflow); leading zeros
#: are not digits of the value, so they do not count (each codec caps the line's length).
CHUNK_RE: Final = re.compile(rb"0*([0-9A-Fa-f]{1,16})(?:;[\t \x21-\x7e\x80-\xff]*|[ \t]*)")

_CACHE_MAX: Final = 512
#: Validated ``(name, value)`` -> (the field line, its name lowercased).
_line_cache: dict[tuple[str, str], tuple[bytes, str]] = {}


def field_line(name: str, value: str, error: type[Exception]) -> tuple[bytes, str]:
    """``name: value\\r\\n`` as bytes and the name lowercased; ``error`` when either is invalid."""
    key = (name, value)
    hit = _line_cache.get(key)
    if hit is not None:
        return hit
    try:
        raw_name, raw_value = name.encode("ascii"), value.encode("latin-1")
    except UnicodeEncodeError:
        raise error(f"header {name!r} cannot be sent as HTTP/1.1 bytes") from None
    if TOKEN_RE.fullmatch(raw_name) is None:
        raise error(f"invalid header name {name!r}")
    if VALUE_RE.fullmatch(value) is None:
        raise error(f"invalid value for header {name!r}: {value!r}")
    line = raw_name + b": " + raw_value + b"\r\n"
    if len(_line_cache) >= _CACHE_MAX:
        _line_cache.clear()  # values that never repeat gain nothing from being kept
    hit = _line_cache[key] = (line, name.lower())
    return hit
