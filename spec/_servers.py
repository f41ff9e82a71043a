"""The servers ``spec/record.py`` records, and what it asks each of them.

Theory of operation: a ``Server`` says how to start one peer on each transport it has
(stdio always; Streamable HTTP and 2024-11-05 HTTP+SSE where the peer serves them, always
bound to 127.0.0.1) and which calls exercise it (MCP server/tools, server/resources,
server/prompts, basic/utilities progress and cancellation, client/sampling, client/elicitation,
client/roots).  Everything a peer needs on disk (a git repository, a folder, a memory file)
lives in one temporary folder whose path the recorder replaces with ``<tmp>``; nothing here
reaches beyond loopback.  Tools that would (server-everything's ``gzip-file-as-resource``
fetches a URL, ``get-env`` prints the environment) are never called.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import peers

Argv = list[str]
Env = dict[str, str]


@attrs.define
class Launch:
    """One way to start a server: its argv and env, and for HTTP the URL to connect to."""

    argv: Argv
    env: Env
    url: str | None = None
    #: "stdio", "streamable-http" or "sse".
    transport: str = "stdio"


@attrs.define
class Server:
    name: str
    stdio: Callable[[Path], Launch | None]
    #: ``(tmp, port) -> Launch`` for Streamable HTTP and for HTTP+SSE, when the server has them.
    http: Callable[[Path, int], Launch | None] | None = None
    sse: Callable[[Path, int], Launch | None] | None = None
    #: Tool calls worth making: (tool, arguments), made when the tool is listed.
    calls: list[tuple[str, dict[str, Any]]] = attrs.field(factory=list)
    #: A tool that reports progress, with its arguments.
    progress: tuple[str, dict[str, Any]] | None = None
    #: A tool slow enough to cancel after its first progress notification.
    cancel: tuple[str, dict[str, Any]] | None = None
    #: A tool called with arguments of the wrong type (the "bad arguments" error).
    bad_args: tuple[str, dict[str, Any]] | None = None
    #: Tools that make the server ask the client (sampling, elicitation, roots).
    asks: list[tuple[str, dict[str, Any]]] = attrs.field(factory=list)
    #: Prompts with required arguments, and what to give them.
    prompt_args: dict[str, dict[str, str]] = attrs.field(factory=dict)
    #: Prepare the temporary folder (a git repository, files to read).
    setup: Callable[[Path], None] | None = None


def _env() -> Env:
    return peers.peer_env()


def _py(*args: str) -> Argv:
    return [sys.executable, *args]


def _ref_stdio(tmp: Path) -> Launch:
    return Launch(_py("-m", "trimcp.reference"), _env())


def _ref_http(tmp: Path, port: int) -> Launch:
    argv = _py("-m", "trimcp", "serve", "--http", f"127.0.0.1:{port}")
    return Launch(argv, _env(), f"http://127.0.0.1:{port}/mcp", "streamable-http")


def _ref_sse(tmp: Path, port: int) -> Launch:
    argv = _py("-m", "trimcp", "serve", "--sse", f"127.0.0.1:{port}")
    return Launch(argv, _env(), f"http://127.0.0.1:{port}/sse", "sse")


def _maybe(
    argv: Argv | None, env: Env | None = None, url: str | None = None, transport: str = "stdio"
) -> Launch | None:
    return None if argv is None else Launch(argv, env or _env(), url, transport)


def _everything_http(tmp: Path, port: int) -> Launch | None:
    return _maybe(
        peers.everything_http_argv("streamableHttp"),
        peers.everything_http_env(port),
        f"http://127.0.0.1:{port}/mcp",
        "streamable-http",
    )


def _everything_sse(tmp: Path, port: int) -> Launch | None:
    return _maybe(
        peers.everything_http_argv("sse"), peers.everything_http_env(port), f"http://127.0.0.1:{port}/sse", "sse"
    )


def _sdk_http(tmp: Path, port: int) -> Launch | None:
    return _maybe(
        peers.sdk_server_argv("streamable-http", port), None, f"http://127.0.0.1:{port}/mcp", "streamable-http"
    )


def _sdk_sse(tmp: Path, port: int) -> Launch | None:
    return _maybe(peers.sdk_server_argv("sse", port), None, f"http://127.0.0.1:{port}/sse", "sse")


def _fastmcp_http(tmp: Path, port: int) -> Launch | None:
    argv = peers.fastmcp_argv(http=True)
    return (
        None
        if argv is None
        else Launch([*argv, "--port", str(port)], _env(), f"http://127.0.0.1:{port}/mcp", "streamable-http")
    )


def _memory(tmp: Path) -> Launch | None:
    return _maybe(peers.memory_argv(), {**_env(), "MEMORY_FILE_PATH": str(tmp / "memory.jsonl")})


def _git_setup(tmp: Path) -> None:
    repo = tmp / "repo"
    repo.mkdir(exist_ok=True)
    env = {
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "HOME": str(tmp),
        "PATH": _env().get("PATH", "/usr/bin:/bin"),
    }
    cfg = ["-c", "user.name=Corpus", "-c", "user.email=corpus@example.invalid", "-c", "init.defaultBranch=main"]

    def git(*args: str) -> None:
        subprocess.run(["git", *cfg, *args], cwd=repo, env=env, check=True, capture_output=True, timeout=30)

    if not (repo / ".git").exists():
        git("init", "-q")
        (repo / "README.md").write_text("corpus repository\n", encoding="utf-8")
        git("add", "README.md")
        git("commit", "-q", "-m", "first commit")
    (repo / "README.md").write_text("corpus repository\nan unstaged line\n", encoding="utf-8")


def _files_setup(tmp: Path) -> None:
    (tmp / "files").mkdir(exist_ok=True)
    (tmp / "files" / "hello.txt").write_text("hello from the corpus\nsecond line\n", encoding="utf-8")
    (tmp / "files" / "notes.md").write_text("# notes\n", encoding="utf-8")


REF_ASKS = [("sample", {"prompt": "2+2?"}), ("elicit", {"message": "Your name?"}), ("roots", {})]

SERVERS: dict[str, Server] = {
    s.name: s
    for s in [
        Server(
            "reference",
            _ref_stdio,
            _ref_http,
            _ref_sse,
            calls=[
                ("echo", {"message": "hello from the spec corpus"}),
                ("add", {"a": 2, "b": 3}),
                ("test_simple_text", {}),
                ("fail", {}),
            ],
            progress=("test_tool_with_progress", {}),
            cancel=("slow", {"seconds": 5, "steps": 10}),
            bad_args=("add", {"a": "two", "b": 3}),
            asks=REF_ASKS,
        ),
        Server(
            "everything",
            lambda tmp: _maybe(peers.everything_stdio_argv()),
            _everything_http,
            _everything_sse,
            calls=[
                ("echo", {"message": "hello from the spec corpus"}),
                ("get-sum", {"a": 2, "b": 3}),
                ("get-structured-content", {"location": "Chicago"}),
                ("get-annotated-message", {"messageType": "error"}),
                ("get-tiny-image", {}),
            ],
            progress=("trigger-long-running-operation", {"duration": 1, "steps": 2}),
            cancel=("trigger-long-running-operation", {"duration": 10, "steps": 20}),
            bad_args=("get-sum", {"a": "two", "b": 3}),
            asks=[("trigger-sampling-request", {"prompt": "2+2?"}), ("trigger-elicitation-request", {})],
            prompt_args={"args-prompt": {"city": "Chicago"}},
        ),
        Server(
            "time",
            lambda tmp: _maybe(peers.time_server_argv()),
            calls=[("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})],
            bad_args=(
                "convert_time",
                {"source_timezone": "Nowhere/Atlantis", "time": "25:99", "target_timezone": "UTC"},
            ),
        ),
        Server(
            "fetch",
            lambda tmp: _maybe(peers.fetch_server_argv()),
            # ``{page}`` is the loopback page the recorder serves; nothing else is ever fetched.
            calls=[("fetch", {"url": "{page}", "max_length": 400})],
            bad_args=("fetch", {"url": 12, "max_length": "many"}),
            prompt_args={"fetch": {"url": "{page}"}},
        ),
        Server(
            "git",
            lambda tmp: _maybe(peers.git_server_argv(tmp / "repo")),
            setup=_git_setup,
            calls=[
                ("git_status", {"repo_path": "{tmp}/repo"}),
                ("git_diff_unstaged", {"repo_path": "{tmp}/repo"}),
                ("git_branch", {"repo_path": "{tmp}/repo", "branch_type": "local"}),
            ],
            bad_args=("git_status", {"repo_path": 42}),
        ),
        Server(
            "filesystem",
            lambda tmp: _maybe(peers.filesystem_argv(tmp / "files")),
            setup=_files_setup,
            calls=[
                ("list_allowed_directories", {}),
                ("list_directory", {"path": "{tmp}/files"}),
                ("read_text_file", {"path": "{tmp}/files/hello.txt"}),
                ("read_text_file", {"path": "/etc/hostname"}),  # outside the allowed folder: refused
                ("get_file_info", {"path": "{tmp}/files/notes.md"}),
            ],
            bad_args=("read_text_file", {"path": ["not", "a", "string"]}),
        ),
        Server(
            "memory",
            _memory,
            calls=[
                (
                    "create_entities",
                    {
                        "entities": [
                            {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
                        ]
                    },
                ),
                ("search_nodes", {"query": "Ada"}),
                ("read_graph", {}),
            ],
            bad_args=("create_entities", {"entities": "Ada"}),
        ),
        Server(
            "fastmcp",
            lambda tmp: _maybe(peers.fastmcp_argv()),
            _fastmcp_http,
            calls=[("echo", {"message": "hello from the spec corpus"}), ("add", {"a": 2, "b": 3}), ("fail", {})],
            progress=("progress", {"steps": 3}),
            bad_args=("add", {"a": "two", "b": 3}),
            prompt_args={"greet": {"name": "Ada"}},
        ),
        Server(
            "mcp-sdk",
            lambda tmp: _maybe(peers.sdk_server_argv()),
            _sdk_http,
            _sdk_sse,
            calls=[("echo", {"text": "hello from the spec corpus"}), ("add", {"a": 2, "b": 3}), ("fail", {})],
            progress=("progress", {"steps": 3}),
            cancel=("slow", {"seconds": 5}),
            bad_args=("add", {"a": "two", "b": 3}),
            asks=[("sample", {"prompt": "2+2?"}), ("ask_name", {}), ("roots", {})],
            prompt_args={"greet": {"name": "Ada"}},
        ),
    ]
}
