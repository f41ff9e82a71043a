"""A correct server that is only slow: ``--timeout`` cuts probes short, and every probe cut short
is "not reached: timed out", never a failure or a warning (issue 27, item 5).

The reference server runs in-process behind a stream that holds back every answer but the
opening one (``initialize`` / ``server/discover``) for longer than the run's request timeout;
the autojump clock makes the waits instant.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio

from trimcp import ConnectTimeout
from trimcp._sansio import jsonrpc
from trimcp._trio._groups import collapse
from trimcp._trio.stream import NO_META, Inbound, MessageStream, Received, SendMeta, parse_received
from trimcp.conformance import run_checks
from trimcp.conformance.model import Report, Status
from trimcp.conformance.recorder import RecordingStream
from trimcp.conformance.results import Connector, Results
from trimcp.conformance.runner import _connect_failed
from trimcp.reference.server import build_server
from trimcp.testing import serve_in_process

DELAY = 5.0
TIMEOUT = 1.0


class Slow:
    """``inner``, with every answer but the opening ones held back ``DELAY`` s."""

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        await self.inner.send(message, meta)

    async def receive(self) -> Inbound:
        item = await self.inner.receive()
        if isinstance(item, Received) and b'"result"' in item.data:
            opening = b'"serverInfo"' in item.data or b'"supportedVersions"' in item.data
            if not opening:
                await trio.sleep(DELAY)
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()


def slow_reference() -> Connector:
    @asynccontextmanager
    async def connect() -> AsyncIterator[MessageStream]:
        with collapse():  # (as a real transport does: the in-process nursery's group unwrapped)
            async with serve_in_process(build_server()) as stream:
                yield Slow(stream)

    return connect


@pytest.mark.parametrize("revision", [None, "2025-11-25", "2024-11-05"])
async def test_probes_cut_short_by_the_timeout_are_not_reached(
    revision: str | None, autojump_clock: trio.abc.Clock
) -> None:
    with trio.fail_after(3600):
        report = await run_checks(
            slow_reference(),
            target="slow reference",
            revision=revision,
            connect_timeout=TIMEOUT,
            request_timeout=TIMEOUT,
        )
    assert report.revision is not None
    judged = [(r.id, r.status.value, r.detail) for r in report.results if r.status in (Status.FAIL, Status.WARN)]
    assert judged == []
    timed_out = [r for r in report.results if "timed out" in r.detail]
    assert timed_out, "the delay must have cut probes short, or this test judges nothing"
    assert all(r.status is Status.SKIP and r.detail.startswith("not reached: timed out") for r in timed_out)


class _Late:
    """A stream whose answer to the opening request is read only after the deadline passed."""

    def __init__(self) -> None:
        self.sent: list[jsonrpc.Message] = []

    async def send(self, message: jsonrpc.Message, meta: SendMeta = NO_META) -> None:
        self.sent.append(message)

    async def receive(self) -> Inbound:
        request = self.sent[-1]
        assert isinstance(request, jsonrpc.Request)
        body = {"jsonrpc": "2.0", "id": request.id, "result": {"supportedVersions": ["2026-07-28"]}}
        return parse_received(json.dumps(body).encode())

    async def aclose(self) -> None:
        pass


async def test_an_opening_answered_after_the_timeout_is_not_checked() -> None:
    """The first request answered, but only after the connect deadline: the run could not be
    checked (exit 4), saying the timeout cut it short; no check failed.  (A server that never
    answers at all is still ``lifecycle.connect`` fail: tests/cli/test_cli_exits.py.)"""
    recording = RecordingStream(_Late())  # type: ignore[arg-type]
    await recording.send(jsonrpc.Request(0, "server/discover", {}))
    await recording.receive()
    rec = Results()
    _connect_failed(
        rec,
        ConnectTimeout("no answer to server/discover within 1 s", phase="server/discover", seconds=1.0),
        None,
        recording,
    )
    report = Report(target="late", results=rec.finish("not reached"))
    assert [r.id for r in report.results if r.status in (Status.FAIL, Status.WARN)] == []
    connect = next(r for r in report.results if r.id == "lifecycle.connect")
    assert connect.status is Status.SKIP and connect.detail.startswith("not reached: timed out after 1 s")
    assert report.not_checked is not None and report.not_checked.startswith("timed out after 1 s")
