"""The default deadline of tests/conftest.py: a hanging async test fails, a passing one is untouched.

Each case runs a small test file in a pytest of its own (pytester, in a subprocess) under
tests/conftest.py as it is, with both defaults shortened so a hang costs half a second.
"""

from __future__ import annotations

import time

import pytest
from repo_paths import TESTS

pytest_plugins = ["pytester"]

CONFTEST = TESTS / "conftest.py"

CASES = """
import pytest
import trio


async def test_hangs() -> None:
    await trio.sleep_forever()


async def test_passes() -> None:
    await trio.sleep(0.01)


@pytest.fixture
async def stuck() -> None:
    await trio.Event().wait()


async def test_hangs_in_a_fixture(stuck: None) -> None:
    pass


async def test_hangs_on_the_virtual_clock(autojump_clock: object) -> None:
    await trio.Event().wait()


async def test_sleeps_an_hour_on_the_virtual_clock(autojump_clock: object) -> None:
    await trio.sleep(3600)


@pytest.mark.deadline(10)
async def test_sleeps_past_the_default_under_its_own_deadline() -> None:
    await trio.sleep(1)


async def test_waits_for_a_thread_on_the_virtual_clock(autojump_clock: object) -> None:
    # nothing else pending: a virtual deadline would be jumped to while the thread works
    await trio.to_thread.run_sync(time.sleep, 0.2)
    assert trio.current_time() == 0


@pytest.mark.deadline(0.2)
async def test_hangs_under_its_own_deadline() -> None:
    await trio.sleep_forever()


async def test_own_timeout_keeps_its_error() -> None:
    with trio.fail_after(0.01):
        await trio.sleep_forever()


def test_sync_is_not_touched() -> None:
    time.sleep(0.6)
"""


@pytest.fixture
def outcomes(pytester: pytest.Pytester) -> tuple[dict[str, str], str, float]:
    pytester.makeini("[pytest]\ntrio_mode = true\nfilterwarnings = error\n")
    # the suite's own conftest, with its real-clock default cut to half a second
    pytester.makeconftest(CONFTEST.read_text() + "\nDEADLINE = AUTOJUMP_DEADLINE = 0.5\n")
    pytester.makepyfile(test_cases="import time\n" + CASES)
    started = time.monotonic()
    result = pytester.runpytest_subprocess("-rA", "-p", "no:cacheprovider")
    took = time.monotonic() - started
    out = result.stdout.str()
    got = {}
    for line in result.stdout.lines:
        for word in ("PASSED", "FAILED"):
            if line.startswith(word + " "):
                got[line.split()[1].split("::")[-1]] = word
    return got, out, took


def test_hangs_fail_with_the_deadline_and_the_rest_pass(outcomes: tuple[dict[str, str], str, float]) -> None:
    got, out, took = outcomes
    assert got == {
        "test_hangs": "FAILED",
        "test_passes": "PASSED",
        "test_hangs_in_a_fixture": "FAILED",
        "test_hangs_on_the_virtual_clock": "FAILED",
        "test_sleeps_an_hour_on_the_virtual_clock": "PASSED",
        "test_sleeps_past_the_default_under_its_own_deadline": "PASSED",
        "test_waits_for_a_thread_on_the_virtual_clock": "PASSED",
        "test_hangs_under_its_own_deadline": "FAILED",
        "test_own_timeout_keeps_its_error": "FAILED",
        "test_sync_is_not_touched": "PASSED",
    }, out
    assert "test_cases.py::test_hangs passed its deadline of 0.5 s" in out
    assert "test_hangs_in_a_fixture passed its deadline of 0.5 s" in out
    assert "test_hangs_on_the_virtual_clock passed its deadline of 0.5 s" in out
    assert "test_hangs_under_its_own_deadline passed its deadline of 0.2 s" in out
    # the report shows where the test was waiting when the deadline came
    assert "await trio.sleep_forever()" in out
    # a test's own fail_after still raises its own error, not the default's
    assert "FAILED test_cases.py::test_own_timeout_keeps_its_error - TooSlowError" in out
    # an hour on the virtual clock passes at once; the hangs, the thread, the one-second sleep
    # and the sync test's 0.6 s are most of the time the run took (a subprocess start aside)
    assert took < 30, took
