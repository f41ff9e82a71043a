"""The public packages export what they list, and import the HTTP stacks only when asked.

``trimcp.cli`` is written against these exports alone (``test_layers.PUBLIC_API``).
``trimcp.server`` and ``trimcp.oauth`` hand out ``serve_http`` / ``serve_websocket`` /
``OAuthProvider`` / the loopback callback on first use, so that importing them does not
pay for h11, trio-websocket or httpx.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest
from repo_paths import REPO

ROOT = REPO
PUBLIC = (
    "trimcp",
    "trimcp.server",
    "trimcp.oauth",
    "trimcp.conformance",
    "trimcp.reference",
    "trimcp.config",
    "trimcp.testing",
)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_listed_name_is_there(name: str) -> None:
    module = importlib.import_module(name)
    missing = [attr for attr in module.__all__ if not hasattr(module, attr)]
    assert missing == []


def test_lazy_exports_are_the_real_objects() -> None:
    import trimcp.oauth
    import trimcp.server
    from trimcp._trio.oauth import callback, provider
    from trimcp.server.transports import websocket
    from trimcp.server.transports.http import app

    assert trimcp.server.serve_http is app.serve_http
    assert trimcp.server.serve_websocket is websocket.serve_websocket
    assert trimcp.oauth.OAuthProvider is provider.OAuthProvider
    assert trimcp.oauth.open_loopback_callback is callback.open_loopback_callback
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        trimcp.server.nothing  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        trimcp.oauth.nothing  # noqa: B018


def test_importing_the_packages_loads_no_http_stack() -> None:
    STACK = ("h11", "httpx", "trio_websocket", "trimcp._sansio.http.server.h1")
    code = (
        "import sys, trimcp, trimcp.server, trimcp.oauth, trimcp.reference\n"
        "from trimcp.oauth import OAuthError, StoreUnavailable, default_store\n"
        f"print(sorted(m for m in {STACK!r} if m in sys.modules))\n"
        "from trimcp.server import serve_http\n"
        f"print(sorted(m for m in {STACK!r} if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=60
    ).stdout.splitlines()
    # serve_http brings the server's own HTTP/1.1 codec, and no h11 (the conformance probes' client).
    assert out == ["[]", "['trimcp._sansio.http.server.h1']"]
