"""A real ``redis-server`` for the store tests: started on a free loopback port, stopped after.

Debian's ``redis-server`` package (``.ci/run`` installs it when missing).  It listens on
127.0.0.1 only, keeps nothing on disk (``--save ''``, ``--appendonly no``) and is killed when
the test session ends.  Tests that need it skip, saying why, only when the binary is missing.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ports import free_port

MISSING = "redis-server not found (Debian: apt-get install redis-server; .ci/run installs it)"


def redis_binary() -> str | None:
    return shutil.which("redis-server")


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def running_redis(binary: str) -> Iterator[str]:
    """``redis://127.0.0.1:PORT/0`` of a fresh redis-server, for the block."""
    with tempfile.TemporaryDirectory(prefix="trimcp-redis-") as workdir:
        for _ in range(3):  # a port taken between choosing and binding: choose again
            port = free_port()
            proc = subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    workdir,
                    "--protected-mode",
                    "yes",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and proc.poll() is None and not _answers(port):
                time.sleep(0.02)
            if proc.poll() is None and _answers(port):
                break
            proc.kill()
            proc.wait(timeout=5)
        else:
            raise RuntimeError("redis-server did not start on a free loopback port")
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.kill()
            proc.wait(timeout=10)
