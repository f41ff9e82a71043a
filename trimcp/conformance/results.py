"""Collecting check outcomes, and what the checks share during one run.

``Results`` keeps one ``CheckResult`` per check id; a check run several times
(once per tool, say) keeps its worst outcome (with that outcome's evidence), so one failing tool is not
hidden by the ninety that pass (among passes, the latest detail wins: it
counts the most).  ``finish`` completes the catalog: a check
that does not apply to the negotiated revision becomes ``skip`` "not in
<revision>", one never reached ``skip`` with the caller's reason.  A check the
run's ``Selection`` leaves out is ``skip`` "not selected" whatever happened;
``wants(*patterns)`` tells the runner whether a group of probes writing those
checks is worth running.  ``on_result``, when given, is called with each
outcome as it is put (the CLI's progress display).

A probe cut short by its time limit is not a check that does not apply: the
probe helpers call ``note_timeout(seconds)`` where a time limit ends one, and
the runner wraps each probe group in ``timed(rec, *patterns)``; a check of the
group still unjudged after a timeout there is ``skip`` "not reached: timed out
after N s", never ``finish``'s "not applicable".  The notes live in a context
variable the run sets (``timeouts.py``): the probe helpers need no ``Results``
of their own, and a timeout outside a run notes nothing.

Durations (JUnit's ``time=``): a monotonic clock runs from the ``Results``'
creation; the time from one recorded outcome to the next is the work that
produced the next one (a probe, then its verdicts), so it goes to the check
that outcome is for.  Outcomes put in one burst (within ``BURST`` seconds of
each other: one probe group writing several checks' verdicts) share the
burst's time evenly.  A check put several times sums its shares; a row
nothing was put for has no duration.

``Tour`` is the state of one run that the era modules share: the results, the
live client session, the recorded conversation, how to open another
connection for raw probes, and facts gathered on the way (which request asked
for input, which requests carried a ``logLevel``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import attrs

from .._sansio import schema as s
from .._trio.client.client_session import ClientSession
from .._trio.stream import MessageStream
from .catalog import CATALOG
from .model import CheckResult, Status
from .recorder import RecordingStream
from .selection import Selection
from .timeouts import current_timeouts, note_timeout, timed_out_after

Connector = Callable[[], AbstractAsyncContextManager[MessageStream]]

_RANK = {Status.SKIP: 0, Status.PASS: 1, Status.WARN: 2, Status.FAIL: 3}


@contextlib.contextmanager
def timed(rec: Results, *patterns: str) -> Iterator[None]:
    """Run one probe group: when a time limit ended one of its probes, its checks (ids or
    globs) still unjudged are "not reached: timed out after N s"."""
    seen = current_timeouts()
    before = len(seen) if seen is not None else 0
    try:
        yield
    finally:
        if seen is not None and len(seen) > before:
            rec.unreached(patterns, f"not reached: timed out after {max(seen[before:]):g} s")


#: Outcomes put closer together than this (seconds) are one burst: one probe group's verdicts.
BURST = 0.001


class Results:
    def __init__(
        self,
        revision: str | None = None,
        selection: Selection | None = None,
        on_result: Callable[[CheckResult], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        #: The negotiated revision (sets each row's level); ``None`` until known.
        self.revision = revision
        self.results: dict[str, CheckResult] = {}
        self.selection = selection or Selection()
        self.on_result = on_result
        #: Seconds per check id (see the module docstring); complete after ``finish``.
        self.durations: dict[str, float] = {}
        self._clock = clock
        self._mark = clock()  # where the open burst's time starts
        self._burst: list[str] = []
        self._burst_end = self._mark

    def _time(self, check_id: str) -> None:
        now = self._clock()
        if self._burst and now - self._burst_end > BURST:
            self._close_burst()
        self._burst.append(check_id)
        self._burst_end = now

    def _close_burst(self) -> None:
        if not self._burst:
            return
        share = (self._burst_end - self._mark) / len(self._burst)
        for check_id in self._burst:
            self.durations[check_id] = self.durations.get(check_id, 0.0) + share
        self._mark, self._burst = self._burst_end, []

    def selected(self, check_id: str) -> bool:
        return self.selection.selected(check_id)

    def wants(self, *patterns: str) -> bool:
        """Whether any selected check matches one of ``patterns`` (ids or globs)."""
        if self.selection.everything:
            return True
        return any(self.selected(i) for i in CATALOG if Selection(only=patterns).selected(i))

    def put(self, check_id: str, status: Status, detail: str = "", evidence: Sequence[Any] = ()) -> None:
        spec = CATALOG[check_id]
        self._time(check_id)
        if self.revision is not None and not spec.applies_to(self.revision):
            return  # a rule the negotiated revision does not have: ``finish`` says so
        previous = self.results.get(check_id)
        if previous is not None:
            rank, before = _RANK[status], _RANK[previous.status]
            # Keep the worst outcome (and its first detail); a later pass may say more.
            if rank < before or (rank == before and not (status is Status.PASS and detail)):
                return
        result = CheckResult(check_id, spec.level_for(self.revision), status, detail, tuple(evidence))
        self.results[check_id] = result
        if self.on_result is not None and self.selected(check_id):
            self.on_result(result)

    def ok(self, check_id: str, detail: str = "", evidence: Sequence[Any] = ()) -> None:
        self.put(check_id, Status.PASS, detail, evidence)

    def fail(self, check_id: str, detail: str, evidence: Sequence[Any] = ()) -> None:
        self.put(check_id, Status.FAIL, detail, evidence)

    def warn(self, check_id: str, detail: str, evidence: Sequence[Any] = ()) -> None:
        self.put(check_id, Status.WARN, detail, evidence)

    def skip(self, check_id: str, detail: str) -> None:
        self.put(check_id, Status.SKIP, detail)

    def failed(
        self,
        check_id: str,
        exc: BaseException,
        detail: str,
        evidence: Sequence[Any] = (),
        *,
        status: Status = Status.FAIL,
    ) -> None:
        """A probe of ``check_id`` ended with ``exc``: ``status`` (fail, or warn) with ``detail``,
        unless a time limit ended it; then the server broke nothing the probe saw, and the check
        is "not reached: timed out after N s" (issue 27: a probe cut short is never a failure)."""
        seconds = timed_out_after(exc)
        if seconds is None:
            self.put(check_id, status, detail, evidence)
        else:
            self.cut_short(check_id, seconds, detail)

    def cut_short(self, check_id: str, seconds: float, detail: str) -> None:
        """A time limit of ``seconds`` ended the probe of ``check_id`` before it could judge."""
        note_timeout(seconds)
        self.skip(check_id, f"not reached: timed out after {seconds:g} s ({detail})")

    def unreached(self, patterns: Sequence[str], detail: str) -> None:
        """``skip`` with ``detail`` every selected check matching ``patterns`` not yet judged."""
        matching = Selection(only=tuple(patterns))
        for check_id in CATALOG:
            if check_id not in self.results and matching.selected(check_id) and self.selected(check_id):
                self.skip(check_id, detail)

    def finish(self, unreached: str) -> list[CheckResult]:
        """Every catalog row, in catalog order; inapplicable checks are skipped as such."""
        self._close_burst()
        out: list[CheckResult] = []
        for check_id, spec in CATALOG.items():
            level = spec.level_for(self.revision)
            if not self.selected(check_id):
                out.append(CheckResult(check_id, level, Status.SKIP, "not selected"))
                continue
            if self.revision is not None and not spec.applies_to(self.revision):
                # Whatever ran on the way (nothing should), the revision has no such rule.
                out.append(CheckResult(check_id, level, Status.SKIP, f"not in {self.revision}"))
                continue
            found = self.results.get(check_id)
            if found is None:
                found = CheckResult(check_id, level, Status.SKIP, unreached)
            else:
                found = attrs.evolve(found, level=level, duration=self.durations.get(check_id))
            out.append(found)
        return out


@attrs.define
class Tour:
    rec: Results
    client: ClientSession
    recording: RecordingStream
    connect: Connector
    revision: str
    request_timeout: float
    #: The server's tools, once listed.
    tools: list[s.Tool] = attrs.field(factory=list)
    #: The URIs of the server's resources, once listed.
    resource_uris: list[str] = attrs.field(factory=list)
    #: Read-only tools actually called, by name.
    called_tools: list[str] = attrs.field(factory=list)
    #: Receive-index windows ``[start, end)`` during which a request with a logLevel was in flight.
    log_windows: list[tuple[int, int]] = attrs.field(factory=list)
    #: Every probe connection opened through ``connect`` (``recording_connector``), recorded.
    probe_recordings: list[RecordingStream] = attrs.field(factory=list)
