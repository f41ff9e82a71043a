"""``WWW-Authenticate`` parsing (RFC 9110 section 11.6.1, RFC 6750 section 3).

Theory of operation
-------------------
A protected MCP server answers 401 (no or bad token) or 403 (token lacks a
scope) with a ``WWW-Authenticate`` header holding one or more challenges::

    Bearer resource_metadata="https://x/.well-known/oauth-protected-resource",
           scope="files:read", error="insufficient_scope"

``parse_challenges`` splits a header value into ``Challenge`` objects (scheme
plus lower-cased auth-param names; token68 credentials are kept as
``token68``); it never raises, whatever the text: a malformed tail is dropped.
``bearer_challenge`` picks the ``Bearer`` challenge out of all the header
values of a response, which is what the OAuth client acts on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Challenge", "bearer_challenge", "parse_challenges", "scheme_challenge"]

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_T68 = frozenset("-._~+/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass
class Challenge:
    """One challenge: ``scheme`` as sent, ``params`` keyed by lower-cased name."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scope(self) -> str | None:
        return self.params.get("scope")

    @property
    def error(self) -> str | None:
        return self.params.get("error")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_ws(self) -> None:
        while self.peek() in (" ", "\t"):
            self.pos += 1

    def skip_ws_commas(self) -> None:
        while self.peek() in (" ", "\t", ","):
            self.pos += 1

    def token(self, chars: frozenset[str] = _TCHAR) -> str:
        start = self.pos
        while self.peek() and self.peek() in chars:
            self.pos += 1
        return self.text[start : self.pos]

    def quoted(self) -> str | None:
        """A quoted-string starting at ``pos`` (on the opening quote); ``None`` if unterminated."""
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            self.pos += 1
            if ch == "\\" and self.pos < len(self.text):
                out.append(self.text[self.pos])
                self.pos += 1
            elif ch == '"':
                return "".join(out)
            else:
                out.append(ch)
        return None


def _param_ahead(sc: _Scanner) -> bool:
    """Is ``name = value`` (not a token68 ending in ``=``) next?"""
    save = sc.pos
    try:
        if not sc.token():
            return False
        sc.skip_ws()
        if sc.peek() != "=":
            return False
        sc.pos += 1
        sc.skip_ws()
        return sc.peek() not in ("", ",", "=")
    finally:
        sc.pos = save


def parse_challenges(value: str) -> list[Challenge]:
    """Every challenge in one ``WWW-Authenticate`` header value (never raises)."""
    sc = _Scanner(value)
    out: list[Challenge] = []
    while True:
        sc.skip_ws_commas()
        scheme = sc.token()
        if not scheme:
            return out
        challenge = Challenge(scheme)
        out.append(challenge)
        sc.skip_ws()
        if sc.peek() and sc.peek() != "," and not _param_ahead(sc):
            t68 = sc.token(_T68)
            while sc.peek() == "=":
                sc.pos += 1
                t68 += "="
            if t68:
                challenge.token68 = t68
            sc.skip_ws()
            if sc.peek() not in ("", ","):
                return out
            continue
        while True:
            save = sc.pos
            sc.skip_ws_commas()
            if not _param_ahead(sc):
                sc.pos = save
                break
            name = sc.token().lower()
            sc.skip_ws()
            sc.pos += 1  # '='
            sc.skip_ws()
            if sc.peek() == '"':
                quoted = sc.quoted()
                if quoted is None:
                    return out
                val = quoted
            else:
                val = sc.token()
            challenge.params.setdefault(name, val)
            sc.skip_ws()
            if sc.peek() not in ("", ","):
                return out


def scheme_challenge(values: Iterable[str], scheme: str) -> Challenge | None:
    """The first challenge of ``scheme`` (case-insensitive) among a response's
    ``WWW-Authenticate`` values."""
    wanted = scheme.lower()
    for value in values:
        for challenge in parse_challenges(value):
            if challenge.scheme.lower() == wanted:
                return challenge
    return None


def bearer_challenge(values: Iterable[str]) -> Challenge | None:
    """The first ``Bearer`` challenge among a response's ``WWW-Authenticate`` values."""
    return scheme_challenge(values, "Bearer")
