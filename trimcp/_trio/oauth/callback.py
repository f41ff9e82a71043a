"""Interactive OAuth: a loopback redirect server and the system browser.

Theory of operation
-------------------
RFC 8252 native-app authorization: the client listens on a loopback address
(``127.0.0.1`` by default, never a name such as ``localhost`` and never a
non-loopback interface), registers ``http://127.0.0.1:PORT/callback`` as its
redirect URI, sends the user's browser to the authorization URL, and reads
the authorization response from the browser's request to the callback path.

``open_loopback_callback`` binds the listener (port 0: the kernel picks a free
one, and ``redirect_uri`` names the port actually bound) and serves it with
the HTTP server loop of ``trimcp._trio.http1.server`` until the ``async with``
block ends.  Each connection carries one request and is then closed
(``Connection: close``), with a short deadline so a stalled peer cannot hold a
task; malformed HTTP is 400 and a body over 64 KiB 413, as the loop answers
them.  Answers:

* ``GET`` on the callback path while a response is expected: the small
  "you can close this window" page (200, ``no-store``, ``no-referrer``, no
  echo of the parameters), and the full URL the browser hit becomes the
  result of ``wait()``;
* the callback path when no response is expected (one was already taken):
  410 Gone -- exactly one callback is accepted per round;
* a ``state`` other than the expected one (``expect(state)``): 400, and the
  server keeps waiting, so a stray local request cannot spoil the round;
* any other path: 404; any other method: 405.

A round starts armed when the server opens, and again with ``expect()`` (or a
``wait()`` after the previous result was taken), so one server can serve the
later rounds of the same provider (step-up authorization).  ``wait()`` is
bounded by ``timeout``; running out raises ``CallbackTimeout`` (an
``OAuthError``) whose message names the redirect URI only.

``interactive_authorizer(callback)`` is the ``authorize`` callable for
``OAuthProvider``: it arms the callback for the URL's ``state``, always
announces the authorization URL (stderr by default, so it can be copied when
no browser opens), opens the system browser in a worker thread (``webbrowser``
is imported lazily; a failure or a browser that blocks is fine), and returns
the redirect URL.  The authorization code is in that URL only: it is never
logged, printed or put into an exception.
"""

from __future__ import annotations

import ipaddress
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trio

from ..._sansio.auth import OAuthError
from ..._sansio.http.server.routing import RequestHead
from ..http1.server import H1ServerConnection, serve_connection
from .provider import AuthorizeCallback

__all__ = [
    "CallbackTimeout",
    "LoopbackCallback",
    "interactive_authorizer",
    "open_loopback_callback",
]

log = logging.getLogger("trimcp.oauth")

_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>trimcp authorization</title></head>
<body><h1>Authorization response received</h1>
<p>You can close this window and return to the application.</p></body></html>
"""
_TEXTS = {
    400: b"Unexpected authorization response\n",
    404: b"Not Found\n",
    405: b"Method Not Allowed\n",
    410: b"This authorization response was already received\n",
}
_CONNECTION_TIMEOUT = 10.0
_MAX_BODY = 64 * 1024


class CallbackTimeout(OAuthError):
    """No authorization response reached the loopback callback in time."""


def _check_loopback(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    try:
        address = ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        raise ValueError(f"the OAuth callback must bind a loopback IP address, not {host!r}") from None
    if not address.is_loopback:
        raise ValueError(f"the OAuth callback must bind a loopback address, not {host!r}")
    return address


class LoopbackCallback:
    """The listening callback server (made by ``open_loopback_callback``)."""

    def __init__(self, host: str, port: int, path: str, timeout: float) -> None:
        self.host = host
        self.port = port
        self.path = path
        self.timeout = timeout
        netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._origin = f"http://{netloc}"
        #: The redirect URI to register and send (the port actually bound).
        self.redirect_uri = f"{self._origin}{path}"
        self._armed = True
        self._state: str | None = None
        self._result: str | None = None
        self._arrived = trio.Event()

    def __repr__(self) -> str:
        return f"<LoopbackCallback {self.redirect_uri}>"

    def expect(self, state: str | None = None) -> None:
        """Accept one (more) callback; with ``state``, only one carrying that ``state``."""
        if self._result is not None or not self._armed:
            self._arrived = trio.Event()
            self._result = None
        self._armed = True
        self._state = state

    async def wait(self) -> str:
        """The full URL of the accepted callback (``?code=...&state=...``)."""
        if self._result is None and not self._armed:
            self.expect()
        with trio.move_on_after(self.timeout):
            await self._arrived.wait()
        result = self._result
        if result is None:
            raise CallbackTimeout(
                "callback_timeout",
                f"no authorization response reached {self.redirect_uri} within {self.timeout:g} s",
            )
        self._result = None
        return result

    # ------------------------------------------------------------ serving

    def _route(self, method: str, target: str) -> int:
        """The status to answer with (accepting the callback when it is the one expected)."""
        split = urlsplit(target)
        if split.path != self.path:
            return 404
        if method != "GET":
            return 405
        if not self._armed:
            return 410
        if self._state is not None:
            states = parse_qs(split.query, keep_blank_values=True).get("state") or []
            if states[:1] != [self._state]:
                log.info("ignored a request to the OAuth callback with an unexpected state")
                return 400
        self._armed = False
        self._result = f"{self._origin}{target}"
        self._arrived.set()
        log.info("authorization response received on %s", self.redirect_uri)
        return 200

    async def _serve(self, stream: trio.SocketStream) -> None:
        # One request per connection (every answer says ``Connection: close``), and a
        # deadline for all of it, so a stalled peer cannot hold a task.
        with trio.move_on_after(_CONNECTION_TIMEOUT):
            await serve_connection(
                stream,
                self._answer,
                max_body=_MAX_BODY,
                max_head=_MAX_BODY,
                idle_timeout=_CONNECTION_TIMEOUT,
                body_timeout=_CONNECTION_TIMEOUT,
                error_code=None,
            )

    async def _answer(self, http: H1ServerConnection, head: RequestHead, body: bytes) -> None:
        status = self._route(head.method, head.target)
        page = _PAGE if status == 200 else _TEXTS.get(status, b"")
        content_type = "text/html; charset=utf-8" if status == 200 else "text/plain; charset=utf-8"
        headers = [
            ("Content-Type", content_type),
            ("Cache-Control", "no-store"),
            ("Referrer-Policy", "no-referrer"),
            ("Connection", "close"),
        ]
        if status == 405:
            headers.append(("Allow", "GET"))
        await http.respond(status, headers, page)


@asynccontextmanager
async def open_loopback_callback(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/callback",
    timeout: float = 300.0,
) -> AsyncIterator[LoopbackCallback]:
    """Serve the OAuth redirect on ``http://host:port/path`` (loopback only) for the block's duration."""
    address = _check_loopback(host)
    if not path.startswith("/"):
        raise ValueError(f"the callback path must start with '/', not {path!r}")
    listeners = await trio.open_tcp_listeners(port, host=str(address))
    try:
        bound = listeners[0].socket.getsockname()[1]
    except BaseException:
        for listener in listeners:
            await trio.aclose_forcefully(listener)
        raise
    callback = LoopbackCallback(str(address), bound, path, timeout)
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, callback._serve, listeners)
        try:
            yield callback
        finally:
            nursery.cancel_scope.cancel()


def _system_browser(url: str) -> bool:
    import webbrowser

    return webbrowser.open(url)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def interactive_authorizer(
    callback: LoopbackCallback,
    *,
    open_browser: Callable[[str], Any] | None = None,
    announce: Callable[[str], Any] | None = None,
) -> AuthorizeCallback:
    """The ``authorize`` callable for ``OAuthProvider(redirect_uri=callback.redirect_uri)``.

    ``open_browser`` (default: ``webbrowser.open``) runs in a worker thread;
    ``announce`` (default: a line on stderr) receives the text with the URL.
    """
    opener = open_browser if open_browser is not None else _system_browser
    say = announce if announce is not None else _to_stderr

    async def authorize(url: str) -> str:
        states = parse_qs(urlsplit(url).query).get("state")
        callback.expect(states[0] if states else None)
        say(f"Open this URL in a browser to authorize:\n  {url}")

        async def launch() -> None:
            try:
                await trio.to_thread.run_sync(opener, url, abandon_on_cancel=True)
            except Exception as exc:
                log.info("could not open a browser (%s); use the URL shown", type(exc).__name__)

        result: str | CallbackTimeout
        async with trio.open_nursery() as nursery:
            nursery.start_soon(launch)
            try:
                result = await callback.wait()
            except CallbackTimeout as exc:  # raised below, not wrapped in the nursery's group
                result = exc
            nursery.cancel_scope.cancel()
        if isinstance(result, CallbackTimeout):
            raise result
        return result

    return authorize
