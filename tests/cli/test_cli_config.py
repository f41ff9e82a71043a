"""The CLI's --config/--server, -e, --header, --version and serve's one-line listen errors.

Run as a user runs it: the CLI as a subprocess, against servers started by the test on
127.0.0.1 (the reference server over Streamable HTTP, a stdio server that reports its
environment, a listener that records the request headers)."""

from __future__ import annotations

import json
import os
import socket
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from repo_paths import HELPERS

import trimcp
from trimcp.cli import main

CLI = [sys.executable, "-c", "import sys; from trimcp.cli import main; sys.exit(main())"]
ENV_SERVER = str(HELPERS / "env_server.py")
NOTICE = "running the bundled reference server"
# The ``url`` fixture (the reference server over Streamable HTTP) is in tests/conftest.py.


async def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60.0) -> tuple[int, str, str]:
    with trio.fail_after(timeout):
        done = await trio.run_process(
            [*CLI, *args],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env={**os.environ, **(env or {})},
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def write_config(tmp_path: Path, servers: dict[str, Any], key: str = "mcpServers") -> str:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({key: servers}))
    return str(path)


async def test_a_stdio_entry_with_variables(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "envy": {
                "command": "${PY}",
                "args": ["${SCRIPT}"],
                "env": {"GREETING": "${WORD:-hello}"},
                "cwd": str(tmp_path),
            },
            "broken": {"command": 3},  # a bad entry elsewhere does not stop this one
        },
    )
    code, out, err = await cli(
        "tools",
        "call",
        "env_of",
        "--tool-arg",
        "name=GREETING",
        "--config",
        config,
        "--server",
        "envy",
        env={"PY": sys.executable, "SCRIPT": ENV_SERVER},
    )
    assert code == 0, err
    assert f"GREETING=hello cwd={tmp_path}" in out and NOTICE not in err
    # -e adds to (and overrides) the entry's environment.
    code, out, err = await cli(
        "tools",
        "call",
        "env_of",
        "--config",
        config,
        "--server",
        "envy",
        "--tool-arg",
        "name=GREETING",
        "-e",
        "GREETING=hi",
        env={"PY": sys.executable, "SCRIPT": ENV_SERVER},
    )
    assert code == 0, err
    assert "GREETING=hi" in out


async def test_an_http_entry_with_variables(tmp_path: Path, url: str) -> None:
    port = url.split(":")[2].split("/")[0]
    config = write_config(
        tmp_path, {"ref": {"type": "http", "url": "http://127.0.0.1:${PORT}/mcp"}}, key="servers"
    )  # VS Code's spelling
    code, out, err = await cli(
        "tools", "list", "--config", config, "--server", "ref", "--format", "json", env={"PORT": port}
    )
    assert code == 0, err
    assert "echo" in {tool["name"] for tool in json.loads(out)} and NOTICE not in err


async def test_env_for_a_command_after_dashes() -> None:
    code, out, err = await cli(
        "tools", "call", "env_of", "--tool-arg", "name=FLAVOUR", "-e", "FLAVOUR=mint", "--", sys.executable, ENV_SERVER
    )
    assert code == 0, err
    assert "FLAVOUR=mint" in out


async def test_headers_go_with_every_request(nursery: trio.Nursery) -> None:
    seen: list[bytes] = []
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]

    async def record(stream: trio.SocketStream) -> None:
        data = b""
        with trio.move_on_after(5):
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                data += chunk
        seen.append(data)
        await stream.send_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await stream.aclose()

    nursery.start_soon(partial(trio.serve_listeners, record, listeners))
    code, _, err = await cli(
        "tools", "list", f"http://127.0.0.1:{port}/mcp", "--header", "X-Api-Key: s3cret", "--connect-timeout", "5"
    )
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert seen and all(b"x-api-key: s3cret" in head.lower() for head in seen)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"trimcp {trimcp.__version__}"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["resources", "list", "--config", "x.json"], "--config FILE and --server NAME go together"),
        (["tools", "call", "echo", "--config", "x.json"], "--config FILE and --server NAME go together"),
        (["tools", "list", "--server", "x"], "--config FILE and --server NAME go together"),
        (["tools", "list", "--config", "CONFIG", "--server", "ref", "http://127.0.0.1:1/mcp"], "not both"),
        (["tools", "list", "--config", "CONFIG", "--server", "nope"], 'no server "nope" (known: "ref")'),
        (["tools", "list", "--config", "MISSING", "--server", "ref"], "cannot read the file"),
        (["tools", "list", "--config", "BAD", "--server", "ref"], "not valid JSON"),
        (["tools", "list", "--header", "X: y", "--", "cmd"], "--header applies to a server URL"),
        (["tools", "list", "--header", "no-colon", "http://127.0.0.1:1/mcp"], "expected 'Name: value'"),
        (["tools", "list", "-e", "A=1", "http://127.0.0.1:1/mcp"], "-e sets a stdio server's environment"),
        (["tools", "list", "-e", "novalue", "--", "cmd"], "expected KEY=VALUE"),
    ],
)
def test_config_and_option_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    config = write_config(tmp_path, {"ref": {"command": "python"}})
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    swap = {"CONFIG": config, "MISSING": str(tmp_path / "missing.json"), "BAD": str(bad)}
    assert main([swap.get(a, a) for a in args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


async def test_serve_on_a_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = await cli("serve", "--http", f"127.0.0.1:{port}", timeout=30)
    assert code == 2
    assert err.strip().splitlines() == [f"trimcp: cannot listen on 127.0.0.1:{port}: [Errno 98] Address already in use"]


async def test_lists_show_parameters_uris_and_arguments(url: str) -> None:
    code, out, err = await cli("tools", "list", url)
    assert code == 0, err
    lines = out.splitlines()
    assert "echo  (message: string)  - Return the message unchanged." in lines
    assert any(line.startswith("slow  (seconds?: number, steps?: integer)") for line in lines)
    code, out, err = await cli("resources", "list", url)
    assert code == 0, err
    assert any(line.startswith("test://static-text  static-text") for line in out.splitlines())
    code, out, err = await cli("prompts", "list", url)
    assert code == 0, err
    assert any(line.startswith("test_prompt_with_arguments  (arg1, arg2)") for line in out.splitlines())


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["tools", "list", "stray", "--format", "json"], 2),
        (["tools", "lisst", "--format=json"], 2),
        (["tools", "list", "--format", "json", "--config", "x.json"], 2),
    ],
)
def test_with_format_json_a_usage_error_is_one_json_line(
    capsys: pytest.CaptureFixture[str], args: list[str], code: int
) -> None:
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's own errors leave through exit()
        status = int(exc.code or 0)
    assert status == code
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert json.loads(line)["exit"] == code and json.loads(line)["error"]


async def test_with_format_json_an_unreachable_server_is_one_json_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = await cli("tools", "list", f"http://127.0.0.1:{port}/mcp", "--format", "json")
    assert code == 4 and out == ""
    (line,) = err.strip().splitlines()
    error = json.loads(line)["error"]
    assert (
        json.loads(line)["exit"] == 4 and error == f"cannot connect to http://127.0.0.1:{port}/mcp: Connection refused"
    )


@pytest.mark.parametrize("command", ["check", "tools", "resources", "prompts", "auth"])
def test_every_subcommand_help_has_examples(capsys: pytest.CaptureFixture[str], command: str) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and f"trimcp {command} " in out.split("examples:")[1]


async def test_open_client_takes_a_config_entry(tmp_path: Path, url: str) -> None:
    from trimcp.config import parse_config

    port = url.split(":")[2].split("/")[0]
    config = parse_config(
        {
            "mcpServers": {
                "envy": {
                    "command": sys.executable,
                    "args": [ENV_SERVER],
                    "env": {"FLAVOUR": "${F:-lime}"},
                    "cwd": str(tmp_path),
                },
                "ref": {"url": "http://127.0.0.1:${PORT}/mcp", "headers": {"X-Team": "a"}},
                "locked": {"url": "http://127.0.0.1:1/mcp", "oauth": {"clientId": "c"}},
            }
        },
        environ={"PORT": port},
    )
    with trio.fail_after(30):
        async with trimcp.open_client(config.server("envy"), stdio=trimcp.StdioOptions(env={"EXTRA": "1"})) as client:
            assert (await client.call_tool("env_of", {"name": "FLAVOUR"})).text == f"FLAVOUR=lime cwd={tmp_path}"
            assert (await client.call_tool("env_of", {"name": "EXTRA"})).text.startswith("EXTRA=1 ")
        async with trimcp.open_client(config.server("ref")) as client:
            assert "echo" in {tool.name for tool in await client.list_tools()}
    with pytest.raises(ValueError, match="uses OAuth"):
        async with trimcp.open_client(config.server("locked")):
            pass


async def test_a_short_timeout_also_bounds_the_connect() -> None:
    # The issue's case: --timeout 3 against a silent server took 32 s (the connect had its own 30 s).
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]
    start = trio.current_time()
    code, out, err = await cli("tools", "list", "--timeout", "1", "--", *silent, timeout=20)
    assert code == 4 and out == "" and len(err.strip().splitlines()) == 1
    assert trio.current_time() - start < 15
