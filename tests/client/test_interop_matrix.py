"""The interoperability matrix: every client configuration against every server one.

Clients: a trimcp client pinned to each of the five revisions, and one on auto
(``revision=None``: probe ``server/discover``, fall back to ``initialize``).
Servers: the reference server pinned to each revision (``supported_versions=[REV]``)
and one speaking all of them.  Transports: in-process (``trimcp.testing.serve_in_process``) and stdio (a subprocess running ``tests/helpers/pinned_reference.py``).

Every pair either agrees on the newest revision both sides speak - and then a
real ``tools/list`` and a ``tools/call`` of ``echo`` work - or fails cleanly with
an error whose message names the revisions involved.  ``expected`` derives the
outcome from the negotiation rules alone (spec: basic/lifecycle, basic/versioning,
transports/stdio "Backward Compatibility"), independently of trimcp's code:

* handshake client vs handshake server: the client offers its revision; the
  server answers with it when it has it, else with its own newest; the client
  refuses a revision it does not speak;
* a client that probes (auto, or pinned 2026-07-28) operates statelessly on the
  newest shared stateless revision; the reference server answers a probe it
  cannot serve with -32022 naming its revisions, so no probe ever times out;
  an auto client then initializes offering the newest handshake revision the
  server named; a pinned 2026-07-28 client gives up;
* a handshake-only client meeting a 2026-07-28-only server gets -32022 naming
  2026-07-28 in answer to ``initialize``.

``test_matrix_table`` renders both transports as Markdown tables (and writes them
to ``$TRIMCP_MATRIX_OUT`` when set).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
from repo_paths import HELPERS

from trimcp import (
    ALL_VERSIONS,
    ConnectError,
    McpError,
    RemoteProtocolError,
    Timeouts,
    TrimcpError,
    open_client,
)
from trimcp.reference.server import build_server
from trimcp.testing import serve_in_process

HELPER = str(HELPERS / "pinned_reference.py")

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
STATELESS_REVISIONS = frozenset({"2026-07-28"})
AUTO = "auto"
ALL = "all"
CLIENTS = (*REVISIONS, AUTO)
SERVERS = (*REVISIONS, ALL)
TRANSPORTS = ("memory", "stdio")
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: Deadline of one pair: spawning a Python child dominates the stdio leg (~0.3 s).
DEADLINE = {"memory": 5.0, "stdio": 30.0}
#: Never reached against the reference server once it runs (it answers every probe at
#: once), but the clock starts at spawn: a loaded CI machine took over 2 s to start it
#: and the probe gave up on a live stateless-only server.  Still bounded, so a
#: regression that drops probes costs seconds, not the deadline.
PROBE_TIMEOUT = 10.0


def test_revision_list_is_current() -> None:
    assert REVISIONS == ALL_VERSIONS


# --------------------------------------------------------------------------- the rules


@attrs.frozen
class Outcome:
    """What one pair ends with: an agreed revision, or a refusal."""

    version: str | None = None
    #: What refused (ConnectError itself, or the peer error that is its __cause__),
    #: and the strings the ConnectError's message must contain.
    error: type[TrimcpError] | None = None
    mentions: tuple[str, ...] = ()
    #: For an ``McpError`` refusal: the JSON-RPC code and the revisions its data names.
    code: int | None = None
    named: tuple[str, ...] | None = None

    @property
    def era(self) -> str | None:
        if self.version is None:
            return None
        return "stateless" if self.version in STATELESS_REVISIONS else "handshake"

    def cell(self) -> str:
        if self.version is not None:
            return f"{self.version} ({self.era})"
        if self.error is ConnectError:
            return "refused: discover -32022"
        if self.error is McpError:
            return f"refused: initialize {self.code}"
        return "refused: client rejects answer"


def _versions(config: str, wildcard: str) -> tuple[str, ...]:
    return REVISIONS if config == wildcard else (config,)


def expected(client: str, server: str) -> Outcome:
    ours, theirs = _versions(client, AUTO), _versions(server, ALL)
    if client == AUTO or client in STATELESS_REVISIONS:
        shared = [v for v in ours if v in theirs and v in STATELESS_REVISIONS]
        if shared:
            return Outcome(version=max(shared))
        if client != AUTO:
            # Pinned stateless: no fallback; the -32022 names what the server speaks.
            return Outcome(error=ConnectError, mentions=("-32022", *theirs, client))
        # The -32022 names the server's revisions: initialize offering the newest we share.
        offer = max(v for v in theirs if v in ours and v not in STATELESS_REVISIONS)
    else:
        offer = client
    handshake = [v for v in theirs if v not in STATELESS_REVISIONS]
    if not handshake:
        return Outcome(
            error=McpError,
            mentions=("-32022", *theirs, offer),
            code=UNSUPPORTED_PROTOCOL_VERSION,
            named=theirs,
        )
    chosen = offer if offer in handshake else max(handshake)
    if chosen not in ours:
        return Outcome(error=RemoteProtocolError, mentions=(chosen, *ours))
    return Outcome(version=chosen)


def test_rules_sanity() -> None:
    """Spot checks of ``expected`` itself, against the brief's rules."""
    assert expected(AUTO, ALL) == Outcome(version="2026-07-28")
    assert expected(AUTO, "2025-06-18") == Outcome(version="2025-06-18")
    assert expected("2025-03-26", ALL) == Outcome(version="2025-03-26")
    assert expected("2026-07-28", "2025-11-25").error is ConnectError
    refusal = expected("2024-11-05", "2026-07-28")
    assert refusal.error is McpError and refusal.named == ("2026-07-28",)
    assert expected("2025-06-18", "2025-11-25").mentions == ("2025-11-25", "2025-06-18")
    successes = [(c, s) for c in CLIENTS for s in SERVERS if expected(c, s).version]
    # Each pinned client with its own revision and with "all" (10), auto with everything (6).
    assert len(successes) == 16


# --------------------------------------------------------------------------- running a pair


@attrs.frozen
class Observed:
    version: str | None = None
    era: str | None = None
    tools: tuple[str, ...] = ()
    echoed: str | None = None
    error: TrimcpError | None = None
    #: Seconds from connect to the end of the exchange.
    elapsed: float = 0.0

    def cell(self) -> str:
        if self.error is None:
            return f"{self.version} ({self.era})"
        # Every refusal is a ConnectError; what the peer said is its __cause__.
        cause = self.error.__cause__
        if isinstance(cause, McpError):
            return f"refused: initialize {cause.code}"
        if isinstance(cause, RemoteProtocolError):
            return "refused: client rejects answer"
        if isinstance(self.error, ConnectError):
            return "refused: discover -32022" if "-32022" in str(self.error) else f"refused: {self.error}"
        return f"refused: {type(self.error).__name__}"


async def _exchange(target: Any, client: str, message: str) -> Observed:
    try:
        async with open_client(
            target,
            revision=None if client == AUTO else client,
            timeouts=Timeouts(probe=PROBE_TIMEOUT, connect=DEADLINE["stdio"] - 5),
        ) as session:
            tools = await session.list_tools()
            result = await session.call_tool("echo", {"message": message})
            texts = [getattr(block, "text", None) for block in result.content]
            assert not result.is_error, result
            return Observed(
                version=session.protocol_version,
                era=session.era.value,
                tools=tuple(t.name for t in tools),
                echoed=texts[0] if len(texts) == 1 else repr(texts),
            )
    except TrimcpError as exc:
        return Observed(error=exc)


async def run_pair(client: str, server: str, transport: str) -> Observed:
    start = trio.current_time()
    observed = await _run_pair(client, server, transport)
    return attrs.evolve(observed, elapsed=trio.current_time() - start)


async def _run_pair(client: str, server: str, transport: str) -> Observed:
    message = f"{client} -> {server} over {transport}"
    with trio.fail_after(DEADLINE[transport]):
        if transport == "stdio":
            return await _exchange([sys.executable, HELPER, server], client, message)
        app = build_server()
        if server != ALL:
            app.supported_versions = (server,)
        async with serve_in_process(app) as client_end:
            observed = await _exchange(client_end, client, message)
        return observed


#: Outcomes seen so far, so that the table test reuses what the pair tests ran.
_OBSERVED: dict[tuple[str, str, str], Observed] = {}


async def observe(client: str, server: str, transport: str) -> Observed:
    key = (client, server, transport)
    if key not in _OBSERVED:
        _OBSERVED[key] = await run_pair(client, server, transport)
    return _OBSERVED[key]


def check(observed: Observed, want: Outcome, client: str, server: str, transport: str) -> None:
    if transport == "memory":
        # Every probe got an answer: none was abandoned after probe_timeout.
        assert observed.elapsed < PROBE_TIMEOUT
    if want.version is not None:
        assert observed.error is None, f"expected {want.version}, got {observed.error!r}"
        assert observed.version == want.version
        assert observed.era == want.era
        assert "echo" in observed.tools
        assert observed.echoed == f"{client} -> {server} over {transport}"
        return
    assert want.error is not None
    error = observed.error
    assert error is not None, f"expected a refusal ({want.error.__name__}), got {observed.version}"
    # open_client reports every refusal as ConnectError; the peer's own error is its cause.
    assert type(error) is ConnectError, repr(error)
    cause = error if want.error is ConnectError else error.__cause__
    assert type(cause) is want.error, repr(error)
    text = str(error)
    for fragment in want.mentions:
        assert fragment in text, f"{fragment!r} not in {text!r}"
    if want.code is not None:
        assert isinstance(cause, McpError)
        assert cause.code == want.code
        assert isinstance(cause.data, dict)
        assert tuple(cause.data["supported"]) == want.named


PAIRS = [
    pytest.param(client, server, transport, id=f"{transport}-client_{client}-server_{server}")
    for transport in TRANSPORTS
    for client in CLIENTS
    for server in SERVERS
]


@pytest.mark.parametrize(("client", "server", "transport"), PAIRS)
async def test_pair(client: str, server: str, transport: str) -> None:
    check(await observe(client, server, transport), expected(client, server), client, server, transport)


# --------------------------------------------------------------------------- the table


def render(cells: dict[tuple[str, str], str], title: str) -> str:
    """A Markdown table: clients down, servers across."""
    header = ["client \\ server", *(f"server {s}" for s in SERVERS)]
    rows = [[f"client {c}", *(cells[c, s] for s in SERVERS)] for c in CLIENTS]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([f"### {title}", "", line(header), rule, *(line(r) for r in rows)])


async def test_matrix_table() -> None:
    """Every transport gives the same matrix, and it is the one the rules predict."""
    want = {(c, s): expected(c, s).cell() for c in CLIENTS for s in SERVERS}
    tables = [render(want, "expected (from the rules)")]
    for transport in TRANSPORTS:
        got = {(c, s): (await observe(c, s, transport)).cell() for c in CLIENTS for s in SERVERS}
        tables.append(render(got, f"observed over {transport}"))
        assert got == want, f"{transport} differs from the rules:\n" + "\n".join(
            f"  client {c} / server {s}: got {got[c, s]!r}, want {want[c, s]!r}"
            for (c, s) in want
            if got[c, s] != want[c, s]
        )
    legend = (
        "Cells: the agreed revision and era, or how the connect was refused - "
        "`discover -32022` (ConnectError: the pinned 2026-07-28 probe was refused with "
        "UnsupportedProtocolVersion naming the server's revisions), `initialize -32022` "
        "(McpError: a 2026-07-28-only server refused initialize, naming 2026-07-28), "
        "`client rejects answer` (RemoteProtocolError: the server answered initialize with "
        "its own revision, which the pinned client does not speak)."
    )
    text = "\n\n".join(["## trimcp interoperability matrix", legend, *tables]) + "\n"
    print(text)
    out = os.environ.get("TRIMCP_MATRIX_OUT")
    if out:
        Path(out).write_text(text, encoding="utf-8")
