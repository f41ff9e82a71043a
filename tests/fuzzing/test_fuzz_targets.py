"""The fuzz targets in fuzz/targets.py, run briefly under hypothesis and on nasty seeds.

Each target raises only its documented exceptions (oversize -> RemoteProtocolError,
schema -> SchemaError, both caught inside the targets); so here any exception fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.targets import TARGETS

NASTY: list[bytes] = [
    b"",
    b"\n",
    b"\r\n\r\n",
    b"[" * 100_000,
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 5000 + b"1" + b"}" * 5000,
    b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"result":{}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"x":1' + b"0" * 400 + b"}}",
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":"\\udfff\\ud800","result":{}}',
    b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"\\ud800"}}',
    b'{"jsonrpc":"2.0","id":1,"result":NaN}',
    b'{"jsonrpc":"2.0","id":1,"result":{"v":Infinity}}',
    b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"),
    '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16-le"),
    '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-32"),
    b"\xed\xa0\x80",  # an encoded surrogate: not UTF-8
    b"\xff\xfe\x00",
    b"[]",
    b"[[]]",
    b"[1,2,3]",
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"},7]',
    b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]',
    b'[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}]',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
    b'{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}',
    b'{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"x"}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1e400}}',
    (
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":-1}}\n'
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":-2}}'
    ),
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}',
    b'{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"nope"}}',
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":[1]}}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":1}]}}\n{"jsonrpc":"2.0","id":2,"result":{}}',
    b'{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text"}]}}',
    b'{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}',
    b'{"content":[{"type":"text","text":"hi"},{"type":"image","data":1}],"isError":"yes"}',
    b'{"type":"resource","resource":{"uri":"x","text":"y","blob":"z"}}',
    b'{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":1e3}',
    b'{"tools":[{"name":"x","inputSchema":{"type":"object"},"icons":[{"src":5}]}],"nextCursor":null}',
    b'{"_meta":{"x":1},"contents":[]}',
    b"x" * 3000,
    b"a" * 65 + b"\n" + b"b" * 64 + b"\r\n",
    b"a" * 64 + b"\r",
    b" \t\x0b\x0c\r\n  \n",
]


#: Known findings: (target, seed) pairs that fail today, kept as strict xfails so
#: fixing the library turns them into failures to be removed from this table.
#: (Empty: 1e400 parsing to an unserializable inf was one; the parser now refuses it.)
KNOWN: dict[tuple[str, bytes], type[BaseException]] = {}


def _seed_params() -> list[object]:
    out: list[object] = []
    for name in sorted(TARGETS):
        for i, seed in enumerate(NASTY):
            raises = KNOWN.get((name, seed))
            marks = [pytest.mark.xfail(strict=True, raises=raises, reason="known finding")] if raises else []
            out.append(pytest.param(name, seed, id=f"{name}-{i}", marks=marks))
    return out


@pytest.mark.parametrize(("name", "seed"), _seed_params())
def test_nasty_seed(name: str, seed: bytes) -> None:
    TARGETS[name](seed)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "jsonrpc",
                    "id",
                    "method",
                    "params",
                    "result",
                    "error",
                    "code",
                    "message",
                    "name",
                    "type",
                    "text",
                    "content",
                    "tools",
                    "uri",
                    "progressToken",
                    "progress",
                ]
            )
            | st.text(),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)
_MESSAGE = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={
        "id": st.integers(-2, 4) | st.text(max_size=3) | st.none(),
        "method": st.sampled_from(
            [
                "ping",
                "tools/list",
                "tools/call",
                "initialize",
                "roots/list",
                "notifications/cancelled",
                "notifications/progress",
                "notifications/initialized",
                "logging/setLevel",
            ]
        ),
        "params": _JSON,
        "result": _JSON,
        "error": _JSON,
    },
)
INPUTS = (
    st.binary(max_size=512)
    | _JSON.map(lambda v: json.dumps(v).encode())
    | st.lists(_MESSAGE, min_size=1, max_size=4).map(lambda ms: b"\n".join(json.dumps(m).encode() for m in ms))
    | st.lists(_MESSAGE, min_size=1, max_size=4).map(lambda ms: json.dumps(ms).encode())
    | st.text().map(lambda t: t.encode("utf-8", "surrogatepass"))
)


def _run(target: Callable[[bytes], None]) -> Callable[[], None]:
    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(INPUTS)
    def run(data: bytes) -> None:
        target(data)

    return run


test_fuzz_parse_payload = _run(TARGETS["parse_payload"])
test_fuzz_line_decoder = _run(TARGETS["line_decoder"])
test_fuzz_connection = _run(TARGETS["connection"])
test_fuzz_schema = _run(TARGETS["schema"])
