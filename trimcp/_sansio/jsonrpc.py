"""JSON-RPC 2.0 messages as MCP uses them.

Theory of operation
-------------------
MCP frames every exchange as a JSON-RPC 2.0 message: a request (has ``id`` and
``method``), a notification (``method``, no ``id``), a result response (``id``
and ``result``) or an error response (``id`` and ``error``).  Ids are integers
or strings and never null in a request (MCP tightens JSON-RPC here).  The
2025-03-26 revision also allowed *batches* (a JSON array of messages); later
revisions removed them, but a robust receiver still accepts them.

``parse_payload`` turns one complete JSON text (a stdio line, an HTTP body, an
SSE ``data`` field) into messages plus a list of ``InvalidMessage`` records, one
per thing that could not be understood, each carrying the JSON-RPC error to
answer with (-32700 for unparsable JSON, -32600 for a malformed message) and the
id when it can be recovered, so that a broken answer fails its waiter at once
and a broken request still gets its error answer.

Parsing is strict: UTF-8 only, no NaN or Infinity, no number that overflows a
double, no raw control character inside a string.  When the strict reader
refuses a text, a lenient one (invalid UTF-8 read as U+FFFD, Python's json
extensions allowed) reads it again *only to find the id* of the object, or of
each object in a batch, and what it was (``raw``: "result"/"error" for an
answer, "method" for a request).  Nothing read leniently is ever used as data:
the text stays a -32700 and yields no message.  ``serialize`` writes compact
UTF-8.  Nothing in this module raises on bad peer input except an oversize
payload.

Speed without a second set of rules: orjson reads texts of at most
``FAST_PARSE_MAX`` bytes (every message of a busy session; larger ones are read
by the standard reader alone, whose memory ``parse_cost`` bounds: orjson's
transient peak is 13 to 40 times the text, gone when the call returns, so the
cap bounds it to about 2.5 MiB, and one parse runs at a time) and
writes first, and the standard library's reader and writer, configured as
above, are the rules.
orjson accepts a subset of what the strict reader accepts, with the same
result (duplicate keys: the last wins; a lone surrogate escape, NaN, a number
that overflows a double, invalid UTF-8 and raw control characters it refuses),
except integers past 64 bits, which it would read as floats: a text with 19
digits in a row goes to the strict reader, as does everything orjson refuses,
so what is accepted, refused or recovered is decided exactly as before.
Writing: whatever orjson will not write (a lone surrogate, an integer past 64
bits, a key that is not a string, a subclass of str or int, a dataclass, a
datetime) and any output holding ``null`` (orjson writes NaN and infinities as
``null`` where the standard writer refuses them) is written again by the
standard writer.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final, TypeAlias

import orjson

from .._errors import LocalProtocolError, RemoteProtocolError
from .shared_methods import frozen

RequestId: TypeAlias = int | str

JSONRPC_VERSION: Final = "2.0"

# Standard JSON-RPC error codes.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
# MCP-specific codes.
URL_ELICITATION_REQUIRED: Final = -32042  # 2025-11-25
HEADER_MISMATCH: Final = -32020  # 2026-07-28
MISSING_CLIENT_CAPABILITY: Final = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022  # 2026-07-28
RESOURCE_NOT_FOUND_LEGACY: Final = -32002  # pre-2026 servers used this for resources/read

#: Default cap on a single JSON text: generous (tool results can be large) but finite.
DEFAULT_MAX_MESSAGE_SIZE: Final = 64 * 1024 * 1024


@frozen
class ErrorObject:
    code: int
    message: str
    data: Any = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


@frozen
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@frozen
class Notification:
    method: str
    params: dict[str, Any] | None = None


@frozen
class Response:
    id: RequestId
    result: dict[str, Any]


@frozen
class ErrorResponse:
    #: ``None`` only when the offending request's id could not be read.
    id: RequestId | None
    error: ErrorObject


Message: TypeAlias = Request | Notification | Response | ErrorResponse


@frozen
class InvalidMessage:
    """Something received that is not a valid JSON-RPC message.

    ``id`` is the request id when it could be recovered (so an error response
    can reach the right waiter); ``error`` is what to answer with.
    """

    id: RequestId | None
    error: ErrorObject
    raw: Any = None


@frozen
class ParsedPayload:
    messages: list[Message]
    invalid: list[InvalidMessage]
    is_batch: bool = False


def is_valid_id(value: object) -> bool:
    # bool is an int subclass in Python but not a JSON-RPC id.
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _invalid(id_: RequestId | None, message: str, raw: Any) -> InvalidMessage:
    return InvalidMessage(id_, ErrorObject(INVALID_REQUEST, message), raw)


def message_from_obj(obj: Any) -> Message | InvalidMessage:
    """Classify one decoded JSON value as a JSON-RPC message."""
    if not isinstance(obj, dict):
        return _invalid(None, f"a JSON-RPC message must be an object, got {type(obj).__name__}", obj)
    raw_id = obj.get("id")
    id_: RequestId | None = raw_id if is_valid_id(raw_id) else None
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        return _invalid(id_, 'missing or wrong "jsonrpc" member (must be "2.0")', obj)
    has_id = "id" in obj
    if "method" in obj:
        method = obj["method"]
        if not isinstance(method, str):
            return _invalid(id_, '"method" must be a string', obj)
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            # An array is a valid JSON-RPC params that no MCP method takes: -32602 (Invalid params).
            code = INVALID_PARAMS if isinstance(params, list) and "id" in obj else INVALID_REQUEST
            return InvalidMessage(id_, ErrorObject(code, '"params" must be an object in MCP'), obj)
        if not has_id:
            return Notification(method, params)
        if id_ is None:
            return _invalid(None, "request id must be a string or an integer (never null)", obj)
        return Request(id_, method, params)
    if "result" in obj and "error" in obj:
        return _invalid(id_, 'a response has "result" or "error", not both', obj)
    if "result" in obj:
        if id_ is None:
            return _invalid(None, "response id must be a string or an integer", obj)
        result = obj["result"]
        if not isinstance(result, dict):
            return _invalid(id_, '"result" must be an object in MCP', obj)
        return Response(id_, result)
    if "error" in obj:
        err = obj["error"]
        if (
            not isinstance(err, dict)
            or not isinstance(err.get("code"), int)
            or isinstance(err.get("code"), bool)
            or not isinstance(err.get("message"), str)
        ):
            return _invalid(id_, '"error" must be an object with integer "code" and string "message"', obj)
        if raw_id is not None and id_ is None:
            return _invalid(None, "error response id must be a string, an integer or null", obj)
        return ErrorResponse(id_, ErrorObject(err["code"], err["message"], err.get("data")))
    return _invalid(id_, 'not a request, notification or response (no "method", "result" or "error")', obj)


def _reject_constant(name: str) -> Any:
    # NaN, Infinity and -Infinity are Python extensions, not JSON.
    raise ValueError(f"{name} is not valid JSON")


def _parse_float(literal: str) -> float:
    # 1e400 is valid JSON but overflows a double to inf, which could never be
    # serialized again (allow_nan=False): refuse it at the door.
    value = float(literal)
    if math.isinf(value):
        raise ValueError(f"number {literal[:40]} is out of range")
    return value


# Built once: json.loads/json.dumps with keyword arguments construct a new decoder/encoder
# (and its C scanner) on every call.
_decode: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_parse_float).decode
#: Used only to recover ids from a text the strict reader refused (see parse_payload).
_decode_lenient: Final = json.JSONDecoder(strict=False).decode
_encode: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
#: The largest text orjson reads (see the module docstring: its transient memory).
FAST_PARSE_MAX: Final = 64 * 1024
#: The fast reader and writer (see the module docstring for when they step aside).
_fast_loads: Final = orjson.loads
_fast_dumps: Final = orjson.dumps
_FAST_PASSTHROUGH: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)
#: A run of digits that may be an integer past 64 bits (orjson would make it a float) is found
#: by mapping every digit to "1" and anything else to "0" (two passes of C, a tenth of what a
#: regular expression scan costs on a large text).
_DIGIT_MAP: Final = bytes(49 if 48 <= b <= 57 else 48 for b in range(256))
_LONG_RUN: Final = b"1" * 19


def too_large(size: int, max_size: int) -> RemoteProtocolError:
    """The error for a JSON text of ``size`` bytes over the ``max_size`` cap (fatal for the stream)."""
    return RemoteProtocolError(
        f"message of {size} bytes exceeds the {max_size}-byte limit",
        reply_hint=ErrorObject(INVALID_REQUEST, "message too large").to_wire(),
    )


def parse_payload(data: bytes | str, *, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> ParsedPayload:
    """Parse one complete JSON text into JSON-RPC messages.

    Raises ``RemoteProtocolError`` only when ``data`` is larger than ``max_size``
    (the caller should treat that as fatal for the stream); every other defect is
    reported as an ``InvalidMessage``.  What it costs at its peak: ``parse_cost``.
    """
    if len(data) > max_size:
        raise too_large(len(data), max_size)
    if len(data) <= FAST_PARSE_MAX:
        try:
            raw = data.encode("utf-8") if isinstance(data, str) else data
            if _LONG_RUN not in raw.translate(_DIGIT_MAP):
                return _payload(_fast_loads(raw))
        except (orjson.JSONDecodeError, UnicodeEncodeError):
            pass  # the strict reader decides, and recovers what can be recovered
    # Decode strictly ourselves: json.loads(bytes) would also accept UTF-16/32 and
    # (via "surrogatepass") encoded surrogates, neither of which is UTF-8.
    text: str | None = None
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        obj = _decode(text)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        # Only the message outlives this block: a JSONDecodeError holds the whole text
        # (``.doc``), and a traceback the frames that hold it.
        message, lenient = f"parse error: {exc}", _lenient_may_read(exc)
    else:
        del text  # the parsed tree is all that is needed now
        return _payload(obj)
    error = ErrorObject(PARSE_ERROR, message)
    if not lenient:
        # A syntax error (or too deep a nesting): the lenient reader would fail the same way.
        return ParsedPayload([], [InvalidMessage(None, error, data)])
    return _unparsable(data, text, error)


def _payload(obj: Any) -> ParsedPayload:
    if isinstance(obj, list):
        if not obj:
            return ParsedPayload([], [_invalid(None, "empty batch", obj)], is_batch=True)
        messages: list[Message] = []
        invalid: list[InvalidMessage] = []
        for item in obj:
            m = message_from_obj(item)
            (invalid if isinstance(m, InvalidMessage) else messages).append(m)  # type: ignore[arg-type]
        return ParsedPayload(messages, invalid, is_batch=True)
    m = message_from_obj(obj)
    if isinstance(m, InvalidMessage):
        return ParsedPayload([], [m])
    return ParsedPayload([m], [])


def _lenient_may_read(exc: BaseException) -> bool:
    """Whether the lenient reader could read what the strict one refused: invalid UTF-8,
    a raw control character in a string, NaN/Infinity, a number out of range (our hooks
    raise a plain ValueError).  Every other JSONDecodeError is a syntax error both share."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg.startswith("Invalid control character")
    return isinstance(exc, ValueError)


def _unparsable(data: bytes | str, text: str | None, error: ErrorObject) -> ParsedPayload:
    """The -32700 records of a text the strict reader refused, with every id a lenient
    reading shows (``raw`` is then that object, for what it was meant to be).  ``text`` is
    the strict decoding when there was one (it is reused, not made again)."""
    try:
        if text is None:
            text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        obj = _decode_lenient(text)
    except (ValueError, RecursionError):
        return ParsedPayload([], [InvalidMessage(None, error, data)])
    del text
    items = obj if isinstance(obj, list) else [obj]
    found = [InvalidMessage(rid, error, item) for item in items if (rid := _id_of(item)) is not None]
    if not found or len(found) < len(items):
        # What shows no id is reported once, as the text it came in.
        found.append(InvalidMessage(None, error, data))
    return ParsedPayload([], found, is_batch=isinstance(obj, list))


#: What parsing a JSON text costs at least, in copies of its size: its bytes, the text
#: decoded from them, and the strings of the parsed tree (``parse_cost``).
PARSE_COPIES: Final = 3
#: The most one JSON value takes in a parsed tree beyond its characters (its object, and
#: its slot in a list or dict, growth included), per structural character counted by
#: ``parse_cost``.  Measured (``benchmarks/body_cost.py``): ``[{},{},...]`` takes 36,
#: nested one-key dicts (``{"a":{"a":...``, every one a 184-byte dict) 89, and with
#: distinct keys 93; this is the highest plus a tenth.
_ITEM_COST: Final = 104
#: A UTF-8 byte that may begin a character past the BMP (or is invalid: U+FFFD is BMP,
#: but telling them apart is not worth a second scan).
_ASTRAL: Final = re.compile(rb"[\xf0-\xff]")
_STRUCTURAL: Final = (b",", b":", b"[", b"{")


def parse_cost(data: bytes) -> int:
    """An upper bound of the memory ``parse_payload(data)`` takes at its peak, ``data`` included.

    A str takes 1, 2 or 4 bytes per character, by its widest one: an ASCII text costs
    its size once as bytes, once as text and once as the strings parsed from it
    (``PARSE_COPIES``); one character past Latin-1 makes the text and those strings 2
    bytes a character, one past the BMP 4 (UTF-8 decoding first builds the narrow text,
    then widens it: at most the same peak).  Every JSON value also takes an object and a
    slot in its container (``[{},{},...]`` takes 24 times its size): at most ``_ITEM_COST``
    per ``,`` ``:`` ``[`` ``{`` (counted in strings too: a bound, not a guess).  The scan
    is a few passes of C over the bytes (about 10 ms for 8 MiB), no copy.  Not counted:
    about 3 KiB a parse takes whatever the size (frames, the result's records), and the
    transient of a text of at most ``FAST_PARSE_MAX`` bytes read by orjson (about 2.5 MiB
    at most, freed before the call returns; see the module docstring).
    """
    size = len(data)
    if data.isascii():
        kind = 1
    elif _ASTRAL.search(data) is None:
        kind = 2
    else:
        kind = 4
    items = 1 + sum(data.count(c) for c in _STRUCTURAL)
    return (1 + 2 * kind) * size + _ITEM_COST * items


def _id_of(obj: Any) -> RequestId | None:
    value = obj.get("id") if isinstance(obj, dict) else None
    return value if is_valid_id(value) else None


def message_to_obj(msg: Message) -> dict[str, Any]:
    """The wire form (a dict) of one message."""
    if isinstance(msg, Request):
        out: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "id": msg.id, "method": msg.method}
        if msg.params is not None:
            out["params"] = msg.params
        return out
    if isinstance(msg, Notification):
        out = {"jsonrpc": JSONRPC_VERSION, "method": msg.method}
        if msg.params is not None:
            out["params"] = msg.params
        return out
    if isinstance(msg, Response):
        return {"jsonrpc": JSONRPC_VERSION, "id": msg.id, "result": msg.result}
    if isinstance(msg, ErrorResponse):
        return {"jsonrpc": JSONRPC_VERSION, "id": msg.id, "error": msg.error.to_wire()}
    raise LocalProtocolError(f"not a JSON-RPC message: {msg!r}")


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON; never contains a raw newline (json escapes them in strings)."""
    try:
        out: bytes = _fast_dumps(obj, option=_FAST_PASSTHROUGH)
    except TypeError:  # orjson.JSONEncodeError: the standard writer decides
        pass
    else:
        if b"null" not in out:  # (orjson writes NaN as null: let the standard writer refuse it)
            return out
    text = _encode(obj)
    # A lone surrogate (legal as a JSON escape, so it can arrive from a peer) cannot be
    # UTF-8 encoded; it can only sit inside a JSON string, where "\udXXX" is its escape.
    return text.encode("utf-8", "backslashreplace")


def serialize(msg: Message | list[Message]) -> bytes:
    """One JSON text for a message, or for a batch when given a list."""
    if isinstance(msg, list):
        return dumps([message_to_obj(m) for m in msg])
    return dumps(message_to_obj(msg))
