"""A hostile client against a server's resource templates (issue 26, row 4).

A template variable reaches a handler as one decoded path segment or not at all: an encoded
``/`` or ``\\``, a ``..`` and a control character are refused with -32602 before the handler
runs.  The naive handler here joins the value onto its root and reads the file, as a real one
would; on a matcher that decodes ``%2F`` it reads outside the root.  Matching is linear in the
URI however many variables share a segment.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio

from trimcp._errors import McpError
from trimcp.server import Context, Server
from trimcp.server._uritemplate import UnsafeVariable, UriTemplate, unsafe_reason
from trimcp.testing import connect

HOSTILE = [
    "..%2F..%2Fetc%2Fhostname",
    "%2Fetc%2Fhostname",
    "a%00b",
    "..",
    "%2E%2E",
    "..%5C..%5Cetc%5Chostname",
    "a%0Ab",
    "%7F",
    "%C2%85",
]


def _docs_server(root: Path, calls: list[str]) -> Server:
    server = Server("docs", "1")

    @server.resource_template("file:///srv/docs/{name}")
    async def doc(ctx: Context, name: str) -> str:
        calls.append(name)
        return (root / name).read_text()

    return server


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "srv" / "docs"
    root.mkdir(parents=True)
    (root / "readme.md").write_text("hello")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "hostname").write_text("SECRET-HOSTNAME")
    return root


@pytest.mark.parametrize("name", HOSTILE)
async def test_hostile_names_are_refused_before_the_handler(tree: Path, name: str) -> None:
    calls: list[str] = []
    with trio.fail_after(5):
        async with connect(_docs_server(tree, calls), revision="2025-11-25") as client:
            ok = await client.read_resource("file:///srv/docs/readme.md")
            assert ok.contents[0].text == "hello"  # type: ignore[union-attr]
            with pytest.raises(McpError) as info:
                await client.read_resource(f"file:///srv/docs/{name}")
    assert info.value.code == -32602
    assert info.value.data == {"variable": "name"} and "name" in info.value.message
    assert calls == ["readme.md"]  # the handler never saw the hostile value
    assert "SECRET" not in str(info.value)


@pytest.mark.parametrize("value", ["a/b", "/", "a\\b", "..", "a\x00", "\x1f", "\x7f", "\x85", "tab\t"])
def test_unsafe_values(value: str) -> None:
    assert unsafe_reason(value) is not None


@pytest.mark.parametrize("value", ["readme.md", "...", ".", "a..b", "..a", "ü", "a b", "x:y", "%2F", "\u2028"])
def test_safe_values(value: str) -> None:
    # '.' names the root itself and '%2F' (a twice-encoded slash, decoded once) is literal text.
    assert unsafe_reason(value) is None


def test_a_later_template_can_take_what_an_earlier_refuses() -> None:
    # The refusal is per template: the server keeps looking and answers -32602 only if none fits.
    assert UriTemplate("x://{a}.txt").match("x://b.txt") == {"a": "b"}
    with pytest.raises(UnsafeVariable) as info:
        UriTemplate("x://{a}/{b}").match("x://ok/%2e%2e")
    assert (info.value.variable, info.value.template) == ("b", "x://{a}/{b}")


async def test_refusal_falls_through_to_a_safe_template() -> None:
    server = Server("two", "1")

    @server.resource_template("x://{word}")
    async def word(ctx: Context, word: str) -> str:
        return f"word {word}"

    @server.resource_template("x://{a}%2F{b}")
    async def pair(ctx: Context, a: str, b: str) -> str:
        return f"pair {a} {b}"

    with trio.fail_after(5):
        async with connect(server, revision="2025-11-25") as client:
            got = await client.read_resource("x://p%2Fq")
    assert got.contents[0].text == "pair p q"  # type: ignore[union-attr]


def test_matching_is_linear_with_crowded_variables() -> None:
    # Four variables in one segment against 10 000 characters that do not fit: a backtracking
    # matcher takes time to the fourth power (800 characters took 279 s) and holds the GIL, so
    # it runs in a child that is killed; RE2 takes microseconds, four orders of magnitude below
    # the bound (the child's start-up is most of it), so this is no timing test.
    script = (
        "from trimcp.server._uritemplate import UriTemplate\n"
        "t = UriTemplate('x://{a}{b}{c}{d}/z')\n"
        "assert t.match('x://' + 'a' * 10_000 + '/y') is None\n"
        "assert t.match('x://abcd/z') == dict(a='a', b='b', c='c', d='d')\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", script], check=False, timeout=30, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        pytest.fail("matching a 10 000-character URI took more than 30 s")
    assert done.returncode == 0, done.stderr


def test_a_lone_surrogate_matches_nothing() -> None:
    assert UriTemplate("x://{a}").match("x://\ud800") is None
