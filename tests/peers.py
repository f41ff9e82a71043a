"""Command lines for the third-party MCP peers trimcp's tests and benchmarks talk to.

Theory of operation: trimcp is tested against servers it did not write ("real peers over
mocks").  Each ``*_argv()`` returns the argv that starts one peer speaking MCP on stdio, or
``None`` when that peer is not installed here, so a test can skip instead of failing::

    argv = peers.require(peers.everything_stdio_argv(), "server-everything")   # skips if None
    async with trimcp.open_client(argv, env=peers.peer_env()) as client: ...

Peers (install them with ``.ci/install-peers.sh`` and ``pip install -e '.[test]'``):

- ``everything_stdio_argv()``  @modelcontextprotocol/server-everything (npm, Node >= 20), from
  ``$TRIMCP_NPM_PREFIX`` (default ``<repo>/.ci/cache/npm``).  Sends server->client requests
  only for capabilities the client declared: ``roots/list`` ~350 ms after
  ``notifications/initialized`` when the client has ``roots``; ``sampling/createMessage`` from
  tool ``trigger-sampling-request``; ``elicitation/create`` from ``trigger-elicitation-request``
  (form) and ``trigger-url-elicitation`` (url).  Those tools exist only when the matching
  capability was declared.
- ``everything_http_argv(transport, port)`` + ``everything_http_env(port)``: the same server
  on Streamable HTTP (``/mcp``) or HTTP+SSE (``/sse``), pinned to 127.0.0.1 by a preload.
- ``time_server_argv()``  mcp-server-time (PyPI): tools ``get_current_time``, ``convert_time``.
- ``sdk_server_argv()``  tests/servers/mcp_sdk_server.py, built on the official ``mcp`` SDK 2.x.
- ``filesystem_argv(root)`` / ``memory_argv()``  @modelcontextprotocol/server-filesystem (serves
  only the folders it is given) and server-memory (a knowledge graph kept in
  ``$MEMORY_FILE_PATH``: give it a temp file), npm, pinned beside server-everything.
- ``fetch_server_argv()``  mcp-server-fetch (PyPI).  Its ``fetch`` tool reaches any URL: call it
  only on a loopback URL you serve yourself.
- ``git_server_argv(repo)``  mcp-server-git (PyPI) confined to ``repo`` (make a temp repo).
- ``fastmcp_argv(http=False)``  tests/servers/fastmcp_server.py, from the fastmcp venv
  (``$TRIMCP_FASTMCP_VENV``, default ``<repo>/.venv-fastmcp``; ``benchmarks/bench_server.py
  --setup`` makes it).  ``--http`` binds 127.0.0.1 and prints ``PORT <n>``.
- ``raw_server_argv()``  benchmarks/raw_server.py, a dependency-free floor server.

Nothing here imports trimcp, so benchmarks can use it too.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NoReturn

REPO = Path(__file__).resolve().parents[1]
SERVERS = REPO / "tests" / "servers"
EVERYTHING_VERSION = "2026.8.31"  # keep in step with .ci/npm/package.json
_EVERYTHING_JS = ("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")


def npm_prefix() -> Path:
    """Where .ci/install-peers.sh put the npm peers."""
    env = os.environ.get("TRIMCP_NPM_PREFIX")
    return Path(env) if env else REPO / ".ci" / "cache" / "npm"


def _node_major(node: str) -> int:
    try:
        out = subprocess.run(
            [node, "-p", "process.versions.node.split('.')[0]"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        return int(out.strip())
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0


@functools.cache
def node_executable() -> str | None:
    """A Node new enough for the npm peers: $TRIMCP_NODE, else `node` on PATH, else the one
    .ci/install-peers.sh put in <prefix>/node22.  None when there is none."""
    explicit = os.environ.get("TRIMCP_NODE")
    if explicit:
        return explicit
    need = int(os.environ.get("TRIMCP_NODE_MIN_MAJOR", "20"))
    candidates = [
        shutil.which("node"),
        str(npm_prefix() / "node22" / "node_modules" / ".bin" / "node"),
    ]
    for node in candidates:
        if node and os.access(node, os.X_OK) and _node_major(node) >= need:
            return node
    return None


@functools.cache
def everything_js() -> Path | None:
    """server-everything's entry point; installed on first use (pinned, repo-local) when npm
    is available, so the README's single test command covers the npm peers too."""
    path = npm_prefix().joinpath(*_EVERYTHING_JS)
    if not path.is_file() and shutil.which("npm"):
        subprocess.run(
            ["bash", str(REPO / ".ci" / "install-peers.sh")],
            env={**os.environ, "TRIMCP_SKIP_PEER_SMOKE": "1"},
            stdout=subprocess.DEVNULL,
            timeout=600,
            check=False,
        )
    return path if path.is_file() else None


def everything_stdio_argv() -> list[str] | None:
    """server-everything on stdio.  Startup ~0.25 s; prints one line to stderr."""
    node, js = node_executable(), everything_js()
    if node is None or js is None:
        return None
    return [node, str(js), "stdio"]


def everything_http_argv(
    transport: Literal["streamableHttp", "sse"] = "streamableHttp",
) -> list[str] | None:
    """server-everything on HTTP; start it with ``env=everything_http_env(port)``.

    Streamable HTTP serves ``http://127.0.0.1:<port>/mcp``; HTTP+SSE serves ``GET /sse`` and
    ``POST /message``.  The package binds every interface and has no host option, so the
    ``loopback_only.mjs`` preload pins ``listen()`` to 127.0.0.1.  It logs every request to
    stderr; wait for "listening on port" / "running on port" there, or poll the port.
    """
    node, js = node_executable(), everything_js()
    if node is None or js is None:
        return None
    return [node, "--import", (SERVERS / "loopback_only.mjs").as_uri(), str(js), transport]


def everything_http_env(port: int) -> dict[str, str]:
    env = peer_env()
    env["PORT"] = str(port)
    env["TRIMCP_BIND_HOST"] = "127.0.0.1"
    return env


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def time_server_argv(local_timezone: str = "UTC") -> list[str] | None:
    """mcp-server-time on stdio.  Startup ~0.7 s.  ``--local-timezone`` keeps answers
    independent of the host (without it the local zone comes from tzlocal)."""
    if not _importable("mcp_server_time"):
        return None
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", local_timezone]


def sdk_server_argv(
    transport: Literal["stdio", "streamable-http", "sse"] = "stdio",
    port: int | None = None,
    extra: Sequence[str] = (),
) -> list[str] | None:
    """tests/servers/mcp_sdk_server.py (official mcp SDK 2.x).  Startup ~0.6 s.

    For the HTTP transports pass a free ``port``; it binds 127.0.0.1.  ``extra`` may add
    ``--json-response`` / ``--stateless`` for streamable-http.
    """
    if not _importable("mcp.server.mcpserver"):
        return None
    argv = [sys.executable, str(SERVERS / "mcp_sdk_server.py"), "--transport", transport]
    if transport != "stdio":
        if port is None:
            raise ValueError("HTTP transports need a port")
        argv += ["--host", "127.0.0.1", "--port", str(port)]
    return argv + list(extra)


def _npm_js(package: str) -> Path | None:
    if everything_js() is None:  # installs every npm peer when npm is there
        return None
    path = npm_prefix() / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"
    return path if path.is_file() else None


def filesystem_argv(root: str | os.PathLike[str]) -> list[str] | None:
    """server-filesystem on stdio, allowed to touch ``root`` only (give it a temp folder)."""
    node, js = node_executable(), _npm_js("server-filesystem")
    if node is None or js is None:
        return None
    return [node, str(js), str(root)]


def memory_argv() -> list[str] | None:
    """server-memory on stdio; start it with ``MEMORY_FILE_PATH`` set to a temp file, or it
    writes beside its own package."""
    node, js = node_executable(), _npm_js("server-memory")
    if node is None or js is None:
        return None
    return [node, str(js)]


def fetch_server_argv() -> list[str] | None:
    """mcp-server-fetch on stdio.  ``--ignore-robots-txt`` keeps a call on a loopback URL to
    one request; never call its tool on anything but 127.0.0.1."""
    if not _importable("mcp_server_fetch"):
        return None
    return [sys.executable, "-m", "mcp_server_fetch", "--ignore-robots-txt"]


def git_server_argv(repo: str | os.PathLike[str]) -> list[str] | None:
    """mcp-server-git on stdio, confined to the git repository ``repo``."""
    if not _importable("mcp_server_git"):
        return None
    return [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)]


def fastmcp_python() -> str | None:
    """The interpreter of the fastmcp venv, or None when there is none."""
    venv = Path(os.environ.get("TRIMCP_FASTMCP_VENV", str(REPO / ".venv-fastmcp")))
    python = venv / "bin" / "python"
    return str(python) if os.access(python, os.X_OK) else None


def fastmcp_argv(http: bool = False) -> list[str] | None:
    """tests/servers/fastmcp_server.py (stdio, or Streamable HTTP on a free 127.0.0.1 port
    announced as ``PORT <n>`` on stdout)."""
    python = fastmcp_python()
    if python is None:
        return None
    return [python, str(SERVERS / "fastmcp_server.py"), *(["--http"] if http else [])]


def raw_server_argv() -> list[str]:
    """benchmarks/raw_server.py: always available (plain Python).  Startup ~25 ms."""
    return [sys.executable, str(REPO / "benchmarks" / "raw_server.py")]


def peer_env() -> dict[str, str]:
    """The environment to start a peer with: ours, plus unbuffered UTF-8 Python I/O."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("PYTHONWARNINGS", None)  # pytest's warnings-as-errors must not leak into peers
    return env


def require(argv: list[str] | None, what: str) -> list[str]:
    """Return ``argv`` or skip the calling test when the peer is not installed."""
    if argv is None:
        _skip(f"{what} is not installed (run .ci/install-peers.sh / pip install -e '.[test]')")
    return argv


def _skip(reason: str) -> NoReturn:
    import pytest

    pytest.skip(reason)
    raise AssertionError("unreachable")  # pytest.skip raises


__all__ = [
    "EVERYTHING_VERSION",
    "everything_http_argv",
    "everything_http_env",
    "everything_js",
    "everything_stdio_argv",
    "fastmcp_argv",
    "fastmcp_python",
    "fetch_server_argv",
    "filesystem_argv",
    "git_server_argv",
    "memory_argv",
    "node_executable",
    "npm_prefix",
    "peer_env",
    "raw_server_argv",
    "require",
    "sdk_server_argv",
    "time_server_argv",
]
