"""``trimcp check`` against HTTP targets: the reference server over Streamable HTTP
(in-process and through the CLI), and hand-written HTTP servers that break a
transport rule, which the matching ``http.*`` check must flag.  Loopback only.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from helpers.h11_fake import McpFake, Reply, Req, serve

from trimcp.conformance import run_checks
from trimcp.conformance.catalog import CATALOG
from trimcp.conformance.checks.http import HTTP_CHECKS
from trimcp.conformance.connectors import connector_for, is_url
from trimcp.conformance.model import Level, Report, Status
from trimcp.conformance.rawhttp import ProbeError, RawClient
from trimcp.reference.server import build_server
from trimcp.server import Context, Server
from trimcp.server.transports.http.app import BoundHttpServer, serve_http

CLI = [sys.executable, "-c", "import sys; from trimcp.cli import main; sys.exit(main())"]


def _by_id(report: Report) -> dict[str, Any]:
    return {r.id: r for r in report.results}


async def _check(url: str, revision: str | None = None) -> Report:
    with trio.fail_after(120):
        return await run_checks(connector_for([url]), target=url, revision=revision, request_timeout=10)


def _bad(report: Report) -> list[Any]:
    return [r for r in report.results if r.status in (Status.FAIL, Status.WARN)]


def test_http_checks_are_in_the_catalog() -> None:
    for check_id in HTTP_CHECKS:
        spec = CATALOG[check_id]
        assert spec.section.startswith("basic/transports")
        assert "2024-11-05" not in spec.revisions
    assert is_url(["http://127.0.0.1:1/mcp"]) and not is_url(["python", "server.py"])


@pytest.mark.parametrize("revision", [None, "2025-11-25", "2025-03-26"])
async def test_reference_over_http(nursery: trio.Nursery, revision: str | None) -> None:
    bound: BoundHttpServer = await nursery.start(serve_http, build_server())
    report = await _check(bound.url, revision)
    assert _bad(report) == []
    results = _by_id(report)
    if revision is None:
        assert report.era == "stateless"
        passed = {"http.origin", "http.content-type", "http.protocol-version", "http.method-header", "http.no-get"}
    else:
        assert report.revision == revision and report.era == "handshake"
        passed = {
            "http.origin",
            "http.content-type",
            "http.notification-202",
            "http.session-id",
            "http.unknown-session",
            "http.delete",
            "http.get-stream",
        }
        if revision >= "2025-06-18":
            passed.add("http.protocol-version")
    for check_id in passed:
        assert results[check_id].status is Status.PASS, results[check_id]
    for check_id in set(HTTP_CHECKS) - passed:
        assert results[check_id].status is Status.SKIP
    assert results["stdio.shutdown"].detail == "not a stdio target"


@pytest.mark.parametrize("revision", [None, "2025-11-25"])
async def test_gating_probe_over_http(nursery: trio.Nursery, revision: str | None) -> None:
    """The gating probe opens its own HTTP session (handshake era: initialize, initialized,
    then the request under the negotiated MCP-Protocol-Version) and is refused."""
    server = Server("tools-only", "0.0.1")

    @server.tool(annotations={"readOnlyHint": True})
    async def echo(ctx: Context, text: str = "") -> str:
        return text

    bound: BoundHttpServer = await nursery.start(serve_http, server)
    report = await _check(bound.url, revision)
    gating = _by_id(report)["capabilities.gating"]
    assert (gating.status, gating.detail) == (Status.PASS, "prompts/list refused with -32601")
    assert _bad(report) == []


async def test_stdio_target_skips_http_checks() -> None:
    report = await _check_stdio()
    results = _by_id(report)
    for check_id in HTTP_CHECKS:
        assert results[check_id].status is Status.SKIP
        assert results[check_id].detail in ("not an HTTP target", "not in 2025-11-25")


async def _check_stdio() -> Report:
    command = [sys.executable, "-m", "trimcp.reference"]
    with trio.fail_after(120):
        return await run_checks(connector_for(command), target=" ".join(command), revision="2025-11-25")


class BadFake(McpFake):
    """Answers notifications with 200 and a body, and unknown sessions with 400."""

    async def __call__(self, req: Req, reply: Reply) -> None:
        msg = req.json if req.method == "POST" else None
        if isinstance(msg, dict) and msg.get("method") != "initialize":
            if req.header("mcp-session-id") not in self.live:
                await reply.json({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "who?"}}, 400)
                return
            if "id" not in msg:
                await reply.json({"ok": True}, 200)
                return
        await super().__call__(req, reply)


async def test_bad_http_server_is_flagged() -> None:
    async with serve(BadFake()) as fake:
        report = await _check(fake.url, "2025-11-25")
    results = _by_id(report)
    assert results["http.notification-202"].status is Status.FAIL
    assert "200" in results["http.notification-202"].detail
    assert results["http.unknown-session"].status is Status.FAIL
    assert "400" in results["http.unknown-session"].detail
    # A never-issued id has no MUST behind it (404 is due for terminated sessions): not a MUST failure.
    assert results["http.unknown-session"].level is Level.BEST
    assert "http.unknown-session" not in {r.id for r in report.must_failures}
    # The fake checks neither Origin nor MCP-Protocol-Version.
    assert results["http.origin"].status is Status.FAIL
    assert results["http.protocol-version"].status is Status.FAIL
    # What it does right stays right.
    assert results["http.session-id"].status is Status.PASS
    assert results["http.get-stream"].status is Status.PASS
    # An ended session is just as unknown to it: 400 again, where 404 is due.
    assert results["http.delete"].status is Status.FAIL
    assert not report.ok


async def test_good_fake_passes_the_session_checks() -> None:
    async with serve(McpFake()) as fake:
        report = await _check(fake.url, "2025-11-25")
    results = _by_id(report)
    for check_id in (
        "http.notification-202",
        "http.unknown-session",
        "http.session-id",
        "http.delete",
        "http.get-stream",
        "http.content-type",
    ):
        assert results[check_id].status is Status.PASS, results[check_id]


async def test_raw_client_headers_and_bodies() -> None:
    """The run's headers go on every raw request that does not set them; an event stream is
    read up to its first JSON-RPC answer; a body cut short is judged by what arrived."""

    async def handler(req: Req, reply: Reply) -> None:
        if req.target == "/sse":
            await reply.sse_start()
            await reply.event({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
            await reply.event({"jsonrpc": "2.0", "id": 1, "result": {}})
            await trio.sleep_forever()  # the probe stops reading after the answer
        elif req.target == "/cut":
            await reply.head(200, [("Content-Type", "application/json"), ("Content-Length", "100")])
            await reply.body(b'{"jsonrpc"')
            await reply.cut()
        else:
            await reply.json({"jsonrpc": "2.0", "id": 1, "result": {}})

    raw = RawClient(10, extra_headers=(("Authorization", "Bearer run-token"), ("X-Run", "1")))
    async with serve(handler) as fake:
        base = f"http://127.0.0.1:{fake.port}"
        plain = await raw.request(base + "/json", "POST", {"Content-Type": "application/json"}, {"x": 1})
        own = await raw.request(base + "/json", "GET", {"authorization": "Bearer mine"})
        sse = await raw.request(base + "/sse", "GET", {})
        cut = await raw.request(base + "/cut", "GET", {})
    first, second = fake.requests[0], fake.requests[1]
    assert first.header("authorization") == "Bearer run-token" and first.header("x-run") == "1"
    assert second.header("authorization") == "Bearer mine" and second.header("x-run") == "1"
    assert plain.status == 200 and plain.messages == ({"jsonrpc": "2.0", "id": 1, "result": {}},)
    assert own.status == 200
    assert sse.content_type == "text/event-stream" and len(sse.messages) == 2
    assert sse.messages[1]["id"] == 1
    assert cut.status == 200 and cut.body == b'{"jsonrpc"' and cut.messages == ()
    with pytest.raises(ProbeError, match="GET /"):
        await raw.request(base + "/", "GET", {})  # the server is gone


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_listening(port: int, proc: trio.Process) -> None:
    with trio.fail_after(30):
        while True:
            assert proc.returncode is None, "trimcp serve exited"
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                await trio.sleep(0.05)
                continue
            await stream.aclose()
            return


@pytest.mark.parametrize("revision", [None, "2025-11-25"])
async def test_recorded_http_conversation_keeps_status_and_headers(nursery: trio.Nursery, revision: str | None) -> None:
    """``record_http`` (``trimcp check --record`` on a URL): every entry of the main
    conversation says which exchange carried it, with the headers the rules speak of."""
    bound: BoundHttpServer = await nursery.start(serve_http, build_server())
    with trio.fail_after(120):
        report = await run_checks(
            connector_for([bound.url], record_http=True), target=bound.url, revision=revision, request_timeout=10
        )
    assert _bad(report) == []
    entries = report.conversation
    assert entries and all("http" in e for e in entries if e["dir"] == "recv")
    sent = [e for e in entries if e["dir"] == "send" and e["http"].get("posted", True)]
    assert sent and all(e["http"]["method"] == "POST" and e["http"]["url"] == bound.url for e in sent)
    requests = [e for e in sent if "method" in e["message"] and "id" in e["message"]]
    answers = [e for e in entries if e["dir"] == "recv" and "id" in e["message"] and "method" not in e["message"]]
    assert requests and answers and all(e["http"]["via"] == "POST" for e in answers)
    # A result comes with 200; an error with 200 in the handshake era, with 200 or a 4xx in 2026.
    by_id = {e["message"]["id"]: e for e in answers}
    assert len(by_id) >= len(requests) - 2  # the harness's cancellation probes go unanswered
    for request in requests:
        answer = by_id.get(request["message"]["id"])
        if answer is None:
            continue
        assert answer["http"]["status"] == request["http"]["status"]
        if "result" in answer["message"]:
            assert request["http"]["status"] == 200, request
        else:
            assert request["http"]["status"] == 200 or (revision is None and 400 <= request["http"]["status"] < 500)
    later = requests[1:]
    if revision is None:  # stateless: every request names its method and revision, no session
        assert all(e["http"]["headers"]["mcp-method"] == e["message"]["method"] for e in requests)
        assert all("mcp-session-id" not in e["http"]["headers"] for e in sent)
    else:  # the session the initialize answer gave goes on every later request
        [init] = [e for e in answers if "protocolVersion" in e["message"].get("result", {})]
        session = init["http"]["headers"]["mcp-session-id"]
        assert later and all(e["http"]["headers"]["mcp-session-id"] == session for e in later)
        notes = [e for e in sent if "method" in e["message"] and "id" not in e["message"]]
        assert notes and all(e["http"]["status"] == 202 for e in notes)
    assert all(e["http"]["headers"]["mcp-protocol-version"] == report.revision for e in later)
    # Without the option the conversation is the message transcript alone.
    plain = await _check(bound.url, revision)
    assert plain.conversation and not any("http" in e for e in plain.conversation)


@pytest.mark.parametrize("revision", ["auto", "2025-11-25"])
async def test_cli_check_against_trimcp_serve(nursery: trio.Nursery, revision: str, tmp_path: Path) -> None:
    port = _free_port()
    proc = await nursery.start(
        lambda task_status: trio.run_process(  # noqa: ASYNC105 - nursery.start awaits it
            [*CLI, "serve", "--http", f"127.0.0.1:{port}"],
            stderr=subprocess.DEVNULL,
            check=False,
            task_status=task_status,
        )
    )
    try:
        await _wait_listening(port, proc)
        with trio.fail_after(120):
            done = await trio.run_process(
                [*CLI, "check", "--revision", revision, "--record", str(tmp_path), f"http://127.0.0.1:{port}/mcp"],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    finally:
        proc.terminate()
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    [recorded] = tmp_path.rglob("*.jsonl")  # --record keeps the HTTP evidence of a URL's conversation
    entries = [json.loads(line) for line in recorded.read_text().splitlines()]
    assert entries and all(e["http"]["via"] in ("POST", "GET") for e in entries if e["dir"] == "recv")
    assert "0 failed, 0 warnings" in out
    [origin] = [line.split() for line in out.splitlines() if line.startswith("http.origin ")]
    assert origin[2] == "pass", origin
