"""``prespawn.ahead``: a stdio run's next server process starts while the current connection
runs; the server still sees one fresh process per connection, and nothing outlives the run.

Fake processes (a context manager per "spawn" that takes a second to start) under the
autojump clock: the times show what ran ahead; the real stdio path is exercised by every
``trimcp check`` of a command in the suite.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest
import trio

from trimcp import ConnectError
from trimcp._trio.stream import MessageStream
from trimcp.conformance.prespawn import ProcessConnector, ahead

START = 1.0  # how long a fake process takes to start


class FakeProcess:
    def __init__(self, number: int) -> None:
        self.number = number
        self.returncode: int | None = None
        self.closed = False
        self.used = False


class Spawner:
    def __init__(self, *, dies: set[int] = frozenset(), fails: set[int] = frozenset()) -> None:
        self.made: list[FakeProcess] = []
        self.dies, self.fails = dies, fails

    def open(self) -> AbstractAsyncContextManager[MessageStream]:
        @asynccontextmanager
        async def opening() -> AsyncIterator[MessageStream]:
            number = len(self.made)
            process = FakeProcess(number)
            self.made.append(process)
            await trio.sleep(START)
            if number in self.fails:
                raise ConnectError(f"process {number} could not start")
            if number in self.dies:
                process.returncode = 1  # exited while it waited
            try:
                yield process  # type: ignore[misc]
            finally:
                process.closed = True

        return opening()


async def test_the_next_process_starts_while_the_current_connection_runs(autojump_clock: trio.abc.Clock) -> None:
    spawner = Spawner()
    t0 = trio.current_time()
    async with ahead(ProcessConnector(spawner.open)) as connect:
        for _ in range(3):
            async with connect() as stream:
                stream.used = True  # type: ignore[attr-defined]
                await trio.sleep(2)  # the connection's work: the next process starts meanwhile
    elapsed = trio.current_time() - t0
    # One start paid up front, then none: 1 + 3 * 2 s, not 3 * (1 + 2) s.
    assert elapsed == pytest.approx(START + 3 * 2)
    # Each connection had a process of its own; the one spare left over was shut down unused.
    assert [p.used for p in spawner.made] == [True, True, True, False]
    assert all(p.closed for p in spawner.made)


async def test_each_connection_is_closed_when_its_block_ends(autojump_clock: trio.abc.Clock) -> None:
    spawner = Spawner()
    async with ahead(ProcessConnector(spawner.open)) as connect:
        async with connect() as first:
            pass
        assert first.closed  # type: ignore[attr-defined]  (as without a spare: closed on exit)
        async with connect() as second:
            assert second is not first and not second.closed  # type: ignore[attr-defined]
        assert second.closed  # type: ignore[attr-defined]


async def test_a_spare_that_exited_while_waiting_is_replaced_by_a_fresh_one(
    autojump_clock: trio.abc.Clock,
) -> None:
    spawner = Spawner(dies={1})  # process 1 (the first spare) exits before it is wanted
    async with ahead(ProcessConnector(spawner.open)) as connect:
        async with connect():
            await trio.sleep(2)
        async with connect() as stream:
            assert stream.returncode is None  # type: ignore[attr-defined]
    assert spawner.made[1].closed and all(p.closed for p in spawner.made)


async def test_a_spare_that_cannot_start_leaves_the_failure_to_a_fresh_attempt(
    autojump_clock: trio.abc.Clock,
) -> None:
    spawner = Spawner(fails={1, 2, 3})
    async with ahead(ProcessConnector(spawner.open)) as connect:
        async with connect():
            await trio.sleep(2)
        with pytest.raises(ConnectError):  # the fresh attempt reports it, as without a spare
            async with connect():
                pass


async def test_other_connectors_are_left_as_they_are() -> None:
    spawner = Spawner()
    opener = spawner.open
    async with ahead(opener) as connect:
        assert connect is opener


async def test_an_error_of_the_run_comes_out_as_itself(autojump_clock: trio.abc.Clock) -> None:
    spawner = Spawner()
    with pytest.raises(ValueError, match="the run's own"):
        async with ahead(ProcessConnector(spawner.open)) as connect, connect():
            raise ValueError("the run's own")
    assert all(p.closed for p in spawner.made)
