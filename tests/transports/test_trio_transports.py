"""Trio transports: the in-memory pair, stdio to a child process, and stdio server side.

The stdio tests run real child processes (tests/helpers/stdio_child.py), so they
run in real time under a ``fail_after`` bound.  The shutdown escalation's timing
is tested separately in virtual time (``autojump_clock``) against a fake process,
since a real child does not advance with the mock clock: with autojump, the
clock jumps to the ``fail_after`` deadline as soon as every task waits on the
child, failing the test spuriously.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from repo_paths import HELPERS

from trimcp._errors import ConnectError, RemoteProtocolError, TransportClosed
from trimcp._sansio import jsonrpc
from trimcp._trio.memory import memory_stream_pair
from trimcp._trio.stream import MessageStream
from trimcp._trio.transports import stdio as stdio_mod
from trimcp._trio.transports._pipes import LineWriter, StderrTail
from trimcp._trio.transports.stdio import (
    open_stdio_process,
    open_stdio_server_stream,
    terminate_process,
)

CHILD = str(HELPERS / "stdio_child.py")
PY = sys.executable

MESSAGES: list[jsonrpc.Message] = [
    jsonrpc.Request(1, "tools/call", {"name": "echo", "arguments": {"text": "line\nbreak \u2028 é"}}),
    jsonrpc.Request("abc", "ping"),
    jsonrpc.Notification("notifications/initialized"),
    jsonrpc.Response(1, {"content": []}),
    jsonrpc.ErrorResponse(None, jsonrpc.ErrorObject(-32700, "parse error")),
]


def child(*args: str) -> list[str]:
    return [PY, CHILD, *args]


def assert_reaped(pid: int) -> None:
    # waitpid on a pid that is no longer our (unreaped) child raises ChildProcessError.
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def is_dead(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is dead, just unreaped


# --------------------------------------------------------------------------- memory


async def test_memory_round_trip_is_wire_format() -> None:
    with trio.fail_after(5):
        a, b = memory_stream_pair()
        assert isinstance(a, MessageStream)
        for msg in MESSAGES:
            await a.send(msg)
            data = (await b.receive()).data
            assert isinstance(data, bytes)
            assert data == jsonrpc.serialize(msg)
            assert jsonrpc.parse_payload(data).messages == [msg]
        await b.send(MESSAGES[0])
        assert (await a.receive()).payload.messages == [MESSAGES[0]]
        await a.aclose()
        await b.aclose()


async def test_memory_close_drains_then_closed() -> None:
    with trio.fail_after(5):
        a, b = memory_stream_pair()
        await a.send(MESSAGES[1])
        await a.send(MESSAGES[2])
        await a.aclose()
        await a.aclose()  # idempotent
        assert (await b.receive()).data == jsonrpc.serialize(MESSAGES[1])
        assert (await b.receive()).data == jsonrpc.serialize(MESSAGES[2])
        with pytest.raises(TransportClosed):
            await b.receive()
        with pytest.raises(TransportClosed):  # peer gone
            await b.send(MESSAGES[1])
        with pytest.raises(TransportClosed):  # own end closed
            await a.send(MESSAGES[1])
        with pytest.raises(TransportClosed):
            await a.receive()
        await b.aclose()


async def test_memory_close_wakes_blocked_tasks() -> None:
    with trio.fail_after(5):
        failures: list[str] = []

        async def expect_closed(name: str, fn: object, *args: object) -> None:
            with pytest.raises(TransportClosed):
                await fn(*args)  # type: ignore[operator]
            failures.append(name)

        # Peer closes: our sender blocked on a full buffer and our receiver both wake.
        a, b = memory_stream_pair(max_buffer=1)
        await a.send(MESSAGES[1])  # fills the buffer
        async with trio.open_nursery() as nursery:
            nursery.start_soon(expect_closed, "send", a.send, MESSAGES[2])
            nursery.start_soon(expect_closed, "receive", a.receive)
            await trio.testing.wait_all_tasks_blocked()
            assert failures == []
            await b.aclose()
        assert sorted(failures) == ["receive", "send"]
        await a.aclose()

        # Own end closed from another task: the blocked receiver wakes.
        failures.clear()
        a, b = memory_stream_pair()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(expect_closed, "receive", a.receive)
            await trio.testing.wait_all_tasks_blocked()
            await a.aclose()
        assert failures == ["receive"]
        await b.aclose()


# --------------------------------------------------------------------------- stdio: client


async def test_stdio_echo_round_trip_and_clean_exit() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("echo")) as stream:
            assert isinstance(stream, MessageStream)
            assert stream.returncode is None
            for msg in MESSAGES:
                await stream.send(msg)
                assert (await stream.receive()).data == jsonrpc.serialize(msg)
            # Bigger than a pipe buffer: exercises partial writes and split reads.
            big = jsonrpc.Request(7, "big", {"blob": "y" * 1_000_000})
            await stream.send(big)
            assert (await stream.receive()).data == jsonrpc.serialize(big)
            pid = stream.pid
        # Closing stdin was enough: no signal was needed (SIGINT would give status 1).
        assert stream.returncode == 0
        assert_reaped(pid)
        with pytest.raises(TransportClosed):
            await stream.send(MESSAGES[1])
        with pytest.raises(TransportClosed):
            await stream.receive()


async def test_stdio_concurrent_sends_do_not_interleave() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("echo")) as stream:
            sent = [jsonrpc.Request(i, "m", {"pad": str(i) * 70_000}) for i in range(8)]
            async with trio.open_nursery() as nursery:
                for msg in sent:
                    nursery.start_soon(stream.send, msg)
                got = [(await stream.receive()).data for _ in sent]
            assert sorted(got) == sorted(jsonrpc.serialize(m) for m in sent)


async def test_stdio_exit_status_and_stderr_in_transport_closed() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("fail")) as stream:
            with pytest.raises(TransportClosed) as info:
                await stream.receive()
        err = info.value
        assert err.returncode == 3
        assert "fatal: cannot open database" in err.stderr_tail
        assert str(err).count("status 3") == 1 and "exited with status 3" in str(err)  # said once
        assert "fatal: cannot open database" in str(err)
        assert stream.stderr_tail() == "starting up\nfatal: cannot open database"
        assert_reaped(stream.pid)


async def test_stdio_partial_line_then_exit() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("partial")) as stream:
            with pytest.raises(TransportClosed, match="in the middle of a message") as info:
                await stream.receive()
            assert info.value.returncode == 0


async def test_stdio_oversize_line_closes_stream() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("oversize", "5000"), max_line=1024, shutdown_grace=5) as stream:
            with pytest.raises(RemoteProtocolError, match="1024-byte limit"):
                await stream.receive()
            # The stream was closed: the child (which exits at stdin EOF) is gone.
            assert stream.returncode == 0
            with pytest.raises(TransportClosed):
                await stream.receive()
            with pytest.raises(TransportClosed):
                await stream.send(MESSAGES[1])


async def test_stdio_oversize_line_delivers_what_came_before_it() -> None:
    # A response and a runaway line in one read: the response is not lost with it.
    answer = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'
    with trio.fail_after(10):
        async with open_stdio_process(child("oversize", "5000", answer), max_line=1024, shutdown_grace=5) as stream:
            assert (await stream.receive()).data == answer.encode()
            with pytest.raises(RemoteProtocolError, match="1024-byte limit"):
                await stream.receive()
            with pytest.raises(TransportClosed):
                await stream.receive()


async def test_stdio_missing_executable(tmp_path: Path) -> None:
    not_executable = tmp_path / "server.py"
    not_executable.write_text("print('hi')\n")
    not_executable.chmod(0o644)
    with trio.fail_after(5):
        with pytest.raises(ConnectError, match="not found"):
            async with open_stdio_process(["/nonexistent/trimcp-no-such-server", "--x"]):
                pass  # pragma: no cover
        with pytest.raises(ConnectError, match="trimcp-no-such-server.*not found"):
            async with open_stdio_process(["trimcp-no-such-server"]):  # PATH lookup
                pass  # pragma: no cover
        with pytest.raises(ConnectError, match="not executable"):
            async with open_stdio_process([str(not_executable)]):
                pass  # pragma: no cover
        with pytest.raises(ConnectError, match="nope"):  # a missing cwd is reported too
            async with open_stdio_process(child("echo"), cwd=tmp_path / "nope"):
                pass  # pragma: no cover


async def test_stdio_env_is_merged_and_cwd_applies(tmp_path: Path) -> None:
    script = (
        "import os,sys; "
        "sys.stderr.write(os.environ['TRIMCP_TEST'] + ' ' + ('PATH' in os.environ and 'path') "
        "+ ' ' + os.getcwd())"
    )
    with trio.fail_after(10):
        async with open_stdio_process([PY, "-c", script], env={"TRIMCP_TEST": "hello"}, cwd=tmp_path) as stream:
            with pytest.raises(TransportClosed):
                await stream.receive()
        assert stream.stderr_tail() == f"hello path {tmp_path}"


async def test_stdio_stderr_flood_does_not_block_and_is_bounded() -> None:
    lines: list[str] = []
    with trio.fail_after(20):
        async with open_stdio_process(
            child("flood", str(4 * 1024 * 1024)),
            stderr_lines=50,
            stderr_bytes=4096,
            on_stderr=lines.append,
        ) as stream:
            # The child writes 4 MiB to stderr before it reads stdin: this only
            # answers if stderr is being drained concurrently.
            await stream.send(MESSAGES[1])
            assert (await stream.receive()).data == jsonrpc.serialize(MESSAGES[1])
        tail = stream.stderr_tail()
        assert len(tail.encode()) <= 4096 + 50
        assert len(tail.splitlines()) <= 50
        assert tail.endswith("flood done")
        assert lines[0].startswith("stderr line 0 ") and lines[-1] == "flood done"


async def test_stdio_stderr_callback_failure_is_contained(caplog: pytest.LogCaptureFixture) -> None:
    def broken(line: str) -> None:
        raise RuntimeError("boom")

    with trio.fail_after(10):
        async with open_stdio_process(child("fail"), on_stderr=broken) as stream:
            with pytest.raises(TransportClosed):
                await stream.receive()
    assert stream.stderr_tail().endswith("fatal: cannot open database")
    assert "on_stderr callback failed" in caplog.text


async def test_stdio_shutdown_escalation_order(tmp_path: Path) -> None:
    # Real time: the child's signal handlers run in real time, so the
    # escalation waits (100 ms, 400 ms) must really elapse.  A short grace
    # keeps the test fast.
    log = tmp_path / "signals.log"
    with trio.fail_after(10):
        async with open_stdio_process(child("trap", str(log)), shutdown_grace=0.2) as stream:
            grandchild = int((await stream.receive()).data)
            assert (await stream.receive()).data == b"ready"  # handlers are installed
            start = time.monotonic()
        elapsed = time.monotonic() - start
    assert log.read_text().splitlines() == ["SIGINT", "SIGTERM"]
    assert stream.returncode == -signal.SIGKILL
    assert 0.2 + 0.1 + 0.4 <= elapsed < 3
    assert_reaped(stream.pid)
    # The whole process group was signalled, not just the child.
    with trio.fail_after(5):
        while not is_dead(grandchild):
            await trio.sleep(0.01)


async def test_stdio_shutdown_survives_cancellation(tmp_path: Path) -> None:
    with trio.fail_after(10):
        with trio.CancelScope() as scope:
            async with open_stdio_process(child("trap", str(tmp_path / "log"), "ignore"), shutdown_grace=0.1) as stream:
                await stream.receive()
                assert (await stream.receive()).data == b"ready"  # SIGINT/SIGTERM now ignored
                scope.cancel()
                await trio.sleep_forever()
        assert scope.cancelled_caught
    # Shutdown ran (shielded) although the body was cancelled: killed and reaped.
    assert stream.returncode == -signal.SIGKILL
    assert_reaped(stream.pid)


async def test_stdio_body_exception_is_not_wrapped_in_group() -> None:
    class Boom(Exception):
        pass

    cause = KeyError("why")
    with trio.fail_after(10):
        with pytest.raises(Boom) as info:
            async with open_stdio_process(child("echo")) as stream:
                raise Boom("body failed") from cause
    assert not isinstance(info.value, BaseExceptionGroup)
    assert info.value.__cause__ is cause
    assert stream.returncode == 0


async def test_stdio_explicit_aclose_is_idempotent_and_wakes_receiver() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("echo")) as stream, trio.open_nursery() as nursery:

            async def reader() -> None:
                with pytest.raises(TransportClosed):
                    await stream.receive()

            nursery.start_soon(reader)
            await trio.testing.wait_all_tasks_blocked()
            await stream.aclose()
            await stream.aclose()
        assert stream.returncode == 0


async def test_stdio_cancelled_partial_write_poisons_sends(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("trap", str(tmp_path / "log"), "ignore"), shutdown_grace=0.1) as stream:
            await stream.receive()
            assert (await stream.receive()).data == b"ready"
            # The child never reads stdin: a 1 MB line fills the pipe and blocks part-way.
            with trio.move_on_after(0.3) as scope:
                await stream.send(jsonrpc.Request(1, "big", {"blob": "z" * 1_000_000}))
            assert scope.cancelled_caught
            with pytest.raises(TransportClosed, match="part of a message"):
                await stream.send(MESSAGES[1])


async def test_stdio_send_to_exited_child_reports_status() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("fail")) as stream:
            with pytest.raises(TransportClosed):
                await stream.receive()
            with pytest.raises(TransportClosed) as info:
                for _ in range(100):  # the first writes may still fit the dead pipe's buffer
                    await stream.send(MESSAGES[0])
            assert info.value.returncode == 3
        # Said as the receive says it: how it ended, once, then what it said last.  That it
        # also stopped reading is no news once it has exited (whichever side saw it first).
        message = str(info.value)
        assert message.count("exited with status 3") == 1 and "stopped reading" not in message, message
        assert message.endswith("fatal: cannot open database"), message


async def test_stdio_send_to_live_child_that_closed_stdin_says_so() -> None:
    with trio.fail_after(10):
        async with open_stdio_process(child("deaf")) as stream:
            assert stream.process.stdout is not None
            assert b"ready" in await stream.process.stdout.receive_some()
            with pytest.raises(TransportClosed) as info:
                for _ in range(100):  # the first writes may still fit the pipe's buffer
                    await stream.send(MESSAGES[0])
            assert info.value.returncode is None
            assert str(info.value).endswith("stopped reading its stdin"), str(info.value)


# --------------------------------------------------------------------------- escalation timing


class FakeProcess:
    """Enough of trio.Process for ``terminate_process``, dying on chosen signals."""

    def __init__(self, *, exits_after: float | None = None, dies_on: Iterable[int] = ()) -> None:
        self.returncode: int | None = None
        self.signals: list[tuple[str, float]] = []
        self._dies_on = set(dies_on) | {signal.SIGKILL}
        self._exited = trio.Event()
        self._exits_after = exits_after

    def exit(self, status: int) -> None:
        self.returncode = status
        self._exited.set()

    async def run(self) -> None:
        if self._exits_after is not None:
            await trio.sleep(self._exits_after)
            self.exit(0)

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        assert self.returncode is None, "signalled an exited process"
        self.signals.append((signal.Signals(signum).name, trio.current_time()))
        if signum in self._dies_on:
            self.exit(-signum)


@pytest.mark.parametrize(
    ("exits_after", "dies_on", "expected", "status"),
    [
        (1.5, set(), [], 0),
        (None, {signal.SIGINT}, [("SIGINT", 2.0)], -signal.SIGINT),
        (None, {signal.SIGTERM}, [("SIGINT", 2.0), ("SIGTERM", 2.1)], -signal.SIGTERM),
        (None, set(), [("SIGINT", 2.0), ("SIGTERM", 2.1), ("SIGKILL", 2.5)], -signal.SIGKILL),
    ],
)
async def test_escalation_timing(
    autojump_clock: trio.testing.MockClock,
    exits_after: float | None,
    dies_on: set[int],
    expected: list[tuple[str, float]],
    status: int,
) -> None:
    with trio.fail_after(60):
        proc = FakeProcess(exits_after=exits_after, dies_on=dies_on)
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(proc.run)
            assert await terminate_process(proc, grace=2.0, send_signal=proc.send_signal) == status
        got = [(name, round(t - start, 6)) for name, t in proc.signals]
        assert got == expected
        assert stdio_mod.ESCALATION == ((signal.SIGINT, 0.1), (signal.SIGTERM, 0.4))


# --------------------------------------------------------------------------- pipe plumbing


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


@given(st.text(alphabet="ab é\n", max_size=200), st.lists(st.integers(0, 400), max_size=20))
def test_stderr_tail_random_splits(text: str, cuts: list[int]) -> None:
    seen: list[str] = []
    tail = StderrTail(max_lines=5, max_bytes=100_000, on_line=seen.append)
    for chunk in split_at(text.encode(), cuts):
        tail.feed(chunk)
    tail.feed_eof()
    expected = text.split("\n")
    if expected[-1] == "":
        expected.pop()  # a trailing newline ends the last line; it does not start one
    assert seen == expected
    assert tail.text() == "\n".join(expected[-5:])


@given(st.text(alphabet="ab\n", max_size=300), st.lists(st.integers(0, 400), max_size=20))
def test_stderr_tail_byte_budget(text: str, cuts: list[int]) -> None:
    tail = StderrTail(max_lines=1000, max_bytes=16, on_line=None)
    for chunk in split_at(text.encode(), cuts):
        tail.feed(chunk)
        kept = tail.text().replace("[...]", "")
        assert len(kept.encode()) - kept.count("\n") <= 16 + 16  # retained lines + partial
    tail.feed_eof()
    kept = tail.text().replace("[...]", "")
    assert len(kept.encode()) - kept.count("\n") <= 16
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if lines:  # the newest line survives (its end, if it alone is over budget)
        assert tail.text().endswith(lines[-1][-16:])


async def test_line_writer_cancelled_before_writing_is_not_torn() -> None:
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        while True:  # fill the pipe so the next write blocks before any byte goes out
            os.write(w, b"." * 65536)
    except BlockingIOError:
        pass
    writer = LineWriter(trio.lowlevel.FdStream(w))
    try:
        with trio.fail_after(5):
            with trio.move_on_after(0.05) as scope:
                await writer.send(b'{"a":1}')
            assert scope.cancelled_caught
            assert not writer.torn  # nothing was written: the stream is still usable
            os.set_blocking(r, False)
            try:
                while os.read(r, 1 << 20):
                    pass
            except BlockingIOError:
                pass
            await writer.send(b'{"b":2}')
            assert os.read(r, 100) == b'{"b":2}\n'
    finally:
        await writer.aclose()
        os.close(r)


# --------------------------------------------------------------------------- stdio: server side


async def test_server_stream_over_pipes() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        with trio.fail_after(5):
            async with open_stdio_server_stream(stdin_fd=in_r, stdout_fd=out_w, max_line=100) as stream:
                os.write(in_w, b'{"jsonrpc":"2.0","method":"a"}\r\n\n  \n{"jsonrpc":')
                assert (await stream.receive()).data == b'{"jsonrpc":"2.0","method":"a"}'
                os.write(in_w, b'"2.0","method":"b"}\n')
                assert (await stream.receive()).data == b'{"jsonrpc":"2.0","method":"b"}'
                await stream.send(MESSAGES[2])
                assert os.read(out_r, 1000) == jsonrpc.serialize(MESSAGES[2]) + b"\n"
                os.close(in_w)
                in_w = -1
                with pytest.raises(TransportClosed, match="closed our stdin"):
                    await stream.receive()
            # The original fds stay open and blocking: only the dups were closed.
            assert os.get_blocking(in_r) and os.get_blocking(out_w)
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            if fd >= 0:
                os.close(fd)


async def test_server_stream_oversize_line_closes() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        with trio.fail_after(5):
            async with open_stdio_server_stream(stdin_fd=in_r, stdout_fd=out_w, max_line=100) as stream:
                os.write(in_w, b"x" * 500)
                with pytest.raises(RemoteProtocolError):
                    await stream.receive()
                with pytest.raises(TransportClosed):
                    await stream.receive()
                with pytest.raises(TransportClosed):
                    await stream.send(MESSAGES[2])
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            os.close(fd)


async def test_server_stream_peer_gone_on_send() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.close(out_r)
    try:
        with trio.fail_after(5):
            async with open_stdio_server_stream(stdin_fd=in_r, stdout_fd=out_w) as stream:
                with pytest.raises(TransportClosed, match="closed our stdout"):
                    await stream.send(MESSAGES[2])
    finally:
        for fd in (in_r, in_w, out_w):
            os.close(fd)


async def test_client_to_trimcp_stdio_server_end_to_end() -> None:
    with trio.fail_after(20):
        async with open_stdio_process(child("server")) as stream:
            await stream.send(jsonrpc.Request(5, "ping", {"x": [1, "é"]}))
            parsed = (await stream.receive()).payload
            assert parsed.messages == [jsonrpc.Response(5, {"echo": {"x": [1, "é"]}})]
        assert stream.returncode == 0
        assert "server: stdin closed" in stream.stderr_tail()
