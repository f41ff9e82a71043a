"""What the abuse scripts (``abuse_http.py``, ``abuse_ws.py``) share: stopping the server
they started, and the fresh client that must still be served after each abuse."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import trio

import trimcp


def stop_group(proc: subprocess.Popen[Any]) -> None:
    """Stop a server started in its own process group: SIGTERM, then SIGKILL after 5 s."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


async def fresh_client(url: str, **client_options: Any) -> tuple[bool, float]:
    """A new client's initialize + one tools/call; (ok, milliseconds)."""
    began = time.perf_counter()
    try:
        with trio.fail_after(10):
            async with trimcp.open_client(url, **client_options) as client:
                await client.call_tool("echo", {"message": "still here"})
    except Exception as exc:
        print(f"  fresh client failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return False, (time.perf_counter() - began) * 1000
    return True, (time.perf_counter() - began) * 1000


def fresh_text(result: tuple[bool, float]) -> str:
    return f"ok {result[1]:.0f} ms" if result[0] else "FAILED"
