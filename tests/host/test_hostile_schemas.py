"""A hostile server's schemas against the host, the harness and our own server (issue 26.1).

Each test runs a real peer: ``tests/helpers/hostile_server.py`` over stdio (for the
host and ``trimcp check``) or a trimcp ``Server`` in-process.  The loop's longest stall
is measured with a task that ticks every millisecond on the real clock: on the code
before ``trimcp._sansio.bounded`` a backtracking pattern froze the loop for seconds
(the time doubles with each ``a`` of the default), a ``$ref`` was fetched with a
blocking ``urlopen``, and a schema that doubles at each of 40 levels never finished.
"""

from __future__ import annotations

import http.server
import logging
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
import trio
from repo_paths import HELPERS

from trimcp._sansio import schema as s
from trimcp.config import StdioServerConfig
from trimcp.host import Elicitation, ElicitationContext, OutputValidationError, open_pool
from trimcp.server import Context, Server
from trimcp.testing import connect

HOSTILE = str(HELPERS / "hostile_server.py")
#: The loop's longest stall the host may show (issue 26: 100 ms, for 20 servers).
MAX_STALL = 0.1


@asynccontextmanager
async def stall_meter() -> AsyncIterator[list[float]]:
    """Yields a one-item list that holds, once the block ends, the longest gap between
    the ticks of a task that sleeps a millisecond at a time.

    jsonschema is imported first: the host imports it on the first schema it meets (once
    per process, a few tens of milliseconds), which is not what these tests measure."""
    import trimcp._sansio.bounded.schemas  # noqa: F401

    worst = [0.0]

    async def tick() -> None:
        last = trio.current_time()
        while True:
            await trio.sleep(0.001)
            now = trio.current_time()
            worst[0] = max(worst[0], now - last)
            last = now

    async with trio.open_nursery() as nursery:
        nursery.start_soon(tick)
        try:
            yield worst
        finally:
            nursery.cancel_scope.cancel()


def _hostile(name: str, **env: str) -> StdioServerConfig:
    return StdioServerConfig(name=name, command=sys.executable, args=(HOSTILE,), env=env)


async def _accept_empty(params: s.ElicitRequestParams, ctx: ElicitationContext) -> s.ElicitResult:
    return s.ElicitResult(action="accept", content={})


async def test_twenty_hostile_forms_never_stall_the_hosts_loop() -> None:
    # The default alone triggers it: no user input is needed for the pattern to run.
    servers = [_hostile(f"h{i}") for i in range(20)]
    answers: dict[str, str] = {}

    async def ask(pool: Any, name: str) -> None:
        answers[name] = (await pool.call_tool(name, "ask")).content[0].text

    with trio.fail_after(120):
        async with open_pool(servers, elicitation=Elicitation(ui=_accept_empty)) as pool:
            for server in servers:
                await pool.list_tools(server.name)
            async with stall_meter() as worst, trio.open_nursery() as nursery:
                for server in servers:
                    nursery.start_soon(ask, pool, server.name)
    assert worst[0] < MAX_STALL, f"the loop stalled {worst[0]:.3f} s"
    # The pattern was enforced, not skipped: the default does not match it, so it is not
    # applied and the form goes back empty.
    assert answers == {server.name: "{}" for server in servers}


async def test_twenty_hostile_output_schemas_never_stall_the_hosts_loop(caplog: pytest.LogCaptureFixture) -> None:
    servers = [_hostile(f"h{i}") for i in range(20)]
    mismatches: dict[str, str] = {}

    async def redos(pool: Any, name: str) -> None:
        try:
            await pool.call_tool(name, "redos_out", validate_output="raise")
        except OutputValidationError as exc:
            mismatches[name] = exc.reason

    with trio.fail_after(120), caplog.at_level(logging.WARNING, logger="trimcp.host"):
        async with open_pool(servers) as pool:
            for server in servers:
                await pool.list_tools(server.name)
            async with stall_meter() as worst, trio.open_nursery() as nursery:
                for server in servers:
                    nursery.start_soon(redos, pool, server.name)
                for name in ("h0", "h1"):
                    nursery.start_soon(pool.call_tool, name, "fanout")
                nursery.start_soon(pool.call_tool, "h2", "huge_echo")
    assert worst[0] < MAX_STALL, f"the loop stalled {worst[0]:.3f} s"
    assert set(mismatches) == {server.name for server in servers}
    assert all("does not match" in reason for reason in mismatches.values())
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "'fanout' of server 'h0' not fully enforced" in warned
    assert "not checked in full" in warned
    # Each failing branch's message quotes the 1 MB value in a few hundred characters.
    [huge] = [r.getMessage() for r in caplog.records if "huge_echo" in r.getMessage()]
    assert len(huge) < 1000 and "(1000000 characters)" in huge


@contextmanager
def _watched_http_server() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 in a thread (so that a blocking fetch from the trio
    thread would still be answered), and the paths it was asked for."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/latest/meta-data", hits
    finally:
        httpd.shutdown()
        httpd.server_close()


async def test_a_remote_ref_in_an_output_schema_is_never_fetched(caplog: pytest.LogCaptureFixture) -> None:
    with _watched_http_server() as (url, hits), trio.fail_after(30):
        with caplog.at_level(logging.WARNING, logger="trimcp.host"):
            async with open_pool([_hostile("h", HOSTILE_REF_URL=url)]) as pool:
                await pool.list_tools("h")
                result = await pool.call_tool("h", "ssrf", validate_output="raise")
        assert result.structured_content == {"a": 1}
    assert hits == []
    assert "remote references are never fetched" in " ".join(r.getMessage() for r in caplog.records)


async def test_trimcp_check_finishes_on_hostile_output_schemas() -> None:
    from trimcp.conformance import Selection, run_checks
    from trimcp.conformance.connectors import connector_for

    with trio.fail_after(120):
        report = await run_checks(
            connector_for([sys.executable, HOSTILE]),
            target="hostile",
            call_tools="all",
            selection=Selection(only=("tools.structured-output", "tools.call-read-only")),
        )
    [row] = [c for c in report.results if c.id == "tools.structured-output"]
    assert row.status.value == "fail"
    assert "redos_out" in row.detail and "does not match" in row.detail


async def test_our_server_checks_a_clients_arguments_without_stalling() -> None:
    # The pattern is the tool author's and ordinary; the argument is a client's, built
    # so that a backtracking engine tries every way of splitting it.
    server = Server("words", "1")

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "pattern": r"^(\w+\s?)*$"}},
            "required": ["text"],
        }
    )
    async def count(ctx: Context, text: str) -> str:
        return str(len(text.split()))

    with trio.fail_after(30):
        async with connect(server) as client:
            async with stall_meter() as worst:
                refused = await client.call_tool("count", {"text": "a" * 26 + "!"})
            assert (await client.call_tool("count", {"text": "two words"})).content == [s.TextContent(text="2")]
    assert worst[0] < MAX_STALL, f"the loop stalled {worst[0]:.3f} s"
    assert refused.is_error and "does not match" in refused.content[0].text
