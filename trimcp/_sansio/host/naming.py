"""Tool names and descriptions as an agent's model sees them.

Theory of operation
-------------------
Spec "Server features / Tools" (2025-06-18 onwards) lets a tool name be any string
(2025-11-25 recommends ``[A-Za-z0-9_.-]{1,128}``), while model APIs take function
names matching ``^[a-zA-Z0-9_-]{1,64}$``.  A host that holds many servers exposes
each tool as ``mcp__{server}__{tool}``:

* ``normalize_name`` maps every character outside ``[a-zA-Z0-9_-]`` to ``_``.
* ``unique_tool_name(server, tool)`` is a pure function of the *original* pair.  It is
  the plain ``mcp__{server}__{tool}`` of the normalised parts when that string is
  unambiguous: both parts were already valid (normalising changed nothing), the
  server part has no ``__`` and does not end in ``_`` (so the first ``__`` after the
  prefix always ends the server part), and the whole is at most 64 characters.
  Otherwise it is the hashed form: the normalised parts, cut to fit (the tool part
  keeps priority, the model picks tools by it), then ``_`` and ten hex digits of a
  SHA-256 of the original pair.  So ``("a.b", "t")`` and ``("a_b", "t")``, or
  ``("a__b", "c")`` and ``("a", "b__c")``, get different names; two distinct pairs
  share a name only if they collide on 40 bits of SHA-256.
* ``mcp_tool_name(server, tool)`` is the seed's form, and the one a host shows by
  default: the normalised parts, hashed only when over 64 characters.  It reads
  better (``admin.users.list``, a name 2025-11-25 encourages, stays
  ``admin_users_list``) but two pairs may share it; ``NameTable`` settles that.
* ``NameTable`` holds the names for a set of pairs and maps a full name back to its
  pair by lookup (never by splitting on ``__``, which both parts may contain).  Each
  pair gets its readable name unless another pair of the set has the same one; then
  every member of that group gets its ``unique_tool_name``, and a (hash) collision
  there lengthens the hash of the whole group.  Groups are settled in sorted order,
  so the outcome depends on the set of pairs, never on the order they were added.
  A pair's name changes only when a pair that collides with it arrives or leaves.

``cap_description`` cuts a description to a character cap (2048 by default, since
servers generated from OpenAPI documents inject tens of kilobytes), ending with a
marker, never longer than the cap.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

__all__ = [
    "DEFAULT_DESCRIPTION_CAP",
    "DESCRIPTION_MARKER",
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "NameTable",
    "cap_description",
    "mcp_tool_name",
    "normalize_name",
    "unique_tool_name",
]

MAX_NAME_LENGTH: Final = 64
NAME_PATTERN: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PREFIX: Final = "mcp__"
SEPARATOR: Final = "__"
DEFAULT_DESCRIPTION_CAP: Final = 2048
DESCRIPTION_MARKER: Final = "… [truncated]"

_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_DIGITS: Final = 10
#: Characters of the server part kept before the tool part takes the rest of the room.
_SERVER_KEEP: Final = 8


def normalize_name(name: str) -> str:
    """``name`` with every character outside ``[a-zA-Z0-9_-]`` replaced by ``_``."""
    return _INVALID.sub("_", name)


def _digest(server: str, tool: str) -> str:
    # JSON of the pair is an unambiguous encoding of two arbitrary strings.
    encoded = json.dumps([server, tool], ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(encoded).hexdigest()


def _hashed(server: str, tool: str, digits: int) -> str:
    s, t = normalize_name(server), normalize_name(tool)
    room = MAX_NAME_LENGTH - len(PREFIX) - len(SEPARATOR) - 1 - digits
    t_len = min(len(t), room - min(len(s), _SERVER_KEEP))
    s_len = min(len(s), room - t_len)
    return f"{PREFIX}{s[:s_len]}{SEPARATOR}{t[:t_len]}_{_digest(server, tool)[:digits]}"


def _plain_is_unambiguous(server: str, tool: str) -> bool:
    return (
        normalize_name(server) == server
        and normalize_name(tool) == tool
        and SEPARATOR not in server
        and not server.endswith("_")
        and len(PREFIX) + len(server) + len(SEPARATOR) + len(tool) <= MAX_NAME_LENGTH
    )


def unique_tool_name(server: str, tool: str, *, hash_digits: int = _HASH_DIGITS) -> str:
    """The model-facing name of ``tool`` on ``server``: ``mcp__{server}__{tool}``, always
    matching ``NAME_PATTERN``, hashed when the plain form would be too long or ambiguous.

    ``hash_digits`` (default 10) is how many hex digits of the hash a hashed name carries;
    ``NameTable`` raises it to settle a collision.
    """
    if _plain_is_unambiguous(server, tool):
        return f"{PREFIX}{server}{SEPARATOR}{tool}"
    return _hashed(server, tool, hash_digits)


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__{server}__{tool}`` of the normalised parts, shortened with a hash only when
    over 64 characters (may collide: ``NameTable`` settles that)."""
    plain = f"{PREFIX}{normalize_name(server)}{SEPARATOR}{normalize_name(tool)}"
    return plain if len(plain) <= MAX_NAME_LENGTH else _hashed(server, tool, _HASH_DIGITS)


class NameTable:
    """Full names for a set of ``(server, tool)`` pairs, and the way back.

    The name of a pair depends only on the set of pairs, never on the order they were
    added: ``mcp_tool_name`` unless another pair of the set has the same name,
    then ``unique_tool_name`` (with a longer hash should even that collide).
    """

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._pairs: set[tuple[str, str]] = set()
        self._by_pair: dict[tuple[str, str], str] = {}
        self._by_name: dict[str, tuple[str, str]] = {}
        self.update(pairs)

    def update(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Add pairs (already present ones are ignored) and recompute the names."""
        self._pairs.update(pairs)
        self._rebuild()

    def discard_server(self, server: str) -> None:
        """Forget every tool of ``server`` (it disconnected or its tool list changed)."""
        self._pairs = {p for p in self._pairs if p[0] != server}
        self._rebuild()

    def replace_server(self, server: str, tools: Iterable[str]) -> None:
        """Make ``tools`` the whole tool set of ``server`` (after ``tools/list_changed``)."""
        self._pairs = {p for p in self._pairs if p[0] != server} | {(server, t) for t in tools}
        self._rebuild()

    def _rebuild(self) -> None:
        by_pair: dict[tuple[str, str], str] = {}
        taken: set[str] = set()
        pending = sorted(self._pairs)
        digits = 0  # round 0: readable names
        while pending:
            groups: dict[str, list[tuple[str, str]]] = {}
            for pair in pending:
                name = unique_tool_name(*pair, hash_digits=digits) if digits else mcp_tool_name(*pair)
                groups.setdefault(name, []).append(pair)
            pending = []
            for name, members in groups.items():
                if len(members) == 1 and name not in taken:
                    by_pair[members[0]] = name
                    taken.add(name)
                else:
                    pending.extend(members)
            digits = digits + 4 if digits else _HASH_DIGITS
            if digits > 40:  # beyond a SHA-256 prefix collision of 160 bits: give up loudly
                raise ValueError(f"cannot give distinct names to {pending!r}")
        self._by_pair = by_pair
        self._by_name = {name: pair for pair, name in by_pair.items()}

    def name(self, server: str, tool: str) -> str:
        """The full name of a pair in the table (``KeyError`` when it is not in it)."""
        return self._by_pair[(server, tool)]

    def resolve(self, full_name: str) -> tuple[str, str]:
        """The original ``(server, tool)`` of a full name (``KeyError`` when unknown)."""
        return self._by_name[full_name]

    def __contains__(self, full_name: object) -> bool:
        return full_name in self._by_name

    def __len__(self) -> int:
        return len(self._by_name)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._by_name))

    def as_mapping(self) -> Mapping[str, tuple[str, str]]:
        """Full name -> pair, a read-only view."""
        return dict(self._by_name)


def cap_description(
    text: str | None, *, cap: int = DEFAULT_DESCRIPTION_CAP, marker: str = DESCRIPTION_MARKER
) -> str | None:
    """``text`` cut to at most ``cap`` characters, ending with ``marker`` when it was cut.

    ``None`` stays ``None``.  The result is never longer than ``cap``: when the marker
    alone is longer, the marker itself is cut.
    """
    if cap < 0:
        raise ValueError("cap must be >= 0")
    if text is None or len(text) <= cap:
        return text
    if len(marker) >= cap:
        return marker[:cap]
    return text[: cap - len(marker)].rstrip() + marker
