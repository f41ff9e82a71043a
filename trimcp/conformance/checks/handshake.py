"""Checks of the handshake era (2024-11-05 .. 2025-11-25): the initialize lifecycle.

Theory of operation
-------------------
By the time these run, ``open_client`` has completed ``initialize`` and sent
``notifications/initialized``; ``check_handshake`` judges what the server
answered (the revision it chose, its ``serverInfo``), ``handshake_tour`` runs
the era-only requests (``ping``, ``logging/setLevel``).  The raw probe of an
unknown requested revision lives in ``probes.py``; the feature tour shared
with the stateless era in ``features.py``.  When the handshake itself fails
``offered_revision`` digs the server's chosen revision out of the recording,
so that a server answering with a revision nobody knows is reported as such.
"""

from __future__ import annotations

from typing import Any

import trio

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio.revisions import ALL_VERSIONS
from ..._trio.client.client_session import ClientSession
from ..recorder import RecordingStream
from ..results import Results, Tour


def check_handshake(rec: Results, client: ClientSession, pinned: str | None) -> None:
    rec.ok("lifecycle.initialize", f"revision {client.protocol_version}")
    if client.protocol_version in ALL_VERSIONS and (pinned is None or client.protocol_version == pinned):
        rec.ok("lifecycle.version", client.protocol_version)
    else:
        rec.fail("lifecycle.version", f"server chose {client.protocol_version!r}")
    info = client.server_info
    if isinstance(info.get("name"), str) and isinstance(info.get("version"), str):
        rec.ok("lifecycle.server-info", f"{info['name']} {info['version']}")
    else:
        rec.fail("lifecycle.server-info", f"serverInfo is {info!r}")


async def handshake_tour(tour: Tour) -> None:
    rec, client = tour.rec, tour.client
    with trio.move_on_after(10) as scope:
        try:
            await client.ping()
            rec.ok("lifecycle.ping")
        except TrimcpError as exc:
            rec.fail("lifecycle.ping", str(exc))
    if scope.cancelled_caught:
        rec.fail("lifecycle.ping", "no answer within 10 s")
    if "logging" in client.server_capabilities:
        try:
            await client.set_logging_level("info")
            rec.ok("logging.set-level")
        except TrimcpError as exc:
            rec.fail("logging.set-level", str(exc))
    else:
        rec.skip("logging.set-level", "the server does not advertise logging")


def offered_revision(recording: RecordingStream | None) -> Any:
    """The protocolVersion of the server's initialize answer, if one arrived."""
    if recording is None:
        return None
    init_ids = {i for i, m in recording.sent_methods.items() if m == "initialize"}
    for _, msg in recording.messages():
        if isinstance(msg, rpc.Response) and msg.id in init_ids:
            return msg.result.get("protocolVersion")
    return None
