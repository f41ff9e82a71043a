"""Every program in ``examples/`` runs as its docstring says, and is clean under ``mypy --strict``.

Each example is run as a user runs it: a subprocess of this checkout's Python, with the
arguments its docstring shows; the servers they talk to are the other examples (stdio) or,
for the OAuth client, a local authorization server and the MCP server it protects
(``helpers.oauth_fakes``, on 127.0.0.1), with ``$BROWSER`` standing in for the user.
The CI workflow example is run step by step by ``.ci/run-workflow`` in ``.ci/run``; here its
shape is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import yaml
from helpers.h11_fake import serve
from helpers.oauth_fakes import AuthServer, ProtectedMcp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HELPERS = ROOT / "tests" / "helpers"


def run_example(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_every_example_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    env_before = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = str(ROOT)  # the checkout's trimcp, however it is installed
    try:
        out, err, status = api.run(["--strict", "--cache-dir", str(tmp_path / "cache"), str(EXAMPLES)])
    finally:
        if env_before is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = env_before
    assert status == 0, out + err
    assert f"in {len(list(EXAMPLES.glob('*.py')))} source files" in out


def test_the_server_example_passes_trimcp_check_with_tools_resources_and_prompts() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trimcp", "check", "--format", "json", "--", sys.executable, "examples/server.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["server_info"]["name"] == "notes"
    assert report["summary"]["must_failures"] == 0 and report["summary"]["fail"] == 0
    status = {c["id"]: c["status"] for c in report["checks"]}
    for check in ("tools.list", "tools.structured-output", "resources.read", "resources.templates", "prompts.get"):
        assert status[check] == "pass", check


def test_the_task_example_runs_a_tool_as_a_task() -> None:
    out = run_example("examples/task_server.py", "--client", "--pages", "2").stdout.splitlines()
    assert out[0].startswith("task ") and out[0].split()[2] == "working"
    assert out[1:] == ["report of 2 pages ready", "report of 1 pages ready"]


def test_the_pool_agent_lists_model_facing_tools_and_calls_them_by_those_names() -> None:
    done = run_example("examples/pool_agent.py")
    tools = json.loads(done.stdout)
    assert [t["name"] for t in tools] == [
        "mcp__notes__list_notes",
        "mcp__notes__add_note",
        "mcp__notes__stats",
        "mcp__reports__build_report",
    ]
    assert all(t["description"] and t["input_schema"]["type"] == "object" for t in tools)
    assert "notes: connected (3 tools)" in done.stderr and "reports: connected (1 tools)" in done.stderr
    assert "saved 'pool' (24 characters)" in done.stderr and "report of 2 pages ready" in done.stderr


async def _oauth_example(*extra: str, auth: AuthServer) -> tuple[str, ProtectedMcp]:
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            env = dict(os.environ, BROWSER=f"{sys.executable} {HELPERS / 'redirect_browser.py'} %s")
            extra = tuple(a.replace("{issuer}", auth.issuer) for a in extra)
            with trio.fail_after(60):
                done = await trio.run_process(
                    [sys.executable, "examples/oauth_client.py", mcp_server.url, "--call", "read_it", *extra],
                    cwd=ROOT,
                    env=env,
                    capture_stdout=True,
                    capture_stderr=True,
                    check=False,
                )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Open this URL in a browser to authorize:" in done.stderr
    return done.stdout.decode(), mcp


async def test_the_oauth_example_registers_authorizes_with_pkce_and_calls_a_tool() -> None:
    auth = AuthServer(redirect=None)
    out, mcp = await _oauth_example(auth=auth)
    assert out.splitlines() == ["connected to fake (2025-11-25)", "tool: read_it", "tool: write_it", "read_it: ok {}"]
    (request,) = auth.auth_requests
    assert request["code_challenge_method"] == "S256" and request["redirect_uri"].startswith("http://127.0.0.1:")
    assert [form["grant_type"] for form in auth.token_requests] == ["authorization_code"]
    assert list(auth.clients) == ["client-1"]  # dynamically registered
    assert mcp.seen[0] == "POST /mcp"  # the first request went without a token and got 401


async def test_the_oauth_example_uses_a_pre_registered_client_for_its_issuer() -> None:
    auth = AuthServer(redirect=None)
    auth.clients["my-app"] = "my-secret"
    out, _ = await _oauth_example(
        "--client-id", "my-app", "--client-secret", "my-secret", "--issuer", "{issuer}", auth=auth
    )
    assert "tool: read_it" in out
    assert list(auth.clients) == ["my-app"]  # no registration
    assert auth.token_requests[0]["client_id"] == "my-app"


def test_the_ci_workflow_builds_trimcp_from_the_checkout_and_checks_an_example() -> None:
    workflow = yaml.safe_load((EXAMPLES / "ci" / "trimcp-check.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["conformance"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert runs[0].split() == ["python", "-m", "pip", "install", "."]  # trimcp from the checkout
    check = runs[1].split()
    assert (
        check[0] == "trimcp"
        and check[1] == "check"
        and check[check.index("--") + 1 :]
        == [
            "python",
            "examples/server.py",
        ]
    )
    assert (ROOT / check[check.index("--expected-failures") + 1]).is_file()
    # the step .ci/run-workflow stands in for are the only actions used
    assert [s["uses"].split("@")[0] for s in steps if "uses" in s] == [
        "actions/checkout",
        "actions/setup-python",
        "mikepenz/action-junit-report",
    ]
