"""What revisions a server implements, probed once per run: ``ServerVersions``.

Theory of operation
-------------------
Several sentences of 2026-07-28 are about one kind of server only: "a server
that supports only modern versions" (versioning, the ``initialize`` error), "a
server that supports only this revision" (Streamable HTTP, legacy headers), "a
server that does not support such clients" (clients older than 2025-06-18, a
missing ``MCP-Protocol-Version``), "if the server does not implement the
requested version" (-32022).  ``supportedVersions`` cannot decide these: a
dual-era server (the official SDKs) lists the revisions it serves with the
per-request envelope and still answers ``initialize`` for legacy clients.

So the run asks.  The modern revisions are the DiscoverResult's; a handshake
revision ``v`` is implemented when ``initialize`` offering ``v`` on a fresh
connection is answered with ``protocolVersion: v`` (lifecycle: a server that
supports the requested version MUST answer with it).  A server answering
``initialize`` with an error, or not at all, implements no handshake revision;
one answering with another revision implements that one and not ``v``.  Each
offer is made at most once, and only when a check asks (``implements``), so a
run pays one connection per revision a sentence needed (on stdio, one server
process each).  ``known_unimplemented`` (-32022's "known version the server has
chosen not to support") asks at most the two ends of the handshake range: the
newest (which the dual-era question asked already) and the oldest, since servers
implement a contiguous range of revisions; with both ends implemented the ones
between are taken to be too, and the clause has no instance to test.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from ..._sansio import jsonrpc as rpc
from ..._sansio.revisions import ALL_VERSIONS, HANDSHAKE_VERSIONS
from ..evidence import received, sent
from ..rawhttp import ProbeError
from ..results import Connector
from .http26_wire import ACCEPT, post
from .probes import CLIENT_INFO, ProbeFailed, exchange

__all__ = ["Offer", "ServerVersions", "connector_initialize", "http_initialize"]


@attrs.frozen
class Offer:
    """The answer to one ``initialize`` offering ``requested``."""

    requested: str
    #: The InitializeResult's protocolVersion (``None``: no result).
    chosen: str | None = None
    #: The JSON-RPC error object, when the server answered with one.
    error: dict[str, Any] | None = None
    #: Why there is neither (the connection broke or stayed silent), else "".
    failure: str = ""
    evidence: tuple[dict[str, Any], ...] = ()

    @property
    def said(self) -> str:
        if self.chosen is not None:
            return f"initialize offering {self.requested} answered with {self.chosen}"
        if self.error is not None:
            return f"initialize offering {self.requested}: error {self.error.get('code')} {self.error.get('message')!r}"
        return f"initialize offering {self.requested}: {self.failure or 'no answer'}"


Initialize = Callable[[str], Awaitable[Offer]]


def _request(version: str) -> rpc.Request:
    return rpc.Request(0, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO})


def connector_initialize(connect: Connector, timeout: float) -> Initialize:
    """Offer a revision over a fresh connection of the run's ``Connector`` (any transport)."""

    async def offer(version: str) -> Offer:
        request = _request(version)
        try:
            [answer] = await exchange(connect, [request], timeout)
        except ProbeFailed as exc:
            return Offer(version, failure=str(exc), evidence=(sent(request),))
        shown = (sent(request), received(answer))
        if isinstance(answer, rpc.ErrorResponse):
            error = {"code": answer.error.code, "message": answer.error.message, "data": answer.error.data}
            return Offer(version, error=error, evidence=shown)
        chosen = answer.result.get("protocolVersion")
        return Offer(version, chosen=chosen if isinstance(chosen, str) else "", evidence=shown)

    return offer


def http_initialize(url: str, timeout: float, extra_headers: tuple[tuple[str, str], ...] = ()) -> Initialize:
    """Offer a revision in one raw POST, as a legacy Streamable HTTP client opens (no version header)."""

    async def offer(version: str) -> Offer:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _request(version).params}
        try:
            answer = await post(url, ACCEPT, body, timeout=timeout, extra_headers=extra_headers)
        except ProbeError as exc:
            return Offer(version, failure=str(exc))
        for msg in answer.responses:
            if isinstance(msg.get("result"), dict):
                chosen = msg["result"].get("protocolVersion")
                return Offer(version, chosen=chosen if isinstance(chosen, str) else "", evidence=(answer.evidence,))
            if isinstance(msg.get("error"), dict):
                return Offer(version, error=msg["error"], evidence=(answer.evidence,))
        return Offer(version, failure=f"HTTP {answer.status} without a JSON-RPC answer", evidence=(answer.evidence,))

    return offer


@attrs.define
class ServerVersions:
    """The revisions a server implements: ``modern`` from server/discover, handshake ones probed."""

    #: The DiscoverResult's supportedVersions (and the revision in use).
    modern: tuple[str, ...]
    _initialize: Initialize
    _offers: dict[str, Offer] = attrs.field(factory=dict)

    @classmethod
    def of(cls, supported: Sequence[str], revision: str, initialize: Initialize) -> ServerVersions:
        return cls(tuple(dict.fromkeys([*supported, revision])), initialize)

    async def offer(self, version: str) -> Offer:
        if version not in self._offers:
            self._offers[version] = await self._initialize(version)
        return self._offers[version]

    async def legacy_probe(self) -> Offer:
        """``initialize`` offering the newest handshake revision: the one answer that tells
        a dual-era server (a result, whatever revision it chose) from a modern-only one."""
        return await self.offer(HANDSHAKE_VERSIONS[-1])

    async def serves_legacy(self) -> bool:
        return (await self.legacy_probe()).chosen is not None

    async def implements(self, version: str) -> bool:
        if version in self.modern:
            return True
        if version not in HANDSHAKE_VERSIONS:
            return False
        newest = await self.legacy_probe()
        if newest.chosen is None:
            return False  # no initialize answered at all: no handshake revision
        if newest.chosen == version:
            return True
        return (await self.offer(version)).chosen == version

    async def known_unimplemented(self) -> str | None:
        """A known revision the server does not implement (the newest such outside the
        handshake range, else the newest or the oldest handshake one), at two offers at most."""
        for version in reversed(ALL_VERSIONS):
            if version not in HANDSHAKE_VERSIONS and version not in self.modern:
                return version
        for version in (HANDSHAKE_VERSIONS[-1], HANDSHAKE_VERSIONS[0]):
            if not await self.implements(version):
                return version
        return None

    def known_implemented(self, version: str) -> bool:
        """Whether an offer already made showed ``version`` implemented (probes nothing)."""
        return version in self.modern or any(o.chosen == version for o in self._offers.values())

    async def first_implemented(self, versions: Sequence[str]) -> str | None:
        for version in versions:
            if await self.implements(version):
                return version
        return None

    def evidence(self) -> list[dict[str, Any]]:
        return [e for offer in self._offers.values() for e in offer.evidence]

    def described(self) -> str:
        """What the offers found, for a skip's reason: ``initialize offering X answered with X``."""
        return "; ".join(offer.said for offer in self._offers.values())
