"""HTTP header names are spelled once (``_sansio/http/header_names.py``): sent canonical,
compared lower-cased."""

from __future__ import annotations

import ast

from repo_paths import PACKAGE

from trimcp._sansio import jsonrpc as rpc
from trimcp._sansio.http import header_names as hn
from trimcp._sansio.http.client.plan import HttpPlanner
from trimcp._sansio.http.server.routing import RequestHead

PACKAGE = PACKAGE
NAMES = {hn.SESSION_HEADER, hn.VERSION_HEADER, hn.LAST_EVENT_ID_HEADER, hn.METHOD_HEADER, hn.NAME_HEADER}


def test_the_client_sends_the_canonical_spelling() -> None:
    planner = HttpPlanner("http://example.test/mcp")
    planner.session_assigned("s-1")
    planner.initialized("2025-11-25")
    plan = planner.plan_post(rpc.Request(1, "tools/call", {"name": "echo", "arguments": {}}))
    names = {name for name, _ in plan.request.headers}
    assert {hn.SESSION_HEADER, hn.VERSION_HEADER, hn.METHOD_HEADER, hn.NAME_HEADER} <= names
    assert not {n.lower() for n in NAMES} & names  # no lower-case copy besides
    resume = planner.plan_get(last_event_id="7")
    assert (hn.LAST_EVENT_ID_HEADER, "7") in resume.headers


def test_a_receiver_matches_any_casing() -> None:
    for spelled in ("mcp-session-id", "MCP-SESSION-ID", "Mcp-Session-Id"):
        head = RequestHead.build("POST", "/mcp", [(spelled, "abc"), ("mcp-protocol-VERSION", "2025-11-25")])
        assert head.get(hn.SESSION_HEADER) == "abc"
        assert head.get(hn.VERSION_HEADER) == "2025-11-25"


def test_no_other_module_spells_a_header_name() -> None:
    wanted = {n.lower() for n in NAMES} | {hn.PARAM_HEADER_PREFIX.lower()}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "header_names.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in wanted:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value!r}")
    assert found == []
