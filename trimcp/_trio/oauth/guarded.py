"""The OAuth client's HTTP: every URL through the policy, every address checked, every body capped.

Theory of operation
-------------------
``trimcp._sansio.auth.url_policy`` decides which URLs and addresses the OAuth client
may reach; this module makes the requests so that nothing gets past it:

* ``fetch`` checks the URL (``UrlPolicy.check``) before the request, reads the body
  as a stream and stops past ``max_bytes`` (a ``Content-Length`` over it is refused
  before a byte is read), and bounds the whole exchange by ``deadline`` seconds: a
  server that answers a byte every 29 s never trips a per-read timeout, but trips this.
* ``guarded_client`` is the ``httpx.AsyncClient`` the provider uses when the caller
  gives none: its connections resolve the host themselves (``GuardedBackend``), judge
  every address (``UrlPolicy.address_allowed``) and connect to the address they
  judged, so a name that resolves to ``10.0.0.5`` or ``169.254.169.254`` is refused
  and a second DNS answer cannot swap the address afterwards.  httpx keeps its
  connection pool behind a private attribute and offers no public way to give it a
  network backend; ``GuardedTransport`` sets one, and fails loudly at construction if
  an httpx release moves it.  A client the caller passes in (``http_client=``) gets
  the URL checks and the caps, not the address checks: its transport is the caller's.

Redirects are never followed (an authorization server's 3xx is an answer, not an
instruction to fetch another URL the policy has not seen).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import Any, Final

import attrs
import httpcore
import httpx
import trio

from ..._sansio.auth.url_policy import UrlPolicy, UrlRefused
from ..._sansio.bounded.echo import quote

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_BYTES",
    "Fetched",
    "GuardedBackend",
    "GuardedTransport",
    "fetch",
    "guarded_client",
]

#: The cap on a body read from an authorization server or a metadata URL.
DEFAULT_MAX_BYTES: Final = 1024 * 1024
#: The bound on one whole exchange (connect, send, the whole body), in seconds.
DEFAULT_DEADLINE: Final = 30.0


@attrs.frozen
class Fetched:
    status: int
    headers: httpx.Headers
    body: bytes


async def fetch(
    client: httpx.AsyncClient,
    policy: UrlPolicy,
    method: str,
    url: str,
    *,
    what: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    deadline: float = DEFAULT_DEADLINE,
    **request: Any,
) -> Fetched:
    """One request to a peer-named URL, checked and bounded as the module docstring says."""
    policy.check(url, what)
    try:
        with trio.fail_after(deadline):
            async with client.stream(method, url, follow_redirects=False, **request) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise UrlRefused(
                        f"the {what} at {quote(url)} is {int(declared)} bytes, over the {max_bytes}-byte cap"
                    )
                chunks: list[bytes] = []
                size = 0
                body = response.aiter_bytes()
                async for chunk in body:
                    size += len(chunk)
                    if size > max_bytes:
                        await _abandon(response, body)
                        raise UrlRefused(f"the {what} at {quote(url)} is over the {max_bytes}-byte cap")
                    chunks.append(chunk)
                return Fetched(response.status_code, response.headers, b"".join(chunks))
    except trio.TooSlowError:
        raise UrlRefused(f"the {what} at {quote(url)} did not answer in full within {deadline:g} s") from None


async def _abandon(response: httpx.Response, body: AsyncIterator[bytes]) -> None:
    """Stop reading ``response`` midway.  httpx reads through a chain of async generators,
    and closing the outer one leaves the inner ones suspended until the garbage collector
    finds them (a warning under trio); closing the response first makes the next read
    fail at the bottom of the chain, which ends every generator on the way up."""
    await response.aclose()
    with contextlib.suppress(Exception):
        async for _ in body:
            pass


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Trio TCP connections to addresses the policy allows, resolved and judged here."""

    def __init__(self, policy: UrlPolicy, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.policy = policy
        self.inner = inner if inner is not None else httpcore.TrioBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            with trio.fail_after(timeout) if timeout else contextlib.nullcontext():
                found = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
        except (OSError, trio.TooSlowError) as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        allowed = [a for a in addresses if self.policy.address_allowed(host, a) is None]
        if not allowed:
            reason = self.policy.address_allowed(host, addresses[0]) if addresses else f"{host} has no address"
            raise UrlRefused(f"refusing to connect: {reason}")
        last: Exception | None = None
        for address in allowed:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise UrlRefused("the OAuth client does not connect to Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with its pool's connections made by ``GuardedBackend``."""

    def __init__(self, policy: UrlPolicy) -> None:
        super().__init__(trust_env=False)
        if not isinstance(getattr(self, "_pool", None), httpcore.AsyncConnectionPool):
            raise RuntimeError("this httpx keeps its connection pool elsewhere: cannot guard its connections")
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=GuardedBackend(policy),
        )


def guarded_client(policy: UrlPolicy, *, timeout: float = DEFAULT_DEADLINE) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose every connection ``policy`` allowed."""
    return httpx.AsyncClient(transport=GuardedTransport(policy), timeout=timeout, follow_redirects=False)
