"""Running the ``trimcp`` CLI through a headless OAuth flow, against the fakes of ``oauth_fakes``.

The CLI runs as a subprocess with ``--headless``: it prints the authorization URL on stderr
and reads the redirect URL from stdin.  ``run_cli`` plays the user: it spots the URL, fetches
it (the fake authorization server answers 302 with the redirect) and types the ``Location``
into stdin.  ``protected_servers`` starts both fakes; ``Servers.assert_no_secrets`` checks
that no run printed a token, refresh token or client secret.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio
from helpers.h11_fake import serve
from helpers.oauth_fakes import AuthServer, ProtectedMcp

_AUTH_URL = re.compile(r"https?://\S+/authorize\?\S+")
_MAIN = "import sys; from trimcp.cli import main; sys.exit(main())"


@attrs.define
class Run:
    rc: int
    out: str
    err: str
    prompted: int


async def run_cli(args: list[str], tmp_path: Path, *, answer: bool = True, timeout: float = 60.0) -> Run:
    """Run ``trimcp ARGS``; answer each headless prompt by following the authorization URL."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    out, err = bytearray(), bytearray()
    prompted = 0
    with trio.fail_after(timeout):
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-c", _MAIN, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr

        async def read_out() -> None:
            while chunk := await stdout.receive_some():
                out.extend(chunk)

        async def read_err() -> None:
            nonlocal prompted
            seen = 0
            while chunk := await stderr.receive_some():
                err.extend(chunk)
                urls = _AUTH_URL.findall(err.decode(errors="replace"))
                for url in urls[seen:]:
                    seen += 1
                    prompted += 1
                    if not answer:
                        await stdin.send_all(b"\n")
                        continue
                    async with httpx.AsyncClient(follow_redirects=False) as http:
                        response = await http.get(url)
                    assert response.status_code == 302
                    await stdin.send_all(response.headers["location"].encode() + b"\n")

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_out)
                nursery.start_soon(read_err)
            rc = await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            await stdin.aclose()
    return Run(rc, out.decode(errors="replace"), err.decode(errors="replace"), prompted)


@attrs.define
class Servers:
    auth: AuthServer
    mcp: ProtectedMcp
    url: str
    #: The running fake of the MCP server (its ``handler`` can be swapped).
    server: Any = None

    def secrets(self) -> list[str]:
        return [s for s in (*self.auth.access, *self.auth.refresh, *self.auth.clients.values()) if s]

    def assert_no_secrets(self, *runs: Run) -> None:
        secrets = self.secrets()
        assert secrets  # something was issued, so the check means something
        for run in runs:
            for secret in secrets:
                assert secret not in run.out and secret not in run.err, "a secret reached the CLI output"


@asynccontextmanager
async def protected_servers(auth: AuthServer | None = None) -> AsyncIterator[Servers]:
    auth = auth or AuthServer()
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        async with serve(mcp) as mcp_server:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            yield Servers(auth, mcp, mcp_server.url, mcp_server)
