"""``trimcp auth login|status|logout`` against the h11 fakes of ``test_oauth_flow``.

The CLI runs as a subprocess with ``--headless``: it prints the authorization
URL on stderr and reads the redirect URL from stdin.  ``run_cli`` plays the
user: it spots the URL, fetches it (the fake authorization server answers 302
with the redirect) and types the ``Location`` into stdin.  Tokens go to a
``--token-file`` in ``tmp_path``; the auth-needed cache to ``$XDG_CACHE_HOME``
there.  No run may print a token, refresh token or client secret.
"""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest
from helpers.cli_oauth import protected_servers, run_cli
from helpers.oauth_fakes import REDIRECT

from trimcp._sansio.auth import DiscoveryError, OAuthError


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_login_status_logout(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    opts = ["--token-file", str(tokens)]
    async with protected_servers() as servers:
        url = servers.url
        status0 = await run_cli(["auth", "status", url, *opts], tmp_path)
        assert status0.rc == 3 and "not logged in" in status0.out

        login = await run_cli(["auth", "login", url, *opts, "--headless", "--redirect-uri", REDIRECT], tmp_path)
        assert login.rc == 0, login.err
        assert login.prompted == 1 and "logged in" in login.out and "scope: read" in login.out
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
        assert len(servers.auth.token_requests) == 1

        status = await run_cli(["auth", "status", url, *opts], tmp_path)
        assert status.rc == 0, status.err
        assert "logged in" in status.out and "scope: read" in status.out and "expires" in status.out
        assert "refresh token: yes" in status.out

        # A second login finds the stored tokens valid: no new authorization round.
        again = await run_cli(["auth", "login", url, *opts, "--headless", "--redirect-uri", REDIRECT], tmp_path)
        assert again.rc == 0 and again.prompted == 0

        logout = await run_cli(["auth", "logout", url, *opts], tmp_path)
        assert logout.rc == 0 and "logged out" in logout.out
        after = await run_cli(["auth", "status", url, *opts], tmp_path)
        assert after.rc == 3 and "not logged in" in after.out
        servers.assert_no_secrets(status0, login, status, again, logout, after)
        assert not any(s in tokens.read_text() for s in servers.auth.access)  # logged out: gone


async def test_login_refused_and_unreachable(tmp_path: Path) -> None:
    opts = ["--token-file", str(tmp_path / "tokens.json"), "--headless", "--redirect-uri", REDIRECT]
    async with protected_servers() as servers:
        refused = await run_cli(["auth", "login", servers.url, *opts], tmp_path, answer=False)
        assert refused.rc == 3, refused.err
        assert refused.prompted >= 1  # (the transport may ask again, up to max_attempts)
    down = await run_cli(["auth", "login", f"http://127.0.0.1:{_closed_port()}/mcp", *opts, "--timeout", "5"], tmp_path)
    assert down.rc == 4, down.err


async def test_auth_rejects_a_non_http_url(tmp_path: Path) -> None:
    run = await run_cli(["auth", "status", "ws://127.0.0.1:1/mcp", "--token-file", str(tmp_path / "t.json")], tmp_path)
    assert run.rc == 2 and "http" in run.err


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (OAuthError("invalid_grant", "the code was refused"), "authorization failed: invalid_grant"),
        (DiscoveryError("resource does not match"), "authorization needed: resource does not match"),
    ],
)
def test_auth_errors_exit_3_with_their_own_words(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Exception, words: str
) -> None:
    import trimcp.cli.commands as cli
    import trimcp.cli.inspector as inspector

    async def fail(*_args: object) -> int:
        raise error

    monkeypatch.setattr(inspector, "run_inspect", fail)
    assert cli.main(["tools", "list", "--", "unused"]) == cli.EXIT_AUTH
    assert words in capsys.readouterr().err
