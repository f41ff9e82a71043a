"""What ``bench_stdio.py`` measures with: the clients, servers, sizes, targets, peer command lines.

Shared by the parent (which plans the table) and the workers (which run one cell each);
imports nothing of trimcp or mcp, so the parent stays light.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

CLIENTS = ("floor", "floor-mux", "trimcp", "mcp/asyncio", "mcp/trio")
#: The trimcp client with trimcp imported from the ``--against`` checkout (the code before a change).
BASELINE = "trimcp@base"
SERVERS = ("raw", "sdk")
BIG = 10_000_000
CONCURRENCY = 64

# Per-mode parameters.  "sdk" phases list what runs against the secondary server.
PARAMS: dict[str, dict[str, Any]] = {
    "full": {
        "connect_runs": {"raw": 15, "sdk": 7},
        "warmup_calls": 200,
        "seq_calls": {"raw": 2000, "sdk": 2000},
        "seq_rounds": 5,
        "conc_calls": {"raw": 4000, "sdk": 4000},
        "conc_rounds": 3,
        "big_runs": {"raw": 3, "sdk": 3},
        "phases": {
            "raw": ("connect", "seq", "conc", "big"),
            "sdk": ("connect", "seq", "conc", "big"),
        },
        "import_runs": 5,
        "worker_timeout": 300.0,
    },
    "quick": {
        "connect_runs": {"raw": 3, "sdk": 1},
        "warmup_calls": 20,
        "seq_calls": {"raw": 200, "sdk": 100},
        "seq_rounds": 2,
        "conc_calls": {"raw": 640, "sdk": 0},
        "conc_rounds": 1,
        "big_runs": {"raw": 1, "sdk": 0},
        "phases": {"raw": ("connect", "seq", "conc", "big"), "sdk": ("connect", "seq")},
        "import_runs": 3,
        "worker_timeout": 60.0,
    },
}

IMPORTS = {
    "python": "pass",
    "trio": "import trio",
    "trimcp": "import trimcp",
    "mcp client": "import mcp, mcp.client.session, mcp.client.stdio",
}

TARGETS = {
    "seq_vs_official": 3.0,  # trimcp calls/s >= 3x the official client's (raw server)
    "cpu_vs_floor": 1.5,  # trimcp CPU/call <= 1.5x the floor's (raw server, sequential)
    "big_vs_floor": 2.0,  # trimcp 10 MB result time <= 2x the floor's
    "import_ms": 300.0,  # import trimcp <= 300 ms over bare python
    "rss_mb": 40.0,  # RSS after import <= 40 MB over bare python
}


def _load_peers() -> Any:
    spec = importlib.util.spec_from_file_location("_trimcp_peers", REPO / "tests" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def server_argv(server: str) -> list[str] | None:
    peers = _load_peers()
    return peers.raw_server_argv() if server == "raw" else peers.sdk_server_argv()


def server_env() -> dict[str, str]:
    return _load_peers().peer_env()


def tool_call(server: str, kind: str, size: int = 0) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments) for an echo call or a sized result, per server."""
    if kind == "echo":
        return "echo", {"text": "hello"}
    return ("echo" if server == "raw" else "big"), {"size": size}
