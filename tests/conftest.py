"""What every test under tests/ shares: import paths, a deadline on every async test, fixtures.

Layout: tests sit in one folder per area (``sansio``, ``transports``, ``client``, ``server``,
``host``, ``check``, ``cli``, ``auth``, ``fuzzing``, ``project``; CONTRIBUTING.md says what
goes where); this file serves them all.

Imports: ``pyproject.toml``'s ``[tool.pytest.ini_options] pythonpath`` puts the repository root
(for ``fuzz``), ``tests`` (``fake_server``, ``peers``, ``helpers.*``) and ``tests/helpers`` on
``sys.path`` before collection, so no test module patches ``sys.path``.  ``tests/helpers`` is on
it because its scripts run as ``python tests/helpers/x.py`` and import their siblings by bare
name (``from jsonrpc_lines import ...``); a test importing ``helpers.x`` needs those names too.
Paths into the checkout come from ``helpers/repo_paths.py``, not from a test's own ``__file__``
(whose depth is the area folder's).  Test modules keep unique basenames: pytest's default
import mode imports each by basename (and puts its folder on ``sys.path``, so a test may import
a sibling test module of its own area; across areas, shared pieces live in ``helpers``).

Deadlines: every async test (pytest-trio runs each in a ``trio.run`` of its own) runs, fixtures
and all, inside a cancel scope that a watchdog thread cancels after a number of *real* seconds,
so a test that deadlocks fails instead of hanging the suite; the failure names the deadline and
chains the traceback of where the test was waiting.  The defaults:

- ``DEADLINE`` on the real clock: well above the slowest async test (about 9 s on a loaded
  two-core machine) and above the deadlines tests set themselves (up to 120 s; the one test that allows
  itself 240 s carries a marker);
- ``AUTOJUMP_DEADLINE`` on ``autojump_clock``, shorter: there waiting costs no real time (the
  slowest such test takes 0.6 s of it, for minutes of virtual time), so a hang shows sooner.

Why real seconds under ``autojump_clock``, not virtual ones: a virtual deadline is one more timer
in the run, and autojump jumps the clock to the next timer whenever every task is blocked.  A
test blocked on a worker thread or a socket doing real work, with no timer of its own pending,
would be jumped straight to the deadline and fail (test_host_pool's auth-cache test, which reads
a file in a thread, did).  The watchdog adds no timer, so the clock behaves as if it were not
there; the price is that a deadlock under autojump fails after ``AUTOJUMP_DEADLINE`` real
seconds rather than at once.

``@pytest.mark.deadline(seconds)`` replaces the default for one test (real seconds).  Sync tests
and hypothesis-driven async tests (pytest-trio runs those with ``trio.run`` directly) have none.

Signals: a runner started in the background by a non-interactive shell (``cmd &`` in ``sh``)
ignores SIGINT, as POSIX has it, and every process it starts inherits the ignoring (Python then
installs no KeyboardInterrupt handler).  The tests that interrupt a CLI, or count the signals a
server needed to stop, would see that instead of what a user's Ctrl-C does, so the suite
restores Python's own handler at start; its children then begin with the default disposition.

Fixtures here are the ones several test modules used to define identically.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from functools import partial
from typing import Any

import pytest
import trio
from trio.testing import MockClock

from trimcp.reference import build_server
from trimcp.server import serve_http

DEADLINE = 180.0
AUTOJUMP_DEADLINE = 30.0

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # see "Signals" above
    signal.signal(signal.SIGINT, signal.default_int_handler)

Runner = Callable[..., Any]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "deadline(seconds): this async test's deadline in real seconds instead of the default (tests/conftest.py)",
    )


def _cancel_soon(token: trio.lowlevel.TrioToken, scope: trio.CancelScope) -> None:
    """From the watchdog thread: cancel ``scope`` in its run, unless the run is over."""
    try:
        token.run_sync_soon(scope.cancel)
    except trio.RunFinishedError:
        pass


def with_deadline(run: Runner, nodeid: str, seconds: float | None) -> Runner:
    """``run`` (pytest-trio's runner: ``trio.run``'s signature) with the test under a deadline."""

    def bounded_run(
        fn: Callable[[], Awaitable[Any]],
        *,
        clock: trio.abc.Clock | None = None,
        instruments: Sequence[trio.abc.Instrument] = (),
    ) -> Any:
        __tracebackhide__ = True  # the report shows the test's frames, not these
        autojump = isinstance(clock, MockClock) and clock.autojump_threshold != float("inf")
        limit = seconds if seconds is not None else AUTOJUMP_DEADLINE if autojump else DEADLINE
        message = (
            f"{nodeid} passed its deadline of {limit:g} s "
            "(tests/conftest.py; @pytest.mark.deadline(seconds) sets a test's own)"
        )

        async def bounded() -> Any:
            __tracebackhide__ = True
            with trio.CancelScope() as scope:
                watchdog = threading.Timer(limit, _cancel_soon, (trio.lowlevel.current_trio_token(), scope))
                watchdog.daemon = True
                watchdog.start()
                try:
                    result = await fn()
                except BaseException as exc:
                    if scope.cancel_called:  # whatever the cancellation turned into
                        raise pytest.fail.Exception(message) from exc
                    raise
                finally:
                    watchdog.cancel()
            if scope.cancel_called:  # pytest-trio may absorb the Cancelled of a crashed run
                pytest.fail(message)
            return result

        return run(bounded, clock=clock, instruments=instruments)

    return bounded_run


@pytest.hookimpl(trylast=True)  # after pytest-trio's trio mode has marked the async tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        runs = [mark.kwargs["run"] for mark in item.iter_markers("trio") if "run" in mark.kwargs]
        if not runs and item.get_closest_marker("trio") is None:
            continue  # not an async test
        deadline = item.get_closest_marker("deadline")
        seconds = float(deadline.args[0]) if deadline is not None else None
        # pytest-trio runs a test with the first ``run`` its trio markers name: put ours first.
        runner = with_deadline(runs[0] if runs else trio.run, item.nodeid, seconds)
        item.add_marker(pytest.mark.trio(run=runner), append=False)


@pytest.fixture
async def url(nursery: trio.Nursery) -> str:
    """The URL of the bundled reference server over Streamable HTTP on 127.0.0.1, for this test."""
    bound = await nursery.start(partial(serve_http, build_server(), "127.0.0.1", 0))
    return str(bound.url)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """The URL of a real ``redis-server`` on a free loopback port, for the whole test session
    (each test keeps to keys of its own prefix); skipped only when the binary is missing."""
    from helpers.redis_server import MISSING, redis_binary, running_redis

    binary = redis_binary()
    if binary is None:
        pytest.skip(MISSING)
    with running_redis(binary) as url:
        yield url
