"""MCP Apps (io.modelcontextprotocol/ui): the sans-IO rules, the server framework's
view links, the client's read_view and the harness's apps.* checks."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from trimcp import RemoteProtocolError, apps, open_client
from trimcp._trio._groups import collapse
from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.stream import MessageStream
from trimcp.conformance import run_checks
from trimcp.conformance.model import Status
from trimcp.reference.server import build_server
from trimcp.reference.views import ECHO_VIEW
from trimcp.server import Context, Server
from trimcp.testing import connect, serve_in_process

HTML = "<!doctype html><html><body>view</body></html>"


def view(uri: str = "ui://s/v", **over: Any) -> dict[str, Any]:
    entry = {"uri": uri, "mimeType": apps.MIME_TYPE, "text": HTML, **over}
    return {"contents": [{k: v for k, v in entry.items() if v is not None}]}


# ---------------------------------------------------------------- sans-IO


def test_tool_links() -> None:
    link = apps.tool_link({"name": "t", "_meta": {"ui": {"resourceUri": "ui://s/v", "visibility": ["app"]}}})
    assert link == apps.ToolLink("ui://s/v", ("app",))
    assert apps.tool_link({"name": "t"}) is None and apps.tool_link({"name": "t", "_meta": {"x": 1}}) is None
    flat = apps.tool_link({"name": "t", "_meta": {"ui/resourceUri": "ui://s/v"}})
    assert flat is not None and flat.deprecated_key and flat.resource_uri == "ui://s/v" and not flat.problems
    # The nested key wins over the deprecated one.
    both = apps.tool_link({"_meta": {"ui": {"resourceUri": "ui://s/new"}, "ui/resourceUri": "ui://s/old"}})
    assert both is not None and both.resource_uri == "ui://s/new" and not both.deprecated_key
    for meta, problem in [
        ({"ui": {"resourceUri": "https://x/v"}}, "ui:// scheme"),
        ({"ui": {"resourceUri": 3}}, "must be a string"),
        ({"ui": {"resourceUri": "ui://v", "visibility": ["model", "user"]}}, "unknown values ['user']"),
        ({"ui": {"resourceUri": "ui://v", "visibility": "app"}}, "array of strings"),
        ({"ui": ["ui://v"]}, "must be an object"),
    ]:
        found = apps.tool_link({"_meta": meta})
        assert found is not None and any(problem in p for p in found.problems), (meta, found)


def test_model_visibility_and_declaration() -> None:
    assert apps.model_visible({"name": "t"})
    assert apps.model_visible({"_meta": {"ui": {"resourceUri": "ui://v"}}})  # default: model and app
    assert not apps.model_visible({"_meta": {"ui": {"resourceUri": "ui://v", "visibility": ["app"]}}})
    caps = {"extensions": apps.client_extension()}
    assert caps == {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    assert apps.declared(caps) and not apps.declared({}) and not apps.declared(None)
    assert not apps.declared({"extensions": {apps.EXTENSION: {}}})
    assert not apps.declared({"extensions": apps.client_extension(["text/uri-list"])})


def test_view_rules() -> None:
    assert apps.view_problems("ui://s/v", view()) == []
    blob = base64.b64encode(HTML.encode()).decode()
    assert apps.view_from_contents("ui://s/v", view(text=None, blob=blob)).html == HTML
    for result, problem in [
        ({"contents": []}, "no contents"),
        (view("ui://s/other"), "no content of resources/read has the view's URI"),
        (view(mimeType="text/html"), "mimeType is 'text/html'"),
        (view(text=None), "text, or base64 in blob"),
        (view(text=None, blob="%%%"), "text, or base64 in blob"),
        (view(text="  "), "empty"),
        (view(_meta={"ui": {"csp": {"connectDomains": ["https://a; script-src *"]}}}), "array of origins"),
        (view(_meta={"ui": {"csp": {"resourceDomains": "https://a"}}}), "array of origins"),
        (view(_meta={"ui": {"permissions": {"camera": True}}}), "permissions"),
        (view(_meta={"ui": {"prefersBorder": "yes"}}), "prefersBorder"),
        (view(_meta={"ui": {"domain": 7}}), "domain"),
        (view(_meta={"ui": "x"}), "must be an object"),
    ]:
        problems = apps.view_problems("ui://s/v", result)
        assert any(problem in p for p in problems), (result, problems)
        with pytest.raises(ValueError, match="ui://|mimeType|text|empty|_meta|contents"):
            apps.view_from_contents("ui://s/v", result)
    # A permission this version of the extension does not name is the host's to judge.
    assert apps.view_problems("ui://s/v", view(_meta={"ui": {"permissions": {"usb": {}}}})) == []


def test_content_security_policy() -> None:
    assert apps.content_security_policy(None) == apps.DEFAULT_CSP
    assert "connect-src 'none'" in apps.DEFAULT_CSP
    got = apps.view_from_contents(
        "ui://s/v",
        view(
            _meta={
                "ui": {
                    "csp": {"connectDomains": ["https://api.x"], "resourceDomains": ["https://cdn.x"]},
                    "permissions": {"camera": {}},
                    "prefersBorder": True,
                }
            }
        ),
    )
    policy = dict(d.split(" ", 1) for d in got.content_security_policy.split("; "))
    assert policy["connect-src"] == "'self' https://api.x"
    assert policy["script-src"] == "'self' 'unsafe-inline' https://cdn.x"
    assert policy["frame-src"] == "'none'" and policy["base-uri"] == "'self'" and policy["object-src"] == "'none'"
    assert got.permissions == {"camera"} and got.prefers_border is True


# ---------------------------------------------------------------- server framework and client


def _server(link: Any = "ui://s/v", view_result: str | None = HTML) -> Server:
    server = Server("apps", "1.0")

    @server.tool(ui=link)
    async def show(ctx: Context) -> str:
        """A tool with a view."""
        return "text fallback"

    @server.tool()
    async def plain(ctx: Context) -> str:
        """A tool without one."""
        return "x"

    if view_result is not None:

        @server.resource("ui://s/v", name="v", mime_type=apps.MIME_TYPE, listed=False)
        async def the_view(ctx: Context) -> str:
            return view_result

    return server


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_views_are_linked_only_for_clients_that_declared_the_extension(revision: str) -> None:
    with collapse():
        async with connect(_server(), revision=revision) as client:
            tools = {t.name: t for t in await client.list_tools()}
            assert tools["show"].meta is None  # the tool, not its link
            assert [r.uri for r in await client.list_resources()] == []  # a view is unlisted ...
            read = await client.read_resource("ui://s/v")  # ... and read like any resource
            assert read.contents[0].mime_type == apps.MIME_TYPE
        async with connect(_server(), revision=revision, extensions=apps.client_extension()) as client:
            tools = {t.name: t for t in await client.list_tools()}
            assert tools["show"].meta == {"ui": {"resourceUri": "ui://s/v"}} and tools["plain"].meta is None
            got = await client.read_view("show")
            assert got == apps.View("ui://s/v", HTML)
            with pytest.raises(ValueError, match="'plain' links no usable view"):
                await client.read_view("plain")
            with pytest.raises(ValueError, match="no tool 'nope'"):
                await client.read_view("nope")


async def test_read_view_refuses_a_view_that_breaks_the_rules() -> None:
    server = _server()
    server.resources["ui://s/v"].definition["mimeType"] = "text/html"
    with collapse():
        async with connect(server, revision="2025-11-25", extensions=apps.client_extension()) as client:
            with pytest.raises(RemoteProtocolError, match="mimeType is 'text/html'"):
                await client.read_view("show")


def test_bad_links_and_extension_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="ui:// scheme"):
        _server(link="https://x/v")
    with pytest.raises(ValueError, match="no resourceUri"):
        _server(link={"visibility": ["app"]})


@pytest.mark.parametrize("ext_id", ["ui", "/ui", "vendor/", "a b/c"])
async def test_open_client_refuses_malformed_extension_ids(ext_id: str) -> None:
    client_end, _ = memory_stream_pair()
    with pytest.raises(ValueError, match="vendor"):
        async with open_client(client_end, extensions={ext_id: {}}):
            pass


async def test_the_reference_server_offers_a_view() -> None:
    with collapse():
        async with connect(build_server(), revision="2026-07-28", extensions=apps.client_extension()) as client:
            got = await client.read_view("echo")
    assert got.uri == ECHO_VIEW and "ui/notifications/tool-result" in got.html
    assert got.content_security_policy == apps.DEFAULT_CSP


# ---------------------------------------------------------------- the harness


async def _apps_results(server: Server, revision: str = "2025-11-25") -> dict[str, Any]:
    @asynccontextmanager
    async def open_stream() -> AsyncIterator[MessageStream]:
        async with serve_in_process(server) as stream:
            yield stream

    with trio.fail_after(60):
        report = await run_checks(open_stream, target="apps", revision=revision, request_timeout=5, selection=None)
    return {r.id: r for r in report.results if r.id.startswith("apps.")}


async def test_check_passes_good_views_and_fails_broken_ones() -> None:
    good = await _apps_results(_server())
    assert {k: r.status for k, r in good.items()} == dict.fromkeys(
        ("apps.tool-link", "apps.current-key", "apps.view-exists", "apps.view-content"), Status.PASS
    )
    missing = await _apps_results(_server(view_result=None))
    assert missing["apps.view-exists"].status is Status.FAIL and "ui://s/v" in missing["apps.view-exists"].detail
    assert missing["apps.view-content"].status is Status.SKIP
    broken = _server(view_result="   ")
    broken.resources["ui://s/v"].definition["mimeType"] = "text/plain"
    bad = await _apps_results(broken)
    assert bad["apps.view-content"].status is Status.FAIL
    assert "mimeType is 'text/plain'" in bad["apps.view-content"].detail and "empty" in bad["apps.view-content"].detail
    # Links the framework would refuse to register, written into the registry directly.
    unknown = _server()
    unknown.tools["show"].ui = {"resourceUri": "ui://s/v", "visibility": ["app", "agent"]}
    bad_link = await _apps_results(unknown)
    assert bad_link["apps.tool-link"].status is Status.FAIL and "'agent'" in bad_link["apps.tool-link"].detail
    assert bad_link["apps.view-exists"].status is Status.PASS
    flat = _server()
    flat.tools["show"].ui = None
    flat.tools["show"].definition["_meta"] = {"ui/resourceUri": "ui://s/v"}
    old_key = await _apps_results(flat)
    assert old_key["apps.current-key"].status in (Status.FAIL, Status.WARN)
    assert "show" in old_key["apps.current-key"].detail and old_key["apps.tool-link"].status is Status.PASS


async def test_check_skips_a_server_without_views() -> None:
    server = Server("none", "1.0")

    @server.tool()
    async def plain(ctx: Context) -> str:
        return "x"

    results = await _apps_results(server)
    assert {r.status for r in results.values()} == {Status.SKIP}
    assert "no tool links an MCP Apps view" in results["apps.tool-link"].detail
    old = await _apps_results(_server(), revision="2025-03-26")  # tools carry no _meta before 2025-06-18
    assert {r.status for r in old.values()} == {Status.SKIP}
