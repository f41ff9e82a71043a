"""Interactive OAuth through the real loopback callback server.

The authorization server and the protected MCP server are the h11 fakes of
``test_oauth_flow`` on 127.0.0.1.  The "system browser" is a function that,
from the worker thread ``interactive_authorizer`` runs it in, starts a Trio
task that GETs the authorization URL (no redirects followed), reads the
``Location`` the authorization server answers with and GETs it -- a request to
the real loopback callback server, which hands the URL back to the flow.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import trio
from helpers.h11_fake import Reply, Req, serve
from helpers.oauth_fakes import AuthServer, ProtectedMcp

import trimcp
from trimcp.oauth import (
    CallbackTimeout,
    OAuthProvider,
    interactive_authorizer,
    open_loopback_callback,
)


class LoopbackAuthServer(AuthServer):
    """``AuthServer`` that accepts (and records) any registered redirect URI."""

    def __init__(self) -> None:
        super().__init__()
        self.redirect_uris: list[list[str]] = []

    async def __call__(self, req: Req, reply: Reply) -> None:
        if urlsplit(req.target).path == "/register":
            body = req.json
            self.redirect_uris.append(body["redirect_uris"])
            cid = f"client-{next(self._n)}"
            self.clients[cid] = f"secret-{cid}"
            await reply.json(
                {
                    "client_id": cid,
                    "client_secret": self.clients[cid],
                    "token_endpoint_auth_method": body["token_endpoint_auth_method"],
                },
                201,
            )
            return
        await super().__call__(req, reply)


class FakeBrowser:
    """Follows the authorization URL to the loopback callback, like a user agent would."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery
        self.opened: list[str] = []
        self.locations: list[str] = []
        self.pages: list[httpx.Response] = []

    def open(self, url: str) -> bool:  # called in a worker thread, like webbrowser.open
        self.opened.append(url)
        trio.from_thread.run_sync(self.nursery.start_soon, self.browse, url)
        return True

    async def browse(self, url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=False) as http:
            response = await http.get(url)
            assert response.status_code == 302
            location = response.headers["location"]
            self.locations.append(location)
            self.pages.append(await http.get(location))


def _codes(auth: AuthServer) -> list[str]:
    return [f["code"] for f in auth.token_requests if "code" in f]


async def test_whole_interactive_flow_through_the_loopback_server(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    auth = LoopbackAuthServer()
    async with serve(auth) as as_server, trio.open_nursery() as nursery:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        async with serve(mcp) as mcp_server, open_loopback_callback() as callback:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"
            browser = FakeBrowser(nursery)
            provider = OAuthProvider(
                authorize=interactive_authorizer(callback, open_browser=browser.open),
                redirect_uri=callback.redirect_uri,
                revision="2025-11-25",
            )
            async with trimcp.open_client(mcp_server.url, revision="2025-11-25", auth=provider) as session:
                assert [t.name for t in await session.list_tools()] == ["read_it", "write_it"]
                # Step-up: a second round through the same callback server.
                await session.call_tool("write_it", {})
            authorized = [
                r
                for r in mcp_server.requests
                if r.method == "POST" and (r.header("authorization") or "").startswith("Bearer AT-secret-")
            ]
            assert authorized and authorized[-1].json["params"]["name"] == "write_it"

            assert auth.redirect_uris == [[callback.redirect_uri]]
            assert [r["redirect_uri"] for r in auth.auth_requests] == [callback.redirect_uri] * 2
            assert {f["redirect_uri"] for f in auth.token_requests if "code" in f} == {callback.redirect_uri}
            assert len(browser.opened) == 2 and all(u.startswith(f"{auth.base}/authorize?") for u in browser.opened)
            assert all(loc.startswith(callback.redirect_uri + "?") for loc in browser.locations)
            for page in browser.pages:
                assert page.status_code == 200
                assert page.headers["content-type"].startswith("text/html")
                assert "close this window" in page.text
                assert page.headers["cache-control"] == "no-store"
            # Exactly one callback per round: the same response again is gone.
            async with httpx.AsyncClient() as http:
                again = await http.get(browser.locations[0])
            assert again.status_code == 410

    # The URL was printed (stderr) for every round, without any code in it.
    err = capsys.readouterr().err
    for url in browser.opened:
        assert url in err
    codes = _codes(auth)
    assert len(codes) == 2
    for code in codes:
        assert code not in err
        for record in caplog.records:
            if record.name.startswith("trimcp"):  # (httpx logs the fake browser's requests)
                assert code not in record.getMessage()


async def test_redirect_uri_names_the_bound_port_and_other_requests() -> None:
    async with open_loopback_callback() as callback:
        split = urlsplit(callback.redirect_uri)
        assert split.scheme == "http" and split.hostname == "127.0.0.1" and split.path == "/callback"
        assert split.port == callback.port and callback.port > 0
        stream = await trio.open_tcp_stream("127.0.0.1", callback.port)  # it is really listening there
        await stream.aclose()
        callback.expect("the-state")
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"http://127.0.0.1:{callback.port}/other")).status_code == 404
            post = await http.post(callback.redirect_uri + "?state=the-state&code=c")
            assert post.status_code == 405 and post.headers["allow"] == "GET"
            # A stray request with another state is refused and does not use up the round.
            assert (await http.get(callback.redirect_uri + "?state=forged&code=x")).status_code == 400
            ok = await http.get(callback.redirect_uri + "?state=the-state&code=c")
            assert ok.status_code == 200
            assert await callback.wait() == callback.redirect_uri + "?state=the-state&code=c"
            assert (await http.get(callback.redirect_uri + "?state=the-state&code=c")).status_code == 410
        with trio.socket.socket() as sock:
            await sock.bind(("127.0.0.1", 0))
            free = sock.getsockname()[1]
    async with open_loopback_callback(port=free, path="/cb") as fixed:
        assert fixed.redirect_uri == f"http://127.0.0.1:{free}/cb"


async def _raw_exchange(port: int, wire: bytes) -> bytes:
    """Send ``wire`` on a fresh connection and read until the server closes it."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(wire)
        answer = b""
        with trio.fail_after(10):
            while chunk := await stream.receive_some(65536):
                answer += chunk
    return answer


async def test_malformed_and_oversize_requests_are_answered_and_closed() -> None:
    async with open_loopback_callback() as callback:
        bad = await _raw_exchange(callback.port, b"NOT HTTP AT ALL\r\n\r\n")
        assert bad.startswith(b"HTTP/1.1 400 ")
        assert b"content-type: text/plain" in bad.lower()
        big = b"x" * (64 * 1024 + 1)
        head = f"POST /callback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(big)}\r\n\r\n"
        oversize = await _raw_exchange(callback.port, head.encode() + big)
        assert oversize.startswith(b"HTTP/1.1 413 ")
        assert b"content-type: text/plain" in oversize.lower()  # plain text, not JSON-RPC
        # Each answer ends its connection, and the round is still armed.
        ok = await _raw_exchange(callback.port, b"GET /callback?code=c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200 ") and b"connection: close" in ok.lower()
        assert await callback.wait() == callback.redirect_uri + "?code=c"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "localhost", "192.0.2.10", "example.com"])
async def test_non_loopback_bind_is_refused(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        async with open_loopback_callback(host=host):
            pass  # pragma: no cover


async def test_ipv6_loopback_redirect_uri() -> None:
    try:
        async with open_loopback_callback(host="::1") as callback:
            assert callback.redirect_uri == f"http://[::1]:{callback.port}/callback"
    except OSError:  # pragma: no cover - no IPv6 on this host
        pytest.skip("no IPv6 loopback")


async def test_timeout_raises_without_leaking_the_code(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "SECRET-CODE-123"
    announced: list[str] = []
    async with open_loopback_callback(timeout=0.5) as callback, trio.open_nursery() as nursery:
        hits: list[int] = []

        async def forged() -> None:
            async with httpx.AsyncClient() as http:
                r = await http.get(callback.redirect_uri + f"?code={secret}&state=someone-else")
            hits.append(r.status_code)

        def broken_browser(url: str) -> bool:
            trio.from_thread.run_sync(nursery.start_soon, forged)
            raise OSError("no browser here")  # a failing browser is fine: the URL was announced

        authorize = interactive_authorizer(callback, open_browser=broken_browser, announce=announced.append)
        url = "http://127.0.0.1:1/authorize?response_type=code&state=expected"
        with pytest.raises(CallbackTimeout) as info:
            await authorize(url)
    assert hits == [400]
    assert info.value.error == "callback_timeout"
    assert callback.redirect_uri in str(info.value)
    trimcp_logs = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("trimcp"))
    for text in (str(info.value), repr(info.value), trimcp_logs):
        assert secret not in text and "state=" not in text
    assert announced and url in announced[0]


async def test_timeout_through_the_provider_is_a_clear_error() -> None:
    auth = LoopbackAuthServer()
    async with serve(auth) as as_server:
        auth.base = f"http://127.0.0.1:{as_server.port}"
        mcp = ProtectedMcp(auth)
        async with serve(mcp) as mcp_server, open_loopback_callback(timeout=0.3) as callback:
            mcp.base = f"http://127.0.0.1:{mcp_server.port}"

            def nothing(url: str) -> Any:
                return None

            provider = OAuthProvider(
                authorize=interactive_authorizer(callback, open_browser=nothing, announce=lambda text: None),
                redirect_uri=callback.redirect_uri,
            )
            with pytest.raises(trimcp.TrimcpError) as info:
                async with trimcp.open_client(
                    mcp_server.url, revision="2025-11-25", auth=provider, timeouts=trimcp.Timeouts(connect=10)
                ):
                    pass
            text = str(info.value)
            assert "callback_timeout: no authorization response reached" in text
            assert "code=" not in text and "state=" not in text
            assert auth.redirect_uris == [[callback.redirect_uri]] and not auth.token_requests
