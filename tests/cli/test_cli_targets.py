"""The CLI reads its server target safely, takes options anywhere, and converts arguments by schema.

Usage errors run ``main()`` in-process (they must happen before anything starts, so no
server is needed); the rest runs the CLI as a subprocess against the reference server
served over Streamable HTTP on 127.0.0.1 by this test process.
"""

from __future__ import annotations

import json
import socket
import sys
from functools import partial
from typing import Any

import pytest
import trio

from trimcp.cli import main
from trimcp.cli.arguments import (
    convert,
    declared_types,
    parse_args_json,
    prompt_arguments,
    tool_arguments,
)
from trimcp.cli.command_line import UsageError

CLI = [sys.executable, "-c", "import sys; from trimcp.cli import main; sys.exit(main())"]
REFERENCE_NOTICE = "no server given; running the bundled reference server"
# The ``url`` fixture (the reference server over Streamable HTTP) is in tests/conftest.py.


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def cli(*args: str, timeout: float = 60.0) -> tuple[int, str, str]:
    with trio.fail_after(timeout):
        done = await trio.run_process([*CLI, *args], capture_stdout=True, capture_stderr=True, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


# --------------------------------------------------------------------------- usage errors, in-process


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["tools", "list", "mcp-server-time"], "'mcp-server-time'"),
        (["tools", "list", "node", "server.mjs", "stdio"], "'node'"),
        (["tools", "list", "http://127.0.0.1:1/mcp", "ws://127.0.0.1:2/"], "more than one server"),
        (["tools", "list", "http://127.0.0.1:1/mcp", "--", "cmd"], "pick one"),
        (["tools", "call", "echo", "stray", "http://127.0.0.1:1/mcp"], "'stray'"),
        (["tools", "call"], "needs a tool NAME"),
        (["tools", "call", "http://127.0.0.1:1/mcp"], "needs a tool NAME before the server URL"),
        (["resources", "read"], "needs a resource URI"),
        (["prompts", "get", "--", "cmd"], "needs a prompt NAME"),
        (["check", "some-server"], "'some-server'"),
        (["tools", "call", "echo", "--tool-arg", "novalue"], "--tool-arg expects K=V"),
        (["tools", "call", "echo", "--args-json", "[1]"], "must be a JSON object, got [1]"),
        (["tools", "call", "echo", "--args-json", "{bad"], "not valid JSON"),
        (["prompts", "get", "p", "--args-json", '{"a": true}'], '"a" is a string, got true'),
        (["tools", "list", "--connect-timeout", "0"], "--connect-timeout"),
    ],
)
def test_usage_errors_come_before_anything_starts(
    capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err  # one line, no traceback, no reference-server notice
    assert err.startswith("trimcp: ") and words in err
    # The hint for a stray command shows how to pass it.
    if args[2:3] == ["mcp-server-time"]:
        assert "trimcp tools list -- mcp-server-time" in err


def test_a_leftover_positional_starts_no_server(capsys: pytest.CaptureFixture[str]) -> None:
    # "-- cmd" would be started if the usage error came late; a missing program proves it did not.
    assert main(["tools", "list", "stray", "--", "/nonexistent/trimcp-never-run"]) == 2
    assert "not found" not in capsys.readouterr().err


# --------------------------------------------------------------------------- targets, as a user runs them


async def test_an_unreachable_url_exits_4_and_lists_nothing() -> None:
    port = _free_port()
    rc, out, err = await cli("tools", "list", f"http://127.0.0.1:{port}/mcp")
    assert rc == 4, err
    assert out == ""
    assert err == f"trimcp: cannot connect to http://127.0.0.1:{port}/mcp: Connection refused\n"
    assert REFERENCE_NOTICE not in err


async def test_no_target_runs_the_reference_server_and_says_so() -> None:
    rc, out, err = await cli("tools", "list")
    assert rc == 0, err
    assert "echo" in out.split()
    assert err.splitlines() == [
        "trimcp: no server given; running the bundled reference server "
        "(give a URL, a command after --, or --config FILE --server NAME)"
    ]


async def test_options_after_the_target(url: str) -> None:
    rc, out, err = await cli("tools", "call", "echo", url, "--tool-arg", "message=hi")
    assert (rc, out, err) == (0, "hi\n", "")
    rc, out, err = await cli("tools", "call", "echo", "--tool-arg", "message=hi", url)
    assert (rc, out, err) == (0, "hi\n", "")
    rc, out, err = await cli("tools", "list", url, "--format", "json")
    assert rc == 0, err
    assert "echo" in {tool["name"] for tool in json.loads(out)}
    rc, out, err = await cli("resources", "read", "--format", "text", "test://static-text", url)
    assert rc == 0, err
    assert out == "Static text served by the trimcp reference server.\n"


async def test_a_command_after_dashes_is_verbatim() -> None:
    # "--format" after -- belongs to the server's command line, not to trimcp.
    rc, out, err = await cli(
        "tools", "list", "--format", "json", "--", sys.executable, "-m", "trimcp.reference", "--page-size", "2"
    )
    assert rc == 0, err
    assert "echo" in {tool["name"] for tool in json.loads(out)}
    assert err == ""


async def test_tool_args_are_converted_by_the_schema(url: str) -> None:
    # echo's "message" is a string: 42, true and a short SHA stay strings.
    for text in ("42", "true", "1e3", "0123abc", "null"):
        rc, out, err = await cli("tools", "call", "echo", "--tool-arg", f"message={text}", url)
        assert (rc, out, err) == (0, f"{text}\n", ""), text
    # add's a and b are numbers: parsed.
    rc, out, err = await cli(
        "tools", "call", "add", "--tool-arg", "a=2", "--tool-arg", "b=3.5", "--format", "json", url
    )
    assert rc == 0, err
    assert json.loads(out)["structuredContent"] == {"sum": 5.5}
    # --args-json gives them all at once; --tool-arg wins over it.
    rc, out, err = await cli(
        "tools", "call", "add", "--args-json", '{"a": 1, "b": 1}', "--tool-arg", "b=9", "--format", "json", url
    )
    assert rc == 0, err
    assert json.loads(out)["structuredContent"] == {"sum": 10}


async def test_an_unconvertible_value_is_a_usage_error(url: str) -> None:
    rc, out, err = await cli("tools", "call", "add", "--tool-arg", "a=abc", "--tool-arg", "b=1", url)
    assert rc == 2
    assert out == ""
    assert err == 'trimcp: --tool-arg a=abc: "a" is a number\n'


async def test_prompt_args_stay_strings(url: str) -> None:
    rc, out, err = await cli(
        "prompts",
        "get",
        "test_prompt_with_arguments",
        url,
        "--prompt-arg",
        "arg1=42",
        "--args-json",
        '{"arg2": "true"}',
    )
    assert rc == 0, err
    assert out == "First argument: 42; second argument: true\n"


async def test_connect_timeout_bounds_a_silent_server() -> None:
    # A stdio server that never answers: --connect-timeout 1 gives up long before the 30 s default.
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]
    start = trio.current_time()
    rc, out, err = await cli("tools", "list", "--connect-timeout", "1", "--", *silent, timeout=20)
    assert rc == 4
    assert out == ""
    assert "no answer to server/discover within 1.0 s" in err
    assert trio.current_time() - start < 15


async def test_connect_timeout_bounds_a_silent_http_server(nursery: trio.Nursery) -> None:
    # Accepts the TCP connection and never answers the HTTP request.
    async def mute(stream: trio.SocketStream) -> None:
        await trio.sleep_forever()

    listeners = await nursery.start(partial(trio.serve_tcp, mute, 0, host="127.0.0.1"))
    port = listeners[0].socket.getsockname()[1]
    start = trio.current_time()
    rc, out, err = await cli("tools", "list", "--connect-timeout", "1", f"http://127.0.0.1:{port}/mcp", timeout=20)
    assert rc == 4, err
    assert out == ""
    assert err == "trimcp: no answer to server/discover within 1.0 s\n"
    assert trio.current_time() - start < 15


# --------------------------------------------------------------------------- conversion rules


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "o": {"type": "object"},
        "a": {"type": "array"},
        "maybe": {"type": ["integer", "null"]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "free": {"description": "no type"},
        "open": {"anyOf": [{"type": "integer"}, {}]},
    },
}


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("s", "42", "42"),
        ("s", "abc1234", "abc1234"),
        ("s", "true", "true"),
        ("s", "", ""),
        ("s", '{"a": 1}', '{"a": 1}'),
        ("i", "42", 42),
        ("i", "-7", -7),
        ("i", " 3 ", 3),
        ("n", "1.5", 1.5),
        ("n", "2", 2),
        ("n", "-1e3", -1000.0),
        ("b", "true", True),
        ("b", "FALSE", False),
        ("b", "True", True),
        ("o", '{"k": [1, null]}', {"k": [1, None]}),
        ("a", '[1, "x"]', [1, "x"]),
        ("maybe", "null", None),
        ("maybe", "5", 5),
        ("either", "5", 5),
        ("either", "five", "five"),
        ("free", "5", 5),
        ("free", "true", True),
        ("free", "hello", "hello"),
        ("free", "[1]", [1]),
        ("open", "x", "x"),
        ("unlisted", "1", 1),
        ("unlisted", "word", "word"),
    ],
)
def test_convert(name: str, text: str, value: Any) -> None:
    converted = tool_arguments({}, {name: text}, SCHEMA)[name]
    assert converted == value and type(converted) is type(value)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("i", "abc", '--tool-arg i=abc: "i" is an integer'),
        ("i", "1.5", '--tool-arg i=1.5: "i" is an integer'),
        ("i", "true", '--tool-arg i=true: "i" is an integer'),
        ("n", "NaN", '--tool-arg n=NaN: "n" is a number'),
        ("n", "Infinity", '--tool-arg n=Infinity: "n" is a number'),
        ("b", "yes", '--tool-arg b=yes: "b" is a boolean (true or false)'),
        ("o", "true", '--tool-arg o=true: "o" is a JSON object (expected a JSON object, got true)'),
        ("a", "{}", '--tool-arg a={}: "a" is a JSON array (expected a JSON array, got {})'),
        ("maybe", "x", '--tool-arg maybe=x: "maybe" is null or an integer'),
    ],
)
def test_convert_refuses(name: str, text: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        tool_arguments({}, {name: text}, SCHEMA)
    assert str(info.value) == message
    assert "True" not in str(info.value)  # values are shown as JSON, never as Python


def test_invalid_json_for_an_object_names_the_json_error() -> None:
    with pytest.raises(UsageError, match=r'"o" is a JSON object \(invalid JSON: Expecting'):
        convert("o", "{nope", {"type": "object"})


def test_declared_types() -> None:
    assert declared_types({"type": "string"}) == ["string"]
    assert declared_types({"type": ["string", "null"]}) == ["null", "string"]
    assert declared_types({"oneOf": [{"type": "number"}, {"type": "boolean"}]}) == ["boolean", "number"]
    assert declared_types({"anyOf": [{"type": "number"}, {"$ref": "#/x"}]}) is None
    assert declared_types({"type": "frobnicate"}) is None
    assert declared_types({}) is None


def test_args_json_merges_under_tool_args() -> None:
    base = parse_args_json('{"i": 1, "s": "kept", "extra": [1]}')
    assert tool_arguments(base, {"i": "2"}, SCHEMA) == {"i": 2, "s": "kept", "extra": [1]}
    assert parse_args_json(None) == {}
    # No schema at all (a tool the list did not show): JSON when it parses.
    assert tool_arguments({}, {"x": "5", "y": "z"}, None) == {"x": 5, "y": "z"}


def test_prompt_arguments_stay_strings() -> None:
    assert prompt_arguments({"a": "1"}, {"a": "42", "b": "true"}) == {"a": "42", "b": "true"}
    with pytest.raises(UsageError, match='"n" is a string, got 3'):
        prompt_arguments({"n": 3}, {})
