"""The JSON-RPC codec's fast path (orjson) reads and writes exactly what the standard reader and writer do.

``parse_payload`` and ``dumps`` try orjson first and let the standard library decide everything
orjson refuses or might read differently (``_sansio/jsonrpc.py``).  Each case here is run twice,
once as shipped and once with the fast path switched off, and the two must agree: same messages,
same refusals, same bytes.
"""

from __future__ import annotations

import gc
import math
import tracemalloc
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp._sansio import jsonrpc as rpc


def _refuse(*_args: Any, **_kw: Any) -> Any:
    raise orjson.JSONDecodeError("fast path off", "", 0)


def _refuse_dumps(*_args: Any, **_kw: Any) -> Any:
    raise orjson.JSONEncodeError("fast path off")


def _both(monkeypatch: pytest.MonkeyPatch, data: bytes | str) -> tuple[Any, Any]:
    fast = rpc.parse_payload(data)
    with monkeypatch.context() as m:
        m.setattr(rpc, "_fast_loads", _refuse)
        strict = rpc.parse_payload(data)
    return fast, strict


def _same(a: Any, b: Any) -> bool:
    """Equal, floats compared by their bits (so -0.0 differs from 0.0) and ints kept apart from floats."""
    if isinstance(a, float) or isinstance(b, float):
        return type(a) is type(b) and math.copysign(1, a) == math.copysign(1, b) and a == b
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return type(b) is list and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _result_of(payload: rpc.ParsedPayload) -> Any:
    return [(type(m).__name__, rpc.message_to_obj(m)) for m in payload.messages], [
        (i.id, i.error.code) for i in payload.invalid
    ]


TRICKY = [
    b'{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}',  # duplicate key: the last wins
    b'{"jsonrpc":"2.0","id":1,"result":{"n":123456789012345678901234567890}}',  # past 64 bits
    b'{"jsonrpc":"2.0","id":1,"result":{"n":-9223372036854775809}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"n":18446744073709551615}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"n":1e400}}',  # overflows a double
    b'{"jsonrpc":"2.0","id":1,"result":{"n":NaN}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"n":-Infinity}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"s":"\\ud800"}}',  # a lone surrogate escape
    b'{"jsonrpc":"2.0","id":1,"result":{"s":"a\x01b"}}',  # a raw control character
    b'{"jsonrpc":"2.0","id":1,"result":{"s":"\xff"}}',  # invalid UTF-8
    b'{"jsonrpc":"2.0","id":1,"result":{"f":-0.0,"g":1.5e-400,"h":0.1,"i":1E2}}',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"result":{}}',  # a byte order mark
    b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":NaN}]',
    b"[" * 1100 + b"]" * 1100,
    b'{"jsonrpc":"2.0","id":1,"result":{}} x',
    b"",
]


@pytest.mark.parametrize("data", TRICKY)
def test_tricky_texts_read_as_the_strict_reader_reads_them(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    fast, strict = _both(monkeypatch, data)
    assert _result_of(fast) == _result_of(strict)
    assert all(_same(a[1], b[1]) for a, b in zip(_result_of(fast)[0], _result_of(strict)[0]))
    assert fast.is_batch == strict.is_batch


def test_a_big_integer_stays_an_integer() -> None:
    payload = rpc.parse_payload(b'{"jsonrpc":"2.0","id":1,"result":{"n":123456789012345678901234567890}}')
    assert payload.messages[0].result == {"n": 123456789012345678901234567890}  # type: ignore[union-attr]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_writing_agrees_with_the_standard_writer(value: Any) -> None:
    try:
        fast: bytes | type[BaseException] = rpc.dumps(value)
    except ValueError:
        fast = ValueError
    original = rpc._fast_dumps
    rpc._fast_dumps = _refuse_dumps  # type: ignore[misc]
    try:
        try:
            strict: bytes | type[BaseException] = rpc.dumps(value)
        except ValueError:
            strict = ValueError
    finally:
        rpc._fast_dumps = original  # type: ignore[misc]
    if isinstance(fast, bytes) and isinstance(strict, bytes):
        # orjson may escape differently; what both texts mean must be the same.
        assert _same(_loads_back(fast), _loads_back(strict))
    else:
        assert fast == strict


def _loads_back(data: bytes) -> Any:
    payload = rpc.parse_payload(b'{"jsonrpc":"2.0","id":1,"result":{"v":' + data + b"}}")
    assert payload.messages, payload.invalid
    return payload.messages[0].result["v"]  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_reading_what_was_written_agrees(value: Any) -> None:
    try:
        body = rpc.dumps({"jsonrpc": "2.0", "id": 1, "result": {"v": value}})
    except ValueError:
        return  # NaN and infinities are refused on the way out
    fast = rpc.parse_payload(body)
    original = rpc._fast_loads
    rpc._fast_loads = _refuse  # type: ignore[misc]
    try:
        strict = rpc.parse_payload(body)
    finally:
        rpc._fast_loads = original  # type: ignore[misc]
    assert _result_of(fast)[1] == _result_of(strict)[1]
    assert all(_same(a[1], b[1]) for a, b in zip(_result_of(fast)[0], _result_of(strict)[0]))


@pytest.mark.parametrize("size", [rpc.FAST_PARSE_MAX, rpc.FAST_PARSE_MAX + 1, 4 * 1024 * 1024])
def test_what_a_parse_takes_at_its_peak(size: int) -> None:
    """Past ``FAST_PARSE_MAX`` the peak stays within ``parse_cost`` (the body budget counts on
    it); up to it, orjson's transient stays within 40 times the text."""
    head, tail = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"', b'"}}'
    data = head + b"a" * (size - len(head) - len(tail)) + tail
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        payload = rpc.parse_payload(data)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert payload.messages
    if size > rpc.FAST_PARSE_MAX:
        assert peak <= rpc.parse_cost(data)
    else:
        assert peak <= 40 * size
