"""No false alarm on a correct server, in any era combination (issue 27, item 1).

Each test reproduces one false alarm ``trimcp check`` raised on a real, correct server with a
fake that behaves like it on the wire, and shows the check now judges only the servers its
sentence is about; a fake that really breaks the sentence is still caught.  Loopback only;
every run bounded in time.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import trio
from helpers.bad_http import LegacyFake
from helpers.bad_http26 import Exchange, Stateless26, serve26, serving
from helpers.dual_era_http import DualEra, serve_dual
from helpers.h11_fake import Reply, Req, serve
from repo_paths import REPO

from trimcp._errors import McpError
from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.revisions import HANDSHAKE_VERSIONS
from trimcp._trio.stream import MessageStream
from trimcp.conformance import run_checks
from trimcp.conformance.checks.prompt_args import guess
from trimcp.conformance.checks.stdio import check_shutdown
from trimcp.conformance.checks.versions import Initialize, Offer, ServerVersions
from trimcp.conformance.connectors import connector_for
from trimcp.conformance.model import Report, Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Results
from trimcp.conformance.runner import TargetUnreachable
from trimcp.conformance.selection import Selection
from trimcp.server import Context, Server
from trimcp.testing import serve_in_process

REPO = REPO
VERSION_CHECKS = (
    "stateless.unsupported-version",
    "http26.missing-version",
    "http26.legacy-headers",
    "versioning.initialize-error",
)


async def _check(url: str) -> dict[str, tuple[Status, str]]:
    with trio.fail_after(120):
        report: Report = await run_checks(connector_for([url]), target=url, request_timeout=5, connect_timeout=5)
    return {r.id: (r.status, r.detail) for r in report.results}


def _flagged(rows: dict[str, tuple[Status, str]], ids: tuple[str, ...] = VERSION_CHECKS) -> dict[str, str]:
    return {c: rows[c][1] for c in ids if rows[c][0] in (Status.FAIL, Status.WARN)}


# --------------------------------------------------------------------------- dual-era servers


async def test_dual_era_server_gets_no_version_false_alarm() -> None:
    async with serve_dual("dual-era") as fake:
        rows = await _check(fake.url)
    assert _flagged(rows) == {}
    # Judged, not merely skipped: the unknown revision still has to get -32022 ...
    assert rows["stateless.unsupported-version"][0] is Status.PASS
    assert "which initialize showed it implements" in rows["stateless.unsupported-version"][1]
    # ... and the three sentences about modern-only servers say why they do not apply.
    for check in ("http26.missing-version", "http26.legacy-headers", "versioning.initialize-error"):
        assert rows[check][0] is Status.SKIP, rows[check]
        assert "initialize offering" in rows[check][1] or "serves 2025-03-26" in rows[check][1]
    assert "serves 2025-03-26 clients" in rows["http26.missing-version"][1]


# --------------------------------------------------------------------------- modern-only servers


async def test_modern_only_server_is_still_judged() -> None:
    async with serve26("good") as fake:
        rows = await _check(fake.url)
    assert rows["stateless.unsupported-version"][0] is Status.PASS
    assert "2025-11-25" in rows["stateless.unsupported-version"][1]  # the known, unserved revision
    assert rows["http26.missing-version"][0] is Status.PASS
    assert rows["http26.legacy-headers"][0] is Status.PASS
    # Its initialize error (-32020, header missing) names no revision: the SHOULD is judged.
    assert rows["versioning.initialize-error"][0] is Status.WARN
    assert "does not name 2026-07-28" in rows["versioning.initialize-error"][1]


async def test_modern_only_server_mishandling_old_versions_fails() -> None:
    async with serve_dual("modern-only-missing-session") as fake:
        rows = await _check(fake.url)
    status, detail = rows["stateless.unsupported-version"]
    assert status is Status.FAIL, detail
    assert "declaring 2025-11-25" in detail and "Missing session ID" in detail


async def test_modern_only_server_taking_headerless_requests_fails() -> None:
    async with serve26("missing-version-ok") as fake:
        rows = await _check(fake.url)
    assert rows["http26.missing-version"][0] is Status.FAIL


async def test_modern_only_server_minting_sessions_warns() -> None:
    async with serve26("issues-session-id") as fake:
        rows = await _check(fake.url)
    assert rows["http26.legacy-headers"][0] is Status.WARN


# --------------------------------------------------------------------------- the real SDK


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")
async def test_official_sdk_over_streamable_http() -> None:
    port = _free_port()
    command = [
        sys.executable,
        str(REPO / "tests" / "servers" / "mcp_sdk_server.py"),
        "--transport",
        "streamable-http",
        "--port",
        str(port),
    ]
    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            functools.partial(
                trio.run_process, command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
            )
        )
        try:
            with trio.fail_after(30):
                while True:
                    try:
                        await (await trio.open_tcp_stream("127.0.0.1", port)).aclose()
                        break
                    except OSError:
                        await trio.sleep(0.2)
            rows = await _check(f"http://127.0.0.1:{port}/mcp")
        finally:
            server.terminate()
    assert _flagged(rows) == {}
    assert rows["stateless.unsupported-version"][0] is Status.PASS


# --------------------------------------------------------------------------- Host allow-list


class _LocalhostOnly(Stateless26):
    """The SDK's DNS-rebinding protection: a Host not on the allow-list gets 421."""

    async def handle(self, x: Exchange, method: str, raw: list[tuple[str, bytes]], body: bytes) -> None:
        if (self.header(raw, "Host") or "").startswith("127.0.0.1"):
            await x.status(421)
            return
        await super().handle(x, method, raw, body)


async def test_host_refused_is_could_not_check_with_a_hint() -> None:
    async with serving(_LocalhostOnly()) as fake:
        with pytest.raises(TargetUnreachable) as caught, trio.fail_after(30):
            await run_checks(connector_for([fake.url]), target=fake.url, request_timeout=5, connect_timeout=5)
    assert "refused Host 127.0.0.1" in str(caught.value)
    assert f"try http://localhost:{fake.port}/mcp" in str(caught.value)


# --------------------------------------------------------------------------- HTTP+SSE probes


class _EarlyRequestLegacy(LegacyFake):
    """A 2024-11-05 HTTP+SSE server that asks ``roots/list`` right after its initialize answer,
    before the client's initialized notification (the SHOULD NOT of lifecycle.before-initialize)."""

    async def _post(self, req: Req, reply: Reply) -> None:
        await super()._post(req, reply)
        msg = _parsed(req.body)
        if isinstance(msg, dict) and msg.get("method") == "initialize":
            sid = parse_qs(urlsplit(req.target).query).get("session_id", [""])[0]
            self.sessions[sid].send_nowait({"jsonrpc": "2.0", "id": "early", "method": "roots/list"})


async def _legacy_run(fake: LegacyFake) -> tuple[dict[str, tuple[Status, str]], list[Req]]:
    async with serve(fake) as server:
        fake.port = server.port
        rows = await _check(f"http://127.0.0.1:{server.port}/sse")
    return rows, server.requests


async def test_http_sse_probes_post_to_the_announced_endpoint() -> None:
    rows, requests = await _legacy_run(LegacyFake())
    # Only the main connection tries Streamable HTTP on the SSE URL (405) and falls back (the
    # unauthenticated probe of the auth checks is a raw POST there too); every probe connection
    # after it opens the SSE stream and posts to the endpoint it announces.
    posted = [r.json["method"] for r in requests if r.method == "POST" and urlsplit(r.target).path == "/sse"]
    assert set(posted) == {"server/discover", "initialize"}, posted
    assert not [c for c, (_, detail) in rows.items() if "HTTP 405" in detail]
    assert rows["lifecycle.before-initialize"][0] is Status.PASS, rows["lifecycle.before-initialize"]
    # The early request of the before-initialize probe reached the server this time.
    endpoint = [_parsed(r.body) for r in requests if r.method == "POST" and urlsplit(r.target).path == "/messages"]
    assert any(isinstance(m, dict) and m.get("id") == "neg-1" and m["method"] == "tools/list" for m in endpoint)
    # ... and so did the malformed-input probes, on that same endpoint.
    assert None in endpoint


def _parsed(body: bytes) -> Any:
    """The JSON a body holds, ``None`` for the malformed ones the negative probes send."""
    try:
        return json.loads(body)
    except ValueError:
        return None


async def test_http_sse_server_asking_before_initialized_still_warns() -> None:
    rows, _ = await _legacy_run(_EarlyRequestLegacy())
    status, detail = rows["lifecycle.before-initialize"]
    assert status is Status.WARN and "roots/list before the initialized" in detail, (status, detail)


# --------------------------------------------------------------------------- prompt arguments


def _prompt_server() -> Server:
    """Like server-everything's ``resource-prompt``: an id that must be a positive integer
    (-32603 otherwise), and a type the server completes."""
    server = Server("prompt-fake", "1")

    @server.prompt(
        "resource-prompt",
        arguments=[
            {"name": "resourceType", "description": "Type of resource to fetch", "required": True},
            {"name": "resourceId", "description": "ID of the text resource to fetch", "required": True},
        ],
    )
    async def resource_prompt(ctx: Context, resourceType: str, resourceId: str) -> str:
        if not resourceId.isdigit() or int(resourceId) < 1:
            raise McpError(rpc.INTERNAL_ERROR, f"Invalid resourceId: {resourceId}. Must be a finite positive integer.")
        return f"{resourceType} resource {resourceId}"

    @server.completion("ref/prompt", "resource-prompt", "resourceType")
    async def complete_type(ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        return ["Text", "Blob"]

    return server


async def _prompt_rows(server: Server) -> dict[str, tuple[Status, str]]:
    @asynccontextmanager
    async def connect() -> AsyncIterator[MessageStream]:
        async with serve_in_process(server) as stream:
            yield stream

    with trio.fail_after(60):
        report = await run_checks(
            connect,
            target="prompt fake",
            request_timeout=5,
            connect_timeout=5,
            selection=Selection(only=("prompts.*",)),
        )
    return {r.id: (r.status, r.detail) for r in report.results}


@pytest.mark.parametrize(
    ("name", "description", "value"),
    [
        ("resourceId", "ID of the text resource to fetch", "1"),
        ("count", "How many items (1-100)", "1"),
        ("page", "Page number", "1"),
        ("level", "Range 3 to 9", "3"),
        ("verbose", "true/false", "true"),
        ("format", "One of: json, text", "json"),
        ("city", "Name of the city", "test"),
        ("identity", "Who you are", "test"),
    ],
)
def test_argument_values_follow_the_servers_hints(name: str, description: str, value: str) -> None:
    assert guess(name, description) == value


async def test_prompt_argument_the_server_describes_as_an_id_is_not_test() -> None:
    rows = await _prompt_rows(_prompt_server())
    status, detail = rows["prompts.get"]
    # fetched with resourceType=Text (completed) and resourceId=1 (the description says ID)
    assert (status, detail) == (Status.PASS, "fetched 1 prompts")


async def test_made_up_arguments_refused_are_skipped_not_warned() -> None:
    server = Server("token-only", "1")

    @server.prompt("token-prompt", arguments=[{"name": "token", "description": "An opaque token", "required": True}])
    async def token_prompt(ctx: Context, token: str) -> str:
        raise McpError(rpc.INTERNAL_ERROR, f"Invalid token: {token}")

    status, detail = (await _prompt_rows(server))["prompts.get"]
    assert status is Status.SKIP, (status, detail)
    assert detail == (
        "token-prompt: the server refused the arguments the harness made up (token=test): Invalid token: test"
    )


async def test_broken_prompt_is_still_judged() -> None:
    plain = Server("no-arguments", "1")

    @plain.prompt("plain", arguments=[])
    async def boom(ctx: Context) -> str:
        raise McpError(rpc.INTERNAL_ERROR, "boom")

    status, detail = (await _prompt_rows(plain))["prompts.get"]
    assert status is Status.FAIL and detail == "plain : [-32603] boom", (status, detail)

    # The server's own suggestion refused with -32603: nothing was made up, it is worth a warn.
    suggested = Server("suggested", "1")

    @suggested.prompt("suggested", arguments=[{"name": "kind", "description": "a kind", "required": True}])
    async def refuses(ctx: Context, kind: str) -> str:
        raise McpError(rpc.INTERNAL_ERROR, "boom")

    @suggested.completion("ref/prompt", "suggested", "kind")
    async def complete_kind(ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        return ["first"]

    status, detail = (await _prompt_rows(suggested))["prompts.get"]
    assert status is Status.WARN and detail == "suggested {'kind': 'first'}: [-32603] boom", (status, detail)


# --------------------------------------------------------------------------- stdio shutdown

ROOTS = str(REPO / "tests" / "helpers" / "roots_stdio.py")


async def _stdio_rows(*args: str, only: tuple[str, ...] = ("stdio.shutdown",)) -> dict[str, tuple[Status, str]]:
    command = [sys.executable, ROOTS, *args]
    with trio.fail_after(60):
        report = await run_checks(
            connector_for(command),
            target=" ".join(command),
            request_timeout=5,
            connect_timeout=5,
            selection=Selection(only=only),
        )
    return {r.id: (r.status, r.detail) for r in report.results}


@pytest.mark.parametrize("when", [["--when", "initialized"], ["--when", "each-request", "--delay", "0.05"]])
async def test_server_asking_roots_before_it_exits_is_answered_first(when: list[str]) -> None:
    # It asks roots/list after its last answer and exits at EOF only once answered: the harness
    # lets it go quiet (answering) before closing stdin.
    assert (await _stdio_rows(*when))["stdio.shutdown"] == (Status.PASS, "exit status 0")


async def test_server_ignoring_eof_still_warns() -> None:
    rows = await _stdio_rows("--when", "initialized", "--on-eof", "ignore")
    assert rows["stdio.shutdown"] == (Status.WARN, "needed SIGINT after stdin closed")


class _Exited:
    """What check_shutdown reads off a stdio stream once the process is gone."""

    def __init__(self, signals: list[str]) -> None:
        self.signals_sent = signals
        self.returncode = -2 if signals else 0


def test_request_pending_at_shutdown_leaves_the_exit_unjudged() -> None:
    def judged(signals: list[str], answered: bool) -> tuple[Status, str]:
        recording = RecordingStream(_Exited(signals))  # type: ignore[arg-type]
        recording.received.append(b'{"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}')
        if answered:
            recording.sent.append(rpc.Response("r1", {"roots": []}))
        rec = Results("2025-11-25")
        check_shutdown(rec, recording)
        found = rec.results["stdio.shutdown"]
        return found.status, found.detail

    assert judged(["SIGINT"], answered=False) == (Status.SKIP, "a server request (roots/list) was pending at shutdown")
    assert judged(["SIGINT"], answered=True) == (Status.WARN, "needed SIGINT after stdin closed")
    assert judged([], answered=False) == (Status.PASS, "exit status 0")


# --------------------------------------------------------------------------- echoing server


async def test_echoing_server_does_not_pass_connect() -> None:
    # cat hands every line back: the client's request (which the client refuses), then the
    # client's own error, which has the request's id but is no answer from the server.
    with trio.fail_after(60):
        report = await run_checks(connector_for(["cat"]), target="cat", request_timeout=5, connect_timeout=5)
    rows = {r.id: (r.status, r.detail) for r in report.results}
    status, detail = rows["lifecycle.connect"]
    assert status is Status.FAIL and "only copies of the client's own messages came back" in detail, (status, detail)
    assert rows["schema.messages"][0] is Status.FAIL  # (the echoed request, as before)
    # Nor does jsonrpc.ids pass on the echoed error: it answers nothing.
    status, detail = rows["jsonrpc.ids"]
    assert status is Status.SKIP and "copies of the client's own messages" in detail, (status, detail)


REFUSER = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" in msg and "method" in msg:
        error = {"code": -32602, "message": "no such protocol version"}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
"""


async def test_server_refusing_initialize_with_its_own_error_still_connects() -> None:
    # The control: an error the server wrote is its answer (lifecycle.initialize judges it).
    command = [sys.executable, "-c", REFUSER]
    with trio.fail_after(60):
        report = await run_checks(connector_for(command), target="refuser", request_timeout=5, connect_timeout=5)
    rows = {r.id: (r.status, r.detail) for r in report.results}
    assert rows["lifecycle.connect"] == (Status.PASS, "the first request got a JSON-RPC answer")
    assert rows["lifecycle.initialize"][0] is Status.FAIL


# --------------------------------------------------------------------------- version probe cost


def _implementing(*versions: str) -> tuple[list[str], Initialize]:
    offered: list[str] = []

    async def initialize(version: str) -> Offer:
        offered.append(version)
        if not versions:
            return Offer(version, error={"code": -32601, "message": "initialize"})
        return Offer(version, chosen=version if version in versions else max(versions))

    return offered, initialize


@pytest.mark.parametrize(
    ("implemented", "known", "offers"),
    [
        (HANDSHAKE_VERSIONS, None, ["2025-11-25", "2024-11-05"]),  # the SDK: all, two offers tell
        (("2025-03-26", "2025-06-18", "2025-11-25"), "2024-11-05", ["2025-11-25", "2024-11-05"]),
        ((), "2025-11-25", ["2025-11-25"]),  # modern-only: one refused offer
        (("2024-11-05",), "2025-11-25", ["2025-11-25"]),
    ],
)
async def test_known_unimplemented_version_at_two_offers_at_most(
    implemented: tuple[str, ...],
    known: str | None,
    offers: list[str],
) -> None:
    offered, initialize = _implementing(*implemented)
    versions = ServerVersions.of(["2026-07-28"], "2026-07-28", initialize)
    assert await versions.known_unimplemented() == known
    # ... and the dual-era question asked along the way is not asked again.
    assert await versions.serves_legacy() is bool(implemented)
    assert offered == offers


class _CountingDual(DualEra):
    def __init__(self) -> None:
        super().__init__("dual-era")
        self.offered: list[str] = []

    async def handle(self, x: Exchange, method: str, raw: list[tuple[str, bytes]], body: bytes) -> None:
        try:
            msg = json.loads(body) if method == "POST" and body else {}
        except ValueError:
            msg = {}
        if isinstance(msg, dict) and msg.get("method") == "initialize":
            self.offered.append(msg["params"]["protocolVersion"])
        await super().handle(x, method, raw, body)


async def test_dual_era_server_is_asked_two_revisions_not_four() -> None:
    async with serving(_CountingDual()) as fake:
        rows = await _check(fake.url)
    status, detail = rows["stateless.unsupported-version"]
    assert status is Status.PASS and "(2024-11-05)" in detail, detail  # the known revision it lacks
    # The revisions between the ends are not offered (the raw HTTP probes of http_stateless make
    # their own offers, as a legacy client would: 2025-03-26 is theirs).
    assert "2025-06-18" not in fake.offered and fake.offered.count("2024-11-05") == 1, fake.offered


def test_a_hostile_description_costs_no_more_than_its_first_lines() -> None:
    # _RANGE backtracks over a run of digits with no separator: quadratic in its length.  Only
    # the start of a peer's description is read, so 10**6 digits cost what 300 do.
    assert guess("n", "7" * 1_000_000) == "test"
    assert guess("n", "x" * 400 + " integer") == "test"  # (past what is read)
