"""``trimcp.testing``: the in-process connect, the scripted stream, and the package's own rules.

The package docstring's example is run as it is written (a user copies it from there).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import trio

import trimcp.testing
from trimcp import ConnectError, RequestTimeout, Timeouts, TransportClosed
from trimcp._sansio import jsonrpc as rpc
from trimcp._trio.stream import MessageStream, Received, RequestFailed, StreamLost
from trimcp.server import Context, Server
from trimcp.testing import ScriptedStream, connect, serve_in_process

PACKAGE = Path(trimcp.testing.__file__).resolve().parent
TRIMCP = PACKAGE.parent


def _server() -> Server:
    server = Server("t", version="1")

    @server.tool()
    async def shout(ctx: Context, text: str) -> str:
        return text.upper()

    return server


def test_the_docstring_example_runs() -> None:
    doc = trimcp.testing.__doc__ or ""
    found = re.search(r"::\n\n(.*?)\n\S", doc + "\n.", re.DOTALL)
    assert found is not None, "the package docstring has no example block"
    code = textwrap.dedent(found.group(1))
    assert "connect(server)" in code
    namespace: dict[str, object] = {}
    # Our own docstring, run as a user would paste it; its own assert checks the answer.
    exec(compile(code, "trimcp.testing docstring", "exec"), namespace)
    assert "main" in namespace


def _python_blocks(markdown: str, after: str) -> list[str]:
    section = markdown.split(after, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


async def test_the_readme_example_runs() -> None:
    # The README's server, and its in-process test (which defines the same server itself), run
    # in this test's own Trio run (the blocks' trio.run lines are for a reader's script).
    readme = (TRIMCP.parent / "README.md").read_text(encoding="utf-8")
    (server_code,) = _python_blocks(readme, "## Writing a server")
    (test_code,) = _python_blocks(readme, "## Testing code built on trimcp")
    server_ns: dict[str, Any] = {"__name__": "readme_server"}
    exec(server_code, server_ns)  # not __main__: it defines the server and does not serve
    assert "add" in server_ns["server"].tools
    namespace: dict[str, Any] = {"__name__": "readme_test"}
    exec(test_code.replace("trio.run(test_add)", ""), namespace)
    with trio.fail_after(5):
        await namespace["test_add"]()


async def test_connect_yields_an_operating_session_in_either_era() -> None:
    with trio.fail_after(10):
        for revision in ("2025-11-25", "2026-07-28", None):
            async with connect(_server(), revision=revision) as client:
                result = await client.call_tool("shout", {"text": "hi"})
                assert [block.text for block in result.content] == ["HI"]  # type: ignore[union-attr]
                assert client.protocol_version == (revision or "2026-07-28")


async def test_connect_passes_client_options_through(autojump_clock: trio.abc.Clock) -> None:
    server = Server("slow", version="1")

    @server.tool()
    async def nap(ctx: Context) -> str:
        await trio.sleep(100)
        return "late"

    async with connect(server, revision="2025-11-25", timeouts=Timeouts(request=1.0)) as client:
        start = trio.current_time()
        with pytest.raises(RequestTimeout):
            await client.call_tool("nap")
        assert trio.current_time() - start == pytest.approx(1.0)
    with pytest.raises(TypeError):
        async with connect(server, no_such_option=1):
            pass  # pragma: no cover


async def test_an_error_in_the_block_is_the_error_raised(autojump_clock: trio.abc.Clock) -> None:
    # Not swallowed by the nursery's cancellation, not wrapped in an ExceptionGroup.
    with pytest.raises(KeyError, match="mine"):
        async with connect(_server()) as client:
            await client.list_tools()
            raise KeyError("mine")


async def test_serve_in_process_speaks_raw_json_rpc_and_ends_the_server(autojump_clock: trio.abc.Clock) -> None:
    server = _server()
    async with serve_in_process(server) as stream:
        assert isinstance(stream, MessageStream)
        await stream.send(
            rpc.Request(
                7,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            )
        )
        answer = await stream.receive()
        assert isinstance(answer, Received)
        (message,) = answer.payload.messages
        assert isinstance(message, rpc.Response) and message.id == 7
        assert message.result["serverInfo"]["name"] == "t"
        while not server.sessions:
            await trio.lowlevel.checkpoint()
    await trio.testing.wait_all_tasks_blocked()
    assert not server.sessions  # leaving closed the stream, which ended serve_stream
    with pytest.raises(TransportClosed):
        await stream.receive()


async def test_connect_fails_as_open_client_does() -> None:
    server = Server("old", version="1", supported_versions=("2025-06-18",))
    with trio.fail_after(5), pytest.raises(ConnectError):
        async with connect(server, revision="2026-07-28"):
            pass  # pragma: no cover


# ---------------------------------------------------------------- ScriptedStream


async def test_scripted_stream_plays_the_peer(autojump_clock: trio.abc.Clock) -> None:
    stream = ScriptedStream()
    await stream.send(rpc.Notification("hello"))
    await stream.send(rpc.Request(1, "ping"))
    request, meta = await stream.expect("ping")  # the notification before it is skipped
    assert request == rpc.Request(1, "ping") and meta.protocol_version is None
    await stream.send(rpc.Request(2, "tools/list"))
    with pytest.raises(AssertionError, match="expected a 'ping' request"):
        await stream.expect("ping")
    await stream.send(rpc.Request(3, "a"))
    await stream.send(rpc.Notification("n"))
    await stream.send(rpc.Request(4, "b"))
    assert [r.id for r in stream.requests()] == [3, 4] and stream.requests() == []

    await stream.answer(request, {"ok": True})
    await stream.lose(rpc.Request(5, "x"), TransportClosed("gone"), may_reissue=True)
    await stream.lose_stream(TransportClosed("no GET"))
    answered = await stream.receive()
    assert isinstance(answered, Received)
    assert answered.payload.messages == [rpc.Response(1, {"ok": True})]
    lost = await stream.receive()
    assert isinstance(lost, RequestFailed) and lost.request_id == 5 and lost.may_reissue
    assert isinstance(await stream.receive(), StreamLost)


async def test_scripted_stream_keeps_the_close_contract(autojump_clock: trio.abc.Clock) -> None:
    stream = ScriptedStream()
    woken: list[BaseException] = []

    async def blocked() -> None:
        try:
            await stream.receive()
        except TransportClosed as exc:
            woken.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(blocked)
        await trio.testing.wait_all_tasks_blocked()
        await stream.aclose()
    assert len(woken) == 1 and stream.closed
    await stream.aclose()  # idempotent
    with pytest.raises(TransportClosed):
        await stream.send(rpc.Notification("late"))
    with pytest.raises(TransportClosed):
        await stream.receive()


async def test_a_client_runs_against_a_scripted_stream(autojump_clock: trio.abc.Clock) -> None:
    from trimcp import open_client

    stream = ScriptedStream()
    init_result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    async with trio.open_nursery() as nursery:

        async def server() -> None:
            init, _ = await stream.expect("initialize")
            await stream.answer(init, init_result)
            ping, meta = await stream.expect("ping")
            assert meta.protocol_version == "2025-11-25"
            await stream.answer(ping, {})

        nursery.start_soon(server)
        async with open_client(stream, revision="2025-11-25") as client:
            await client.ping()
    assert stream.closed


# ---------------------------------------------------------------- the package's own rules


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(path.relative_to(TRIMCP.parent).with_suffix("").parts[: -node.level])
                found.add(f"{base}.{node.module}" if node.module else base)
            elif node.module:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_nothing_in_trimcp_imports_the_test_helpers() -> None:
    offenders = [
        str(path.relative_to(TRIMCP.parent))
        for path in TRIMCP.rglob("*.py")
        if PACKAGE not in path.parents
        and any(name == "trimcp.testing" or name.startswith("trimcp.testing.") for name in _imports(path))
    ]
    assert offenders == []


def test_the_helpers_import_no_harness_cli_or_reference_server() -> None:
    for path in PACKAGE.glob("*.py"):
        for name in _imports(path):
            assert not name.startswith(("trimcp.conformance", "trimcp.cli", "trimcp.reference", "trimcp.host")), (
                f"{path.name} imports {name}"
            )


def test_all_is_the_contract() -> None:
    names = set(trimcp.testing.__all__)
    assert names == {n for n in vars(trimcp.testing) if not n.startswith("_")} - {"annotations"}
    for name in names - {"CALLER_EXCHANGE", "OVERSIZE", "PAIR_RULES", "PEER_GONE", "REQUEST_RULES"}:
        assert getattr(trimcp.testing, name).__module__.startswith("trimcp.testing._")


def test_importing_the_helpers_loads_no_http_stack() -> None:
    code = (
        "import sys, trimcp.testing; print(sorted(m for m in ('h11', 'httpx', 'trio_websocket') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={"PYTHONPATH": str(TRIMCP.parent), "PATH": ""},
    )
    assert out.stdout.strip() == "[]"
