"""The client's heartbeat: ask a quiet server whether it is still there.

Theory of operation
-------------------
A session whose peer vanished without closing the transport (a half-open TCP
connection, a hung process, an HTTP server that went away) only finds out when
a request of its own fails.  ``run_heartbeat`` asks once the session has heard
nothing from the peer for ``interval`` seconds -- measured from the last
message received (``SessionDriver.last_received``), so a busy session sends no
heartbeat at all.

What it asks depends on the era (``heartbeat_request``):

* handshake era: ``ping`` (spec 2025-11-25 basic/utilities/ping: either side
  may send it at any time after initialization, and the receiver MUST answer
  promptly with an empty result);
* stateless era (2026-07-28): ``ping`` is gone (changelog: "Remove ``ping``");
  ``server/discover`` (server/discover: servers MUST implement it, and it takes
  no parameters beyond ``_meta``) is the cheapest request every server answers,
  without touching application state.

An answer, even an error answer, means the peer is alive (the reader already
reset the failure count when it arrived).  No answer within ``timeout`` is one
terminal failure (``SessionDriver.count_failure``, ``_sansio/connection/health.py``),
and the next heartbeat follows at once, so a silent peer is declared dead
within ``interval + max_consecutive_failures * timeout``.  A heartbeat the
transport itself failed (an HTTP server refusing connections) was already
counted by the reader; the next one then waits until ``timeout`` after the
failed one began, so a dead server is never polled in a tight loop.  The task
ends with the session.
"""

from __future__ import annotations

from typing import Any

import trio

from .._errors import RequestTimeout, TransportError, TrimcpError
from .._sansio import events as ev
from .driver import SessionDriver

__all__ = ["DEFAULT_HEARTBEAT_TIMEOUT", "heartbeat_request", "run_heartbeat"]

DEFAULT_HEARTBEAT_TIMEOUT = 10.0


def heartbeat_request(driver: SessionDriver) -> tuple[str, dict[str, Any] | None]:
    """The request that asks this session's peer whether it is there (see the module docstring)."""
    if isinstance(driver.handshake, ev.Discovered):
        return "server/discover", None
    return "ping", None


async def run_heartbeat(driver: SessionDriver, interval: float, timeout: float = DEFAULT_HEARTBEAT_TIMEOUT) -> None:
    """Send heartbeats while the session is open (run it in the session's nursery)."""
    if interval <= 0 or timeout <= 0:
        raise ValueError(f"heartbeat interval and timeout must be positive, not {interval!r} / {timeout!r}")
    method, params = heartbeat_request(driver)
    next_at: float | None = None  # after a failure: when to try again (else: quiet for interval)
    while not driver.is_closed:
        wake = driver.last_received + interval if next_at is None else next_at
        if trio.current_time() < wake:
            await trio.sleep_until(wake)
            continue  # the peer may have spoken meanwhile: measure again
        started = trio.current_time()
        next_at = None
        try:
            await driver.request(method, params, timeout=timeout, reset_timeout_on_progress=False)
        except RequestTimeout as exc:
            next_at = started  # at once: a silent peer is found within interval + limit * timeout
            await driver.count_failure(exc)
        except TransportError:
            if driver.is_closed:
                return
            next_at = started + timeout  # counted by the reader; do not poll a dead server in a loop
        except TrimcpError:
            pass  # an error answer (or an unusable one) is an answer
