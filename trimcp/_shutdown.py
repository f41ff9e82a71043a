"""How a stdio server is stopped: ``ShutdownPolicy``, re-exported by ``trimcp.config``.

Its own module so that a client starting a stdio server imports it without the
``mcpServers`` file parser (``trimcp.config``), which a client given a command never needs.
"""

from __future__ import annotations

import attrs


def _wait(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    # NaN fails both comparisons; an infinite wait would make closing hang for ever.
    if not 0 <= value < float("inf"):
        raise ValueError(f"{attribute.name} must be a finite number of seconds >= 0, not {value!r}")


@attrs.frozen(kw_only=True)
class ShutdownPolicy:
    """How a stdio server is stopped when its client closes (seconds).

    Closing stdin asks the server to exit; after ``grace`` its process group gets
    SIGINT, after ``sigint_wait`` more SIGTERM, after ``sigterm_wait`` more SIGKILL.
    The defaults follow what Claude Code does (SIGINT 100 ms, SIGTERM 400 ms) after
    a 0.5 s grace for the EOF, about 1 s in all: long enough for a server that exits
    on EOF (the common case: a Node or Python server answers EOF in tens of ms), short
    enough that closing a stuck one does not stall a host holding many.
    """

    grace: float = attrs.field(default=0.5, validator=_wait)
    sigint_wait: float = attrs.field(default=0.1, validator=_wait)
    sigterm_wait: float = attrs.field(default=0.4, validator=_wait)
