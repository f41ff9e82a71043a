"""Stopping a stdio server's process and everything it started (MCP "Transports", stdio).

Theory of operation
-------------------
The spec's stdio shutdown: the client closes the server's stdin, waits for it
to exit, and sends SIGTERM, then SIGKILL, if it does not.  We follow the seed
client's ladder (``ShutdownPolicy``): a grace for the EOF, then SIGINT, a short
wait, SIGTERM, a longer wait, SIGKILL.  The server was started with
``start_new_session=True``, so it leads a process group whose id is its pid,
and each signal goes to the whole group: helpers it forked die with it.

``terminate_process`` runs that ladder against the server; ``reap_group`` then
deals with what is left of the group once the server itself is gone (exited on
its own, or after SIGINT/SIGTERM): a well-behaved server's children would
otherwise outlive it as orphans.  The group gets SIGTERM, a short wait while
any member is alive, then SIGKILL.

Why signalling a group after its leader was reaped is safe: the kernel never
hands out a pid equal to the id of a process group that still has a member, so
while ``killpg(pgid, 0)`` finds members, the group is still the one the server
made.  Once it finds none there is nothing to signal and we stop.  The one
window left -- every member dies and the pid is recycled as a new session's
leader between our probe and the next signal -- needs the pid counter to wrap
(pid_max allocations) within milliseconds.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Final, Protocol

import trio

from ..._shutdown import ShutdownPolicy

__all__ = [
    "DEFAULT_SHUTDOWN",
    "ESCALATION",
    "GROUP_POLL",
    "GROUP_WAIT",
    "WaitableProcess",
    "escalation_of",
    "reap_group",
    "signal_group",
    "terminate_process",
]

DEFAULT_SHUTDOWN: Final = ShutdownPolicy()
#: Signals sent to the process group after the grace period, each followed by a wait (defaults).
ESCALATION: Final = ((signal.SIGINT, DEFAULT_SHUTDOWN.sigint_wait), (signal.SIGTERM, DEFAULT_SHUTDOWN.sigterm_wait))
#: How long the rest of the group has to exit after SIGTERM before SIGKILL.
GROUP_WAIT: Final = 0.1
#: How often the group is probed while waiting (a syscall per probe, no pidfd for a group).
GROUP_POLL: Final = 0.01


class WaitableProcess(Protocol):
    """What ``terminate_process`` needs from a process (``trio.Process`` fits)."""

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


async def terminate_process(
    process: WaitableProcess,
    *,
    grace: float,
    send_signal: Callable[[int], None],
    escalation: tuple[tuple[int, float], ...] = ESCALATION,
) -> int:
    """Wait ``grace`` s for ``process`` to exit, then SIGINT, SIGTERM and SIGKILL it.

    The caller has already asked politely (closed stdin).  Each signal is sent
    only while the process is unreaped (``returncode`` polls and reaps), so its
    pid cannot have been recycled.  Returns the exit status once reaped.  Run it
    under a shielded cancel scope: stopping half-way would leak the child.
    """
    with trio.move_on_after(grace):
        return await process.wait()
    for signum, wait in escalation:
        if process.returncode is not None:
            return process.returncode
        send_signal(signum)
        with trio.move_on_after(wait):
            return await process.wait()
    if process.returncode is None:
        send_signal(signal.SIGKILL)
    return await process.wait()


def escalation_of(policy: ShutdownPolicy) -> tuple[tuple[int, float], ...]:
    return ((signal.SIGINT, policy.sigint_wait), (signal.SIGTERM, policy.sigterm_wait))


def signal_group(process: trio.Process, signum: int) -> None:
    """Signal the child's process group (it leads one: start_new_session=True)."""
    try:
        os.killpg(process.pid, signum)
        return
    except ProcessLookupError:
        pass  # the child left its group (setpgid/setsid): fall back to the child itself
    except PermissionError:
        pass  # some member is not ours to signal; still reach the child
    try:
        process.send_signal(signum)
    except ProcessLookupError:
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member we may not signal (it changed uid): still a member
    return True


def _kill_group(pgid: int, signum: int) -> bool:
    """Signal the group; False when it has no member left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # signal what we may; a member we may not signal is not ours to stop
    return True


async def reap_group(pgid: int, *, on_signal: Callable[[int], None] | None = None) -> None:
    """Stop what is left of process group ``pgid`` after its leader was reaped.

    SIGTERM, up to ``GROUP_WAIT`` s while a member is alive, then SIGKILL.
    A member that already died but whose parent does not reap it (an orphan,
    when pid 1 does not reap) still counts as a member for ``killpg``, so the
    wait can run to its end for nothing; SIGKILL is harmless to it.
    """
    if not _group_alive(pgid):
        return  # the common case: the server had no children left (one syscall)
    if not _kill_group(pgid, signal.SIGTERM):
        return
    if on_signal is not None:
        on_signal(signal.SIGTERM)
    with trio.move_on_after(GROUP_WAIT):
        while _group_alive(pgid):  # noqa: ASYNC110 - no event tells when a process group is gone
            await trio.sleep(GROUP_POLL)
        return
    if _kill_group(pgid, signal.SIGKILL) and on_signal is not None:
        on_signal(signal.SIGKILL)
