"""Cache hints across the pages of a list (2026-07-28, server/utilities/caching).

Theory of operation
-------------------
Read off the recorded conversation after the tour (which walked every list
to its end):

* ``caching.scope-stable``: "Servers MUST apply the same cacheScope to all
  response pages for a given list request".  The pages of one list are
  chained by cursor: a request without a cursor starts a list, a request
  whose ``cursor`` is the ``nextCursor`` of an earlier page of the same
  method continues it.  Each chain of two pages or more must carry one
  ``cacheScope``; a run with no paginated list skips.
* ``caching.interim-no-hints``: InputRequiredResults "are not cacheable and
  carry no caching hints" (no keyword: best practice).

``caching.hints`` (every cacheable complete result carries ``ttlMs >= 0``
and a ``cacheScope``) is judged in ``stateless.py`` with the other
per-result rules.
"""

from __future__ import annotations

from typing import Any

from ..._sansio import jsonrpc as rpc
from ..._sansio import schema as s
from ..evidence import received
from ..results import Tour

LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")


def check_cache_scopes(tour: Tour) -> None:
    recording, rec = tour.recording, tour.rec
    answers = recording.answers()
    ordered = sorted(recording.requests.values(), key=lambda r: recording.sent_at[r.id])
    #: (method, nextCursor) -> the chain of pages that cursor continues
    open_chains: dict[tuple[str, Any], list[rpc.Response]] = {}
    chains: list[tuple[str, list[rpc.Response]]] = []
    for request in ordered:
        if request.method not in LISTS:
            continue
        answer = answers.get(request.id)
        if answer is None or not isinstance(answer[1], rpc.Response):
            continue
        cursor = (request.params or {}).get("cursor")
        chain = open_chains.pop((request.method, cursor), None) if cursor is not None else None
        if chain is None:
            chain = []
            chains.append((request.method, chain))
        chain.append(answer[1])
        following = answer[1].result.get("nextCursor")
        if isinstance(following, str):
            open_chains[(request.method, following)] = chain
    paged = [(m, c) for m, c in chains if len(c) > 1]
    for method, pages in paged:
        scopes = [p.result.get("cacheScope") for p in pages]
        if len(set(map(repr, scopes))) > 1:
            shown = ", ".join(repr(s) for s in scopes)
            rec.fail(
                "caching.scope-stable",
                f"{method}: the pages carry cacheScope {shown}",
                [received(p) for p in pages[:4]],
            )
            return
    if paged:
        shown = ", ".join(f"{m} ({len(c)} pages)" for m, c in paged[:4])
        rec.ok("caching.scope-stable", f"one cacheScope per list: {shown}")
    else:
        rec.skip("caching.scope-stable", "no list had more than one page")


def check_interim_hints(tour: Tour) -> None:
    rec, seen, hinted = tour.rec, 0, []
    for _, answer in tour.recording.answers().values():
        if isinstance(answer, rpc.Response) and answer.result.get("resultType") == s.ResultType.INPUT_REQUIRED:
            seen += 1
            if "ttlMs" in answer.result or "cacheScope" in answer.result:
                hinted.append(answer)
    if hinted:
        rec.warn(
            "caching.interim-no-hints",
            f"{len(hinted)} InputRequiredResults carry ttlMs/cacheScope",
            [received(a) for a in hinted[:2]],
        )
    elif seen:
        rec.ok("caching.interim-no-hints", f"{seen} InputRequiredResults without hints")
    else:
        rec.skip("caching.interim-no-hints", "no InputRequiredResult during the run")
