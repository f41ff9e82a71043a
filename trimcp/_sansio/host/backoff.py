"""How long a host waits before connecting to a server again (pure).

Theory of operation
-------------------
A server that failed (its process crashed, its port refused us, its session
broke) is connected again on its next use, but a server that fails every time
must not be respawned in a tight loop.  ``Backoff`` turns "this is attempt n
after n failures in a row" into a delay: ``base * factor**(n-1)``, capped at
``cap``, then scaled by a random factor in ``[1 - jitter, 1]`` ("equal jitter"
would keep a floor; a full range down to ``1 - jitter`` spreads the reconnects
of many clients of one restarted server).  The first connect (no failure yet)
waits nothing.  The random number comes from the caller: this module draws no
randomness and reads no clock, so the delays of a test are exact.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs


def _non_negative(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not value >= 0:
        raise ValueError(f"{attribute.name} must be >= 0, not {value!r}")


@attrs.frozen
class Backoff:
    """Delays before reconnecting: exponential, capped, jittered."""

    #: Seconds before the first reconnect (after one failure).
    base: float = attrs.field(default=0.5, validator=_non_negative)
    #: Growth per further failure in a row.
    factor: float = attrs.field(default=2.0, validator=_non_negative)
    #: The longest wait, in seconds.
    cap: float = attrs.field(default=30.0, validator=_non_negative)
    #: Fraction of the delay that is random: the delay is in ``[d * (1 - jitter), d]``.
    jitter: float = attrs.field(default=0.5, validator=attrs.validators.and_(_non_negative, attrs.validators.le(1.0)))

    def ceiling(self, failures: int) -> float:
        """The un-jittered delay after ``failures`` failures in a row (0 when none)."""
        if failures <= 0:
            return 0.0
        # min() before the power would overflow for a server that has failed for days.
        exponent = min(failures - 1, 64)
        return min(self.cap, self.base * self.factor**exponent)

    def delay(self, failures: int, random: Callable[[], float]) -> float:
        """The wait before the next attempt; ``random()`` returns a float in [0, 1)."""
        ceiling = self.ceiling(failures)
        return ceiling * (1.0 - self.jitter * random())
