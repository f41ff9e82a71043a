"""What the model loses when a schema is reshaped for a provider, said in a line of its description.

Theory of operation
-------------------
A keyword a provider does not accept is dropped; a part it cannot express is left out.
Either way the model would call the tool without knowing a rule the server still enforces
(and answers with an error).  Each loss is a ``Note``: where (``a.b``, ``tags[]``,
``arguments`` for the root) and what (``maximum 100``, ``omitted: a free-form object``).
``Notes.text()`` renders them, in the order they were found, as one short paragraph the
provider modules append to the tool's description::

    Schema notes: limit: maximum 100; tags[]: uniqueItems true; needs one of: phone | email

Values are shown as compact JSON, each cut to ``VALUE_CHARS`` characters, and the paragraph
stops at ``TEXT_CHARS`` characters with the count of the notes it leaves out, so the same
schema always gives the same words and no schema can flood a description.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["HEADER", "Notes", "Path", "render_path"]

Path = tuple[str, ...]

HEADER: Final = "Schema notes: "
#: Characters of one value shown in a note.
VALUE_CHARS: Final = 60
#: Characters of the whole paragraph (the header included).
TEXT_CHARS: Final = 600


def render_path(path: Path) -> str:
    """``("a", "b")`` -> ``a.b``; an item is ``[]`` and sticks to its array: ``tags[]``."""
    if not path:
        return "arguments"
    out = ""
    for part in path:
        out += part if part.startswith("[") or not out else "." + part
    return out


class Notes:
    """Losses in the order they were found, each at most once."""

    def __init__(self) -> None:
        self._items: dict[str, None] = {}

    def add(self, path: Path, what: str) -> None:
        self._items.setdefault(f"{render_path(path)}: {what}", None)

    def extend(self, other: Notes) -> None:
        for item in other:
            self._items.setdefault(item, None)

    @staticmethod
    def show(value: Any) -> str:
        """``value`` as compact JSON, cut to ``VALUE_CHARS`` characters."""
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        except (TypeError, ValueError):
            text = repr(value)
        return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"

    def __iter__(self) -> Any:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def text(self, limit: int = TEXT_CHARS) -> str:
        """The paragraph for the description ("" when nothing was lost)."""
        items = list(self._items)
        if not items:
            return ""
        shown: list[str] = []
        used = len(HEADER)
        for index, item in enumerate(items):
            rest = len(items) - index - 1
            tail = f"; … ({rest} more)" if rest else ""
            cost = len(item) + (2 if shown else 0)
            if used + cost + len(tail) > limit:
                return HEADER + "; ".join(shown) + f"{'; ' if shown else ''}… ({len(items) - index} more)"
            shown.append(item)
            used += cost
        return HEADER + "; ".join(shown)
