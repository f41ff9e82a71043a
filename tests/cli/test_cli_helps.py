"""The CLI helps a new user (issue 31, point 4), each help driven as a user drives the command.

Every test runs ``python -m trimcp ...`` as a subprocess (or ``main()``, the entry point, for
usage errors found before anything starts) against the bundled reference server, served over
Streamable HTTP on 127.0.0.1 by the test (the ``url`` fixture), run over stdio, or against
``tests/helpers/cli_result_server.py`` and small HTTP peers started here on 127.0.0.1:

* "did you mean" for commands, actions and options, and for tool, prompt and resource names;
* unknown tool (and prompt) arguments refused against the schema, ``--force`` to send anyway;
* each action's own ``--help``, with the forms of the target explained;
* each content block printed once, structured content only when it adds something, ``--raw``
  for everything; binary blocks summarised, ``--save DIR`` writes them;
* failures in one line that repeats nothing, over a set of real failure modes; the hint for a
  URL whose path answers 404;
* a progress line on a terminal (or with ``--progress always``), nothing in a pipe;
* ``tools list --config FILE``: every server's tools under the names an agent sees.
"""

from __future__ import annotations

import base64
import json
import os
import pty
import re
import socket
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from repo_paths import REPO

from trimcp.cli import main

PYTHON = sys.executable
RESULT_SERVER = [PYTHON, str(REPO / "tests" / "helpers" / "cli_result_server.py")]
REFERENCE = [PYTHON, "-m", "trimcp.reference"]
TIMEOUT = 60


async def cli(*args: str, timeout: float = TIMEOUT) -> tuple[int, str, str]:
    with trio.fail_after(timeout):
        done = await trio.run_process(
            [PYTHON, "-m", "trimcp", *args], capture_stdout=True, capture_stderr=True, check=False
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def usage(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``main(args)`` for a usage error argparse reports (it exits) or trimcp does (it returns)."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


# --------------------------------------------------------------------------- did you mean


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["tool", "list"], "(did you mean 'tools'?)"),
        (["chekc"], "(did you mean 'check'?)"),
        (["tools", "lst"], "(did you mean 'list'?)"),
        (["resources", "raed", "x"], "(did you mean 'read'?)"),
        (["tools", "list", "--formt", "json"], "(did you mean --format?)"),
        (["tools", "call", "echo", "--tool_arg", "message=hi"], "(did you mean --tool-arg?)"),
        (["tools", "list", "--format", "jsn"], "(did you mean 'json'?)"),
        (["check", "--fail-on", "shuold"], "(did you mean 'should'?)"),
    ],
)
def test_did_you_mean_for_commands_actions_and_options(
    capsys: pytest.CaptureFixture[str], args: list[str], suggestion: str
) -> None:
    code, err = usage(capsys, *args)
    assert code == 2
    assert suggestion in err.splitlines()[-1], err


async def test_did_you_mean_for_tool_prompt_and_resource_names(url: str) -> None:
    rc, out, err = await cli("tools", "call", "ech", "--tool-arg", "message=hi", url)
    assert (rc, out) == (2, "")
    assert err == (
        'trimcp: the server lists no tool "ech" (did you mean "echo"?); `trimcp tools list` shows them; '
        "--force sends it anyway\n"
    )
    rc, out, err = await cli("prompts", "get", "test_simple_promt", url)
    assert (rc, out) == (2, "")
    assert '(did you mean "test_simple_prompt"?)' in err and len(err.splitlines()) == 1
    # A resource is read as asked (a template may make it); the refusal names the closest URI.
    rc, out, err = await cli("resources", "read", "test://static-txt", url)
    assert (rc, out) == (5, "")
    assert err.startswith("trimcp: the server answered with an error: [")
    assert err.rstrip().endswith("(did you mean test://static-text?)") and len(err.splitlines()) == 1
    # --force sends the name the server does not list: its own answer is the error.
    rc, out, err = await cli("tools", "call", "ech", "--force", url)
    assert rc == 5 and "the server answered with an error" in err and "did you mean" not in err


# --------------------------------------------------------------------------- arguments against the schema


async def test_unknown_tool_arguments_are_refused_against_the_schema(url: str) -> None:
    rc, out, err = await cli("tools", "call", "echo", "--tool-arg", "mesage=hi", url)
    assert (rc, out) == (2, "")
    assert err == (
        'trimcp: tool "echo" has no argument "mesage" (did you mean "message"?); its arguments: message; '
        "--force sends it anyway\n"
    )
    rc, out, err = await cli("tools", "call", "add", "--args-json", '{"a": 1, "b": 2, "c": 3}', url)
    assert rc == 2 and 'tool "add" has no argument "c"; its arguments: a, b;' in err
    rc, out, err = await cli("prompts", "get", "test_prompt_with_arguments", "--prompt-arg", "arg3=x", url)
    assert rc == 2 and 'prompt "test_prompt_with_arguments" has no argument "arg3"' in err
    rc, out, err = await cli("tools", "call", "roots", "--tool-arg", "x=1", url)
    assert rc == 2 and 'tool "roots" takes no arguments, got "x"' in err
    # --force sends them: the server judges (the reference server's schema refuses "mesage").
    rc, out, err = await cli("tools", "call", "echo", "--tool-arg", "mesage=hi", "--force", url)
    assert rc == 5 and "'message' is a required property" in out, (out, err)
    # Known arguments pass untouched.
    assert await cli("tools", "call", "echo", "--tool-arg", "message=hi", url) == (0, "hi\n", "")


# --------------------------------------------------------------------------- help per action


def _help(*args: str) -> str:
    done = subprocess.run([PYTHON, "-m", "trimcp", *args, "--help"], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_each_action_has_its_own_help_with_the_target_forms() -> None:
    tools, listing, call = _help("tools"), _help("tools", "list"), _help("tools", "call")
    assert len({tools, listing, call}) == 3
    assert "list      list the server's tools" in tools and "call      call one tool" in tools
    assert listing.startswith("usage: trimcp tools list [options] [URL | -- COMMAND ... | --config FILE")
    assert call.startswith("usage: trimcp tools call NAME [options] [URL | -- COMMAND ...")
    assert "NAME is the tool's name, as `trimcp tools list` shows it" in call
    assert "--tool-arg K=V" in call and "--tool-arg" not in listing  # each action its own options
    assert "--save DIR" in call and "--progress {auto,always,never}" in call
    for text in (tools, listing, call, _help("resources", "read"), _help("prompts", "get"), _help("check")):
        # The forms of the target, explained wherever a server is named.
        assert "-- COMMAND [ARG ...]         a stdio server" in text
        assert "--config FILE --server NAME  the entry NAME of an mcpServers file" in text
        assert "servers usually serve at" in text and "the bundled reference server" in text
    assert "URI is the resource's URI, as `trimcp resources list` shows it" in _help("resources", "read")


# --------------------------------------------------------------------------- how a result is printed


async def test_each_block_once_and_structured_content_only_when_it_adds(url: str) -> None:
    # add's text block is the JSON of its structuredContent: printed once.
    rc, out, err = await cli("tools", "call", "add", "--tool-arg", "a=2", "--tool-arg", "b=3", url)
    assert (rc, err) == (0, "") and out == '{"sum": 5}\n'
    # --raw: everything the server sent, the twin included.
    rc, out, _ = await cli("tools", "call", "add", "--tool-arg", "a=2", "--tool-arg", "b=3", "--raw", url)
    assert rc == 0 and out.count('"sum"') == 2 and "structured content:" in out
    # A structuredContent that says more than the text is shown after it.
    rc, out, err = await cli("tools", "call", "summary", "--", *RESULT_SERVER)
    assert (rc, err) == (0, "")
    text, _, structured = out.partition("structured content:\n")
    assert text == "2 files changed\n"
    assert json.loads(structured) == {"files": ["a.py", "b.py"], "insertions": 10, "deletions": 3}


async def test_binary_blocks_are_summarised_and_saved(tmp_path: Path) -> None:
    rc, out, err = await cli("tools", "call", "photo", "--", *RESULT_SERVER)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "a photo and its thumbnail data",
        "[image/png, 3.9 KB]",
        "[resource file:///thumbs/photo.bin, application/octet-stream, 1.5 KB]",
    ]
    rc, raw, _ = await cli("tools", "call", "photo", "--format", "json", "--", *RESULT_SERVER)
    blocks = json.loads(raw)["content"]
    # --save DIR (made if missing): each binary block in a file of its own, named in the output.
    folder = tmp_path / "out" / "photos"
    rc, out, err = await cli("tools", "call", "photo", "--save", str(folder), "--", *RESULT_SERVER)
    assert (rc, err) == (0, "")
    image, blob = folder / "photo-1.png", folder / "photo.bin"  # a resource keeps its file name
    assert out.splitlines()[1:] == [
        f"[image/png, 3.9 KB] saved to {image}",
        f"[resource file:///thumbs/photo.bin, application/octet-stream, 1.5 KB] saved to {blob}",
    ]
    assert image.read_bytes() == base64.b64decode(blocks[1]["data"]) and len(image.read_bytes()) == 3900
    assert blob.read_bytes() == base64.b64decode(blocks[2]["resource"]["blob"])
    # Saved again: new names, nothing overwritten.
    rc, out, _ = await cli("tools", "call", "photo", "--save", str(folder), "--", *RESULT_SERVER)
    assert rc == 0 and f"saved to {folder / 'photo-1-1.png'}" in out
    assert sorted(p.name for p in folder.iterdir()) == [
        "photo-1-1.png",
        "photo-1.bin",
        "photo-1.png",
        "photo.bin",
    ]
    # A read resource's blob, and --raw's base64.
    rc, out, _ = await cli("resources", "read", "test://static-binary", "--save", str(tmp_path), "--", *REFERENCE)
    assert (
        rc == 0
        and out == f"[resource test://static-binary, image/png, 69 B] saved to {tmp_path / 'static-binary.png'}\n"
    )
    rc, out, _ = await cli("tools", "call", "photo", "--raw", "--", *RESULT_SERVER)
    assert rc == 0 and blocks[1]["data"] in out


def test_save_into_a_file_is_a_usage_error_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "a-file"
    taken.write_text("x")
    # The command after -- would fail if it ran: the usage error comes first.
    code, err = usage(capsys, "tools", "call", "photo", "--save", str(taken / "sub"), "--", "/nonexistent/server")
    assert code == 2 and err.startswith(f"trimcp: cannot use --save {taken / 'sub'}: ") and len(err.splitlines()) == 1


# --------------------------------------------------------------------------- failures in one line


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def repeated(line: str) -> str | None:
    """A run of three words the line says twice, or ``None``."""
    words = re.findall(r"[^\s:;,()]+", line.lower())
    seen: set[tuple[str, ...]] = set()
    for i in range(len(words) - 2):
        gram = tuple(words[i : i + 3])
        if gram in seen:
            return " ".join(gram)
        seen.add(gram)
    return None


async def _http_peer(nursery: trio.Nursery, status: str) -> int:
    """An HTTP server on 127.0.0.1 that answers every request with ``status`` and closes."""

    async def answer(stream: trio.SocketStream) -> None:
        with trio.move_on_after(5):
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                data += chunk
            await stream.send_all(f"HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode())
        await stream.aclose()

    listeners = await nursery.start(partial(trio.serve_tcp, answer, 0, host="127.0.0.1"))
    port: int = listeners[0].socket.getsockname()[1]
    return port


@pytest.mark.deadline(180)
async def test_failures_are_one_line_that_repeats_nothing(nursery: trio.Nursery) -> None:
    refused = _free_port()
    error_port = await _http_peer(nursery, "500 Internal Server Error")
    cases: list[tuple[list[str], str]] = [
        (["tools", "list", f"http://127.0.0.1:{refused}/mcp"], f"cannot connect to http://127.0.0.1:{refused}/mcp: "),
        (["tools", "list", f"ws://127.0.0.1:{refused}/mcp"], f"cannot connect to ws://127.0.0.1:{refused}/mcp: "),
        (
            ["tools", "list", "--", "/nonexistent/mcp-server", "--flag"],
            "cannot start MCP server /nonexistent/mcp-server",
        ),
        (["tools", "list", "--", PYTHON, "-c", "import sys; sys.exit(1)"], "exited with status 1"),
        (
            ["tools", "list", "--", PYTHON, "-c", "import sys; print('Traceback', file=sys.stderr); sys.exit('no db')"],
            "exited with status 1 (stderr: no db)",
        ),
        (["tools", "list", "--", PYTHON, "-c", "print('not json')"], "exited with status 0"),
        (
            ["tools", "list", "--connect-timeout", "1", "--", PYTHON, "-c", "import time; time.sleep(30)"],
            "no answer to server/discover within 1.0 s",
        ),
        (["check", "--", "/nonexistent/mcp-server"], "cannot start MCP server /nonexistent/mcp-server"),
        (["tools", "list", f"http://127.0.0.1:{error_port}/mcp"], f"http://127.0.0.1:{error_port}/mcp"),
    ]
    for args, words in cases:
        rc, out, err = await cli(*args)
        assert rc == 4 and out == "", (args, rc, out, err)
        assert err.count("\n") == 1 and err.startswith("trimcp: "), (args, err)
        assert words in err, (args, err)
        assert repeated(err) is None, (args, repeated(err), err)
        assert "exit status" not in err and "sub-exception" not in err and "all attempts" not in err, err
        target = next((a for a in args if a.startswith(("http://", "ws://", "/nonexistent"))), None)
        if target is not None:
            assert err.count(target) == 1, err  # the server is named once


async def test_a_url_whose_path_answers_404_gets_a_hint(url: str, nursery: trio.Nursery) -> None:
    base = url.removesuffix("/mcp")
    for wrong in (f"{base}/", f"{base}/api/v1"):
        rc, out, err = await cli("tools", "list", wrong)
        assert (rc, out) == (4, "")
        assert err.rstrip().endswith(f"; did you mean {base}/mcp?") and len(err.splitlines()) == 1, err
        assert repeated(err) is None, err
    rc, _, err = await cli("check", f"{base}/nope", "--only", "lifecycle.*")
    assert rc == 4 and err.rstrip().endswith(f"; did you mean {base}/mcp?"), err
    # No MCP endpoint anywhere there: where servers usually serve.
    port = await _http_peer(nursery, "404 Not Found")
    rc, _, err = await cli("tools", "list", f"http://127.0.0.1:{port}/")
    assert rc == 4 and err.rstrip().endswith("MCP servers usually serve at a path such as /mcp"), err
    # Refused or failing for another reason: no hint.
    rc, _, err = await cli("tools", "list", f"http://127.0.0.1:{_free_port()}/")
    assert rc == 4 and "did you mean" not in err and "usually" not in err


# --------------------------------------------------------------------------- progress


def _on_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal: (status, stdout, what the terminal showed)."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [PYTHON, "-m", "trimcp", *args], stdout=subprocess.PIPE, stderr=follower, timeout=TIMEOUT, check=False
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    return done.returncode, done.stdout.decode(), b"".join(chunks).decode()


def test_progress_line_on_a_terminal_only() -> None:
    call = ["tools", "call", "steps", "--", *RESULT_SERVER]
    rc, out, shown = _on_a_terminal(call)
    assert (rc, out) == (0, "all steps done\n")
    # One line rewritten in place, then erased: nothing of it stays on the terminal.
    assert "\rtrimcp: steps: 1/3 (33%) fetching" in shown
    assert "\rtrimcp: steps: 2/3 (67%) parsing" in shown
    assert "\rtrimcp: steps: 3 done" in shown
    assert shown.endswith("\r") and shown.rstrip(" \r").endswith("done")
    # A pipe sees nothing, unless asked; then one line per report.
    done = subprocess.run([PYTHON, "-m", "trimcp", *call], capture_output=True, text=True, timeout=TIMEOUT)
    assert (done.returncode, done.stdout, done.stderr) == (0, "all steps done\n", "")
    done = subprocess.run(
        [PYTHON, "-m", "trimcp", *call[:3], "--progress", "always", *call[3:]],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.stdout == "all steps done\n"
    assert done.stderr.splitlines() == [
        "trimcp: steps: 1/3 (33%) fetching",
        "trimcp: steps: 2/3 (67%) parsing",
        "trimcp: steps: 3 done",
    ]
    # --progress never: nothing, even on a terminal.
    rc, out, shown = _on_a_terminal([*call[:3], "--progress", "never", *call[3:]])
    assert (rc, out, shown) == (0, "all steps done\n", "")


# --------------------------------------------------------------------------- every server of a config


async def test_tools_list_config_lists_every_server_under_agent_names(url: str, tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    servers: dict[str, Any] = {
        "local": {"command": PYTHON, "args": ["-m", "trimcp.reference"]},
        "web.app": {"type": "http", "url": url},
        "results": {"command": PYTHON, "args": RESULT_SERVER[1:]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    rc, out, err = await cli("tools", "list", "--config", str(config))
    assert (rc, err) == (0, ""), err
    names = [line.split()[0] for line in out.splitlines()]
    assert "mcp__local__echo" in names and "mcp__web_app__echo" in names  # the host layer's normalising
    assert names[-3:] == ["mcp__results__summary", "mcp__results__photo", "mcp__results__steps"]
    assert "mcp__local__add  (a: number, b: number)  - Add a and b" in out
    rc, out, _ = await cli("tools", "list", "--config", str(config), "--format", "json")
    listed = json.loads(out)
    assert {(t["server"], t["tool"]) for t in listed if t["name"] == "mcp__web_app__add"} == {("web.app", "add")}
    assert all(t["name"].startswith("mcp__") and t["inputSchema"]["type"] == "object" for t in listed)
    # The agent-facing names are trimcp.host's: the same a pool of these servers gives a model.
    from trimcp.config import load_config
    from trimcp.host import open_pool

    async with open_pool(load_config(config)) as pool:
        assert [t.name for t in await pool.tools(connect=True)] == [t["name"] for t in listed]
    # A server that cannot be used is named on stderr, and the others still listed; exit 4.
    servers["gone"] = {"command": "/nonexistent/mcp-server"}
    config.write_text(json.dumps({"mcpServers": servers}))
    rc, out, err = await cli("tools", "list", "--config", str(config))
    assert rc == 4 and "mcp__results__steps" in out
    assert (
        err == "trimcp: server gone: failed: cannot start MCP server /nonexistent/mcp-server: "
        "the program was not found (is it installed and on PATH?)\n"
    )
