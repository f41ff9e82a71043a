"""The host-side fuzz targets (fuzz/targets_host.py): hypothesis, the seed corpus, nasty inputs,
and the findings the campaigns made, as regression tests.

Each target catches the errors its module documents; any exception here is a finding.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import REPO

from fuzz.targets import TARGETS as ALL_TARGETS
from fuzz.targets_host import TARGETS
from trimcp._sansio.auth import discovery, flow
from trimcp._sansio.host.shrink import shrink_text
from trimcp._sansio.host.truncation import estimate_tokens, plan_truncation, truncate_result
from trimcp.config import parse_config

CORPUS = REPO / "fuzz" / "corpus"

DEEP = b"[" * 100_000
NESTED = b'{"a":' * 5000 + b"1" + b"}" * 5000

#: Inputs every target gets: empty, not UTF-8, nested past the stack, NaN, huge numbers.
COMMON: list[bytes] = [
    b"",
    b"\n",
    b"\xff\xfe\x00",
    b"\xed\xa0\x80",
    b"\xef\xbb\xbf{}",
    DEEP,
    NESTED,
    b"[]",
    b"null",
    b'"\\ud800"',
    b"NaN",
    b"[1e400]",
    b"9" * 5000,
    b'{"a":' + b"9" * 5000 + b"}",
    b"{" * 3 + b"\x00" * 300,
    bytes(range(256)),
]

NASTY: dict[str, list[bytes]] = {
    "oauth_metadata": [
        b'{"resource":"http://[","authorization_servers":["http://h:99999"]}',
        b'{"resource":"https://mcp.example.com:99999/","authorization_servers":["http://[::1"]}',
        b'{"issuer":null,"code_challenge_methods_supported":{"S256":1}}',
        b'{"issuer":["https://as.example.com"],"code_challenge_methods_supported":"S256"}',
        b'{"token_endpoint_auth_methods_supported":[],"registration_endpoint":""}',
        b'{"token_endpoint_auth_methods_supported":[null,7],"scopes_supported":[1,null,{}]}',
        b'{"client_id_metadata_document_supported":1,"registration_endpoint":"x"}',
        b'{"resource":"","resource_metadata":"","authorization_servers":[""]}',
        b'{"resource":"HTTPS://MCP.EXAMPLE.COM:443/mcp/","authorization_servers":["https://as.example.com/"]}',
        b'{"resource":"https://mcp.example.com/mcp\\ud800","issuer":"\\udfff"}',
    ],
    "token_response": [
        b'{"access_token":"x","token_type":"Bearer","expires_in":1e308}',
        b'{"access_token":"x","expires_in":' + b"9" * 400 + b"}",
        b'{"access_token":"x","expires_in":' + b"9" * 5000 + b"}",
        b'{"access_token":"x","expires_in":true,"refresh_token":5,"scope":[]}',
        b'{"access_token":"","token_type":"Bearer"}',
        b'{"access_token":"x","token_type":null}',
        b'{"error":null,"access_token":"x","token_type":"bEaReR"}',
        b'{"error":{"x":1},"error_description":["y"]}',
        b'{"error":"","access_token":"x"}',
        b'{"access_token":"x","expires_in":-1e308}',
        b"\x00" + DEEP,
        b'\x01{"access_token":"s3cr3t"}',
    ],
    "uri_template": [
        b"{",
        b"}",
        b"{}",
        b"{a}{a}",
        b"{a}\n\xed\xa0\x80",
        b"x{a}y\nx%y\nxy\nx/y",
        b"{a.b}\nq",
        b"{\xff}",
        b"{a}\n" + b"%" * 1000,
        b"{a}\n%zz%41",
        b"a}b{x}\na}bq",
        b"{{x}\n{y",
        b"{a}{b}\n%%%",
        b"{+x}",
        b"{?q}",
        b"{a,b}",
        b"{a}\n\n\n",
        b"http://x/{id}\nhttp://x/%ff%fe",
        b"{" + b"a" * 5000 + b"}\n" + b"b" * 5000,
        b"{a}" * 100 + b"\n" + b"x" * 100,
        b"f:///d/{n}\n..%2F..%2Fetc%2Fh\n%2Fetc\na%00b\n%2e%2E\n..%5Cx\n%C2%85\n..\n.\n...",
        b"x://{a}{b}{c}{d}/z\n" + b"x://" + b"a" * 20_000 + b"/y",
        b"{a}{b}\na.\n.",
    ],
    "url_policy": [
        b"\x00" * 64,
        b"\xff" * 64,
        bytes(range(64)) * 4,
        b"\x01\x02" * 500,
        b"\x07" + b"%" * 2000,
        b"\x03" + b"\x05\x1a\x02" * 50,
        b"\x08" + b"\xff\x00" * 300,
    ],
    "config": [
        b'\xef\xbb\xbf{"mcpServers":{}}',
        b'{"mcpServers":[]}',
        b'{"servers":{"a":{"url":"ws://x","heartbeat":{"intervalMs":0}}}}',
        b'{"mcpServers":{"a":{"url":"http://x","oauth":{"callbackPort":"99999999999"}}}}',
        b'{"mcpServers":{"a":{"url":"http://x","oauth":{"callbackPort":"' + b"9" * 5000 + b'"}}}}',
        '{"mcpServers":{"a":{"url":"http://x","oauth":{"callbackPort":"\u00b2"}}}}'.encode(),
        '{"mcpServers":{"a":{"url":"http://x","oauth":{"callbackPort":"\u0661\u0662"}}}}'.encode(),
        b'{"mcpServers":{"a":{"command":"x","args":["${","${A:-}","${env:}"]}}}',
        b'{"mcpServers":{"a":{"command":"x","shutdown":{"graceMs":1e400}}}}',
        b'{"mcpServers":{"a":{"command":"x","shutdown":{"graceMs":NaN}}}}',
        b'{"mcpServers":{"a":{"command":"x","heartbeat":{"timeoutMs":5}}}}',
        b'{"mcpServers":{"a":{"command":"x"},"a":{"url":"y"}}}',
        b"/* unterminated",
        b'{"servers": {"a": {"command": "x" // c\n,},},}',
        b'"//\\"',
        b'{"a":"\\',
        b'{"mcpServers":{"a":{"url":"http://x","headers":{"A":"\\ud800"}}}}',
    ],
    "elicitation": [
        b'{"requestedSchema":{"type":"object","properties":{"":{"type":"string"}},"required":[""]},"content":{"":"x"}}',
        b'{"requestedSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"content":{"n":"'
        + b"9" * 5000
        + b'"}}',
        b'{"requestedSchema":{"type":"object","properties":{"n":{"type":"number"}}},"content":{"n":"'
        + b"9" * 400
        + b'"}}',
        b'{"requestedSchema":{"type":"object","properties":{"n":{"type":"number","minimum":1e308}}},"content":{"n":1e308}}',
        b'{"requestedSchema":{"type":"object","properties":{"m":{"type":"array","items":{"enum":["a","a"]},'
        + b'"maxItems":1}}},"content":{"m":["a","A","a"]}}',
        b'{"requestedSchema":{"type":"object","properties":{"e":{"type":"string","enum":["a","b"],"enumNames":["b","a"]}}},'
        + b'"content":{"e":"B"}}',
        b'{"requestedSchema":{"type":"object","properties":{"d":{"type":"string","format":"date","default":"2026-02-30"}}},'
        + b'"content":{}}',
        b'{"requestedSchema":{"type":"object","properties":{"t":{"type":"string","format":"date-time"}}},'
        + b'"content":{"t":"2026-12-01t18:00:00z"}}',
        b'{"requestedSchema":{"type":"object","properties":{"t":{"type":"string","format":"date-time","maxLength":3}}},'
        + b'"content":{"t":"tomorrow"}}',
        b'{"requestedSchema":{"type":"object","properties":{"b":{"type":"boolean","default":"yes"}}},"content":null}',
        b'{"requestedSchema":{"type":"object","properties":[],"required":{}},"content":[]}',
        b'{"requestedSchema":{"type":"object","properties":{"s":{"type":"string","pattern":"\\\\"}}},"content":{"s":"x"}}',
    ],
    "truncation": [
        json.dumps({"content": [{"type": "text", "text": DEEP.decode()}]}).encode(),
        json.dumps({"content": [{"type": "text", "text": "[" + "1e400," * 300 + "1]"}]}).encode(),
        json.dumps({"content": [], "structuredContent": {"a": json.loads("[" * 400 + "]" * 400)}}).encode(),
        json.dumps({"content": [{"type": "image", "data": "A" * 9000, "mimeType": "image/png"}] * 30}).encode(),
        json.dumps(
            {"content": [{"type": "text", "text": "a,b\n" * 3000}, {"type": "audio", "data": "B" * 99}]}
        ).encode(),
        json.dumps({"content": [{"type": "text", "text": "|x|\n|---|\n" + "|1|\n" * 3000}]}).encode(),
        json.dumps({"content": [{"type": "text", "text": "\ud800" * 20000}]}).encode(),
        json.dumps(
            {"content": [{"type": "text", "text": "x" * 100_000}], "structuredContent": {"k": "v" * 99_999}}
        ).encode(),
        json.dumps({"content": [{"type": "resource", "resource": {"uri": "u", "text": "{" * 9000}}]}).encode(),
        json.dumps({"content": [{"type": "text", "text": "[" + ",".join(['"\\u00e9"'] * 5000) + "]"}]}).encode(),
    ],
}


def test_registered_in_fuzz_targets() -> None:
    for name, target in TARGETS.items():
        assert ALL_TARGETS[name] is target


def _seed_params() -> list[object]:
    out: list[object] = []
    for name in sorted(TARGETS):
        for i, data in enumerate([*COMMON, *NASTY[name]]):
            out.append(pytest.param(name, data, id=f"{name}-nasty{i}"))
        files = sorted((CORPUS / name).iterdir())
        assert len(files) >= 4, name
        out.extend(pytest.param(name, f.read_bytes(), id=f"{name}-{f.name}") for f in files)
    return out


@pytest.mark.parametrize(("name", "data"), _seed_params())
def test_seed(name: str, data: bytes) -> None:
    TARGETS[name](data)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)


def _inputs(name: str) -> st.SearchStrategy[bytes]:
    """Random bytes (the target builds a document from them), JSON, and mutated seeds."""
    seeds = [f.read_bytes() for f in sorted((CORPUS / name).iterdir())]

    def mutate(seed: bytes, at: int, junk: bytes) -> bytes:
        at %= len(seed) + 1
        return seed[:at] + junk + seed[at + len(junk) :]

    return (
        st.binary(max_size=400)
        | _JSON.map(lambda v: json.dumps(v).encode())
        | st.builds(mutate, st.sampled_from(seeds), st.integers(0, 20_000), st.binary(min_size=1, max_size=6))
    )


def _run(name: str) -> object:
    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_inputs(name))
    def run(data: bytes) -> None:
        TARGETS[name](data)

    return run


test_fuzz_oauth_metadata = _run("oauth_metadata")
test_fuzz_token_response = _run("token_response")
test_fuzz_uri_template = _run("uri_template")
test_fuzz_config = _run("config")
test_fuzz_elicitation = _run("elicitation")
test_fuzz_truncation = _run("truncation")


# ------------------------------------------------------------------ findings (fixed)


def test_token_response_nested_past_the_stack_is_an_oauth_error() -> None:
    # Found by token_response: json.loads raised RecursionError through parse_token_response.
    with pytest.raises(flow.OAuthError) as info:
        flow.parse_token_response(200, DEEP, now=0.0)
    assert info.value.error == "invalid_response"


@pytest.mark.parametrize("resource", ["http://[", "https://mcp.example.com:99999/mcp", "http://h:abc/"])
def test_prm_resource_that_is_no_url_matches_nothing(resource: str) -> None:
    # Found by oauth_metadata: a server's PRM "resource" with a bad port raised ValueError.
    assert discovery.resource_matches(resource, "https://mcp.example.com/mcp") is False


def test_authorization_server_that_is_no_url_is_a_discovery_error() -> None:
    # Found by oauth_metadata: authorization_servers[0] = "http://[::1" raised ValueError.
    with pytest.raises(discovery.DiscoveryError, match="not a URL"):
        discovery.as_metadata_urls("http://[::1")


@pytest.mark.parametrize("port", ["\u00b2", "9" * 5000, "\u0661\u0662"])
def test_callback_port_of_odd_digits_is_a_config_error(port: str) -> None:
    # Found by config: "²".isdigit() is true but int("²") raises; so did a 5000-digit port.
    config = parse_config(
        {"mcpServers": {"a": {"url": "http://x", "oauth": {"callbackPort": port}}, "b": {"command": "ok"}}}
    )
    assert "callbackPort" in str(config.errors["a"]) and set(config.servers) == {"b"}


def test_shrink_text_nested_past_the_stack_is_cut_as_text() -> None:
    # Found by truncation: shrink_text's json.loads raised RecursionError.
    cut = shrink_text(DEEP.decode(), 100)
    assert len(cut) <= 100 and cut.startswith("[[[")


def test_shrink_text_keeps_json_valid_past_float_range() -> None:
    # Found by truncation: 1e400 parsed as inf and came out as the non-JSON Infinity.
    text = "[" + "1e400," * 100 + "1]"
    cut = shrink_text(text, 50)
    assert len(cut) <= 50 and "Infinity" not in cut


def test_cut_fits_a_denser_counter_notice_included() -> None:
    # Found by truncation: the budget scaled the reserved notice down with the text, so a
    # counter denser than the estimate counted the result over the limit.
    def counter(text: str) -> int:
        return len(text) // 3 + 1

    rows = [{"row": i, "value": "x" * 10} for i in range(200)]
    result = {"content": [], "structuredContent": {"rows": rows}}
    out = truncate_result(result, max_tokens=200, counter=counter)
    assert out is not result
    assert counter(plan_truncation(out, max_tokens=200).count_input()) <= 200


# ------------------------------------------------------------------ findings (open)


def test_placeholders_and_notice_fit_a_small_limit() -> None:
    # Found by the fuzzer: near the 64-token minimum one placeholder per dropped block and
    # the whole notice alone exceeded the limit.  Now the notice's second sentence goes,
    # then the path, until the notice fits; the placeholders take what room is left, and
    # the two blocks alike share one line.
    result = {"content": [{"type": "audio", "data": "B" * 4000, "mimeType": "audio/wav"}] * 2}
    out = truncate_result(result, max_tokens=80)
    assert estimate_tokens(out) <= 80
    line, notice = out["content"]
    assert line["text"].startswith("[2 audio blocks (audio/wav, about 6000 bytes in all) omitted")
    assert notice["text"].startswith("[OUTPUT TRUNCATED - exceeded 80 token limit]")
    assert "Left out: 2 content blocks." in notice["text"]
    # Six alike are one line too, even at the smallest limit.
    smallest = truncate_result({"content": result["content"] * 3}, max_tokens=64)
    assert estimate_tokens(smallest) <= 64
    assert [b["text"][:16] for b in smallest["content"]] == ["[6 audio blocks ", "[OUTPUT TRUNCATE"]
    # With room, each dropped block keeps its placeholder and the notice is whole.
    roomy = truncate_result(
        {"content": [{"type": "audio", "data": "B" * 40_000, "mimeType": "audio/wav"}]}, max_tokens=400
    )
    assert [b["text"][:7] for b in roomy["content"]] == ["[audio ", "[OUTPUT"]
    assert "pagination" in roomy["content"][-1]["text"] and estimate_tokens(roomy) <= 400


@pytest.mark.parametrize("limit", [64, 65, 80, 100])
def test_the_framing_fits_the_smallest_limits_with_a_dense_counter(limit: int) -> None:
    blocks = [{"type": "audio", "data": "B" * 4000, "mimeType": "audio/wav"}] * 4
    result = {"content": [*blocks, {"type": "text", "text": "word " * 2000}]}
    path = "/var/tmp/" + "p" * 120 + ".json"

    def counter(text: str) -> int:
        return len(text) // 3 + 1

    out = truncate_result(result, max_tokens=limit, counter=counter, full_output_path=path)
    notice = out["content"][-1]["text"]
    assert counter(plan_truncation(out, max_tokens=64).count_input()) <= limit
    assert notice.startswith(f"[OUTPUT TRUNCATED - exceeded {limit} token limit]")
    # Every block is either kept (only the text can be, cut) or counted as left out.
    kept = [b for b in out["content"][:-1] if b["type"] == "text" and b["text"].startswith("word")]
    assert f"Left out: {5 - len(kept)} content blocks." in notice
