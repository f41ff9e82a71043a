"""Cutting one value to a character budget without breaking its structure.

Theory of operation
-------------------
Spec "Server features / Tools", tool results (2025-06-18 onwards: ``structuredContent``
and its JSON twin in a text block).  Cutting JSON or a table at a character count
leaves the agent reasoning from a broken document; these functions cut so the result
still parses:

* ``shrink_json(value, budget)`` returns a value whose compact serialisation
  (``dumps``) is at most ``budget`` characters.  Arrays keep items from the head and
  the tail, alternately, with one marker string between them counting the items left
  out.  Objects keep every key (while the keys themselves fit; past that, one ``"…"``
  key counts the rest) and share the room among their values by water-filling: small
  values stay whole, large ones get equal shares and are shrunk into them.
  Containers deeper than ``max_depth`` that do not fit are summarised by a string
  (``"[array of 120 items]"``).  Long strings keep their head and end with a marker.
  The work is bounded by the budget, not by the input: sizes are measured with
  ``bounded_size``, which stops as soon as it passes its cap.
* ``shrink_text(text, budget)`` picks the shape: text that parses as a JSON object or
  array goes through ``shrink_json``; a CSV or Markdown table keeps its header row
  and whole rows, then a line counting the rows left out; other text is cut at a
  line boundary near the budget, ending with a marker.

Everything is deterministic: same input and budget, same output.
"""

from __future__ import annotations

import json
import math
import re
from json.encoder import encode_basestring as _quote  # the C quoter json.dumps itself uses
from typing import Any, Final

__all__ = ["bounded_size", "dumps", "shrink_json", "shrink_text"]

DEFAULT_MAX_DEPTH: Final = 8
#: The smallest room a kept object value gets: ``"…"`` serialised.
_MIN_VALUE: Final = 3
_ELLIPSIS: Final = "…"


def dumps(value: Any) -> str:
    """The compact serialisation budgets are measured in."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def bounded_size(value: Any, cap: int) -> int:
    """``len(dumps(value))`` when it is at most ``cap``, else some number above ``cap``.

    Stops walking as soon as the running total passes ``cap``, so the cost is bounded
    by ``cap`` rather than by the size of ``value``.
    """
    if isinstance(value, str):
        return cap + 1 if len(value) + 2 > cap else len(_quote(value))
    if value is None or isinstance(value, bool):
        return 4 if value is not False else 5
    if isinstance(value, int):
        # json writes int.__repr__; calling it here skips json.dumps' per-call set-up,
        # which dominated measuring large arrays of small values.
        return len(int.__repr__(value))
    if isinstance(value, float) and math.isfinite(value):
        return len(float.__repr__(value))
    if isinstance(value, list):
        total = 1 + len(value) if value else 2  # brackets and commas
        for item in value:
            if total > cap:
                return cap + 1
            total += bounded_size(item, cap - total)
        return total if total <= cap else cap + 1
    if isinstance(value, dict):
        total = 1 + 2 * len(value) if value else 2  # braces, colons and commas
        for key, item in value.items():
            if total > cap:
                return cap + 1
            total += bounded_size(str(key), cap - total)
            total += bounded_size(item, cap - total)
        return total if total <= cap else cap + 1
    return len(dumps(value))


def _shrink_str(s: str, budget: int) -> str:
    keep = budget - 2 - len(f"{_ELLIPSIS} [+{len(s)} chars]")
    while keep > 0:
        out = f"{s[:keep]}{_ELLIPSIS} [+{len(s) - keep} chars]"
        over = len(dumps(out)) - budget
        if over <= 0:
            return out
        keep -= over
    marker = f"{_ELLIPSIS} [{len(s)} chars]"
    return marker if len(marker) + 2 <= budget else _ELLIPSIS


def _summary(value: Any, budget: int) -> Any:
    if isinstance(value, list):
        text = f"[array of {len(value)} items]"
    elif isinstance(value, dict):
        text = f"{{object with {len(value)} keys}}"
    else:
        text = f"[{type(value).__name__} omitted]"
    if len(dumps(text)) <= budget:
        return text
    return _ELLIPSIS


def _shrink_list(items: list[Any], budget: int, depth: int, max_depth: int) -> list[Any]:
    n = len(items)
    marker_cost = len(dumps(f"{_ELLIPSIS} {n} items omitted {_ELLIPSIS}")) + 1
    room = budget - 2 - marker_cost
    head: list[Any] = []
    tail: list[Any] = []
    i, j = 0, n - 1
    used = 0
    from_head = True
    while i <= j:
        item = items[i] if from_head else items[j]
        cap = room - used - 1  # the item and its comma
        size = bounded_size(item, cap)
        if size > cap:
            break
        used += size + 1
        if from_head:
            head.append(item)
            i += 1
        else:
            tail.append(item)
            j -= 1
        from_head = not from_head
    if not head and not tail and room - 1 >= _MIN_VALUE:
        # Not even one whole item fits: show the first one, shrunk, so the shape is visible.
        head.append(_shrink(items[0], room - 1, depth + 1, max_depth))
        i = 1
    omitted = j - i + 1
    tail.reverse()
    if omitted <= 0:
        return head + tail
    return [*head, f"{_ELLIPSIS} {omitted} items omitted {_ELLIPSIS}", *tail]


def _shrink_dict(obj: dict[str, Any], budget: int, depth: int, max_depth: int) -> dict[str, Any]:
    keys = list(obj)
    omit_key = _ELLIPSIS
    omit_cost = len(dumps(omit_key)) + len(dumps(f"{len(keys)} more keys omitted")) + 2

    def fitting_keys(reserve: int) -> tuple[list[str], int]:
        spent, kept = 2, []
        for key in keys:
            cost = len(dumps(key)) + 2 + _MIN_VALUE  # key, colon, comma, smallest value
            if spent + cost > budget - reserve:
                break
            spent += cost
            kept.append(key)
        return kept, spent

    kept, spent = fitting_keys(0)
    reserve = 0
    if len(kept) < len(keys):
        reserve = omit_cost
        kept, spent = fitting_keys(reserve)
    room = budget - reserve - spent + _MIN_VALUE * len(kept)
    sizes = {key: bounded_size(obj[key], room) for key in kept}
    share_of: dict[str, int] = {}
    left, remaining = len(kept), room
    # Water-filling: smallest first; each gets its size or an equal share of what is left.
    for key in sorted(kept, key=lambda k: sizes[k]):
        share = remaining // left
        share_of[key] = min(sizes[key], share)
        remaining -= share_of[key]
        left -= 1
    out: dict[str, Any] = {}
    for key in kept:
        value = obj[key]
        out[key] = value if sizes[key] <= share_of[key] else _shrink(value, share_of[key], depth + 1, max_depth)
    if len(kept) < len(keys):
        out[omit_key] = f"{len(keys) - len(kept)} more keys omitted"
    return out


def _shrink(value: Any, budget: int, depth: int, max_depth: int) -> Any:
    if bounded_size(value, budget) <= budget:
        return value
    if isinstance(value, str):
        return _shrink_str(value, budget)
    if isinstance(value, (list, dict)) and depth < max_depth and budget >= 16:
        if isinstance(value, list):
            return _shrink_list(value, budget, depth, max_depth)
        return _shrink_dict(value, budget, depth, max_depth)
    return _summary(value, budget)


def shrink_json(value: Any, budget: int, *, max_depth: int = DEFAULT_MAX_DEPTH) -> tuple[Any, str]:
    """``(shrunk, dumps(shrunk))`` with ``len(dumps(shrunk)) <= budget`` (``budget >= 3``).

    ``value`` itself (not a copy) when it already fits.
    """
    if budget < 3:
        raise ValueError("a JSON budget needs at least 3 characters")
    target = budget
    for _ in range(16):
        out = _shrink(value, target, 0, max_depth)
        text = dumps(out)
        if len(text) <= budget:
            return out, text
        # The per-part accounting is exact for well-formed input; this is a backstop.
        target -= max(len(text) - budget, target // 8, 1)
        if target < 3:
            break
    fallback = _summary(value, budget)
    return fallback, dumps(fallback)


_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _table_header_lines(lines: list[str]) -> int:
    """How many lines form a table's header (2 for Markdown, 1 for CSV), 0 when not a table."""
    if len(lines) >= 2 and lines[0].lstrip().startswith("|") and _MD_SEPARATOR.match(lines[1]):
        return 2
    if len(lines) >= 3:
        commas = lines[0].count(",")
        if commas and all(line.count(",") == commas for line in lines[1:3]):
            return 1
    return 0


def _shrink_lines(text: str, budget: int) -> str | None:
    lines = text.split("\n")
    header = _table_header_lines(lines[:3])
    if not header:
        return None
    rows_total = len(lines) - header - (1 if lines[-1] == "" else 0)
    marker_room = len(f"\n\n{_ELLIPSIS} {rows_total} more rows omitted")
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        if used + len(line) + 1 + marker_room > budget:
            if index < header:
                return None  # the header itself does not fit: plain cut
            break
        kept.append(line)
        used += len(line) + 1
    omitted = rows_total - (len(kept) - header)
    blank = "\n" if header == 2 else ""  # a blank line ends a Markdown table
    return "\n".join(kept) + f"\n{blank}{_ELLIPSIS} {omitted} more rows omitted"


def _shrink_plain(text: str, budget: int) -> str:
    marker = f"\n{_ELLIPSIS} [{len(text)} chars in all, truncated]"
    keep = budget - len(marker)
    if keep <= 0:
        return text[:budget]
    cut = text.rfind("\n", 0, keep)
    if cut < keep * 4 // 5:  # no line boundary near the budget: cut mid-line
        cut = keep
    return text[:cut] + marker


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of float range")
    return value


def shrink_text(text: str, budget: int, *, max_depth: int = DEFAULT_MAX_DEPTH) -> str:
    """``text`` cut to at most ``budget`` characters, keeping JSON valid and table headers."""
    if len(text) <= budget:
        return text
    stripped = text.lstrip()
    if stripped[:1] in ("{", "[") and budget >= 3:
        try:
            # A number past float range would come back as Infinity, which is not JSON.
            value = json.loads(text, parse_float=_finite_float)
        except (ValueError, RecursionError):  # not JSON, or nested past the stack: cut as text
            pass
        else:
            return shrink_json(value, budget, max_depth=max_depth)[1]
    lines = _shrink_lines(text, budget)
    if lines is not None:
        return lines
    return _shrink_plain(text, budget)
