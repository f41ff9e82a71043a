"""The wire-parser fuzz targets (fuzz/targets_wire.py): hypothesis, seed corpus, nasty inputs.

Each target catches the errors its module documents, so any exception here is
a finding.  Findings fixed in the modules have their regression tests at the
end; ``fuzz/run.py``'s smoke mode is checked on a target that crashes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import REPO

from fuzz import run as fuzz_run
from fuzz.targets import TARGETS
from fuzz.targets_wire import TARGETS as WIRE
from trimcp._sansio.framing.sse import SSEDecoder
from trimcp._sansio.http.client.plan import HttpPlanner

ROOT = REPO
CORPUS = ROOT / "fuzz" / "corpus"

# ------------------------------------------------------------------ inputs

_SSE_LINE = st.sampled_from(
    [
        b'data: {"jsonrpc":"2.0","id":1,"result":{}}',
        b"data:",
        b"data",
        b"event: endpoint",
        b"event: message",
        b"event:",
        b"id: 7",
        b"id",
        b"id: a\x00b",
        b"retry: 3000",
        b"retry: x",
        b"retry: 0001",
        b": ping",
        b":",
        b"\xef\xbb\xbf",
        b"data: \xff\xfe",
        b"data: " + b"x" * 300,
        b"field: v",
        b"",
        b" data: x",
    ]
) | st.binary(max_size=12)
_SSE = st.lists(st.tuples(_SSE_LINE, st.sampled_from([b"\n", b"\r\n", b"\r"])), max_size=12).map(
    lambda lines: b"".join(a + b for a, b in lines)
)

_CHALLENGE = st.text(
    alphabet=st.sampled_from(
        list("Bearer Basic realm=scope error \"\\,= \t'token68/+~") + ["\u00e9", "\x00", "\r", "\n"]
    ),
    max_size=80,
)

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["type", "properties", "x-mcp-header", "items", "oneOf", "tools", "name", "inputSchema", "$defs"]
            )
            | st.text(max_size=4),
            inner,
            max_size=4,
        )
    ),
    max_leaves=16,
)

STRATEGIES: dict[str, st.SearchStrategy[bytes]] = {
    "sse": _SSE | st.binary(max_size=400),
    "http_response": st.binary(max_size=400)
    | st.tuples(st.binary(min_size=8, max_size=8), _SSE).map(lambda t: t[0][:7] + bytes([2]) + t[1]),
    "http_plan": st.binary(max_size=300),
    "www_authenticate": _CHALLENGE.map(lambda t: t.encode("utf-8", "surrogatepass")) | st.binary(max_size=200),
    "headers": _JSON.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=200)
    | st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")),
}

NASTY: list[bytes] = [
    b"",
    b"\n",
    b"\r",
    b"\r\n\r\n",
    b"\x00" * 64,
    b"\xff" * 64,
    b"\xef\xbb",
    b"\xef\xbb\xbf",
    b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n",
    b"data: x\r",
    b"data: x\r\r",
    b"data: x\r\n",
    b"data: x\n\n\n",
    b"data:" + b"a" * 300 + b"\n\n",
    b":" + b"c" * 1000 + b"\n",
    b"id: \xed\xa0\x80\ndata: x\n\n",
    b"retry: " + b"9" * 40 + b"\n\n",
    b"retry: \xd9\xa3\n\n",
    b"event: endpoint\ndata: http://evil.example/x\n\n",
    b"event: endpoint\ndata: //evil/x\n\n",
    b"event: endpoint\ndata: /m?x y#frag\n\n",
    b'Bearer realm="',
    b'Bearer realm="a\\',
    b"Bearer ====",
    b"Bearer a=",
    b"Bearer a==, b",
    b'Bearer , , realm="x",,,scope=a',
    b"=x",
    b",,,",
    b"Bearer\tx=y",
    b"B\x00 x=y",
    b'Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"',
    b"=?base64?",
    b"=?base64??=",
    b"=?base64?@@@@?=",
    b"=?base64?7f8=?=",
    b"=?base64?7aCA?=",
    b" x ",
    b"\tx",
    "\u00e9\u20ac\U0001f600".encode(),
    b'{"type":"object","properties":{"a":{"x-mcp-header":"A"},"b":{"x-mcp-header":"a"}}}',
    b'{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}',
    b'{"x-mcp-header":"Root"}',
    b'{"properties":{"a":{"x-mcp-header":""}}}',
    b'{"properties":{"a":{"x-mcp-header":5}}}',
    b'{"items":{"x-mcp-header":"I"}}',
    b'{"tools":[1,{"name":"t","inputSchema":{"properties":{"a":{"x-mcp-header":"A b"}}}}]}',
    b'{"properties":' * 80 + b"{}" + b"}" * 80,
    b"[" * 5000,
    bytes(range(256)),
    bytes([1, 0, 0, 0, 0, 0, 0, 0]) + b"\x05\xc3\xa9\x01abc" * 4,
]


def _corpus(name: str) -> list[Path]:
    return sorted((CORPUS / name).iterdir())


def test_registered_in_targets() -> None:
    assert set(WIRE) <= set(TARGETS) and set(WIRE) == set(STRATEGIES)
    for name in WIRE:
        assert TARGETS[name] is WIRE[name]
        assert len(_corpus(name)) >= 4, name


@pytest.mark.parametrize(
    ("name", "path"),
    [(n, p) for n in sorted(WIRE) for p in _corpus(n)],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_seed_corpus(name: str, path: Path) -> None:
    WIRE[name](path.read_bytes())


@pytest.mark.parametrize("name", sorted(WIRE))
@pytest.mark.parametrize("seed", NASTY, ids=range(len(NASTY)))
def test_nasty(name: str, seed: bytes) -> None:
    WIRE[name](seed)


def _hypothesis(name: str) -> Callable[[], None]:
    @settings(
        max_examples=200,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(STRATEGIES[name])
    def run(data: bytes) -> None:
        WIRE[name](data)

    return run


test_fuzz_sse = _hypothesis("sse")
test_fuzz_http_response = _hypothesis("http_response")
test_fuzz_http_plan = _hypothesis("http_plan")
test_fuzz_www_authenticate = _hypothesis("www_authenticate")
test_fuzz_headers = _hypothesis("headers")


# ------------------------------------------------------------------ regressions


@pytest.mark.parametrize("last_id", ["\u00e9t\u00e9", "a\x01b", "a\x7f", " lead", "trail\t", "\ufffd"])
def test_plan_get_leaves_out_a_last_event_id_that_is_no_header_value(last_id: str) -> None:
    # Found by http_plan: the server's SSE ``id`` text (anything but CR, LF, NUL) went
    # into Last-Event-ID as it was, which the HTTP writer then refused mid-reconnect.
    decoder = SSEDecoder()
    decoder.feed(f"id: {last_id}\ndata: x\n\n".encode())
    assert decoder.last_event_id == last_id
    request = HttpPlanner("http://127.0.0.1:1/mcp").plan_get(decoder.last_event_id)
    assert request.header("Last-Event-ID") is None


def test_plan_get_keeps_a_plain_last_event_id() -> None:
    request = HttpPlanner("http://127.0.0.1:1/mcp").plan_get("stream-1/ev 42")
    assert request.header("Last-Event-ID") == "stream-1/ev 42"


# ------------------------------------------------------------------ the runner


def test_smoke_reports_a_crash_and_counts_inputs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def crashes(data: bytes) -> None:
        if b"\x00" in data:
            raise ValueError("boom")

    monkeypatch.setattr(fuzz_run, "_targets", lambda: {"fine": lambda data: None, "crashes": crashes})
    assert fuzz_run.smoke(0.4, "hypothesis") == 1
    out = capsys.readouterr().out
    assert "--- crashes: crash" in out and "ValueError: boom" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[1:2] == ["hypothesis"]}
    assert rows["fine"][3] == "0" and int(rows["fine"][2]) >= 100
    assert rows["crashes"][3] == "1"


def test_smoke_passes_when_nothing_crashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz_run, "_targets", lambda: {"fine": lambda data: None})
    assert fuzz_run.smoke(0.1, "hypothesis") == 0


def test_resolve_endpoint_refuses_a_url_urllib_cannot_split() -> None:
    # Found by http_plan: urljoin's ValueError ("Invalid IPv6 URL") escaped.
    from trimcp import RemoteProtocolError
    from trimcp._sansio.http.client.plan import resolve_endpoint

    with pytest.raises(RemoteProtocolError):
        resolve_endpoint("http://127.0.0.1:1/sse", "https://\x06]x")


@pytest.mark.parametrize("status", [200, 500])
def test_reader_with_a_small_cap_takes_a_big_non_json_body(status: int) -> None:
    # Found by http_response: with max_message_size below MAX_ERROR_BODY, end() let
    # parse_payload's RemoteProtocolError escape for a large text/plain or error body.
    from trimcp._sansio.http.client import response as hr

    reader = hr.ResponseReader(hr.Purpose.POST, answer_id=1, expects_answer=True, max_message_size=64)
    reader.head(status, [("content-type", "text/plain")])
    reader.data(b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"y" * 200 + b'"}}')
    events = reader.end()
    assert isinstance(events[-1], hr.StreamFailed)
