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
``check_version_same`` reads every ``initialize`` of the run once the probes
(among them one ``initialize`` per handshake revision, ``versions.py``) are done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import trio

from ..._errors import TrimcpError
from ..._sansio import jsonrpc as rpc
from ..._sansio.revisions import ALL_VERSIONS
from ..._trio.client.client_session import ClientSession
from ..evidence import received
from ..recorder import RecordingStream
from ..results import Results, Tour


def check_handshake(rec: Results, client: ClientSession, pinned: str | None) -> None:
    rec.ok("lifecycle.initialize", f"revision {client.protocol_version}")
    if client.protocol_version in ALL_VERSIONS:
        # Another revision than a pinned one is the Otherwise clause unless the server is known
        # to support the pinned one (``check_version_same`` reads every initialize of the run).
        asked = f" (asked {pinned})" if pinned is not None and pinned != client.protocol_version else ""
        rec.ok("lifecycle.version", client.protocol_version + asked)
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
            rec.failed("lifecycle.ping", exc, str(exc))
    if scope.cancelled_caught:  # (the harness's own cap, not the server's fault)
        rec.skip("lifecycle.ping", "not reached: timed out after 10 s")
    if "logging" in client.server_capabilities:
        try:
            await client.set_logging_level("info")
            rec.ok("logging.set-level")
        except TrimcpError as exc:
            rec.failed("logging.set-level", exc, str(exc))
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


def initialize_answers(recordings: Sequence[RecordingStream]) -> list[tuple[str, str, rpc.Message]]:
    """``(requested, chosen, answer)`` of every ``initialize`` of the run answered with a result."""
    out: list[tuple[str, str, rpc.Message]] = []
    for recording in recordings:
        answers = recording.answers()
        for rid, request in recording.requests.items():
            asked = (request.params or {}).get("protocolVersion") if request.method == "initialize" else None
            found = answers.get(rid)
            if not isinstance(asked, str) or found is None or not isinstance(found[1], rpc.Response):
                continue
            chosen = found[1].result.get("protocolVersion")
            if isinstance(chosen, str):
                out.append((asked, chosen, found[1]))
    return out


def check_version_same(rec: Results, recordings: Sequence[RecordingStream]) -> None:
    """basic/lifecycle: "If the server supports the requested protocol version, it MUST respond with
    the same version."  A black box knows the server supports ``v`` once it answered ``v``; every
    ``initialize`` of the run (the main one, each revision offered on a fresh connection by
    ``versions.py``, the probes' own) asking a revision it so supports must be answered with it.
    One asking a revision never answered may be negotiated to another (the Otherwise clause)."""
    check = "lifecycle.version"
    pairs = initialize_answers(recordings)
    supported = {chosen for _, chosen, _ in pairs if chosen in ALL_VERSIONS}
    for asked, chosen, answer in pairs:
        if asked in supported and chosen != asked:
            rec.fail(
                check,
                f"initialize asking {asked} answered with {chosen}, though the server answered "
                f"{asked} when asked elsewhere in the run",
                [received(answer)],
            )
            return
    asked_all = sorted({asked for asked, _, _ in pairs if asked in ALL_VERSIONS})
    if pairs:
        rec.ok(
            check,
            f"{len(pairs)} initialize answers (asking {', '.join(asked_all)}): each revision the server "
            f"answered ({', '.join(sorted(supported))}) is answered with itself whenever asked",
        )
