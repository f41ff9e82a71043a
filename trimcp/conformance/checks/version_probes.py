"""The stateless era's version probes, which need to know what the server implements.

Theory of operation
-------------------
basic/versioning and basic/lifecycle of 2026-07-28.  ``stateless.unsupported-version``:
``server/discover`` and a list request declaring 1999-01-01, and one declaring a known
revision the server does not implement (not in the DiscoverResult, and not answered by
``initialize``: ``versions.py``), must get -32022 whose ``data`` names the supported
revisions (the same as ``supportedVersions``, the one in use among them) and echoes the
requested one; the sentence does not apply to a version the server implements.
``versioning.initialize-error``: a server that answers ``initialize`` with no result
(modern-only) should name its revisions in the error; a server that also serves legacy
clients is not the sentence's subject.

Apart from ``probes.py`` because ``versions.py`` probes with ``probes.exchange``: one
arrow each way would be a circle.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..._sansio.revisions import HANDSHAKE_VERSIONS
from .. import evidence
from ..results import Connector, Results
from .probes import BOGUS_REVISION, Answer, ProbeFailed, envelope, exchange, list_method
from .versions import ServerVersions

__all__ = ["probe_stateless_version"]


async def probe_stateless_version(
    rec: Results,
    connect: Connector,
    revision: str,
    capabilities: dict[str, Any],
    timeout: float,
    supported: Sequence[str],
    versions: ServerVersions,
) -> None:
    """-32022 for a revision the server does not implement (``versions`` knows which it does,
    ``supported`` is the DiscoverResult's list); ``initialize`` to a modern-only server."""
    check = "stateless.unsupported-version"
    meta = {"_meta": envelope(revision, version=BOGUS_REVISION)}
    requests = [rpc.Request(0, "server/discover", meta)]
    method = list_method(capabilities)
    if method is not None:
        requests.append(rpc.Request(1, method, meta))
    requested = {0: BOGUS_REVISION, 1: BOGUS_REVISION}
    # "or is a known version the server has chosen not to support": one it does not implement;
    # a dual-era server implements the handshake ones (initialize says), and the sentence does
    # not apply to a version the server implements.
    known = await versions.known_unimplemented() if supported else None
    if known is not None:
        requests.append(rpc.Request(3, method or "server/discover", {"_meta": envelope(revision, version=known)}))
        requested[3] = known
    await _judge_initialize_error(rec, versions)
    try:
        answers = await exchange(connect, requests, timeout)
    except ProbeFailed as exc:
        rec.failed(check, exc, f"no answer: {exc}")
        return
    for request, answer in zip(requests, answers, strict=True):
        version = requested[int(str(request.id))]
        problem = _unsupported_version_problem(answer, revision, supported, version)
        if problem:
            rec.fail(
                check,
                f"{request.method} declaring {version}: {problem}",
                [evidence.sent(request), evidence.received(answer)],
            )
            return
    shown = ", ".join(f"{r.method} ({requested[int(str(r.id))]})" for r in requests)
    implemented = [v for v in HANDSHAKE_VERSIONS if v not in supported and versions.known_implemented(v)]
    also = f"; not asked with {', '.join(implemented)}, which initialize showed it implements" if implemented else ""
    rec.ok(check, f"-32022 to {shown}{also}")


async def _judge_initialize_error(rec: Results, versions: ServerVersions) -> None:
    """basic/versioning: a server that supports only modern versions SHOULD name them in the
    error it answers ``initialize`` with (offered on a fresh connection, as a legacy client would)."""
    check = "versioning.initialize-error"
    offer = await versions.legacy_probe()
    shown = list(offer.evidence)
    if offer.chosen is not None:
        rec.skip(
            check,
            f"the server also serves legacy clients ({offer.said}); the sentence is about a "
            "server that supports only modern versions",
        )
        return
    if offer.error is not None:
        text = json.dumps([offer.error.get("message"), offer.error.get("data")])
        said = f"the error to initialize ({offer.error.get('code')} {offer.error.get('message')!r})"
    else:
        text, said = offer.failure, f"initialize got no JSON-RPC error ({offer.failure or 'no answer'}), so"
    missing = [v for v in versions.modern if v not in text]
    if missing:
        rec.warn(check, f"{said} does not name {', '.join(missing)}", shown)
    else:
        rec.ok(check, f"{said} names {', '.join(versions.modern)}")


def _unsupported_version_problem(
    answer: Answer,
    revision: str,
    discovered: Sequence[str] = (),
    requested: str = BOGUS_REVISION,
) -> str | None:
    if isinstance(answer, rpc.Response):
        return "answered with a result"
    err = answer.error
    if err.code != rpc.UNSUPPORTED_PROTOCOL_VERSION:
        return f"error {err.code} ({err.message}), not -32022"
    try:
        data = s.parse_error_data(err.code, err.data)
    except s.SchemaError as exc:
        return f"error data: {exc}"
    assert isinstance(data, s.UnsupportedProtocolVersionErrorData)
    if data.requested != requested:
        return f"data.requested is {data.requested!r}"
    if revision not in data.supported:
        return f"data.supported {data.supported} lacks {revision}, the revision in use"
    if discovered and set(data.supported) != set(discovered):
        # Both claim to list "the versions it does support": one of them is wrong.
        return f"data.supported {list(data.supported)} differs from supportedVersions {list(discovered)}"
    return None
