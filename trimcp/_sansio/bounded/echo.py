"""How a peer's value appears in text built for people: exceptions, log lines, reports.

Theory of operation
-------------------
A value a peer sent may be huge (a 300 MB metadata document), may carry control
characters (an ANSI escape that rewrites the user's terminal, a newline that forges a
log line) or may be neither text nor small.  ``quote`` shows it as a Python literal cut
to about ``limit`` characters, with every control character escaped and the full
length named when it was cut; ``short_repr`` does the same for any JSON-like value
without walking more of it than it shows, so quoting a large object costs what the
quote shows, not what the object holds.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["ECHO_LIMIT", "clip", "quote", "short_repr"]

#: Characters of a peer's value kept in an exception or a log line.
ECHO_LIMIT: Final = 200


def _escaped(text: str, limit: int, quote_char: str | None) -> tuple[str, bool]:
    """``text`` with controls (C0, DEL, C1, lone surrogates, other unprintables) escaped,
    at most ``limit`` characters of it *as shown*; and whether all of ``text`` is there."""
    out: list[str] = []
    size = 0
    for c in text:
        if c == "\\" or c == quote_char:
            shown = "\\" + c
        elif c.isprintable() or c == " ":
            shown = c
        else:
            shown = c.encode("unicode_escape", "backslashreplace").decode("ascii")
        size += len(shown)
        if size > limit:
            return "".join(out), False
        out.append(shown)
    return "".join(out), True


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` unquoted, control characters escaped, about ``limit`` characters long (for
    a peer's words meant to be read: an OAuth ``error_description``)."""
    shown, whole = _escaped(text, limit, None)
    return shown if whole else f"{shown}... ({len(text)} characters)"


def quote(value: Any, limit: int = ECHO_LIMIT) -> str:
    """``value`` as a quoted, escaped literal of about ``limit`` characters at most."""
    if isinstance(value, bytes):
        head = value[: max(limit // 4, 8)]
        shown = repr(head)
        return shown if len(head) == len(value) else f"{shown}... ({len(value)} bytes)"
    if not isinstance(value, str):
        return short_repr(value, limit)
    shown, whole = _escaped(value, limit, "'")
    return f"'{shown}'" if whole else f"'{shown}'... ({len(value)} characters)"


def short_repr(value: Any, limit: int = ECHO_LIMIT) -> str:
    """A ``repr`` of a JSON-like value cut to about ``limit`` characters."""
    out: list[str] = []
    _write(value, out, [limit])
    return "".join(out)


def _write(value: Any, out: list[str], room: list[int]) -> None:
    """Append ``value``'s repr to ``out`` while ``room[0]`` characters are left."""
    if room[0] <= 0:
        out.append("...")
        return
    if isinstance(value, str):
        text = quote(value, max(room[0], 8))
    elif isinstance(value, dict):
        out.append("{")
        room[0] -= 1
        for index, (key, item) in enumerate(value.items()):
            if room[0] <= 0:
                out.append(f"... ({len(value)} members)")
                break
            if index:
                out.append(", ")
            _write(key, out, room)
            out.append(": ")
            _write(item, out, room)
        out.append("}")
        return
    elif isinstance(value, (list, tuple)):
        out.append("[")
        room[0] -= 1
        for index, item in enumerate(value):
            if room[0] <= 0:
                out.append(f"... ({len(value)} items)")
                break
            if index:
                out.append(", ")
            _write(item, out, room)
        out.append("]")
        return
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        # A huge int's decimal repr costs quadratic time: name its size instead.
        text = f"<int of {value.bit_length()} bits>"
    elif isinstance(value, (bool, int, float)) or value is None:
        text = repr(value)
    else:
        text = f"<{type(value).__name__}>"
    room[0] -= len(text)
    out.append(text)
